//! Messages in the shape of the Anthropic Messages API.
//!
//! Unknown fields and unknown block types (server tools, future additions) are kept verbatim so
//! that a recorded conversation survives a round trip through reloop unchanged.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};
use std::sync::Arc;

pub use crate::extra::Extra;

/// Who speaks a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The user (prompts and tool results).
    User,
    /// The model.
    Assistant,
    /// The harness, among the messages: reminders Claude Code injects as `role: "system"`
    /// messages (a profile's nudges). The session's system prompt still travels beside them.
    System,
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who speaks.
    pub role: Role,
    /// What is said, block by block.
    #[serde(deserialize_with = "content_from_string_or_blocks")]
    pub content: Vec<ContentBlock>,
    /// Fields reloop does not interpret (e.g. `id`, `model`, `stop_reason` on a response object).
    #[serde(flatten)]
    pub extra: Extra,
    /// Sent on its own, its content as a plain string, where a run of user messages is
    /// otherwise sent as one: 2.1.332's first reminder given back by a compaction by hand
    /// (flag 46). Not part of the message's JSON: the engine sets it as it shapes the history.
    #[serde(skip)]
    pub sent_alone: bool,
}

impl Message {
    /// A system message of one text block (an injected reminder).
    pub fn system_text(text: impl Into<String>) -> Self {
        Message { role: Role::System, content: vec![ContentBlock::text(text)], extra: Extra::new(), sent_alone: false }
    }

    /// A user message of these blocks.
    pub fn user(content: Vec<ContentBlock>) -> Self {
        Message { role: Role::User, content, extra: Extra::new(), sent_alone: false }
    }

    /// A user message of one text block.
    pub fn user_text(text: impl Into<String>) -> Self {
        Self::user(vec![ContentBlock::text(text)])
    }

    /// An assistant message of these blocks.
    pub fn assistant(content: Vec<ContentBlock>) -> Self {
        Message { role: Role::Assistant, content, extra: Extra::new(), sent_alone: false }
    }

    /// The `tool_use` blocks of this message, in order: shared, so taking them (for the calls
    /// to run, the effect that runs them) copies no input.
    pub fn tool_uses(&self) -> impl Iterator<Item = &Arc<ToolUse>> {
        self.content.iter().filter_map(|b| match b {
            ContentBlock::ToolUse(t) => Some(t),
            _ => None,
        })
    }

    /// All text blocks joined, as a caller would read the message.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for block in &self.content {
            if let ContentBlock::Text(t) = block {
                out.push_str(&t.text);
            }
        }
        out
    }
}

/// A message's `content`: its blocks, or a string, which the API accepts as shorthand for one
/// text block. Read by what the value is, not as an untagged enum: that buffered every block
/// before reading it, which was most of the cost of reading a response (a scripted model's
/// every turn).
pub fn content_from_string_or_blocks<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<ContentBlock>, D::Error> {
    struct StringOrBlocks;
    impl<'de> serde::de::Visitor<'de> for StringOrBlocks {
        type Value = Vec<ContentBlock>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a string or a list of content blocks")
        }
        fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Self::Value, E> {
            Ok(vec![ContentBlock::text(text)])
        }
        fn visit_string<E: serde::de::Error>(self, text: String) -> Result<Self::Value, E> {
            Ok(vec![ContentBlock::text(text)])
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            // The hint comes from the input: trusted only so far.
            let mut blocks = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
            while let Some(block) = seq.next_element()? {
                blocks.push(block);
            }
            Ok(blocks)
        }
    }
    d.deserialize_any(StringOrBlocks)
}

/// A text block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Text {
    /// The text.
    pub text: String,
    /// Fields reloop does not read, kept verbatim.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A tool call the model asks for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolUse {
    /// The call's id, answered by a `tool_result`.
    pub id: String,
    /// The tool.
    pub name: String,
    /// The tool's input.
    pub input: Value,
    /// Fields reloop does not read, kept verbatim.
    #[serde(flatten)]
    pub extra: Extra,
}

/// The answer to a tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The call it answers.
    pub tool_use_id: String,
    /// What the model is told.
    pub content: ToolResultContent,
    /// The call failed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// Fields reloop does not read, kept verbatim.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A tool result is a string or a list of blocks (text, image).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ToolResultContent {
    /// Plain text.
    Text(String),
    /// Blocks (text, images).
    Blocks(Vec<ContentBlock>),
}

impl ToolResultContent {
    /// The text of the result, blocks joined by newlines.
    pub fn as_text(&self) -> String {
        match self {
            ToolResultContent::Text(s) => s.clone(),
            ToolResultContent::Blocks(blocks) => {
                let texts: Vec<&str> = blocks
                    .iter()
                    .filter_map(|b| match b {
                        ContentBlock::Text(t) => Some(t.text.as_str()),
                        _ => None,
                    })
                    .collect();
                texts.join("\n")
            }
        }
    }
}

/// The model's extended thinking.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Thinking {
    /// The thinking text.
    pub thinking: String,
    /// The signature the API checks when the block is sent back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// Fields reloop does not read, kept verbatim.
    #[serde(flatten)]
    pub extra: Extra,
}

/// Thinking the API redacted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RedactedThinking {
    /// The encrypted thinking.
    pub data: String,
    /// Fields reloop does not read, kept verbatim.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A content block. Known types are typed; anything else (server tool use, web search results,
/// images, future blocks) is kept as the JSON object it came as.
#[derive(Debug, Clone, PartialEq)]
pub enum ContentBlock {
    /// Text.
    Text(Text),
    /// A tool call. Shared: the history, the calls running and the effect that runs them hold
    /// the one call, and cloning an input (a map, a tool's whole file) each turn was a tenth of
    /// a replay's work.
    ToolUse(Arc<ToolUse>),
    /// A tool result.
    ToolResult(ToolResult),
    /// Extended thinking.
    Thinking(Thinking),
    /// Redacted thinking.
    RedactedThinking(RedactedThinking),
    /// A block type reloop does not know, kept verbatim.
    Other(Map<String, Value>),
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text(Text { text: text.into(), extra: Extra::new() })
    }

    /// A tool call block.
    pub fn tool_use(id: impl Into<String>, name: impl Into<String>, input: Value) -> Self {
        ContentBlock::ToolUse(Arc::new(ToolUse { id: id.into(), name: name.into(), input, extra: Extra::new() }))
    }

    /// A tool result block of text.
    pub fn tool_result(tool_use_id: impl Into<String>, content: impl Into<String>, is_error: bool) -> Self {
        ContentBlock::ToolResult(ToolResult {
            tool_use_id: tool_use_id.into(),
            content: ToolResultContent::Text(content.into()),
            is_error,
            extra: Extra::new(),
        })
    }

    /// The block's `type` as the API spells it.
    pub fn type_name(&self) -> &str {
        match self {
            ContentBlock::Text(_) => "text",
            ContentBlock::ToolUse(_) => "tool_use",
            ContentBlock::ToolResult(_) => "tool_result",
            ContentBlock::Thinking(_) => "thinking",
            ContentBlock::RedactedThinking(_) => "redacted_thinking",
            ContentBlock::Other(map) => map.get("type").and_then(Value::as_str).unwrap_or("unknown"),
        }
    }
}

/// A block is written tagged by its `type`, first, then its fields, then the kept ones.
impl Serialize for ContentBlock {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        #[serde(tag = "type", rename_all = "snake_case")]
        enum Tagged<'a> {
            Text(&'a Text),
            ToolUse(&'a ToolUse),
            ToolResult(&'a ToolResult),
            Thinking(&'a Thinking),
            RedactedThinking(&'a RedactedThinking),
        }
        match self {
            ContentBlock::Text(b) => Tagged::Text(b).serialize(s),
            ContentBlock::ToolUse(b) => Tagged::ToolUse(b).serialize(s),
            ContentBlock::ToolResult(b) => Tagged::ToolResult(b).serialize(s),
            ContentBlock::Thinking(b) => Tagged::Thinking(b).serialize(s),
            ContentBlock::RedactedThinking(b) => Tagged::RedactedThinking(b).serialize(s),
            ContentBlock::Other(map) => map.serialize(s),
        }
    }
}

/// A block is read as a map first: the known types then lose `type` as `Map::swap_remove` takes
/// it out (the last kept field moves into its place), and the rest is read by the type's struct,
/// whose unknown fields are kept in their order. Older journals' digests hash the kept fields in
/// that order, so it is the reading, not an accident of it.
impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let mut map = Map::<String, Value>::deserialize(d)?;
        let tag = match map.get("type") {
            Some(Value::String(tag)) => tag.clone(),
            _ => return Err(D::Error::custom("content block without a string `type`")),
        };
        let read: fn(Value) -> serde_json::Result<ContentBlock> = match tag.as_str() {
            "text" => |body| serde_json::from_value(body).map(ContentBlock::Text),
            "tool_use" => |body| serde_json::from_value(body).map(ContentBlock::ToolUse),
            "tool_result" => |body| serde_json::from_value(body).map(ContentBlock::ToolResult),
            "thinking" => |body| serde_json::from_value(body).map(ContentBlock::Thinking),
            "redacted_thinking" => |body| serde_json::from_value(body).map(ContentBlock::RedactedThinking),
            _ => return Ok(ContentBlock::Other(map)),
        };
        map.swap_remove("type");
        read(Value::Object(map)).map_err(D::Error::custom)
    }
}

/// Token usage as the API reports it. Unknown counters are kept.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Input tokens not read from the cache.
    #[serde(default)]
    pub input_tokens: u64,
    /// Output tokens.
    #[serde(default)]
    pub output_tokens: u64,
    /// Input tokens written to the prompt cache.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_creation_input_tokens: u64,
    /// Input tokens read from the prompt cache.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_read_input_tokens: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Usage {
    /// Every token the response counted: its input, cached or not, and its output (Claude
    /// Code's total of a usage).
    pub fn total(&self) -> u64 {
        self.input_tokens
            .saturating_add(self.cache_creation_input_tokens)
            .saturating_add(self.cache_read_input_tokens)
            .saturating_add(self.output_tokens)
    }

    /// Adds another response's usage to a running total.
    pub fn add(&mut self, other: &Usage) {
        // Saturating: the counts come from the provider, and must total identically in every build.
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.cache_creation_input_tokens =
            self.cache_creation_input_tokens.saturating_add(other.cache_creation_input_tokens);
        self.cache_read_input_tokens = self.cache_read_input_tokens.saturating_add(other.cache_read_input_tokens);
    }
}

/// A child session's spend, carried by the outcome of the call that ran it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentUsage {
    /// The child's cost in US dollars, priced by the child's own model.
    pub cost_usd: f64,
    /// The child's usage by model.
    pub model_usage: std::collections::BTreeMap<String, Usage>,
}

/// A tool as the model is told of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The tool's name.
    pub name: String,
    /// What the model is told it does.
    pub description: String,
    /// The JSON schema of its input.
    pub input_schema: Value,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_fields_and_blocks_survive_a_round_trip() {
        let raw = json!({
            "role": "assistant",
            "id": "msg_01",
            "content": [
                {"type": "text", "text": "hi", "citations": null},
                {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "x"}},
                {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}, "cache_control": {"type": "ephemeral"}},
                {"type": "thinking", "thinking": "hmm", "signature": "sig"},
                {"type": "redacted_thinking", "data": "abc"}
            ]
        });
        let message: Message = serde_json::from_value(raw.clone()).unwrap();
        assert_eq!(message.content.len(), 5);
        assert_eq!(message.content[1].type_name(), "server_tool_use");
        assert_eq!(serde_json::to_value(&message).unwrap(), raw);
    }

    #[test]
    fn string_content_is_one_text_block_blocks_are_blocks_and_anything_else_is_refused() {
        let message: Message = serde_json::from_value(json!({"role": "user", "content": "hello"})).unwrap();
        assert_eq!(message.content, vec![ContentBlock::text("hello")]);
        let message: Message = serde_json::from_str(r#"{"role": "user", "content": "hello"}"#).unwrap();
        assert_eq!(message.content, vec![ContentBlock::text("hello")]);
        let blocks = r#"{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "image", "source": {}}]}"#;
        let message: Message = serde_json::from_str(blocks).unwrap();
        assert_eq!(message.content.iter().map(ContentBlock::type_name).collect::<Vec<_>>(), ["text", "image"]);
        for bad in [json!(7), json!({"type": "text"}), json!([{"text": "no type"}]), json!(null)] {
            let refused = serde_json::from_value::<Message>(json!({"role": "user", "content": bad}));
            assert!(refused.is_err(), "{bad}");
        }
        let refused = serde_json::from_value::<Message>(json!({"role": "user", "content": 7})).unwrap_err();
        assert!(refused.to_string().contains("a string or a list of content blocks"), "{refused}");
    }

    #[test]
    fn tool_result_error_flag_round_trips() {
        let block = ContentBlock::tool_result("toolu_1", "boom", true);
        let value = serde_json::to_value(&block).unwrap();
        assert_eq!(
            value,
            json!({"type": "tool_result", "tool_use_id": "toolu_1", "content": "boom", "is_error": true})
        );
        assert_eq!(serde_json::from_value::<ContentBlock>(value).unwrap(), block);
    }

    #[test]
    fn a_known_block_loses_its_type_as_a_swap_remove_takes_it_and_an_unknown_one_keeps_all() {
        let text = r#"{"type":"text","text":"a","citations":null,"x":1}"#;
        let block: ContentBlock = serde_json::from_str(text).unwrap();
        // The last field moved into `type`'s place: older journals' digests hash this order.
        assert_eq!(serde_json::to_string(&block).unwrap(), r#"{"type":"text","text":"a","x":1,"citations":null}"#);
        let other = r#"{"type":"image","source":{"data":"x"}}"#;
        assert_eq!(serde_json::to_string(&serde_json::from_str::<ContentBlock>(other).unwrap()).unwrap(), other);
        assert!(serde_json::from_str::<ContentBlock>(r#"{"text":"a"}"#).is_err());
    }
}
