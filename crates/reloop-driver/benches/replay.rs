//! Replay speed and memory: a scripted session of 1,000 and of 10,000 turns is recorded, then
//! replayed streaming from SQLite as `reloop replay` does (rows read and decoded on a second
//! thread, `reloop_inspect::replay_rows`), streaming on one thread, and from steps already in
//! memory. Prints steps per second, and the peak memory of a whole process that replays the
//! journal as `reloop replay` does (this bench run again as a child: in this process, memory the
//! allocator kept from the recording would hide the replay's). Times are the fastest of three
//! runs. A second table replays sessions of 10,000 and 100,000 turns that compact every 500
//! turns, as a real session does when its context window fills: their replay's memory stays the
//! same whatever their length. A third replays a session whose responses stream in 20 text
//! deltas each, as Claude's do (most steps of a real session are deltas). Prints figures;
//! asserts nothing.
//!
//! `cargo bench -p reloop-driver --bench replay` (`RELOOP_BENCH_KEEP=DIR` keeps the journals)

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use common::{cassette_compacting, cassette_streamed, run_cassette, run_session};
use reloop_inspect::Replayer;
use reloop_journal::{Journal, SessionHeader};

fn kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with(field)).map(str::to_owned))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|n| n.parse().ok()))
        .unwrap_or(0)
}

/// Runs `replay` three times: the fastest time (the machine's other load only ever adds) and
/// the steps it replayed.
fn fastest(mut replay: impl FnMut() -> usize) -> (f64, usize) {
    let mut best = f64::MAX;
    let mut steps = 0;
    for _ in 0..3 {
        let start = Instant::now();
        steps = replay();
        best = best.min(start.elapsed().as_secs_f64());
    }
    (best, steps)
}

/// The child: opens the journal at `path` and replays its last session on two threads, as
/// `reloop replay` does (opened for reading: no whole-file check), and prints its own peak RSS
/// in KiB.
fn replay_child(path: &Path) {
    let mut journal = Journal::open_for_reading(path).expect("journal");
    let id = journal.resolve("last").expect("session");
    let header = journal.header(&id).expect("header");
    let mut replayer = Replayer::new(&header, &[]);
    reloop_inspect::replay_journal(&mut journal, &id, &mut replayer).expect("steps");
    assert!(replayer.finish().divergence.is_none(), "the bench session must replay identical");
    println!("{}", kib("VmHWM:"));
}

/// The peak RSS of a process that replays the journal at `path` (see [`replay_child`]).
fn process_peak(path: &Path) -> u64 {
    let exe = std::env::current_exe().expect("this bench's path");
    let out = Command::new(exe).arg("--replay-child").arg(path).output().expect("the child runs");
    assert!(out.status.success(), "the child replay failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().parse().expect("the child prints its peak")
}

/// The fastest of three replays of session `id`, as `reloop replay` does it (rows read and
/// decoded on a second thread): its time and the steps replayed.
fn streamed_replay(journal: &mut Journal, header: &SessionHeader, id: &str) -> (f64, usize) {
    fastest(|| {
        let mut replayer = Replayer::new(header, &[]);
        let steps = reloop_inspect::replay_journal(journal, id, &mut replayer).expect("steps");
        assert!(replayer.finish().divergence.is_none(), "the bench session must replay identical");
        steps
    })
}

/// A table of sessions of each of `turns` recorded live on `cassette(turns)`, then replayed as
/// `reloop replay` does: steps, time, steps per second and the replaying process's peak.
fn streamed_table(
    rt: &tokio::runtime::Runtime,
    dir: &Path,
    title: &str,
    name: &str,
    turns: &[usize],
    cassette: &dyn Fn(usize) -> String,
) {
    println!("\n{title}\n");
    println!("{:>6}  {:>7}  {:>16}  {:>14}  {:>14}", "turns", "steps", "streamed replay", "steps/s", "process peak");
    for &turns in turns {
        let path = dir.join(format!("{name}-{turns}.db"));
        let _ = std::fs::remove_file(&path);
        let journal = Journal::create_or_open(&path).expect("journal");
        let (recorded, id) = run_cassette(rt, turns, &cassette(turns), Some(journal));
        println!("        (recorded {turns} turns live in {:.0} ms)", recorded.seconds * 1e3);
        let id = id.expect("session id");
        let mut journal = Journal::open_for_reading(&path).expect("reopen");
        let header = journal.header(&id).expect("header");
        let (streamed, steps) = streamed_replay(&mut journal, &header, &id);
        println!(
            "{:>6}  {:>7}  {:>13.1} ms  {:>14.0}  {:>10} KiB",
            turns,
            steps,
            streamed * 1e3,
            steps as f64 / streamed,
            process_peak(&path)
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--replay-child") {
        replay_child(Path::new(&args[i + 1]));
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    // RELOOP_BENCH_KEEP names a folder that keeps the recorded journals, to profile a replay of
    // one afterwards (`--replay-child PATH` under callgrind or perf); a temporary one otherwise.
    let kept = std::env::var_os("RELOOP_BENCH_KEEP").map(std::path::PathBuf::from);
    let temp = tempfile::tempdir().expect("tempdir");
    let dir = kept.as_deref().unwrap_or(temp.path());
    std::fs::create_dir_all(dir).expect("the journals' folder");
    println!("reloop replay (scripted sessions with instant tools)\n");
    println!(
        "{:>6}  {:>7}  {:>16}  {:>14}  {:>14}  {:>14}  {:>16}  {:>14}",
        "turns", "steps", "streamed replay", "steps/s", "process peak", "1 thread", "in-memory replay", "steps/s"
    );
    for turns in [1_000usize, 10_000] {
        let path = dir.join(format!("replay-{turns}.db"));
        let _ = std::fs::remove_file(&path);
        let (recorded, id) = run_session(&rt, turns, Some(Journal::create_or_open(&path).expect("journal")));
        println!("        (recorded {turns} turns live in {:.0} ms)", recorded.seconds * 1e3);
        let id = id.expect("session id");
        let journal = Journal::open_for_reading(&path).expect("reopen");
        let header = journal.header(&id).expect("header");

        let mut journal = journal;
        let (streamed, steps) = streamed_replay(&mut journal, &header, &id);
        // On one thread, a row at a time.
        let (one_thread, _) = fastest(|| {
            let mut replayer = Replayer::new(&header, &[]);
            let steps = journal.visit_replay_rows(&id, |row| replayer.feed_row(row, &id)).expect("steps");
            assert!(replayer.finish().divergence.is_none());
            steps
        });

        let records = journal.steps(&id).expect("steps");
        let mut in_memory = f64::MAX;
        for _ in 0..3 {
            let start = Instant::now();
            let report = reloop_inspect::replay(&header, &records);
            in_memory = in_memory.min(start.elapsed().as_secs_f64());
            assert!(report.divergence.is_none());
        }
        println!(
            "{:>6}  {:>7}  {:>13.1} ms  {:>14.0}  {:>10} KiB  {:>11.1} ms  {:>13.1} ms  {:>14.0}",
            turns,
            steps,
            streamed * 1e3,
            steps as f64 / streamed,
            process_peak(&path),
            one_thread * 1e3,
            in_memory * 1e3,
            steps as f64 / in_memory
        );
    }
    let compacting = |turns| cassette_compacting(turns, Some(500));
    let title = "sessions that compact every 500 turns (their history is what their context window holds)";
    streamed_table(&rt, dir, title, "compacting", &[10_000, 100_000], &compacting);
    let title = "sessions whose responses stream in 20 text deltas each";
    streamed_table(&rt, dir, title, "streamed", &[1_000, 10_000], &|turns| cassette_streamed(turns, 20));
    println!("\nbars: >= 1,000,000 steps/s; a 10,000-turn journal in <= 100 ms; peak <= 30 MB at any length");
}
