//! Where the partial-message events ([`crate::sdk::partial`]) go among the stream's lines.

use reloop_core::ContentBlock;
use serde_json::Value;

use super::SdkStream;
use crate::sdk::partial::Partial;

impl SdkStream {
    /// Prints `stream_event` lines.
    pub(super) fn stream_events(&mut self, events: Vec<Value>) {
        for event in events {
            self.stream_event(event);
        }
    }

    /// With partial messages, the events before block `index`'s `assistant` line; a thinking
    /// block's estimate goes after its start (Claude Code's order), or alone without them.
    pub(super) fn partial_before(&mut self, model: &str, id: &str, index: usize, block: &ContentBlock) {
        let estimate = match block {
            ContentBlock::Thinking(t) => self.thinking_estimate(&t.thinking),
            _ => None,
        };
        if !self.partial {
            if let Some(fields) = estimate {
                self.system_line("thinking_tokens", fields);
            }
            return;
        }
        let mut events = self.streaming.before_block(model, id, index, block).into_iter();
        if let Some(fields) = estimate {
            let is_start = |e: &Value| e["type"] == "content_block_start" && e["index"] == index;
            for event in events.by_ref() {
                let started = is_start(&event);
                self.stream_event(event);
                if started {
                    break;
                }
            }
            self.system_line("thinking_tokens", fields);
        }
        self.stream_events(events.collect());
    }

    /// Claude Code's `system/thinking_tokens` line for a thinking block of the response being
    /// printed (both versions, `thinking`, `partial_messages/thinking_env`): its estimate of
    /// the response's thinking so far, a token for every 4 UTF-16 units rounded, and what this
    /// block added. `None` under reloop's own profile.
    fn thinking_estimate(&mut self, thinking: &str) -> Option<Value> {
        self.profile.profile().claude_code_version?;
        let tokens = |units: u64| (units + 2) / 4;
        let before = tokens(self.thinking_units);
        self.thinking_units += thinking.encode_utf16().count() as u64;
        let estimated = tokens(self.thinking_units);
        let delta = estimated - before;
        Some(serde_json::json!({"estimated_tokens": estimated, "estimated_tokens_delta": delta}))
    }

    /// A thinking block of the response in flight completed. With partial messages, under a
    /// Claude Code profile, its lines go out now, before the next block streams, as both
    /// versions print them (`partial_messages/thinking_env`), with the id and usage the response
    /// opened with; the response's message then skips them. Without that head (an older
    /// journal) or under reloop's own profile, the message prints it, as every other block.
    pub(super) fn thinking_done(&mut self, index: usize, block: &ContentBlock) {
        let claude_code = self.profile.profile().claude_code_version.is_some();
        let Some(id) = self.streaming.head_id().filter(|_| self.partial && claude_code).map(str::to_string) else {
            return;
        };
        if !self.streaming.any_early() {
            self.thinking_units = 0;
        }
        let model = crate::models::api_id(&self.model).to_string();
        let usage = self.block_usage();
        self.partial_before(&model, &id, index, block);
        self.block_line(&id, &model, &usage, block);
        self.partial_after(index);
        self.streaming.printed_early(index);
    }

    /// The usage a block's `assistant` line carries: under a Claude Code profile the one the
    /// response opened with (`message_start`'s, as sent), as both versions print each block as
    /// it completes; reloop's own, the response's final count.
    pub(super) fn block_usage(&self) -> Value {
        let claude_code = self.profile.profile().claude_code_version.is_some();
        let head = self.streaming.head_usage().filter(|_| claude_code).cloned();
        head.unwrap_or_else(|| super::usage_json(&self.response_usage))
    }

    /// One content block's `assistant` line, with the response's id, model and usage.
    pub(super) fn block_line(&mut self, id: &str, model: &str, usage: &Value, block: &ContentBlock) {
        let claude_code = self.profile.profile().claude_code_version.is_some();
        let block = if claude_code { crate::sdk::usage::shown_block(block) } else { serde_json::json!(block) };
        let body = serde_json::json!({
            "id": id, "type": "message", "role": "assistant", "model": model,
            "content": [block], "stop_reason": null, "stop_sequence": null,
            "usage": usage,
        });
        let mut line = serde_json::Map::new();
        line.insert("type".into(), serde_json::json!("assistant"));
        line.insert("message".into(), body);
        // The answer that replaces a retracted one says so (2.1.332).
        let tail = self.supersedes.take().map(|uuid| ("supersedes", serde_json::json!([uuid]))).into_iter().collect();
        self.emit_with_tail(line, true, tail);
    }

    /// With partial messages, the block's `content_block_stop` after its `assistant` line.
    pub(super) fn partial_after(&mut self, index: usize) {
        if self.partial {
            self.stream_event(Partial::after_block(index));
        }
    }

    /// With partial messages, the events that end the response; either way, nothing of the
    /// response (its head) carries over to the next.
    pub(super) fn partial_end(&mut self, model: &str, id: &str) {
        if self.partial {
            let (stop, tokens) = (self.stop_reason.clone(), self.response_usage.output_tokens);
            let events = self.streaming.end(model, id, stop.as_deref(), tokens);
            self.stream_events(events);
        } else {
            self.streaming.reset();
        }
    }
}
