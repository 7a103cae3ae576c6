//! Loop overhead per turn, replay time, journal bytes per turn and peak RSS for scripted
//! sessions with an instant model and instant tools. Each length runs three times, journal off
//! and on in turn, and the fastest of each is printed: on a shared machine the others' load only
//! ever adds time. Prints figures; asserts nothing.
//!
//! `cargo bench -p reloop-driver --bench loop_overhead`

mod common;

use std::time::Instant;

use common::run_session;
use reloop_journal::Journal;

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM:")).map(str::to_owned))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|n| n.parse().ok()))
        .unwrap_or(0)
}

/// Runs per length and journal setting; the fastest is printed.
const RUNS: usize = 3;

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
        let (mut off, mut on, mut id) = (f64::MAX, f64::MAX, None);
        for run in 0..RUNS {
            off = off.min(run_session(&rt, turns, None).0.seconds);
            // A fresh journal each time, so every run writes the same.
            let path = dir.path().join(format!("bench-{turns}-{run}.db"));
            let (figures, session) = run_session(&rt, turns, Some(Journal::create_or_open(&path).expect("journal")));
            on = on.min(figures.seconds);
            if run == 0 {
                id = session;
            }
        }
        let id = id.expect("session id");
        let path = dir.path().join(format!("bench-{turns}-0.db"));

        let journal = Journal::open_existing(&path).expect("reopen");
        let header = journal.header(&id).expect("header");
        let read_start = Instant::now();
        let steps = journal.steps(&id).expect("steps");
        let read = read_start.elapsed().as_secs_f64();
        let replay_start = Instant::now();
        let report = reloop_inspect::replay(&header, &steps);
        let replay = replay_start.elapsed().as_secs_f64();
        assert!(report.divergence.is_none(), "bench session must replay identical");
        let bytes = journal.size_bytes().expect("size");

        println!(
            "{:>6}  {:>11.3} ms  {:>11.3} ms  {:>6.2}x  {:>9.1} ms  {:>9.3} ms  {:>14}",
            turns,
            off * 1e3 / turns as f64,
            on * 1e3 / turns as f64,
            on / off,
            (read + replay) * 1e3,
            (read + replay) * 1e3 / turns as f64,
            bytes / turns as u64,
        );
    }
    println!("\npeak RSS: {} KiB", peak_rss_kib());
    println!("bars: journal on <= 0.25 ms/turn and <= 1.3x off; replay and bytes/turn flat as sessions grow");
}
