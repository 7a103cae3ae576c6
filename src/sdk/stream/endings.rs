//! How a result line words the run's end as each version does: its `terminal_reason` and API
//! error keys, `num_turns` as Claude Code counts it, and the ends a version words its own way
//! (the budget stop and structured output; recorded, `budget/` and `structured_output/`).

use reloop_core::profile::ProfileId;
use reloop_core::{Completion, Failure, Stop};
use reloop_driver::RunResult;
use serde_json::{json, Map, Value};

use super::SdkStream;

impl SdkStream {
    /// A structured-output session's `structured_output` (the valid call's input, whose compact
    /// JSON is then the `result`; `null` when none was made) in Claude Code's place.
    pub(super) fn structured_output(&mut self, line: &mut Map<String, Value>, result: &RunResult) {
        let Stop::Completed(Completion::StructuredOutput { tool_use_id }) = &result.terminal.stop else { return };
        let output = self.calls.structured.get(tool_use_id).cloned().unwrap_or(Value::Null);
        line.insert("result".into(), json!(output.to_string()));
        line.insert("structured_output".into(), output);
    }
}

/// 2.1.332's report of a session that crashed on an error of its own kind (`TelemetrySafeError`),
/// the last of the result's `errors`.
const SESSION_CRASH_2_1_332: &str =
    "[session_crash] error_name=TelemetrySafeError api_error_status=none cause_name=none";

/// The ends each version words its own way, after the line's `terminal_reason`.
pub(super) fn version_ending(line: &mut Map<String, Value>, result: &RunResult) {
    // `num_turns` needs nothing here: the StructuredOutput result's `user` line is counted as
    // every line is (SdkStream::num_turns), which is the turn Claude Code counts for it.
    match (&result.terminal.stop, result.profile) {
        // 2.1.197 prints no terminal_reason for these, and the short form of the errors.
        (Stop::MaxBudgetUsd { .. }, ProfileId::ClaudeCode2_1_197) => drop(line.remove("terminal_reason")),
        (Stop::StructuredOutputRetryExhausted { attempts, .. }, ProfileId::ClaudeCode2_1_197) => {
            line.remove("terminal_reason");
            let text = format!("Failed to provide valid structured output after {attempts} attempts");
            line.insert("errors".into(), json!([text]));
        }
        (Stop::MaxBudgetUsd { .. }, ProfileId::ClaudeCode2_1_332) => {
            line.insert("terminal_reason".into(), json!("budget_exhausted"));
            line.insert("stop_reason".into(), Value::Null);
        }
        // Claude Code's session crash (tests/sdk/recorded/hook_wrong_event*.jsonl): nothing ran,
        // no reason or status is named, and 2.1.332 adds its crash report to the errors.
        (Stop::HookAnswerRejected { error, .. }, profile) if profile.profile().claude_code_version.is_some() => {
            for key in ["terminal_reason", "api_error_status"] {
                line.remove(key);
            }
            line.insert("stop_reason".into(), Value::Null);
            let mut errors = vec![json!(error)];
            if profile == ProfileId::ClaudeCode2_1_332 {
                errors.push(json!(SESSION_CRASH_2_1_332));
            }
            line.insert("errors".into(), Value::Array(errors));
        }
        _ => {}
    }
}

impl SdkStream {
    /// `num_turns` as Claude Code counts it: one more than the main thread's `user` lines of
    /// the query (each tool result, each Stop-hook feedback, each echoed retry or resume, the
    /// compaction summary), so two calls in one message count two (a max-turns end counts the
    /// refused turn; see result).
    pub(super) fn num_turns(&self, result: &RunResult) -> u32 {
        if result.profile.profile().claude_code_version.is_none() {
            return result.num_turns;
        }
        // A prompt its UserPromptSubmit hooks refused (the one hook stop without a call), or whose
        // callback's answer ended the session (Claude Code's crash), counts none.
        match &result.terminal.stop {
            Stop::HookStopped(hook) if hook.tool_use_id.is_none() => return 0,
            Stop::HookAnswerRejected { .. } => return 0,
            _ => {}
        }
        self.user_lines.saturating_add(1)
    }
}

/// The HTTP status of the failure that ended the run, if one did.
pub(super) fn api_error_status(result: &RunResult) -> Option<u16> {
    match result.terminal.evidence() {
        reloop_core::Evidence::ModelFailure(failure) => failure.status,
        _ => None,
    }
}

/// How the result line words the run's end, by the session's profile.
pub(super) struct Ending {
    pub(super) terminal_reason: &'static str,
    pub(super) api_error_type: Option<String>,
    pub(super) api_error: Option<&'static str>,
}

impl Ending {
    pub(super) fn of(result: &RunResult) -> Self {
        let rules = result.profile.profile();
        let own = Ending { terminal_reason: result.terminal.reason().as_str(), api_error_type: None, api_error: None };
        if rules.claude_code_version.is_none() {
            return own;
        }
        let api = |error_type: Option<String>, api_error: Option<&'static str>| {
            if rules.result.api_error_terminal {
                Ending { terminal_reason: "api_error", api_error_type: error_type, api_error }
            } else {
                // Claude Code 2.1.197 reports an API error as a completed run with is_error.
                Ending { terminal_reason: "completed", api_error_type: None, api_error: None }
            }
        };
        match &result.terminal.stop {
            Stop::ModelError(Failure::Request(failure)) => api(Some(failure.error_type.clone()), None),
            Stop::ModelError(Failure::OutputTokensExhausted { .. }) => {
                if rules.result.max_output_tokens_api_error {
                    Ending { terminal_reason: "api_error", api_error_type: None, api_error: Some("max_output_tokens") }
                } else {
                    Ending { terminal_reason: "completed", api_error_type: None, api_error: None }
                }
            }
            Stop::ModelError(Failure::MalformedToolCall) => {
                Ending { terminal_reason: "completed", api_error_type: None, api_error: None }
            }
            Stop::MalformedToolUseExhausted { .. } => Ending {
                terminal_reason: "malformed_tool_use_exhausted",
                api_error_type: None,
                api_error: Some("malformed_tool_use_exhausted"),
            },
            _ => own,
        }
    }
}
