//! Tool calls of one assistant message through the CLI: safe calls run in parallel and their
//! results come back in `tool_use` order in one user message; a session mixing parallel reads, an
//! edit and a refused write replays identical, stream and all; a failing Bash call cancels its
//! parallel siblings rather than waiting for them.

mod common;

use std::time::{Duration, Instant};

use common::{call, json_lines, response, stderr, stdout, text, Workspace};
use serde_json::{json, Value};

/// The tool results of each user message: `(tool_use_id, content, is_error)`.
fn results(lines: &[Value]) -> Vec<Vec<(String, String, bool)>> {
    lines
        .iter()
        .filter(|l| l["type"] == "user")
        .map(|user| {
            user["message"]["content"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| {
                    (
                        b["tool_use_id"].as_str().unwrap().to_string(),
                        b["content"].as_str().unwrap().to_string(),
                        b["is_error"].as_bool().unwrap_or(false),
                    )
                })
                .collect()
        })
        .collect()
}

fn result(id: &str, content: impl Into<String>, is_error: bool) -> (String, String, bool) {
    (id.to_string(), content.into(), is_error)
}

/// A stream-json output with its timings blanked, the one thing a replay cannot reproduce.
fn without_timings(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
            if v.get("duration_ms").is_some() {
                v["duration_ms"] = Value::Null;
            }
            v
        })
        .collect()
}

#[test]
fn parallel_reads_an_edit_and_a_refused_write_replay_identical() {
    let ws = Workspace::seed();
    let outside = ws.dir.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let outside = std::fs::canonicalize(outside).unwrap();
    let login = ws.cwd().join("src/auth/login.ts");
    let out = ws.run_responses(
        "tighten the login limit",
        vec![
            response(
                "msg_1",
                json!([
                    {"type": "text", "text": "Looking around."},
                    call("toolu_read", "Read", json!({"file_path": login, "limit": 6})),
                    call("toolu_grep", "Grep", json!({"pattern": "MAX_ATTEMPTS", "output_mode": "content"})),
                    call("toolu_glob", "Glob", json!({"pattern": "**/*.ts"})),
                ]),
                "tool_use",
                30,
            ),
            response(
                "msg_2",
                json!([
                    call("toolu_edit", "Edit", json!({"file_path": login, "old_string": "const MAX_ATTEMPTS = 5;", "new_string": "const MAX_ATTEMPTS = 3;"})),
                    call("toolu_write", "Write", json!({"file_path": "../outside/notes.txt", "content": "limit lowered"})),
                ]),
                "tool_use",
                30,
            ),
            response("msg_3", text("Lowered the limit to 3."), "end_turn", 10),
        ],
        // An allow rule for edits inside the workspace, and nothing else.
        &["--allowed-tools", "Edit"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = json_lines(&out);
    // A concurrent batch's results go back as they completed (Claude Code's order), which the
    // timing decides: the batches are compared as sets.
    let mut got = results(&lines);
    got.iter_mut().for_each(|batch| batch.sort());
    let mut expected = vec![
            vec![
                result(
                    "toolu_read",
                    "1\texport interface Credentials {\n2\t  username: string;\n3\t  password: string;\n4\t}\n5\t\n6\tconst MAX_ATTEMPTS = 5;",
                    false
                ),
                result(
                    "toolu_grep",
                    "src/auth/login.ts:6:const MAX_ATTEMPTS = 5;\nsrc/auth/login.ts:11:  if (tries >= MAX_ATTEMPTS) {",
                    false
                ),
                result("toolu_glob", "src/auth/login.ts", false),
            ],
            vec![
                // Claude Code's note on a file the model now knows as written (flag 24).
                result(
                    "toolu_edit",
                    format!(
                        "The file {} has been updated successfully. (file state is current in your context — no need to Read it back)",
                        login.display()
                    ),
                    false
                ),
                result(
                    "toolu_write",
                    format!(
                        "Claude requested permissions to write to {}, but you haven't granted it yet.",
                        outside.join("notes.txt").display()
                    ),
                    true
                ),
            ],
        ];
    expected.iter_mut().for_each(|batch| batch.sort());
    assert_eq!(got, expected, "each message's results in one user message");
    assert!(std::fs::read_to_string(&login).unwrap().contains("const MAX_ATTEMPTS = 3;"));
    assert!(!outside.join("notes.txt").exists(), "the refused write did not run");
    let last = lines.last().unwrap();
    assert_eq!(last["terminal_reason"], "completed");
    assert_eq!(last["num_turns"], 3);
    assert_eq!(last["permission_denials"][0]["tool_use_id"], "toolu_write");

    let replay = ws.reloop(&["replay", "last"]);
    assert_eq!(replay.status.code(), Some(0), "{}{}", stdout(&replay), stderr(&replay));
    assert!(stdout(&replay).contains(": identical"), "{}", stdout(&replay));
    let replayed = ws.reloop(&["replay", "last", "--output-format", "stream-json"]);
    assert_eq!(replayed.status.code(), Some(0), "{}", stderr(&replayed));
    assert_eq!(without_timings(&stdout(&replayed)), without_timings(&stdout(&out)));
}

/// `tail -f` only reads (so it runs in parallel with other reads) and never ends by itself.
const NEVER_ENDS: &str = "tail -f README.md";

#[test]
fn a_failing_bash_call_cancels_its_slow_parallel_sibling() {
    let ws = Workspace::seed();
    assert!(reloop_tools::is_read_only_command(NEVER_ENDS) && reloop_tools::is_read_only_command("ls nonexistent-dir"));
    let started = Instant::now();
    let out = ws.run_responses(
        "look",
        vec![
            response(
                "msg_1",
                json!([
                    // Left alone, the sibling would run until its 20 s timeout.
                    call("toolu_slow", "Bash", json!({"command": NEVER_ENDS, "timeout": 20000})),
                    call("toolu_ls", "Bash", json!({"command": "ls nonexistent-dir"})),
                ]),
                "tool_use",
                20,
            ),
            response("msg_2", text("That folder is missing."), "end_turn", 5),
        ],
        &[],
    );
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = json_lines(&out);
    assert_eq!(
        results(&lines),
        // As they completed (Claude Code's order): the failure, then the sibling it cancelled.
        vec![vec![
            result("toolu_ls", "Exit code 2\nls: cannot access 'nonexistent-dir': No such file or directory", true),
            result(
                "toolu_slow",
                "<tool_use_error>Cancelled: parallel tool call Bash(ls nonexistent-dir) errored</tool_use_error>",
                true
            ),
        ]]
    );
    assert!(took < Duration::from_secs(10), "the sibling was stopped, not waited for: {took:?}");
    assert_eq!(lines.last().unwrap()["permission_denials"], json!([]), "read-only calls need no permission");
    assert!(ws.replays_identical());
}
