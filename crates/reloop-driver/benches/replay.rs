//! Replay speed and memory: a scripted session of 1,000 and of 10,000 turns is recorded, then
//! replayed streaming (one step at a time from SQLite, as `reloop replay` does) and from steps
//! already in memory. Prints steps per second and the peak memory of the replay alone (the
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

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    println!("reloop replay (scripted sessions with instant tools)\n");
    println!(
        "{:>6}  {:>7}  {:>16}  {:>14}  {:>16}  {:>14}  {:>14}",
        "turns", "steps", "streamed replay", "steps/s", "in-memory replay", "steps/s", "streamed peak"
    );
    for turns in [1_000usize, 10_000] {
        let path = dir.path().join(format!("replay-{turns}.db"));
        let (recorded, id) = run_session(&rt, turns, Some(Journal::create_or_open(&path).expect("journal")));
        println!("        (recorded {turns} turns live in {:.0} ms)", recorded.seconds * 1e3);
        let id = id.expect("session id");
        let journal = Journal::open_existing(&path).expect("reopen");
        let header = journal.header(&id).expect("header");

        let baseline = kib("VmRSS:");
        reset_peak();
        let start = Instant::now();
        let mut replayer = Replayer::new(&header, &[]);
        let steps = journal.visit_rows(&id, |row| replayer.feed_row(row, &id)).expect("steps");
        let streamed = start.elapsed().as_secs_f64();
        let report = replayer.finish();
        assert!(report.divergence.is_none(), "the bench session must replay identical");
        let peak = kib("VmHWM:").saturating_sub(baseline);
        // Twice more for the time alone; the fastest counts (the machine's other load only adds).
        let mut streamed = streamed;
        for _ in 0..2 {
            let start = Instant::now();
            let mut replayer = Replayer::new(&header, &[]);
            journal.visit_rows(&id, |row| replayer.feed_row(row, &id)).expect("steps");
            streamed = streamed.min(start.elapsed().as_secs_f64());
        }

        let records = journal.steps(&id).expect("steps");
        let mut in_memory = f64::MAX;
        for _ in 0..3 {
            let start = Instant::now();
            let report = reloop_driver::replay(&header, &records);
            in_memory = in_memory.min(start.elapsed().as_secs_f64());
            assert!(report.divergence.is_none());
        }
        println!(
            "{:>6}  {:>7}  {:>13.1} ms  {:>14.0}  {:>13.1} ms  {:>14.0}  {:>10} KiB",
            turns,
            steps,
            streamed * 1e3,
            steps as f64 / streamed,
            in_memory * 1e3,
            steps as f64 / in_memory,
            peak
        );
    }
    println!("\nbars: >= 1,000,000 steps/s; a 10,000-turn journal in <= 100 ms; peak <= 30 MB at any length");
}
