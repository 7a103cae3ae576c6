//! Claude Code's session files, as reloop writes them from the journal: where they go (the
//! project folder name the SDKs compute), that `--no-session-persistence` writes none, that they
//! import back to the journaled conversation, and that the Python Agent SDK's own session readers
//! (`list_sessions`, `get_session_messages`, `list_subagents`, `get_subagent_messages`) and a
//! truncating resume (`resume_session_at` a message they returned) work on them.
//!
//! The SDK part runs `tests/sdk/transcripts.py` with the real SDK (skipped with a notice when it
//! is not installed, as tests/sdk.rs is).

mod common;
// Shared with tests/sdk.rs, which uses all of it.
#[allow(dead_code)]
#[path = "sdk/harness.rs"]
mod harness;

use std::path::Path;
use std::process::Command;

use common::fake_server::FakeServer;
use common::{call, stderr, stdout, text, Workspace};
use harness::*;
use serde_json::{json, Value};

/// Every file under `dir`, relative to it, sorted.
fn files_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    out.sort();
    out
}

fn lines_of(file: &Path) -> Vec<Value> {
    std::fs::read_to_string(file)
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// `reloop -p PROMPT --output-format stream-json --verbose EXTRA` against `server`.
fn print_run(ws: &Workspace, server: &FakeServer, prompt: &str, extra: &[&str]) -> Vec<Value> {
    let mut args = vec!["-p", prompt, "--output-format", "stream-json", "--verbose", "--max-retries", "0"];
    args.extend_from_slice(extra);
    let out = ws
        .command(&args)
        .env("ANTHROPIC_BASE_URL", &server.url)
        .env("ANTHROPIC_API_KEY", "test-key")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains("session file was not written"), "{}", stderr(&out));
    stdout(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn tool_then_answer(ws: &Workspace) -> FakeServer {
    let login = ws.cwd().join("src/auth/login.ts");
    FakeServer::start(vec![
        answer(
            "msg_1",
            json!([{"type": "text", "text": "Reading it."}, call("toolu_1", "Read", json!({"file_path": login}))]),
            "tool_use",
            5,
        ),
        answer("msg_2", text("login() hard-codes admin/secret."), "end_turn", 7),
    ])
}

#[test]
fn a_print_run_writes_its_session_file_where_claude_code_does_one_line_per_block() {
    let ws = Workspace::seed();
    let server = tool_then_answer(&ws);
    let lines = print_run(&ws, &server, "check the login module", &[]);
    let id = lines[0]["session_id"].as_str().unwrap().to_string();
    let folder = ws.cwd().to_str().unwrap().replace(|c: char| !c.is_ascii_alphanumeric(), "-");
    let file = ws.claude_dir().join("projects").join(&folder).join(format!("{id}.jsonl"));
    assert_eq!(files_under(&ws.claude_dir()), vec![format!("projects/{folder}/{id}.jsonl")]);

    let transcript = lines_of(&file);
    let shape: Vec<(String, Value)> = transcript
        .iter()
        .map(|l| {
            let blocks = match &l["message"]["content"] {
                Value::Array(b) => json!(b.iter().map(|b| b["type"].clone()).collect::<Vec<_>>()),
                other => other.clone(),
            };
            (l["type"].as_str().unwrap().to_string(), blocks)
        })
        .collect();
    assert_eq!(
        shape,
        vec![
            ("user".to_string(), json!("check the login module")),
            ("assistant".to_string(), json!(["text"])),
            ("assistant".to_string(), json!(["tool_use"])),
            ("user".to_string(), json!(["tool_result"])),
            ("assistant".to_string(), json!(["text"])),
        ],
        "{transcript:#?}"
    );
    // Both halves of the first response name it, and the chain links every line to the one before.
    assert_eq!(transcript[1]["message"]["id"], transcript[2]["message"]["id"]);
    for pair in transcript.windows(2) {
        assert_eq!(pair[1]["parentUuid"], pair[0]["uuid"]);
    }
    for line in &transcript {
        assert_eq!(line["sessionId"], id.as_str());
        assert_eq!(line["cwd"], ws.cwd().to_str().unwrap());
        assert_eq!(line["isSidechain"], false);
        assert!(is_uuid(line["uuid"].as_str().unwrap()), "{line}");
    }

    // The file imports back to the conversation the journal holds.
    let imported = ws.reloop(&["import", "claude-code", file.to_str().unwrap(), "--json"]);
    assert_eq!(imported.status.code(), Some(0), "{}", stderr(&imported));
    let journal_messages = ws.reloop(&["export", &id, "--format", "messages"]);
    let back: Value = serde_json::from_str(&stdout(&imported)).unwrap();
    let new_id = back["session_id"].as_str().or(back["id"].as_str()).unwrap_or_else(|| panic!("{back}"));
    let imported_messages = ws.reloop(&["export", new_id, "--format", "messages"]);
    // The context reminder the loop puts before a prompt is no line of a Claude Code session
    // file (Claude Code keeps it apart), so it is the one thing the file does not carry back.
    let strip = |v: Value| -> Vec<Value> {
        let reminder = |b: &Value| b["text"].as_str().is_some_and(|t| t.starts_with("<system-reminder>"));
        v.as_array()
            .unwrap()
            .iter()
            .map(|m| {
                let content: Vec<&Value> = m["content"].as_array().unwrap().iter().filter(|b| !reminder(b)).collect();
                json!({"role": m["role"], "content": content})
            })
            .collect()
    };
    assert_eq!(
        strip(serde_json::from_str(&stdout(&imported_messages)).unwrap()),
        strip(serde_json::from_str(&stdout(&journal_messages)).unwrap())
    );
}

#[test]
fn no_session_persistence_writes_no_file_and_the_session_is_journaled_all_the_same() {
    let ws = Workspace::seed();
    let server = tool_then_answer(&ws);
    let lines = print_run(&ws, &server, "check the login module", &["--no-session-persistence"]);
    assert!(files_under(&ws.claude_dir()).is_empty(), "{:?}", files_under(&ws.claude_dir()));
    let id = lines[0]["session_id"].as_str().unwrap();
    assert_eq!(ws.reloop(&["replay", id]).status.code(), Some(0));
}

#[test]
fn resume_session_at_takes_a_session_file_line_and_forks_there() {
    let ws = Workspace::seed();
    let server = FakeServer::start(vec![
        answer("msg_1", text("first answer"), "end_turn", 3),
        answer("msg_2", text("second answer"), "end_turn", 3),
        answer("msg_3", text("third answer"), "end_turn", 3),
    ]);
    let first = print_run(&ws, &server, "first question", &[]);
    let id = first[0]["session_id"].as_str().unwrap().to_string();
    print_run(&ws, &server, "second question", &["--resume", &id]);
    let folder = ws.cwd().to_str().unwrap().replace(|c: char| !c.is_ascii_alphanumeric(), "-");
    let file = ws.claude_dir().join("projects").join(folder).join(format!("{id}.jsonl"));
    let transcript = lines_of(&file);
    let texts: Vec<String> = transcript.iter().map(|l| l["message"]["content"].to_string()).collect();
    assert_eq!(transcript.len(), 4, "both queries, rewritten from the journal: {texts:?}");
    let at = format!("--resume-session-at={}", transcript[1]["uuid"].as_str().unwrap());
    let forked = print_run(&ws, &server, "third question", &["--resume", &id, &at]);
    assert_ne!(forked[0]["session_id"], id.as_str(), "a truncating resume forks");
    let sent = server.requests();
    let last = sent.last().unwrap().body["messages"].to_string();
    assert!(last.contains("first answer") && !last.contains("second question"), "{last}");
}

/// Runs `tests/sdk/transcripts.py NAME` as tests/sdk.rs runs its scenarios.
fn run_reader(s: &Scenario, name: &str) -> Run {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut cmd = Command::new(s.sdk_dir.join("venv/bin/python"));
    cmd.arg(root.join("tests/sdk/transcripts.py"));
    common::hermetic(&mut cmd)
        .arg(name)
        .env("RELOOP_BIN", env!("CARGO_BIN_EXE_reloop"))
        .env("WORKDIR", s.ws.cwd())
        .env("RELOOP_JOURNAL", s.ws.journal())
        .env("ANTHROPIC_BASE_URL", &s.server.url)
        .env("ANTHROPIC_API_KEY", "sk-ant-fake-key-for-tests")
        .env("HOME", s.ws.dir.path().join("home"))
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env("PYTHONUNBUFFERED", "1")
        .current_dir(s.ws.dir.path());
    for var in ["ANTHROPIC_MODEL", "ANTHROPIC_AUTH_TOKEN", "CLAUDECODE", "CLAUDE_CONFIG_DIR"] {
        cmd.env_remove(var);
    }
    let done = spawn_with_deadline(cmd);
    let lines =
        done.stdout.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect();
    Run {
        sdk: Sdk::Python,
        name: name.to_string(),
        status: done.status,
        stdout: done.stdout,
        stderr: done.stderr,
        lines,
    }
}

/// The (type, text or block types) of each message an SDK reader returned.
fn shapes(messages: &Value) -> Vec<(String, String)> {
    messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let content = &m["message"]["content"];
            let what = match content {
                Value::String(s) => s.clone(),
                Value::Array(blocks) => blocks
                    .iter()
                    .map(|b| {
                        b["text"].as_str().map_or_else(|| b["type"].as_str().unwrap_or("?").to_string(), str::to_string)
                    })
                    .collect::<Vec<_>>()
                    .join("+"),
                other => other.to_string(),
            };
            (m["type"].as_str().unwrap_or("?").to_string(), what)
        })
        .collect()
}

#[test]
fn python_sdk_reads_a_client_session_back_and_resumes_it_truncated_at_a_message() {
    let Some(s) = Scenario::start(|path| {
        vec![
            answer("msg_1", json!([call("toolu_01READ", "Read", json!({"file_path": path("a.txt")}))]), "tool_use", 5),
            answer("msg_2", text("a.txt says hello"), "end_turn", 7),
            answer("msg_3", text("done"), "end_turn", 2),
            answer("msg_4", text("it said hello"), "end_turn", 2),
        ]
    }) else {
        return;
    };
    let run = run_reader(&s, "client_then_truncating_resume").ok();
    let session_id = run.results()[0]["session_id"].as_str().unwrap().to_string();
    let listed = run.events("list_sessions");
    assert!(listed[0]["ids"].as_array().unwrap().contains(&json!(session_id)), "{}", run.dump());
    let read = run.events("session_messages");
    let messages = &read[0]["messages"];
    let got = shapes(messages);
    let want: Vec<(String, String)> = [
        ("user", "read a.txt"),
        ("assistant", "tool_use"),
        ("user", "tool_result"),
        ("assistant", "a.txt says hello"),
        ("user", "and now say done"),
        ("assistant", "done"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(got, want, "{}", run.dump());
    for m in messages.as_array().unwrap() {
        assert_eq!(m["session_id"], json!(session_id));
    }
    // As in Claude Code, a message's uuid in the file is the one the stream gave it live.
    let in_file: Vec<&Value> = messages.as_array().unwrap().iter().map(|m| &m["uuid"]).collect();
    let live: Vec<&Value> = run
        .of_type("assistant")
        .into_iter()
        .filter(|m| m["session_id"] == json!(session_id))
        .map(|m| &m["uuid"])
        .collect();
    assert_eq!(live.len(), 3, "{}", run.dump());
    for uuid in live {
        assert!(in_file.contains(&uuid), "live uuid {uuid} not in the file: {in_file:?}");
    }
    // The resume sent only what came up to the chosen message, then the new prompt.
    let requests = s.requests();
    assert_eq!(requests.len(), 4, "{}", run.dump());
    let last = transcript(&requests[3]);
    assert_in_order(&last, &["read a.txt", "a.txt says hello", "what did a.txt say?"]);
    assert!(!last.contains("and now say done"), "{last}");
    // The fork has a file of its own, holding the kept part and the new query.
    let fork = &read[1]["messages"];
    assert_eq!(shapes(fork).len(), 6, "{}", run.dump());
    assert_eq!(shapes(fork)[4], ("user".to_string(), "what did a.txt say?".to_string()));
}

#[test]
fn python_sdk_lists_a_subagent_and_reads_its_messages() {
    let Some(s) = Scenario::start(|_| {
        vec![
            answer(
                "msg_1",
                json!([call(
                    "toolu_01AGENT",
                    "Agent",
                    json!({"subagent_type": "reader", "description": "Read a.txt", "prompt": "what does a.txt say?",
                        "run_in_background": false})
                )]),
                "tool_use",
                5,
            ),
            answer("msg_2", text("a.txt says hello"), "end_turn", 3),
            answer("msg_3", text("the reader says: hello"), "end_turn", 3),
        ]
    }) else {
        return;
    };
    let agents = s.ws.cwd().join(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("reader.md"),
        "---\nname: reader\ndescription: Reads files\ntools: Read\n---\nYou read files.\n",
    )
    .unwrap();
    let run = run_reader(&s, "subagent").ok();
    let ids = &run.events("subagents")[0]["ids"];
    assert_eq!(ids.as_array().map(Vec::len), Some(1), "{}", run.dump());
    let sub = &run.events("subagent_messages")[0]["messages"];
    assert_eq!(
        shapes(sub),
        vec![
            ("user".to_string(), "what does a.txt say?".to_string()),
            ("assistant".to_string(), "a.txt says hello".to_string())
        ],
        "{}",
        run.dump()
    );
    assert_eq!(sub[0]["parent_tool_use_id"], "toolu_01AGENT");
    // The main session's reader leaves the sidechain out.
    let main = shapes(&run.events("session_messages")[0]["messages"]);
    assert_eq!(main.last().unwrap().1, "the reader says: hello", "{main:?}");
    assert!(!main.iter().any(|(_, t)| t == "a.txt says hello"), "{main:?}");
}
