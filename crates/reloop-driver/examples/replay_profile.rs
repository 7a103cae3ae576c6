//! Profiling aid: `replay_profile record FILE TURNS` records a scripted session into FILE;
//! `replay_profile replay FILE N` replays its last session N times from memory, so a profiler
//! sees replay alone.

use std::sync::Arc;
use std::time::Instant;

use reloop_core::{Config, ContentBlock};
use reloop_driver::{RunConfig, Session};
use reloop_journal::Journal;
use reloop_model::ScriptedProvider;
use reloop_tools::{Tool, ToolContext, ToolOutput, ToolRegistry};
use serde_json::{json, Value};

/// A tool that answers at once, so the figures are the loop's own.
struct Instant0;

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
    fn call(&self, input: &Value, _: &ToolContext) -> ToolOutput {
        ToolOutput::ok(format!("ok {}", input["n"]))
    }
}

fn cassette(turns: usize) -> String {
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

fn tools() -> ToolRegistry {
    let mut registry = ToolRegistry::empty();
    registry.register(Arc::new(Instant0));
    registry
}

struct Figures {
    seconds: f64,
}

fn run_session(rt: &tokio::runtime::Runtime, turns: usize, journal: Option<Journal>) -> (Figures, Option<String>) {
    let provider = Arc::new(ScriptedProvider::from_json(&cassette(turns)).expect("bench cassette"));
    let session = Session::new(
        provider,
        tools(),
        journal,
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

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = std::path::PathBuf::from(&args[2]);
    let n: usize = args[3].parse().expect("a number");
    if args[1] == "record" {
        let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
        let (figures, _) = run_session(&rt, n, Some(Journal::create_or_open(&path).expect("journal")));
        println!("recorded {n} turns in {:.0} ms", figures.seconds * 1e3);
        return;
    }
    let journal = Journal::open_existing(&path).expect("journal");
    let id = journal.resolve("last").expect("session");
    let header = journal.header(&id).expect("header");
    let steps = journal.steps(&id).expect("steps");
    let start = Instant::now();
    for _ in 0..n {
        let report = reloop_driver::replay(&header, &steps);
        assert!(report.divergence.is_none());
    }
    let per = start.elapsed().as_secs_f64() / n as f64;
    println!("{} steps in {:.1} ms: {:.0} steps/s", steps.len(), per * 1e3, steps.len() as f64 / per);
}
