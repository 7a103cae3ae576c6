//! Assembles an OpenAI chat-completions stream (`chat.completion.chunk`s) into the same
//! completed blocks the Anthropic path produces.
//!
//! The format never says when a block is complete, so blocks are emitted when the response is:
//! at `data: [DONE]`, or at the end of a body that carried a `finish_reason` (several
//! compatible servers omit `[DONE]`). Order: thinking and text in order of first appearance,
//! then tool calls by their stream index.

use std::collections::BTreeMap;

use reloop_core::Thinking;
use reloop_core::{ContentBlock, ModelError, StopReason, Usage};
use serde_json::{Map, Value};

use crate::limits::{ContentBudget, ResponseLimits};
use crate::provider::StreamEvent;
use crate::sse::{excerpt, sse_events_from_bytes, SseAssembler};

/// Parses a whole OpenAI-compatible SSE body into stream events.
pub fn parse_openai_sse(body: &[u8]) -> Vec<StreamEvent> {
    sse_events_from_bytes(body, OpenAiAssembler::new())
}

#[derive(Debug, Default)]
struct ToolCall {
    id: String,
    name: String,
    arguments: String,
}

/// The OpenAI stream state machine: one SSE event in, zero or more [`StreamEvent`]s out.
#[derive(Debug, Default)]
pub struct OpenAiAssembler {
    id: Option<String>,
    model: Option<String>,
    /// Reasoning and text, each with the block index it got when it first appeared.
    thinking: Option<(usize, String)>,
    text: Option<(usize, String)>,
    tool_calls: BTreeMap<u64, ToolCall>,
    finish_reason: Option<StopReason>,
    usage: Usage,
    ended: bool,
    /// Content taken in, against the response's caps.
    budget: ContentBudget,
}

/// What a new tool call entry is charged, so a stream of empty calls with fresh indices
/// cannot grow the map for free.
const TOOL_CALL_ENTRY_BYTES: usize = 64;

impl OpenAiAssembler {
    /// An assembler with only the one-event cap (a body already in memory).
    pub fn new() -> Self {
        Self::default()
    }

    /// An assembler that fails the response with `response_too_large` past `limits`.
    pub fn with_limits(limits: ResponseLimits) -> Self {
        OpenAiAssembler { budget: ContentBudget::new(limits), ..Self::default() }
    }

    /// One SSE event in. After a `Done` or `Failed` the assembler ignores everything.
    pub fn on_event(&mut self, event_name: &str, data: &str) -> Vec<StreamEvent> {
        if self.ended {
            return Vec::new();
        }
        if event_name == "error" {
            // Groq sends `event: error` mid-stream; its data may or may not be JSON.
            let payload = serde_json::from_str::<Value>(data).unwrap_or_else(|_| Value::String(data.to_string()));
            return self.fail(stream_error(&payload));
        }
        if event_name != "message" {
            return Vec::new();
        }
        if data.trim() == "[DONE]" {
            return self.complete();
        }
        let chunk: Value = match serde_json::from_str(data) {
            Ok(chunk) => chunk,
            Err(err) => {
                return self.fail(ModelError::new(
                    None,
                    "invalid_stream",
                    format!("malformed JSON in a chat completion chunk ({err}): {}", excerpt(data, 200)),
                ))
            }
        };
        if chunk.get("error").is_some_and(|e| !e.is_null()) {
            return self.fail(stream_error(&chunk));
        }
        if let Some(kind) = chunk.get("type").and_then(Value::as_str).filter(|k| k.starts_with("response.")) {
            return self.fail(ModelError::new(
                None,
                "invalid_stream",
                format!(
                    "this is an OpenAI Responses API stream (`{kind}` event), not chat completions: \
                     point the OpenAI-compatible provider at a /v1/chat/completions server"
                ),
            ));
        }
        self.on_chunk(&chunk).unwrap_or_else(|error| self.fail(error))
    }

    /// The body ended: `Done` if a `finish_reason` came, else `Failed(invalid_stream)`.
    pub fn finish(&mut self) -> Vec<StreamEvent> {
        if self.ended {
            return Vec::new();
        }
        if self.finish_reason.is_some() {
            return self.complete();
        }
        self.fail(ModelError::new(None, "invalid_stream", "the stream ended before a finish_reason or [DONE]"))
    }

    fn fail(&mut self, error: ModelError) -> Vec<StreamEvent> {
        self.ended = true;
        vec![StreamEvent::Failed(error)]
    }

    fn next_index(&self) -> usize {
        usize::from(self.thinking.is_some()) + usize::from(self.text.is_some())
    }

    fn on_chunk(&mut self, chunk: &Value) -> Result<Vec<StreamEvent>, ModelError> {
        if self.id.is_none() {
            self.id = chunk.get("id").and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string);
        }
        if self.model.is_none() {
            self.model = chunk.get("model").and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string);
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            let get = |name: &str| usage.get(name).and_then(Value::as_u64);
            if let Some(n) = get("prompt_tokens") {
                self.usage.input_tokens = n;
            }
            if let Some(n) = get("completion_tokens") {
                self.usage.output_tokens = n;
            }
        }
        let mut out = Vec::new();
        let Some(choice) = chunk.get("choices").and_then(Value::as_array).and_then(|c| c.first()) else {
            return Ok(out);
        };
        if let Some(delta) = choice.get("delta") {
            let reasoning = ["reasoning_content", "reasoning"]
                .iter()
                .find_map(|key| delta.get(*key).and_then(Value::as_str))
                .filter(|r| !r.is_empty());
            if let Some(reasoning) = reasoning {
                self.budget.charge(reasoning.len())?;
                let index = self.next_index();
                self.thinking.get_or_insert_with(|| (index, String::new())).1.push_str(reasoning);
            }
            if let Some(content) = delta.get("content").and_then(Value::as_str).filter(|c| !c.is_empty()) {
                self.budget.charge(content.len())?;
                let index = self.next_index();
                let text = self.text.get_or_insert_with(|| (index, String::new()));
                text.1.push_str(content);
                out.push(StreamEvent::TextDelta { index: text.0, text: content.to_string() });
            }
            if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
                for (position, call) in calls.iter().enumerate() {
                    self.tool_call_delta(position, call)?;
                }
            }
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish_reason = Some(map_finish_reason(reason));
        }
        Ok(out)
    }

    fn tool_call_delta(&mut self, position: usize, call: &Value) -> Result<(), ModelError> {
        // Some servers omit `index` when they send whole calls; their position stands in.
        let key = call.get("index").and_then(Value::as_u64).unwrap_or(position as u64);
        let text = |name: &str| call.get("function").and_then(|f| f.get(name)).and_then(Value::as_str);
        let new_entry = if self.tool_calls.contains_key(&key) { 0 } else { TOOL_CALL_ENTRY_BYTES };
        let id = call.get("id").and_then(Value::as_str).map_or(0, str::len);
        self.budget
            .charge(new_entry + id + text("name").map_or(0, str::len) + text("arguments").map_or(0, str::len))?;
        let entry = self.tool_calls.entry(key).or_default();
        // Qwen repeats `"id": ""` on later deltas: only a non-empty first value counts.
        if let Some(id) = call.get("id").and_then(Value::as_str).filter(|s| !s.is_empty()) {
            if entry.id.is_empty() {
                entry.id = id.to_string();
            }
        }
        if let Some(function) = call.get("function") {
            if let Some(name) = function.get("name").and_then(Value::as_str).filter(|s| !s.is_empty()) {
                if entry.name.is_empty() {
                    entry.name = name.to_string();
                }
            }
            if let Some(arguments) = function.get("arguments").and_then(Value::as_str) {
                entry.arguments.push_str(arguments);
            }
        }
        Ok(())
    }

    fn complete(&mut self) -> Vec<StreamEvent> {
        self.ended = true;
        let mut blocks: Vec<(usize, ContentBlock)> = Vec::new();
        if let Some((index, thinking)) = self.thinking.take() {
            blocks.push((
                index,
                ContentBlock::Thinking(Thinking { thinking, signature: None, extra: Default::default() }),
            ));
        }
        if let Some((index, text)) = self.text.take() {
            blocks.push((index, ContentBlock::text(text)));
        }
        blocks.sort_by_key(|(index, _)| *index);
        let mut index = blocks.len();
        for (key, call) in std::mem::take(&mut self.tool_calls) {
            if call.name.is_empty() && call.arguments.is_empty() {
                continue;
            }
            let input = if call.arguments.trim().is_empty() {
                Value::Object(Map::new())
            } else {
                serde_json::from_str(&call.arguments).unwrap_or(Value::String(call.arguments))
            };
            // A server that sends no call id still needs one to pair the result with.
            let id = if call.id.is_empty() { format!("call_{key}") } else { call.id };
            blocks.push((index, ContentBlock::tool_use(id, call.name, input)));
            index += 1;
        }
        let mut out: Vec<StreamEvent> =
            blocks.into_iter().map(|(index, block)| StreamEvent::Block { index, block }).collect();
        out.push(StreamEvent::Done {
            id: self.id.take(),
            model: self.model.take(),
            stop_reason: self.finish_reason.take(),
            usage: std::mem::take(&mut self.usage),
        });
        out
    }
}

impl SseAssembler for OpenAiAssembler {
    fn on_event(&mut self, event_name: &str, data: &str) -> Vec<StreamEvent> {
        OpenAiAssembler::on_event(self, event_name, data)
    }

    fn finish(&mut self) -> Vec<StreamEvent> {
        OpenAiAssembler::finish(self)
    }

    fn content_bytes(&self) -> u64 {
        self.budget.bytes()
    }
}

fn map_finish_reason(reason: &str) -> StopReason {
    match reason {
        "stop" => StopReason::EndTurn,
        "tool_calls" | "function_call" => StopReason::ToolUse,
        "length" => StopReason::MaxTokens,
        "content_filter" => StopReason::Refusal,
        other => StopReason::Other(other.to_string()),
    }
}

/// An error reported inside a 200 stream (`{"error": {...}}` chunk or `event: error`).
fn stream_error(payload: &Value) -> ModelError {
    let error = payload.get("error").filter(|e| e.is_object()).unwrap_or(payload);
    let error_type =
        ["type", "code"].iter().find_map(|key| error.get(*key).and_then(Value::as_str)).unwrap_or("api_error");
    let message = match error.get("message").and_then(Value::as_str) {
        Some(message) => message.to_string(),
        None => match payload {
            Value::String(text) => excerpt(text, 500),
            other => excerpt(&other.to_string(), 500),
        },
    };
    ModelError::new(None, error_type, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn feed(chunks: &[Value]) -> Vec<StreamEvent> {
        let mut assembler = OpenAiAssembler::new();
        let mut out = Vec::new();
        for chunk in chunks {
            out.extend(assembler.on_event("message", &chunk.to_string()));
        }
        out.extend(assembler.on_event("message", "[DONE]"));
        out
    }

    fn delta(delta: Value, finish: Value) -> Value {
        json!({"id": "c1", "model": "m", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    }

    #[test]
    fn parallel_calls_are_assembled_by_index() {
        let out = feed(&[
            delta(json!({"content": "ok"}), Value::Null),
            delta(
                json!({"tool_calls": [{"index": 1, "id": "b", "function": {"name": "mul", "arguments": ""}}]}),
                Value::Null,
            ),
            delta(
                json!({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "add", "arguments": "{\"x\""}}]}),
                Value::Null,
            ),
            delta(json!({"tool_calls": [{"index": 1, "id": "", "function": {"arguments": "{}"}}]}), Value::Null),
            delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": ": 1}"}}]}), json!("tool_calls")),
            json!({"id": "c1", "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 3}}),
        ]);
        assert_eq!(out[0], StreamEvent::TextDelta { index: 0, text: "ok".into() });
        assert_eq!(out[1], StreamEvent::Block { index: 0, block: ContentBlock::text("ok") });
        assert_eq!(out[2], StreamEvent::Block { index: 1, block: ContentBlock::tool_use("a", "add", json!({"x": 1})) });
        assert_eq!(out[3], StreamEvent::Block { index: 2, block: ContentBlock::tool_use("b", "mul", json!({})) });
        let usage = Usage { input_tokens: 5, output_tokens: 3, ..Usage::default() };
        assert_eq!(
            out[4],
            StreamEvent::Done {
                id: Some("c1".into()),
                model: Some("m".into()),
                stop_reason: Some(StopReason::ToolUse),
                usage
            }
        );
    }

    #[test]
    fn an_error_chunk_fails_and_nothing_follows() {
        let out = feed(&[
            delta(json!({"content": "x"}), json!("length")),
            json!({"error": {"code": 400, "message": "Token limit reached"}}),
        ]);
        assert_eq!(out.len(), 2);
        assert_eq!(out[1], StreamEvent::Failed(ModelError::new(None, "api_error", "Token limit reached")));
    }

    #[test]
    fn a_body_without_finish_reason_fails() {
        let mut assembler = OpenAiAssembler::new();
        assembler.on_event("message", &delta(json!({"content": "x"}), Value::Null).to_string());
        let out = assembler.finish();
        assert!(matches!(&out[..], [StreamEvent::Failed(e)] if e.error_type == "invalid_stream"));
    }
}
