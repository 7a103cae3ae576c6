//! Profiling aid: `replay_profile record FILE TURNS` records a scripted session into FILE
//! (`record-off` runs the same session with no journal, for the loop's own cost;
//! `record-compacting` one that compacts every 500 turns, as a filling context makes it;
//! `record-streamed` one whose responses stream in 20 text deltas each);
//! `replay_profile replay FILE N` replays its last session N times from memory, so a profiler
//! sees replay alone; `replay_profile stream FILE N` replays it N times streamed from SQLite, as
//! `reloop replay` does.

#[path = "../benches/common/mod.rs"]
mod common;

use std::time::Instant;

use common::{cassette_streamed, run_cassette, run_session, run_session_compacting};
use reloop_journal::Journal;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = std::path::PathBuf::from(&args[2]);
    let n: usize = args[3].parse().expect("a number");
    if args[1] == "record-streamed" {
        let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
        let journal = Journal::create_or_open(&path).expect("journal");
        let (figures, _) = run_cassette(&rt, n, &cassette_streamed(n, 20), Some(journal));
        println!("recorded {n} turns in {:.0} ms", figures.seconds * 1e3);
        return;
    }
    if args[1] == "record-compacting" {
        let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
        let journal = Journal::create_or_open(&path).expect("journal");
        let (figures, _) = run_session_compacting(&rt, n, Some(500), Some(journal));
        println!("recorded {n} turns in {:.0} ms", figures.seconds * 1e3);
        return;
    }
    if args[1] == "record" || args[1] == "record-off" {
        let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
        let journal = (args[1] == "record").then(|| Journal::create_or_open(&path).expect("journal"));
        let (figures, _) = run_session(&rt, n, journal);
        println!("recorded {n} turns in {:.0} ms", figures.seconds * 1e3);
        return;
    }
    let journal = Journal::open_existing(&path).expect("journal");
    let id = journal.resolve("last").expect("session");
    let header = journal.header(&id).expect("header");
    if args[1] == "pipe" {
        let mut journal = journal;
        let start = Instant::now();
        let mut steps = 0;
        for _ in 0..n {
            let mut replayer = reloop_inspect::Replayer::new(&header, &[]);
            steps = reloop_inspect::replay_journal(&mut journal, &id, &mut replayer).expect("steps");
            assert!(replayer.finish().divergence.is_none());
        }
        let per = start.elapsed().as_secs_f64() / n as f64;
        println!("{steps} steps streamed on two threads in {:.1} ms: {:.0} steps/s", per * 1e3, steps as f64 / per);
        return;
    }
    if args[1] == "stream" {
        let start = Instant::now();
        let mut steps = 0;
        for _ in 0..n {
            let mut replayer = reloop_inspect::Replayer::new(&header, &[]);
            steps = journal.visit_replay_rows(&id, |row| replayer.feed_row(row, &id)).expect("steps");
            assert!(replayer.finish().divergence.is_none());
        }
        let per = start.elapsed().as_secs_f64() / n as f64;
        println!("{steps} steps streamed in {:.1} ms: {:.0} steps/s", per * 1e3, steps as f64 / per);
        return;
    }
    let steps = journal.steps(&id).expect("steps");
    let start = Instant::now();
    for _ in 0..n {
        let report = reloop_inspect::replay(&header, &steps);
        assert!(report.divergence.is_none());
    }
    let per = start.elapsed().as_secs_f64() / n as f64;
    println!("{} steps in {:.1} ms: {:.0} steps/s", steps.len(), per * 1e3, steps.len() as f64 / per);
}
