//! `--output-format json --verbose`: Claude Code prints every message of the run as one JSON
//! array when it ends, not the result line alone (`flags/json_verbose`, both versions): its
//! `system/init` lines, the `assistant` and `user` lines and the `result`s, in the order
//! stream-json prints them. Its other `system` lines (a task's, a retry's) are not in it, nor
//! are a background agent's lines (`subagent/default_json`, 2.1.332); a foreground agent's are,
//! in both versions (`subagent/foreground_json`).
//!
//! The session streams as with `--output-format stream-json` into a wire that keeps the lines,
//! so a replay prints the stream as it does for any print-mode run.

use serde_json::Value;

use super::args::PrintArgs;
use crate::options::{InputFormat, OutputFormat};

/// Whether the run's output is the array: json output with `--verbose`, from a prompt.
pub(super) fn applies(args: &PrintArgs) -> bool {
    args.output.output_format == OutputFormat::Json && args.verbose && args.input_format == InputFormat::Text
}

/// The run's arguments streaming every line.
pub(super) fn streamed(mut args: PrintArgs) -> PrintArgs {
    args.output.output_format = OutputFormat::StreamJson;
    args
}

/// The array of what the run streamed.
pub(super) fn array(lines: &[Value]) -> Value {
    let background: Vec<&str> = lines
        .iter()
        .filter(|l| l["subtype"] == "task_started" && l["is_backgrounded"] == true)
        .filter_map(|l| l["tool_use_id"].as_str())
        .collect();
    let kept = |line: &&Value| match line["type"].as_str() {
        Some("assistant" | "user") => !line["parent_tool_use_id"].as_str().is_some_and(|c| background.contains(&c)),
        Some("result") => true,
        Some("system") => line["subtype"] == "init",
        _ => false,
    };
    Value::Array(lines.iter().filter(kept).cloned().collect())
}

/// Prints the array of the lines kept in `lines`; nothing when the run streamed none (it was
/// refused before it started, and said why).
pub(super) fn print(lines: &std::sync::Mutex<Vec<Value>>) {
    let lines = lines.lock().map(|l| l.clone()).unwrap_or_default();
    if !lines.is_empty() {
        super::protocol::Wire::default().line(&array(&lines));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `subagent/default_json` of 2.1.332: the background agent's and the task's lines are left
    /// out, the two queries' `init`s and both results kept.
    #[test]
    fn the_array_keeps_messages_and_results_but_no_background_agent_lines() {
        let lines = [
            json!({"type": "system", "subtype": "init"}),
            json!({"type": "assistant", "parent_tool_use_id": null}),
            json!({"type": "system", "subtype": "background_tasks_changed"}),
            json!({"type": "system", "subtype": "task_started", "tool_use_id": "t1", "is_backgrounded": true}),
            json!({"type": "user", "parent_tool_use_id": null}),
            json!({"type": "assistant", "parent_tool_use_id": "t1"}),
            json!({"type": "system", "subtype": "task_notification"}),
            json!({"type": "system", "subtype": "init"}),
            json!({"type": "result", "subtype": "success"}),
            json!({"type": "result", "subtype": "success"}),
        ];
        let kinds: Vec<String> = array(&lines)
            .as_array()
            .unwrap()
            .iter()
            .map(|l| format!("{}/{}", l["type"].as_str().unwrap(), l["subtype"].as_str().unwrap_or("")))
            .collect();
        assert_eq!(kinds, ["system/init", "assistant/", "user/", "system/init", "result/success", "result/success"]);
        let foreground = [json!({"type": "assistant", "parent_tool_use_id": "t2"})];
        assert_eq!(array(&foreground).as_array().unwrap().len(), 1, "a foreground agent's lines are kept");
    }
}
