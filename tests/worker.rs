//! A fleet an operator can see, on a real PostgreSQL: `reloop worker` logs its start, claims,
//! lease heartbeats, finishes and failures (human lines, or JSON with `--log-format json`), each
//! naming the session and the worker; a session it could not run shows as failed with its reason
//! in `queue`, `sessions` and `why`; `--exit-when-idle` exits 1 after a failure; `run --enqueue`
//! needs no API key; `reloop queue` shows who claimed what since when.
//!
//! A real server is started by the shared harness (`crates/reloop-journal-pg/tests/support`);
//! without one these tests are skipped with a note, unless `RELOOP_REQUIRE_PG=1`.

mod common;
#[path = "../crates/reloop-journal-pg/tests/support/mod.rs"]
mod support;

use std::process::{Output, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::{stderr, stdout, Workspace};
use serde_json::{json, Value};
use support::TestDb;

/// Leases of a second and a half, renewed every half second: a session that runs a second shows
/// heartbeats in the log.
const LEASE_TTL_MS: &str = "1500";

fn reloop_pg(ws: &Workspace, db: &TestDb, args: &[&str]) -> Output {
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--journal", &db.uri]);
    ws.reloop_env(&all, &[("RELOOP_LEASE_TTL_MS", LEASE_TTL_MS)])
}

fn ok(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(0), "stdout: {}\nstderr: {}", stdout(out), stderr(out));
    stdout(out)
}

fn json_of(out: &Output) -> Value {
    serde_json::from_str(&ok(out)).unwrap()
}

/// A cassette whose one Bash call sleeps `seconds`, then an answer.
fn cassette(ws: &Workspace, seconds: f64) -> std::path::PathBuf {
    let cassette = json!({"responses": [
        {"message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
            "content": [{"type": "tool_use", "id": "toolu_w", "name": "Bash",
                "input": {"command": format!("sleep {seconds}; echo ran >> mark.txt"), "description": "work"}}],
            "stop_reason": "tool_use", "usage": {"input_tokens": 10, "output_tokens": 5}}},
        {"message": {"id": "msg_2", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
            "content": [{"type": "text", "text": "done"}],
            "stop_reason": "end_turn", "usage": {"input_tokens": 20, "output_tokens": 2}}}
    ]});
    let path = ws.dir.path().join(format!("work-{seconds}.json"));
    std::fs::write(&path, cassette.to_string()).unwrap();
    path
}

/// `reloop run PROMPT --enqueue` in a folder of its own; the queued session's id.
fn enqueue(ws: &Workspace, db: &TestDb, name: &str, extra: &[&str]) -> String {
    let dir = ws.dir.path().join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let mut args = vec!["run", "do the work", "--cwd", dir.to_str().unwrap(), "--allowed-tools", "Bash", "--enqueue"];
    args.extend(extra);
    ok(&reloop_pg(ws, db, &args)).trim().to_string()
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64
}

/// The log's events (`--log-format json`: one object a line), every line parsed.
fn log_events(out: &Output) -> Vec<Value> {
    stderr(out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("a log line that is no JSON ({e}): {l}")))
        .collect()
}

fn events<'a>(log: &'a [Value], event: &str, session: &str) -> Vec<&'a Value> {
    log.iter().filter(|e| e["event"] == event && e["session"] == session).collect()
}

#[test]
fn a_worker_logs_each_session_and_a_failed_one_shows_as_failed_everywhere() {
    let Some(db) = TestDb::new("a_worker_logs_each_session_and_a_failed_one_shows_as_failed_everywhere") else {
        return;
    };
    let ws = Workspace::seed();
    let work = cassette(&ws, 1.2);
    let good = enqueue(&ws, &db, "good", &["--script", work.to_str().unwrap()]);
    // The Anthropic API with no key on this machine: enqueuing needs none (the worker asks the
    // model), and the worker, which has none either, cannot run it.
    let keyless = enqueue(&ws, &db, "keyless", &["--provider", "anthropic"]);

    // Before any worker: both wait, and neither is "(unfinished)".
    let queued = json_of(&reloop_pg(&ws, &db, &["queue", "--json"]));
    let states: Vec<(&str, &str)> = queued
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["session"].as_str().unwrap(), e["state"].as_str().unwrap()))
        .collect();
    assert_eq!(states, [(good.as_str(), "queued"), (keyless.as_str(), "queued")], "{queued}");
    assert!(queued[0]["worker"].is_null() && queued[0]["reason"].is_null(), "{queued}");
    assert!(now_ms().abs_diff(queued[0]["since_ms"].as_u64().unwrap()) < 60_000, "since when: {queued}");
    let listed = ok(&reloop_pg(&ws, &db, &["sessions"]));
    assert_eq!(listed.matches("(queued)").count(), 2, "{listed}");
    assert!(!listed.contains("(unfinished)"), "{listed}");

    let started = Instant::now();
    let out = common::reloop_bin()
        .args(["worker", "--journal", &db.uri, "--poll-ms", "50", "--exit-when-idle", "--log-format", "json"])
        .args(["--concurrency", "1"])
        .env("RELOOP_LEASE_TTL_MS", LEASE_TTL_MS)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "a batch with a failed session exits 1: {}", stderr(&out));
    assert!(started.elapsed() < Duration::from_secs(60));
    eprintln!("LOG\n{}", stderr(&out));
    let log = log_events(&out);
    let start = log.iter().find(|e| e["event"] == "start").unwrap_or_else(|| panic!("no start: {log:?}"));
    let worker = start["worker"].as_str().unwrap().to_string();
    assert!(worker.ends_with(&format!(":{}", out_pid(&log))), "the worker is host:pid: {worker}");
    assert_eq!(start["level"], "INFO");
    assert!(start["timestamp"].is_string(), "{start}");

    // The session it ran: claimed, kept alive by heartbeats while its Bash call ran, finished.
    let claim = events(&log, "claim", &good);
    assert_eq!(claim.len(), 1, "{log:?}");
    assert_eq!(claim[0]["worker"], worker.as_str());
    let holder = claim[0]["holder"].as_str().unwrap();
    assert!(holder.starts_with(&format!("{worker}:")), "the lease holder is the worker's: {holder}");
    assert!(!events(&log, "heartbeat", &good).is_empty(), "heartbeats during a 1.2 s call at 0.5 s: {log:?}");
    assert!(events(&log, "heartbeat", &good).iter().all(|e| e["worker"] == worker.as_str()));
    let finish = events(&log, "finish", &good);
    assert_eq!(finish.len(), 1, "{log:?}");
    assert_eq!(finish[0]["outcome"], "completed");
    assert!(finish[0]["elapsed_ms"].as_u64().unwrap() >= 1_200, "{}", finish[0]);

    // The one it could not run: claimed, then failed with its reason, at ERROR.
    assert_eq!(events(&log, "claim", &keyless).len(), 1, "{log:?}");
    let failure = events(&log, "failure", &keyless);
    assert_eq!(failure.len(), 1, "{log:?}");
    assert_eq!(failure[0]["level"], "ERROR");
    assert_eq!(failure[0]["worker"], worker.as_str());
    assert!(failure[0]["reason"].as_str().unwrap().contains("ANTHROPIC_API_KEY"), "{}", failure[0]);
    let stop = log.iter().find(|e| e["event"] == "stop").unwrap();
    assert_eq!((stop["finished"].as_u64(), stop["failed"].as_u64()), (Some(1), Some(1)), "{stop}");

    // The queue: the failed session with its reason (the done one only with --all).
    let queue = json_of(&reloop_pg(&ws, &db, &["queue", "--json"]));
    assert_eq!(queue.as_array().unwrap().len(), 1, "{queue}");
    assert_eq!(queue[0]["session"], keyless.as_str());
    assert_eq!(queue[0]["state"], "failed");
    assert!(queue[0]["worker"].as_str().unwrap().starts_with(&worker), "{queue}");
    assert!(queue[0]["reason"].as_str().unwrap().contains("ANTHROPIC_API_KEY"), "{queue}");
    let all = json_of(&reloop_pg(&ws, &db, &["queue", "--json", "--all"]));
    let done = all.as_array().unwrap().iter().find(|e| e["session"] == good.as_str()).unwrap();
    assert_eq!((done["state"].as_str(), done["reason"].as_str()), (Some("done"), Some("completed")), "{all}");
    let text = ok(&reloop_pg(&ws, &db, &["queue"]));
    assert!(text.starts_with(&format!("failed   {}  since ", &keyless[..8])), "{text}");
    assert!(
        text.contains("ANTHROPIC_API_KEY")
            && text.ends_with("0 queued, 0 claimed, 1 failed; 1 done (--all lists them)\n"),
        "{text}"
    );

    // `sessions` and `why` say it failed, and why.
    let listed = ok(&reloop_pg(&ws, &db, &["sessions"]));
    let row = listed.lines().find(|l| l.starts_with(&keyless[..8])).unwrap();
    assert!(row.contains("failed: the session asks the Anthropic API: set ANTHROPIC_API_KEY"), "{listed}");
    let rows = json_of(&reloop_pg(&ws, &db, &["sessions", "--json"]));
    let row = rows.as_array().unwrap().iter().find(|r| r["id"] == keyless.as_str()).unwrap();
    assert_eq!(row["queue"]["state"], "failed", "{row}");
    let why = ok(&reloop_pg(&ws, &db, &["why", &keyless]));
    assert!(why.contains("queue: failed: the session asks the Anthropic API"), "{why}");
    let why = ok(&reloop_pg(&ws, &db, &["why", &good]));
    assert!(!why.contains("queue:"), "a session the queue is done with needs no word on it: {why}");
}

/// The pid part of the worker's id, from its log.
fn out_pid(log: &[Value]) -> String {
    log.iter().find_map(|e| e["worker"].as_str()).and_then(|w| w.rsplit(':').next()).unwrap_or_default().to_string()
}

#[test]
#[allow(unsafe_code)]
fn the_queue_shows_which_worker_claimed_a_session_since_when_and_its_log_is_human_on_stderr() {
    let Some(db) = TestDb::new("the_queue_shows_which_worker_claimed_a_session_since_when") else { return };
    let ws = Workspace::seed();
    let slow = cassette(&ws, 30.0);
    let id = enqueue(&ws, &db, "slow", &["--script", slow.to_str().unwrap()]);
    let worker = ws
        .command(&["worker", "--journal", &db.uri, "--poll-ms", "50"])
        .env("RELOOP_LEASE_TTL_MS", LEASE_TTL_MS)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = worker.id();
    let deadline = Instant::now() + Duration::from_secs(30);
    let claimed = loop {
        let queue = json_of(&reloop_pg(&ws, &db, &["queue", "--json"]));
        if queue[0]["state"] == "claimed" {
            break queue[0].clone();
        }
        assert!(Instant::now() < deadline, "never claimed: {queue}");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(claimed["session"], id.as_str());
    let by = claimed["worker"].as_str().unwrap();
    assert!(by.contains(&format!(":{pid}:")), "claimed by the worker's lease ({by}, pid {pid})");
    assert!(now_ms().abs_diff(claimed["since_ms"].as_u64().unwrap()) < 30_000, "{claimed}");
    let text = ok(&reloop_pg(&ws, &db, &["queue"]));
    assert!(
        text.starts_with(&format!("claimed  {}  since ", &id[..8])) && text.contains(&format!("by {by}")),
        "{text}"
    );
    assert!(text.contains("0 queued, 1 claimed, 0 failed"), "{text}");
    let listed = ok(&reloop_pg(&ws, &db, &["sessions"]));
    assert!(listed.contains(&format!("(running, {by}")), "{listed}");

    // Told to stop, it halts the session for the next worker and says so.
    // SAFETY: kill with a pid of our own child and a valid signal has no preconditions.
    unsafe { libc::kill(pid as i32, libc::SIGTERM) };
    let out = worker.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "a stopped worker exits 0: {}", stderr(&out));
    let log = stderr(&out);
    eprintln!("LOG\n{log}");
    let lines: Vec<&str> = log.lines().collect();
    // Human lines: time, level, words, then the fields; no colour off a terminal.
    assert!(lines[0].contains(" INFO ") && lines[0].contains("worker started"), "{log}");
    assert!(!log.contains('\u{1b}'), "{log}");
    let claim = lines.iter().find(|l| l.contains("claimed session")).unwrap_or_else(|| panic!("{log}"));
    assert!(claim.contains(&format!("session=\"{id}\"")) || claim.contains(&format!("session={id}")), "{claim}");
    assert!(lines.iter().any(|l| l.contains("halted session") && l.contains(&id)), "{log}");
    assert!(lines.last().unwrap().contains("worker stopped: told to stop"), "{log}");
    let queue = json_of(&reloop_pg(&ws, &db, &["queue", "--json"]));
    assert_eq!(queue[0]["state"], "queued", "{queue}");
    assert!(queue[0]["worker"].is_null(), "{queue}");
    assert!(queue[0]["reason"].as_str().unwrap().contains("claimed once before"), "{queue}");
}

#[test]
fn queue_refuses_a_sqlite_journal() {
    let ws = Workspace::seed();
    let out = ws.reloop(&["queue"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--journal postgres://"), "{}", stderr(&out));
}

#[test]
fn docs_cli_md_documents_every_flag_of_worker_and_queue() {
    let ws = Workspace::seed();
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/cli.md")).unwrap();
    let start = docs.find("## Queue and workers (a shared journal)").expect("a section for the queue");
    let section = &docs[start..start + docs[start..].find("\n## Continuing").unwrap()];
    for command in ["worker", "queue"] {
        let help = stdout(&ws.reloop(&[command, "--help"]));
        let flags: Vec<&str> = help
            .split(|c: char| c.is_whitespace() || c == ',' || c == '[' || c == '=' || c == '<')
            .filter(|w| {
                w.starts_with("--") && w.len() > 2 && w[2..].chars().all(|c| c.is_ascii_lowercase() || c == '-')
            })
            .filter(|w| !["--help", "--no-pager", "--journal"].contains(w))
            .collect();
        assert!(flags.len() >= 2, "{command}: {flags:?}");
        for flag in flags {
            assert!(section.contains(flag), "docs/cli.md does not document {command} {flag}");
        }
        let usage = format!("reloop {command} --journal postgres://");
        assert!(section.contains(&usage), "docs/cli.md shows no {usage}");
    }
}
