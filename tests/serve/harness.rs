//! What the `reloop serve` tests share: a server started on a workspace's journal (its address
//! read from its first line), plain HTTP requests to it, and a run that takes its time, to
//! follow live.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::{reloop_bin, stdout, Workspace};

/// A `reloop serve` running on the workspace's journal; killed when dropped.
pub struct Server {
    child: Child,
    pub base: String,
}

impl Server {
    pub fn start(ws: &Workspace, extra: &[&str]) -> Server {
        Server::start_on(ws, &ws.journal().to_string_lossy(), extra)
    }

    pub fn start_on(ws: &Workspace, journal: &str, extra: &[&str]) -> Server {
        let mut cmd = reloop_bin();
        cmd.args(["serve", "--journal", journal, "--listen", "127.0.0.1:0"])
            .args(extra)
            .current_dir(ws.dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let Some(base) = line.split("listening on ").nth(1).and_then(|r| r.split('/').nth(2)) else {
            let mut err = String::new();
            child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
            panic!("no address in {line:?}: {err}");
        };
        Server { base: format!("http://{base}"), child }
    }

    pub fn addr(&self) -> &str {
        self.base.trim_start_matches("http://")
    }

    /// GET `path` with extra header lines: the status, the headers and the body.
    pub fn get(&self, path: &str, headers: &[&str]) -> (u16, String, String) {
        http_get(self.addr(), path, headers)
    }

    pub fn json(&self, path: &str) -> Value {
        let (status, _, body) = self.get(path, &[]);
        assert_eq!(status, 200, "{path}: {body}");
        serde_json::from_str(&body).unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn http_get(addr: &str, path: &str, headers: &[&str]) -> (u16, String, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut req = format!("GET {path} HTTP/1.1\r\nConnection: close\r\n");
    if !headers.iter().any(|h| h.to_ascii_lowercase().starts_with("host:")) {
        req += &format!("Host: {addr}\r\n");
    }
    for h in headers {
        req += &format!("{h}\r\n");
    }
    s.write_all(format!("{req}\r\n").as_bytes()).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let status = head.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    let chunked = head.to_ascii_lowercase().contains("transfer-encoding: chunked");
    (status, head.to_string(), if chunked { unchunk(body) } else { body.to_string() })
}

fn unchunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else { break };
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        body = rest[n..].trim_start_matches("\r\n");
    }
    out
}

/// A cassette whose answers take their time: a tool call after 3 s, the answer after 9 s more (time enough for a browser to start and open its page).
fn slow_cassette(ws: &Workspace, answer: &str) -> PathBuf {
    let path = ws.dir.path().join("slow.json");
    let responses = json!({"responses": [
        {"delay_ms": 3000, "message": {"id": "msg_s1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
          "content": [{"type": "text", "text": "Looking for the files first."},
                      {"type": "tool_use", "id": "toolu_s1", "name": "Glob", "input": {"pattern": "**/*.ts"}}],
          "stop_reason": "tool_use", "usage": {"input_tokens": 100, "output_tokens": 20}}},
        {"delay_ms": 9000, "message": {"id": "msg_s2", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
          "content": [{"type": "text", "text": answer}],
          "stop_reason": "end_turn", "usage": {"input_tokens": 120, "output_tokens": 30}}}
    ]});
    std::fs::write(&path, responses.to_string()).unwrap();
    path
}

/// A run in the background; killed if the test ends before it does.
pub struct LiveRun(pub Child);

impl Drop for LiveRun {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts a slow run in the background and waits until the journal shows it being written.
pub fn start_live_run(ws: &Workspace, answer: &str) -> (LiveRun, String) {
    let cassette = slow_cassette(ws, answer);
    let cwd = ws.cwd();
    let run = LiveRun(
        reloop_bin()
            .args(["run", "a slow one", "--script", cassette.to_str().unwrap(), "--cwd", cwd.to_str().unwrap()])
            .env("RELOOP_JOURNAL", ws.journal())
            .current_dir(ws.dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let rows: Value = serde_json::from_str(&stdout(&ws.reloop(&["sessions", "--json"]))).unwrap_or_default();
        let live = rows.as_array().and_then(|r| r.iter().find(|r| !r["writer"].is_null()).cloned());
        if let Some(live) = live {
            return (run, live["id"].as_str().unwrap().to_string());
        }
        assert!(Instant::now() < deadline, "the slow run never showed up as running");
        std::thread::sleep(Duration::from_millis(100));
    }
}
