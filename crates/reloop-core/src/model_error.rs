//! A failed model request as the provider saw it on the wire ([`ModelError`]), and the kinds
//! of error the retry policy tells apart ([`ModelErrorKind`]). Journaled inside
//! [`crate::Event::ModelFailed`].

use serde::{Deserialize, Serialize};

/// The kinds of model error the retry policy tells apart: the API's error types and reloop's
/// own. Anything else is [`ModelErrorKind::Other`] and is judged by its HTTP status alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ModelErrorKind {
    /// `overloaded_error`: the API is overloaded (529).
    Overloaded,
    /// `rate_limit_error` (429).
    RateLimit,
    /// `api_error`: the API failed (500).
    Api,
    /// `invalid_request_error` (400): the request itself is wrong.
    InvalidRequest,
    /// `authentication_error` (401).
    Authentication,
    /// `permission_error` (403).
    Permission,
    /// `not_found_error` (404).
    NotFound,
    /// reloop's: the connection failed or timed out.
    Connection,
    /// reloop's: a scripted provider has no response left.
    ScriptExhausted,
    /// reloop's: the stream broke the protocol.
    InvalidStream,
    /// reloop's: the response outgrew what its `max_tokens` allows.
    ResponseTooLarge,
    /// reloop's: a rerun's request parted from the recorded session's, and no live model takes
    /// over.
    RerunDiverged,
    /// Any other type.
    Other,
}

impl ModelErrorKind {
    /// Reads an `error_type`.
    pub fn parse(error_type: &str) -> Self {
        match error_type {
            "overloaded_error" => ModelErrorKind::Overloaded,
            "rate_limit_error" => ModelErrorKind::RateLimit,
            "api_error" => ModelErrorKind::Api,
            "invalid_request_error" => ModelErrorKind::InvalidRequest,
            "authentication_error" => ModelErrorKind::Authentication,
            "permission_error" => ModelErrorKind::Permission,
            "not_found_error" => ModelErrorKind::NotFound,
            "connection_error" => ModelErrorKind::Connection,
            "script_exhausted" => ModelErrorKind::ScriptExhausted,
            "invalid_stream" => ModelErrorKind::InvalidStream,
            "response_too_large" => ModelErrorKind::ResponseTooLarge,
            "rerun_diverged" => ModelErrorKind::RerunDiverged,
            _ => ModelErrorKind::Other,
        }
    }
}

/// A failed model request, as the provider saw it on the wire. Secrets never appear here.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ModelError {
    /// HTTP status, when the server answered; `None` for connection errors and stream errors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// The API's error type (`overloaded_error`, `rate_limit_error`, ...) or reloop's own
    /// (`connection_error`, `script_exhausted`, `invalid_stream`).
    pub error_type: String,
    /// The error's message.
    pub message: String,
    /// `retry-after`, in milliseconds (at most [`crate::MAX_RETRY_AFTER_MS`] since the cap).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
    /// What the server asked, in ms (saturating), when over the cap that `retry_after_ms` then
    /// holds; absent otherwise, so errors journaled before the cap replay as they were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_capped_from_ms: Option<u64>,
    /// `x-should-retry`, when the server sent it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub should_retry: Option<bool>,
    /// The server's `request-id`, which Claude Code quotes when a subagent's request fails;
    /// absent when none was sent (and in errors journaled before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// What the refused request carried that the profile's guesses could leave out
    /// ([`crate::profile::sheddable`]), noted by the driver, which alone knows how it was built;
    /// empty in errors journaled before the guesses (flag 41).
    #[serde(default, skip_serializing_if = "crate::profile::RequestGuesses::is_empty")]
    pub sheddable: crate::profile::RequestGuesses,
}

impl ModelError {
    /// An error of this status, type and message.
    pub fn new(status: Option<u16>, error_type: impl Into<String>, message: impl Into<String>) -> Self {
        ModelError {
            status,
            error_type: error_type.into(),
            message: message.into(),
            retry_after_ms: None,
            retry_after_capped_from_ms: None,
            should_retry: None,
            request_id: None,
            sheddable: crate::profile::RequestGuesses::default(),
        }
    }

    /// With a numeric `retry-after`.
    pub fn with_retry_after_ms(mut self, ms: Option<u64>) -> Self {
        self.retry_after_ms = ms;
        self
    }

    /// The API's "prompt is too long" (a 400 `invalid_request_error`).
    pub fn is_prompt_too_long(&self) -> bool {
        self.status == Some(400) && self.message.to_ascii_lowercase().contains("prompt is too long")
    }

    /// An overload: HTTP 529, or an `overloaded_error` event inside a 200 stream.
    pub fn is_overloaded(&self) -> bool {
        self.status == Some(529) || self.kind() == ModelErrorKind::Overloaded
    }

    /// The error's type as the retry policy reads it. The journal keeps `error_type` verbatim;
    /// this is its typed reading.
    pub fn kind(&self) -> ModelErrorKind {
        ModelErrorKind::parse(&self.error_type)
    }

    /// With `x-should-retry`.
    pub fn with_should_retry(mut self, should_retry: Option<bool>) -> Self {
        self.should_retry = should_retry;
        self
    }

    /// With the server's `request-id`.
    pub fn with_request_id(mut self, request_id: Option<String>) -> Self {
        self.request_id = request_id;
        self
    }

    /// See [`ModelError::sheddable`].
    pub fn with_sheddable(mut self, sheddable: crate::profile::RequestGuesses) -> Self {
        self.sheddable = sheddable;
        self
    }
}
