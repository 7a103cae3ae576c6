//! Claude Code's `tool_use_result` on an outcome: what the call did as data, for the caller's
//! stream and transcript. A tool that ran and answered keeps its own ([`reloop_tools::ToolOutput`]'s
//! `structured`); a failure of any kind (the tool's, a denial, an unknown tool) is its text as
//! Claude Code words it there: `Error: …`, without the `<tool_use_error>` tags the model reads.
//! Only sessions with [`reloop_core::Flag::StreamDetails`] keep it, so an older journal replays
//! to the stream it printed.

use reloop_core::{Event, ToolOutcome};
use serde_json::Value;

/// The error text Claude Code keeps as a failed call's `tool_use_result`.
fn error_text(outcome: &ToolOutcome) -> String {
    let text = outcome.content.as_text();
    let inner =
        text.strip_prefix("<tool_use_error>").and_then(|t| t.strip_suffix("</tool_use_error>")).unwrap_or(&text);
    // Input that was not JSON: Claude Code keeps the byte count alone.
    if let Some(bytes) = unparsed_bytes(inner) {
        return format!("InputValidationError: JSON parse failed ({bytes} bytes)");
    }
    if inner.starts_with("Error: ") || inner.starts_with("InputValidationError: ") {
        inner.to_string()
    } else {
        format!("Error: {inner}")
    }
}

/// The length of a call's input that could not be parsed, from the text the model reads
/// (`… could not be parsed as JSON.\nYou sent (first N of M bytes): …`).
fn unparsed_bytes(text: &str) -> Option<&str> {
    let rest = text.strip_prefix("InputValidationError: ")?;
    let (_, after) = rest.split_once(" was called with input that could not be parsed as JSON.\nYou sent (first ")?;
    let (_, of) = after.split_once(" of ")?;
    of.split_once(" bytes)").map(|(total, _)| total).filter(|t| t.chars().all(|c| c.is_ascii_digit()))
}

/// Gives a failed call's outcome its error text, when the session keeps these and the outcome
/// has none yet (a subagent's answer and an MCP tool's keep none).
pub(crate) fn fill(event: &mut Event, on: bool) {
    if let (true, Event::ToolDone(outcome)) = (on, event) {
        if outcome.is_error && outcome.tool_use_result.is_none() {
            outcome.tool_use_result = Some(Value::String(error_text(outcome)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(text: &str) -> Option<Value> {
        let mut event = Event::ToolDone(ToolOutcome::error("t1", text));
        fill(&mut event, true);
        match event {
            Event::ToolDone(outcome) => outcome.tool_use_result,
            _ => None,
        }
    }

    #[test]
    fn a_failure_reads_as_claude_code_keeps_it() {
        // tests/print/recorded/*/tool_results/errors.
        assert_eq!(failed("File does not exist."), Some(Value::from("Error: File does not exist.")));
        assert_eq!(
            failed("<tool_use_error>String to replace not found in file.\nString: x</tool_use_error>"),
            Some(Value::from("Error: String to replace not found in file.\nString: x"))
        );
        assert_eq!(
            failed("<tool_use_error>Error: No such tool available: NoSuchTool</tool_use_error>"),
            Some(Value::from("Error: No such tool available: NoSuchTool"))
        );
        let unparsed = "<tool_use_error>InputValidationError: Read was called with input that could not be parsed \
            as JSON.\nYou sent (first 44 of 44 bytes): {\"file_path\": \"/tmp/x\nCommon causes: …</tool_use_error>";
        assert_eq!(failed(unparsed), Some(Value::from("InputValidationError: JSON parse failed (44 bytes)")));
        let mut event = Event::ToolDone(ToolOutcome::error("t1", "x"));
        fill(&mut event, false);
        assert!(matches!(event, Event::ToolDone(ToolOutcome { tool_use_result: None, .. })), "off: nothing kept");
    }
}
