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
}

impl ToolOutput {
    /// A successful result.
    pub fn ok(content: impl Into<String>) -> Self {
        ToolOutput { content: content.into(), is_error: false, blocks: Vec::new() }
    }

    /// A failed result; the model sees the text and the error flag.
    pub fn error(content: impl Into<String>) -> Self {
        ToolOutput { content: content.into(), is_error: true, blocks: Vec::new() }
    }

    /// A result of several blocks; `content` becomes their text.
    pub fn with_blocks(blocks: Vec<reloop_core::ContentBlock>, is_error: bool) -> Self {
        let content = reloop_core::ToolResultContent::Blocks(blocks.clone()).as_text();
        ToolOutput { content, is_error, blocks }
    }
}
