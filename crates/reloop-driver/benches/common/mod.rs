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

pub fn cassette(turns: usize) -> String {
    let mut responses: Vec<Value> = (1..turns)
        .map(|i| {
            json!({"message": {
                "id": format!("msg_{i}"), "type": "message", "role": "assistant", "model": "bench",
                "content": [
                    {"type": "text", "text": "Checking the next file."},
                    {"type": "tool_use", "id": format!("toolu_{i}"), "name": "Noop", "input": {"n": i}}
                ],
                "stop_reason": "tool_use", "usage": {"input_tokens": 1000 + i, "output_tokens": 20}
            }})
        })
        .collect();
    responses.push(json!({"message": {
        "id": "msg_last", "type": "message", "role": "assistant", "model": "bench",
        "content": [{"type": "text", "text": "Done."}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 5000, "output_tokens": 2}
    }}));
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
    let provider = Arc::new(ScriptedProvider::from_json(&cassette(turns)).expect("bench cassette"));
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
