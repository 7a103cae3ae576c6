//! Loop overhead per turn, replay time, journal bytes per turn and peak RSS for scripted
//! sessions with an instant model and instant tools. Prints figures; asserts nothing.
//!
//! `cargo bench -p reloop-driver --bench loop_overhead`

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

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM:")).map(str::to_owned))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|n| n.parse().ok()))
        .unwrap_or(0)
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    println!("reloop loop overhead (scripted model, instant tools; per turn = wall time / turns)\n");
    println!(
        "{:>6}  {:>14}  {:>14}  {:>7}  {:>12}  {:>12}  {:>14}",
        "turns", "journal off", "journal on", "on/off", "replay", "replay/turn", "journal B/turn"
    );
    // Warm up the runtime and the allocator.
    let _ = run_session(&rt, 50, None);
    for turns in [250usize, 500, 1000] {
        let (off, _) = run_session(&rt, turns, None);
        let path = dir.path().join(format!("bench-{turns}.db"));
        let journal = Journal::create_or_open(&path).expect("journal");
        let (on, id) = run_session(&rt, turns, Some(journal));
        let id = id.expect("session id");

        let journal = Journal::open_existing(&path).expect("reopen");
        let header = journal.header(&id).expect("header");
        let read_start = Instant::now();
        let steps = journal.steps(&id).expect("steps");
        let read = read_start.elapsed().as_secs_f64();
        let replay_start = Instant::now();
        let report = reloop_driver::replay(&header, &steps);
        let replay = replay_start.elapsed().as_secs_f64();
        assert!(report.divergence.is_none(), "bench session must replay identical");
        let bytes = journal.size_bytes().expect("size");

        println!(
            "{:>6}  {:>11.3} ms  {:>11.3} ms  {:>6.2}x  {:>9.1} ms  {:>9.3} ms  {:>14}",
            turns,
            off.seconds * 1e3 / turns as f64,
            on.seconds * 1e3 / turns as f64,
            on.seconds / off.seconds,
            (read + replay) * 1e3,
            (read + replay) * 1e3 / turns as f64,
            bytes / turns as u64,
        );
    }
    println!("\npeak RSS: {} KiB", peak_rss_kib());
    println!("bars: journal on <= 0.25 ms/turn and <= 1.3x off; replay and bytes/turn flat as sessions grow");
}
