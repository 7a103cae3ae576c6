//! Assembles an Anthropic Messages API event stream into completed content blocks.
//!
//! Real streams are messier than the documentation: `data:` JSON padded with spaces, an empty
//! first `input_json_delta`, pings anywhere, server-tool blocks that arrive whole in
//! `content_block_start`, and `max_tokens` cutting a `tool_use` open with unterminated JSON. Each
//! of those is handled here, once, for every provider that speaks this format.

use std::collections::BTreeMap;

use reloop_core::{ContentBlock, ModelError, StopReason, Usage};
use serde_json::{Map, Value};

use crate::limits::{ContentBudget, ResponseLimits};
use crate::provider::StreamEvent;
use crate::sse::{excerpt, sse_events_from_bytes, SseAssembler};

/// Parses a whole Anthropic SSE body (framed by [`crate::sse`]) into stream events.
pub fn parse_anthropic_sse(body: &[u8]) -> Vec<StreamEvent> {
    sse_events_from_bytes(body, AnthropicAssembler::new())
}

/// A content block between its `content_block_start` and `content_block_stop`.
#[derive(Debug)]
struct OpenBlock {
    /// The block as the API describes it, deltas applied.
    fields: Map<String, Value>,
    /// Concatenated `input_json_delta` fragments, parsed when the block completes.
    json: String,
}

/// The Anthropic stream state machine: one SSE event in, zero or more [`StreamEvent`]s out.
#[derive(Debug, Default)]
pub struct AnthropicAssembler {
    id: Option<String>,
    model: Option<String>,
    usage: Usage,
    stop_reason: Option<StopReason>,
    open: BTreeMap<usize, OpenBlock>,
    ended: bool,
    /// Content taken in, against the response's caps.
    budget: ContentBudget,
}

impl AnthropicAssembler {
    /// An assembler with only the one-event cap (a body already in memory).
    pub fn new() -> Self {
        Self::default()
    }

    /// An assembler that fails the response with `response_too_large` past `limits`.
    pub fn with_limits(limits: ResponseLimits) -> Self {
        AnthropicAssembler { budget: ContentBudget::new(limits), ..Self::default() }
    }

    /// One SSE event in. After a `Done` or `Failed` the assembler ignores everything.
    pub fn on_event(&mut self, event_name: &str, data: &str) -> Vec<StreamEvent> {
        if self.ended {
            return Vec::new();
        }
        let known = matches!(
            event_name,
            "message_start"
                | "content_block_start"
                | "content_block_delta"
                | "content_block_stop"
                | "message_delta"
                | "message_stop"
                | "error"
        );
        // A stream without `event:` lines names every event "message"; the payload's `type`
        // then says what it is.
        if !known && event_name != "message" {
            return Vec::new();
        }
        let payload: Value = match serde_json::from_str(data) {
            Ok(value) => value,
            Err(err) => {
                return self.fail_invalid(format!(
                    "malformed JSON in the `{event_name}` event ({err}): {}",
                    excerpt(data, 200)
                ))
            }
        };
        let kind = if known {
            event_name.to_string()
        } else {
            match payload.get("type").and_then(Value::as_str) {
                Some(kind) => kind.to_string(),
                None => return Vec::new(),
            }
        };
        let result = match kind.as_str() {
            "message_start" => self.message_start(&payload),
            "content_block_start" => self.block_start(&payload, data.len()),
            "content_block_delta" => self.block_delta(&payload),
            "content_block_stop" => self.block_stop(&payload),
            "message_delta" => self.message_delta(&payload),
            "message_stop" => Ok(self.complete()),
            "error" => Ok(self.api_error(&payload)),
            _ => Ok(Vec::new()),
        };
        match result {
            Ok(out) => out,
            Err(Failure::Invalid(message)) => self.fail_invalid(message),
            Err(Failure::TooLarge(error)) => {
                self.ended = true;
                vec![StreamEvent::Failed(error)]
            }
        }
    }

    /// The body ended. Flushes open blocks; `Done` if the server already said why it stopped,
    /// otherwise `Failed(invalid_stream)`.
    pub fn finish(&mut self) -> Vec<StreamEvent> {
        if self.ended {
            return Vec::new();
        }
        if self.stop_reason.is_some() {
            return self.complete();
        }
        let mut out = self.flush_open();
        out.push(StreamEvent::invalid_stream("the stream ended before message_stop"));
        self.ended = true;
        out
    }

    fn fail_invalid(&mut self, message: String) -> Vec<StreamEvent> {
        self.ended = true;
        vec![StreamEvent::invalid_stream(message)]
    }

    fn message_start(&mut self, payload: &Value) -> Result<Vec<StreamEvent>, Failure> {
        let message = payload.get("message").ok_or_else(|| Failure::from("message_start without a `message`"))?;
        self.id = message.get("id").and_then(Value::as_str).map(str::to_string);
        self.model = message.get("model").and_then(Value::as_str).map(str::to_string);
        if let Some(usage) = message.get("usage") {
            merge_usage(&mut self.usage, usage);
        }
        let usage = message.get("usage").filter(|u| u.is_object()).cloned();
        Ok(vec![StreamEvent::Started { id: self.id.clone(), usage }])
    }

    /// A block starts, sometimes whole (server tools): its event's size is charged as content.
    fn block_start(&mut self, payload: &Value, size: usize) -> Result<Vec<StreamEvent>, Failure> {
        let index = block_index(payload)?;
        let fields = match payload.get("content_block") {
            Some(Value::Object(fields)) => fields.clone(),
            _ => return Err(format!("content_block_start for block {index} without a `content_block` object").into()),
        };
        if self.open.contains_key(&index) {
            return Err(format!("content block {index} started twice").into());
        }
        self.budget.charge(size)?;
        let mut out = Vec::new();
        if fields.get("type").and_then(Value::as_str) == Some("text") {
            if let Some(text) = fields.get("text").and_then(Value::as_str).filter(|t| !t.is_empty()) {
                out.push(StreamEvent::TextDelta { index, text: text.to_string() });
            }
        }
        self.open.insert(index, OpenBlock { fields, json: String::new() });
        Ok(out)
    }

    fn block_delta(&mut self, payload: &Value) -> Result<Vec<StreamEvent>, Failure> {
        let index = block_index(payload)?;
        let delta =
            payload.get("delta").ok_or_else(|| format!("content_block_delta for block {index} without a `delta`"))?;
        let block = self
            .open
            .get_mut(&index)
            .ok_or_else(|| format!("content_block_delta for block {index}, which is not open"))?;
        let field = |name: &str| delta.get(name).and_then(Value::as_str).unwrap_or_default().to_string();
        // What the delta adds, charged before it is kept.
        let kind = delta.get("type").and_then(Value::as_str);
        let size = match kind {
            Some("text_delta") => delta.get("text"),
            Some("input_json_delta") => delta.get("partial_json"),
            Some("thinking_delta") => delta.get("thinking"),
            Some("signature_delta") => delta.get("signature"),
            _ => None,
        }
        .and_then(Value::as_str)
        .map_or(0, str::len);
        let size = if kind == Some("citations_delta") { payload.to_string().len() } else { size };
        self.budget.charge(size)?;
        let mut out = Vec::new();
        match kind {
            Some("text_delta") => {
                let text = field("text");
                append_str(&mut block.fields, "text", &text);
                out.push(StreamEvent::TextDelta { index, text });
            }
            Some("input_json_delta") => block.json.push_str(&field("partial_json")),
            Some("thinking_delta") => append_str(&mut block.fields, "thinking", &field("thinking")),
            Some("signature_delta") => {
                block.fields.insert("signature".into(), Value::String(field("signature")));
            }
            Some("citations_delta") => {
                if let Some(citation) = delta.get("citation") {
                    let citations = block.fields.entry("citations").or_insert(Value::Null);
                    match citations {
                        Value::Array(list) => list.push(citation.clone()),
                        other => *other = Value::Array(vec![citation.clone()]),
                    }
                }
            }
            // Delta types added after this was written: the completed block still arrives.
            _ => {}
        }
        Ok(out)
    }

    fn block_stop(&mut self, payload: &Value) -> Result<Vec<StreamEvent>, Failure> {
        let index = block_index(payload)?;
        let block = self
            .open
            .remove(&index)
            .ok_or_else(|| format!("content_block_stop for block {index}, which is not open"))?;
        let block = complete_block(index, block)?;
        Ok(vec![StreamEvent::Block { index, block }])
    }

    fn message_delta(&mut self, payload: &Value) -> Result<Vec<StreamEvent>, Failure> {
        if let Some(reason) = payload.get("delta").and_then(|d| d.get("stop_reason")).and_then(Value::as_str) {
            self.stop_reason = Some(StopReason::parse(reason));
        }
        if let Some(usage) = payload.get("usage") {
            merge_usage(&mut self.usage, usage);
        }
        Ok(Vec::new())
    }

    /// `message_stop`, or the end of a body whose stop reason is known: open blocks (a
    /// `tool_use` cut by `max_tokens`) are flushed, then `Done`.
    fn complete(&mut self) -> Vec<StreamEvent> {
        let mut out = self.flush_open();
        if out.last().is_some_and(StreamEvent::is_terminal) {
            return out;
        }
        out.push(StreamEvent::Done {
            id: self.id.take(),
            model: self.model.take(),
            stop_reason: self.stop_reason.take(),
            usage: std::mem::take(&mut self.usage),
        });
        self.ended = true;
        out
    }

    fn flush_open(&mut self) -> Vec<StreamEvent> {
        let mut out = Vec::new();
        for (index, block) in std::mem::take(&mut self.open) {
            match complete_block(index, block) {
                Ok(block) => out.push(StreamEvent::Block { index, block }),
                Err(message) => {
                    self.ended = true;
                    out.push(StreamEvent::invalid_stream(message));
                    break;
                }
            }
        }
        out
    }

    fn api_error(&mut self, payload: &Value) -> Vec<StreamEvent> {
        self.ended = true;
        let error = payload.get("error").unwrap_or(payload);
        let error_type = error.get("type").and_then(Value::as_str).unwrap_or("api_error");
        let message = match error.get("message").and_then(Value::as_str) {
            Some(message) => message.to_string(),
            None => excerpt(&payload.to_string(), 500),
        };
        vec![StreamEvent::Failed(ModelError::new(None, error_type, message))]
    }
}

impl SseAssembler for AnthropicAssembler {
    fn on_event(&mut self, event_name: &str, data: &str) -> Vec<StreamEvent> {
        AnthropicAssembler::on_event(self, event_name, data)
    }

    fn finish(&mut self) -> Vec<StreamEvent> {
        AnthropicAssembler::finish(self)
    }

    fn content_bytes(&self) -> u64 {
        self.budget.bytes()
    }
}

/// Why an event ends the response: the stream is malformed, or it broke a cap.
enum Failure {
    Invalid(String),
    TooLarge(ModelError),
}

impl From<String> for Failure {
    fn from(message: String) -> Self {
        Failure::Invalid(message)
    }
}

impl From<&str> for Failure {
    fn from(message: &str) -> Self {
        Failure::Invalid(message.to_string())
    }
}

impl From<ModelError> for Failure {
    fn from(error: ModelError) -> Self {
        Failure::TooLarge(error)
    }
}

fn block_index(payload: &Value) -> Result<usize, String> {
    let kind = payload.get("type").and_then(Value::as_str).unwrap_or("event");
    payload
        .get("index")
        .and_then(Value::as_u64)
        .and_then(|i| usize::try_from(i).ok())
        .ok_or_else(|| format!("{kind} without a numeric `index`"))
}

fn append_str(fields: &mut Map<String, Value>, key: &str, text: &str) {
    match fields.get_mut(key) {
        Some(Value::String(existing)) => existing.push_str(text),
        _ => {
            fields.insert(key.into(), Value::String(text.to_string()));
        }
    }
}

/// Applies accumulated input JSON and types the block. Input that does not parse (a `tool_use`
/// cut by `max_tokens`) is kept as the raw string, for the tools layer to reject with a reason.
fn complete_block(index: usize, block: OpenBlock) -> Result<ContentBlock, String> {
    let OpenBlock { mut fields, json } = block;
    if !json.trim().is_empty() {
        let input = serde_json::from_str(&json).unwrap_or(Value::String(json));
        fields.insert("input".into(), input);
    } else if fields.get("type").and_then(Value::as_str) == Some("tool_use") && !fields.contains_key("input") {
        fields.insert("input".into(), Value::Object(Map::new()));
    }
    let kind = fields.get("type").and_then(Value::as_str).unwrap_or("(untyped)").to_string();
    serde_json::from_value(Value::Object(fields))
        .map_err(|err| format!("content block {index} (`{kind}`) is malformed: {err}"))
}

/// Folds a usage object in. Later reports win per field: `message_delta` carries the final
/// output count and, for server tools, the final input counts.
pub(crate) fn merge_usage(usage: &mut Usage, value: &Value) {
    let get = |name: &str| value.get(name).and_then(Value::as_u64);
    if let Some(n) = get("input_tokens") {
        usage.input_tokens = n;
    }
    if let Some(n) = get("output_tokens") {
        usage.output_tokens = n;
    }
    if let Some(n) = get("cache_creation_input_tokens") {
        usage.cache_creation_input_tokens = n;
    }
    if let Some(n) = get("cache_read_input_tokens") {
        usage.cache_read_input_tokens = n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// What the assembler makes of `events`, its `Started` left out (see
    /// `message_start_is_passed_on_as_sent`).
    fn feed(events: &[(&str, Value)]) -> Vec<StreamEvent> {
        feed_all(events).into_iter().filter(|e| !matches!(e, StreamEvent::Started { .. })).collect()
    }

    fn feed_all(events: &[(&str, Value)]) -> Vec<StreamEvent> {
        let mut assembler = AnthropicAssembler::new();
        let mut out = Vec::new();
        for (name, data) in events {
            out.extend(assembler.on_event(name, &data.to_string()));
        }
        out.extend(assembler.finish());
        out
    }

    /// The response's head is passed on first, its usage as the server wrote it (Claude Code
    /// prints it on `message_start`).
    #[test]
    fn message_start_is_passed_on_as_sent() {
        let out = feed_all(&[start(), ("message_stop", json!({"type": "message_stop"}))]);
        let usage = json!({"input_tokens": 10, "output_tokens": 1, "cache_read_input_tokens": 4});
        assert_eq!(out[0], StreamEvent::Started { id: Some("msg_1".into()), usage: Some(usage) });
        let bare = feed_all(&[("message_start", json!({"type": "message_start", "message": {}}))]);
        assert_eq!(bare[0], StreamEvent::Started { id: None, usage: None });
    }

    fn start() -> (&'static str, Value) {
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_1", "model": "m", "usage": {"input_tokens": 10, "output_tokens": 1, "cache_read_input_tokens": 4}}}),
        )
    }

    #[test]
    fn tool_use_without_arguments_gets_an_empty_object() {
        let out = feed(&[
            start(),
            (
                "content_block_start",
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t1", "name": "Now", "input": {}}}),
            ),
            (
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": ""}}),
            ),
            ("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
            (
                "message_delta",
                json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 7}}),
            ),
            ("message_stop", json!({"type": "message_stop"})),
        ]);
        assert_eq!(out[0], StreamEvent::Block { index: 0, block: ContentBlock::tool_use("t1", "Now", json!({})) });
        let usage = Usage { input_tokens: 10, output_tokens: 7, cache_read_input_tokens: 4, ..Usage::default() };
        assert_eq!(
            out[1],
            StreamEvent::Done {
                id: Some("msg_1".into()),
                model: Some("m".into()),
                stop_reason: Some(StopReason::ToolUse),
                usage
            }
        );
        assert_eq!(out.len(), 2);
    }

    #[test]
    fn a_body_cut_before_any_stop_reason_fails_after_flushing() {
        let out = feed(&[
            start(),
            (
                "content_block_start",
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            ),
            (
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "hi"}}),
            ),
        ]);
        assert_eq!(out[0], StreamEvent::TextDelta { index: 0, text: "hi".into() });
        assert_eq!(out[1], StreamEvent::Block { index: 0, block: ContentBlock::text("hi") });
        assert_eq!(
            out[2],
            StreamEvent::Failed(ModelError::new(None, "invalid_stream", "the stream ended before message_stop"))
        );
    }

    #[test]
    fn an_error_event_fails_with_the_api_error_type() {
        let out = feed(&[
            start(),
            ("error", json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})),
            ("message_stop", json!({"type": "message_stop"})),
        ]);
        assert_eq!(out, vec![StreamEvent::Failed(ModelError::new(None, "overloaded_error", "Overloaded"))]);
    }

    #[test]
    fn malformed_json_and_unknown_events() {
        let mut assembler = AnthropicAssembler::new();
        assert!(assembler.on_event("future_event", "not json").is_empty());
        assert!(assembler.on_event("ping", "{}").is_empty());
        let out = assembler.on_event("content_block_delta", "{\"type\": ");
        match &out[..] {
            [StreamEvent::Failed(e)] => {
                assert_eq!(e.error_type, "invalid_stream");
                assert!(e.message.contains("malformed JSON in the `content_block_delta` event"), "{}", e.message);
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(assembler.finish().is_empty());
    }

    #[test]
    fn unnamed_events_are_dispatched_by_payload_type() {
        let out = feed(&[
            ("message", json!({"type": "message_start", "message": {"id": "msg_2"}})),
            ("message", json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}})),
            ("message", json!({"type": "message_stop"})),
        ]);
        assert!(
            matches!(&out[..], [StreamEvent::Done { id: Some(id), stop_reason: Some(StopReason::EndTurn), .. }] if id == "msg_2")
        );
    }
}
