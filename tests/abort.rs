//! Ctrl-C becomes an abort event (exit code 130): unanswered tool calls get an answer ("Interrupted
//! by user", or the Claude Code profile's rejection text for a call stopped while it ran, flag 28),
//! the loop stops with `aborted_streaming` or `aborted_tools`, and the session still replays
//! identical.

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{cassette_path, Workspace};
use serde_json::Value;

/// Starts `reloop run`, waits until `ready` appears on stdout's lines so far, sends SIGINT.
fn run_and_interrupt(ws: &Workspace, cassette: &str, ready: &str) -> (Option<i32>, Vec<Value>, Duration) {
    let cassette = cassette_path(cassette);
    let run = ["run", "go", "--script", cassette.to_str().unwrap(), "--allowed-tools", "Bash"];
    interrupt(ws, &[&run[..], &["--output-format", "stream-json"]].concat(), ready)
}

/// Starts reloop with `args` in the workspace, waits until `ready` appears on stdout's lines so
/// far, sends SIGINT.
fn interrupt(ws: &Workspace, args: &[&str], ready: &str) -> (Option<i32>, Vec<Value>, Duration) {
    let mut child = common::reloop_bin()
        .args(args)
        .current_dir(ws.cwd())
        .env("RELOOP_JOURNAL", ws.journal())
        .env("CLAUDE_CONFIG_DIR", ws.claude_dir())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut lines = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !lines.iter().any(|l: &String| l.contains(ready)) {
        let line = rx.recv_timeout(deadline.saturating_duration_since(Instant::now())).expect("ready line");
        lines.push(line);
    }
    std::thread::sleep(Duration::from_millis(200));
    let sent = Instant::now();
    Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    let status = child.wait().unwrap();
    let took = sent.elapsed();
    lines.extend(rx.iter());
    let values = lines.iter().map(|l| serde_json::from_str(l).unwrap()).collect();
    (status.code(), values, took)
}

#[test]
fn ctrl_c_while_the_model_streams_ends_with_aborted_streaming() {
    let ws = Workspace::seed();
    let (code, lines, took) = run_and_interrupt(&ws, "slow_second_request.json", "\"tool_result\"");
    assert_eq!(code, Some(130));
    assert!(took < Duration::from_secs(5), "abort took {took:?}");
    let result = lines.last().unwrap();
    assert_eq!(result["terminal_reason"], "aborted_streaming");
    let last_user = lines.iter().rev().find(|l| l["type"] == "user").unwrap();
    assert_eq!(last_user["message"]["content"][0]["text"], "[Request interrupted by user]");
    let why = common::stdout(&ws.reloop(&["why", "last"]));
    assert!(why.contains("stop: aborted_streaming: the caller aborted the run"), "{why}");
    common::settings().bind(|| insta::assert_snapshot!("reason_aborted_streaming", why));
    assert_eq!(ws.reloop(&["replay", "last"]).status.code(), Some(0));
}

#[test]
fn ctrl_c_in_print_mode_aborts_the_query_and_exits_as_a_run_does() {
    let ws = Workspace::seed();
    let cassette = cassette_path("slow_bash.json");
    let print = ["-p", "go", "--script", cassette.to_str().unwrap(), "--allowedTools", "Bash"];
    let (code, lines, took) =
        interrupt(&ws, &[&print[..], &["--output-format", "stream-json", "--verbose"]].concat(), "\"assistant\"");
    assert_eq!(code, Some(130));
    assert!(took < Duration::from_secs(5), "abort took {took:?}");
    let result = lines.last().unwrap();
    assert_eq!(result["type"], "result");
    assert_eq!(result["is_error"], true, "{result}");
    let why = common::stdout(&ws.reloop(&["why", "last"]));
    assert!(why.contains("stop: aborted_tools: the caller aborted the run; interrupted toolu_02"), "{why}");
    assert_eq!(ws.reloop(&["replay", "last"]).status.code(), Some(0));
}

#[test]
fn ctrl_c_while_tools_run_interrupts_the_unfinished_ones() {
    let ws = Workspace::seed();
    let (code, lines, took) = run_and_interrupt(&ws, "slow_bash.json", "\"assistant\"");
    assert_eq!(code, Some(130));
    assert!(took < Duration::from_secs(5), "abort took {took:?}");
    assert_eq!(lines.last().unwrap()["terminal_reason"], "aborted_tools");
    let user = lines.iter().rev().find(|l| l["type"] == "user").unwrap();
    let content = user["message"]["content"].as_array().unwrap();
    // Glob finished before the abort; Bash did not.
    assert_eq!(content[0]["tool_use_id"], "toolu_01");
    assert!(content[0].get("is_error").is_none());
    assert_eq!(content[1]["tool_use_id"], "toolu_02");
    // The default profile's (2.1.332's) words for a call stopped while it ran (flag 28).
    assert_eq!(content[1]["content"], reloop_core::profile::STOPPED_WHILE_RUNNING);
    assert_eq!(content[1]["is_error"], true);
    assert_eq!(content[2]["text"], "[Request interrupted by user for tool use]");
    let why = common::stdout(&ws.reloop(&["why", "last"]));
    assert!(why.contains("stop: aborted_tools: the caller aborted the run; interrupted toolu_02"), "{why}");
    common::settings().bind(|| insta::assert_snapshot!("reason_aborted_tools", why));
    assert_eq!(ws.reloop(&["replay", "last"]).status.code(), Some(0));
}
