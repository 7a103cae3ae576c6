//! The text a tool answers with. It has its own module so that the tool failures
//! ([`crate::error`]) convert into it without depending on the tool contract ([`crate::tool`]),
//! which depends on them through the sandbox's confinement.

/// The text a tool answers with, as it goes back to the model in a `tool_result` block.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// The text of the result: what the model reads, and what hooks are given.
    pub content: String,
    /// Marks the result as a failure for the model (Claude Code's `is_error`).
    pub is_error: bool,
    /// Blocks (text and images) when the answer is more than text, as an MCP tool's can be;
    /// then they are the result and `content` is their text, for hooks and logs. Empty for the
    /// built-in tools.
    pub blocks: Vec<reloop_core::ContentBlock>,
    /// What the call did, as data (Claude Code's `tool_use_result`: a Read's file and line
    /// counts, a Write's original file and patch): journaled with the outcome so a replay prints
    /// what the live run printed. `None` for a failure and for tools that keep none.
    pub structured: Option<serde_json::Value>,
    /// When the file a Read returned, or a Write or an Edit wrote, was last changed, in
    /// milliseconds since the epoch (Claude Code's read-file `timestamp`): a compaction gives
    /// files back newest change first.
    pub changed_ms: Option<u64>,
}

/// When a file was last changed, in milliseconds since the epoch (a [`ToolOutput::changed_ms`]).
pub(crate) fn changed_ms(metadata: &std::fs::Metadata) -> Option<u64> {
    let since = metadata.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?;
    Some(u64::try_from(since.as_millis()).unwrap_or(u64::MAX))
}

impl ToolOutput {
    /// A successful result.
    pub fn ok(content: impl Into<String>) -> Self {
        ToolOutput { content: content.into(), is_error: false, blocks: Vec::new(), structured: None, changed_ms: None }
    }

    /// A failed result; the model sees the text and the error flag.
    pub fn error(content: impl Into<String>) -> Self {
        ToolOutput { is_error: true, ..ToolOutput::ok(content) }
    }

    /// A result of several blocks; `content` becomes their text.
    pub fn with_blocks(blocks: Vec<reloop_core::ContentBlock>, is_error: bool) -> Self {
        let content = reloop_core::ToolResultContent::Blocks(blocks.clone()).as_text();
        ToolOutput { is_error, blocks, ..ToolOutput::ok(content) }
    }

    /// The same output with its structured result.
    pub fn with_structured(mut self, structured: Option<serde_json::Value>) -> Self {
        self.structured = structured;
        self
    }
}
