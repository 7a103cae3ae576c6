//! Trace and span ids derived from what the journal holds, never drawn at random.
//!
//! Why deterministic: a session is exported more than once (live while it runs, again with
//! `reloop export --format otlp`, again after an import on another machine). Ids that depend
//! only on the session id and the step that opened a span give every export the same trace id
//! and span ids, so a backend that keys spans by id keeps one copy rather than a second trace,
//! a trace link pasted into a ticket keeps pointing at the session, and the live run's spans
//! and a later export's agree. The hash is SHA-1 through UUID version 5 (RFC 9562): stable
//! across builds and platforms, and spread well enough that two sessions do not collide.

use opentelemetry::trace::{SpanId, TraceId};
use uuid::Uuid;

/// The namespace every id is hashed under, so reloop's ids do not coincide with another
/// program's name-based UUIDs of the same text.
const NAMESPACE: Uuid = Uuid::from_u128(0x5f1c_2a4e_8b7d_4c1e_9a3f_6d2b_0e8c_7a41);

/// The trace of session `session`: the same on every export.
pub fn trace_id(session: &str) -> TraceId {
    let id = Uuid::new_v5(&NAMESPACE, format!("trace/{session}").as_bytes()).as_u128();
    // An all-zero id is invalid in OpenTelemetry; SHA-1 giving one is not expected, but an
    // invalid id would drop the whole trace, so it is mapped away.
    TraceId::from_bytes(id.max(1).to_be_bytes())
}

/// The span `key` (the step that opened it and what it is) of session `session`.
pub fn span_id(session: &str, key: &str) -> SpanId {
    let bytes = Uuid::new_v5(&NAMESPACE, format!("span/{session}/{key}").as_bytes()).into_bytes();
    let mut first = [0u8; 8];
    first.copy_from_slice(&bytes[..8]);
    SpanId::from_bytes(u64::from_be_bytes(first).max(1).to_be_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_depend_on_the_session_and_the_key_only() {
        assert_eq!(trace_id("a"), trace_id("a"));
        assert_ne!(trace_id("a"), trace_id("b"));
        assert_eq!(span_id("a", "turn/3"), span_id("a", "turn/3"));
        assert_ne!(span_id("a", "turn/3"), span_id("b", "turn/3"));
        assert_ne!(span_id("a", "turn/3"), span_id("a", "turn/4"));
        // Pinned: a change of the derivation would give old sessions new ids on re-export.
        assert_eq!(trace_id("5ce52c4987e4c0e1").to_string(), "3e8b08f4bd3e56dfbf3f166476fa78ec");
    }
}
