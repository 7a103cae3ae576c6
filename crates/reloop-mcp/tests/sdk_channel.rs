//! In-process servers over a host's channel (the Agent SDK's `mcp_message`), against a scripted
//! host: the handshake and calls go through rmcp's client, and a host that answers garbage, fails
//! or never answers gives a bounded, worded failure, never a hang. The real SDKs are driven by
//! the workspace's tests/sdk.rs.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use reloop_mcp::{McpSet, Options, SdkChannel};
use serde_json::{json, Value};

/// What the scripted host does with one message.
enum Answer {
    Reply(Value),
    Fail(String),
    Never,
}

type Script = dyn Fn(&Value) -> Option<Answer> + Send + Sync;

/// A host whose server `calc` answers like the Python SDK's bridge, unless `script` says
/// otherwise; it keeps every (server, message) it was given.
struct Host {
    seen: Mutex<Vec<(String, Value)>>,
    script: Box<Script>,
}

impl Host {
    fn new(script: impl Fn(&Value) -> Option<Answer> + Send + Sync + 'static) -> Arc<Host> {
        Arc::new(Host { seen: Mutex::new(Vec::new()), script: Box::new(script) })
    }

    fn methods(&self) -> Vec<String> {
        let seen = self.seen.lock().unwrap();
        seen.iter().map(|(_, m)| m["method"].as_str().unwrap_or("<reply>").to_string()).collect()
    }
}

fn calc(message: &Value) -> Answer {
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    let reply = |result: Value| Answer::Reply(json!({"jsonrpc": "2.0", "id": id, "result": result}));
    match message["method"].as_str() {
        Some("initialize") => reply(json!({
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "calc", "version": "1.0.0"}})),
        Some("tools/list") => reply(json!({"tools": [
            {"name": "echo", "description": "Echoes.", "inputSchema": {"type": "object",
                "properties": {"text": {"type": "string"}}, "required": ["text"]}},
            {"name": "boom", "inputSchema": {"type": "object"}}]})),
        Some("tools/call") if message["params"]["name"] == "boom" => {
            reply(json!({"content": [{"type": "text", "text": "boom"}], "isError": true}))
        }
        Some("tools/call") => {
            let text = message["params"]["arguments"]["text"].as_str().unwrap_or_default();
            reply(json!({"content": [{"type": "text", "text": format!("echo: {text}")}]}))
        }
        // The Python SDK's acknowledgement of a notification.
        _ => Answer::Reply(json!({"jsonrpc": "2.0", "result": {}})),
    }
}

impl SdkChannel for Host {
    fn exchange(&self, server: &str, message: Value) -> BoxFuture<'static, Result<Value, String>> {
        self.seen.lock().unwrap().push((server.to_string(), message.clone()));
        let answer = if server == "calc" {
            (self.script)(&message).unwrap_or_else(|| calc(&message))
        } else {
            Answer::Reply(json!({"jsonrpc": "2.0", "id": message.get("id"),
                "error": {"code": -32601, "message": format!("Server '{server}' not found")}}))
        };
        match answer {
            Answer::Reply(reply) => Box::pin(async move { Ok(reply) }),
            Answer::Fail(why) => Box::pin(async move { Err(why) }),
            Answer::Never => Box::pin(futures::future::pending()),
        }
    }
}

fn options(ms: u64) -> Options {
    Options {
        startup_timeout: Duration::from_millis(ms),
        call_timeout: Duration::from_millis(ms),
        removed_env: vec![],
        max_output_tokens: 25_000,
    }
}

async fn start(host: &Arc<Host>, names: &[&str], ms: u64) -> McpSet {
    let servers: Vec<(String, Options)> = names.iter().map(|n| (n.to_string(), options(ms))).collect();
    McpSet::start_sdk(&servers, host.clone()).await
}

fn call_of(text: &str) -> impl Fn(&Value) -> bool + '_ {
    move |m: &Value| m["method"] == "tools/call" && m["params"]["arguments"]["text"] == text
}

#[tokio::test]
async fn an_in_process_server_is_started_listed_and_called_over_the_channel() {
    let host = Host::new(|_| None);
    let set = start(&host, &["calc"], 5_000).await;
    assert_eq!(set.failures().count(), 0, "{:?}", set.records());
    let record = &set.records()[0];
    assert_eq!((record.name.as_str(), record.transport.as_str(), record.status.as_str()), ("calc", "sdk", "connected"));
    let names: Vec<&str> = set.tools().iter().map(|t| t.name()).collect();
    assert_eq!(names, ["mcp__calc__echo", "mcp__calc__boom"]);

    let echo = &set.tools()[0];
    let out = echo.call(&json!({"text": "hi"})).await;
    assert_eq!((out.text().as_str(), out.is_error), ("echo: hi", false));
    let boom = set.tools()[1].call(&json!({})).await;
    assert_eq!((boom.text().as_str(), boom.is_error, boom.server_failed), ("boom", true, false));
    // A refused input never reaches the host.
    assert!(echo.call(&json!({"text": 1})).await.text().contains("InputValidationError"));

    assert_eq!(host.methods(), ["initialize", "notifications/initialized", "tools/list", "tools/call", "tools/call"]);
    assert!(host.seen.lock().unwrap().iter().all(|(server, _)| server == "calc"));
}

#[tokio::test]
async fn garbage_failure_or_silence_at_start_fails_the_server_within_the_startup_timeout() {
    let cases: Vec<(Arc<Host>, &str)> = vec![
        (Host::new(|m| (m["method"] == "initialize").then(|| Answer::Reply(json!("garbage")))), "not a JSON-RPC reply"),
        (
            Host::new(|m| (m["method"] == "initialize").then_some(Answer::Never)),
            "no answer within 300 ms (MCP_TIMEOUT)",
        ),
        (Host::new(|m| (m["method"] == "initialize").then(|| Answer::Fail("stdin closed".into()))), "stdin closed"),
        (Host::new(|m| (m["method"] == "tools/list").then(|| Answer::Reply(json!({"id": 1})))), "tools/list failed"),
    ];
    for (host, said) in cases {
        let started = Instant::now();
        let set = start(&host, &["calc"], 300).await;
        assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
        let record = &set.records()[0];
        assert_eq!((record.status.as_str(), record.transport.as_str()), ("failed", "sdk"));
        let error = record.error.as_deref().unwrap_or_default();
        assert!(error.starts_with("MCP server \"calc\" failed to start: "), "{error}");
        assert!(error.contains(said), "{error} lacks {said:?}");
        assert!(set.tools().is_empty());
    }
    // A server the host does not know answers with an error, like any other failure.
    let set = start(&Host::new(|_| None), &["nope"], 300).await;
    assert!(set.records()[0].error.as_deref().unwrap_or_default().contains("Server 'nope' not found"));
}

#[tokio::test]
async fn a_call_the_host_never_answers_or_garbles_is_a_bounded_tool_error_and_the_server_stays_usable() {
    let host = Host::new(|m| {
        let silent = call_of("silent");
        let is = |text: &str| call_of(text)(m);
        if silent(m) {
            Some(Answer::Never)
        } else if is("other-id") {
            Some(Answer::Reply(json!({"jsonrpc": "2.0", "id": 999, "result": {"content": []}})))
        } else if is("string") {
            Some(Answer::Reply(json!("<html>")))
        } else if is("not-a-result") {
            Some(Answer::Reply(json!({"jsonrpc": "2.0", "id": m["id"], "result": {"content": "x"}})))
        } else if is("rpc-error") {
            Some(Answer::Reply(
                json!({"jsonrpc": "2.0", "id": m["id"], "error": {"code": -32603, "message": "it broke"}}),
            ))
        } else if is("closed") {
            Some(Answer::Fail("the SDK closed reloop's stdin before answering".into()))
        } else {
            None
        }
    });
    let set = start(&host, &["calc"], 400).await;
    let echo = &set.tools()[0];
    let started = Instant::now();
    let silent = echo.call(&json!({"text": "silent"})).await;
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
    assert!(silent.is_error && silent.server_failed);
    assert_eq!(silent.text(), "MCP server \"calc\" did not answer echo within 400 ms (MCP_TOOL_TIMEOUT)");
    for (text, said) in [
        ("other-id", "the reply to another request"),
        ("string", "something that is not a JSON-RPC reply"),
        ("not-a-result", ""),
        ("rpc-error", "it broke"),
        ("closed", "the SDK closed reloop's stdin before answering"),
    ] {
        let started = Instant::now();
        let out = echo.call(&json!({"text": text})).await;
        assert!(started.elapsed() < Duration::from_secs(5), "{text} took {:?}", started.elapsed());
        assert!(out.is_error, "{text}: {out:?}");
        assert!(out.text().contains(said), "{text}: {} lacks {said:?}", out.text());
    }
    let fine = echo.call(&json!({"text": "still here"})).await;
    assert_eq!((fine.text().as_str(), fine.is_error), ("echo: still here", false));
}
