//! The outside facts a scripted model and scripted hooks produce.

use serde_json::json;

use super::{HookOutcome, ModelOutcome};
use crate::event::{Event, ModelError, StopReason};
use crate::message::{ContentBlock, Usage};

pub(super) fn stop_hook_event(verdict: HookOutcome, request: u32) -> Event {
    let (exit_code, stdout, stderr) = match verdict {
        HookOutcome::Pass => (0, String::new(), String::new()),
        HookOutcome::Block => (2, String::new(), "tests failing".to_string()),
        HookOutcome::Prevent => (0, r#"{"continue": false, "stopReason": "enough"}"#.to_string(), String::new()),
    };
    Event::HookDone {
        hook_event: crate::hook::HookEventName::Stop,
        tool_use_id: None,
        runs: vec![crate::hook::HookRun {
            command: "./check.sh".into(),
            exit_code: Some(exit_code),
            stdout,
            stderr,
            timed_out: false,
        }],
        request,
    }
}

pub(super) fn model_events(request: u32, outcome: Option<ModelOutcome>) -> Vec<Event> {
    let done = |stop: StopReason| Event::ModelDone {
        id: Some(format!("msg_{request}")),
        model: None,
        stop_reason: Some(stop),
        usage: Usage { input_tokens: 10, output_tokens: 5, ..Usage::default() },
        request,
    };
    match outcome {
        Some(ModelOutcome::Text) => vec![
            Event::TextDelta { index: 0, text: "done".into(), request },
            Event::ModelBlock { index: 0, block: ContentBlock::text("done"), request },
            done(StopReason::EndTurn),
        ],
        Some(ModelOutcome::Tools(n)) => {
            let mut events: Vec<Event> = (0..n)
                .map(|i| Event::ModelBlock {
                    index: i,
                    block: ContentBlock::tool_use(format!("toolu_{request}_{i}"), "Read", json!({"file_path": "/x"})),
                    request,
                })
                .collect();
            events.push(done(StopReason::ToolUse));
            events
        }
        Some(ModelOutcome::Error) => {
            vec![Event::ModelFailed {
                error: ModelError::new(Some(500), "api_error", "Internal server error"),
                request,
            }]
        }
        Some(ModelOutcome::Large { input_tokens, tools }) => {
            let mut events: Vec<Event> = (0..tools)
                .map(|i| Event::ModelBlock {
                    index: i,
                    block: ContentBlock::tool_use(format!("toolu_{request}_{i}"), "Read", json!({"file_path": "/x"})),
                    request,
                })
                .collect();
            events.push(Event::ModelDone {
                id: Some(format!("msg_{request}")),
                model: None,
                stop_reason: Some(if tools == 0 { StopReason::EndTurn } else { StopReason::ToolUse }),
                usage: Usage { input_tokens, output_tokens: 50, ..Usage::default() },
                request,
            });
            if tools == 0 {
                events.insert(0, Event::ModelBlock { index: 0, block: ContentBlock::text("big"), request });
            }
            events
        }
        Some(ModelOutcome::PromptTooLong) => vec![Event::ModelFailed {
            error: ModelError::new(
                Some(400),
                "invalid_request_error",
                "prompt is too long: 210000 tokens > 200000 maximum",
            ),
            request,
        }],
        Some(ModelOutcome::Overloaded) => {
            vec![Event::ModelFailed { error: ModelError::new(Some(529), "overloaded_error", "Overloaded"), request }]
        }
        Some(ModelOutcome::Fatal) => {
            vec![Event::ModelFailed {
                error: ModelError::new(Some(400), "invalid_request_error", "bad request"),
                request,
            }]
        }
        Some(ModelOutcome::MaxTokens) => vec![
            Event::TextDelta { index: 0, text: "half a thou".into(), request },
            Event::ModelBlock { index: 0, block: ContentBlock::text("half a thou"), request },
            done(StopReason::MaxTokens),
        ],
        Some(ModelOutcome::MissingToolCall) => {
            vec![
                Event::ModelBlock { index: 0, block: ContentBlock::text("let me call"), request },
                done(StopReason::ToolUse),
            ]
        }
        Some(ModelOutcome::TextTokens(n)) => vec![
            Event::ModelBlock { index: 0, block: ContentBlock::text("work"), request },
            Event::ModelDone {
                id: Some(format!("msg_{request}")),
                model: None,
                stop_reason: Some(StopReason::EndTurn),
                usage: Usage { input_tokens: 10, output_tokens: n, ..Usage::default() },
                request,
            },
        ],
        None => vec![Event::ModelFailed {
            error: ModelError::new(None, "script_exhausted", format!("no response for model request {request}")),
            request,
        }],
    }
}
