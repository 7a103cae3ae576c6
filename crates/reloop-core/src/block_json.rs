//! Reading a [`ContentBlock`] from JSON, fast, with the meaning it always had.
//!
//! A block is an object tagged by `type`, with the known fields of its type and any others kept
//! verbatim. Read through serde's derive, that costs two passes: the object into a JSON map, then
//! the map through a `#[serde(flatten)]` struct, which buffers it once more. Blocks are read for
//! every journaled model block, tool result and response, so this reads the object's entries
//! once, into a short list with borrowed keys, and takes the known fields out by hand.
//!
//! What is accepted, and as what, is exactly what the map-then-struct reading gave, down to the
//! order of the kept fields: a repeated key keeps its first place and its last value (as a map
//! insert does), and `type` is taken out by swapping the last entry into its place (as
//! `Map::remove` does), which older journals' digests depend on.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::message::{ContentBlock, RedactedThinking, Text, Thinking, ToolResult, ToolResultContent, ToolUse};

/// Entries past this many go through a map, so a hostile object cannot make the duplicate check
/// quadratic.
const SHORT: usize = 32;

/// A key, borrowed from the input when it holds no escape.
pub(crate) struct Key<'de>(pub(crate) Cow<'de, str>);

impl<'de> de::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string key")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(v.to_string())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

/// A block's entries in order, as a map would hold them.
type Entries<'de> = Vec<(Cow<'de, str>, Value)>;

impl<'de> de::Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(BlockVisitor)
    }
}

struct BlockVisitor;

impl<'de> Visitor<'de> for BlockVisitor {
    type Value = ContentBlock;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a content block object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<ContentBlock, A::Error> {
        let mut entries: Entries<'de> = Vec::with_capacity(6);
        while let Some(Key(key)) = access.next_key()? {
            let value: Value = access.next_value()?;
            if let Some(slot) = entries.iter_mut().find(|(k, _)| *k == key) {
                slot.1 = value;
            } else {
                entries.push((key, value));
            }
            if entries.len() > SHORT {
                let mut map: Map<String, Value> = entries.drain(..).map(|(k, v)| (k.into_owned(), v)).collect();
                while let Some((k, v)) = access.next_entry::<String, Value>()? {
                    map.insert(k, v);
                }
                entries = map.into_iter().map(|(k, v)| (Cow::Owned(k), v)).collect();
                break;
            }
        }
        from_entries(entries).map_err(de::Error::custom)
    }
}

/// The block the entries make (see the module docs for the rules).
fn from_entries(mut entries: Entries<'_>) -> Result<ContentBlock, String> {
    let at = entries.iter().position(|(k, _)| k == "type");
    let tag = match at.map(|i| &entries[i].1) {
        Some(Value::String(t)) => t.as_str(),
        _ => return Err("content block without a string `type`".into()),
    };
    let known = matches!(tag, "text" | "tool_use" | "tool_result" | "thinking" | "redacted_thinking");
    if !known {
        return Ok(ContentBlock::Other(into_map(entries)));
    }
    let tag = match at.map(|i| entries.swap_remove(i)) {
        Some((_, Value::String(tag))) => tag,
        _ => return Err("content block without a string `type`".into()),
    };
    Ok(match tag.as_str() {
        "text" => {
            let text = string(take(&mut entries, "text"), "text")?;
            ContentBlock::Text(Text { text, extra: into_map(entries).into() })
        }
        "tool_use" => {
            let id = string(take(&mut entries, "id"), "id")?;
            let name = string(take(&mut entries, "name"), "name")?;
            let input = take(&mut entries, "input").ok_or("missing field `input`")?;
            ContentBlock::ToolUse(ToolUse { id, name, input, extra: into_map(entries).into() })
        }
        "tool_result" => {
            let tool_use_id = string(take(&mut entries, "tool_use_id"), "tool_use_id")?;
            let content = match take(&mut entries, "content") {
                Some(value) => tool_result_content(value)?,
                None => return Err("missing field `content`".into()),
            };
            let is_error = match take(&mut entries, "is_error") {
                None => false,
                Some(Value::Bool(b)) => b,
                Some(other) => return Err(format!("invalid type: {}, expected a boolean", kind(&other))),
            };
            ContentBlock::ToolResult(ToolResult { tool_use_id, content, is_error, extra: into_map(entries).into() })
        }
        "thinking" => {
            let thinking = string(take(&mut entries, "thinking"), "thinking")?;
            let signature = match take(&mut entries, "signature") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(s),
                Some(other) => return Err(format!("invalid type: {}, expected a string", kind(&other))),
            };
            ContentBlock::Thinking(Thinking { thinking, signature, extra: into_map(entries).into() })
        }
        _ => {
            let data = string(take(&mut entries, "data"), "data")?;
            ContentBlock::RedactedThinking(RedactedThinking { data, extra: into_map(entries).into() })
        }
    })
}

/// Takes the entry `key` out, keeping the order of the rest.
fn take(entries: &mut Entries<'_>, key: &str) -> Option<Value> {
    let i = entries.iter().position(|(k, _)| k == key)?;
    Some(entries.remove(i).1)
}

fn string(value: Option<Value>, field: &str) -> Result<String, String> {
    match value {
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(format!("invalid type: {}, expected a string", kind(&other))),
        None => Err(format!("missing field `{field}`")),
    }
}

fn into_map(entries: Entries<'_>) -> Map<String, Value> {
    entries.into_iter().map(|(k, v)| (k.into_owned(), v)).collect()
}

/// A tool result's content from its JSON: a string, or a list of blocks.
fn tool_result_content(value: Value) -> Result<ToolResultContent, String> {
    match value {
        Value::String(s) => Ok(ToolResultContent::Text(s)),
        Value::Array(items) => items
            .into_iter()
            .map(|item| match item {
                Value::Object(map) => from_entries(map.into_iter().map(|(k, v)| (Cow::Owned(k), v)).collect()),
                _ => Err(UNTAGGED.into()),
            })
            .collect::<Result<_, _>>()
            .map(ToolResultContent::Blocks)
            .map_err(|_| UNTAGGED.to_string()),
        _ => Err(UNTAGGED.into()),
    }
}

/// What serde's untagged reading said of content that is neither form; kept word for word.
const UNTAGGED: &str = "data did not match any variant of untagged enum ToolResultContent";

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "sequence",
        Value::Object(_) => "map",
    }
}

impl<'de> de::Deserialize<'de> for ToolResultContent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ContentVisitor;
        impl<'de> Visitor<'de> for ContentVisitor {
            type Value = ToolResultContent;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or a list of content blocks")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(ToolResultContent::Text(v.to_string()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(ToolResultContent::Text(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut blocks = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
                while let Some(block) = seq.next_element::<ContentBlock>().map_err(|_| de::Error::custom(UNTAGGED))? {
                    blocks.push(block);
                }
                Ok(ToolResultContent::Blocks(blocks))
            }
        }
        d.deserialize_any(ContentVisitor).map_err(|e: D::Error| {
            if e.to_string().starts_with("invalid type") {
                de::Error::custom(UNTAGGED)
            } else {
                e
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The reading this module replaced: the object into a map, `type` removed from it, the rest
    /// through the block's derived (flattening) reader.
    fn by_map(text: &str) -> Option<ContentBlock> {
        let mut map: Map<String, Value> = serde_json::from_str(text).ok()?;
        let tag = map.get("type")?.as_str()?.to_string();
        let known = matches!(tag.as_str(), "text" | "tool_use" | "tool_result" | "thinking" | "redacted_thinking");
        if known {
            map.remove("type");
        }
        let body = Value::Object(map.clone());
        Some(match tag.as_str() {
            "text" => ContentBlock::Text(serde_json::from_value(body).ok()?),
            "tool_use" => ContentBlock::ToolUse(serde_json::from_value(body).ok()?),
            "tool_result" => ContentBlock::ToolResult(serde_json::from_value(body).ok()?),
            "thinking" => ContentBlock::Thinking(serde_json::from_value(body).ok()?),
            "redacted_thinking" => ContentBlock::RedactedThinking(serde_json::from_value(body).ok()?),
            _ => ContentBlock::Other(map),
        })
    }

    /// Both readings of `text`, each with its JSON written back (a map's equality ignores order;
    /// the written form does not).
    fn both(text: &str) -> (Option<String>, Option<String>) {
        let written = |b: Option<ContentBlock>| b.map(|b| serde_json::to_string(&b).expect("writes"));
        (written(serde_json::from_str::<ContentBlock>(text).ok()), written(by_map(text)))
    }

    const KEYS: [&str; 14] = [
        "type",
        "text",
        "id",
        "name",
        "input",
        "tool_use_id",
        "content",
        "is_error",
        "thinking",
        "signature",
        "data",
        "a",
        "b",
        "c",
    ];
    const VALUES: [&str; 14] = [
        r#""text""#,
        r#""tool_use""#,
        r#""tool_result""#,
        r#""thinking""#,
        r#""redacted_thinking""#,
        r#""image""#,
        r#""x""#,
        "1",
        "null",
        "true",
        r#"{"k":1,"j":[2]}"#,
        "[]",
        r#"[{"type":"text","text":"t","z":1,"y":2}]"#,
        r#"[{"type":"text"}]"#,
    ];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

        /// Any object of these keys and values, repeated keys and wrong types included, reads
        /// as the map-then-struct reading read it, with its fields in the same order.
        #[test]
        fn every_object_reads_as_the_map_reading_read_it(
            entries in proptest::collection::vec((0..KEYS.len(), 0..VALUES.len()), 0..9),
            tag in 0..6usize,
        ) {
            let mut text = format!("{{\"type\":{}", VALUES[tag]);
            for (k, v) in &entries {
                text.push_str(&format!(",\"{}\":{}", KEYS[*k], VALUES[*v]));
            }
            text.push('}');
            let (fast, old) = both(&text);
            prop_assert_eq!(fast, old, "{}", text);
        }
    }

    #[test]
    fn the_usual_blocks_and_their_kept_fields_read_as_before() {
        for text in [
            r#"{"type":"text","text":"hi","citations":null}"#,
            r#"{"type":"tool_use","id":"t","name":"Read","input":{"file_path":"a"},"cache_control":{"type":"ephemeral"},"z":1}"#,
            r#"{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"a"},{"type":"image","source":{}}],"is_error":true}"#,
            r#"{"type":"thinking","thinking":"hmm","signature":"sig","a":1,"b":2,"c":3}"#,
            r#"{"type":"redacted_thinking","data":"abc"}"#,
            r#"{"type":"server_tool_use","id":"s","name":"web_search","input":{"query":"x"}}"#,
            r#"{"text":"type second","type":"text","x":1}"#,
            r#"{"type":"tool_use","id":"t","name":"n","input":1,"type":"text","text":"a"}"#,
        ] {
            let (fast, old) = both(text);
            assert!(fast.is_some(), "{text} reads");
            assert_eq!(fast, old, "{text}");
        }
        for bad in [
            r#"{"text":"no type"}"#,
            r#"{"type":1}"#,
            r#"{"type":"text"}"#,
            r#"[1]"#,
            r#"{"type":"tool_use","id":"t","name":"n"}"#,
        ] {
            assert_eq!(both(bad), (None, None), "{bad}");
        }
    }

    #[test]
    fn an_object_of_many_keys_reads_through_a_map_with_the_same_result() {
        let mut text = String::from(r#"{"type":"text","text":"t""#);
        for i in 0..100 {
            text.push_str(&format!(r#","k{}":{i}"#, i % 40));
        }
        text.push('}');
        let (fast, old) = both(&text);
        assert!(fast.is_some());
        assert_eq!(fast, old);
    }

    #[test]
    fn tool_result_content_is_a_string_or_blocks_and_nothing_else() {
        let read = |t: &str| serde_json::from_str::<ToolResultContent>(t).map_err(|e| e.to_string());
        assert_eq!(read(r#""ok""#), Ok(ToolResultContent::Text("ok".into())));
        assert_eq!(
            read(r#"[{"type":"text","text":"a"}]"#),
            Ok(ToolResultContent::Blocks(vec![ContentBlock::text("a")]))
        );
        for bad in ["1", "null", "{}", "[1]", r#"[{"type":"text"}]"#] {
            assert!(read(bad).is_err_and(|e| e.starts_with(UNTAGGED)), "{bad}: {:?}", read(bad));
        }
    }
}
