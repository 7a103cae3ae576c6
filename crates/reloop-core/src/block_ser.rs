//! Writing messages and blocks, by hand: field by field, in the order serde's derive wrote them
//! (the tag first, then the fields, then the kept ones), so every digest and journal row stays
//! byte for byte what it was. The derive wrote these through `#[serde(tag)]` and
//! `#[serde(flatten)]`, which go through serde's buffering adapters: a replay serializes a
//! block several times a turn (its digest, the token estimate, the effects it compares), and
//! the adapters were most of that cost. Reading a block: `crate::block_json`.

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

use crate::message::{ContentBlock, Message, RedactedThinking, Text, Thinking, ToolResult, ToolResultContent, ToolUse};

/// A type written as the entries of a JSON object, so that a block can put its tag before them.
trait Entries {
    fn entries<M: SerializeMap>(&self, map: &mut M) -> Result<(), M::Error>;
}

/// Writes `value` as an object: `tag` (as `"type"`) first when given, then its entries.
fn object<S: Serializer, T: Entries>(s: S, tag: Option<&str>, value: &T) -> Result<S::Ok, S::Error> {
    let mut map = s.serialize_map(None)?;
    if let Some(tag) = tag {
        map.serialize_entry("type", tag)?;
    }
    value.entries(&mut map)?;
    map.end()
}

impl Entries for Text {
    fn entries<M: SerializeMap>(&self, map: &mut M) -> Result<(), M::Error> {
        map.serialize_entry("text", &self.text)?;
        self.extra.entries(map)
    }
}

impl Entries for ToolUse {
    fn entries<M: SerializeMap>(&self, map: &mut M) -> Result<(), M::Error> {
        map.serialize_entry("id", &self.id)?;
        map.serialize_entry("name", &self.name)?;
        map.serialize_entry("input", &self.input)?;
        self.extra.entries(map)
    }
}

impl Entries for ToolResult {
    fn entries<M: SerializeMap>(&self, map: &mut M) -> Result<(), M::Error> {
        map.serialize_entry("tool_use_id", &self.tool_use_id)?;
        match &self.content {
            ToolResultContent::Text(text) => map.serialize_entry("content", text)?,
            ToolResultContent::Blocks(blocks) => map.serialize_entry("content", blocks)?,
        }
        if self.is_error {
            map.serialize_entry("is_error", &true)?;
        }
        self.extra.entries(map)
    }
}

impl Entries for Thinking {
    fn entries<M: SerializeMap>(&self, map: &mut M) -> Result<(), M::Error> {
        map.serialize_entry("thinking", &self.thinking)?;
        if let Some(signature) = &self.signature {
            map.serialize_entry("signature", signature)?;
        }
        self.extra.entries(map)
    }
}

impl Entries for RedactedThinking {
    fn entries<M: SerializeMap>(&self, map: &mut M) -> Result<(), M::Error> {
        map.serialize_entry("data", &self.data)?;
        self.extra.entries(map)
    }
}

impl Entries for Message {
    fn entries<M: SerializeMap>(&self, map: &mut M) -> Result<(), M::Error> {
        map.serialize_entry("role", &self.role)?;
        map.serialize_entry("content", &self.content)?;
        self.extra.entries(map)
    }
}

impl Serialize for ContentBlock {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ContentBlock::Text(b) => object(s, Some("text"), b),
            ContentBlock::ToolUse(b) => object(s, Some("tool_use"), b),
            ContentBlock::ToolResult(b) => object(s, Some("tool_result"), b),
            ContentBlock::Thinking(b) => object(s, Some("thinking"), b),
            ContentBlock::RedactedThinking(b) => object(s, Some("redacted_thinking"), b),
            ContentBlock::Other(map) => map.serialize(s),
        }
    }
}

/// The blocks' own forms, without a tag: as the derive wrote them.
macro_rules! untagged {
    ($($ty:ty),*) => {$(
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                object(s, None, self)
            }
        }
    )*};
}

untagged!(Text, ToolUse, ToolResult, Thinking, RedactedThinking, Message);

impl crate::extra::Extra {
    /// The kept fields as entries of the object they were flattened into.
    fn entries<M: SerializeMap>(&self, map: &mut M) -> Result<(), M::Error> {
        if self.is_empty() {
            return Ok(());
        }
        for (key, value) in &self.to_map() {
            map.serialize_entry(key, value)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    //! The reference: the derived forms these replace, kept here to hold the hand-written
    //! ones to them byte for byte.
    use super::*;
    use crate::message::{Extra, Role};
    use serde_json::{json, Map, Value};

    #[derive(Serialize)]
    #[serde(tag = "type", rename_all = "snake_case")]
    enum Tagged<'a> {
        Text(&'a DText),
        ToolUse(&'a DToolUse),
        ToolResult(&'a DToolResult),
        Thinking(&'a DThinking),
        RedactedThinking(&'a DRedacted),
    }

    #[derive(Serialize)]
    struct DText {
        text: String,
        #[serde(flatten)]
        extra: Map<String, Value>,
    }

    #[derive(Serialize)]
    struct DToolUse {
        id: String,
        name: String,
        input: Value,
        #[serde(flatten)]
        extra: Map<String, Value>,
    }

    #[derive(Serialize)]
    #[serde(untagged)]
    enum DContent {
        Text(String),
        Blocks(Vec<Value>),
    }

    #[derive(Serialize)]
    struct DToolResult {
        tool_use_id: String,
        content: DContent,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
        #[serde(flatten)]
        extra: Map<String, Value>,
    }

    #[derive(Serialize)]
    struct DThinking {
        thinking: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
        #[serde(flatten)]
        extra: Map<String, Value>,
    }

    #[derive(Serialize)]
    struct DRedacted {
        data: String,
        #[serde(flatten)]
        extra: Map<String, Value>,
    }

    #[derive(Serialize)]
    struct DMessage {
        role: Role,
        content: Vec<String>,
        #[serde(flatten)]
        extra: Map<String, Value>,
    }

    /// The derived form of `block`, tagged (as in a message) or not (a call in an effect).
    fn derived(block: &ContentBlock, tagged: bool) -> String {
        let raw = |v: &dyn erased::Ser| v.json();
        match block {
            ContentBlock::Text(b) => {
                let d = DText { text: b.text.clone(), extra: b.extra.to_map() };
                if tagged {
                    raw(&Tagged::Text(&d))
                } else {
                    raw(&d)
                }
            }
            ContentBlock::ToolUse(b) => {
                let d = DToolUse {
                    id: b.id.clone(),
                    name: b.name.clone(),
                    input: b.input.clone(),
                    extra: b.extra.to_map(),
                };
                if tagged {
                    raw(&Tagged::ToolUse(&d))
                } else {
                    raw(&d)
                }
            }
            ContentBlock::ToolResult(b) => {
                let content = match &b.content {
                    ToolResultContent::Text(t) => DContent::Text(t.clone()),
                    ToolResultContent::Blocks(blocks) => DContent::Blocks(
                        blocks.iter().map(|b| serde_json::from_str(&derived(b, true)).unwrap()).collect(),
                    ),
                };
                let d = DToolResult {
                    tool_use_id: b.tool_use_id.clone(),
                    content,
                    is_error: b.is_error,
                    extra: b.extra.to_map(),
                };
                if tagged {
                    raw(&Tagged::ToolResult(&d))
                } else {
                    raw(&d)
                }
            }
            ContentBlock::Thinking(b) => {
                let d =
                    DThinking { thinking: b.thinking.clone(), signature: b.signature.clone(), extra: b.extra.to_map() };
                if tagged {
                    raw(&Tagged::Thinking(&d))
                } else {
                    raw(&d)
                }
            }
            ContentBlock::RedactedThinking(b) => {
                let d = DRedacted { data: b.data.clone(), extra: b.extra.to_map() };
                if tagged {
                    raw(&Tagged::RedactedThinking(&d))
                } else {
                    raw(&d)
                }
            }
            ContentBlock::Other(map) => serde_json::to_string(map).unwrap(),
        }
    }

    mod erased {
        /// Serializes any of the reference types to JSON text.
        pub trait Ser {
            fn json(&self) -> String;
        }
        impl<T: serde::Serialize> Ser for T {
            fn json(&self) -> String {
                serde_json::to_string(self).unwrap()
            }
        }
    }

    fn untagged_json(block: &ContentBlock) -> String {
        match block {
            ContentBlock::Text(b) => serde_json::to_string(b),
            ContentBlock::ToolUse(b) => serde_json::to_string(b),
            ContentBlock::ToolResult(b) => serde_json::to_string(b),
            ContentBlock::Thinking(b) => serde_json::to_string(b),
            ContentBlock::RedactedThinking(b) => serde_json::to_string(b),
            ContentBlock::Other(map) => serde_json::to_string(map),
        }
        .unwrap()
    }

    fn blocks() -> Vec<ContentBlock> {
        let extra = Extra::from(
            json!({"z": 1, "cache_control": {"type": "ephemeral"}, "a": null}).as_object().unwrap().clone(),
        );
        let with = |mut b: ContentBlock| {
            match &mut b {
                ContentBlock::Text(t) => t.extra = extra.clone(),
                ContentBlock::ToolUse(t) => t.extra = extra.clone(),
                ContentBlock::ToolResult(t) => t.extra = extra.clone(),
                ContentBlock::Thinking(t) => t.extra = extra.clone(),
                ContentBlock::RedactedThinking(t) => t.extra = extra.clone(),
                ContentBlock::Other(_) => {}
            }
            b
        };
        let plain = vec![
            ContentBlock::text("hé \"quoted\"\n\u{1}"),
            ContentBlock::tool_use(
                "toolu_1",
                "Read",
                json!({"file_path": "/a", "limit": 3, "nested": [1, {"b": 2.5}]}),
            ),
            ContentBlock::tool_result("toolu_1", "ok", false),
            ContentBlock::tool_result("toolu_2", "boom", true),
            ContentBlock::ToolResult(ToolResult {
                tool_use_id: "toolu_3".into(),
                content: ToolResultContent::Blocks(vec![
                    ContentBlock::text("a"),
                    ContentBlock::Other(json!({"type": "image", "source": {"data": "x"}}).as_object().unwrap().clone()),
                ]),
                is_error: false,
                extra: Extra::new(),
            }),
            ContentBlock::Thinking(Thinking {
                thinking: "hmm".into(),
                signature: Some("sig".into()),
                extra: Extra::new(),
            }),
            ContentBlock::Thinking(Thinking { thinking: "hmm".into(), signature: None, extra: Extra::new() }),
            ContentBlock::RedactedThinking(RedactedThinking { data: "abc".into(), extra: Extra::new() }),
            ContentBlock::Other(
                json!({"type": "server_tool_use", "id": "s", "input": {}}).as_object().unwrap().clone(),
            ),
        ];
        let kept: Vec<ContentBlock> = plain.iter().cloned().map(with).collect();
        plain.into_iter().chain(kept).collect()
    }

    #[test]
    fn blocks_are_written_as_the_derive_wrote_them() {
        for block in blocks() {
            assert_eq!(serde_json::to_string(&block).unwrap(), derived(&block, true), "{block:?}");
            assert_eq!(untagged_json(&block), derived(&block, false), "{block:?}");
            // Through a value too (requests are built through one), and pretty.
            let value = serde_json::to_value(&block).unwrap();
            assert_eq!(value, serde_json::from_str::<Value>(&derived(&block, true)).unwrap());
            let pretty = serde_json::to_string_pretty(&block).unwrap();
            assert_eq!(serde_json::from_str::<Value>(&pretty).unwrap(), value);
        }
    }

    #[test]
    fn messages_are_written_as_the_derive_wrote_them() {
        for (role, extra) in [
            (Role::User, Extra::new()),
            (Role::Assistant, Extra::of_strings(&[("id", "msg_1"), ("model", "m")])),
            (Role::System, Extra::new()),
        ] {
            let message = Message { role, content: blocks(), extra: extra.clone() };
            let d = DMessage { role, content: Vec::new(), extra: extra.to_map() };
            let reference = serde_json::to_string(&d).unwrap();
            let contents: Vec<String> = message.content.iter().map(|b| derived(b, true)).collect();
            let reference = reference.replacen("\"content\":[]", &format!("\"content\":[{}]", contents.join(",")), 1);
            assert_eq!(serde_json::to_string(&message).unwrap(), reference);
        }
    }
}
