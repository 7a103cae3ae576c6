//! The CLI against a hostile session: signals end a run the way Ctrl-C does (issue 10, family 8),
//! text a person reads never carries raw terminal controls (family 9), a reader that goes away is
//! a normal end, and no journal row outgrows its cap (family 6).

mod common;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::Workspace;
use serde_json::{json, Value};

/// `(ppid, pgrp, state)` of a `/proc/PID/stat` line; fields counted after the command's `)`.
fn stat_of(pid: u32) -> Option<(u32, u32, char)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut fields = stat[stat.rfind(')')? + 1..].split_whitespace();
    let state = fields.next()?.chars().next()?;
    Some((fields.next()?.parse().ok()?, fields.next()?.parse().ok()?, state))
}

fn all_pids() -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse().ok()))
        .collect()
}

/// The live (not zombie) processes among `pids`.
fn live(pids: &[u32]) -> Vec<u32> {
    pids.iter().copied().filter(|p| matches!(stat_of(*p), Some((_, _, s)) if s != 'Z')).collect()
}

/// Every live descendant of `root`, children before grandchildren.
fn descendants(root: u32) -> Vec<u32> {
    let parents: Vec<(u32, u32)> =
        all_pids().into_iter().filter_map(|p| stat_of(p).filter(|s| s.2 != 'Z').map(|s| (p, s.0))).collect();
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(parents.iter().filter(|(_, pp)| *pp == parent).map(|(p, _)| *p));
        i += 1;
    }
    found.split_off(1)
}

/// The processes the Bash command of `reloop` (pid `parent`) started, once its sleep runs:
/// every descendant of reloop, whatever session or group the sandbox puts them in.
fn wait_for_tool(parent: u32) -> Vec<u32> {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        let tool = descendants(parent);
        let sleeping = tool
            .iter()
            .any(|p| std::fs::read(format!("/proc/{p}/cmdline")).is_ok_and(|c| c.starts_with(b"sleep\x00300")));
        if sleeping {
            return tool;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("the Bash tool of reloop {parent} never started");
}

/// Writes a cassette of `responses` and starts `reloop run` on it (text output) with Bash allowed.
fn spawn_run(ws: &Workspace, responses: Vec<Value>, extra: &[&str]) -> Child {
    let path = ws.dir.path().join("cassette.json");
    std::fs::write(&path, json!({ "responses": responses }).to_string()).unwrap();
    common::reloop_bin()
        .args(["run", "go", "--script", path.to_str().unwrap(), "--cwd", ws.cwd().to_str().unwrap()])
        .args(["--allowed-tools", "Bash"])
        .args(extra)
        .env("RELOOP_JOURNAL", ws.journal())
        .env_remove("ANTHROPIC_API_KEY")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn kill(pid: u32, signal: &str) {
    assert!(Command::new("kill").args([signal, &pid.to_string()]).status().unwrap().success());
}

/// Waits at most `limit` for `child` to exit.
fn wait_bounded(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("reloop did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn sleeping_bash() -> Vec<Value> {
    vec![common::response(
        "msg_01",
        json!([common::call("toolu_01", "Bash", json!({"command": "sleep 300; echo never", "description": "wait"}))]),
        "tool_use",
        20,
    )]
}

/// Sends `signals` to a run whose Bash command sleeps; returns the exit code, after checking
/// that the abort is journaled, the session replays identical and the command's processes are gone.
fn signal_a_running_tool(signals: &[&str]) -> i32 {
    let ws = Workspace::seed();
    let mut child = spawn_run(&ws, sleeping_bash(), &[]);
    let tool = wait_for_tool(child.id());
    for (i, signal) in signals.iter().enumerate() {
        if i > 0 {
            // Signals pending together are delivered lowest number first, whatever order they
            // were sent in: the second is sent once the first has been seen.
            std::thread::sleep(Duration::from_millis(100));
        }
        kill(child.id(), signal);
    }
    let status = wait_bounded(&mut child, Duration::from_secs(10));
    let mut deadline_left = 50;
    while !live(&tool).is_empty() && deadline_left > 0 {
        // The kill is sent before reloop exits; the kernel may take a moment to tear down.
        std::thread::sleep(Duration::from_millis(20));
        deadline_left -= 1;
    }
    assert_eq!(live(&tool), Vec::<u32>::new(), "a process of the Bash command outlived reloop");

    let steps: Vec<Value> =
        serde_json::from_str(&common::stdout(&ws.reloop(&["show", "last", "--steps", "--json"]))).unwrap();
    let last = steps.last().unwrap();
    assert_eq!(last["event"], "abort", "{last}");
    assert_eq!(last["reason"]["kind"], "terminal", "{last}");
    assert_eq!(last["reason"]["reason"], "aborted_tools", "{last}");
    assert_eq!(last["reason"]["evidence"]["tool_use_ids"], json!(["toolu_01"]), "{last}");
    assert!(ws.replays_identical());
    status.code().unwrap_or(-1)
}

#[test]
fn sigterm_aborts_the_run_kills_the_tool_group_and_exits_143() {
    assert_eq!(signal_a_running_tool(&["-TERM"]), 143);
}

#[test]
fn sighup_aborts_the_run_kills_the_tool_group_and_exits_129() {
    assert_eq!(signal_a_running_tool(&["-HUP"]), 129);
}

#[test]
fn a_second_signal_while_aborting_still_ends_with_the_first_ones_code() {
    assert_eq!(signal_a_running_tool(&["-TERM", "-INT"]), 143);
}

#[test]
fn a_signal_before_the_prompt_arrives_ends_the_run_at_once() {
    // The prompt is awaited on stdin; SIGTERM must not be swallowed while nothing runs yet.
    let ws = Workspace::seed();
    let mut child = common::reloop_bin()
        .args(["run", "--input-format", "stream-json", "--script", "/nonexistent.json"])
        .args(["--cwd", ws.cwd().to_str().unwrap()])
        .env("RELOOP_JOURNAL", ws.journal())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    kill(child.id(), "-TERM");
    assert_eq!(wait_bounded(&mut child, Duration::from_secs(10)).code(), Some(143));
}

/// The two sequences of the issue: retitle the terminal, clear the screen.
const EVIL: &str = "\u{1b}]0;pwned\u{7}\u{1b}[2J";

fn raw_controls(text: &str) -> Vec<char> {
    text.chars().filter(|c| matches!(c, '\u{1b}' | '\u{7}' | '\u{8}' | '\u{9b}' | '\u{202e}')).collect()
}

/// A session whose file name, file content, Bash output, tool id and answer carry terminal
/// controls: a Glob lists the file, a Read reads it, Bash prints the sequences, the answer
/// quotes them.
fn hostile_session(ws: &Workspace) -> std::process::Output {
    let name = format!("notes{EVIL}.txt");
    std::fs::write(ws.cwd().join(&name), format!("line one{EVIL}\nbidi \u{202e}txt.exe\n")).unwrap();
    let path = format!("{}/{name}", ws.cwd().display());
    let responses = vec![
        common::response(
            "msg_01",
            json!([
                common::call(&format!("toolu_{EVIL}"), "Glob", json!({"pattern": "*.txt"})),
                common::call("toolu_02", "Read", json!({"file_path": path})),
                common::call("toolu_03", "Bash", json!({"command": "printf 'out\\033]0;pwned\\007\\033[2J\\n'"})),
            ]),
            "tool_use",
            20,
        ),
        common::response("msg_02", common::text(&format!("done{EVIL}\u{9b}31m")), "end_turn", 5),
    ];
    let cassette = ws.dir.path().join("hostile.json");
    std::fs::write(&cassette, json!({ "responses": responses }).to_string()).unwrap();
    ws.reloop(&[
        "run",
        "go",
        "--script",
        cassette.to_str().unwrap(),
        "--cwd",
        ws.cwd().to_str().unwrap(),
        "--allowed-tools",
        "Bash",
    ])
}

#[test]
fn no_raw_terminal_control_reaches_a_person_reading_a_hostile_session() {
    let ws = Workspace::seed();
    let run = hostile_session(&ws);
    assert_eq!(run.status.code(), Some(0), "{}", common::stderr(&run));
    let show = common::stdout(&ws.reloop(&["show", "last"]));
    // The hostile text is there, visibly: the file name, the file content and the Bash output.
    assert!(show.contains("notes\\u{1b}]0;pwned\\u{7}\\u{1b}[2J.txt"), "{show}");
    assert!(show.contains("line one\\u{1b}]0;pwned"), "{show}");
    assert!(show.contains("bidi \\u{202e}txt.exe"), "{show}");
    assert!(show.contains("out\\u{1b}]0;pwned\\u{7}\\u{1b}[2J"), "{show}");
    let why = common::stdout(&ws.reloop(&["why", "last"]));
    assert!(why.contains("Glob \"*.txt\" (toolu_\\u{1b}]0;pwned"), "{why}");
    for (what, text) in [
        ("run (stdout)", common::stdout(&run)),
        ("run (stderr)", common::stderr(&run)),
        ("show", show),
        ("show --steps", common::stdout(&ws.reloop(&["show", "last", "--steps"]))),
        ("why", why),
        ("sessions", common::stdout(&ws.reloop(&["sessions"]))),
        ("replay", common::stdout(&ws.reloop(&["replay", "last"]))),
        ("replay --output-format text", common::stdout(&ws.reloop(&["replay", "last", "--output-format", "text"]))),
        ("an error echoing its input", common::stderr(&ws.reloop(&["show", EVIL]))),
    ] {
        assert_eq!(raw_controls(&text), Vec::<char>::new(), "{what} printed raw controls:\n{text}");
    }
}

#[test]
fn json_output_keeps_the_exact_values_without_raw_controls() {
    let ws = Workspace::seed();
    assert!(hostile_session(&ws).status.success());
    let out = ws.reloop(&["show", "last", "--json"]);
    let text = common::stdout(&out);
    assert_eq!(raw_controls(&text), Vec::<char>::new(), "{text}");
    let shown: Value = serde_json::from_str(&text).unwrap();
    let answer = &shown["messages"].as_array().unwrap().last().unwrap()["content"][0]["text"];
    assert_eq!(answer.as_str().unwrap(), format!("done{EVIL}\u{9b}31m"));
    let export = common::stdout(&ws.reloop(&["export", "last", "--format", "stream-json"]));
    assert_eq!(raw_controls(&export), Vec::<char>::new(), "{export}");
    assert!(export.lines().all(|l| serde_json::from_str::<Value>(l).is_ok()));
}

/// Runs `reloop ARGS | head -1` in a shell and returns reloop's own exit code and stderr.
fn into_head(ws: &Workspace, args: &str) -> (i32, String) {
    let bin = env!("CARGO_BIN_EXE_reloop");
    let script = format!("{bin} {args} 2>{err} | head -c 1 >/dev/null; echo ${{PIPESTATUS[0]}}", err = "stderr.txt");
    let out = common::hermetic(&mut Command::new("bash"))
        .args(["-c", &script])
        .current_dir(ws.dir.path())
        .env("RELOOP_JOURNAL", ws.journal())
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .unwrap();
    let code = common::stdout(&out).trim().parse().unwrap();
    (code, std::fs::read_to_string(ws.dir.path().join("stderr.txt")).unwrap_or_default())
}

#[test]
fn a_reader_that_goes_away_is_a_normal_end_for_the_inspecting_commands() {
    let ws = Workspace::seed();
    // Enough output that the pipe's buffer cannot take it all before `head` is gone.
    let big = "x".repeat(200_000);
    let responses = vec![common::response(
        "msg_01",
        json!([{"type": "text", "text": format!("{big}\n").repeat(3)}]),
        "end_turn",
        5,
    )];
    assert!(ws.run_responses("go", responses, &[]).status.success());
    for args in [
        "show last",
        "show last --json",
        "show last --steps",
        "why last",
        "replay last --output-format text",
        "export last --format messages",
        "sessions",
    ] {
        let (code, stderr) = into_head(&ws, args);
        assert_eq!(code, 0, "reloop {args}: {stderr}");
        assert!(!stderr.contains("panicked") && !stderr.contains("Broken pipe"), "reloop {args}: {stderr}");
    }
}

#[test]
fn a_run_whose_reader_goes_away_is_aborted_not_a_panic() {
    let ws = Workspace::seed();
    let big = "y".repeat(100_000);
    let responses = vec![common::response("msg_01", common::text(&format!("{big}\n").repeat(3)), "end_turn", 5)];
    let cassette = ws.dir.path().join("loud.json");
    std::fs::write(&cassette, json!({ "responses": responses }).to_string()).unwrap();
    let cwd = ws.cwd();
    let (code, stderr) = into_head(&ws, &format!("run go --script {} --cwd {}", cassette.display(), cwd.display()));
    assert!(!stderr.contains("panicked"), "{stderr}");
    // As SIGPIPE would end a program that cannot write: 128 + 13.
    assert_eq!(code, 141, "{stderr}");
    assert!(ws.replays_identical());
}

#[test]
fn a_print_mode_run_whose_reader_goes_away_ends_as_a_live_run_does() {
    let ws = Workspace::seed();
    let big = "z".repeat(100_000);
    let responses = vec![common::response("msg_01", common::text(&format!("{big}\n").repeat(3)), "end_turn", 5)];
    let cassette = ws.dir.path().join("loud.json");
    std::fs::write(&cassette, json!({ "responses": responses }).to_string()).unwrap();
    let user = json!({"type": "user", "message": {"role": "user", "content": "go"}});
    std::fs::write(ws.dir.path().join("in.jsonl"), format!("{user}\n")).unwrap();
    let script = cassette.display();
    for args in [
        format!("-p go --script {script} --output-format stream-json --verbose"),
        format!("-p --script {script} --output-format stream-json --verbose --input-format stream-json <in.jsonl"),
    ] {
        let (code, stderr) = into_head(&ws, &args);
        assert!(!stderr.contains("panicked"), "reloop {args}: {stderr}");
        // The same end as `reloop run`'s: 128 + SIGPIPE, not the exit of a finished query.
        assert_eq!(code, 141, "reloop {args}: {stderr}");
    }
    assert!(ws.replays_identical());
}

/// The journal's documented cap on one row (`docs/journal.md`).
const MAX_ROW_BYTES: usize = 8 * 1024 * 1024;

#[test]
fn hook_output_past_a_rows_share_is_cut_and_the_session_finishes_under_the_row_cap() {
    // Five Stop hooks, each at the hooks' own 1 MiB cap on stdout and on stderr: 10 MiB of
    // output in one step, more than a journal row may hold.
    let ws = Workspace::seed();
    let script = ws.cwd().join("loud.sh");
    std::fs::write(
        &script,
        "#!/usr/bin/env bash\nhead -c 1048576 /dev/zero | tr '\\0' o\nhead -c 1048576 /dev/zero | tr '\\0' e >&2\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let hooks: Vec<Value> = (0..5).map(|_| json!({"type": "command", "command": "./loud.sh", "timeout": 30})).collect();
    let settings = ws.dir.path().join("settings.json");
    std::fs::write(&settings, json!({"hooks": {"Stop": [{"matcher": "", "hooks": hooks}]}}).to_string()).unwrap();
    let out = ws.run_responses(
        "go",
        vec![common::response("msg_01", common::text("done"), "end_turn", 5)],
        &["--settings", settings.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(0), "{}", common::stderr(&out));
    assert_eq!(common::json_lines(&out).last().unwrap()["terminal_reason"], "completed");

    let dump: Value =
        serde_json::from_str(&common::stdout(&ws.reloop(&["export", "last", "--format", "journal"]))).unwrap();
    let size = |v: &Value| if v.is_null() { 0 } else { v.to_string().len() };
    let hook_step =
        dump["steps"].as_array().unwrap().iter().find(|s| s["event"]["kind"] == "hook_done").expect("a hook_done step");
    assert!(hook_step["event"].to_string().contains("bytes left out"), "the cut is said");
    for step in dump["steps"].as_array().unwrap() {
        let row = size(&step["event"]) + size(&step["effects"]) + size(&step["reason"]);
        assert!(row <= MAX_ROW_BYTES, "step {} holds {row} bytes", step["seq"]);
    }
    assert!(ws.replays_identical());
    let resume = ws.reloop(&["resume", "last"]);
    assert!(common::stdout(&resume).contains("already finished: completed"), "{}", common::stdout(&resume));
}

#[test]
fn a_session_id_from_an_imported_dump_is_listed_visibly() {
    // Session ids are reloop's own, except in a dump someone hands over.
    let ws = Workspace::seed();
    assert!(hostile_session(&ws).status.success());
    let mut dump: Value =
        serde_json::from_str(&common::stdout(&ws.reloop(&["export", "last", "--format", "journal"]))).unwrap();
    dump["header"]["id"] = json!(format!("evil{EVIL}"));
    let file = ws.dir.path().join("dump.json");
    std::fs::write(&file, dump.to_string()).unwrap();
    let import = ws.reloop(&["import", "journal", file.to_str().unwrap()]);
    assert!(import.status.success(), "{}", common::stderr(&import));
    let sessions = common::stdout(&ws.reloop(&["sessions"]));
    assert!(sessions.contains("evil\\u{1b}]0;pwned\\u{7}\\u{1b}[2J"), "{sessions}");
    for text in [sessions, common::stdout(&import)] {
        assert_eq!(raw_controls(&text), Vec::<char>::new(), "{text}");
    }
}

/// A cassette path to an endless file is refused with a clear error, in bounded time and
/// memory, instead of being read until memory runs out.
#[test]
fn an_endless_cassette_is_refused_not_read_forever() {
    let ws = Workspace::seed();
    let started = Instant::now();
    let out = ws.reloop(&["run", "go", "--script", "/dev/zero"]);
    assert_eq!(out.status.code(), Some(2), "{}", common::stderr(&out));
    let err = common::stderr(&out);
    assert!(err.contains("cannot read the script /dev/zero") && err.contains("at most 128 MiB"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(60), "bounded");
}
