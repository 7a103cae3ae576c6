//! Replay speed and memory: a scripted session of 1,000 and of 10,000 turns is recorded, then
//! replayed streaming from SQLite as `reloop replay` does (rows read and decoded on a second
//! thread, `reloop_driver::replay_rows`), streaming on one thread, and from steps already in
//! memory. Prints steps per second and the peak memory of the replay alone (the
//! process's high-water mark is reset before it). Times are the fastest of three runs. Prints
//! figures; asserts nothing.
//!
//! `cargo bench -p reloop-driver --bench replay`

mod common;

use std::time::Instant;

use common::run_session;
use reloop_driver::Replayer;
use reloop_journal::Journal;

fn kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with(field)).map(str::to_owned))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|n| n.parse().ok()))
        .unwrap_or(0)
}

/// Resets the peak-RSS mark (Linux: `5` to `clear_refs`), so the next peak is this phase's.
fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Runs `replay` three times: the fastest time (the machine's other load only ever adds), the
/// steps it replayed, and the first run's peak memory above what the process held before it.
fn fastest(mut replay: impl FnMut() -> usize) -> (f64, usize, u64) {
    let baseline = kib("VmRSS:");
    reset_peak();
    let start = Instant::now();
    let steps = replay();
    let mut best = start.elapsed().as_secs_f64();
    let peak = kib("VmHWM:").saturating_sub(baseline);
    for _ in 0..2 {
        let start = Instant::now();
        replay();
        best = best.min(start.elapsed().as_secs_f64());
    }
    (best, steps, peak)
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    println!("reloop replay (scripted sessions with instant tools)\n");
    println!(
        "{:>6}  {:>7}  {:>16}  {:>14}  {:>14}  {:>14}  {:>16}  {:>14}  {:>14}",
        "turns",
        "steps",
        "streamed replay",
        "steps/s",
        "streamed peak",
        "1 thread",
        "in-memory replay",
        "steps/s",
        "1-thread peak"
    );
    for turns in [1_000usize, 10_000] {
        let path = dir.path().join(format!("replay-{turns}.db"));
        reset_peak();
        let (recorded, id) = run_session(&rt, turns, Some(Journal::create_or_open(&path).expect("journal")));
        println!(
            "        (recorded {turns} turns live in {:.0} ms; the process's peak while recording: {} KiB, bar 40 MB)",
            recorded.seconds * 1e3,
            kib("VmHWM:")
        );
        let id = id.expect("session id");
        let journal = Journal::open_existing(&path).expect("reopen");
        let header = journal.header(&id).expect("header");

        // As `reloop replay` does: read and decoded on a second thread.
        let mut journal = journal;
        let (streamed, steps, peak) = fastest(|| {
            let mut replayer = Replayer::new(&header, &[]);
            let steps = reloop_driver::replay_journal(&mut journal, &id, &mut replayer).expect("steps");
            assert!(replayer.finish().divergence.is_none(), "the bench session must replay identical");
            steps
        });
        // On one thread, a row at a time.
        let (one_thread, _, one_peak) = fastest(|| {
            let mut replayer = Replayer::new(&header, &[]);
            let steps = journal.visit_rows(&id, |row| replayer.feed_row(row, &id)).expect("steps");
            assert!(replayer.finish().divergence.is_none());
            steps
        });

        let records = journal.steps(&id).expect("steps");
        let mut in_memory = f64::MAX;
        for _ in 0..3 {
            let start = Instant::now();
            let report = reloop_driver::replay(&header, &records);
            in_memory = in_memory.min(start.elapsed().as_secs_f64());
            assert!(report.divergence.is_none());
        }
        println!(
            "{:>6}  {:>7}  {:>13.1} ms  {:>14.0}  {:>10} KiB  {:>11.1} ms  {:>13.1} ms  {:>14.0}  {:>10} KiB",
            turns,
            steps,
            streamed * 1e3,
            steps as f64 / streamed,
            peak,
            one_thread * 1e3,
            in_memory * 1e3,
            steps as f64 / in_memory,
            one_peak
        );
    }
    println!("\nbars: >= 1,000,000 steps/s; a 10,000-turn journal in <= 100 ms; peak <= 30 MB at any length");
}
