//! Frozen bytes: the JSON text that defines behaviour, and may therefore never change.
//!
//! * Digest versions 1 to 3 hash a message's JSON as serde_json writes it (its blocks, its kept
//!   fields in their order), and a state's other parts as their JSON. Every journal recorded under
//!   those versions holds digests of these bytes: a journal in `tests/journals/` replays
//!   identical only while they stay what they were.
//! * The token estimate ([`crate::tokens`]), in every digest version, counts the length of a
//!   message's JSON: when a session compacts depends on it.
//!
//! So the writers here are held, by their tests, to serde_json's bytes for every form, and are
//! written by hand only because they run for every message a session appends. Digest version 4
//! and later hash typed fields instead (`crate::digest`); nothing else in the engine writes JSON
//! by hand.

pub(crate) mod json;
mod message;

pub(crate) use json::Sink;

/// The length of a message's JSON: what the token estimate counts.
pub(crate) fn json_len(message: &crate::message::Message) -> u64 {
    struct Counter(u64);
    impl Sink for Counter {
        fn put(&mut self, bytes: &[u8]) {
            // Bytes, not chars: multi-byte text counts heavier, which errs on the safe side.
            self.0 += bytes.len() as u64;
        }
    }
    let mut counter = Counter(0);
    message.write_json(&mut counter);
    counter.0
}
pub(crate) use message::{write_blocks, write_tool_uses};
