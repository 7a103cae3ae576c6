//! Every outside fact the loop learns arrives as an [`Event`]. The journal stores them in the
//! order they were applied; replaying that order through [`crate::transition`] rebuilds the run.

use serde::{Deserialize, Serialize};

use crate::message::{ContentBlock, Usage};

/// Why the model stopped, as the API says it. Unknown reasons are kept verbatim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    EndTurn,
    ToolUse,
    MaxTokens,
    StopSequence,
    PauseTurn,
    Refusal,
    Other(String),
}

impl StopReason {
    pub fn as_str(&self) -> &str {
        match self {
            StopReason::EndTurn => "end_turn",
            StopReason::ToolUse => "tool_use",
            StopReason::MaxTokens => "max_tokens",
            StopReason::StopSequence => "stop_sequence",
            StopReason::PauseTurn => "pause_turn",
            StopReason::Refusal => "refusal",
            StopReason::Other(s) => s,
        }
    }

    pub fn parse(s: &str) -> Self {
        match s {
            "end_turn" => StopReason::EndTurn,
            "tool_use" => StopReason::ToolUse,
            "max_tokens" => StopReason::MaxTokens,
            "stop_sequence" => StopReason::StopSequence,
            "pause_turn" => StopReason::PauseTurn,
            "refusal" => StopReason::Refusal,
            other => StopReason::Other(other.to_string()),
        }
    }
}

impl Serialize for StopReason {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for StopReason {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(StopReason::parse(&String::deserialize(d)?))
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
    pub message: String,
    /// `retry-after`, in milliseconds, when the server sent a numeric one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
    /// `x-should-retry`, when the server sent it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub should_retry: Option<bool>,
}

impl ModelError {
    pub fn new(status: Option<u16>, error_type: impl Into<String>, message: impl Into<String>) -> Self {
        ModelError {
            status,
            error_type: error_type.into(),
            message: message.into(),
            retry_after_ms: None,
            should_retry: None,
        }
    }

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
        self.status == Some(529) || self.error_type == "overloaded_error"
    }

    pub fn with_should_retry(mut self, should_retry: Option<bool>) -> Self {
        self.should_retry = should_retry;
        self
    }
}

/// What a tool call produced. The driver turns a tool's output, a refusal or a cancellation into
/// one of these; the core only files it under its `tool_use_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolOutcome {
    pub tool_use_id: String,
    pub content: crate::message::ToolResultContent,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// The call did not run because a permission rule, mode or hook denied it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub denied: bool,
}

/// An outside fact, fed to [`crate::transition`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Event {
    /// The user's prompt starts the session.
    UserInput { content: Vec<ContentBlock> },
    /// A streamed text delta, for the caller's stream. It changes no state, but it is journaled
    /// so that a replay reproduces the stream.
    TextDelta { index: usize, text: String },
    /// One content block of the response in flight is complete.
    ModelBlock { index: usize, block: ContentBlock },
    /// The response in flight is complete.
    ModelDone {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stop_reason: Option<StopReason>,
        #[serde(default)]
        usage: Usage,
    },
    /// The request in flight failed.
    ModelFailed { error: ModelError },
    /// A call that may change something is about to run. Journaled before it runs, so a resume
    /// knows which unanswered calls may have had an effect.
    ToolStarted { tool_use_id: String },
    /// A tool call finished (or was refused or cancelled by the driver).
    ToolDone(ToolOutcome),
    /// The hooks of one hook event finished (in parallel; runs in hook order).
    HookDone {
        hook_event: crate::hook::HookEventName,
        /// The tool call, for tool hooks.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_use_id: Option<String>,
        runs: Vec<crate::hook::HookRun>,
    },
    /// The summary request of a compaction completed.
    CompactDone {
        summary: String,
        #[serde(default)]
        usage: Usage,
    },
    /// The summary request of a compaction failed.
    CompactFailed { error: ModelError },
    /// The user queued a message while the loop runs; it joins the next request.
    QueuedInput { id: String, content: Vec<ContentBlock> },
    /// The user asked to compact the conversation now (`reloop compact`).
    CompactRequested,
    /// The wait before a retry is over.
    RetryReady,
    /// The driver restarted on this journal after a crash: work that was in flight when the
    /// process stopped is asked for again.
    Resumed,
    /// The user (Ctrl-C) or the library caller asked the loop to stop.
    Abort,
}

impl Event {
    /// The event's kind as journaled, e.g. `model_block`.
    pub fn kind(&self) -> &'static str {
        match self {
            Event::UserInput { .. } => "user_input",
            Event::TextDelta { .. } => "text_delta",
            Event::ModelBlock { .. } => "model_block",
            Event::ModelDone { .. } => "model_done",
            Event::ModelFailed { .. } => "model_failed",
            Event::ToolStarted { .. } => "tool_started",
            Event::ToolDone(_) => "tool_done",
            Event::HookDone { .. } => "hook_done",
            Event::CompactDone { .. } => "compact_done",
            Event::CompactFailed { .. } => "compact_failed",
            Event::QueuedInput { .. } => "queued_input",
            Event::CompactRequested => "compact_requested",
            Event::RetryReady => "retry_ready",
            Event::Resumed => "resumed",
            Event::Abort => "abort",
        }
    }
}
