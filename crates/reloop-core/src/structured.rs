//! Structured output (`--json-schema`): the session answers through the `StructuredOutput`
//! tool, as Claude Code's print mode does (recorded from 2.1.197 and 2.1.332,
//! `crates/reloop-import/tests/recorded/*/structured_output/`). The tool itself (the schema,
//! its validation) is the caller's; the loop decides what its outcomes mean:
//! a call that passed validation ends the turn, an answer without a call is asked for one once,
//! and [`MAX_ATTEMPTS`] failed calls end the run.

use crate::event::ToolOutcome;
use crate::message::{ToolResultContent, ToolUse};

/// The tool's name.
pub const TOOL: &str = "StructuredOutput";

/// Failed calls after which the run ends (Claude Code: 5).
pub const MAX_ATTEMPTS: u32 = 5;

/// The user message that asks for the call after an answer without one, verbatim.
pub const ENFORCE_TEXT: &str =
    "[structured-output-enforce] You MUST call the StructuredOutput tool to complete this request. Call this tool now.";

/// What a turn's `StructuredOutput` calls came to.
pub(crate) enum Verdict {
    /// None was made.
    None,
    /// This call passed validation.
    Valid(String),
    /// Calls failed; the last one's error.
    Invalid(String),
}

/// The verdict of a turn's calls and their outcomes (in call order).
pub(crate) fn verdict(calls: &[std::sync::Arc<ToolUse>], outcomes: &[Option<ToolOutcome>]) -> Verdict {
    let mut verdict = Verdict::None;
    for (call, outcome) in calls.iter().zip(outcomes) {
        let Some(outcome) = outcome.as_ref().filter(|_| call.name == TOOL) else { continue };
        if !outcome.is_error {
            return Verdict::Valid(call.id.clone());
        }
        let text = match &outcome.content {
            ToolResultContent::Text(text) => text.clone(),
            other => serde_json::to_string(other).unwrap_or_default(),
        };
        verdict = Verdict::Invalid(text);
    }
    verdict
}
