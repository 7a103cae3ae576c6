//! Resume, one writer per session, damaged journals, forks and rebuilt requests, through the CLI.

mod common;

use std::process::Stdio;
use std::time::{Duration, Instant};

use common::fake_server::{sse_from_message, Canned, FakeServer};
use common::{cassette_path, stderr, stdout, Workspace};
use serde_json::Value;

fn json(out: &std::process::Output) -> Value {
    assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
    serde_json::from_str(&stdout(out)).unwrap_or_else(|e| panic!("{e}: {}", stdout(out)))
}

/// The seq of the first step whose effects hold `call_model` for request `n`.
fn step_calling(ws: &Workspace, session: &str, n: u64) -> u64 {
    let steps = json(&ws.reloop(&["show", session, "--steps", "--json"]));
    steps
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["effects"].as_array().unwrap().iter().any(|e| e["effect"] == "call_model" && e["request"] == n))
        .map(|s| s["seq"].as_u64().unwrap())
        .unwrap()
}

/// The seq of the first step of this kind whose effects mention `needle`.
fn step_mentioning(steps: &Value, kind: &str, needle: &str) -> u64 {
    steps
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["event"] == kind && s.to_string().contains(needle))
        .map(|s| s["seq"].as_u64().unwrap())
        .unwrap_or_else(|| panic!("no {kind} step mentions {needle}"))
}

fn tool_results(lines: &[Value]) -> Vec<Value> {
    lines
        .iter()
        .filter(|l| l["type"] == "user")
        .flat_map(|l| l["message"]["content"].as_array().unwrap().clone())
        .filter(|b| b["type"] == "tool_result")
        .collect()
}

fn reset(ws: &Workspace) {
    std::fs::write(ws.cwd().join("README.md"), "# shop\n").unwrap();
    let _ = std::fs::remove_file(ws.cwd().join("counter.txt"));
}

#[test]
fn writes_that_never_started_run_once_on_resume() {
    let ws = Workspace::seed();
    let first = ws.run("go", "crash.json", &["--allowed-tools", "Edit,Bash"]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let reference = json(&ws.reloop(&["show", "last", "--steps", "--json"]));
    // The step that asks for Edit and Bash: the crash comes before either starts.
    let at = step_mentioning(&reference, "model_done", "toolu_e1");
    reset(&ws);

    let crashed = ws.run("go", "crash.json", &["--allowed-tools", "Edit,Bash", "--crash-after-step", &at.to_string()]);
    assert_eq!(crashed.status.code(), None, "the process was aborted: {}", stderr(&crashed));
    let resumed = ws.reloop(&["resume", "last", "--output-format", "stream-json"]);
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    let lines = common::json_lines(&resumed);
    let results = tool_results(&lines);
    assert_eq!(results.len(), 2, "{lines:?}");
    assert!(results.iter().all(|r| r.get("is_error").is_none()), "{results:?}");
    assert_eq!(std::fs::read_to_string(ws.cwd().join("README.md")).unwrap(), "# shop\nedited\n");
    assert_eq!(std::fs::read_to_string(ws.cwd().join("counter.txt")).unwrap(), "x\n", "Bash ran once");
    assert_eq!(lines.last().unwrap()["terminal_reason"], "completed");
    assert_eq!(ws.reloop(&["replay", "last"]).status.code(), Some(0));

    let again = ws.reloop(&["resume", "last"]);
    assert_eq!(again.status.code(), Some(0));
    assert!(stdout(&again).contains("already finished: completed"), "{}", stdout(&again));
}

#[test]
fn a_write_that_started_is_answered_and_never_run_again() {
    let ws = Workspace::seed();
    let first = ws.run("go", "crash.json", &["--allowed-tools", "Edit,Bash"]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let reference = json(&ws.reloop(&["show", "last", "--steps", "--json"]));
    // Right after the Edit (the first of the two serial calls) is journaled as started.
    let asked = step_mentioning(&reference, "model_done", "toolu_e1");
    let at = reference
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["event"] == "tool_started" && s["seq"].as_u64().unwrap() > asked)
        .map(|s| s["seq"].as_u64().unwrap())
        .unwrap();
    reset(&ws);

    let crashed = ws.run("go", "crash.json", &["--allowed-tools", "Edit,Bash", "--crash-after-step", &at.to_string()]);
    assert_eq!(crashed.status.code(), None, "the process was aborted: {}", stderr(&crashed));
    let resumed = ws.reloop(&["resume", "last", "--output-format", "stream-json"]);
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    let results = tool_results(&common::json_lines(&resumed));
    let edit = results.iter().find(|r| r["tool_use_id"] == "toolu_e1").unwrap();
    assert_eq!(edit["is_error"], true);
    assert!(edit["content"].as_str().unwrap().contains("may or may not have run"), "{edit}");
    assert_eq!(std::fs::read_to_string(ws.cwd().join("README.md")).unwrap(), "# shop\n", "the Edit was not run again");
    assert_eq!(ws.reloop(&["replay", "last"]).status.code(), Some(0));
}

#[test]
fn a_second_writer_is_refused_and_a_dead_writers_lock_is_not() {
    let ws = Workspace::seed();
    let cwd = ws.cwd();
    let cassette = cassette_path("slow_bash_then_done.json");
    let mut child = common::reloop_bin()
        .args(["run", "go", "--script", cassette.to_str().unwrap(), "--cwd", cwd.to_str().unwrap()])
        .args(["--allowed-tools", "Bash"])
        .env("RELOOP_JOURNAL", ws.journal())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the Bash call is running (it counts first, then sleeps).
    let deadline = Instant::now() + Duration::from_secs(20);
    while !cwd.join("counter.txt").exists() {
        assert!(Instant::now() < deadline, "the session never started its Bash call");
        std::thread::sleep(Duration::from_millis(20));
    }
    let sessions = json(&ws.reloop(&["sessions", "--json"]));
    assert_eq!(sessions[0]["writer_pid"], child.id());
    assert!(stdout(&ws.reloop(&["sessions"])).contains(&format!("(running, pid {})", child.id())));

    let second = ws.reloop(&["resume", "last"]);
    assert_eq!(second.status.code(), Some(2));
    let err = stderr(&second);
    assert!(err.contains(&format!("is being written by another reloop process (pid {})", child.id())), "{err}");

    // The writer dies without cleaning up; its lock must not block the resume.
    child.kill().unwrap();
    child.wait().unwrap();
    let resumed = ws.reloop(&["resume", "last", "--output-format", "json"]);
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    let result: Value = serde_json::from_str(stdout(&resumed).trim()).unwrap();
    assert_eq!(result["terminal_reason"], "completed");
    let counted = std::fs::read_to_string(cwd.join("counter.txt")).unwrap();
    assert_eq!(counted, "x\n", "the interrupted Bash call was not run again");
    assert_eq!(json(&ws.reloop(&["sessions", "--json"]))[0]["writer_pid"], Value::Null);
    assert_eq!(ws.reloop(&["replay", "last"]).status.code(), Some(0));
}

#[test]
fn a_reader_meeting_garbled_pages_says_the_journal_is_damaged() {
    let ws = Workspace::seed();
    for _ in 0..3 {
        assert_eq!(ws.run("检查登录模块", "seed.json", &[]).status.code(), Some(0));
    }
    // Readers skip the whole-file check; the pages they read must still be checked.
    let mut bytes = std::fs::read(ws.journal()).unwrap();
    assert!(bytes.len() > 4 * 4096, "the journal was checkpointed: {} bytes", bytes.len());
    for b in &mut bytes[2 * 4096..] {
        *b = 0xff;
    }
    let garbled = ws.dir.path().join("garbled.db");
    std::fs::write(&garbled, &bytes).unwrap();
    let out = ws.reloop(&["replay", "last", "--journal", garbled.to_str().unwrap()]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("is damaged") && err.contains("left untouched"), "{err}");
    assert!(!err.contains("panicked"));
}

/// Reading commands walk the journal a step at a time: one that meets a step it cannot read has
/// shown only what came before it, and says which step, with exit 2.
#[test]
fn a_step_that_cannot_be_read_ends_every_reading_command_naming_it() {
    let ws = Workspace::seed();
    assert_eq!(ws.run("检查登录模块", "seed.json", &[]).status.code(), Some(0));
    let conn = rusqlite::Connection::open(ws.journal()).unwrap();
    let changed = conn.execute("UPDATE steps SET event = '{not json' WHERE key & 4294967295 = 3", []).unwrap();
    assert_eq!(changed, 1);
    drop(conn);
    for args in [
        &["show", "last"][..],
        &["show", "last", "--json"],
        &["show", "last", "--steps"],
        &["show", "last", "--steps", "--json"],
        &["show", "last", "--turn", "2"],
        &["why", "last"],
        &["export", "last"],
        &["export", "last", "--format", "claude-jsonl"],
        &["replay", "last"],
        &["replay", "last", "--output-format", "stream-json"],
    ] {
        let out = ws.reloop(args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("step 3") && err.contains("cannot be read"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    // The steps before it were shown, and nothing after.
    let steps = stdout(&ws.reloop(&["show", "last", "--steps"]));
    assert_eq!(steps.lines().count(), 2, "{steps}");
    assert!(steps.starts_with("#1 ") && steps.lines().nth(1).unwrap().starts_with("#2 "), "{steps}");
}

#[test]
fn a_truncated_journal_is_refused_clearly_and_never_overwritten() {
    let ws = Workspace::seed();
    for _ in 0..3 {
        assert_eq!(ws.run("检查登录模块", "seed.json", &[]).status.code(), Some(0));
    }
    let whole = std::fs::read(ws.journal()).unwrap();
    assert!(whole.len() > 8192, "the journal was checkpointed: {} bytes", whole.len());
    let cut = ws.dir.path().join("cut.db");
    std::fs::write(&cut, &whole[..whole.len() / 2]).unwrap();
    let cut_arg = cut.to_str().unwrap();
    for args in [
        vec!["sessions", "--journal", cut_arg],
        vec!["replay", "last", "--journal", cut_arg],
        vec!["resume", "last", "--journal", cut_arg],
    ] {
        let out = ws.reloop(&args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("is damaged") && err.contains("left untouched"), "{args:?}: {err}");
        assert!(!err.contains("panicked"));
    }
    let cassette = cassette_path("seed.json");
    let cwd = ws.cwd();
    let run = ws.reloop(&[
        "run",
        "hi",
        "--script",
        cassette.to_str().unwrap(),
        "--cwd",
        cwd.to_str().unwrap(),
        "--journal",
        cut_arg,
    ]);
    assert_eq!(run.status.code(), Some(2), "{}", stderr(&run));
    assert_eq!(std::fs::read(&cut).unwrap(), &whole[..whole.len() / 2], "the damaged file was not written to");
}

#[test]
fn a_fork_with_a_new_script_continues_from_the_fork_point() {
    let ws = Workspace::seed();
    assert_eq!(ws.run("检查登录模块", "seed.json", &[]).status.code(), Some(0));
    let parent = json(&ws.reloop(&["sessions", "--json"]))[0]["id"].as_str().unwrap().to_string();
    // Fork where the second request was sent: the new cassette answers it.
    let at = step_calling(&ws, &parent, 2);
    let script = cassette_path("fork_answer.json");
    let out = ws.reloop(&[
        "fork",
        &parent,
        "--at",
        &at.to_string(),
        "--script",
        script.to_str().unwrap(),
        "--output-format",
        "json",
    ]);
    let result = json(&out);
    assert_eq!(result["result"], "A different ending, from the fork.");
    assert_eq!(result["terminal_reason"], "completed");
    let fork = result["session_id"].as_str().unwrap().to_string();

    let sessions = json(&ws.reloop(&["sessions", "--json"]));
    let row = sessions.as_array().unwrap().iter().find(|s| s["id"] == fork.as_str()).unwrap();
    assert_eq!(row["parent"], parent.as_str());
    assert_eq!(row["fork_seq"], at);
    let tree = stdout(&ws.reloop(&["sessions"]));
    assert!(tree.contains(&format!("\n    {}", &fork[..8])), "{tree}");
    assert!(tree.contains(&format!("fork of {} @{at}", &parent[..8])), "{tree}");

    // The fork's journal starts with the parent's events, then goes its own way.
    let parent_steps = json(&ws.reloop(&["show", &parent, "--steps", "--json"]));
    let fork_steps = json(&ws.reloop(&["show", &fork, "--steps", "--json"]));
    let n = at as usize;
    assert_eq!(parent_steps.as_array().unwrap()[..n], fork_steps.as_array().unwrap()[..n]);
    assert_eq!(fork_steps[n]["event"], "resumed");
    assert_eq!(ws.reloop(&["replay", &fork]).status.code(), Some(0));
    let why = stdout(&ws.reloop(&["why", &fork]));
    assert!(why.contains("next_turn") && why.contains("stop: completed"), "{why}");
    let dot = stdout(&ws.reloop(&["why", &fork, "--dot"]));
    assert!(dot.starts_with("digraph reloop {") && dot.contains(&format!("fork of {parent} @{at}")), "{dot}");
}

/// A fork taken in the middle of a streamed answer asks for that answer again: nothing failed,
/// so nothing is said to be withdrawn, and `why` does not count the time between the parent's
/// step and the fork into the fork's turn.
#[test]
fn a_fork_taken_mid_answer_says_nothing_failed_and_counts_no_time_before_the_fork() {
    let ws = Workspace::seed();
    assert_eq!(ws.run("检查登录模块", "seed.json", &[]).status.code(), Some(0));
    let parent = json(&ws.reloop(&["sessions", "--json"]))[0]["id"].as_str().unwrap().to_string();
    let steps = json(&ws.reloop(&["show", &parent, "--steps", "--json"]));
    // The second answer's first block: its text was streamed, its other block not yet.
    let at = step_calling(&ws, &parent, 2) + 2;
    let kinds: Vec<&str> = steps.as_array().unwrap().iter().map(|s| s["event"].as_str().unwrap()).collect();
    assert_eq!(&kinds[at as usize - 2..=at as usize], ["text_delta", "model_block", "model_block"], "{kinds:?}");
    // The parent ran ten minutes before the fork.
    let conn = rusqlite::Connection::open(ws.journal()).unwrap();
    conn.execute("UPDATE steps SET at_ms = at_ms - 600000 WHERE key >> 32 = 1", []).unwrap();
    drop(conn);

    let out = ws.reloop(&["fork", &parent, "--at", &at.to_string()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert!(!said.contains("withdrawn") && !said.contains("failed"), "{said}");
    let why = stdout(&ws.reloop(&["why", "last"]));
    let turns: Vec<&str> = why.lines().filter(|l| l.trim_start().starts_with("turn ")).collect();
    assert_eq!(turns.len(), 3, "{why}");
    assert!(turns.iter().all(|t| !t.contains(" min")), "the wait before the fork counted into a turn: {why}");
}

#[test]
fn a_fork_where_the_parent_had_stopped_takes_a_new_prompt() {
    let ws = Workspace::seed();
    assert_eq!(ws.run("检查登录模块", "seed.json", &[]).status.code(), Some(0));
    let last = json(&ws.reloop(&["show", "last", "--steps", "--json"])).as_array().unwrap().len().to_string();
    let refused = ws.reloop(&["fork", "last", "--at", &last]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(stderr(&refused).contains("give the fork a --prompt"), "{}", stderr(&refused));
    let out_of_range = ws.reloop(&["fork", "last", "--at", "999"]);
    assert!(stderr(&out_of_range).contains("outside the session's steps"), "{}", stderr(&out_of_range));

    let script = cassette_path("fork_answer.json");
    let out = ws.reloop(&[
        "fork",
        "last",
        "--at",
        &last,
        "--prompt",
        "and now?",
        "--script",
        script.to_str().unwrap(),
        "--output-format",
        "json",
    ]);
    assert_eq!(json(&out)["result"], "A different ending, from the fork.");
    let messages = json(&ws.reloop(&["export", "last", "--format", "messages"]));
    let texts: Vec<String> = messages.as_array().unwrap().iter().map(|m| m["content"].to_string()).collect();
    assert_eq!(texts.len(), 8, "the parent's six messages, the prompt and the answer");
    assert!(texts[6].contains("and now?"), "{}", texts[6]);
    assert_eq!(ws.reloop(&["replay", "last"]).status.code(), Some(0));
}

#[test]
fn show_turn_rebuilds_the_exact_request_the_provider_sent() {
    let ws = Workspace::seed();
    let text = std::fs::read_to_string(cassette_path("seed.json")).unwrap();
    let cwd = serde_json::to_string(ws.cwd().to_str().unwrap()).unwrap();
    let cassette: Value = serde_json::from_str(&text.replace("{{cwd}}", cwd.trim_matches('"'))).unwrap();
    let canned = cassette["responses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| Canned::Sse(sse_from_message(&r["message"])))
        .collect();
    let server = FakeServer::start(canned);
    let cwd = ws.cwd();
    let out = ws.reloop_env(
        &["run", "检查登录模块", "--cwd", cwd.to_str().unwrap(), "--base-url", &server.url],
        &[("ANTHROPIC_API_KEY", "sk-ant-test")],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let sent = server.requests();
    assert_eq!(sent.len(), 3);
    for (turn, request) in sent.iter().enumerate() {
        let turn = (turn + 1).to_string();
        let shown = json(&ws.reloop(&["show", "last", "--turn", &turn]));
        assert_eq!(shown["format"], "anthropic");
        assert_eq!(shown["body"], request.body, "turn {turn}");
    }
    let by_number = json(&ws.reloop(&["show", "last", "--request", "2"]));
    assert_eq!(by_number["body"], sent[1].body);
    let missing = ws.reloop(&["show", "last", "--turn", "9"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("sent no model request at turn 9"));
}

#[test]
fn why_covers_imported_sessions_as_a_graph() {
    let ws = Workspace::seed();
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/journals/claude_code_tool_turn.jsonl");
    let out = ws.reloop(&["import", "claude-code", fixture.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let dot = stdout(&ws.reloop(&["why", "last", "--dot"]));
    assert!(dot.starts_with("digraph reloop {"), "{dot}");
    assert!(dot.contains("next_turn") && dot.contains("completed"), "{dot}");
    assert!(dot.trim_end().ends_with('}'));
    let refused = ws.reloop(&["resume", "last"]);
    assert_eq!(refused.status.code(), Some(0), "an imported session is finished: {}", stderr(&refused));
}

#[test]
fn why_dot_draws_the_seed_sessions_path() {
    let ws = Workspace::seed();
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/journals/scripted_seed.json");
    assert_eq!(ws.reloop(&["import", "journal", file.to_str().unwrap()]).status.code(), Some(0));
    let dot = ws.reloop(&["why", "last", "--dot"]);
    assert_eq!(dot.status.code(), Some(0));
    // The session id changes when the corpus is re-recorded; the path must not.
    let dump: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let text = stdout(&dot).replace(dump["header"]["id"].as_str().unwrap(), "[SESSION]");
    common::settings().bind(|| insta::assert_snapshot!("seed_why_dot", text));
}
