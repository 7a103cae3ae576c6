//! The sample events the transition table feeds to every state its paths reached: what each
//! phase does with an event out of turn (a stale request's block, an unknown tool call, a retry
//! that is not awaited ...) as well as in turn.

use reloop_core::hook::HookEventName;
use reloop_core::{ContentBlock, Event, ModelError, State, StopReason, ToolOutcome, Usage};
use serde_json::json;

use crate::session::{hook_runs, overloaded, server_error, too_long, Verdict};

/// Sample events of one kind, for `state`: for a completion event the one in flight and a stale
/// one; for a tool event a call of this turn, an unknown one and a stale one; and so on.
pub fn sample_events(kind: &str, state: &State) -> Vec<Event> {
    let r = state.context().requests();
    let attempt = reloop_core::testkit::retry_attempt(state);
    let stale = r + 7;
    let known = state.tools().and_then(|tools| tools.calls().first()).map_or("t1".to_string(), |c| c.id.clone());
    let tool_done = |id: &str, request| {
        let mut o = ToolOutcome::error(id, "ok");
        o.is_error = false;
        o.request = request;
        Event::ToolDone(o)
    };
    let read_call = || ContentBlock::tool_use("t1", "Read", json!({"file_path": "/x"}));
    match kind {
        "user_input" => vec![Event::user_input(vec![ContentBlock::text("go")])],
        "text_delta" => vec![
            Event::TextDelta { index: 0, text: "t".into(), request: r },
            Event::TextDelta { index: 0, text: "t".into(), request: stale },
        ],
        "model_started" => vec![
            Event::ModelStarted { id: Some("msg_1".into()), usage: None, request: r },
            Event::ModelStarted { id: Some("msg_1".into()), usage: None, request: stale },
        ],
        "model_block" => vec![
            Event::ModelBlock { index: 0, block: read_call(), request: r },
            Event::ModelBlock { index: 0, block: read_call(), request: stale },
        ],
        "model_done" => {
            let done = |stop, request| Event::ModelDone {
                id: None,
                model: None,
                stop_reason: Some(stop),
                usage: Usage::default(),
                request,
            };
            vec![
                done(StopReason::EndTurn, r),
                done(StopReason::MaxTokens, r),
                done(StopReason::ToolUse, r),
                done(StopReason::EndTurn, stale),
            ]
        }
        "model_failed" => vec![
            Event::ModelFailed { error: overloaded(), request: r },
            Event::ModelFailed {
                error: ModelError::new(Some(401), "authentication_error", "invalid x-api-key"),
                request: r,
            },
            Event::ModelFailed { error: too_long(), request: r },
            Event::ModelFailed { error: overloaded(), request: stale },
        ],
        "tool_started" => vec![
            Event::ToolStarted { tool_use_id: known.clone(), request: r },
            Event::ToolStarted { tool_use_id: "t9".into(), request: r },
            Event::ToolStarted { tool_use_id: known.clone(), request: stale },
        ],
        "tool_done" => vec![tool_done(&known, r), tool_done("t9", r), tool_done(&known, stale)],
        "hook_done" => {
            let hook = |hook_event, tool_use_id: Option<&str>, verdict, request| Event::HookDone {
                hook_event,
                tool_use_id: tool_use_id.map(str::to_string),
                runs: hook_runs(verdict),
                request,
            };
            vec![
                hook(HookEventName::Stop, None, Verdict::Pass, r),
                hook(HookEventName::Stop, None, Verdict::Block, r),
                hook(HookEventName::PostToolUse, Some(&known), Verdict::Pass, r),
                hook(HookEventName::PostToolUse, Some("t9"), Verdict::Pass, r),
                hook(HookEventName::Stop, None, Verdict::Pass, stale),
            ]
        }
        "compact_done" => vec![
            Event::CompactDone {
                summary: "<summary>s</summary>".into(),
                usage: Usage::default(),
                request: r,
                given_back: None,
            },
            Event::CompactDone {
                summary: "<summary>s</summary>".into(),
                usage: Usage::default(),
                request: stale,
                given_back: None,
            },
        ],
        "compact_failed" => vec![
            Event::CompactFailed { error: server_error(), request: r },
            Event::CompactFailed { error: server_error(), request: stale },
        ],
        "queued_input" => vec![Event::QueuedInput { id: "q9".into(), content: vec![ContentBlock::text("also")] }],
        "compact_requested" => vec![Event::CompactRequested],
        "retry_ready" => vec![Event::RetryReady { attempt }, Event::RetryReady { attempt: attempt + 9 }],
        "resumed" => vec![Event::Resumed],
        "abort" => vec![Event::Abort],
        "set_model" => vec![Event::SetModel { model: Some("claude-haiku-4-5".into()), command: None }],
        "set_permission_mode" => vec![Event::SetPermissionMode { mode: "plan".into() }],
        "command_tools" => vec![Event::CommandTools { command: "fm".into(), allow: vec!["Bash(touch:*)".into()] }],
        other => panic!("no sample events for kind {other}"),
    }
}
