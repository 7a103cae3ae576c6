//! What the journal adds to responses streamed as many text deltas: a scripted session of
//! `TURNS` turns, each response an SSE body of N `text_delta` events and a tool call (the last
//! one text only), run with no journal, an in-memory journal and an on-disk journal. The
//! journal stays open for the session, as in a real run, so the figure per response is what the
//! deltas cost, not opening or closing the file. With group commit a response's deltas share one
//! transaction. A second table streams the same deltas after a completed thinking block, as
//! Claude's responses do: every step while a response streams digests the blocks completed so
//! far, so a long thinking block must not make each later delta cost its length. Prints
//! figures; asserts nothing.
//!
//! `cargo bench -p reloop-driver --bench deltas`

use std::sync::Arc;
use std::time::Instant;

use reloop_core::{Config, ContentBlock};
use reloop_driver::{RunConfig, Session};
use reloop_journal::Journal;
use reloop_model::ScriptedProvider;
use serde_json::{json, Value};

mod common;

use common::sse;

const TURNS: usize = 20;

/// The bytes of the thinking block before the deltas in the second table.
const THINKING_BYTES: usize = 8 << 10;

fn run(rt: &tokio::runtime::Runtime, cassette: &str, journal: Option<Journal>) -> f64 {
    let provider = Arc::new(ScriptedProvider::from_json(cassette).expect("bench cassette"));
    let run = RunConfig::new("scripted", "bench", std::env::temp_dir());
    let session = Session::new(provider, common::tools(), journal.map(Into::into), Config::default(), run);
    // The clock stops when the result arrives, before the journal is closed.
    rt.block_on(async move {
        let handle = session.start(vec![ContentBlock::text("go")]).expect("start");
        let start = Instant::now();
        let result = handle.finish().await.expect("run");
        assert_eq!(result.num_turns as usize, TURNS, "the bench session must run every turn: {}", result.result);
        start.elapsed().as_secs_f64()
    })
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
    println!("journal cost per streamed response ({TURNS}-turn sessions, median of 7 runs)");
    for thinking in [0, THINKING_BYTES] {
        if thinking == 0 {
            println!("\ntext deltas alone\n");
        } else {
            println!("\nthe same deltas after a {} KiB thinking block\n", thinking >> 10);
        }
        println!(
            "{:>7}  {:>14}  {:>14}  {:>14}  {:>18}",
            "deltas", "no journal", "in memory", "on disk", "disk - memory"
        );
        for deltas in [1usize, 100, 500, 2000] {
            let responses: Vec<Value> =
                (1..=TURNS).map(|t| json!({"sse": sse(t, deltas, t == TURNS, thinking)})).collect();
            let cassette = json!({ "responses": responses }).to_string();
            let _ = run(&rt, &cassette, None);
            let per = |seconds: f64| seconds * 1e3 / TURNS as f64;
            let none = median(7, || run(&rt, &cassette, None));
            let memory = median(7, || run(&rt, &cassette, Some(Journal::in_memory().expect("journal"))));
            let path = dir.path().join(format!("d{deltas}-{thinking}.db"));
            drop(Journal::create_or_open(&path).expect("journal"));
            let disk = median(7, || run(&rt, &cassette, Some(Journal::open_existing(&path).expect("journal"))));
            println!(
                "{:>7}  {:>11.3} ms  {:>11.3} ms  {:>11.3} ms  {:>15.3} ms",
                deltas,
                per(none),
                per(memory),
                per(disk),
                per(disk - memory)
            );
        }
    }
    println!("\nper response; bar: 500 deltas add <= 1 ms of journal time on disk over the in-memory journal");
}
