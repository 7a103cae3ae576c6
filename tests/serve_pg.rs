//! `reloop serve` on a PostgreSQL journal: its index in the database's `reloop_serve` schema
//! (a `tsvector` with a GIN index), the list, its filters and search, a session's page, its live
//! events and a diff, as on SQLite. A real server is started by the shared harness
//! (`crates/reloop-journal-pg/tests/support`); without one the test is skipped with a note,
//! unless `RELOOP_REQUIRE_PG=1`.

mod common;
#[path = "serve/harness.rs"]
mod harness;
#[path = "../crates/reloop-journal-pg/tests/support/mod.rs"]
mod support;

use common::{cassette_path, stderr, stdout, Workspace};
use harness::Server;
use serde_json::{json, Value};
use support::TestDb;

#[test]
fn a_postgres_journal_is_listed_searched_shown_followed_and_diffed() {
    let Some(db) = TestDb::new("a_postgres_journal_is_listed_searched_shown_followed_and_diffed") else { return };
    let ws = Workspace::seed();
    let cwd = ws.cwd();
    let seed = cassette_path("seed.json");
    let pg = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["--journal", &db.uri]);
        ws.reloop(&all)
    };
    let out = pg(&["run", "find the login bug", "--script", seed.to_str().unwrap(), "--cwd", cwd.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let rows: Value = serde_json::from_str(&stdout(&pg(&["sessions", "--json"]))).unwrap();
    let id = rows[0]["id"].as_str().unwrap().to_string();
    let fork_answer = cassette_path("fork_answer.json");
    assert_eq!(pg(&["fork", &id, "--at", "7", "--script", fork_answer.to_str().unwrap()]).status.code(), Some(0));
    let dump = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/journals/scripted_max_turns.json");
    assert_eq!(pg(&["import", "journal", dump.to_str().unwrap()]).status.code(), Some(0));

    let server = Server::start_on(&ws, &db.uri, &[]);
    let all = server.json("/sessions.json");
    assert_eq!(all["total"], 3, "{all}");
    let fork = all["sessions"].as_array().unwrap().iter().find(|r| r["kind"] == "fork").unwrap()["id"].clone();
    let fork = fork.as_str().unwrap().to_string();
    // A fork's totals count what it inherited, as `sessions` (and SQLite's index) count them.
    let listed: Value = serde_json::from_str(&stdout(&pg(&["sessions", "--json"]))).unwrap();
    let said = listed.as_array().unwrap().iter().find(|r| r["id"] == json!(fork)).unwrap().clone();
    let row = all["sessions"].as_array().unwrap().iter().find(|r| r["id"] == json!(fork)).unwrap().clone();
    let all_input = ["input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"]
        .iter()
        .map(|k| said[k].as_i64().unwrap())
        .sum::<i64>();
    assert_eq!(
        (row["input_tokens"].as_i64(), row["output_tokens"].clone()),
        (Some(all_input), said["output_tokens"].clone())
    );
    assert_eq!(server.json(&format!("/sessions.json?parent={id}"))["sessions"][0]["id"], json!(fork));
    assert_eq!(server.json("/sessions.json?status=max_turns")["total"], 1);
    assert_eq!(server.json("/sessions.json?source=fork&model=claude-sonnet-4-6")["total"], 1);
    let found = server.json("/sessions.json?q=MAX_ATTEMPTS");
    assert!(found["sessions"].as_array().unwrap().iter().any(|r| r["id"] == json!(id)), "{found}");
    // PostgreSQL's parser splits MAX_ATTEMPTS into two words, each marked where it matched.
    assert!(found["sessions"][0]["snippet"].as_str().unwrap().contains("«MAX»_«ATTEMPTS»"), "{found}");
    assert_eq!(server.json("/sessions.json?q=nowhere+to+be+found")["total"], 0);
    assert_eq!(server.get("/?per=0", &[]).0, 400);

    let (status, _, page) = server.get(&format!("/s/{}", &id[..8]), &[]);
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("verifyPassword") && page.contains(&format!("/s/{fork}")), "{page}");
    let (status, _, events) = server.get(&format!("/s/{id}/events"), &[]);
    assert_eq!(status, 200);
    assert!(events.contains("event: end"), "a finished session's stream ends at once: {events}");
    let (status, _, diff) = server.get(&format!("/diff?a={id}&b={fork}"), &[]);
    assert_eq!(status, 200);
    assert!(diff.contains("they differ"), "{diff}");

    // The index is its own schema, and the journal's tables are as the runs left them.
    let mut client = db.client();
    // A session's texts are a few chunks of its own, not a row per text: one each here.
    let texts: i64 = client.query_one("SELECT count(*) FROM reloop_serve.texts", &[]).unwrap().get(0);
    assert_eq!(texts, 3);
    let gin: i64 = client
        .query_one("SELECT count(*) FROM pg_indexes WHERE schemaname = 'reloop_serve' AND indexdef LIKE '%gin%'", &[])
        .unwrap()
        .get(0);
    assert_eq!(gin, 1);
    // A session written while the server runs is indexed by its next refresh.
    let out =
        pg(&["run", "a second look at quokkas", "--script", seed.to_str().unwrap(), "--cwd", cwd.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while server.json("/sessions.json?q=quokkas")["total"] != 1 {
        assert!(std::time::Instant::now() < deadline, "the new session was never indexed");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    // A session queued for a worker shows as queued in the list's queue column; the ones the
    // queue never held have no status.
    let out = pg(&[
        "run",
        "wait for a worker",
        "--script",
        seed.to_str().unwrap(),
        "--cwd",
        cwd.to_str().unwrap(),
        "--enqueue",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let queued: Value = serde_json::from_str(&stdout(&pg(&["queue", "--json"]))).unwrap();
    let queued_id = queued[0]["session"].as_str().unwrap().to_string();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let page = server.json("/sessions.json");
        if let Some(words) = page["queue"][&queued_id].as_str() {
            assert!(words.starts_with("queued since "), "{page}");
            assert!(page["queue"].get(&id).is_none(), "a session never queued has no status: {page}");
            assert_eq!(page["queue_summary"], json!("1 queued, 0 claimed, 0 failed"), "{page}");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the queued session never showed its status: {page}");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let (_, _, list) = server.get("/", &[]);
    assert!(list.contains("<th>queue</th>") && list.contains("queued since "), "{list}");
    assert!(list.contains("<p id=\"queue-summary\">queue: 1 queued, 0 claimed, 0 failed</p>"), "{list}");
}
