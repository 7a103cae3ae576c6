//! What an MCP call costs reloop: starts the fixture server (`tests/mcp/server.py`) over stdio
//! with the given python, then times its start and N `echo` calls, and prints the figures.
//!
//! cargo run --release -p reloop-mcp --example roundtrip -- target/mcp/venv/bin/python [N]

use std::time::{Duration, Instant};

use reloop_mcp::{McpSet, Options, ServerConfig, Transport};
use serde_json::json;

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let Some(python) = args.next() else {
        eprintln!(
            "usage: roundtrip PYTHON [CALLS]  (PYTHON: a python with the mcp package, e.g. target/mcp/venv/bin/python)"
        );
        std::process::exit(2);
    };
    let calls: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(200);
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp/server.py");
    let config = ServerConfig {
        name: "fix".into(),
        transport: Transport::Stdio {
            // The server runs in a temporary folder: the python's path must be absolute (not resolved:
            // a venv's python is a symlink).
            command: std::path::absolute(&python).map_or(python, |p| p.display().to_string()),
            args: vec![script.display().to_string(), "stdio".into()],
            env: Default::default(),
        },
        origin: "roundtrip".into(),
    };
    let options = Options {
        startup_timeout: Duration::from_secs(60),
        call_timeout: Duration::from_secs(60),
        removed_env: Vec::new(),
        max_output_tokens: reloop_mcp::MAX_OUTPUT_TOKENS,
    };
    let cwd = std::env::temp_dir();
    let started = Instant::now();
    let set = McpSet::start(&[config], &cwd, &options).await;
    let start = started.elapsed();
    if let Some((_, error)) = set.failures().next() {
        eprintln!("{error}");
        std::process::exit(1);
    }
    let Some(echo) = set.tools().iter().find(|t| t.name() == "mcp__fix__echo") else {
        eprintln!("the fixture offers no echo tool");
        std::process::exit(1);
    };
    let mut times = Vec::with_capacity(calls);
    for i in 0..calls {
        let t = Instant::now();
        let out = echo.call(&json!({"text": format!("call {i}")})).await;
        times.push(t.elapsed());
        assert!(!out.is_error, "{out:?}");
    }
    times.sort();
    let total: Duration = times.iter().sum();
    let pct = |p: usize| times[(times.len() * p / 100).min(times.len() - 1)];
    println!("server start (spawn, initialize, tools/list): {start:?}");
    println!(
        "{calls} echo calls (schema check + tools/call + mapping): mean {:?}, p50 {:?}, p99 {:?}, max {:?}",
        total / calls as u32,
        pct(50),
        pct(99),
        times[times.len() - 1]
    );
}
