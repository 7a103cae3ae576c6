//! Reading an [`Event`] from its journaled JSON, fast.
//!
//! An event is journaled internally tagged (`{"kind":"text_delta","index":0,...}`). serde reads
//! that form by buffering the whole object into an intermediate tree before it knows the
//! variant, which cost a streamed replay more than the transition itself. Every writer puts
//! `kind` first, so the reader here reads the kind, then hands the rest of the same object, as
//! it is parsed, to an externally tagged reading of the same enum (as if it were
//! `{"text_delta":{"index":0,...}}`), which decodes straight into the variant. Anything else
//! (`kind` not first, a second `kind`, a value the fast reading refuses) is read the ordinary
//! way, so what is accepted, and as what, does not change.

use std::borrow::Cow;
use std::fmt;

use serde::de::value::BorrowedStrDeserializer;
use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, IgnoredAny, IntoDeserializer, MapAccess, VariantAccess, Visitor,
};
use serde::Deserialize;

use crate::block_json::Key;

use crate::event::{ModelError, StopReason, ToolOutcome};
use crate::hook::{HookEventName, HookRun};
use crate::message::{ContentBlock, Usage};
use crate::Event;

fn legacy() -> u32 {
    0
}

/// [`Event`] as an externally tagged enum: the same variants and fields with the same defaults
/// (a test reads every event both ways and compares).
#[derive(Deserialize)]
#[serde(remote = "Event", rename_all = "snake_case")]
enum Tagged {
    UserInput {
        content: Vec<ContentBlock>,
    },
    TextDelta {
        index: usize,
        text: String,
        #[serde(default = "legacy")]
        request: u32,
    },
    ModelBlock {
        index: usize,
        block: ContentBlock,
        #[serde(default = "legacy")]
        request: u32,
    },
    ModelDone {
        #[serde(default)]
        id: Option<String>,
        #[serde(default)]
        model: Option<String>,
        #[serde(default)]
        stop_reason: Option<StopReason>,
        #[serde(default)]
        usage: Usage,
        #[serde(default = "legacy")]
        request: u32,
    },
    ModelFailed {
        error: ModelError,
        #[serde(default = "legacy")]
        request: u32,
    },
    ToolStarted {
        tool_use_id: String,
        #[serde(default = "legacy")]
        request: u32,
    },
    ToolDone(ToolOutcome),
    HookDone {
        hook_event: HookEventName,
        #[serde(default)]
        tool_use_id: Option<String>,
        runs: Vec<HookRun>,
        #[serde(default = "legacy")]
        request: u32,
    },
    CompactDone {
        summary: String,
        #[serde(default)]
        usage: Usage,
        #[serde(default = "legacy")]
        request: u32,
    },
    CompactFailed {
        error: ModelError,
        #[serde(default = "legacy")]
        request: u32,
    },
    QueuedInput {
        id: String,
        content: Vec<ContentBlock>,
    },
    CompactRequested,
    RetryReady {
        #[serde(default = "legacy")]
        attempt: u32,
    },
    Resumed,
    Abort,
    SetModel {
        #[serde(default)]
        model: Option<String>,
    },
    SetPermissionMode {
        mode: String,
    },
}

impl Event {
    /// Reads an event from its journaled JSON (see the module docs); the same result as
    /// `serde_json::from_str`, faster for the form every writer produces.
    pub fn from_json(text: &str) -> serde_json::Result<Event> {
        if let Some(event) = fast(text) {
            return Ok(event);
        }
        serde_json::from_str(text)
    }
}

fn fast(text: &str) -> Option<Event> {
    let mut de = serde_json::Deserializer::from_str(text);
    let event = serde::Deserializer::deserialize_map(&mut de, KindFirst).ok()?;
    de.end().ok()?;
    Some(event)
}

/// Reads an object whose first entry is `kind`: the kind names the variant, and the entries
/// after it are read as the variant's fields straight from the text, with no copy and no
/// intermediate tree. Any other shape fails, and the caller reads it the ordinary way.
struct KindFirst;

impl<'de> Visitor<'de> for KindFirst {
    type Value = Event;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an event object whose first entry is its kind")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Event, A::Error> {
        if map.next_key::<&str>()? != Some("kind") {
            return Err(de::Error::custom("`kind` is not first"));
        }
        let kind: &str = map.next_value()?;
        // A kind is plain snake_case; anything else goes the ordinary way.
        if !kind.bytes().all(|b| b.is_ascii_lowercase() || b == b'_') {
            return Err(de::Error::custom("not a plain kind"));
        }
        Tagged::deserialize(Variant { kind, map })
    }
}

/// The variant named by `kind`, whose fields are the rest of `map`: a deserializer of the
/// externally tagged [`Tagged`] reading that form.
struct Variant<'de, A> {
    kind: &'de str,
    map: A,
}

impl<'de, A: MapAccess<'de>> Deserializer<'de> for Variant<'de, A> {
    type Error = A::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, A::Error> {
        Err(de::Error::custom("an event is read as an enum"))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        visitor.visit_enum(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option
        unit unit_struct newtype_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

impl<'de, A: MapAccess<'de>> EnumAccess<'de> for Variant<'de, A> {
    type Error = A::Error;
    type Variant = Fields<A>;

    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<(S::Value, Fields<A>), A::Error> {
        let variant = seed.deserialize(BorrowedStrDeserializer::new(self.kind))?;
        Ok((variant, Fields(self.map)))
    }
}

/// The entries after `kind`. A second `kind` among them fails: the ordinary reading refuses a
/// repeated tag, and it is left to say so.
struct Fields<A>(A);

impl<'de, A: MapAccess<'de>> VariantAccess<'de> for Fields<A> {
    type Error = A::Error;

    fn unit_variant(mut self) -> Result<(), A::Error> {
        match self.0.next_key::<IgnoredAny>()? {
            None => Ok(()),
            Some(_) => Err(de::Error::custom("a unit kind with fields")),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, A::Error> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, _visitor: V) -> Result<V::Value, A::Error> {
        Err(de::Error::custom("no event is a tuple"))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        visitor.visit_map(self)
    }
}

/// A newtype variant's content ([`Event::ToolDone`]'s outcome) is the same entries.
impl<'de, A: MapAccess<'de>> Deserializer<'de> for Fields<A> {
    type Error = A::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, A::Error> {
        visitor.visit_map(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Fields<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        let Some(Key(key)) = self.0.next_key::<Key<'de>>()? else { return Ok(None) };
        if key == "kind" {
            return Err(de::Error::custom("a second `kind`"));
        }
        match key {
            Cow::Borrowed(key) => seed.deserialize(BorrowedStrDeserializer::new(key)).map(Some),
            Cow::Owned(key) => seed.deserialize(key.into_deserializer()).map(Some),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.0.next_value_seed(seed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn both(text: &str) -> (Option<Event>, Option<Event>) {
        (fast(text), serde_json::from_str(text).ok())
    }

    #[test]
    fn every_kind_reads_the_same_both_ways() {
        let events = [
            r#"{"kind":"user_input","content":[{"type":"text","text":"hi"}]}"#,
            r#"{"kind":"text_delta","index":0,"text":"a \"b\"","request":3}"#,
            r#"{"kind":"text_delta","index":0,"text":"old"}"#,
            r#"{"kind":"model_block","index":1,"block":{"type":"tool_use","id":"t","name":"Read","input":{"path":"a"}},"request":2}"#,
            r#"{"kind":"model_done","id":"m","stop_reason":"tool_use","usage":{"input_tokens":3},"request":1}"#,
            r#"{"kind":"model_done"}"#,
            r#"{"kind":"model_failed","error":{"status":529,"error_type":"overloaded_error","message":"busy"},"request":4}"#,
            r#"{"kind":"tool_started","tool_use_id":"t","request":2}"#,
            r#"{"kind":"tool_done","tool_use_id":"t","content":"ok","is_error":true,"request":2}"#,
            r#"{"kind":"hook_done","hook_event":"Stop","runs":[],"request":5}"#,
            r#"{"kind":"compact_done","summary":"s","usage":{"output_tokens":9},"request":6}"#,
            r#"{"kind":"compact_failed","error":{"error_type":"api_error","message":"x"}}"#,
            r#"{"kind":"queued_input","id":"q1","content":[{"type":"text","text":"more"}]}"#,
            r#"{"kind":"compact_requested"}"#,
            r#"{"kind":"retry_ready","attempt":2}"#,
            r#"{"kind":"retry_ready"}"#,
            r#"{"kind":"resumed"}"#,
            r#"{"kind":"abort"}"#,
            r#"{"kind":"set_model","model":"m2"}"#,
            r#"{"kind":"set_model"}"#,
            r#"{"kind":"set_permission_mode","mode":"plan"}"#,
        ];
        for text in events {
            let (fast, ordinary) = both(text);
            assert!(fast.is_some(), "the fast reading takes {text}");
            assert_eq!(fast, ordinary, "{text}");
            assert_eq!(Event::from_json(text).ok(), ordinary);
        }
    }

    #[test]
    fn other_spellings_and_bad_input_read_as_the_ordinary_reader_reads_them() {
        for text in [
            r#"{"index":0,"kind":"text_delta","text":"kind not first"}"#,
            r#"{"kind":"abort","kind":"resumed"}"#,
            r#"{"kind":"abort","extra":1}"#,
            r#"{"kind":"no_such_kind"}"#,
            r#"{"kind":"text_delta","index":"zero","text":"x"}"#,
            r#"{"kind":"text_delta","index":0,"text":"x"} trailing"#,
            r#"{"kind":"text\u005fdelta","index":0,"text":"x"}"#,
            r#"{"kind":"#,
            "",
            r#"{"kind":"text_delta","index":0,"text":"x"},"b":2}"#,
            r#"{"kind":"model_block","index":1,"block":{"type":"tool_use","id":"t","name":"R","input":{"kind":1}}}"#,
            r#"{ "kind" : "abort" }"#,
            r#"{"kind":"abort","ki\u006ed":"abort"}"#,
            r#"{"kind":"tool_done","tool_use_id":"t","content":"ok","kind":"tool_done"}"#,
            r#"{"kind":"tool_done","tool_use_id":"t","content":[{"type":"text","text":"x","kind":"k"}]}"#,
            r#"{"kind":"text_delta","te\u0078t":"escaped key","index":0}"#,
            r#"{"kind":"text_delta","index":0,"text":"x","request":1,"index":2}"#,
            r#"{"kind":"set_model","model":null}"#,
            r#"{"kind":"retry_ready","attempt":-1}"#,
            r#"{"kind":"user_input","content":"not a list"}"#,
        ] {
            assert_eq!(Event::from_json(text).ok(), serde_json::from_str::<Event>(text).ok(), "{text}");
        }
    }

    /// Every event the replay corpus holds, as its writer spelled it, is read by the fast
    /// reading, to the value the ordinary one gives.
    #[test]
    fn every_corpus_event_reads_fast_to_what_the_ordinary_reading_gives() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/journals");
        let mut read = 0;
        for entry in std::fs::read_dir(dir).expect("corpus") {
            let path = entry.expect("entry").path();
            if path.extension().and_then(|e| e.to_str()) != Some("json") {
                continue;
            }
            let dump: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
            for step in dump["steps"].as_array().expect("steps") {
                let text = step["event"].to_string();
                let (fast, ordinary) = both(&text);
                assert!(fast.is_some(), "the fast reading takes {text}");
                assert_eq!(fast, ordinary, "{text}");
                read += 1;
            }
        }
        assert!(read > 200, "the corpus holds events ({read})");
    }
}
