//! The Messages API request body, serialized straight from the history: no intermediate JSON
//! value, whose copy would double the time and memory of every request of a long session.
//!
//! Prompt caching: `cache_control` goes on the last system block (and on blocks marked
//! `cache`, the last three of them), and on the last content block of the last message, here
//! only: the history itself is never changed.

use reloop_core::{ContentBlock, Message, Role, ToolSpec, ToolUse};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

use crate::provider::{ModelRequest, SystemBlock};

/// The API accepts at most four cache breakpoints per request; one goes to the messages.
const MAX_SYSTEM_BREAKPOINTS: usize = 3;

/// The suffix by which Claude Code names a model's 1M-context variant (`claude-opus-4-8[1m]`).
const ONE_M_SUFFIX: &str = "[1m]";
/// The beta that asks for a model's 1M-context variant, sent in place of the suffix.
pub(crate) const ONE_M_BETA: &str = "context-1m-2025-08-07";

/// The id the API is sent for `model`, and whether it asks for the 1M-context variant: Claude
/// Code keeps `[1m]` on the model's name and sends the id with [`ONE_M_BETA`] instead.
pub(crate) fn api_model(model: &str) -> (&str, bool) {
    match model.strip_suffix(ONE_M_SUFFIX).or_else(|| model.strip_suffix("[1M]")) {
        Some(id) => (id, true),
        None => (model, false),
    }
}

/// The id the API is sent for a model named `model` (without its `[1m]`): what Claude Code
/// calls the model sent to the API.
pub fn api_model_id(model: &str) -> &str {
    api_model(model).0
}

/// `request` as the body the API is sent.
pub(crate) struct Body<'a>(pub &'a ModelRequest);

impl Serialize for Body<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let r = self.0;
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("model", api_model(&r.model).0)?;
        map.serialize_entry("max_tokens", &r.max_tokens)?;
        if !r.system.is_empty() {
            map.serialize_entry("system", &System(&r.system))?;
        }
        map.serialize_entry("messages", &Messages(r))?;
        if !r.tools.is_empty() {
            map.serialize_entry("tools", &Tools(&r.tools))?;
        }
        // Claude Code's order: `thinking`, `context_management`, `output_config`, then `stream`.
        if let Some(thinking) = &r.thinking {
            map.serialize_entry("thinking", thinking)?;
        }
        if let Some(edits) = r.betas.and_then(|_| reloop_core::profile::context_management(r.thinking.as_ref())) {
            map.serialize_entry("context_management", &edits)?;
        }
        if let Some(config) = &r.output_config {
            map.serialize_entry("output_config", config)?;
        }
        if r.stream || r.stream_key {
            map.serialize_entry("stream", &r.stream)?;
        }
        map.end()
    }
}

struct System<'a>(&'a [SystemBlock]);

impl Serialize for System<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let blocks = self.0;
        let last = blocks.len().saturating_sub(1);
        let mut marked: Vec<usize> = (0..blocks.len()).filter(|&i| i == last || blocks[i].cache).collect();
        let excess = marked.len().saturating_sub(MAX_SYSTEM_BREAKPOINTS);
        marked.drain(..excess);
        let mut seq = s.serialize_seq(Some(blocks.len()))?;
        for (i, block) in blocks.iter().enumerate() {
            seq.serialize_element(&SystemText { text: &block.text, cached: marked.contains(&i) })?;
        }
        seq.end()
    }
}

struct SystemText<'a> {
    text: &'a str,
    cached: bool,
}

impl Serialize for SystemText<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("type", "text")?;
        map.serialize_entry("text", self.text)?;
        if self.cached {
            map.serialize_entry("cache_control", &Ephemeral)?;
        }
        map.end()
    }
}

struct Ephemeral;

impl Serialize for Ephemeral {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(1))?;
        map.serialize_entry("type", "ephemeral")?;
        map.end()
    }
}

struct Messages<'a>(&'a ModelRequest);

impl Serialize for Messages<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let messages = self.0.messages.messages();
        let count = messages.len();
        let strings = self.0.system_as_string;
        // The breakpoint's message, counted from the end among those that can carry it.
        let cached =
            (0..count).rev().filter(|&i| !(strings && messages[i].role == Role::System)).nth(self.0.cache_from_end);
        // 2.1.332 repeats the request's `output_config` on its first `role: "system"` message.
        let first_system = messages.iter().position(|m| m.role == Role::System);
        let message_config = self.0.output_config.as_ref().filter(|_| self.0.output_config_on_first_system);
        // Merged runs make the count unknown until written; the length is only a hint.
        let mut seq = s.serialize_seq(None)?;
        for group in super::merge::groups(&messages, self.0.merge_user_messages) {
            if group.len() > 1 {
                let members = &messages[group.clone()];
                let cached = cached.filter(|c| group.contains(c)).map(|c| c - group.start);
                seq.serialize_element(&MergedUser(super::merge::blocks(members, cached)))?;
                continue;
            }
            let (i, message) = (group.start, messages[group.start]);
            // An empty one (2.1.332's third summary shape) goes as the empty list it is.
            let string = message.role == Role::System && !message.content.is_empty() && (strings || i + 1 != count)
                || self.0.summary_as_string && Some(i) != cached && is_summary(message)
                || message.sent_alone && Some(i) != cached;
            let output_config = message_config.filter(|_| Some(i) == first_system);
            seq.serialize_element(&Outgoing { message, string, cached: Some(i) == cached, output_config })?;
        }
        seq.end()
    }
}

/// A compaction's summary message: a user message of one text block opening with the preamble.
fn is_summary(message: &Message) -> bool {
    message.role == Role::User
        && matches!(message.content.as_slice(), [ContentBlock::Text(t)] if t.text.starts_with(reloop_core::compact::SUMMARY_PREAMBLE))
}

/// Only `role` and `content` are sent: a stored response's `id`, `model` or `stop_reason` would
/// be rejected as extra inputs.
struct Outgoing<'a> {
    message: &'a Message,
    /// A system message sent as a plain string.
    string: bool,
    /// Its last block carries the cache breakpoint.
    cached: bool,
    /// Sent after the content as the message's own `output_config`.
    output_config: Option<&'a Value>,
}

impl Serialize for Outgoing<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let role = match self.message.role {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::System => "system",
        };
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry("role", role)?;
        if self.string {
            // Claude Code sends an injected message that is no longer last as a plain string
            // (2.1.197: every one).
            map.serialize_entry("content", &self.message.text())?;
        } else {
            map.serialize_entry("content", &Content { blocks: &self.message.content, cached: self.cached })?;
        }
        if let Some(config) = self.output_config {
            map.serialize_entry("output_config", config)?;
        }
        map.end()
    }
}

/// A run of user messages sent as one ([`super::merge`]).
struct MergedUser<'a>(Vec<super::merge::Merged<'a>>);

impl Serialize for MergedUser<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct Blocks<'b>(&'b [super::merge::Merged<'b>]);
        impl Serialize for Blocks<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut seq = s.serialize_seq(Some(self.0.len()))?;
                for merged in self.0 {
                    match merged.block {
                        ContentBlock::Text(text) if merged.seam => {
                            let mut text = text.clone();
                            text.text.push('\n');
                            let block = ContentBlock::Text(text);
                            seq.serialize_element(&OutgoingBlock { block: &block, cached: merged.cached })?
                        }
                        block => seq.serialize_element(&OutgoingBlock { block, cached: merged.cached })?,
                    }
                }
                seq.end()
            }
        }
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry("role", "user")?;
        map.serialize_entry("content", &Blocks(&self.0))?;
        map.end()
    }
}

struct Content<'a> {
    blocks: &'a [ContentBlock],
    cached: bool,
}

impl Serialize for Content<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let count = self.blocks.len();
        let mut seq = s.serialize_seq(Some(count))?;
        for (i, block) in self.blocks.iter().enumerate() {
            // Thinking blocks cannot carry a cache breakpoint.
            let cacheable = !matches!(block, ContentBlock::Thinking(_) | ContentBlock::RedactedThinking(_));
            let cached = self.cached && i + 1 == count && cacheable;
            seq.serialize_element(&OutgoingBlock { block, cached })?;
        }
        seq.end()
    }
}

struct OutgoingBlock<'a> {
    block: &'a ContentBlock,
    cached: bool,
}

impl Serialize for OutgoingBlock<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // A tool_use whose input never parsed (cut by max_tokens) must still be a valid request:
        // it is sent as Claude Code sends it, `{"__unparsedToolInput": {"raw", "len"}}` (`len` in
        // UTF-16 units, as JavaScript counts). Rare, so that block alone is rebuilt on a copy.
        // Input that parsed to something else than an object (`[1, 2]`) goes as it parsed, as
        // Claude Code sends it (tests/print/recorded/*/tool_inputs/invalid).
        let repaired;
        let block = match self.block {
            ContentBlock::ToolUse(call) if call.input.is_string() => {
                let mut call = ToolUse::clone(call);
                let raw = call.input.as_str().unwrap_or_default().to_string();
                let len = raw.encode_utf16().count();
                let mut unparsed = Map::new();
                unparsed.insert("__unparsedToolInput".into(), serde_json::json!({"raw": raw, "len": len}));
                call.input = Value::Object(unparsed);
                repaired = ContentBlock::ToolUse(call.into());
                &repaired
            }
            block => block,
        };
        if !self.cached {
            return block.serialize(s);
        }
        #[derive(Serialize)]
        struct Cached<'b> {
            #[serde(flatten)]
            block: &'b ContentBlock,
            cache_control: Ephemeral,
        }
        Cached { block, cache_control: Ephemeral }.serialize(s)
    }
}

struct Tools<'a>(&'a [ToolSpec]);

impl Serialize for Tools<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for tool in self.0 {
            seq.serialize_element(tool)?;
        }
        seq.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reloop_core::History;
    use serde_json::json;

    #[test]
    fn the_bytes_sent_are_the_body_shown_key_for_key() {
        let mut history = History::new();
        history.push(Message::user_text("hi"));
        history.push(Message::assistant(vec![
            ContentBlock::text("reading"),
            ContentBlock::tool_use("t1", "Read", json!({"file_path": "/a", "limit": 5})),
        ]));
        history.push(Message::user(vec![ContentBlock::tool_result("t1", "file body", false)]));
        let request = ModelRequest::new("m", 100, history, 1)
            .with_system(vec![SystemBlock::cached("you are helpful")])
            .with_tools(vec![ToolSpec { name: "Read".into(), description: "reads".into(), input_schema: json!({}) }]);
        let bytes = serde_json::to_vec(&Body(&request)).unwrap();
        let value: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(bytes, serde_json::to_vec(&value).unwrap(), "no key twice, the order kept");
        assert_eq!(
            value["messages"][2]["content"][0],
            json!({"type": "tool_result", "tool_use_id": "t1", "content": "file body", "cache_control": {"type": "ephemeral"}})
        );
        assert_eq!(value["messages"][1]["content"][1].get("cache_control"), None, "only the last message");
        assert_eq!(value["system"][0]["cache_control"], json!({"type": "ephemeral"}));
    }

    #[test]
    fn a_summary_request_caches_the_message_before_its_instruction() {
        let mut history = History::new();
        history.push(Message::user_text("hi"));
        history.push(Message::assistant(vec![ContentBlock::tool_use("t1", "Read", json!({"file_path": "/a"}))]));
        history.push(Message::user(vec![
            ContentBlock::tool_result("t1", "body", false),
            ContentBlock::text("CRITICAL: Respond with TEXT ONLY."),
        ]));
        let request = ModelRequest::new("m", 100, history, 1).with_cache_from_end(1);
        let value = serde_json::to_value(Body(&request)).unwrap();
        assert_eq!(value["messages"][1]["content"][0]["cache_control"], json!({"type": "ephemeral"}));
        assert_eq!(value["messages"][2]["content"][1].get("cache_control"), None);
        assert_eq!(value.to_string().matches("cache_control").count(), 1);
    }

    /// 2.1.332's request repeats its `output_config` on the first `role: "system"` message, after
    /// its content, and on no other (tests/print/recorded/2.1.332/*/requests.jsonl, every one).
    #[test]
    fn the_first_system_message_carries_the_output_config_when_the_style_says_so() {
        let mut history = History::new();
        history.push(Message::user_text("hi"));
        history.push(Message::system_text("Stop hook blocking error"));
        history.push(Message::user_text("again"));
        history.push(Message::system_text("later"));
        let style = |on: bool| crate::WireStyle {
            stream_key: true,
            effort: Some("medium"),
            timeout_header: None,
            system_as_string: false,
            summary_as_string: false,
            output_config_on_first_system: on,
            betas: None,
            merge_user_messages: false,
        };
        let request = ModelRequest::new("m", 100, history, 1).with_style(style(true));
        let bytes = serde_json::to_string(&Body(&request)).unwrap();
        let value: Value = serde_json::from_str(&bytes).unwrap();
        let configs: Vec<&Value> = value["messages"].as_array().unwrap().iter().map(|m| &m["output_config"]).collect();
        assert_eq!(configs, [&Value::Null, &json!({"effort": "medium"}), &Value::Null, &Value::Null]);
        assert!(bytes.contains(r#""role":"system","content":"Stop hook blocking error","output_config":{"#));
        let request = request.with_style(style(false));
        assert!(!serde_json::to_string(&Body(&request)).unwrap().contains(r#""output_config":{"effort":"medium"}}]"#));
        assert_eq!(serde_json::to_string(&Body(&request)).unwrap().matches("output_config").count(), 1);
    }
}
