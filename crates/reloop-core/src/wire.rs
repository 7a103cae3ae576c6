//! The JSON text that defines behaviour, and may therefore never change: serde_json's bytes for
//! the messages' and blocks' `Serialize` impls (`message.rs`: the tag first, the kept fields
//! after the known ones, in their order).
//!
//! * Digest versions 1 to 3 hash a message's JSON, a response's blocks and the calls in flight
//!   as these bytes ([`crate::history::Digest::value`]). Every journal recorded under those
//!   versions holds digests of them: the journals in `tests/journals/` (v1–v3) replay identical
//!   only while the impls write what they wrote.
//! * The token estimate ([`crate::tokens`]), in every digest version, counts the length of a
//!   message's JSON: when a session compacts depends on it.
//!
//! Written by serde_json itself, not by hand: the core reads and writes no JSON of its own.

use std::io;

use crate::message::Message;

/// The length of a message's JSON: what the token estimate counts.
pub(crate) fn json_len(message: &Message) -> u64 {
    struct Counter(u64);
    impl io::Write for Counter {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            // Bytes, not chars: multi-byte text counts heavier, which errs on the safe side.
            self.0 += bytes.len() as u64;
            Ok(bytes.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    // A message always serializes (its keys are strings); were it ever refused, the estimate
    // would count what was written up to there.
    let _ = serde_json::to_writer(&mut counter, message);
    counter.0
}
