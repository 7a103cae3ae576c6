//! reloop-mcp against a real MCP server written with the official MCP Python SDK
//! (`tests/mcp/server.py`), over stdio and over streamable HTTP on 127.0.0.1.
//!
//! The SDK comes from `bash scripts/mcp-setup.sh` (into target/mcp), found through
//! `RELOOP_MCP_PY` (the venv's python). Without it the tests print a notice and pass, unless
//! `RELOOP_REQUIRE_MCP=1` (set by scripts/test.sh), which makes them fail.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use reloop_mcp::{McpSet, Options, ServerConfig, Transport};
use serde_json::{json, Value};

fn python() -> Option<PathBuf> {
    let py = std::env::var_os("RELOOP_MCP_PY").map(PathBuf::from).filter(|p| p.exists());
    match py {
        Some(p) => Some(p),
        None if std::env::var("RELOOP_REQUIRE_MCP").as_deref() == Ok("1") => {
            panic!("the MCP Python SDK is not installed: run `bash scripts/mcp-setup.sh` and set RELOOP_MCP_PY=$PWD/target/mcp/venv/bin/python")
        }
        None => {
            eprintln!("notice: MCP server test skipped (run `bash scripts/mcp-setup.sh` and set RELOOP_MCP_PY=$PWD/target/mcp/venv/bin/python)");
            None
        }
    }
}

fn fixture() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp/server.py").to_str().unwrap().to_string()
}

fn stdio(py: &Path, mode: &str) -> ServerConfig {
    ServerConfig {
        name: "fix".into(),
        transport: Transport::Stdio {
            command: py.to_str().unwrap().into(),
            args: vec![fixture(), mode.into()],
            env: Default::default(),
        },
        origin: "test".into(),
    }
}

fn options(call_ms: u64) -> Options {
    Options {
        startup_timeout: Duration::from_secs(30),
        call_timeout: Duration::from_millis(call_ms),
        removed_env: vec![],
        max_output_tokens: 25_000,
    }
}

fn tool<'a>(set: &'a McpSet, name: &str) -> &'a reloop_mcp::McpTool {
    set.tools().iter().find(|t| t.name() == name).unwrap_or_else(|| panic!("no {name} in {:?}", set.tools()))
}

async fn check_tools(set: &McpSet) {
    assert_eq!(set.failures().count(), 0, "{:?}", set.records());
    let names: Vec<&str> = set.tools().iter().map(|t| t.name()).collect();
    for expected in ["mcp__fix__echo", "mcp__fix__write_note", "mcp__fix__picture", "mcp__fix__fail", "mcp__fix__slow"]
    {
        assert!(names.contains(&expected), "{names:?}");
    }
    assert!(!names.iter().any(|n| n.contains("far_too_long")), "{names:?}");
    assert_eq!(set.warnings().len(), 1, "{:?}", set.warnings());
    assert!(set.warnings()[0].contains("longer than the 64 characters"), "{:?}", set.warnings());
    assert!(tool(set, "mcp__fix__echo").record.read_only);
    assert!(!tool(set, "mcp__fix__write_note").record.read_only);
    assert_eq!(tool(set, "mcp__fix__echo").record.input_schema["properties"]["text"]["type"], "string");

    let echo = tool(set, "mcp__fix__echo").call(&json!({"text": "hi", "times": 2})).await;
    assert!(!echo.is_error, "{echo:?}");
    // A `-> str` tool answers structuredContent too: Claude Code sends that, as JSON.
    assert_eq!(echo.text(), r#"{"result":"hi hi"}"#);

    let invalid = tool(set, "mcp__fix__echo").call(&json!({"times": "x"})).await;
    assert!(invalid.is_error);
    assert!(
        invalid.text().starts_with("<tool_use_error>InputValidationError: mcp__fix__echo failed"),
        "{}",
        invalid.text()
    );

    let picture = tool(set, "mcp__fix__picture").call(&json!({})).await;
    let types: Vec<&str> = picture.blocks.iter().filter_map(|b| b["type"].as_str()).collect();
    assert_eq!(types, ["text", "image", "text"], "{picture:?}");
    assert_eq!(picture.blocks[1]["source"]["media_type"], "image/png");
    assert_eq!(picture.blocks[2]["text"], "[Resource link: pixel.png] file:///pixel.png (the pixel)");

    let fail = tool(set, "mcp__fix__fail").call(&json!({"reason": "no"})).await;
    assert!(fail.is_error);
    assert!(fail.text().contains("refused: no"), "{}", fail.text());
}

#[tokio::test]
async fn a_stdio_server_lists_calls_and_fails_clearly() {
    let Some(py) = python() else { return };
    let cwd = tempfile::tempdir().unwrap();
    let set = McpSet::start(&[stdio(&py, "stdio")], cwd.path(), &options(1500)).await;
    check_tools(&set).await;

    let started = Instant::now();
    let slow = tool(&set, "mcp__fix__slow").call(&json!({"seconds": 30})).await;
    assert!(slow.is_error);
    assert_eq!(slow.text(), "MCP server \"fix\" did not answer slow within 1500 ms (MCP_TOOL_TIMEOUT)");
    assert!(started.elapsed() < Duration::from_secs(10));

    // The server still answers after a call timed out.
    assert_eq!(tool(&set, "mcp__fix__echo").call(&json!({"text": "again"})).await.text(), r#"{"result":"again"}"#);

    let crash = tool(&set, "mcp__fix__crash").call(&json!({})).await;
    assert!(crash.is_error);
    assert!(crash.text().starts_with("MCP server \"fix\" failed the call to crash"), "{}", crash.text());
    assert!(
        crash.text().ends_with("(stderr: fixture: crashing on purpose)"),
        "what the server said during the call is shown: {}",
        crash.text()
    );
    // Later calls fail at once rather than hang.
    let after = tool(&set, "mcp__fix__echo").call(&json!({"text": "x"})).await;
    assert!(after.is_error, "{after:?}");
}

#[tokio::test]
async fn a_streamable_http_server_lists_and_calls() {
    let Some(py) = python() else { return };
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut child = std::process::Command::new(&py)
        .args([fixture(), "http".into(), port.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "the HTTP fixture did not listen");
        std::thread::sleep(Duration::from_millis(100));
    }
    let config = ServerConfig {
        name: "fix".into(),
        transport: Transport::Http {
            url: format!("http://127.0.0.1:{port}/mcp"),
            headers: [("X-Test".to_string(), "1".to_string())].into(),
        },
        origin: "test".into(),
    };
    let cwd = tempfile::tempdir().unwrap();
    let set = McpSet::start(&[config], cwd.path(), &options(1500)).await;
    check_tools(&set).await;
    let slow = tool(&set, "mcp__fix__slow").call(&json!({"seconds": 30})).await;
    assert_eq!(slow.text(), "MCP server \"fix\" did not answer slow within 1500 ms (MCP_TOOL_TIMEOUT)");
    let _ = child.kill();
    let _ = child.wait();
}

#[tokio::test]
async fn servers_that_cannot_start_are_recorded_as_failed_within_the_startup_timeout() {
    let Some(py) = python() else { return };
    let cwd = tempfile::tempdir().unwrap();
    let missing = ServerConfig {
        name: "missing".into(),
        transport: Transport::Stdio {
            command: "/nonexistent/mcp-server".into(),
            args: vec![],
            env: Default::default(),
        },
        origin: "test".into(),
    };
    let mut garbage = stdio(&py, "garbage");
    garbage.name = "garbage".into();
    let refused = ServerConfig {
        name: "refused".into(),
        transport: Transport::Http { url: "http://127.0.0.1:9/mcp".into(), headers: Default::default() },
        origin: "test".into(),
    };
    let mut opts = options(1000);
    opts.startup_timeout = Duration::from_secs(3);
    let started = Instant::now();
    let set = McpSet::start(&[missing, garbage, refused], cwd.path(), &opts).await;
    assert!(started.elapsed() < Duration::from_secs(15), "{:?}", started.elapsed());
    assert!(set.tools().is_empty());
    let failures: Vec<(&str, &str)> = set.failures().collect();
    assert_eq!(failures.len(), 3, "{failures:?}");
    assert!(failures[0].1.starts_with("MCP server \"missing\" failed to start: cannot run"), "{}", failures[0].1);
    assert!(failures[1].1.starts_with("MCP server \"garbage\" failed to start:"), "{}", failures[1].1);
    assert!(failures[1].1.contains("speaking garbage"), "stderr is shown: {}", failures[1].1);
    assert!(failures[2].1.starts_with("MCP server \"refused\" failed to start:"), "{}", failures[2].1);
    let record: Value = serde_json::to_value(&set.records()[0]).unwrap();
    assert_eq!(record["status"], "failed");
}
