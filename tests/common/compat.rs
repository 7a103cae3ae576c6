//! Print-mode runs under a profile against a fake Anthropic server: the harness of the
//! conformance suites (tests/conformance*.rs).

use std::io::Write;

use serde_json::{json, Value};

use super::fake_server::{sse_from_message, Canned, FakeServer, Recorded};
use super::{response, stderr, stdout, Workspace};

pub fn answer(id: &str, content: Value, stop_reason: &str) -> Canned {
    Canned::Sse(sse_from_message(&response(id, content, stop_reason, 10)["message"]))
}

/// One print-mode run: the prompt on stdin (stream-json), the server's answers, the profile.
pub struct Run {
    pub lines: Vec<Value>,
    pub requests: Vec<Recorded>,
    pub code: Option<i32>,
    pub ws: Workspace,
}

/// `prepare` sets the workspace up and returns more flags (which may name its files).
pub fn run(
    profile: &str,
    answers: Vec<Canned>,
    extra: &[&str],
    prepare: impl FnOnce(&Workspace) -> Vec<String>,
) -> Run {
    let ws = Workspace::seed();
    let more = prepare(&ws);
    let server = FakeServer::start(answers);
    let mut child = ws
        .command(&["--output-format", "stream-json", "--verbose", "--input-format", "stream-json", "--compat", profile])
        .args(if extra.contains(&"--max-retries") { &[][..] } else { &["--max-retries", "0"][..] })
        .args(extra)
        .args(&more)
        .env("ANTHROPIC_BASE_URL", &server.url)
        .env("ANTHROPIC_API_KEY", "test-key")
        .spawn()
        .unwrap();
    let prompt = json!({"type": "user", "message": {"role": "user", "content": "检查登录模块"}});
    writeln!(child.stdin.take().unwrap(), "{prompt}").unwrap();
    let out = child.wait_with_output().unwrap();
    let lines = stdout(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    Run { lines, requests: server.requests(), code: out.status.code(), ws }
}

impl Run {
    pub fn result(&self) -> &Value {
        self.lines.iter().rev().find(|l| l["type"] == "result").expect("a result line")
    }

    /// The text blocks of the last message of request `n` (0-based).
    pub fn last_message(&self, n: usize) -> &Value {
        self.requests[n].body["messages"].as_array().unwrap().last().unwrap()
    }

    pub fn synthetic_texts(&self) -> Vec<String> {
        self.lines
            .iter()
            .filter(|l| l["type"] == "user" && l["isSynthetic"] == true)
            .map(|l| l["message"]["content"][0]["text"].as_str().unwrap().to_string())
            .collect()
    }

    pub fn replays_identical(&self) -> bool {
        self.ws.reloop(&["replay", "last"]).status.code() == Some(0)
    }
}

/// Plain text of a message's content (a string, or its text blocks joined).
pub fn text_of(message: &Value) -> Vec<String> {
    match &message["content"] {
        Value::String(s) => vec![s.clone()],
        Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str().map(str::to_string)).collect(),
        _ => Vec::new(),
    }
}
