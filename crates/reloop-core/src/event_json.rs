//! Reading an [`Event`] from its journaled JSON, fast.
//!
//! An event is journaled internally tagged (`{"kind":"text_delta","index":0,...}`). serde reads
//! that form by buffering the whole object into an intermediate tree before it knows the
//! variant, which cost a streamed replay more than the transition itself. Every writer puts
//! `kind` first, so the reader here takes the kind from the text and hands the rest of the
//! object to an externally tagged reading of the same enum (`{"text_delta":{"index":0,...}}`),
//! which decodes straight into the variant. Anything else (`kind` not first, a second `kind`, a
//! value the fast reading refuses) is read the ordinary way, so what is accepted, and as what,
//! does not change.

use serde::Deserialize;

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

/// Kinds whose variant carries nothing: the externally tagged form is the bare name.
const UNIT_KINDS: [&str; 3] = ["compact_requested", "resumed", "abort"];

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
    let rest = text.strip_prefix("{\"kind\":\"")?;
    let end = rest.find('"')?;
    let (kind, rest) = (&rest[..end], &rest[end + 1..]);
    // A kind is plain snake_case; anything escaped, or a second `kind`, goes the ordinary way.
    if !kind.bytes().all(|b| b.is_ascii_lowercase() || b == b'_') || rest.contains("\"kind\"") {
        return None;
    }
    let mut tagged = String::with_capacity(text.len() + 4);
    if UNIT_KINDS.contains(&kind) {
        if rest.trim() != "}" {
            return None;
        }
        tagged.push('"');
        tagged.push_str(kind);
        tagged.push('"');
    } else {
        // `rest` is `,"field":...}` or `}`: the fields become the variant's object.
        let fields = rest.strip_prefix(',').unwrap_or(rest);
        tagged.push_str("{\"");
        tagged.push_str(kind);
        tagged.push_str("\":{");
        tagged.push_str(fields);
        tagged.push('}');
    }
    let mut de = serde_json::Deserializer::from_str(&tagged);
    let event = Tagged::deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(event)
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
        ] {
            assert_eq!(Event::from_json(text).ok(), serde_json::from_str::<Event>(text).ok(), "{text}");
        }
    }
}
