//! What the loop benches share: an instant tool, a scripted cassette of N turns, and a session
//! run on it. Included by `loop_overhead`, `replay`, `deltas` and the `replay_profile` example,
//! each of which uses part of it.
#![allow(dead_code)]

use std::sync::Arc;
use std::time::Instant;

use reloop_core::{Config, ContentBlock};
use reloop_driver::{RunConfig, Session};
use reloop_journal::Journal;
use reloop_model::ScriptedProvider;
use reloop_tools::{Tool, ToolContext, ToolOutput, ToolRegistry};
use serde_json::{json, Value};

/// The allocator the `reloop` binary uses, so the figures are the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A tool that answers at once, so the figures are the loop's own.
pub struct Instant0;

impl Tool for Instant0 {
    fn name(&self) -> &str {
        "Noop"
    }
    fn description(&self) -> &str {
        "Answers at once."
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object", "properties": {"n": {"type": "integer"}}, "additionalProperties": false})
    }
    fn is_read_only(&self, _: &Value) -> bool {
        true
    }
    fn is_concurrency_safe(&self, _: &Value) -> bool {
        true
    }
    fn is_instant(&self, _: &Value) -> bool {
        true
    }
    fn call(&self, input: &Value, _: &ToolContext) -> ToolOutput {
        ToolOutput::ok(format!("ok {}", input["n"]))
    }
}

/// Tokens a response reports to make the next request cross the default auto-compact
/// threshold (167,000 of a 200,000-token window).
pub const PAST_THRESHOLD: usize = 170_000;

/// A session of `turns` tool turns (the last one answers without a tool), whose usage stays
/// small: it never compacts, so its whole history stays live.
pub fn cassette(turns: usize) -> String {
    cassette_compacting(turns, None)
}

/// Like [`cassette`], but with `every` set, every `every`-th response reports
/// [`PAST_THRESHOLD`] tokens, so the next request compacts first (the next response is its
/// summary): as a real session does when its context fills, and what bounds its history.
pub fn cassette_compacting(turns: usize, every: Option<usize>) -> String {
    let mut responses: Vec<Value> = Vec::with_capacity(turns + turns / every.unwrap_or(turns).max(1));
    for i in 1..turns {
        let fills = every.is_some_and(|every| i % every == 0);
        let input_tokens = if fills { PAST_THRESHOLD } else { 1000 + i };
        responses.push(json!({"message": {
            "id": format!("msg_{i}"), "type": "message", "role": "assistant", "model": "bench",
            "content": [
                {"type": "text", "text": "Checking the next file."},
                {"type": "tool_use", "id": format!("toolu_{i}"), "name": "Noop", "input": {"n": i}}
            ],
            "stop_reason": "tool_use", "usage": {"input_tokens": input_tokens, "output_tokens": 20}
        }}));
        if fills {
            responses.push(json!({"message": {
                "id": format!("msg_summary_{i}"), "type": "message", "role": "assistant", "model": "bench",
                "content": [{"type": "text", "text": format!("<summary>Checked {i} files; all answered ok.</summary>")}],
                "stop_reason": "end_turn", "usage": {"input_tokens": PAST_THRESHOLD, "output_tokens": 40}
            }}));
        }
    }
    responses.push(json!({"message": {
        "id": "msg_last", "type": "message", "role": "assistant", "model": "bench",
        "content": [{"type": "text", "text": "Done."}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 5000, "output_tokens": 2}
    }}));
    json!({ "responses": responses }).to_string()
}

/// A response as the Anthropic API streams it (SSE): an optional thinking block of `thinking`
/// bytes, a text block in `deltas` text deltas, then (unless `last`) a call to the instant tool.
pub fn sse(turn: usize, deltas: usize, last: bool, thinking: usize) -> String {
    let event = |name: &str, data: Value| format!("event: {name}\ndata: {data}\n\n");
    let mut body = event(
        "message_start",
        json!({"type": "message_start", "message": {"id": format!("msg_{turn}"), "type": "message",
            "role": "assistant", "model": "bench", "content": [], "stop_reason": null,
            "usage": {"input_tokens": 10, "output_tokens": 1}}}),
    );
    let mut index = 0;
    if thinking > 0 {
        body.push_str(&event(
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
        ));
        let text = "Let me think about the \"next\" step.\n".repeat(thinking / 36 + 1);
        body.push_str(&event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": &text[..thinking]}}),
        ));
        body.push_str(&event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "c2lnbmF0dXJl"}}),
        ));
        body.push_str(&event("content_block_stop", json!({"type": "content_block_stop", "index": 0})));
        index = 1;
    }
    body.push_str(&event(
        "content_block_start",
        json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
    ));
    for i in 0..deltas {
        body.push_str(&event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": format!("word{i} ")}}),
        ));
    }
    body.push_str(&event("content_block_stop", json!({"type": "content_block_stop", "index": index})));
    if !last {
        body.push_str(&event(
            "content_block_start",
            json!({"type": "content_block_start", "index": index + 1, "content_block":
                {"type": "tool_use", "id": format!("toolu_{turn}"), "name": "Noop", "input": {}}}),
        ));
        body.push_str(&event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": index + 1, "delta": {"type": "input_json_delta", "partial_json": "{}"}}),
        ));
        body.push_str(&event("content_block_stop", json!({"type": "content_block_stop", "index": index + 1})));
    }
    let stop = if last { "end_turn" } else { "tool_use" };
    body.push_str(&event(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": deltas}}),
    ));
    body.push_str(&event("message_stop", json!({"type": "message_stop"})));
    body
}

/// A session of `turns` turns, each response streamed in `deltas` text deltas before its tool
/// call (the last one text only), as Claude streams its answers.
pub fn cassette_streamed(turns: usize, deltas: usize) -> String {
    let responses: Vec<Value> = (1..=turns).map(|t| json!({"sse": sse(t, deltas, t == turns, 0)})).collect();
    json!({ "responses": responses }).to_string()
}

pub fn tools() -> ToolRegistry {
    let mut registry = ToolRegistry::empty();
    registry.register(Arc::new(Instant0));
    registry
}

pub struct Figures {
    /// Wall time of the run.
    pub seconds: f64,
}

pub fn run_session(rt: &tokio::runtime::Runtime, turns: usize, journal: Option<Journal>) -> (Figures, Option<String>) {
    run_session_compacting(rt, turns, None, journal)
}

/// A session of `turns` turns on `cassette`, with the bench's tools.
pub fn run_cassette(
    rt: &tokio::runtime::Runtime,
    turns: usize,
    cassette: &str,
    journal: Option<Journal>,
) -> (Figures, Option<String>) {
    let provider = Arc::new(ScriptedProvider::from_json(cassette).expect("bench cassette"));
    let session = Session::new(
        provider,
        tools(),
        journal.map(Into::into),
        Config::default(),
        RunConfig::new("scripted", "bench", std::env::temp_dir()),
    );
    let start = Instant::now();
    let result = rt.block_on(async move {
        let handle = session.start(vec![ContentBlock::text("go")]).expect("start");
        handle.finish().await.expect("run")
    });
    let seconds = start.elapsed().as_secs_f64();
    assert_eq!(result.num_turns as usize, turns, "the bench session must run every turn");
    (Figures { seconds }, Some(result.session_id))
}

/// [`run_session`] on [`cassette_compacting`].
pub fn run_session_compacting(
    rt: &tokio::runtime::Runtime,
    turns: usize,
    every: Option<usize>,
    journal: Option<Journal>,
) -> (Figures, Option<String>) {
    run_cassette(rt, turns, &cassette_compacting(turns, every), journal)
}
