//! What the journal adds to a response streamed as many text deltas: the same scripted response
//! (one SSE body of N `text_delta` events) run with no journal, an in-memory journal and an
//! on-disk journal. With group commit the deltas share one transaction, so the on-disk cost over
//! the in-memory one is a few commits, not one per delta. Prints figures; asserts nothing.
//!
//! `cargo bench -p reloop-driver --bench deltas`

use std::sync::Arc;
use std::time::Instant;

use reloop_core::{Config, ContentBlock};
use reloop_driver::{RunConfig, Session};
use reloop_journal::Journal;
use reloop_model::ScriptedProvider;
use reloop_tools::ToolRegistry;
use serde_json::json;

fn sse(deltas: usize) -> String {
    let event = |name: &str, data: serde_json::Value| format!("event: {name}\ndata: {data}\n\n");
    let mut body = event(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
            "model": "bench", "content": [], "stop_reason": null, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
    );
    body.push_str(&event(
        "content_block_start",
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
    ));
    for i in 0..deltas {
        body.push_str(&event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": format!("word{i} ")}}),
        ));
    }
    body.push_str(&event("content_block_stop", json!({"type": "content_block_stop", "index": 0})));
    body.push_str(&event(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": deltas}}),
    ));
    body.push_str(&event("message_stop", json!({"type": "message_stop"})));
    body
}

fn run(rt: &tokio::runtime::Runtime, deltas: usize, journal: Option<Journal>) -> f64 {
    let cassette = json!({"responses": [{"sse": sse(deltas)}]}).to_string();
    let provider = Arc::new(ScriptedProvider::from_json(&cassette).expect("bench cassette"));
    let session = Session::new(
        provider,
        ToolRegistry::empty(),
        journal,
        Config::default(),
        RunConfig::new("scripted", "bench", std::env::temp_dir()),
    );
    let start = Instant::now();
    let result = rt.block_on(async move {
        let handle = session.start(vec![ContentBlock::text("go")]).expect("start");
        handle.finish().await.expect("run")
    });
    assert!(!result.is_error, "the bench response must complete: {}", result.result);
    start.elapsed().as_secs_f64()
}

/// The median of `runs` runs of `f`.
fn median(runs: usize, mut f: impl FnMut() -> f64) -> f64 {
    let mut times: Vec<f64> = (0..runs).map(|_| f()).collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    let _ = run(&rt, 50, None);
    println!("journal cost of one streamed response (median of 9 runs)\n");
    println!(
        "{:>7}  {:>12}  {:>12}  {:>12}  {:>16}  {:>16}",
        "deltas", "no journal", "in memory", "on disk", "disk - memory", "of it, deltas"
    );
    let mut fixed = None;
    for deltas in [1usize, 100, 500, 2000] {
        let none = median(9, || run(&rt, deltas, None));
        let memory = median(9, || run(&rt, deltas, Some(Journal::in_memory().expect("journal"))));
        // One journal file, as a user's `.reloop/journal.db`: each run is a new session in it.
        let path = dir.path().join(format!("d{deltas}.db"));
        drop(Journal::create_or_open(&path).expect("journal"));
        let disk = median(9, || run(&rt, deltas, Some(Journal::open_existing(&path).expect("journal"))));
        // What a one-delta response costs on disk beyond memory is the session's own (its header,
        // the writer's lock row, the commit of the first and last steps, closing the file); the
        // rest is what the deltas add.
        let over = disk - memory;
        let base = *fixed.get_or_insert(over);
        println!(
            "{:>7}  {:>9.2} ms  {:>9.2} ms  {:>9.2} ms  {:>13.2} ms  {:>13.2} ms",
            deltas,
            none * 1e3,
            memory * 1e3,
            disk * 1e3,
            over * 1e3,
            (over - base) * 1e3
        );
    }
    println!("\nbar: 500 deltas add <= 1 ms of journal time on disk over the in-memory journal");
}
