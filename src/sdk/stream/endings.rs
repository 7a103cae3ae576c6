//! How a result line words the ends a version words its own way: the budget stop and
//! structured output (recorded, `budget/` and `structured_output/`).

use reloop_core::profile::ProfileId;
use reloop_core::{Completion, Stop};
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
        _ => {}
    }
}
