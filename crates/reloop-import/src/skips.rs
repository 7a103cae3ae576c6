//! Where the import left a fact of the transcript out because the core, in the phase it was in,
//! had no use for it: a response nothing asked for, a retry the core did not plan, a compaction
//! boundary where nothing could be compacted. Each is a place where Claude Code did something the
//! engine would not have, so a check of the rules must see where it happened, not only how often.

use serde::Serialize;

use crate::items::Item;

/// One fact left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Skip {
    /// What was left out, as [`crate::ImportSummary::skipped`] counts it (`orphan_response`, ...).
    pub kind: String,
    /// The transcript's line, when the item left out names one.
    pub line: Option<usize>,
    /// The number of events the import had chosen when it left the fact out: the engine's step
    /// it came after.
    pub after_seq: u64,
}

/// The transcript line an item comes from, where it keeps one.
pub(crate) fn item_line(item: &Item) -> Option<usize> {
    match item {
        Item::Prompt { .. } | Item::Hidden { .. } | Item::Queued { .. } => None,
        Item::Response(r) => Some(r.line),
        Item::ToolResults { line, .. }
        | Item::Interrupt { line, .. }
        | Item::ApiError { line, .. }
        | Item::CompactBoundary { line, .. }
        | Item::StopHookFeedback { line, .. }
        | Item::StopHookSummary { line, .. }
        | Item::ApiRetry { line, .. }
        | Item::Retracted { line, .. }
        | Item::MaxTurns { line, .. }
        | Item::ModelFallback { line, .. } => Some(*line),
    }
}
