//! Tool inputs: the refusal each call gets from the tool's schema against what the transcript
//! shows the call got.

use reloop_core::{Event, ToolOutcome};

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
        for (i, event) in self.imported.events.iter().enumerate() {
            let Event::ModelBlock { block: reloop_core::ContentBlock::ToolUse(call), .. } = event else { continue };
            let Some(verdict) = inputs(&call.name, &call.input) else { continue };
            let Some(&(seq, outcome)) = results.iter().find(|(_, o)| o.tool_use_id == call.id) else { continue };
            if outcome.denied {
                continue;
            }
            checked += 1;
            self.decisions += 1;
            let shown_rejected = rejected.iter().find(|(id, _)| *id == call.id);
            let result_text = outcome.content.as_text();
            match (verdict, shown_rejected) {
                (Ok(()), None) | (Err(_), Some(_)) => {}
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
            let _ = i;
        }
        checked
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
