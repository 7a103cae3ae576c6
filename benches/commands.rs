//! What reading a long session costs through the CLI: wall time and the peak RSS of each
//! command that reads a whole session (replay, why, show, view, export, import, check, fork,
//! rerun),
//! on scripted sessions of 1,000 and 10,000 tool turns (`RELOOP_BENCH_TURNS=100000` adds a
//! longer one; `RELOOP_BENCH_COMPACT=1` makes the sessions compact every 500 turns, as a filling
//! context window makes a real one). Each command is its own process, measured by `wait4`, so
//! what one command allocated does not hide another's. Prints figures; asserts only that every
//! command succeeds.
//!
//! `cargo bench --bench commands`

use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_reloop");

/// Writes a cassette of `turns` responses to `path`: each reads a file, the last ends the turn.
/// Written a response at a time: a child's peak RSS starts at this process's (Linux carries it
/// across `exec`), so this process holds next to nothing.
fn write_cassette(path: &Path, turns: usize, compact: bool) {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).expect("cassette"));
    write!(out, "{{\"responses\": [").expect("write");
    let mut write = |id: &str, content: Value, stop: &str, input: u64, first: bool| {
        let message = json!({"message": {"id": id, "type": "message", "role": "assistant", "model": "bench",
            "content": content, "stop_reason": stop, "usage": {"input_tokens": input, "output_tokens": 20}}});
        write!(out, "{}{message}", if first { "" } else { "," }).expect("write");
    };
    for i in 1..turns {
        // Every 500th response reports a context nearly full (of a 1,000,000-token window):
        // the core compacts before the next request, and the summary is the next response.
        let full = compact && i % 500 == 0;
        let input = if full { 990_000 } else { 1_001 };
        let call = json!({"type": "tool_use", "id": format!("toolu_{i}"), "name": "Read",
            "input": {"file_path": "{{cwd}}/a.txt"}});
        let content = json!([{"type": "text", "text": "Checking the next file."}, call]);
        write(&format!("msg_{i}"), content, "tool_use", input, i == 1);
        if full {
            let summary =
                json!([{"type": "text", "text": format!("<summary>Checked {i} files; all say hello.</summary>")}]);
            write(&format!("msg_summary_{i}"), summary, "end_turn", 990_000, false);
        }
    }
    write("msg_last", json!([{"type": "text", "text": "Done."}]), "end_turn", 5_000, turns <= 1);
    write!(out, "]}}").expect("write");
    out.flush().expect("flush");
}

/// Runs reloop with `args` in `dir`, stdout to `out` (or discarded): wall seconds and peak RSS in
/// MiB of that process alone.
#[allow(unsafe_code)]
fn measure(dir: &Path, args: &[&str], out: Option<&Path>) -> (f64, f64) {
    let mut cmd = Command::new(BIN);
    cmd.args(args).current_dir(dir).env("RELOOP_PAGER", "").stderr(std::process::Stdio::null());
    cmd.stdout(match out {
        Some(path) => std::fs::File::create(path).expect("output file").into(),
        None => std::process::Stdio::null(),
    });
    let start = Instant::now();
    // Reaped by `wait4` below, which gives its rusage as std's `wait` cannot.
    #[allow(clippy::zombie_processes)]
    let child = cmd.spawn().expect("reloop starts");
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value, and wait4 only writes into the two locals.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our own child, waited on once, here; the pointers are to live locals.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let seconds = start.elapsed().as_secs_f64();
    assert_eq!(waited, pid, "wait4");
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "reloop {args:?} failed ({status})");
    (seconds, usage.ru_maxrss as f64 / 1024.0)
}

fn main() {
    let mut sizes = vec![1_000, 10_000];
    if let Some(more) = std::env::var("RELOOP_BENCH_TURNS").ok().and_then(|t| t.parse().ok()) {
        sizes.push(more);
    }
    let compact = std::env::var("RELOOP_BENCH_COMPACT").is_ok_and(|v| v == "1");
    println!(
        "reloop commands over one scripted session of Read turns{} (wall s, peak RSS MiB)\n",
        if compact { " that compacts every 500 turns" } else { "" }
    );
    println!("{:<34} {:>8} {:>14} {:>14}", "command", "turns", "wall", "peak");
    for turns in sizes {
        let dir = tempfile::tempdir().expect("tempdir");
        let ws = dir.path();
        std::fs::write(ws.join("a.txt"), "hello\n").expect("a.txt");
        write_cassette(&ws.join("c.json"), turns, compact);
        let journal = ws.join("j.db").display().to_string();
        let max_turns = (turns * 2).to_string();
        let mut run = vec!["run", "go", "--script", "c.json", "--journal", &journal, "--max-turns", &max_turns];
        if compact {
            run.extend(["--context-window", "1000000"]);
        }
        let rows: Vec<(&str, Vec<String>, Option<&str>)> = vec![
            ("run (records the session)", run.iter().map(|s| s.to_string()).collect(), None),
            ("replay", vec!["replay".into(), "last".into()], None),
            ("why", vec!["why".into(), "last".into()], None),
            ("show", vec!["show".into(), "last".into()], None),
            ("view", vec!["view".into(), "last".into(), "-o".into(), "page.html".into()], None),
            ("export (messages)", vec!["export".into(), "last".into()], None),
            ("export --format claude-jsonl", strings(&["export", "last", "--format", "claude-jsonl"]), Some("t.jsonl")),
            ("export --format journal", strings(&["export", "last", "--format", "journal"]), Some("dump.json")),
            ("import journal", strings(&["import", "journal", "dump.json", "--journal", "imported.db"]), None),
            ("import claude-code", strings(&["import", "claude-code", "t.jsonl", "--journal", "imported.db"]), None),
            ("check (the dump)", strings(&["check", "dump.json"]), None),
        ];
        for (name, args, out) in rows {
            let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
            if !args.contains(&"--journal") && !matches!(args[0], "check") {
                args.extend(["--journal", &journal]);
            }
            let (seconds, peak) = measure(ws, &args, out.map(|o| ws.join(o)).as_deref());
            println!("{name:<34} {turns:>8} {seconds:>12.2} s {peak:>10.1} MiB");
        }
        // A fork near the end.
        let steps = Command::new(BIN)
            .args(["sessions", "--json", "--journal", &journal])
            .output()
            .ok()
            .and_then(|o| serde_json::from_slice::<Value>(&o.stdout).ok())
            .and_then(|v| v[0]["steps"].as_u64())
            .expect("the session's steps");
        let at = (steps - 10).to_string();
        // Its cassette answers the fork's first new request, and ends it.
        write_cassette(&ws.join("end.json"), 1, false);
        let fork = ["fork", "last", "--at", &at, "--script", "end.json", "--journal", &journal];
        let (seconds, peak) = measure(ws, &fork, None);
        println!("{:<34} {turns:>8} {seconds:>12.2} s {peak:>10.1} MiB", "fork --at (10 steps before the end)");
        // The recorded session again, its answers from the journal, its tools live.
        let first = Command::new(BIN)
            .args(["sessions", "--json", "--journal", &journal])
            .output()
            .ok()
            .and_then(|o| serde_json::from_slice::<Value>(&o.stdout).ok())
            .and_then(|v| v[0]["id"].as_str().map(str::to_string))
            .expect("the recorded session");
        let (seconds, peak) = measure(ws, &["rerun", &first, "--journal", &journal], None);
        println!("{:<34} {turns:>8} {seconds:>12.2} s {peak:>10.1} MiB", "rerun");
    }
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}
