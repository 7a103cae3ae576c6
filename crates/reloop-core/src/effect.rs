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
    /// 1-based request number in the session.
    pub request: u32,
    /// How many messages the request carries.
    pub message_count: usize,
    /// A raised output-token limit, when the loop escalated it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens_override: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "effect", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Effect {
    /// Send the history to the model and stream its answer back as events.
    CallModel(ModelCall),
    /// Run these tool calls (the driver schedules them) and report each as `tool_done`.
    RunTools { calls: Vec<ToolUse> },
    /// Stop the model request in flight.
    CancelModel,
    /// Stop the tool calls in flight.
    CancelTools,
}
