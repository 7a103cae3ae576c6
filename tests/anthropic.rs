//! The Anthropic provider on the real wire, against a fake server on 127.0.0.1: the seed
//! scenario, retries with their backoff, `x-should-retry: false`, fallback, prompt too long.
//! Every session replays identical without the server.

mod common;

use common::fake_server::{overloaded, sse_from_message, Canned, FakeServer};
use common::{json_lines, stderr, stdout, Workspace};
use serde_json::{json, Value};

const KEY: &str = "sk-ant-test-secret-key-0123456789";

fn seed_messages(ws: &Workspace) -> Vec<Value> {
    let text = std::fs::read_to_string(common::cassette_path("seed.json")).unwrap();
    let cwd = serde_json::to_string(ws.cwd().to_str().unwrap()).unwrap();
    let text = text.replace("{{cwd}}", cwd.trim_matches('"'));
    let cassette: Value = serde_json::from_str(&text).unwrap();
    cassette["responses"].as_array().unwrap().iter().map(|r| r["message"].clone()).collect()
}

fn run(ws: &Workspace, server: &FakeServer, extra: &[&str]) -> std::process::Output {
    let cwd = ws.cwd();
    let mut args = vec!["run", "检查登录模块", "--cwd", cwd.to_str().unwrap(), "--base-url", &server.url];
    args.extend_from_slice(&["--output-format", "stream-json"]);
    args.extend_from_slice(extra);
    ws.reloop_env(&args, &[("ANTHROPIC_API_KEY", KEY)])
}

fn assert_replays_and_keeps_no_secret(ws: &Workspace) {
    let replay = ws.reloop(&["replay", "last"]);
    assert_eq!(replay.status.code(), Some(0), "{}", stdout(&replay));
    let journal = std::fs::read(ws.journal()).unwrap();
    let wal = std::fs::read(ws.journal().with_extension("db-wal")).unwrap_or_default();
    for bytes in [&journal, &wal] {
        assert!(!bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()), "the API key reached the journal");
    }
}

#[test]
fn the_seed_scenario_through_the_anthropic_provider() {
    let ws = Workspace::seed();
    std::fs::write(ws.cwd().join("CLAUDE.md"), "Always answer in Chinese.").unwrap();
    let server = FakeServer::start(seed_messages(&ws).iter().map(|m| Canned::Sse(sse_from_message(m))).collect());
    let out = run(&ws, &server, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stdout(&out).contains(KEY) && !stderr(&out).contains(KEY));

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    for r in &requests {
        assert_eq!(r.path, "/v1/messages");
        let header = |name: &str| r.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
        assert_eq!(header("x-api-key"), Some(KEY));
        assert_eq!(header("anthropic-version"), Some("2023-06-01"));
        assert_eq!(r.body["stream"], true);
        // The default profile's (claude-code-2.1.332) model and its limit.
        assert_eq!(r.body["model"], "claude-opus-5-5");
        assert_eq!(r.body["max_tokens"], 128000);
        let tools: Vec<&str> =
            r.body["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert!(tools.contains(&"Grep") && tools.contains(&"Read"), "{tools:?}");
    }
    let counts: Vec<usize> = requests.iter().map(|r| r.body["messages"].as_array().unwrap().len()).collect();
    assert_eq!(counts, vec![1, 3, 5]);
    assert_eq!(requests[1].body["messages"][2]["content"][0]["content"], "Found 1 file\nsrc/auth/login.ts");

    // What the model is told: instruction files and the date before the prompt, the
    // environment after the system prompt, and cache breakpoints that move forward.
    let first = &requests[0].body["messages"][0]["content"];
    let reminder = first[0]["text"].as_str().unwrap();
    assert!(reminder.starts_with("<system-reminder>\n"), "{reminder}");
    assert!(reminder.contains("Always answer in Chinese."));
    assert!(reminder.contains("# currentDate\nToday's date is "));
    assert_eq!(first[1]["text"], "检查登录模块");
    let system = requests[0].body["system"].to_string();
    assert!(system.contains("You are reloop") && system.contains("Working directory: "), "{system}");
    assert!(system.contains("cache_control"), "{system}");
    for r in &requests {
        let messages = r.body["messages"].as_array().unwrap();
        let last = messages.last().unwrap()["content"].as_array().unwrap().last().unwrap().clone();
        assert_eq!(last["cache_control"], json!({"type": "ephemeral"}), "{last}");
    }

    let lines = json_lines(&out);
    assert_eq!(lines[0]["apiKeySource"], "ANTHROPIC_API_KEY");
    assert_eq!(lines.last().unwrap()["terminal_reason"], "completed");
    assert_replays_and_keeps_no_secret(&ws);
}

fn final_text() -> Value {
    json!({"id": "msg_ok", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
           "content": [{"type": "text", "text": "done"}], "stop_reason": "end_turn",
           "usage": {"input_tokens": 10, "output_tokens": 2}})
}

#[test]
fn two_overloads_then_success_make_three_requests_with_backoff() {
    let ws = Workspace::seed();
    let server =
        FakeServer::start(vec![overloaded(&[]), overloaded(&[]), Canned::Sse(sse_from_message(&final_text()))]);
    let out = run(&ws, &server, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = server.requests();
    assert_eq!(requests.len(), 3);

    let retries: Vec<Value> = json_lines(&out).into_iter().filter(|l| l["subtype"] == "api_retry").collect();
    assert_eq!(retries.len(), 2);
    for (i, (retry, base)) in retries.iter().zip([500u64, 1000]).enumerate() {
        assert_eq!(retry["attempt"], i as u64 + 1);
        assert_eq!(retry["max_retries"], 10);
        assert_eq!(retry["error_status"], 529);
        assert_eq!(retry["error"], "overloaded");
        let delay = retry["retry_delay_ms"].as_u64().unwrap();
        assert!((base..=base + base / 4).contains(&delay), "retry {i}: {delay} ms");
        // The driver really waited that long before asking again.
        let waited = requests[i + 1].at.duration_since(requests[i].at).as_millis() as u64;
        assert!(waited + 20 >= delay, "waited {waited} ms for a {delay} ms delay");
    }
    assert_replays_and_keeps_no_secret(&ws);
}

#[test]
fn x_should_retry_false_makes_one_request() {
    let ws = Workspace::seed();
    let server = FakeServer::start(vec![overloaded(&[("x-should-retry", "false")])]);
    let out = run(&ws, &server, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(server.requests().len(), 1);
    let lines = json_lines(&out);
    let result = lines.last().unwrap();
    assert_eq!(result["terminal_reason"], "model_error");
    assert_eq!(result["is_error"], true);
    assert_eq!(result["result"], "API Error: 529 Overloaded");
    let why = stdout(&ws.reloop(&["why", "last"]));
    assert!(
        why.contains(
            "stop: model_error: model request failed: 529 overloaded_error: Overloaded (x-should-retry: false)"
        ),
        "{why}"
    );
    assert_replays_and_keeps_no_secret(&ws);
}

#[test]
fn retry_after_sets_a_longer_delay_and_exhausted_retries_stop_the_loop() {
    let ws = Workspace::seed();
    let server = FakeServer::start(vec![overloaded(&[("retry-after", "1")]), overloaded(&[])]);
    let out = run(&ws, &server, &["--max-retries", "1", "--compat", "reloop"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(server.requests().len(), 2);
    let lines = json_lines(&out);
    let retry = lines.iter().find(|l| l["subtype"] == "api_retry").unwrap();
    assert_eq!(retry["retry_delay_ms"], 1000);
    let why = stdout(&ws.reloop(&["why", "last"]));
    assert!(why.contains("(retries exhausted after 1 retries)"), "{why}");
    common::settings().bind(|| insta::assert_snapshot!("reason_model_error_retries_exhausted", why));
    assert_replays_and_keeps_no_secret(&ws);
}

#[test]
fn three_overloads_switch_to_the_fallback_model() {
    let ws = Workspace::seed();
    let server = FakeServer::start(vec![
        overloaded(&[]),
        overloaded(&[]),
        overloaded(&[]),
        Canned::Sse(sse_from_message(&final_text())),
    ]);
    let out = run(&ws, &server, &["--fallback-model", "claude-haiku-4-5"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let models: Vec<String> = server.requests().iter().map(|r| r.body["model"].as_str().unwrap().to_string()).collect();
    assert_eq!(models, ["claude-opus-5-5", "claude-opus-5-5", "claude-opus-5-5", "claude-haiku-4-5"]);
    // max_tokens follows the model, as Claude Code's does.
    let limits: Vec<u64> = server.requests().iter().map(|r| r.body["max_tokens"].as_u64().unwrap()).collect();
    assert_eq!(limits, [128000, 128000, 128000, 32000]);
    let lines = json_lines(&out);
    let fallback = lines.iter().find(|l| l["subtype"] == "model_fallback").unwrap();
    assert_eq!(fallback["trigger"], "overloaded");
    assert_eq!(fallback["original_model"], "claude-opus-5-5");
    assert_eq!(fallback["fallback_model"], "claude-haiku-4-5");
    assert_eq!(fallback["content"], "Switched to claude-haiku-4-5 due to high demand for claude-opus-5-5");
    assert_replays_and_keeps_no_secret(&ws);
}

#[test]
fn a_server_error_switches_at_once_but_a_rate_limit_never_does() {
    let ws = Workspace::seed();
    let server_error = Canned::Error {
        status: 500,
        headers: vec![],
        body: json!({"type": "error", "error": {"type": "api_error", "message": "Internal server error"}}),
    };
    let rate_limited = Canned::Error {
        status: 429,
        headers: vec![],
        body: json!({"type": "error", "error": {"type": "rate_limit_error", "message": "Rate limited"}}),
    };
    let server = FakeServer::start(vec![
        rate_limited.clone(),
        server_error,
        rate_limited,
        Canned::Sse(sse_from_message(&final_text())),
    ]);
    let out = run(&ws, &server, &["--fallback-model", "claude-haiku-4-5"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let models: Vec<String> = server.requests().iter().map(|r| r.body["model"].as_str().unwrap().to_string()).collect();
    assert_eq!(models, ["claude-opus-5-5", "claude-opus-5-5", "claude-haiku-4-5", "claude-haiku-4-5"]);
    let lines = json_lines(&out);
    assert_eq!(lines.iter().filter(|l| l["subtype"] == "model_fallback").count(), 1);
    assert_eq!(lines.iter().find(|l| l["subtype"] == "model_fallback").unwrap()["trigger"], "server_error");
    assert_replays_and_keeps_no_secret(&ws);
}

#[test]
fn prompt_too_long_stops_the_loop() {
    let ws = Workspace::seed();
    let server = FakeServer::start(vec![Canned::Error {
        status: 400,
        headers: vec![],
        body: json!({"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 210000 tokens > 200000 maximum"}}),
    }]);
    let out = run(&ws, &server, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(server.requests().len(), 1);
    let lines = json_lines(&out);
    assert_eq!(lines.last().unwrap()["terminal_reason"], "prompt_too_long");
    // Claude Code's words (flag 20): the API's sizes, and its estimate of the conversation.
    let text = lines.last().unwrap()["result"].as_str().unwrap().to_string();
    let head = "Prompt is too long · the request is ~210000 tokens (limit 200000) but this conversation is only ~";
    assert!(text.starts_with(head) && text.ends_with("or start with less context."), "{text}");
    assert_replays_and_keeps_no_secret(&ws);
}

#[test]
fn no_api_key_fails_at_once_and_says_what_to_do() {
    let ws = Workspace::seed();
    let out = ws.reloop(&["run", "hi"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("ANTHROPIC_API_KEY") && err.contains("--script") && err.contains("--demo"), "{err}");
}

/// A server on this machine speaking the Anthropic wire (a proxy, a local model behind one)
/// needs no key: reloop sends a placeholder where the wire carries one, and a remote server
/// still asks for the real one.
#[test]
fn a_loopback_server_needs_no_api_key_and_a_remote_one_still_does() {
    let ws = Workspace::seed();
    let server = FakeServer::start(seed_messages(&ws).iter().map(|m| Canned::Sse(sse_from_message(m))).collect());
    let cwd = ws.cwd();
    let out = ws.reloop(&["run", "检查登录模块", "--cwd", cwd.to_str().unwrap(), "--base-url", &server.url]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    for r in &requests {
        let key = r.headers.iter().find(|(k, _)| k == "x-api-key").map(|(_, v)| v.as_str());
        assert_eq!(key, Some("reloop-loopback-no-key"));
    }
    let remote = ws.reloop(&["run", "hi", "--base-url", "https://models.example.com"]);
    assert_eq!(remote.status.code(), Some(2), "{}", stderr(&remote));
    assert!(stderr(&remote).contains("ANTHROPIC_API_KEY"), "{}", stderr(&remote));
}

#[test]
fn ctrl_c_cancels_the_http_request_promptly() {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    let ws = Workspace::seed();
    let head = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n";
    let server = FakeServer::start(vec![Canned::Stall(head.to_string())]);
    let cwd = ws.cwd();
    let child = common::reloop_bin()
        .args(["run", "hi", "--cwd", cwd.to_str().unwrap(), "--base-url", &server.url, "--output-format", "json"])
        .env("ANTHROPIC_API_KEY", KEY)
        .env("RELOOP_JOURNAL", ws.journal())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while server.requests().is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(200));
    let sent = Instant::now();
    Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    let out = child.wait_with_output().unwrap();
    let closed = (*server.closed_at.lock().unwrap()).expect("the server saw the connection closed");
    let took = closed.duration_since(sent);
    eprintln!("abort to connection closed: {took:?}");
    assert!(took < Duration::from_millis(250), "the request was cancelled after {took:?}");
    assert_eq!(out.status.code(), Some(130), "SIGINT: 128 + 2");
    let result: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(result["terminal_reason"], "aborted_streaming");
}

#[test]
fn an_error_inside_a_200_stream_is_withdrawn_and_retried() {
    let ws = Workspace::seed();
    let broken = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-6\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Half an answ\"}}\n\nevent: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
    let server = FakeServer::start(vec![Canned::Sse(broken.to_string()), Canned::Sse(sse_from_message(&final_text()))]);
    let out = run(&ws, &server, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = json_lines(&out);
    let kinds: Vec<String> = lines
        .iter()
        .map(|l| format!("{}/{}", l["type"].as_str().unwrap_or(""), l["subtype"].as_str().unwrap_or("")))
        .collect();
    let tombstone = kinds.iter().position(|k| k == "system/tombstone").expect("a tombstone");
    let retry = kinds.iter().position(|k| k == "system/api_retry").expect("a retry");
    assert!(tombstone < retry, "{kinds:?}");
    assert_eq!(lines.iter().filter(|l| l["type"] == "assistant").count(), 1, "the half answer never joins the history");
    assert_eq!(lines.last().unwrap()["result"], "done");
    assert_eq!(server.requests().len(), 2);
    assert_replays_and_keeps_no_secret(&ws);
}

#[test]
fn a_retry_after_of_a_day_waits_six_hours_and_the_api_retry_line_says_so() {
    use std::io::BufRead;
    let ws = Workspace::seed();
    let server = FakeServer::start(vec![overloaded(&[("retry-after", "86400")])]);
    let cwd = ws.cwd();
    // reloop's own rules: Claude Code's end the run at a retry-after over 60 s instead
    // (crates/reloop-core/tests/retry_delays.rs).
    let args = [
        "run",
        "go",
        "--cwd",
        cwd.to_str().unwrap(),
        "--base-url",
        &server.url,
        "--output-format",
        "stream-json",
        "--compat",
        "reloop",
    ];
    let mut child = ws.command(&args).env("ANTHROPIC_API_KEY", KEY).spawn().unwrap();
    let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    // The line comes before the wait; the test reads it and ends the process, never waiting.
    let retry = stdout
        .lines()
        .map_while(Result::ok)
        .filter_map(|l| serde_json::from_str::<Value>(&l).ok())
        .find(|l| l["subtype"] == "api_retry");
    child.kill().unwrap();
    child.wait().unwrap();
    let retry = retry.expect("an api_retry line");
    assert_eq!(retry["retry_delay_ms"], 6 * 60 * 60 * 1000, "the delay waited is the cap");
    assert_eq!(retry["retry_after_capped_from_ms"], 86_400_000, "and the line says what was asked");
    // Claude Code's own fields keep their names and meaning.
    assert_eq!((retry["attempt"].clone(), retry["error_status"].clone()), (json!(1), json!(529)));
    assert_eq!(retry["error"], "overloaded");
}

#[test]
fn an_uncapped_retry_after_adds_nothing_to_the_api_retry_line() {
    let ws = Workspace::seed();
    let server = FakeServer::start(vec![overloaded(&[("retry-after", "garbage")]), overloaded(&[])]);
    let out = run(&ws, &server, &["--max-retries", "1"]);
    let lines = json_lines(&out);
    let retry = lines.iter().find(|l| l["subtype"] == "api_retry").unwrap();
    assert!(retry.get("retry_after_capped_from_ms").is_none(), "{retry}");
    let delay = retry["retry_delay_ms"].as_u64().unwrap();
    assert!((500..=625).contains(&delay), "unreadable retry-after: the normal backoff, {delay} ms");
}
