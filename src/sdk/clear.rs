//! `/clear` typed between queries of a stream-json session: Claude Code does not ask the model,
//! starts a new session (a new `session_id`) and prints the lines
//! [`super::stream::SdkStream::conversation_reset`] prints. reloop ends the journaled session
//! there and journals the queries after it as a new session, whose id the `/clear` lines
//! already named.

use futures::StreamExt;
use reloop_core::ContentBlock;
use reloop_driver::{RunEvent, RunHandle};

/// Whether a user message is the built-in `/clear` (nothing but it, spaces aside).
pub(super) fn is_clear(content: &[ContentBlock]) -> bool {
    matches!(content, [ContentBlock::Text(text)] if text.text.trim() == "/clear")
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
    fn only_the_command_alone_clears() {
        assert!(is_clear(&[ContentBlock::text(" /clear\n")]));
        assert!(!is_clear(&[ContentBlock::text("/clear now")]));
        assert!(!is_clear(&[ContentBlock::text("/clearer")]));
        assert!(!is_clear(&[ContentBlock::text("/clear"), ContentBlock::text("more")]));
    }
}
