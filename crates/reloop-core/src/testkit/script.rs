//! The outside facts a scripted model and scripted hooks produce.

use serde_json::json;

use super::{HookOutcome, ModelOutcome, ToolResult};
use crate::event::{Event, ModelError, StopReason, ToolOutcome};
use crate::hook::HookEventName;
use crate::message::{ContentBlock, ToolResultContent, ToolUse, Usage};

/// The outside facts a caller decides instead of the script: the runs of hooks (named as its
/// configuration names them, or really run) and whether a call may run (its permission rules).
pub trait Outside {
    /// The runs of the hooks of `event` (for a tool hook, of `call`) that drew `verdicts`, one
    /// per hook; `None` feeds the scripted runs (a hook named `./check.sh` per verdict).
    fn hook_runs(
        &mut self,
        event: HookEventName,
        call: Option<&ToolUse>,
        verdicts: &[HookOutcome],
    ) -> Option<Vec<crate::hook::HookRun>>;

    /// Whether `call` is refused, its PreToolUse hooks having run `pre` (empty when none
    /// match): `None` runs it, with the script's result.
    fn refusal(&mut self, call: &ToolUse, pre: &[crate::hook::HookRun]) -> Option<Refusal>;
}

/// A call that does not run, and what the model is told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The tool result's text.
    pub message: String,
    /// It counts as a permission denial (not a tool error).
    pub denied: bool,
}

/// The script decides everything: each verdict is run by a hook named `./check.sh`, and only a
/// blocking PreToolUse hook refuses a call.
pub struct Scripted;

impl Outside for Scripted {
    fn hook_runs(
        &mut self,
        _: HookEventName,
        _: Option<&ToolUse>,
        _: &[HookOutcome],
    ) -> Option<Vec<crate::hook::HookRun>> {
        None
    }

    fn refusal(&mut self, _: &ToolUse, pre: &[crate::hook::HookRun]) -> Option<Refusal> {
        pre.iter()
            .any(|r| r.exit_code == Some(2))
            .then(|| Refusal { message: "PreToolUse hook blocked the call: tests failing".into(), denied: false })
    }
}

/// The scripted run of one hook giving `verdict`.
fn scripted_run(verdict: HookOutcome) -> crate::hook::HookRun {
    let (exit_code, stdout, stderr) = match verdict {
        HookOutcome::Pass => (0, String::new(), String::new()),
        HookOutcome::Block => (2, String::new(), "tests failing".to_string()),
        HookOutcome::Prevent => (0, r#"{"continue": false, "stopReason": "enough"}"#.to_string(), String::new()),
        HookOutcome::Error => (1, String::new(), "hook crashed".to_string()),
    };
    crate::hook::HookRun { command: "./check.sh".into(), exit_code: Some(exit_code), stdout, stderr, timed_out: false }
}

/// The run of a hook named `command` giving `verdict`, as `reloop prop` feeds a configured
/// hook's drawn verdict.
pub fn hook_run(command: &str, verdict: HookOutcome) -> crate::hook::HookRun {
    crate::hook::HookRun { command: command.to_string(), ..scripted_run(verdict) }
}

/// The runs of the hooks of `hook_event` giving `verdict`.
pub(super) fn hook_event(
    hook_event: HookEventName,
    tool_use_id: Option<String>,
    verdict: HookOutcome,
    request: u32,
) -> Event {
    Event::HookDone { hook_event, tool_use_id, runs: vec![scripted_run(verdict)], request }
}

/// The events one tool call of a batch gives: its hooks' runs around its outcome. `asked` is
/// the response that asked for the batch; the `index`th of its calls says what happens (a
/// plain `Tools(n)` call succeeds unless `outside` refuses it).
pub(super) fn tool_events(
    call: &ToolUse,
    asked: Option<&ModelOutcome>,
    index: usize,
    request: u32,
    outside: &mut dyn Outside,
) -> Vec<Event> {
    let spec = match asked {
        Some(ModelOutcome::Calls { calls, .. }) => calls.get(index),
        _ => None,
    };
    let outcome = |text: String, is_error: bool, denied: bool| {
        Event::ToolDone(ToolOutcome {
            is_error,
            denied,
            request,
            ..ToolOutcome::new(call.id.clone(), ToolResultContent::Text(text))
        })
    };
    let mut events = Vec::new();
    let hooks = |event: HookEventName, verdicts: &[HookOutcome], outside: &mut dyn Outside| {
        outside
            .hook_runs(event, Some(call), verdicts)
            .unwrap_or_else(|| verdicts.iter().map(|v| scripted_run(*v)).collect())
    };
    let (pre, post) = spec.map_or((&[][..], &[][..]), |s| (&s.pre_hooks[..], &s.post_hooks[..]));
    let mut pre_runs = Vec::new();
    if !pre.is_empty() {
        pre_runs = hooks(HookEventName::PreToolUse, pre, outside);
        let id = Some(call.id.clone());
        events.push(Event::HookDone {
            hook_event: HookEventName::PreToolUse,
            tool_use_id: id,
            runs: pre_runs.clone(),
            request,
        });
    }
    if let Some(refused) = outside.refusal(call, &pre_runs) {
        // The hooks or the rules keep the tool from running; their message is the result.
        events.push(outcome(refused.message, true, refused.denied));
        return events;
    }
    let Some(spec) = spec else {
        events.push(outcome(format!("ran {}", call.name), false, false));
        return events;
    };
    let result = match spec.result {
        ToolResult::Success => outcome(format!("ran {}", call.name), false, false),
        ToolResult::Error => outcome(format!("<tool_use_error>{} failed</tool_use_error>", call.name), true, false),
        ToolResult::Large(bytes) => outcome("x".repeat(bytes), false, false),
        ToolResult::Denied => {
            events.push(outcome(format!("Permission to use {} has been denied.", call.name), true, true));
            return events;
        }
        ToolResult::Invalid => {
            events.push(outcome(
                format!(
                    "<tool_use_error>InputValidationError: {} failed due to invalid input</tool_use_error>",
                    call.name
                ),
                true,
                false,
            ));
            return events;
        }
    };
    if !post.is_empty() {
        let runs = hooks(HookEventName::PostToolUse, post, outside);
        let id = Some(call.id.clone());
        events.push(Event::HookDone { hook_event: HookEventName::PostToolUse, tool_use_id: id, runs, request });
    }
    events.push(result);
    events
}

/// The events of the model's answer to `request`: `outcome`, or none past the end of a
/// script of `len` answers, worded as `reloop run --script` words an exhausted cassette.
pub(super) fn model_events(request: u32, outcome: Option<ModelOutcome>, len: usize) -> Vec<Event> {
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
            error: ModelError::new(
                None,
                "script_exhausted",
                format!("the script has no response for model request {request} (it holds {len})"),
            ),
            request,
        }],
    }
}
