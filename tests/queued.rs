//! Input queued while the loop runs (`--input-format stream-json`): attached at the next turn
//! boundary, or starting a turn of its own (`queued_input`) when the model had finished; its
//! life (queued, consumed, completed) is reported; replay is identical.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{response, text, Workspace};
use serde_json::{json, Value};

fn user_line(text: &str) -> String {
    json!({"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": text}]}}).to_string() + "\n"
}

/// Runs with stdin open; after `when` appears in the output, sends `later` as a queued message.
fn run_queued(ws: &Workspace, responses: Vec<Value>, when: &str, later: &str, extra: &[&str]) -> Vec<Value> {
    let path = ws.dir.path().join("queued.json");
    std::fs::write(&path, json!({ "responses": responses }).to_string()).unwrap();
    let cwd = ws.cwd();
    let mut child = common::reloop_bin()
        .args(["run", "--script", path.to_str().unwrap(), "--cwd", cwd.to_str().unwrap()])
        .args(["--input-format", "stream-json", "--output-format", "stream-json"])
        .args(extra)
        .env("RELOOP_JOURNAL", ws.journal())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(user_line("check the login module").as_bytes()).unwrap();
    let mut lines = Vec::new();
    let mut sent = false;
    let deadline = Instant::now() + Duration::from_secs(20);
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        if !sent && line.contains(when) {
            stdin.write_all(user_line(later).as_bytes()).unwrap();
            stdin.flush().unwrap();
            sent = true;
        }
        lines.push(serde_json::from_str::<Value>(&line).unwrap());
        assert!(Instant::now() < deadline, "the run took too long");
    }
    drop(stdin);
    child.wait().unwrap();
    assert!(sent, "never saw {when}");
    lines
}

fn statuses(lines: &[Value]) -> Vec<String> {
    lines.iter().filter(|l| l["subtype"] == "queued_input").map(|l| l["status"].as_str().unwrap().to_string()).collect()
}

#[test]
fn a_message_queued_while_tools_run_joins_their_results() {
    let ws = Workspace::seed();
    let responses = vec![
        response(
            "msg_1",
            json!([{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "sleep 1"}}]),
            "tool_use",
            5,
        ),
        response("msg_2", text("Checked, and noted the extra request."), "end_turn", 5),
    ];
    let lines = run_queued(&ws, responses, "\"assistant\"", "also look at logout", &["--allowed-tools", "Bash"]);
    assert_eq!(statuses(&lines), vec!["queued", "consumed", "completed"]);
    let user = lines.iter().find(|l| l["type"] == "user").unwrap();
    let content = user["message"]["content"].as_array().unwrap();
    assert_eq!(content[0]["tool_use_id"], "toolu_1");
    assert_eq!(content[1]["text"], "also look at logout");
    assert_eq!(lines.last().unwrap()["terminal_reason"], "completed");
    assert!(ws.replays_identical());
}

#[test]
fn a_message_queued_while_the_model_answers_starts_a_turn_of_its_own() {
    let ws = Workspace::seed();
    let mut first = response("msg_1", text("The login module looks fine."), "end_turn", 5);
    first["delay_ms"] = json!(1500);
    let responses = vec![first, response("msg_2", text("Logout is fine too."), "end_turn", 5)];
    let lines = run_queued(&ws, responses, "\"init\"", "and logout?", &[]);
    assert_eq!(statuses(&lines), vec!["queued", "consumed", "completed"]);
    assert_eq!(lines.iter().filter(|l| l["type"] == "assistant").count(), 2);
    assert_eq!(lines.last().unwrap()["result"], "Logout is fine too.");
    let why = ws.why();
    assert!(why.contains("queued_input: the user queued queued-1 while the model worked"), "{why}");
    common::settings().bind(|| insta::assert_snapshot!("reason_queued_input", why));
    assert!(ws.replays_identical());
}
