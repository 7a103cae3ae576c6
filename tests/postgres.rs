//! The CLI on a PostgreSQL journal: every command works on it as on SQLite, a killed run is
//! resumed (by another process, once the dead writer's lease expired) and replays identical,
//! and a fleet of `reloop worker`s shares 200 queued sessions — one worker SIGKILLed midway —
//! running each to its end exactly once, no side-effecting tool twice.
//!
//! A real server is started by the shared harness (`crates/reloop-journal-pg/tests/support`);
//! without one these tests are skipped with a note, unless `RELOOP_REQUIRE_PG=1`.

mod common;
#[path = "../crates/reloop-journal-pg/tests/support/mod.rs"]
mod support;

use std::collections::HashMap;
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use common::{cassette_path, stderr, stdout, Workspace};
use serde_json::Value;
use support::TestDb;

/// Leases in these tests: a dead writer's sessions come back after a second, not 30.
const LEASE_TTL_MS: &str = "1000";

fn reloop_pg(ws: &Workspace, db: &TestDb, args: &[&str]) -> Output {
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--journal", &db.uri]);
    ws.reloop_env(&all, &[("RELOOP_LEASE_TTL_MS", LEASE_TTL_MS)])
}

/// `reloop run PROMPT` on the database, scripted by `cassette`, in `cwd`, with `tools` allowed
/// and `extra` arguments after.
fn run_scripted(
    ws: &Workspace,
    db: &TestDb,
    prompt: &str,
    cassette: &std::path::Path,
    cwd: &std::path::Path,
    tools: &str,
    extra: &[&str],
) -> Output {
    let (cassette, cwd) = (cassette.to_str().unwrap(), cwd.to_str().unwrap());
    let mut args = vec!["run", prompt, "--script", cassette, "--cwd", cwd, "--allowed-tools", tools];
    args.extend(extra);
    reloop_pg(ws, db, &args)
}

/// How many write starts session `id` journaled.
fn write_starts(client: &mut postgres::Client, id: &str) -> i64 {
    client
        .query_one("SELECT count(*) FROM reloop.steps WHERE session_id = $1 AND kind = 'tool_started'", &[&id])
        .unwrap()
        .get(0)
}

fn ok(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(0), "stdout: {}\nstderr: {}", stdout(out), stderr(out));
    stdout(out)
}

#[test]
fn every_command_works_on_a_postgres_journal() {
    let Some(db) = TestDb::new("every_command_works_on_a_postgres_journal") else { return };
    let ws = Workspace::seed();
    let cwd = ws.cwd();
    let crash = cassette_path("crash.json");
    ok(&run_scripted(&ws, &db, "tidy up", &crash, &cwd, "Edit,Bash", &[]));
    let listed: Value = serde_json::from_str(&ok(&reloop_pg(&ws, &db, &["sessions", "--json"]))).unwrap();
    let id = listed[0]["id"].as_str().unwrap().to_string();
    assert_eq!(listed[0]["terminal_reason"], "completed");
    assert!(listed[0]["steps"].as_u64().unwrap() > 5, "{listed}");
    assert!(!ws.journal().exists(), "nothing went to the SQLite file");
    assert!(ok(&reloop_pg(&ws, &db, &["replay", "last"])).contains("identical"));
    assert!(!ok(&reloop_pg(&ws, &db, &["why", &id[..8]])).is_empty());
    assert!(ok(&reloop_pg(&ws, &db, &["show", "last", "--steps"])).contains("model_done"));
    assert!(ok(&reloop_pg(&ws, &db, &["show", "last", "--turn", "1"])).contains("tidy up"));
    let dump = ok(&reloop_pg(&ws, &db, &["export", "last", "--format", "journal"]));
    assert!(ok(&reloop_pg(&ws, &db, &["export", "last"])).contains("tidy up"));
    let page = ws.dir.path().join("view.html");
    ok(&reloop_pg(&ws, &db, &["view", "last", "-o", page.to_str().unwrap()]));
    assert!(std::fs::read_to_string(&page).unwrap().contains(&id));

    // A fork on Postgres references its parent's steps, and diff finds where they part.
    let fork = reloop_pg(&ws, &db, &["fork", &id, "--at", "3", "--script", crash.to_str().unwrap()]);
    ok(&fork);
    let listed: Value = serde_json::from_str(&ok(&reloop_pg(&ws, &db, &["sessions", "--json"]))).unwrap();
    let fork_id =
        listed.as_array().unwrap().iter().find(|s| s["parent"] == id).unwrap()["id"].as_str().unwrap().to_string();
    assert!(ok(&reloop_pg(&ws, &db, &["replay", &fork_id])).contains("identical"));
    let diff = reloop_pg(&ws, &db, &["diff", &id, &fork_id]);
    assert!(matches!(diff.status.code(), Some(0 | 1)), "{}", stderr(&diff));

    // A dump moves between the two kinds of journal both ways, and replays the same.
    let file = ws.dir.path().join("dump.json");
    std::fs::write(&file, &dump).unwrap();
    ok(&ws.reloop(&["import", "journal", file.to_str().unwrap()]));
    assert!(stdout(&ws.reloop(&["replay", &id])).contains("identical"));
    let again = reloop_pg(&ws, &db, &["import", "journal", file.to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(2), "a session already there is refused: {}", stderr(&again));
}

#[test]
fn a_killed_run_is_resumed_from_another_process_after_its_lease_expires() {
    let Some(db) = TestDb::new("a_killed_run_is_resumed_from_another_process_after_its_lease_expires") else { return };
    let ws = Workspace::seed();
    let cwd = ws.cwd();
    let crash = cassette_path("crash.json");
    // Killed right after journaling steps of every kind: before and after the write tools.
    for at in [2u64, 5, 9] {
        let at_step = at.to_string();
        let crash_at = ["--crash-after-step", at_step.as_str()];
        let run = run_scripted(&ws, &db, "tidy the README and count", &crash, &cwd, "Edit,Bash", &crash_at);
        assert_ne!(run.status.code(), Some(0), "the run was killed at step {at}");
        // The dead writer's lease is live for a second more: a resume now is refused...
        let early = reloop_pg(&ws, &db, &["resume", "last"]);
        if early.status.code() != Some(0) {
            assert!(stderr(&early).contains("is being written by"), "{}", stderr(&early));
            std::thread::sleep(Duration::from_millis(1_200));
            // ...and taken over once it expired.
            ok(&reloop_pg(&ws, &db, &["resume", "last"]));
        }
        let replay = ok(&reloop_pg(&ws, &db, &["replay", "last"]));
        assert!(replay.contains("identical"), "{replay}");
        let dump: Value =
            serde_json::from_str(&ok(&reloop_pg(&ws, &db, &["export", "last", "--format", "journal"]))).unwrap();
        let steps = dump["steps"].as_array().unwrap();
        assert_eq!(steps.last().unwrap()["to_phase"], "done", "killed at {at}: the resumed session ran to its end");
        let bash_starts =
            steps.iter().filter(|s| s["event"]["kind"] == "tool_started" && s["event"]["tool_use_id"] == "toolu_b1");
        assert!(bash_starts.count() <= 1, "killed at {at}: the Bash write started at most once");
        let counted = std::fs::read_to_string(cwd.join("counter.txt")).unwrap_or_default();
        assert!(counted.lines().count() <= 1, "killed at {at}: the Bash write ran twice");
        std::fs::remove_file(cwd.join("counter.txt")).ok();
    }
}

/// A cassette whose one tool call appends a line to the session's own scratch file: a second
/// run of it would leave two.
fn scratch_cassette(dir: &std::path::Path) -> std::path::PathBuf {
    let cassette = serde_json::json!({"responses": [
        {"message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
            "content": [{"type": "tool_use", "id": "toolu_w", "name": "Bash",
                "input": {"command": "sleep 0.2; echo ran >> scratch.txt", "description": "side effect"}}],
            "stop_reason": "tool_use", "usage": {"input_tokens": 10, "output_tokens": 5}}},
        {"message": {"id": "msg_2", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
            "content": [{"type": "text", "text": "done"}],
            "stop_reason": "end_turn", "usage": {"input_tokens": 20, "output_tokens": 2}}}
    ]});
    let path = dir.join("scratch.json");
    std::fs::write(&path, cassette.to_string()).unwrap();
    path
}

fn spawn_worker(ws: &Workspace, db: &TestDb) -> Child {
    ws.command(&["worker", "--journal", &db.uri, "--concurrency", "4", "--poll-ms", "100"])
        .env("RELOOP_LEASE_TTL_MS", LEASE_TTL_MS)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Sessions whose queue row is finished, by outcome.
fn outcomes(client: &mut postgres::Client) -> HashMap<String, String> {
    client
        .query("SELECT session_id, coalesce(outcome, '') FROM reloop.queue WHERE finished_at IS NOT NULL", &[])
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect()
}

#[test]
#[allow(unsafe_code)]
fn three_workers_share_200_queued_sessions_and_survive_one_killed() {
    let Some(db) = TestDb::new("three_workers_share_200_queued_sessions_and_survive_one_killed") else { return };
    let ws = Workspace::seed();
    let cassette = scratch_cassette(ws.dir.path());
    const SESSIONS: usize = 200;
    let dirs: Vec<_> = (0..SESSIONS).map(|i| ws.dir.path().join(format!("s{i:03}"))).collect();
    // Enqueued from four threads at once, as several producers would.
    let enqueued = Instant::now();
    let ids: Vec<String> = std::thread::scope(|scope| {
        let chunks: Vec<_> = dirs
            .chunks(SESSIONS / 4)
            .map(|chunk| {
                let (ws, db, cassette) = (&ws, &db, &cassette);
                scope.spawn(move || {
                    chunk
                        .iter()
                        .map(|dir| {
                            std::fs::create_dir_all(dir).unwrap();
                            let out = run_scripted(ws, db, "make a mark", cassette, dir, "Bash", &["--enqueue"]);
                            ok(&out).trim().to_string()
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        chunks.into_iter().flat_map(|c| c.join().unwrap()).collect()
    });
    assert_eq!(ids.len(), SESSIONS);
    eprintln!("enqueued {SESSIONS} sessions in {:.1?}", enqueued.elapsed());
    let mut client = db.client();
    let started = Instant::now();
    let mut workers: Vec<Child> = (0..3).map(|_| spawn_worker(&ws, &db)).collect();
    // One worker is killed with sessions of its own in flight.
    while outcomes(&mut client).len() < SESSIONS / 5 {
        assert!(started.elapsed() < Duration::from_secs(60), "the workers made no progress");
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut killed = workers.remove(0);
    killed.kill().unwrap();
    killed.wait().unwrap();
    while outcomes(&mut client).len() < SESSIONS {
        assert!(started.elapsed() < Duration::from_secs(100), "{} of {SESSIONS} finished", outcomes(&mut client).len());
        std::thread::sleep(Duration::from_millis(100));
    }
    // The survivors stop cleanly on SIGTERM.
    for worker in &workers {
        // SAFETY: kill with a pid of our own child and a valid signal has no preconditions.
        unsafe { libc::kill(worker.id() as i32, libc::SIGTERM) };
    }
    for worker in workers {
        let out = worker.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "a worker stops cleanly: {}", String::from_utf8_lossy(&out.stderr));
    }
    let elapsed = started.elapsed();

    let done = outcomes(&mut client);
    for (id, dir) in ids.iter().zip(&dirs) {
        assert_eq!(done.get(id).map(String::as_str), Some("completed"), "session {id}");
        let marks = std::fs::read_to_string(dir.join("scratch.txt")).unwrap_or_default();
        assert!(marks.lines().count() <= 1, "session {id}: the side effect ran {} times", marks.lines().count());
    }
    // Exactly one end per session, and at most one start of its write, whoever ran it.
    let per_session: Vec<(String, i64, i64)> = client
        .query(
            "SELECT session_id, count(*) FILTER (WHERE reason_kind = 'terminal'),
                    count(*) FILTER (WHERE kind = 'tool_started')
             FROM reloop.steps GROUP BY session_id",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();
    assert_eq!(per_session.len(), SESSIONS);
    for (id, ends, starts) in &per_session {
        assert_eq!(*ends, 1, "session {id} ended once");
        assert!(*starts <= 1, "session {id} started its write {starts} times");
    }
    // Epoch 1 was the enqueuer's, 2 the first claim's: more is a takeover from the dead worker.
    let taken_over: i64 = client.query_one("SELECT count(*) FROM reloop.leases WHERE epoch > 2", &[]).unwrap().get(0);
    assert!(taken_over >= 1, "the killed worker's sessions in flight were taken over");
    eprintln!(
        "{SESSIONS} sessions on 3 workers (one killed) in {elapsed:.1?}; {taken_over} taken over from the dead one"
    );
    // Every session replays identical, whichever workers wrote it.
    let replayed = Instant::now();
    std::thread::scope(|scope| {
        for chunk in ids.chunks(SESSIONS / 4) {
            let (ws, db) = (&ws, &db);
            scope.spawn(move || {
                for id in chunk {
                    let replay = ok(&reloop_pg(ws, db, &["replay", id]));
                    assert!(replay.contains("identical"), "session {id}: {replay}");
                }
            });
        }
    });
    eprintln!("replayed {SESSIONS} sessions in {:.1?}", replayed.elapsed());
}

#[test]
fn enqueue_and_worker_refuse_a_sqlite_journal() {
    let ws = Workspace::seed();
    let out = ws.reloop(&["worker"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("postgres://"), "{}", stderr(&out));
    let cassette = scratch_cassette(ws.dir.path());
    let out = ws.reloop(&["run", "x", "--enqueue", "--script", cassette.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("postgres://"), "{}", stderr(&out));
    assert!(!ws.journal().exists(), "nothing was written");
}

const READER: &str = "---\nname: reader\ndescription: Reads files and reports what they say\n\
tools: Read, Bash\n---\nYou read the files you are asked about and answer in one line.\n";
const LOOPER: &str = "---\nname: looper\ndescription: Looks around the project without end\n\
tools: Glob\nmaxTurns: 1\n---\nYou look around.\n";

#[test]
fn subagents_write_child_sessions_of_their_own_on_postgres() {
    let Some(db) = TestDb::new("subagents_write_child_sessions_of_their_own_on_postgres") else { return };
    let ws = Workspace::seed();
    let agents = ws.cwd().join(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(agents.join("reader.md"), READER).unwrap();
    std::fs::write(agents.join("looper.md"), LOOPER).unwrap();
    let (cassette, cwd) = (cassette_path("agents_tree.json"), ws.cwd());
    ok(&run_scripted(&ws, &db, "check the login module with two agents", &cassette, &cwd, "Bash", &[]));
    let listed: Value = serde_json::from_str(&ok(&reloop_pg(&ws, &db, &["sessions", "--json"]))).unwrap();
    let children = listed.as_array().unwrap().iter().filter(|s| !s["agent"].is_null()).count();
    assert_eq!(children, 2, "each Agent call is a child session in the database: {listed}");
    let replayed = ok(&reloop_pg(&ws, &db, &["replay", "last"]));
    assert_eq!(replayed.matches("identical").count(), 3, "{replayed}");
    assert!(replayed.contains("agent reader for toolu_agent_reader"), "{replayed}");
}

#[test]
#[allow(unsafe_code)]
fn a_worker_told_to_stop_leaves_its_sessions_for_the_next_one() {
    let Some(db) = TestDb::new("a_worker_told_to_stop_leaves_its_sessions_for_the_next_one") else { return };
    let ws = Workspace::seed();
    let cassette = scratch_cassette(ws.dir.path());
    let slow = std::fs::read_to_string(&cassette).unwrap().replace("sleep 0.2", "sleep 2");
    std::fs::write(&cassette, slow).unwrap();
    let dirs: Vec<_> = (0..3).map(|i| ws.dir.path().join(format!("t{i}"))).collect();
    let mut ids = Vec::new();
    for dir in &dirs {
        std::fs::create_dir_all(dir).unwrap();
        ids.push(ok(&run_scripted(&ws, &db, "mark", &cassette, dir, "Bash", &["--enqueue"])).trim().to_string());
    }
    let mut client = db.client();
    let worker = spawn_worker(&ws, &db);
    // Once every session's write is under way, the worker is told to stop.
    let started = Instant::now();
    loop {
        let running: i64 =
            client.query_one("SELECT count(*) FROM reloop.steps WHERE kind = 'tool_started'", &[]).unwrap().get(0);
        if running == 3 {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "the worker started {running} writes");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill with a pid of our own child and a valid signal has no preconditions.
    unsafe { libc::kill(worker.id() as i32, libc::SIGTERM) };
    let stopping = Instant::now();
    let out = worker.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stopping.elapsed() < Duration::from_secs(5), "the worker stopped at once: {:.1?}", stopping.elapsed());
    assert!(outcomes(&mut client).is_empty(), "no session was ended by the stop");
    let live: i64 = client
        .query_one("SELECT count(*) FROM reloop.leases WHERE expires_at > clock_timestamp()", &[])
        .unwrap()
        .get(0);
    assert_eq!(live, 0, "the stopped worker gave every lease up");
    // The next worker resumes them at once, without waiting out a lease, and stops when idle.
    let next = ws.command(&["worker", "--journal", &db.uri, "--poll-ms", "50", "--exit-when-idle"]).output().unwrap();
    assert_eq!(next.status.code(), Some(0), "{}", stderr(&next));
    let done = outcomes(&mut client);
    for (id, dir) in ids.iter().zip(&dirs) {
        assert_eq!(done.get(id).map(String::as_str), Some("completed"), "session {id}");
        let marks = std::fs::read_to_string(dir.join("scratch.txt")).unwrap_or_default();
        assert!(marks.lines().count() <= 1, "session {id}: the write ran twice");
        assert_eq!(write_starts(&mut client, id), 1, "session {id}: the interrupted write was not started again");
        assert!(ok(&reloop_pg(&ws, &db, &["replay", id])).contains("identical"));
    }
}

/// A session nobody queued whose process died (a plain `reloop run` killed mid-write) is taken
/// over by a worker once its lease expires, run to its end once, and replays identical; a run
/// that ended is left alone.
#[test]
fn a_worker_takes_over_a_plain_run_whose_writer_died() {
    let Some(db) = TestDb::new("a_worker_takes_over_a_plain_run_whose_writer_died") else { return };
    let ws = Workspace::seed();
    let cassette = scratch_cassette(ws.dir.path());
    let (died, ended) = (ws.dir.path().join("died"), ws.dir.path().join("ended"));
    let run = |dir: &std::path::Path, extra: &[&str]| {
        std::fs::create_dir_all(dir).unwrap();
        run_scripted(&ws, &db, "mark", &cassette, dir, "Bash", extra)
    };
    ok(&run(&ended, &[]));
    // Killed right after the Bash call's start was journaled: the write may or may not have run.
    let killed = run(&died, &["--crash-after-step", "4"]);
    assert_ne!(killed.status.code(), Some(0), "the run was killed");
    let mut client = db.client();
    let id: String =
        client.query_one("SELECT id FROM reloop.sessions WHERE terminal_reason IS NULL", &[]).unwrap().get(0);
    let started_before = write_starts(&mut client, &id);
    // Nothing for a worker while the dead writer's lease runs; after it, the session is taken.
    std::thread::sleep(Duration::from_millis(1_200));
    let worker = ws
        .command(&["worker", "--journal", &db.uri, "--poll-ms", "50", "--exit-when-idle"])
        .env("RELOOP_LEASE_TTL_MS", LEASE_TTL_MS)
        .output()
        .unwrap();
    assert_eq!(worker.status.code(), Some(0), "{}", stderr(&worker));
    let done = outcomes(&mut client);
    assert_eq!(done.get(&id).map(String::as_str), Some("completed"), "{done:?}");
    assert_eq!(done.len(), 1, "the run that had ended was left alone: {done:?}");
    assert_eq!(write_starts(&mut client, &id), started_before.max(1), "no write was started twice");
    let marks = std::fs::read_to_string(died.join("scratch.txt")).unwrap_or_default();
    assert!(marks.lines().count() <= 1, "the write ran twice: {marks:?}");
    let replay = ok(&reloop_pg(&ws, &db, &["replay", &id]));
    assert!(replay.contains("identical"), "{replay}");
}

/// A queued session's time in the queue is no time of its turns: `why` of a session that waited
/// seconds for a worker counts only the time the worker spent on it.
#[test]
fn a_queued_session_does_not_count_its_queue_wait_into_its_first_turn() {
    let Some(db) = TestDb::new("a_queued_session_does_not_count_its_queue_wait_into_its_first_turn") else { return };
    let ws = Workspace::seed();
    let cassette = scratch_cassette(ws.dir.path());
    let dir = ws.dir.path().join("queued");
    std::fs::create_dir_all(&dir).unwrap();
    let id = ok(&run_scripted(&ws, &db, "mark", &cassette, &dir, "Bash", &["--enqueue"])).trim().to_string();
    const WAIT: Duration = Duration::from_millis(2500);
    std::thread::sleep(WAIT);
    let worker = ws.command(&["worker", "--journal", &db.uri, "--poll-ms", "50", "--exit-when-idle"]).output().unwrap();
    assert_eq!(worker.status.code(), Some(0), "{}", stderr(&worker));
    assert_eq!(outcomes(&mut db.client()).get(&id).map(String::as_str), Some("completed"));
    let why = ok(&reloop_pg(&ws, &db, &["why", &id]));
    // `  turn 1: 1 request, ..., $0.0001, 212 ms` (or `1.2 s`): each turn's own time.
    let times: Vec<u64> = why
        .lines()
        .filter(|l| l.trim_start().starts_with("turn ") && !l.contains("->"))
        .map(|l| {
            let time = l.rsplit(", ").next().unwrap();
            match time.split_once(' ') {
                Some((ms, "ms")) => ms.parse().unwrap(),
                Some((s, "s")) => (s.parse::<f64>().unwrap() * 1000.0) as u64,
                _ => panic!("a turn's time in minutes: {l}"),
            }
        })
        .collect();
    assert_eq!(times.len(), 2, "{why}");
    let counted: u64 = times.iter().sum();
    assert!(
        counted < WAIT.as_millis() as u64 - 1000,
        "the queue wait is counted into the turns ({counted} ms):\n{why}"
    );
    assert!(times[0] >= 200, "turn 1 holds its Bash call's 0.2 s:\n{why}");
}
