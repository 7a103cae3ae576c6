//! Stream-json sessions of `reloop` played as the Claude Code recorder played the real CLI
//! (scripts/record-claude-code/record.py): its recorded answers served again, its `input`
//! actions sent again.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};

use super::fake_server::{sse_from_message, Canned, FakeServer};
use super::{reloop_bin, stderr, stdout, Workspace};

/// A file of JSON lines.
pub fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The recorded assistant turns, as the Messages API sent them.
pub fn turns(dir: &Path) -> Vec<String> {
    turns_in(dir, "/tmp/reloop-cc-project")
}

/// As [`turns`], the recorded project's path in them made `project`. The lines of one response
/// (2.1.332 prints each block on a line of its own, under the response's id) make one answer.
pub fn turns_in(dir: &Path, project: &str) -> Vec<String> {
    let mut answers: Vec<(Value, Value, Vec<Value>)> = Vec::new();
    for line in lines(&dir.join("stdout.jsonl")) {
        // Lines Claude Code made itself (`<synthetic>`) were no answer of the model.
        if line["type"] != "assistant" || line["message"]["model"] == "<synthetic>" {
            continue;
        }
        let content: Value =
            serde_json::from_str(&line["message"]["content"].to_string().replace("/tmp/reloop-cc-project", project))
                .unwrap();
        let blocks = content.as_array().unwrap().clone();
        match answers.last_mut() {
            Some((id, _, so_far)) if *id == line["message"]["id"] => so_far.extend(blocks),
            _ => answers.push((line["message"]["id"].clone(), line["message"]["model"].clone(), blocks)),
        }
    }
    answers
        .into_iter()
        .map(|(id, model, content)| {
            let tool = content.iter().any(|b| b["type"] == "tool_use");
            sse_from_message(&json!({"id": id, "type": "message", "role": "assistant", "model": model,
                "content": content, "stop_reason": if tool { "tool_use" } else { "end_turn" },
                "stop_sequence": null, "usage": {"input_tokens": 120, "output_tokens": 25}}))
        })
        .collect()
}

/// `reloop` in print mode under the version's profile, reading stream-json on stdin (piped, as
/// stdout is) with `flags` besides.
pub fn stream_json_session(ws: &Workspace, version: &str, url: &str, flags: &[&str]) -> std::process::Child {
    stream_json(ws, version, url)
        .args(["--input-format", "stream-json"])
        .args(flags)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// `reloop` printing stream-json under the version's profile against the fake server at `url`.
pub fn stream_json(ws: &Workspace, version: &str, url: &str) -> std::process::Command {
    let mut command = reloop_as(ws, version, url);
    command.args(["--output-format", "stream-json", "--verbose"]);
    command
}

/// `reloop` in print mode under the version's profile against the fake server at `url`, with
/// the workspace's journal, cwd and a `HOME` of its own; its output format not given yet.
pub fn reloop_as(ws: &Workspace, version: &str, url: &str) -> std::process::Command {
    let home = ws.dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let mut command = reloop_bin();
    command
        .args(["--compat", &format!("claude-code-{version}")])
        .env("RELOOP_JOURNAL", ws.journal())
        .env("HOME", &home)
        .env("ANTHROPIC_BASE_URL", url)
        .env("ANTHROPIC_API_KEY", "sk-test")
        .current_dir(ws.cwd());
    command
}

/// Plays a recorded stream-json session's `input` as the recorder did: each `send` written to
/// stdin, each `sleep` slept, each `wait` until stdout holds that many lines containing its
/// text (a minute at most), `close` closing stdin. The lines printed, in order.
pub fn play_input(ws: &Workspace, version: &str, url: &str, flags: &[&str], actions: &[Value]) -> Vec<Value> {
    let (lines, status) = play_input_status(ws, version, url, flags, actions);
    assert!(status.success(), "{version}");
    lines
}

/// [`play_input`], with the process's exit status instead of requiring success.
pub fn play_input_status(
    ws: &Workspace,
    version: &str,
    url: &str,
    flags: &[&str],
    actions: &[Value],
) -> (Vec<Value>, std::process::ExitStatus) {
    use std::io::{BufRead, BufReader};
    let mut child = stream_json_session(ws, version, url, flags);
    let mut stdin = Some(child.stdin.take().unwrap());
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    let mut lines: Vec<String> = Vec::new();
    for action in actions {
        if let Some(message) = action.get("send") {
            let stdin = stdin.as_mut().expect("sent after close");
            writeln!(stdin, "{message}").unwrap();
            stdin.flush().unwrap();
        } else if let Some(secs) = action["sleep"].as_f64() {
            std::thread::sleep(Duration::from_secs_f64(secs));
        } else if let Some(text) = action["contains"].as_str() {
            let n = action["n"].as_u64().unwrap_or(1) as usize;
            let deadline = std::time::Instant::now() + Duration::from_secs(60);
            while lines.iter().filter(|l| l.contains(text)).count() < n {
                let left = deadline.saturating_duration_since(std::time::Instant::now());
                match rx.recv_timeout(left) {
                    Ok(line) => lines.push(line),
                    Err(e) => panic!("{version}: waiting for {n} × {text}: {e}\n{}", lines.join("\n")),
                }
            }
        } else if action["close"] == json!(true) {
            stdin = None;
        }
    }
    drop(stdin);
    lines.extend(rx.iter());
    reader.join().unwrap();
    let status = child.wait().unwrap();
    (lines.iter().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect(), status)
}

/// The session replays identical, and its replayed stream-json is the live one.
pub fn replays_as_live(ws: &Workspace, live: &[Value], what: &str) {
    let replay = ws.reloop(&["replay", "last"]);
    assert_eq!(replay.status.code(), Some(0), "{what}: {}{}", stdout(&replay), stderr(&replay));
    assert!(stdout(&replay).contains("identical"), "{what}: {}", stdout(&replay));
    let replayed = ws.reloop(&["replay", "last", "--output-format", "stream-json"]);
    assert_eq!(replayed.status.code(), Some(0), "{what}: {}", stderr(&replayed));
    assert_eq!(
        super::without_timings(
            &stdout(&replayed)
                .lines()
                .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
                .collect::<Vec<Value>>()
        ),
        super::without_timings(live),
        "{what}"
    );
}

/// A scenario the recorder played against the real CLI: its folder and its `scenario.json`.
pub struct Recording {
    pub dir: PathBuf,
    pub scenario: Value,
}

impl Recording {
    pub fn load(dir: PathBuf) -> Self {
        let scenario = serde_json::from_str(&std::fs::read_to_string(dir.join("scenario.json")).unwrap()).unwrap();
        Recording { dir, scenario }
    }

    /// The flags it ran with.
    pub fn flags(&self) -> Vec<&str> {
        self.scenario["flags"].as_array().map_or(Vec::new(), |f| f.iter().map(|f| f.as_str().unwrap()).collect())
    }

    /// Its stdin actions.
    pub fn input(&self) -> &[Value] {
        self.scenario["input"].as_array().unwrap()
    }

    /// Plays `actions` with `reloop` under `version`'s profile and the recording's flags, against
    /// a fake server answering as the model did in the recording: the lines printed, and the
    /// server (what it was asked).
    pub fn play(&self, ws: &Workspace, version: &str, actions: &[Value]) -> (Vec<Value>, FakeServer) {
        let server = FakeServer::start(turns(&self.dir).into_iter().map(Canned::Sse).collect());
        let lines = play_input(ws, version, &server.url, &self.flags(), actions);
        (lines, server)
    }
}
