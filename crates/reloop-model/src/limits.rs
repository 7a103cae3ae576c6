//! How much one response may bring: a hostile or broken server must not be able to grow
//! reloop's memory or journal without bound.
//!
//! Four caps, all ending the response with a [`RESPONSE_TOO_LARGE`] error:
//!
//! * **content**: bytes of text, thinking, signatures, citations and tool-input JSON, at most
//!   `max_tokens × 16 + 1 MiB`. A token is a few bytes on average and rarely more than 16, so
//!   a response the API could really produce never comes near it.
//! * **content events**: deltas and block starts, at most `max_tokens × 2 + 4096`. Every delta
//!   carries at least one token, so this bounds the journal rows of one response even when
//!   each delta is a byte long.
//! * **wire bytes**: everything read from the body, pings and unknown events included, at most
//!   `max_tokens × 512 + 16 MiB`.
//! * **one event**: a single SSE line or the data of a single event, at most 32 MiB, whatever
//!   `max_tokens` says (it is what the framer must hold in memory at once).
//!
//! And two timeouts for the HTTP providers, both failing with a retryable `connection_error`:
//! [`Timeouts::request`] until the response's headers (and its error body) arrive, and
//! [`Timeouts::stream_idle`] between two events that bring content.

use std::time::Duration;

use reloop_core::ModelError;

/// Claude Code's name for the request timeout, in milliseconds.
pub const API_TIMEOUT_ENV: &str = "API_TIMEOUT_MS";
/// Claude Code's name for the stream idle timeout, in milliseconds.
pub const STREAM_IDLE_TIMEOUT_ENV: &str = "CLAUDE_STREAM_IDLE_TIMEOUT_MS";
/// Claude Code's default request timeout: 10 minutes.
pub const DEFAULT_API_TIMEOUT_MS: u64 = 600_000;
/// Claude Code's default stream idle timeout: 90 seconds.
pub const DEFAULT_STREAM_IDLE_TIMEOUT_MS: u64 = 90_000;

/// How long an HTTP provider waits for a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Timeouts {
    /// From sending the request until the response's headers, and for a non-2xx answer its
    /// body, have arrived. A streaming body is not under it: it may stream for longer.
    pub request: Duration,
    /// The longest wait for progress while the body streams: an event that brings content or
    /// ends the response. Pings and partial lines are not progress.
    pub stream_idle: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            request: Duration::from_millis(DEFAULT_API_TIMEOUT_MS),
            stream_idle: Duration::from_millis(DEFAULT_STREAM_IDLE_TIMEOUT_MS),
        }
    }
}

impl Timeouts {
    /// Both timeouts; the struct is `non_exhaustive`, so other crates build it this way.
    pub fn new(request: Duration, stream_idle: Duration) -> Self {
        Timeouts { request, stream_idle }
    }
}

/// The `error_type` of a response that broke one of its caps. Not retryable: the API stops a
/// response at `max_tokens` itself, so a server that goes on is broken or hostile and would do
/// it again.
pub const RESPONSE_TOO_LARGE: &str = "response_too_large";
/// Content bytes a response may carry per token of `max_tokens`.
pub const CONTENT_BYTES_PER_TOKEN: u64 = 16;
/// Content bytes every response may carry besides its tokens' share.
pub const CONTENT_MARGIN_BYTES: u64 = 1 << 20;
/// Content events a response may carry per token of `max_tokens`.
pub const CONTENT_EVENTS_PER_TOKEN: u64 = 2;
/// Content events every response may carry besides its tokens' share.
pub const CONTENT_EVENTS_MARGIN: u64 = 4096;
/// Bytes on the wire a response may take per token of `max_tokens`.
pub const WIRE_BYTES_PER_TOKEN: u64 = 512;
/// Bytes on the wire every response may take besides its tokens' share.
pub const WIRE_MARGIN_BYTES: u64 = 16 << 20;
/// The longest SSE line, and the most data one SSE event may carry.
pub const MAX_EVENT_BYTES: usize = 32 << 20;

/// The caps of one response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResponseLimits {
    /// The request's `max_tokens`, when the caps derive from it (for the error message).
    pub max_tokens: Option<u32>,
    /// The most bytes of content (text, thinking, tool input) the response may carry.
    pub content_bytes: u64,
    /// The most content events (deltas) the response may carry: many tiny deltas cost more
    /// than their bytes.
    pub content_events: u64,
    /// The most bytes the response may take on the wire, pings and framing included.
    pub wire_bytes: u64,
    /// The longest SSE line, and the most data one event may carry.
    pub event_bytes: usize,
}

impl ResponseLimits {
    /// The caps of a response to a request with this `max_tokens`.
    pub fn for_max_tokens(max_tokens: u32) -> Self {
        let tokens = u64::from(max_tokens);
        ResponseLimits {
            max_tokens: Some(max_tokens),
            content_bytes: tokens * CONTENT_BYTES_PER_TOKEN + CONTENT_MARGIN_BYTES,
            content_events: tokens * CONTENT_EVENTS_PER_TOKEN + CONTENT_EVENTS_MARGIN,
            wire_bytes: tokens * WIRE_BYTES_PER_TOKEN + WIRE_MARGIN_BYTES,
            event_bytes: MAX_EVENT_BYTES,
        }
    }

    /// Only the one-event cap: for bodies already in memory (cassettes), whose size is known.
    pub fn framing_only() -> Self {
        ResponseLimits {
            max_tokens: None,
            content_bytes: u64::MAX,
            content_events: u64::MAX,
            wire_bytes: u64::MAX,
            event_bytes: MAX_EVENT_BYTES,
        }
    }

    /// The same caps with another one-event cap (tests of the framer).
    pub fn with_event_bytes(mut self, event_bytes: usize) -> Self {
        self.event_bytes = event_bytes;
        self
    }

    fn for_tokens(&self) -> String {
        match self.max_tokens {
            Some(n) => format!(" for max_tokens {n}"),
            None => String::new(),
        }
    }

    pub(crate) fn wire_exceeded(&self) -> ModelError {
        too_large(format!("more than {} bytes on the wire{}", self.wire_bytes, self.for_tokens()))
    }

    pub(crate) fn event_exceeded(&self) -> ModelError {
        too_large(format!("one server-sent event line or event is over {} bytes", self.event_bytes))
    }
}

fn too_large(what: String) -> ModelError {
    ModelError::new(None, RESPONSE_TOO_LARGE, format!("The response exceeded its size cap: {what}."))
}

/// What an assembler has taken in of one response, checked against its caps. Its byte count
/// only grows, and only with content: the idle timer counts that growth as progress.
#[derive(Debug, Clone)]
pub(crate) struct ContentBudget {
    limits: ResponseLimits,
    bytes: u64,
    events: u64,
}

impl Default for ContentBudget {
    fn default() -> Self {
        ContentBudget::new(ResponseLimits::framing_only())
    }
}

impl ContentBudget {
    /// Nothing taken in yet, under `limits`.
    pub fn new(limits: ResponseLimits) -> Self {
        ContentBudget { limits, bytes: 0, events: 0 }
    }

    /// Counts one content event of `bytes` bytes; the error once a cap is passed.
    pub fn charge(&mut self, bytes: usize) -> Result<(), ModelError> {
        self.bytes = self.bytes.saturating_add(bytes as u64);
        self.events = self.events.saturating_add(1);
        if self.bytes > self.limits.content_bytes {
            return Err(too_large(format!(
                "more than {} bytes of content{}",
                self.limits.content_bytes,
                self.limits.for_tokens()
            )));
        }
        if self.events > self.limits.content_events {
            return Err(too_large(format!(
                "more than {} content events{}",
                self.limits.content_events,
                self.limits.for_tokens()
            )));
        }
        Ok(())
    }

    /// Content bytes taken in so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_derive_from_max_tokens() {
        let limits = ResponseLimits::for_max_tokens(1000);
        assert_eq!(limits.content_bytes, 16_000 + 1_048_576);
        assert_eq!(limits.content_events, 2_000 + 4_096);
        assert_eq!(limits.wire_bytes, 512_000 + 16_777_216);
        assert_eq!(limits.event_bytes, 33_554_432);
    }

    #[test]
    fn the_budget_fails_past_either_cap() {
        let mut budget = ContentBudget::new(ResponseLimits::for_max_tokens(0));
        assert!(budget.charge(1 << 20).is_ok());
        let error = budget.charge(1).err();
        assert_eq!(error.as_ref().map(|e| e.error_type.as_str()), Some(RESPONSE_TOO_LARGE));
        assert_eq!(
            error.map(|e| e.message),
            Some("The response exceeded its size cap: more than 1048576 bytes of content for max_tokens 0.".into())
        );

        let mut budget = ContentBudget::new(ResponseLimits::for_max_tokens(0));
        assert!((0..4096).all(|_| budget.charge(0).is_ok()));
        let error = budget.charge(0).err().map(|e| e.message);
        assert_eq!(
            error,
            Some("The response exceeded its size cap: more than 4096 content events for max_tokens 0.".into())
        );
    }
}
