//! OpenTelemetry export, end to end: sessions sent by the reloop binary to a real OTLP receiver,
//! Arize Phoenix (`bash scripts/otel-setup.sh` installs it into target/otel; the test starts
//! `phoenix serve` on 127.0.0.1 with its working directory under target/ and telemetry off),
//! then read back through Phoenix's GraphQL API: span names, parents and GenAI attributes, for a
//! recorded session exported later (`export --format otlp`, with its recorded times) and for
//! sessions sent live (`run --otlp-endpoint`), a slow one's first turn at the receiver before
//! the session ends. And a receiver that accepts and never answers costs the run a warning,
//! never a hang or a failure.
//!
//! Phoenix is found through `RELOOP_PHOENIX` (the venv's `phoenix`). Without it the Phoenix test
//! prints a notice and passes, unless `RELOOP_REQUIRE_PHOENIX=1` (set by scripts/test.sh).

mod common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{stderr, stdout, Workspace};
use serde_json::{json, Value};

fn phoenix_bin() -> Option<PathBuf> {
    let bin = std::env::var_os("RELOOP_PHOENIX").map(PathBuf::from).filter(|p| p.exists());
    match bin {
        Some(p) => Some(p),
        None if std::env::var("RELOOP_REQUIRE_PHOENIX").as_deref() == Ok("1") => panic!(
            "Arize Phoenix is not installed: run `bash scripts/otel-setup.sh` and set \
             RELOOP_PHOENIX=$PWD/target/otel/venv/bin/phoenix (scripts/test.sh does both)"
        ),
        None => {
            eprintln!(
                "notice: OTLP receiver test skipped (run `bash scripts/otel-setup.sh` and set \
                 RELOOP_PHOENIX=$PWD/target/otel/venv/bin/phoenix)"
            );
            None
        }
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A Phoenix server of this test's own, stopped (by its pid) when dropped.
struct Phoenix {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Phoenix {
    fn start(bin: &Path) -> Phoenix {
        let under = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/otel");
        std::fs::create_dir_all(&under).unwrap();
        let dir = tempfile::tempdir_in(&under).unwrap();
        let (port, grpc) = (free_port(), free_port());
        let log = std::fs::File::create(dir.path().join("phoenix.log")).unwrap();
        let child = Command::new(bin)
            .arg("serve")
            .current_dir(dir.path())
            .env("PHOENIX_WORKING_DIR", dir.path())
            .env("PHOENIX_HOST", "127.0.0.1")
            .env("PHOENIX_PORT", port.to_string())
            .env("PHOENIX_GRPC_PORT", grpc.to_string())
            .env("PHOENIX_TELEMETRY_ENABLED", "false")
            .env("DO_NOT_TRACK", "1")
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        let mut phoenix = Phoenix { child, port, _dir: dir };
        let deadline = Instant::now() + Duration::from_secs(180);
        loop {
            if http(port, "GET", "/healthz", "").is_some_and(|(status, _)| status == 200) {
                return phoenix;
            }
            if let Ok(Some(status)) = phoenix.child.try_wait() {
                let log = std::fs::read_to_string(phoenix._dir.path().join("phoenix.log")).unwrap_or_default();
                panic!("phoenix serve exited ({status}):\n{log}");
            }
            assert!(Instant::now() < deadline, "Phoenix did not come up in 180 s");
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The spans Phoenix stored for `trace`, each as its GraphQL node with `attributes` parsed.
    fn spans(&self, trace: &str) -> Vec<Value> {
        let query = format!(
            "{{ projects {{ edges {{ node {{ trace(traceId: \"{trace}\") {{ spans(first: 1000) {{ edges {{ node {{ \
             name spanKind startTime parentId context {{ spanId }} attributes }} }} }} }} }} }} }} }}"
        );
        let (status, body) = http(self.port, "POST", "/graphql", &json!({ "query": query }).to_string()).unwrap();
        assert_eq!(status, 200, "{body}");
        let answer: Value = serde_json::from_str(&body).unwrap();
        let mut spans = Vec::new();
        for project in answer["data"]["projects"]["edges"].as_array().unwrap() {
            for edge in project["node"]["trace"]["spans"]["edges"].as_array().into_iter().flatten() {
                let mut node = edge["node"].clone();
                node["attributes"] = serde_json::from_str(node["attributes"].as_str().unwrap_or("{}")).unwrap();
                spans.push(node);
            }
        }
        spans
    }

    /// The spans of `trace` once `count` have arrived (an export is acknowledged before Phoenix
    /// has written it), within 30 s.
    fn spans_when(&self, trace: &str, count: usize) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let spans = self.spans(trace);
            if spans.len() >= count || Instant::now() > deadline {
                return spans;
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}

impl Drop for Phoenix {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP/1.0 exchange with 127.0.0.1:`port`: the status and the body, or `None` when
/// nothing answers.
fn http(port: u16, method: &str, path: &str, body: &str) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(30))).ok()?;
    let request = format!(
        "{method} {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    let (head, body) = answer.split_once("\r\n\r\n")?;
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    Some((status, body.to_string()))
}

/// An attribute of a stored span by its dotted key (Phoenix nests them by dots).
fn attr<'a>(span: &'a Value, key: &str) -> &'a Value {
    key.split('.').fold(&span["attributes"], |v, part| &v[part])
}

fn named<'a>(spans: &'a [Value], prefix: &str) -> Vec<&'a Value> {
    spans.iter().filter(|s| s["name"].as_str().is_some_and(|n| n.starts_with(prefix))).collect()
}

fn id(span: &Value) -> &str {
    span["context"]["spanId"].as_str().unwrap()
}

/// The parent-child shape every session's trace has: one root `invoke_agent reloop`, turns
/// under it, and each request, tool call and hook under a turn (a tool's hooks under the tool).
fn assert_shape(spans: &[Value]) {
    let roots: Vec<_> = spans.iter().filter(|s| s["parentId"].is_null()).collect();
    assert_eq!(roots.len(), 1, "{spans:#?}");
    assert_eq!(roots[0]["name"], "invoke_agent reloop");
    let turns = named(spans, "turn ");
    assert!(!turns.is_empty());
    for turn in &turns {
        assert_eq!(turn["parentId"].as_str(), Some(id(roots[0])), "{turn}");
    }
    let under_turn = |s: &Value| turns.iter().any(|t| s["parentId"].as_str() == Some(id(t)));
    for span in named(spans, "chat ").into_iter().chain(named(spans, "execute_tool ")) {
        assert!(under_turn(span), "{span}");
    }
}

#[test]
fn sessions_exported_and_sent_live_are_stored_by_a_real_receiver_as_genai_traces() {
    let Some(bin) = phoenix_bin() else { return };
    let started = Instant::now();
    let phoenix = Phoenix::start(&bin);
    eprintln!("Phoenix came up in {:.1} s", started.elapsed().as_secs_f64());
    let endpoint = phoenix.endpoint();
    let ws = Workspace::seed();

    // A recorded session (a Stop hook, five tools over three turns), exported long after.
    let dump = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/journals/scripted_edit_bash_stop_hook.json");
    let imported = ws.reloop(&["import", "journal", dump.to_str().unwrap()]);
    assert!(imported.status.success(), "{}", stderr(&imported));
    let out = ws.reloop(&["export", "5ce52c49", "--format", "otlp", "--otlp-endpoint", &endpoint]);
    assert!(out.status.success(), "{}", stderr(&out));
    let trace = reloop_otel::ids::trace_id("5ce52c4987e4c0e1").to_string();
    assert!(stdout(&out).contains(&format!("trace {trace}")), "{}", stdout(&out));
    let spans = phoenix.spans_when(&trace, 13);
    assert_shape(&spans);
    let mut names: Vec<&str> = spans.iter().map(|s| s["name"].as_str().unwrap()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "chat claude-sonnet-4-6",
            "chat claude-sonnet-4-6",
            "chat claude-sonnet-4-6",
            "execute_tool Bash",
            "execute_tool Edit",
            "execute_tool Glob",
            "execute_tool Grep",
            "execute_tool Read",
            "hook Stop",
            "invoke_agent reloop",
            "turn 1",
            "turn 2",
            "turn 3"
        ]
    );
    // The recorded times, not the export's: the session started 2026-11-29.
    let root = spans.iter().find(|s| s["parentId"].is_null()).unwrap();
    assert!(root["startTime"].as_str().unwrap().starts_with("2026-11-29T"), "{root}");
    assert_eq!(attr(root, "gen_ai.conversation.id"), "5ce52c4987e4c0e1");
    assert_eq!(attr(root, "reloop.terminal_reason"), "completed");
    let read = named(&spans, "execute_tool Read")[0];
    assert_eq!(attr(read, "gen_ai.tool.name"), "Read");
    assert_eq!(attr(read, "gen_ai.tool.call.id"), "toolu_r1");
    assert_eq!(attr(read, "gen_ai.operation.name"), "execute_tool");
    assert_eq!(attr(named(&spans, "hook Stop")[0], "reloop.hook.decision"), "pass");

    // A session sent live as it runs (the seed cassette: a tool turn, then the answer).
    let out = ws.run("check the login module", "seed.json", &["--otlp-endpoint", &endpoint]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("warning: OpenTelemetry"), "{}", stderr(&out));
    let sessions: Value = serde_json::from_slice(&ws.reloop(&["sessions", "--json"]).stdout).unwrap();
    let live = sessions.as_array().unwrap().iter().find(|s| s["id"] != "5ce52c4987e4c0e1").unwrap();
    let live_trace = reloop_otel::ids::trace_id(live["id"].as_str().unwrap()).to_string();
    let spans = phoenix.spans_when(&live_trace, 1);
    let spans = phoenix.spans_when(&live_trace, spans.len().max(6));
    assert_shape(&spans);
    let chats = named(&spans, "chat ");
    assert!(!chats.is_empty(), "{spans:#?}");
    for chat in &chats {
        assert_eq!(attr(chat, "gen_ai.operation.name"), "chat");
        assert_eq!(attr(chat, "gen_ai.provider.name"), "scripted");
        assert!(attr(chat, "gen_ai.request.model").is_string(), "{chat}");
        assert!(attr(chat, "gen_ai.response.model").is_string(), "{chat}");
        assert!(attr(chat, "gen_ai.response.id").is_string(), "{chat}");
        assert!(attr(chat, "gen_ai.usage.input_tokens").as_i64().unwrap() > 0, "{chat}");
        assert!(attr(chat, "gen_ai.usage.output_tokens").as_i64().unwrap() > 0, "{chat}");
        assert!(attr(chat, "gen_ai.response.finish_reasons").is_array(), "{chat}");
    }
    assert!(!named(&spans, "execute_tool ").is_empty(), "{spans:#?}");

    // Live means while it runs: a session whose second answer takes 6 s has its first turn
    // (its request and tool call) at the receiver before it ends.
    let cassette = ws.dir.path().join("slow_answer.json");
    let message = |id: &str, content: Value, stop: &str| {
        json!({"id": id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-6", "content": content,
               "stop_reason": stop, "usage": {"input_tokens": 100, "output_tokens": 20}})
    };
    let glob = json!([{"type": "tool_use", "id": "toolu_01", "name": "Glob", "input": {"pattern": "**/*.ts"}}]);
    let script = json!({"responses": [
        {"message": message("msg_01", glob, "tool_use")},
        {"delay_ms": 6000, "message": message("msg_02", json!([{"type": "text", "text": "done"}]), "end_turn")},
    ]});
    std::fs::write(&cassette, script.to_string()).unwrap();
    let cwd = ws.cwd();
    let (script, cwd) = (cassette.to_str().unwrap(), cwd.to_str().unwrap());
    let args = ["run", "find the ts files", "--script", script, "--cwd", cwd, "--model", "claude-sonnet-4-6"];
    let mut child = ws.command(&args).arg("--otlp-endpoint").arg(&endpoint).stdin(Stdio::null()).spawn().unwrap();
    let running = Instant::now();
    let session = loop {
        let sessions: Value = serde_json::from_slice(&ws.reloop(&["sessions", "--json"]).stdout).unwrap();
        let known = [Some("5ce52c4987e4c0e1"), live["id"].as_str()];
        if let Some(s) = sessions.as_array().unwrap().iter().find(|s| !known.contains(&s["id"].as_str())) {
            break s["id"].as_str().unwrap().to_string();
        }
        assert!(running.elapsed() < Duration::from_secs(5), "the slow session did not start");
        std::thread::sleep(Duration::from_millis(100));
    };
    let slow_trace = reloop_otel::ids::trace_id(&session).to_string();
    let mut early = Vec::new();
    while running.elapsed() < Duration::from_millis(5000) && early.len() < 3 {
        early = phoenix.spans(&slow_trace);
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(child.try_wait().unwrap().is_none(), "the session ended before its spans were looked for");
    let mut early_names: Vec<&str> = early.iter().map(|s| s["name"].as_str().unwrap()).collect();
    early_names.sort();
    assert_eq!(early_names, ["chat claude-sonnet-4-6", "execute_tool Glob", "turn 1"], "before the end");
    assert!(child.wait().unwrap().success());
    let spans = phoenix.spans_when(&slow_trace, 6);
    assert_shape(&spans);
    assert_eq!(spans.len(), 6, "root, two turns, two requests, one tool call: {spans:#?}");

    // The print mode (the Agent SDK's entry) sends its sessions live too, when the standard
    // variable names a receiver.
    let seed = common::cassette_path("seed.json");
    let out = ws
        .command(&["-p", "check the login module", "--script", seed.to_str().unwrap()])
        .env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", format!("{endpoint}/v1/traces"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("warning: OpenTelemetry"), "{}", stderr(&out));
    let sessions: Value = serde_json::from_slice(&ws.reloop(&["sessions", "--json"]).stdout).unwrap();
    let newest = sessions.as_array().unwrap().iter().max_by_key(|s| s["created_at_ms"].as_u64()).unwrap();
    let print_trace = reloop_otel::ids::trace_id(newest["id"].as_str().unwrap()).to_string();
    let spans = phoenix.spans_when(&print_trace, 9);
    assert_shape(&spans);
    assert_eq!(named(&spans, "execute_tool ").len(), 2, "{spans:#?}");

    // A re-export of the live session names the same trace: the ids come from the journal.
    let again = ws.reloop(&["export", live["id"].as_str().unwrap(), "--format", "otlp", "--otlp-endpoint", &endpoint]);
    assert!(stdout(&again).contains(&format!("trace {live_trace}")), "{}", stdout(&again));
    eprintln!("the whole test took {:.1} s", started.elapsed().as_secs_f64());
}

/// A receiver that accepts connections and never answers, on 127.0.0.1, for as long as the
/// test holds it.
fn stalling_receiver() -> (u16, std::sync::mpsc::Sender<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let (stop, stopped) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        while let Err(std::sync::mpsc::TryRecvError::Empty) = stopped.try_recv() {
            if let Ok((stream, _)) = listener.accept() {
                held.push(stream);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    });
    (port, stop)
}

#[test]
fn a_receiver_that_never_answers_costs_a_live_run_a_warning_not_a_hang_or_a_failure() {
    let (port, stop) = stalling_receiver();
    let ws = Workspace::seed();
    let started = Instant::now();
    let endpoint = format!("http://127.0.0.1:{port}");
    let out = ws.run("check the login module", "seed.json", &["--otlp-endpoint", &endpoint]);
    let took = started.elapsed();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("reloop: warning: OpenTelemetry export"), "{}", stderr(&out));
    // Bounded: the flush's wait and one export's timeout at most, whatever the receiver does.
    assert!(took < Duration::from_secs(20), "the run took {took:?}");
    eprintln!("a live run against a receiver that never answers took {took:?}");
    let why = ws.reloop(&["why", "last"]);
    assert!(stdout(&why).contains("completed"), "{}", stdout(&why));

    // The same through the standard variable, which every launched session honours.
    let cassette = common::cassette_path("seed.json");
    let cwd = ws.cwd();
    let out = ws.reloop_env(
        &["run", "check the login module", "--script", cassette.to_str().unwrap(), "--cwd", cwd.to_str().unwrap()],
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("reloop: warning: OpenTelemetry export"), "{}", stderr(&out));
    drop(stop);
}

#[test]
fn an_export_to_a_receiver_that_is_down_fails_clearly_and_one_with_none_is_refused() {
    let ws = Workspace::seed();
    assert!(ws.run("check the login module", "seed.json", &[]).status.success());
    let down = format!("http://127.0.0.1:{}", free_port());
    let out = ws.reloop(&["export", "last", "--format", "otlp", "--otlp-endpoint", &down]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("sending spans to"), "{}", stderr(&out));
    let out = ws.reloop(&["export", "last", "--format", "otlp"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--otlp-endpoint"), "{}", stderr(&out));
    let out = ws.reloop(&["export", "last", "--format", "otlp", "--otlp-endpoint", "127.0.0.1:4318"]);
    assert_eq!(out.status.code(), Some(2));
    let out = ws.reloop(&["export", "last", "--otlp-endpoint", &down]);
    assert_eq!(out.status.code(), Some(2), "--otlp-endpoint without --format otlp");
}
