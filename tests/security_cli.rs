//! The CLI against a hostile session: signals end a run the way Ctrl-C does (issue 10, family 8),
//! text a person reads never carries raw terminal controls (family 9), a reader that goes away is
//! a normal end, and no journal row outgrows its cap (family 6).

mod common;

use std::io::Read;
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

/// Live (not zombie) processes in process group `group`.
fn live_in_group(group: u32) -> Vec<u32> {
    all_pids().into_iter().filter(|p| matches!(stat_of(*p), Some((_, g, s)) if g == group && s != 'Z')).collect()
}

/// Writes a cassette of `responses` and starts `reloop run` on it (text output) with Bash allowed.
fn spawn_run(ws: &Workspace, responses: Vec<Value>, extra: &[&str]) -> Child {
    let path = ws.dir.path().join("cassette.json");
    std::fs::write(&path, json!({ "responses": responses }).to_string()).unwrap();
    Command::new(env!("CARGO_BIN_EXE_reloop"))
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

/// The process group of the Bash command `reloop` (pid `parent`) started, once the sleep in it
/// runs: the group leader is reloop's child, and the sleep is in its group.
fn wait_for_tool_group(parent: u32) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        for pid in all_pids() {
            if let Some((ppid, group, _)) = stat_of(pid) {
                if ppid == parent && group == pid && live_in_group(group).len() >= 2 {
                    return group;
                }
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("the Bash tool of reloop {parent} never started");
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
/// that the abort is journaled, the session replays identical and the command's group is gone.
fn signal_a_running_tool(signals: &[&str]) -> i32 {
    let ws = Workspace::seed();
    let mut child = spawn_run(&ws, sleeping_bash(), &[]);
    let group = wait_for_tool_group(child.id());
    for signal in signals {
        kill(child.id(), signal);
    }
    let status = wait_bounded(&mut child, Duration::from_secs(10));
    let mut deadline_left = 50;
    while !live_in_group(group).is_empty() && deadline_left > 0 {
        // The kill is sent before reloop exits; the kernel may take a moment to tear down.
        std::thread::sleep(Duration::from_millis(20));
        deadline_left -= 1;
    }
    assert_eq!(live_in_group(group), Vec::<u32>::new(), "the Bash command's process group outlived reloop");

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
    let mut child = Command::new(env!("CARGO_BIN_EXE_reloop"))
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
