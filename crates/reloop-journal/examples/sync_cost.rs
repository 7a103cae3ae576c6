//! What each kind of journal write costs on this disk: a deferred step (joins the open group),
//! a committed step (`synchronous=NORMAL`, no fsync in WAL mode) and a synced step (`FULL`, what
//! a write tool's start gets). Prints figures; asserts nothing.
//!
//! `cargo run --release -p reloop-journal --example sync_cost`

use std::time::Instant;

use reloop_core::{transition, Config, ContentBlock, Event, State};
use reloop_journal::{Journal, SessionHeader, StepRecord};

const STEPS: u64 = 300;

fn main() {
    // A folder may be named, to measure another disk than the temporary folder's.
    let dir = match std::env::args().nth(1) {
        Some(base) => tempfile::tempdir_in(base).expect("tempdir"),
        None => tempfile::tempdir().expect("tempdir"),
    };
    let path = dir.path().join("cost.db");
    let mut journal = Journal::create_or_open(&path).expect("journal");
    let header = SessionHeader {
        id: "bench".into(),
        created_at_ms: 0,
        engine_version: reloop_journal::ENGINE_VERSION.into(),
        core_config: Config::default(),
        run_config: serde_json::json!({}),
        parent: None,
    };
    journal.create_session(&header).expect("header");
    let step = transition(State::new(Config::default()), Event::user_input(vec![ContentBlock::text("hi")]));
    let record = |seq| StepRecord::of(seq, 0, Event::Abort, "awaiting_model", 1, &step);
    let mut seq = 0;
    println!("journal writes on {} ({STEPS} steps each)\n", dir.path().display());
    type Write = fn(&mut Journal, &str, &StepRecord) -> Result<(), reloop_journal::JournalError>;
    let kinds: [(&str, Write); 3] = [
        ("deferred (one group)", |j, s, r| j.append_deferred(s, r)),
        ("committed (NORMAL)", |j, s, r| j.append(s, r)),
        ("synced (FULL)", |j, s, r| j.append_synced(s, r)),
    ];
    for (name, write) in kinds {
        let start = Instant::now();
        for _ in 0..STEPS {
            seq += 1;
            write(&mut journal, "bench", &record(seq)).expect("write");
        }
        journal.commit().expect("commit");
        let per = start.elapsed().as_secs_f64() * 1e6 / STEPS as f64;
        println!("{name:<22} {per:>9.1} µs per step");
    }
}
