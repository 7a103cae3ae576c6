//! The OpenAI-compatible provider (Ollama, vLLM, llama.cpp) through the CLI, against a fake
//! server on 127.0.0.1 speaking chat-completions SSE: parallel tool calls assembled by index.

mod common;

use common::fake_server::{Canned, FakeServer};
use common::{json_lines, stderr, Workspace};
use serde_json::{json, Value};

fn chunk(delta: Value, finish: Option<&str>) -> String {
    let c = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "qwen3",
                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    format!("data: {c}\n\n")
}

#[test]
fn parallel_tool_calls_then_text() {
    let ws = Workspace::seed();
    let mut first = String::new();
    first += &chunk(json!({"role": "assistant", "content": "Looking."}), None);
    first += &chunk(
        json!({"tool_calls": [{"index": 0, "id": "call_a", "type": "function", "function": {"name": "Glob", "arguments": ""}}]}),
        None,
    );
    first += &chunk(
        json!({"tool_calls": [{"index": 1, "id": "call_b", "type": "function", "function": {"name": "Grep", "arguments": "{\"pattern\":"}}]}),
        None,
    );
    first +=
        &chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"pattern\": \"**/*.ts\"}"}}]}), None);
    first += &chunk(json!({"tool_calls": [{"index": 1, "function": {"arguments": " \"login\"}"}}]}), None);
    first += &chunk(json!({}), Some("tool_calls"));
    first += "data: [DONE]\n\n";
    let mut second = chunk(json!({"role": "assistant", "content": "The login module is in src/auth."}), None);
    second += &chunk(json!({}), Some("stop"));
    second += "data: [DONE]\n\n";
    let server = FakeServer::start(vec![Canned::Sse(first), Canned::Sse(second)]);

    let cwd = ws.cwd();
    let out = ws.reloop(&[
        "run",
        "where is login?",
        "--provider",
        "openai",
        "--base-url",
        &server.url,
        "--model",
        "qwen3",
        "--cwd",
        cwd.to_str().unwrap(),
        "--output-format",
        "stream-json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].path, "/v1/chat/completions");
    assert!(requests[0].headers.iter().all(|(k, _)| k != "authorization"), "no key, no Authorization");
    assert_eq!(requests[0].body["model"], "qwen3");
    assert_eq!(requests[0].body["stream"], true);
    // The second request carries both results as tool messages (in the order the two
    // concurrent calls finished, under the default Claude Code profile: sorted here).
    let mut tool_messages: Vec<&Value> =
        requests[1].body["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "tool").collect();
    tool_messages.sort_by_key(|m| m["tool_call_id"].as_str().unwrap_or_default().to_string());
    assert_eq!(tool_messages.len(), 2);
    assert_eq!(tool_messages[0]["tool_call_id"], "call_a");
    assert_eq!(tool_messages[0]["content"], "src/auth/login.ts");
    assert_eq!(tool_messages[1]["tool_call_id"], "call_b");
    assert_eq!(tool_messages[1]["content"], "Found 1 file\nsrc/auth/login.ts");

    let lines = json_lines(&out);
    assert_eq!(lines.last().unwrap()["terminal_reason"], "completed");
    assert_eq!(lines.last().unwrap()["result"], "The login module is in src/auth.");
    assert_eq!(ws.reloop(&["replay", "last"]).status.code(), Some(0));
    let why = common::stdout(&ws.reloop(&["why", "last"]));
    assert!(why.contains("next_turn: the model asked for Glob \"**/*.ts\" (call_a), Grep \"login\" (call_b)"), "{why}");
}
