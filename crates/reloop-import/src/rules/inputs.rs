//! Tool inputs: the refusal each call gets from the tool's schema against what the transcript
//! shows the call got.

use reloop_core::{Event, ToolOutcome};
use serde_json::Value;

use super::{Checker, InputCheck};
use crate::observed::Decision;

impl Checker<'_> {
    /// Every call's input against the tool's schema: a rejection the transcript shows must be
    /// the engine's, and an input the schema rejects must not be shown accepted.
    pub(super) fn tool_inputs(&mut self, inputs: InputCheck<'_>) -> usize {
        let mut checked = 0;
        let results: Vec<(u64, &ToolOutcome)> = self
            .imported
            .events
            .iter()
            .enumerate()
            .filter_map(|(i, e)| match e {
                Event::ToolDone(o) => Some((i as u64 + 1, o)),
                _ => None,
            })
            .collect();
        let rejected: Vec<(&str, usize)> = self
            .imported
            .observed
            .iter()
            .filter_map(|o| match &o.decision {
                Decision::ToolInputRejected { tool_use_id } => Some((tool_use_id.as_str(), o.line)),
                _ => None,
            })
            .collect();
        for event in &self.imported.events {
            let Event::ModelBlock { block: reloop_core::ContentBlock::ToolUse(call), .. } = event else { continue };
            let Some(verdict) = inputs(&call.name, &as_called(&call.input)) else { continue };
            let Some(&(seq, outcome)) = results.iter().find(|(_, o)| o.tool_use_id == call.id) else { continue };
            if outcome.denied {
                continue;
            }
            checked += 1;
            self.decisions += 1;
            let shown_rejected = rejected.iter().find(|(id, _)| *id == call.id);
            let result_text = outcome.content.as_text();
            match (verdict, shown_rejected) {
                (Ok(()), None) => {}
                // Both refuse: the words must be the same, for the model reads them.
                (Err(text), Some(&(_, line))) if text.trim() != result_text.trim() => self.disagree(
                    "RULES-V003",
                    Some(line),
                    seq,
                    format!("{} ({}) was refused: {}", call.name, call.id, clip(&result_text)),
                    format!("refused in other words: {}", clip(&text)),
                    format!("the {} tool's input schema and Claude Code's wording of its issues", call.name),
                ),
                (Err(_), Some(_)) => {}
                (Err(text), None) => self.disagree(
                    "RULES-V001",
                    None,
                    seq,
                    format!("{} ({}) was run: its result is {}", call.name, call.id, clip(&result_text)),
                    format!("the input is refused before it runs: {}", clip(&text)),
                    format!("the {} tool's input schema", call.name),
                ),
                (Ok(()), Some(&(_, line))) => self.disagree(
                    "RULES-V002",
                    Some(line),
                    seq,
                    format!("{} ({}) was refused before it ran: {}", call.name, call.id, clip(&result_text)),
                    "the input satisfies the tool's schema: the call runs".to_string(),
                    format!("the {} tool's input schema", call.name),
                ),
            }
        }
        checked
    }
}

/// The input as the tools see it: Claude Code writes JSON the model never finished as
/// `{"__unparsedToolInput": {"raw", "len"}}`, which reloop carries as the raw text itself.
fn as_called(input: &Value) -> Value {
    let raw = input
        .as_object()
        .filter(|o| o.len() == 1)
        .and_then(|o| o.get("__unparsedToolInput"))
        .and_then(|u| u.get("raw"))
        .and_then(Value::as_str);
    match raw {
        Some(raw) => Value::String(raw.to_string()),
        None => input.clone(),
    }
}

/// A tool result or refusal cut to one readable line.
fn clip(text: &str) -> String {
    let one: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match one.char_indices().nth(160) {
        Some((at, _)) => format!("{}…", &one[..at]),
        None => one,
    }
}
