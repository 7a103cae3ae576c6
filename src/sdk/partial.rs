//! The `stream_event` lines of `--include-partial-messages`, in Claude Code's order (recorded
//! from 2.1.197 and 2.1.332, `crates/reloop-import/tests/recorded/*/partial_messages/`):
//!
//! `message_start` (the response's id and opening usage as the server sent them, from its
//! journaled `model_started` step), then per content block `content_block_start`, its deltas,
//! the block's own `assistant` line, `content_block_stop`; then `message_delta` (stop reason,
//! output tokens) and `message_stop`.
//!
//! Text deltas are printed as they stream (they are journaled, so a replay prints them too);
//! a block whose deltas the loop does not stream gets its whole delta just before its
//! `assistant` line: under a Claude Code profile a thinking block when it completes (its
//! journaled `model_block`), the others when the response's message arrives.

use std::collections::BTreeSet;

use reloop_core::ContentBlock;
use serde_json::{json, Value};

/// The partial-message state of the response in flight.
#[derive(Debug, Default)]
pub(super) struct Partial {
    /// `message_start` was printed.
    started: bool,
    /// The blocks whose `content_block_start` was printed (their text streamed).
    streamed: BTreeSet<usize>,
    /// The response's head as the server sent it, once it came ([`Partial::head`]).
    head: Head,
    /// The blocks whose lines were printed when they completed ([`Partial::printed_early`]).
    early: BTreeSet<usize>,
}

/// What the server said the response began with (`message_start`): its id and opening usage.
#[derive(Debug, Default)]
struct Head {
    id: Option<String>,
    usage: Option<Value>,
}

/// A response's head: what `message_start` says before the answer is known, with the id and
/// usage the server opened with (journaled from the response's start; none in older journals).
fn message_start(model: &str, id: Option<&str>, usage: Option<&Value>) -> Value {
    let mut message = serde_json::Map::new();
    if let Some(id) = id {
        message.insert("id".into(), json!(id));
    }
    message.insert("type".into(), json!("message"));
    message.insert("role".into(), json!("assistant"));
    message.insert("model".into(), json!(model));
    message.insert("content".into(), json!([]));
    message.insert("stop_reason".into(), Value::Null);
    message.insert("stop_sequence".into(), Value::Null);
    if let Some(usage) = usage {
        message.insert("usage".into(), usage.clone());
    }
    json!({"type": "message_start", "message": message})
}

impl Partial {
    /// The response in flight began with this id and usage (its `message_start`).
    pub(super) fn head(&mut self, id: Option<String>, usage: Option<Value>) {
        self.head = Head { id, usage };
    }

    /// The usage the response in flight opened with, once known.
    pub(super) fn head_usage(&self) -> Option<&Value> {
        self.head.usage.as_ref()
    }

    /// The id the response in flight opened with, once known.
    pub(super) fn head_id(&self) -> Option<&str> {
        self.head.id.as_deref()
    }

    /// Block `index`'s lines were printed when it completed; the response's message skips them.
    pub(super) fn printed_early(&mut self, index: usize) {
        self.early.insert(index);
    }

    /// Whether some block of the response was printed when it completed.
    pub(super) fn any_early(&self) -> bool {
        !self.early.is_empty()
    }

    /// Whether block `index`'s lines were printed when it completed.
    pub(super) fn was_printed(&self, index: usize) -> bool {
        self.early.contains(&index)
    }

    /// The events that go before a streamed text delta of block `index`, the delta included.
    pub(super) fn text_delta(&mut self, model: &str, index: usize, text: &str) -> Vec<Value> {
        let mut events = Vec::new();
        if !std::mem::replace(&mut self.started, true) {
            events.push(message_start(model, self.head.id.as_deref(), self.head.usage.as_ref()));
        }
        if self.streamed.insert(index) {
            events.push(json!({"type": "content_block_start", "index": index,
                "content_block": {"type": "text", "text": ""}}));
        }
        events.push(json!({"type": "content_block_delta", "index": index,
            "delta": {"type": "text_delta", "text": text}}));
        events
    }

    /// The events before block `index`'s `assistant` line: the response's start if nothing
    /// streamed, and the block's start and whole delta unless its text streamed.
    pub(super) fn before_block(&mut self, model: &str, id: &str, index: usize, block: &ContentBlock) -> Vec<Value> {
        let mut events = self.opening(model, id);
        if self.streamed.contains(&index) {
            return events;
        }
        let (start, delta) = match block {
            ContentBlock::Text(t) => {
                (json!({"type": "text", "text": ""}), vec![json!({"type": "text_delta", "text": t.text})])
            }
            ContentBlock::ToolUse(call) => (
                json!({"type": "tool_use", "id": call.id, "name": call.name, "input": {}}),
                vec![json!({"type": "input_json_delta", "partial_json": call.input.to_string()})],
            ),
            ContentBlock::Thinking(t) => {
                let mut deltas = vec![json!({"type": "thinking_delta", "thinking": t.thinking})];
                deltas.extend(t.signature.as_ref().map(|s| json!({"type": "signature_delta", "signature": s})));
                (json!({"type": "thinking", "thinking": "", "signature": ""}), deltas)
            }
            // Blocks the API sends whole (redacted thinking, server tools' blocks).
            other => (serde_json::to_value(other).unwrap_or(Value::Null), Vec::new()),
        };
        events.push(json!({"type": "content_block_start", "index": index, "content_block": start}));
        events.extend(delta.into_iter().map(|d| json!({"type": "content_block_delta", "index": index, "delta": d})));
        events
    }

    /// The event after block `index`'s `assistant` line.
    pub(super) fn after_block(index: usize) -> Value {
        json!({"type": "content_block_stop", "index": index})
    }

    /// The events that end the response (after its last block): the state is reset for the
    /// next one.
    pub(super) fn end(&mut self, model: &str, id: &str, stop_reason: Option<&str>, output_tokens: u64) -> Vec<Value> {
        let mut events = self.opening(model, id);
        events.push(json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null},
            "usage": {"output_tokens": output_tokens}}));
        events.push(json!({"type": "message_stop"}));
        *self = Partial::default();
        events
    }

    /// `message_start` when nothing of the response streamed yet.
    fn opening(&mut self, model: &str, id: &str) -> Vec<Value> {
        if std::mem::replace(&mut self.started, true) {
            Vec::new()
        } else {
            vec![message_start(model, Some(self.head.id.as_deref().unwrap_or(id)), self.head.usage.as_ref())]
        }
    }

    /// A response that ended without a message (an error, an interruption): nothing of it
    /// carries over to the next.
    pub(super) fn reset(&mut self) {
        *self = Partial::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(events: &[Value]) -> Vec<String> {
        events.iter().map(|e| e["type"].as_str().unwrap_or_default().to_string()).collect()
    }

    #[test]
    fn streamed_text_then_a_whole_tool_call_in_claude_code_s_order() {
        let mut p = Partial::default();
        let mut all = p.text_delta("m", 0, "Let me ");
        all.extend(p.text_delta("m", 0, "read."));
        let text = ContentBlock::text("Let me read.");
        let call = ContentBlock::tool_use("toolu_1", "Read", json!({"file_path": "/a"}));
        all.extend(p.before_block("m", "msg_1", 0, &text));
        all.push(json!({"type": "ASSISTANT"}));
        all.push(Partial::after_block(0));
        all.extend(p.before_block("m", "msg_1", 1, &call));
        all.push(json!({"type": "ASSISTANT"}));
        all.push(Partial::after_block(1));
        all.extend(p.end("m", "msg_1", Some("tool_use"), 25));
        assert_eq!(
            kinds(&all),
            [
                "message_start",
                "content_block_start",
                "content_block_delta",
                "content_block_delta",
                "ASSISTANT",
                "content_block_stop",
                "content_block_start",
                "content_block_delta",
                "ASSISTANT",
                "content_block_stop",
                "message_delta",
                "message_stop"
            ]
        );
        assert_eq!(all[6]["content_block"], json!({"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}}));
        assert_eq!(all[7]["delta"], json!({"type": "input_json_delta", "partial_json": "{\"file_path\":\"/a\"}"}));
        assert_eq!(all[10]["delta"], json!({"stop_reason": "tool_use", "stop_sequence": null}));
        assert_eq!(all[10]["usage"], json!({"output_tokens": 25}));
    }

    #[test]
    fn a_response_that_streamed_nothing_starts_with_its_id_and_thinking_gets_its_signature() {
        let mut p = Partial::default();
        let thinking: ContentBlock =
            serde_json::from_value(json!({"type": "thinking", "thinking": "hmm", "signature": "sig"})).unwrap();
        let events = p.before_block("m", "msg_9", 0, &thinking);
        assert_eq!(events[0]["message"]["id"], "msg_9");
        assert_eq!(
            kinds(&events),
            ["message_start", "content_block_start", "content_block_delta", "content_block_delta"]
        );
        assert_eq!(events[3]["delta"], json!({"type": "signature_delta", "signature": "sig"}));
        let end = p.end("m", "msg_9", Some("end_turn"), 3);
        assert_eq!(kinds(&end), ["message_delta", "message_stop"]);
        // The next response opens again.
        assert_eq!(kinds(&p.text_delta("m", 0, "x"))[0], "message_start");
    }
}
