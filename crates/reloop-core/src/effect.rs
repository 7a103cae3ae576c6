//! What the core asks the driver to do. Effects are data: the driver executes them and feeds
//! their outcomes back as events; replay compares them with the journal instead.

use serde::{Deserialize, Serialize};

use crate::message::ToolUse;

/// One model request. The messages themselves are the state's history; the journal records only
/// their count so that journal bytes per turn stay flat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelCall {
    /// The turn this request belongs to (`turn_count`).
    pub turn: u32,
    /// 1-based request number in the session, retries included.
    pub request: u32,
    /// How many messages the request carries.
    pub message_count: usize,
    /// The model to ask (the fallback model once the session switched).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub model: String,
    /// The output-token limit of this request.
    #[serde(default)]
    pub max_tokens: u32,
}

/// Wait before asking again; the driver then feeds `retry_ready`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RetryWait {
    /// 1-based retry number.
    pub attempt: u32,
    pub max_retries: u32,
    pub delay_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_status: Option<u16>,
    /// `overloaded`, `rate_limit`, `server_error`, `connection_error`, ...
    pub error: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "effect", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Effect {
    /// Send the history to the model and stream its answer back as events.
    CallModel(ModelCall),
    /// Run these tool calls (the driver schedules them) and report each as `tool_done`.
    RunTools { calls: Vec<ToolUse> },
    /// After a crash: tool calls that started and were never answered. The driver re-runs the
    /// read-only ones and answers the others as possibly run, never re-running a write silently.
    ResumeTools {
        calls: Vec<ToolUse>,
        /// The ids among them that had started (a `tool_started` is journaled).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        started: Vec<String>,
    },
    /// Ask the model for a summary of the first `summarize` messages of the history, with the
    /// summarisation instruction as the last user text and no tools; report `compact_done`.
    Summarize { trigger: String, request: u32, summarize: usize, pre_tokens: u64 },
    /// The history was compacted: the caller's stream shows a compact boundary.
    CompactBoundary { trigger: String, pre_tokens: u64, post_tokens: u64 },
    /// A compaction failed and the request goes ahead without it; after three in a row the
    /// circuit breaker stops auto-compaction trying (`breaker_open`).
    CompactionFailed { trigger: String, failures: u32, breaker_open: bool, message: String },
    /// Run the Stop hooks (in parallel) and report them as one `hook_done`.
    RunStopHooks { stop_hook_active: bool, last_assistant_message: String },
    /// Kill the hooks in flight.
    CancelHooks,
    /// Queued messages joined the next request.
    InputConsumed { ids: Vec<String> },
    /// Stop the model request in flight.
    CancelModel,
    /// Stop the tool calls in flight.
    CancelTools,
    /// Sleep, then feed `retry_ready`.
    WaitRetry(RetryWait),
    /// The caller's stream must drop what it showed of the failed attempt.
    Withdraw,
    /// The session now asks another model, for the rest of the run.
    SwitchModel { trigger: String, from: String, to: String },
}
