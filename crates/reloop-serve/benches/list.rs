//! `reloop serve` on a journal of 100,000 sessions: how long building its index takes, then how
//! long the list's first page, a filtered page, a deep page and searches (a rare word, words of
//! every session, with and without filters) take to answer (the goal: under 200 ms each). Each
//! response is a real request through the server's routes, its HTML rendered. `cargo bench -p reloop-serve --bench list` (SESSIONS=N for another size).
//!
//! The journal is filled from one recorded session (tests/journals/scripted_seed.json, 14
//! steps) copied in SQL with new ids; every 1,000th copy's prompt names a rare word, so one
//! search matches 100 sessions and another (a word of every session's tool result) all of them.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use reloop_driver::SessionJournal;
use reloop_journal::{Journal, SessionDump};
use reloop_serve::{auth::Access, Config, IndexPlace, OpenJournal, PriceTable};
use rusqlite::params;
use tower::ServiceExt;

fn fill(path: &Path, sessions: u64) {
    let dump = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/journals/scripted_seed.json"))
        .expect("tests/journals/scripted_seed.json");
    let dump = SessionDump::from_json(&dump).expect("a dump");
    let mut journal = Journal::create_or_open(path).expect("a journal");
    let template = journal.load_session(&dump).expect("the template session");
    drop(journal);
    let mut conn = rusqlite::Connection::open(path).expect("the journal");
    let tx = conn.transaction().expect("a transaction");
    let n: i64 = tx.query_row("SELECT n FROM session_numbers WHERE id = ?1", [&template], |r| r.get(0)).unwrap();
    {
        let mut session = tx
            .prepare(
                "INSERT INTO sessions (id, created_at_ms, engine_version, core_config, run_config, parent_id, fork_seq, terminal_reason)
                 SELECT ?1, created_at_ms + ?2 * 1000, engine_version, core_config, run_config, NULL, NULL, terminal_reason
                 FROM sessions WHERE id = ?3",
            )
            .unwrap();
        let mut number = tx.prepare("INSERT INTO session_numbers (id) VALUES (?1)").unwrap();
        let mut steps = tx
            .prepare(
                "INSERT INTO steps (key, at_ms, event, from_phase, to_phase, turn_before, turn_after, reason_kind, reason,
                                    reason_json, effects, digest, outcome)
                 SELECT (?1 << 32) | (key & 4294967295), at_ms, event, from_phase, to_phase, turn_before, turn_after,
                        reason_kind, reason, reason_json, effects, digest, outcome
                 FROM steps WHERE key > (?2 << 32) AND key < ((?2 + 1) << 32)",
            )
            .unwrap();
        let mut rare = tx
            .prepare(
                "UPDATE steps SET event = json_set(event, '$.content[0].text', ?2)
                 WHERE key > (?1 << 32) AND key < ((?1 + 1) << 32) AND json_extract(event, '$.kind') = 'user_input'",
            )
            .unwrap();
        for i in 1..sessions {
            let id = format!("{i:08x}-0000-4000-8000-{i:012x}");
            session.execute(params![id, i as i64, template]).unwrap();
            number.execute([&id]).unwrap();
            let m = tx.last_insert_rowid();
            steps.execute(params![m, n]).unwrap();
            if i.is_multiple_of(1000) {
                rare.execute(params![m, format!("find the quokka bug number {i}")]).unwrap();
            }
        }
    }
    tx.commit().unwrap();
}

async fn time(router: &axum::Router, uri: &str) -> (Duration, usize) {
    let mut best = Duration::MAX;
    let mut bytes = 0;
    // The best of three: the first warms SQLite's page cache.
    for _ in 0..3 {
        let started = Instant::now();
        let response =
            router.clone().oneshot(Request::get(uri).header("host", "localhost").body(Body::empty()).unwrap());
        let response = response.await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{uri}");
        bytes = response.into_body().collect().await.unwrap().to_bytes().len();
        best = best.min(started.elapsed());
    }
    (best, bytes)
}

fn main() {
    let sessions: u64 = std::env::var("SESSIONS").ok().and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let dir = tempfile::tempdir().unwrap();

    let path = dir.path().join("journal.db");
    let started = Instant::now();
    fill(&path, sessions);
    println!("filled a journal with {sessions} sessions in {:.1} s", started.elapsed().as_secs_f64());
    let journal_path = path.clone();
    let open: OpenJournal = Arc::new(move || Journal::open_for_reading(&journal_path).map(SessionJournal::Sqlite));
    let prices: PriceTable = Arc::new(|_, _| Some(0.001));
    let config = Config {
        index: IndexPlace::Sqlite { journal: path.clone(), index: dir.path().join("journal.db.serve-index") },
        journal: open,
        prices,
        access: Access { token: None },
        refresh: Duration::from_secs(3600),
        queue: None,
    };
    let started = Instant::now();
    let router = reloop_serve::app(config).expect("the server's routes");
    println!("built the index in {:.1} s", started.elapsed().as_secs_f64());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        for (what, uri) in [
            ("list, first page", "/"),
            ("list, JSON", "/sessions.json"),
            ("list, page 1000", "/?page=1000"),
            ("list, filtered (status, tokens)", "/?status=completed&tokens_min=10"),
            ("search, a rare word (100 sessions)", "/?q=quokka"),
            ("search, a word of every session", "/?q=login"),
            ("search + filter", "/?q=quokka&source=run&cost_min=0.0001"),
            ("search, every session's word + filters", "/?q=login&status=completed&tokens_min=10"),
            ("search, every session's word, page 100", "/?q=login&page=100"),
            ("search, two words of every session", "/?q=login+verifyPassword"),
        ] {
            let (took, bytes) = time(&router, uri).await;
            println!("{what:<40} {uri:<42} {:>8.1} ms  ({bytes} bytes)", took.as_secs_f64() * 1000.0);
        }
    });
}
