//! Reading an [`Event`] from its journaled JSON, fast: the one way every backend and replay read
//! a row's event ([`read_event`]), the same result as `serde_json::from_str`.
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

use reloop_core::hook::{HookEventName, HookRun};
use reloop_core::{ContentBlock, Event, ModelError, StopReason, ToolOutcome, Usage};

use fast::number;

mod fast;

/// A key, borrowed from the input when it holds no escape.
struct Key<'de>(Cow<'de, str>);

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
        #[serde(default)]
        origin: Option<serde_json::Value>,
        #[serde(default)]
        local: Vec<reloop_core::local_lines::LocalLine>,
    },
    TextDelta {
        index: usize,
        text: String,
        #[serde(default = "legacy")]
        request: u32,
    },
    ModelStarted {
        #[serde(default)]
        id: Option<String>,
        #[serde(default)]
        usage: Option<serde_json::Value>,
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
        #[serde(default)]
        given_back: Option<Vec<Option<String>>>,
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
        #[serde(default)]
        command: Option<String>,
    },
    SetPermissionMode {
        mode: String,
    },
    CommandTools {
        command: String,
        allow: Vec<String>,
    },
}

/// Reads an event from its journaled JSON (see the module docs); the same result as
/// `serde_json::from_str`, faster for the form every writer produces.
pub fn read_event(text: &str) -> serde_json::Result<Event> {
    let event = text_delta(text).or_else(|| fast::written(text)).or_else(|| fast(text));
    if let Some(event) = event {
        return Ok(event);
    }
    serde_json::from_str(text)
}

/// A text delta exactly as the journal writes it (`{"kind":"text_delta","index":0,"text":"…",
/// "request":3}`, the request left out before there were any), its text free of escapes: most
/// steps of a streamed response are one, and read here they cost a tenth of what the general
/// reading costs. Anything else, an escape in the text included, is left to it.
fn text_delta(json: &str) -> Option<Event> {
    let rest = json.strip_prefix(r#"{"kind":"text_delta","index":"#)?;
    let (index, rest) = number(rest)?;
    let rest = rest.strip_prefix(r#","text":""#)?;
    // The text runs to the first quote; a backslash before it means an escape.
    let end = rest.bytes().position(|b| b == b'"' || b == b'\\')?;
    if rest.as_bytes()[end] != b'"' || rest.as_bytes()[..end].iter().any(|b| *b < 0x20) {
        return None;
    }
    let (text, rest) = (&rest[..end], &rest[end + 1..]);
    let request = match rest.strip_prefix(r#","request":"#) {
        Some(rest) => match number(rest)? {
            (request, "}") => u32::try_from(request).ok()?,
            _ => return None,
        },
        None if rest == "}" => 0,
        None => return None,
    };
    Some(Event::TextDelta { index: usize::try_from(index).ok()?, text: text.to_string(), request })
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
pub(crate) mod tests {
    use super::*;

    fn both(text: &str) -> (Option<Event>, Option<Event>) {
        (fast(text), serde_json::from_str(text).ok())
    }

    #[test]
    fn every_kind_reads_the_same_both_ways() {
        let events = [
            r#"{"kind":"user_input","content":[{"type":"text","text":"hi"}]}"#,
            r#"{"kind":"user_input","content":[{"type":"text","text":"hi"}],"origin":{"kind":"human"}}"#,
            r#"{"kind":"text_delta","index":0,"text":"a \"b\"","request":3}"#,
            r#"{"kind":"text_delta","index":0,"text":"old"}"#,
            r#"{"kind":"model_started","id":"msg_1","usage":{"input_tokens":120,"output_tokens":1},"request":3}"#,
            r#"{"kind":"model_started","request":3}"#,
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
            r#"{"kind":"command_tools","command":"fm","allow":["Bash(touch:*)"]}"#,
        ];
        // Every kind is here, so a new one cannot miss the fast reading unnoticed.
        let kinds: std::collections::BTreeSet<&str> = events.iter().filter_map(|t| t.split('"').nth(3)).collect();
        let all: std::collections::BTreeSet<&str> = reloop_core::EVENT_KINDS.iter().copied().collect();
        assert_eq!(kinds, all);
        for text in events {
            let (fast, ordinary) = both(text);
            assert!(fast.is_some(), "the fast reading takes {text}");
            assert_eq!(fast, ordinary, "{text}");
            assert_eq!(read_event(text).ok(), ordinary);
        }
    }

    #[test]
    fn a_user_input_s_origin_is_written_only_when_given() {
        let plain = Event::user_input(vec![ContentBlock::text("hi")]);
        let text = serde_json::to_string(&plain).expect("written");
        assert_eq!(text, r#"{"kind":"user_input","content":[{"type":"text","text":"hi"}]}"#);
        let stamped = Event::UserInput {
            content: vec![ContentBlock::text("hi")],
            origin: Some(serde_json::json!({"kind": "human"})),
            local: vec![reloop_core::local_lines::LocalLine::failed("<local-command-stderr>e</local-command-stderr>")],
        };
        let text = serde_json::to_string(&stamped).expect("written");
        assert_eq!(read_event(&text).ok(), Some(stamped));
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
            assert_eq!(read_event(text).ok(), serde_json::from_str::<Event>(text).ok(), "{text}");
        }
    }

    use proptest::prelude::*;

    /// `json` with `byte` put in place of the byte at `at` (`edit` 0), inserted there (1), or
    /// the byte there taken out (2); `None` when that is no longer UTF-8.
    pub(crate) fn one_byte_edit(json: String, at: prop::sample::Index, edit: u8, byte: u8) -> Option<String> {
        let mut bytes = json.into_bytes();
        let at = at.index(bytes.len() + 1);
        match edit {
            0 if at < bytes.len() => bytes[at] = byte,
            1 => bytes.insert(at, byte),
            _ if at < bytes.len() => {
                bytes.remove(at);
            }
            _ => {}
        }
        String::from_utf8(bytes).ok()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

        /// A text delta as the journal writes it, whatever its text (quotes, backslashes,
        /// control characters, text beyond ASCII) and numbers, reads as the ordinary reader
        /// reads it.
        #[test]
        fn a_written_text_delta_reads_as_the_ordinary_reader_reads_it(
            text in "(\\PC|[\"\\\\\u{0}-\u{1f}\u{7f}é✓])*",
            index in 0usize..1_000_000,
            request in prop_oneof![Just(0u32), any::<u32>()],
        ) {
            let event = Event::TextDelta { index, text, request };
            let json = serde_json::to_string(&event).expect("writes");
            prop_assert_eq!(read_event(&json).ok(), Some(event));
        }

        /// Whatever the short reading takes, the ordinary one reads the same: any text delta,
        /// with one byte replaced, inserted or taken out anywhere.
        #[test]
        fn what_the_text_delta_reading_takes_the_ordinary_reading_reads_the_same(
            text in "[a-z \"\\\\é]{0,8}",
            index in 0usize..200,
            request in 0u32..3,
            at in any::<prop::sample::Index>(),
            edit in 0..3u8,
            byte in prop_oneof![Just(b'"'), Just(b'\\'), Just(b'0'), Just(b'9'), Just(b','), Just(b'}'), Just(b' '), Just(b'.'), Just(b'e'), Just(b'-'), Just(0x1fu8)],
        ) {
            let json = serde_json::to_string(&Event::TextDelta { index, text, request }).expect("writes");
            let Some(edited) = one_byte_edit(json, at, edit, byte) else { return Ok(()) };
            if let Some(fast) = text_delta(&edited) {
                prop_assert_eq!(serde_json::from_str::<Event>(&edited).ok(), Some(fast), "{}", edited);
            }
        }
    }

    #[test]
    fn the_text_delta_reading_takes_the_usual_deltas_and_leaves_the_rest() {
        for json in [
            r#"{"kind":"text_delta","index":0,"text":"word5 ","request":3}"#,
            r#"{"kind":"text_delta","index":12,"text":"é ✓","request":4294967295}"#,
            r#"{"kind":"text_delta","index":0,"text":""}"#,
        ] {
            assert!(text_delta(json).is_some(), "{json}");
            assert_eq!(text_delta(json), serde_json::from_str(json).ok(), "{json}");
        }
        for json in [
            r#"{"kind":"text_delta","index":0,"text":"a "b"","request":3}"#,
            r#"{"kind":"text_delta","index":01,"text":"a","request":3}"#,
            r#"{"kind":"text_delta","index":0,"text":"a","request":4294967296}"#,
            r#"{"kind":"text_delta","index":0,"text":"a","request":3,"x":1}"#,
            r#"{"kind":"text_delta","index":1.0,"text":"a"}"#,
            r#"{"kind":"text_delta","index":0,"text":"a"} "#,
            "{\"kind\":\"text_delta\",\"index\":0,\"text\":\"a\u{1}\"}",
        ] {
            assert_eq!(text_delta(json), None, "{json}");
        }
    }
}
