//! MCP servers in sessions, end to end: the reloop binary with a scripted model
//! (`tests/cassettes/mcp_tools.json`) calling the tools of a real MCP server written with the
//! official MCP Python SDK (`tests/mcp/server.py`), over stdio and over streamable HTTP on
//! 127.0.0.1. Every session then replays identical, and `why` and `show` explain it, with the
//! servers gone.
//!
//! The SDK comes from `bash scripts/mcp-setup.sh` (into target/mcp), found through
//! `RELOOP_MCP_PY` (the venv's python). Without it the tests print a notice and pass, unless
//! `RELOOP_REQUIRE_MCP=1` (set by scripts/test.sh), which makes them fail.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Output};
use std::time::{Duration, Instant};

use common::{cassette_path, stderr, stdout, Workspace};
use serde_json::{json, Value};

fn python() -> Option<PathBuf> {
    let py = std::env::var_os("RELOOP_MCP_PY").map(PathBuf::from).filter(|p| p.exists());
    match py {
        Some(p) => Some(p),
        None if std::env::var("RELOOP_REQUIRE_MCP").as_deref() == Ok("1") => panic!(
            "the MCP Python SDK is not installed: run `bash scripts/mcp-setup.sh` and set \
             RELOOP_MCP_PY=$PWD/target/mcp/venv/bin/python (scripts/test.sh does both)"
        ),
        None => {
            eprintln!(
                "notice: MCP test skipped (run `bash scripts/mcp-setup.sh` and set \
                 RELOOP_MCP_PY=$PWD/target/mcp/venv/bin/python)"
            );
            None
        }
    }
}

/// A copy of the fixture server inside the test's folder, so removing it leaves no server.
fn server_copy(ws: &Workspace) -> PathBuf {
    let path = ws.dir.path().join("server.py");
    std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/server.py"), &path).unwrap();
    path
}

fn write_config(ws: &Workspace, name: &str, servers: Value) -> String {
    let path = ws.dir.path().join(name);
    std::fs::write(&path, json!({ "mcpServers": servers }).to_string()).unwrap();
    path.to_str().unwrap().to_string()
}

/// `reloop run` on the MCP cassette, stream-json, with `extra` flags.
fn run_cassette(ws: &Workspace, extra: &[&str], env: &[(&str, &str)]) -> Output {
    let cassette = cassette_path("mcp_tools.json");
    let cwd = ws.cwd();
    let mut args = vec![
        "run",
        "use the fixture server",
        "--script",
        cassette.to_str().unwrap(),
        "--cwd",
        cwd.to_str().unwrap(),
        "--output-format",
        "stream-json",
    ];
    args.extend_from_slice(extra);
    ws.reloop_env(&args, env)
}

/// Writes `responses` as a cassette and runs `reloop run PROMPT` on it, stream-json.
fn run_responses(ws: &Workspace, prompt: &str, responses: Vec<Value>, extra: &[&str], env: &[(&str, &str)]) -> Output {
    ws.run_responses_env(prompt, responses, extra, env)
}

fn lines(output: &Output) -> Vec<Value> {
    stdout(output).lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect()
}

/// The `tool_result` blocks of the run, by call id.
fn results(lines: &[Value]) -> std::collections::HashMap<String, Value> {
    lines
        .iter()
        .filter(|l| l["type"] == "user")
        .flat_map(|l| l["message"]["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "tool_result")
        .map(|b| (b["tool_use_id"].as_str().unwrap_or_default().to_string(), b))
        .collect()
}

fn result_text(block: &Value) -> String {
    match &block["content"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n"),
        other => other.to_string(),
    }
}

fn is_error(block: &Value) -> bool {
    block["is_error"] == json!(true)
}

/// The session's header, from `reloop export last --format journal`.
fn header(ws: &Workspace) -> Value {
    let out = ws.reloop(&["export", "last", "--format", "journal"]);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_str::<Value>(&stdout(&out)).unwrap()["header"].clone()
}

/// With the servers gone: replay is identical, `why` explains, `show --turn` rebuilds the
/// request with the MCP tools as the model saw them.
fn check_without_servers(ws: &Workspace) {
    let replay = ws.reloop(&["replay", "last"]);
    assert_eq!(replay.status.code(), Some(0), "{}{}", stdout(&replay), stderr(&replay));
    assert!(stdout(&replay).contains("identical"), "{}", stdout(&replay));
    let why = ws.reloop(&["why", "last"]);
    assert!(why.status.success(), "{}", stderr(&why));
    assert!(stdout(&why).contains("the model asked for mcp__fix__crash"), "{}", stdout(&why));
    let show = ws.reloop(&["show", "last", "--turn", "2"]);
    assert!(show.status.success(), "{}", stderr(&show));
    let request: Value = serde_json::from_str(&stdout(&show)).unwrap();
    let echo = request["body"]["tools"].as_array().unwrap().iter().find(|t| t["name"] == "mcp__fix__echo").cloned();
    let echo = echo.unwrap_or_else(|| panic!("no mcp__fix__echo in {}", request["body"]["tools"]));
    assert_eq!(echo["input_schema"]["required"], json!(["text"]));
}

/// What every transport must do with the cassette's calls.
fn check_calls(output: &Output, crash_stderr: bool) {
    let err = stderr(output);
    assert_eq!(output.status.code(), Some(0), "{err}");
    let lines = lines(output);
    let init = lines.iter().find(|l| l["subtype"] == "init").unwrap();
    assert_eq!(init["mcp_servers"], json!([{"name": "fix", "status": "connected"}]));
    assert!(init["tools"].as_array().unwrap().contains(&json!("mcp__fix__picture")), "{init}");
    let results = results(&lines);

    // list and call: two read-only calls, run together.
    // `echo` answers structuredContent too, which Claude Code sends as its JSON (sdk_wire/mcp_result).
    assert_eq!(result_text(&results["toolu_mcp_01"]), r#"{"result":"hello hello"}"#);
    assert!(!is_error(&results["toolu_mcp_01"]));
    // An image comes back as an image block, a link as text.
    let picture = results["toolu_mcp_02"]["content"].as_array().cloned().unwrap_or_default();
    let kinds: Vec<&str> = picture.iter().filter_map(|b| b["type"].as_str()).collect();
    assert_eq!(kinds, ["text", "image", "text"], "{}", results["toolu_mcp_02"]);
    assert_eq!(picture[1]["source"]["media_type"], "image/png");
    assert_eq!(picture[2]["text"], "[Resource link: pixel.png] file:///pixel.png (the pixel)");
    // The schema refuses an input before the server sees it.
    assert!(is_error(&results["toolu_mcp_03"]));
    assert!(
        result_text(&results["toolu_mcp_03"])
            .starts_with("<tool_use_error>InputValidationError: mcp__fix__echo failed due to the following issues:"),
        "{}",
        results["toolu_mcp_03"]
    );
    // A tool error.
    assert!(is_error(&results["toolu_mcp_04"]));
    assert!(result_text(&results["toolu_mcp_04"]).contains("refused: not today"), "{}", results["toolu_mcp_04"]);
    // A timeout: the model and the user are told.
    let timeout = "MCP server \"fix\" did not answer slow within 1500 ms (MCP_TOOL_TIMEOUT)";
    assert_eq!(result_text(&results["toolu_mcp_05"]), timeout);
    assert!(is_error(&results["toolu_mcp_05"]));
    assert!(err.contains(&format!("reloop: {timeout}")), "{err}");
    // A crash mid-call, and a call after it.
    let crash = result_text(&results["toolu_mcp_06"]);
    assert!(is_error(&results["toolu_mcp_06"]));
    assert!(crash.starts_with("MCP server \"fix\" failed the call to crash"), "{crash}");
    if crash_stderr {
        assert!(crash.ends_with("(stderr: fixture: crashing on purpose)"), "{crash}");
    }
    assert!(err.contains("reloop: MCP server \"fix\" failed the call to crash"), "{err}");
    assert!(is_error(&results["toolu_mcp_07"]), "{}", results["toolu_mcp_07"]);
    let result = lines.last().unwrap();
    assert_eq!(result["subtype"], "success", "{result}");
    assert_eq!(result["num_turns"], 6);
}

fn check_header(ws: &Workspace, transport: &str) {
    let header = header(ws);
    let servers = &header["run_config"]["mcp_servers"];
    assert_eq!(servers[0]["name"], "fix");
    assert_eq!(servers[0]["transport"], transport);
    assert_eq!(servers[0]["status"], "connected");
    let tools = servers[0]["tools"].as_array().unwrap();
    let echo = tools.iter().find(|t| t["name"] == "mcp__fix__echo").unwrap();
    assert_eq!(echo["server_tool"], "echo");
    assert_eq!(echo["read_only"], true);
    assert!(tools.iter().any(|t| t["name"] == "mcp__fix__write_note" && t.get("read_only").is_none()));
}

#[test]
fn a_stdio_servers_tools_are_called_and_the_session_replays_without_it() {
    let Some(py) = python() else { return };
    let ws = Workspace::seed();
    let server = server_copy(&ws);
    let config = write_config(
        &ws,
        "mcp.json",
        json!({"fix": {"command": py, "args": [server, "stdio"], "env": {"FIXTURE": "1"}}}),
    );
    let started = Instant::now();
    let output =
        run_cassette(&ws, &["--mcp-config", &config, "--allowed-tools", "mcp__fix"], &[("MCP_TOOL_TIMEOUT", "1500")]);
    check_calls(&output, true);
    assert!(started.elapsed() < Duration::from_secs(60), "{:?}", started.elapsed());
    check_header(&ws, "stdio");
    std::fs::remove_file(&server).unwrap();
    check_without_servers(&ws);
}

/// The fixture serving streamable HTTP on a free port of 127.0.0.1, killed on drop.
struct HttpServer(Child);

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn http_server(py: &Path, script: &Path) -> (HttpServer, u16) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = std::process::Command::new(py)
        .args([script.to_str().unwrap(), "http", &port.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let server = HttpServer(child);
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "the HTTP fixture did not listen on {port}");
        std::thread::sleep(Duration::from_millis(100));
    }
    (server, port)
}

#[test]
fn a_streamable_http_servers_tools_are_called_and_the_session_replays_without_it() {
    let Some(py) = python() else { return };
    let ws = Workspace::seed();
    let script = server_copy(&ws);
    let (server, port) = http_server(&py, &script);
    let config = json!({"mcpServers": {"fix": {"type": "http", "url": format!("http://127.0.0.1:{port}/mcp"),
                                               "headers": {"X-Fixture": "1"}}}})
    .to_string();
    let output =
        run_cassette(&ws, &["--mcp-config", &config, "--allowed-tools", "mcp__fix"], &[("MCP_TOOL_TIMEOUT", "1500")]);
    check_calls(&output, false);
    check_header(&ws, "http");
    drop(server);
    check_without_servers(&ws);
}

#[test]
fn servers_that_fail_to_start_are_told_recorded_and_leave_the_session_going() {
    let Some(py) = python() else { return };
    let ws = Workspace::seed();
    let server = server_copy(&ws);
    let config = write_config(
        &ws,
        "broken.json",
        json!({
            "missing": {"command": "/nonexistent/mcp-server"},
            "garbage": {"command": py, "args": [server.clone(), "garbage"]},
        }),
    );
    // The project's .mcp.json is read too: its approved server works, but its tool is not
    // allowed; its other server, not approved in the settings, is never started.
    std::fs::write(
        ws.cwd().join(".mcp.json"),
        json!({"mcpServers": {
            "proj": {"command": py, "args": [server, "stdio"]},
            "sneaky": {"command": "/bin/sh", "args": ["-c", "touch pwned"]},
        }})
        .to_string(),
    )
    .unwrap();
    let settings = ws.dir.path().join("settings.json");
    std::fs::write(&settings, json!({"enabledMcpjsonServers": ["proj"]}).to_string()).unwrap();
    let settings = settings.to_str().unwrap().to_string();
    let responses = vec![
        common::response(
            "m1",
            json!([
                common::call("t1", "mcp__garbage__anything", json!({})),
                common::call("t2", "mcp__proj__echo", json!({"text": "x"}))
            ]),
            "tool_use",
            10,
        ),
        common::response("m2", common::text("The broken servers offered nothing."), "end_turn", 10),
    ];
    let started = Instant::now();
    let output = run_responses(
        &ws,
        "try them",
        responses.clone(),
        &["--mcp-config", &config, "--settings", &settings],
        &[("MCP_TIMEOUT", "8000")],
    );
    assert!(started.elapsed() < Duration::from_secs(30), "never a hang: {:?}", started.elapsed());
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{err}");
    assert!(
        err.contains("reloop: MCP server \"missing\" failed to start: cannot run \"/nonexistent/mcp-server\""),
        "{err}"
    );
    assert!(err.contains("reloop: MCP server \"garbage\" failed to start:"), "{err}");
    assert!(err.contains("fixture: speaking garbage"), "the server's stderr is shown: {err}");
    assert!(
        err.contains(
            "reloop: the project's .mcp.json server \"sneaky\" is not started: approve it in the --settings file"
        ),
        "{err}"
    );
    assert!(!ws.cwd().join("pwned").exists(), "an unapproved project server ran");
    let run = lines(&output);
    let init = run.iter().find(|l| l["subtype"] == "init").unwrap();
    let statuses: Vec<(&str, &str)> = init["mcp_servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["name"].as_str().unwrap(), s["status"].as_str().unwrap()))
        .collect();
    assert_eq!(statuses, [("proj", "connected"), ("missing", "failed"), ("garbage", "failed")]);
    let results = results(&run);
    assert_eq!(
        result_text(&results["t1"]),
        "<tool_use_error>Error: No such tool available: mcp__garbage__anything</tool_use_error>"
    );
    assert_eq!(
        result_text(&results["t2"]),
        "Claude requested permissions to use mcp__proj__echo, but you haven't granted it yet."
    );
    let header = header(&ws);
    assert_eq!(header["run_config"]["mcp_servers"][1]["status"], "failed");
    assert!(header["run_config"]["mcp_servers"][1]["error"].as_str().unwrap().contains("cannot run"));
    assert!(ws.replays_identical());

    // --strict-mcp-config: only the flag's servers, the project's file is not read.
    let strict = run_responses(
        &ws,
        "try them",
        responses,
        &["--mcp-config", &config, "--strict-mcp-config"],
        &[("MCP_TIMEOUT", "8000")],
    );
    let init = lines(&strict).into_iter().find(|l| l["subtype"] == "init").unwrap();
    let names: Vec<&str> = init["mcp_servers"].as_array().unwrap().iter().filter_map(|s| s["name"].as_str()).collect();
    assert_eq!(names, ["missing", "garbage"]);
}

#[test]
fn a_bad_configuration_is_bad_input() {
    let ws = Workspace::seed();
    let out = ws.run("x", "seed.json", &["--mcp-config", r#"{"mcpServers": {"x": {"type": "sse", "url": "u"}}}"#]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("MCP configuration --mcp-config: server \"x\": SSE servers are not supported"),
        "{}",
        stderr(&out)
    );
    let missing = ws.run("x", "seed.json", &["--mcp-config", "no-such-file.json"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("no-such-file.json: cannot read it"), "{}", stderr(&missing));
}

#[test]
fn print_mode_honours_mcp_config_and_reports_the_servers() {
    let Some(py) = python() else { return };
    let ws = Workspace::seed();
    let server = server_copy(&ws);
    let config = json!({"mcpServers": {"fix": {"command": py, "args": [server, "stdio"]}}}).to_string();
    let cassette = cassette_path("mcp_tools.json");
    let output = ws
        .command(&[
            "-p",
            "use it",
            "--output-format",
            "stream-json",
            "--verbose",
            "--script",
            cassette.to_str().unwrap(),
            "--mcp-config",
            &config,
            "--strict-mcp-config",
            "--allowedTools",
            "mcp__fix__echo,mcp__fix__picture",
            "--max-turns",
            "1",
        ])
        .output()
        .unwrap();
    let err = stderr(&output);
    assert!(!err.contains("--mcp-config is accepted but not honoured"), "{err}");
    let lines = lines(&output);
    let init = lines.iter().find(|l| l["subtype"] == "init").unwrap();
    assert_eq!(init["mcp_servers"], json!([{"name": "fix", "status": "connected"}]));
    let results = results(&lines);
    // `echo` answers structuredContent too, which Claude Code sends as its JSON (sdk_wire/mcp_result).
    assert_eq!(result_text(&results["toolu_mcp_01"]), r#"{"result":"hello hello"}"#);
}

/// The seq of the first `model_done` step of the last session (the step that asks for the tools).
fn first_model_done(ws: &Workspace) -> u64 {
    let out = ws.reloop(&["export", "last", "--format", "journal"]);
    let dump: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let steps = dump["steps"].as_array().unwrap();
    let step = steps.iter().find(|s| s["event"]["kind"] == "model_done").unwrap_or_else(|| panic!("{dump}"));
    step["seq"].as_u64().unwrap()
}

#[test]
fn a_crash_before_an_mcp_call_resumes_with_the_server_started_again_or_says_it_is_not_connected() {
    let Some(py) = python() else { return };
    let ws = Workspace::seed();
    let server = server_copy(&ws);
    let config = json!({"mcpServers": {"fix": {"command": py, "args": [server, "stdio"]}}}).to_string();
    let responses = vec![
        common::response("m1", json!([common::call("t1", "mcp__fix__echo", json!({"text": "again"}))]), "tool_use", 10),
        common::response("m2", common::text("Echoed."), "end_turn", 10),
    ];
    let flags = ["--mcp-config", config.as_str(), "--allowed-tools", "mcp__fix"];
    let first = run_responses(&ws, "echo", responses.clone(), &flags, &[]);
    assert!(first.status.success(), "{}", stderr(&first));
    let crash_at = first_model_done(&ws).to_string();

    let mut crashing = flags.to_vec();
    crashing.extend(["--crash-after-step", crash_at.as_str()]);
    for (resume_flags, expected) in [
        (vec!["--mcp-config", config.as_str()], r#"{"result":"again"}"#),
        (vec![], "MCP server \"fix\" is not connected: mcp__fix__echo cannot be called"),
    ] {
        let crashed = run_responses(&ws, "echo", responses.clone(), &crashing, &[]);
        assert_ne!(crashed.status.code(), Some(0), "the run must stop at step {crash_at}");
        let mut args = vec!["resume", "last", "--output-format", "stream-json"];
        args.extend(resume_flags.iter().copied());
        let resumed = ws.reloop(&args);
        assert!(resumed.status.success(), "{}{}", stdout(&resumed), stderr(&resumed));
        let results = results(&lines(&resumed));
        assert_eq!(result_text(&results["t1"]), expected, "resumed with {resume_flags:?}");
        // The resumed request offered the same tools as the first one.
        let show = ws.reloop(&["show", "last", "--turn", "2"]);
        let request: Value = serde_json::from_str(&stdout(&show)).unwrap();
        let names: Vec<&str> =
            request["body"]["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
        assert!(names.contains(&"mcp__fix__crash"), "{names:?}");
        assert!(ws.replays_identical());
    }
}

#[test]
fn a_token_in_an_http_servers_url_is_never_shown_or_journaled() {
    let ws = Workspace::seed();
    // A port that was just free: nothing listens on it, and the failure quotes the URL.
    let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).unwrap().port();
    let url = format!("http://127.0.0.1:{port}/mcp?token=s3cr3t-query-value");
    let config = write_config(&ws, "web.json", json!({"web": {"type": "http", "url": url}}));
    let responses = vec![common::response("m1", common::text("Done."), "end_turn", 10)];
    let out = run_responses(&ws, "hi", responses, &["--mcp-config", &config], &[("MCP_TIMEOUT", "5000")]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains(&format!("http://127.0.0.1:{port}/mcp?token=***")), "shown redacted: {err}");
    let header = header(&ws).to_string();
    assert!(header.contains("failed to start"), "{header}");
    let journal = std::fs::read(ws.journal()).unwrap();
    let wal = std::fs::read(ws.journal().with_extension("db-wal")).unwrap_or_default();
    for text in [stdout(&out).as_bytes(), err.as_bytes(), header.as_bytes(), &journal, &wal] {
        assert!(!text.windows(18).any(|w| w == b"s3cr3t-query-value"), "the token leaked");
    }
}
