//! The built-in commands typed between queries of a stream-json session.
//!
//! `/clear`: Claude Code does not ask the model, starts a new session (a new `session_id`) and
//! prints the lines [`super::stream::SdkStream::clear_to`] prints. reloop ends the journaled
//! session there and starts the new one at once (its SessionStart hooks run then), whose id the
//! `/clear` lines name; that session's header records the `/clear` ([`ClearedFrom`]), even when
//! stdin closed before any query (a session with a header and no steps), so each session's
//! replay prints the `/clear`'s lines it printed live. `/compact`: the session's next query is a compaction by hand
//! (a journaled `compact_requested`), printed as [`super::stream::SdkStream::compact_by_hand`]
//! says.

use futures::StreamExt;
use reloop_core::ContentBlock;
use reloop_driver::{RunEvent, RunHandle};

/// What a session started by `/clear` keeps of it (`run_config.print.cleared_from`): the
/// session it cleared, found from there for that session's replay to end with the reset
/// lines, and what the `/clear`'s own `result` line printed (2.1.197: the process's cost so far).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ClearedFrom {
    /// The session the `/clear` ended.
    pub session: String,
    /// The result line's `total_cost_usd`.
    pub cost_usd: f64,
    /// The result line's `modelUsage`.
    pub model_usage: serde_json::Value,
}

/// Whether a user message is the built-in `command` (nothing but it, spaces aside).
pub(super) fn is_command(content: &[ContentBlock], command: &str) -> bool {
    matches!(content, [ContentBlock::Text(text)] if text.text.trim() == command)
}

/// The next event of the session, if one runs; after a `/clear`, none until the next message
/// starts the new session.
pub(super) async fn next_event(handle: &mut Option<RunHandle>) -> Option<RunEvent> {
    match handle {
        Some(handle) => handle.next().await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_command_alone_counts() {
        assert!(is_command(&[ContentBlock::text(" /clear\n")], "/clear"));
        assert!(!is_command(&[ContentBlock::text("/clear now")], "/clear"));
        assert!(!is_command(&[ContentBlock::text("/clearer")], "/clear"));
        assert!(!is_command(&[ContentBlock::text("/clear"), ContentBlock::text("more")], "/clear"));
        assert!(is_command(&[ContentBlock::text("/compact")], "/compact"));
    }
}
