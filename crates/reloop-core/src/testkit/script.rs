//! The outside facts a scripted model and scripted hooks produce.

use serde_json::json;

use super::{HookOutcome, ModelOutcome, ToolResult};
use crate::event::{Event, ModelError, StopReason, ToolOutcome};
use crate::hook::HookEventName;
use crate::message::{ContentBlock, ToolResultContent, ToolUse, Usage};

/// Runs the real hooks of an event (for a tool call) when the caller has them; `None` draws
/// the scripted verdict instead.
pub type RealHooks<'a> = dyn FnMut(HookEventName, Option<&ToolUse>) -> Option<Vec<crate::hook::HookRun>> + 'a;

/// The runs of the hooks of `hook_event` giving `verdict`.
pub(super) fn hook_event(
    hook_event: HookEventName,
    tool_use_id: Option<String>,
    verdict: HookOutcome,
    request: u32,
) -> Event {
    let (exit_code, stdout, stderr) = match verdict {
        HookOutcome::Pass => (0, String::new(), String::new()),
        HookOutcome::Block => (2, String::new(), "tests failing".to_string()),
        HookOutcome::Prevent => (0, r#"{"continue": false, "stopReason": "enough"}"#.to_string(), String::new()),
        HookOutcome::Error => (1, String::new(), "hook crashed".to_string()),
    };
    Event::HookDone {
        hook_event,
        tool_use_id,
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

/// The events one tool call of a batch gives: its hooks' runs around its outcome. `asked` is
/// the response that asked for the batch; the `index`th of its calls says what happens (a
/// plain `Tools(n)` call succeeds).
pub(super) fn tool_events(
    call: &ToolUse,
    asked: Option<&ModelOutcome>,
    index: usize,
    request: u32,
    real: &mut RealHooks<'_>,
) -> Vec<Event> {
    let spec = match asked {
        Some(ModelOutcome::Calls { calls, .. }) => calls.get(index),
        _ => None,
    };
    let outcome = |text: String, is_error: bool, denied: bool| {
        Event::ToolDone(ToolOutcome {
            tool_use_id: call.id.clone(),
            content: ToolResultContent::Text(text),
            is_error,
            denied,
            request,
            agent_usage: None,
        })
    };
    let Some(spec) = spec else { return vec![outcome(format!("ran {}", call.name), false, false)] };
    let mut events = Vec::new();
    if let Some(verdict) = spec.pre_hook {
        let id = Some(call.id.clone());
        let (event, blocks) = match real(HookEventName::PreToolUse, Some(call)) {
            Some(runs) => {
                let blocks = runs.iter().any(|r| r.exit_code == Some(2));
                (Event::HookDone { hook_event: HookEventName::PreToolUse, tool_use_id: id, runs, request }, blocks)
            }
            None => (hook_event(HookEventName::PreToolUse, id, verdict, request), verdict == HookOutcome::Block),
        };
        events.push(event);
        if blocks {
            // A blocking PreToolUse hook keeps the tool from running; its message is the result.
            events.push(outcome("PreToolUse hook blocked the call: tests failing".into(), true, false));
            return events;
        }
    }
    let result = match spec.result {
        ToolResult::Success => outcome(format!("ran {}", call.name), false, false),
        ToolResult::Error => outcome(format!("<tool_use_error>{} failed</tool_use_error>", call.name), true, false),
        ToolResult::Large(bytes) => outcome("x".repeat(bytes), false, false),
        ToolResult::Denied => outcome(format!("Permission to use {} has been denied.", call.name), true, true),
        ToolResult::Invalid => {
            return {
                events.push(outcome(
                    format!(
                        "<tool_use_error>InputValidationError: {} failed due to invalid input</tool_use_error>",
                        call.name
                    ),
                    true,
                    false,
                ));
                events
            }
        }
    };
    if let (Some(verdict), false) = (spec.post_hook, spec.result == ToolResult::Denied) {
        let id = Some(call.id.clone());
        events.push(match real(HookEventName::PostToolUse, Some(call)) {
            Some(runs) => Event::HookDone { hook_event: HookEventName::PostToolUse, tool_use_id: id, runs, request },
            None => hook_event(HookEventName::PostToolUse, id, verdict, request),
        });
    }
    events.push(result);
    events
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
        Some(ModelOutcome::RateLimited { retry_after_ms }) => vec![Event::ModelFailed {
            error: ModelError::new(Some(429), "rate_limit_error", "Rate limited").with_retry_after_ms(retry_after_ms),
            request,
        }],
        Some(ModelOutcome::StreamCut) => vec![
            Event::TextDelta { index: 0, text: "half a sen".into(), request },
            Event::ModelFailed {
                error: ModelError::new(None, "invalid_stream", "the stream ended before message_stop"),
                request,
            },
        ],
        Some(ModelOutcome::Stopped(stop)) => {
            vec![Event::ModelBlock { index: 0, block: ContentBlock::text("stopped"), request }, done(stop)]
        }
        Some(ModelOutcome::Calls { calls, input_tokens }) => {
            let mut events: Vec<Event> = calls
                .iter()
                .enumerate()
                .map(|(i, c)| Event::ModelBlock {
                    index: i,
                    block: ContentBlock::tool_use(format!("toolu_{request}_{i}"), c.name.clone(), c.input.clone()),
                    request,
                })
                .collect();
            if calls.is_empty() {
                events.push(Event::ModelBlock { index: 0, block: ContentBlock::text("nothing to call"), request });
            }
            events.push(Event::ModelDone {
                id: Some(format!("msg_{request}")),
                model: None,
                stop_reason: Some(if calls.is_empty() { StopReason::EndTurn } else { StopReason::ToolUse }),
                usage: Usage { input_tokens, output_tokens: 20, ..Usage::default() },
                request,
            });
            events
        }
        None => vec![Event::ModelFailed {
            error: ModelError::new(None, "script_exhausted", format!("no response for model request {request}")),
            request,
        }],
    }
}
