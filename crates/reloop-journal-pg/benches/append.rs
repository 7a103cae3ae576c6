//! Append latency (p50, p99) and sessions per second for 1, 10 and 100 concurrent writers, on
//! PostgreSQL next to SQLite. Every step is a durable append (committed before it returns, as a
//! tool's start or a block is); each writer has its own journal handle, as separate processes
//! would. PostgreSQL runs on a Unix socket with its default durability (fsync on); SQLite is one
//! file in WAL mode.
//!
//! `cargo bench -p reloop-journal-pg --bench append`; needs the PostgreSQL server binaries
//! (scripts/pg-setup.sh), else only SQLite is measured.

#[path = "../tests/support/mod.rs"]
mod support;

use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use reloop_core::{Config, ContentBlock, Event};
use reloop_journal::{Journal, JournalBackend, SessionHeader, StepRecord, ENGINE_VERSION};
use reloop_journal_pg::{LeaseTimes, PgJournal};

/// Sessions in every run, split over the writers; steps per session.
const SESSIONS: usize = 100;
const STEPS: u64 = 20;

fn header(id: String) -> SessionHeader {
    SessionHeader {
        id,
        created_at_ms: 1,
        engine_version: ENGINE_VERSION.into(),
        core_config: Config::default(),
        run_config: serde_json::json!({"provider": "scripted"}),
        parent: None,
    }
}

fn step(seq: u64) -> StepRecord {
    StepRecord {
        seq,
        at_ms: seq,
        event: Event::user_input(vec![ContentBlock::text(format!("step {seq} of a session"))]),
        from_phase: "idle".into(),
        to_phase: "awaiting_model".into(),
        turn_before: 1,
        turn_after: 1,
        reason: None,
        ignored: None,
        effects: serde_json::json!([{"effect": "cancel_model"}]),
        digest: seq,
    }
}

/// What a run measured: every append's latency, the wall time, sessions written whole, and the
/// first error of those that were not (SQLite refuses a writer that waited too long, or one whose
/// read-then-write transaction met another writer).
struct Run {
    latencies: Vec<Duration>,
    wall: Duration,
    done: usize,
    failed: Vec<String>,
}

/// Runs `writers` threads, each writing its share of the sessions through its own journal.
fn run(writers: usize, open: Arc<dyn Fn() -> Box<dyn JournalBackend> + Send + Sync>) -> Run {
    let start = Arc::new(Barrier::new(writers + 1));
    let threads: Vec<_> = (0..writers)
        .map(|w| {
            let (open, start) = (open.clone(), start.clone());
            std::thread::spawn(move || {
                let mut journal = open();
                let (mut latencies, mut results) = (Vec::new(), Vec::new());
                start.wait();
                for s in (w..SESSIONS).step_by(writers) {
                    let id = format!("w{w}-s{s}-{}", std::process::id());
                    let mut session = || -> Result<(), String> {
                        journal.create_session(&header(id.clone()), &[]).map_err(|e| format!("create: {e}"))?;
                        for seq in 1..=STEPS {
                            let t = Instant::now();
                            journal.append(&id, &step(seq)).map_err(|e| format!("append: {e}"))?;
                            latencies.push(t.elapsed());
                        }
                        journal.release_session(&id).map_err(|e| format!("release: {e}"))
                    };
                    results.push(session());
                }
                (latencies, results)
            })
        })
        .collect();
    start.wait();
    let t = Instant::now();
    let (mut latencies, mut done, mut failed) = (Vec::new(), 0, Vec::new());
    for thread in threads {
        let (l, results) = thread.join().expect("writer");
        latencies.extend(l);
        for r in results {
            match r {
                Ok(()) => done += 1,
                Err(e) => failed.push(e),
            }
        }
    }
    let wall = t.elapsed();
    latencies.sort();
    Run { latencies, wall, done, failed }
}

fn report(backend: &str, writers: usize, run: Run) {
    let Run { latencies, wall, done, failed } = run;
    let at = |q: f64| {
        let i = ((latencies.len() as f64 * q) as usize).min(latencies.len().saturating_sub(1));
        latencies.get(i).map_or(f64::NAN, |d| d.as_secs_f64() * 1e3)
    };
    println!(
        "{backend:<8} {writers:>3} writers  append p50 {:>7.3} ms  p99 {:>7.3} ms  {:>7.1} sessions/s  ({done}/{SESSIONS} sessions of {STEPS} steps written)",
        at(0.50),
        at(0.99),
        done as f64 / wall.as_secs_f64(),
    );
    let mut kinds: Vec<(String, usize)> = Vec::new();
    for e in &failed {
        match kinds.iter_mut().find(|(k, _)| k == e) {
            Some((_, n)) => *n += 1,
            None => kinds.push((e.clone(), 1)),
        }
    }
    for (error, n) in kinds {
        println!("         {n} sessions failed: {error}");
    }
}

fn main() {
    let pg = support::Cluster::own("-c max_connections=250")
        .map_err(|why| eprintln!("note: PostgreSQL not measured: {why}"))
        .ok();
    for writers in [1, 10, 100] {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("journal.db");
        drop(Journal::create_or_open(&path).expect("journal"));
        let sqlite = move || Box::new(Journal::create_or_open(&path).expect("open")) as Box<dyn JournalBackend>;
        report("sqlite", writers, run(writers, Arc::new(sqlite)));
        if let Some(cluster) = &pg {
            let db = support::TestDb::on(cluster.clone());
            let url = db.url.clone();
            let open = move || {
                Box::new(PgJournal::connect(&url, LeaseTimes::default()).expect("connect")) as Box<dyn JournalBackend>
            };
            report("postgres", writers, run(writers, Arc::new(open)));
        }
    }
}
