//! What a tool call produced ([`ToolOutcome`]), as the `tool_done` event carries it.

use serde::{Deserialize, Serialize};

use crate::message::ContentBlock;
use crate::rule_source::RuleSource;

/// What a tool call produced. The driver turns a tool's output, a refusal or a cancellation into
/// one of these; the core only files it under its `tool_use_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolOutcome {
    /// The call this answers.
    pub tool_use_id: String,
    /// What the model is told.
    pub content: crate::message::ToolResultContent,
    /// The call failed; the model is told so.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// The call did not run because a permission rule, mode or hook denied it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub denied: bool,
    /// The request whose response asked for the call (the `tool_done` event's correlation id).
    #[serde(default, skip_serializing_if = "is_legacy")]
    pub request: u32,
    /// What a subagent (the `Agent` tool) spent answering the call: it counts toward this
    /// session's usage, cost and budget. Journals written before subagents never carry it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_usage: Option<crate::message::AgentUsage>,
    /// What the call did as data (Claude Code's `tool_use_result`: a Read's file and line
    /// counts, a Write's patch, an error's text), for the caller's stream and transcript only:
    /// the model never sees it. Journaled from flag 12 on ([`crate::Flag::StreamDetails`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_result: Option<serde_json::Value>,
    /// How the permission check ruled on the call, as Claude Code 2.1.332 reports it on the
    /// result's line (one `tool_result_meta` entry: `{"id", "permission_decision": {…}}`), for
    /// the caller's stream only. Journaled from flag 12 on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_result_meta: Option<serde_json::Value>,
    /// Where the permission rule that ruled on the call came from (an allow, deny or ask
    /// rule's settings file or flag), for the session file's `ruleSource` (2.1.332). Journaled
    /// from flag 37 on ([`crate::Flag::RuleSources`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule_source: Option<RuleSource>,
    /// When the file a Read returned, or a Write or an Edit wrote, was last changed, in
    /// milliseconds since the epoch, as the call saw it: a compaction gives files back newest
    /// change first, as Claude Code does. Journaled from flag 45 on
    /// ([`crate::Flag::GivenBackByChange`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_changed_ms: Option<u64>,
}

impl ToolOutcome {
    /// A plain result `content` for the call `tool_use_id`: no error, no denial, no request
    /// yet, nothing kept beside it. Every other outcome starts from it (`..ToolOutcome::new`),
    /// so a new field is given its default in one place.
    pub fn new(tool_use_id: impl Into<String>, content: crate::message::ToolResultContent) -> Self {
        ToolOutcome {
            tool_use_id: tool_use_id.into(),
            content,
            is_error: false,
            denied: false,
            request: 0,
            agent_usage: None,
            tool_use_result: None,
            tool_result_meta: None,
            rule_source: None,
            file_changed_ms: None,
        }
    }

    /// An error result of `text` for the call `tool_use_id`.
    pub fn error(tool_use_id: &str, text: &str) -> Self {
        ToolOutcome {
            is_error: true,
            ..ToolOutcome::new(tool_use_id, crate::message::ToolResultContent::Text(text.to_string()))
        }
    }

    /// The `tool_result` block the model is sent.
    pub fn into_block(self) -> ContentBlock {
        ContentBlock::ToolResult(crate::message::ToolResult {
            tool_use_id: self.tool_use_id,
            content: self.content,
            is_error: self.is_error,
            extra: Default::default(),
        })
    }
}

/// Correlation ids are request numbers counted from 1; `0` is what a journal written before
/// correlation ids existed holds (digest version 1), and is not journaled.
pub(crate) fn is_legacy(request: &u32) -> bool {
    *request == 0
}
