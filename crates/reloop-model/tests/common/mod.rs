//! Test helpers: a tiny HTTP/1.1 server on 127.0.0.1 that replays recorded bodies byte for
//! byte, the discovery of the real recorded fixtures, and a compact view of a stream's result.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use reloop_core::{ContentBlock, History, Message};
use reloop_model::{ModelProvider, ModelRequest, StreamEvent};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

// ---------------------------------------------------------------------------------------------
// Fake server

/// What the fake server answers to every request.
#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Sizes of the chunks of a chunked transfer, cycled; `None` sends one `content-length` body.
    pub chunks: Option<Vec<usize>>,
    /// Send this many body bytes, then hold the connection open until the client closes it.
    pub stall_after: Option<usize>,
    /// Announce the whole body as one chunk, send this many bytes of it, then close.
    pub abort_after: Option<usize>,
}

impl Reply {
    pub fn sse(body: impl Into<Vec<u8>>) -> Self {
        Reply {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            body: body.into(),
            chunks: None,
            stall_after: None,
            abort_after: None,
        }
    }

    pub fn json(status: u16, body: &str) -> Self {
        Reply {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.as_bytes().to_vec(),
            chunks: None,
            stall_after: None,
            abort_after: None,
        }
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    pub fn chunked(mut self, sizes: Vec<usize>) -> Self {
        self.chunks = Some(sizes);
        self
    }

    pub fn aborting_after(mut self, bytes: usize) -> Self {
        self.abort_after = Some(bytes);
        self
    }

    pub fn stalling_after(mut self, bytes: usize) -> Self {
        self.stall_after = Some(bytes);
        self
    }
}

#[derive(Clone, Debug)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("the request body is JSON")
    }
}

pub struct FakeServer {
    pub base_url: String,
    pub requests: Arc<Mutex<Vec<Recorded>>>,
    /// One message per stalled connection that the client closed.
    pub closed: mpsc::UnboundedReceiver<()>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FakeServer {
    pub async fn start(reply: Reply) -> FakeServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("local addr");
        let requests = Arc::new(Mutex::new(Vec::new()));
        let (closed_tx, closed) = mpsc::unbounded_channel();
        let recorded = requests.clone();
        let task = tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let reply = reply.clone();
                let recorded = recorded.clone();
                let closed_tx = closed_tx.clone();
                tokio::spawn(async move {
                    let _ = serve(socket, reply, recorded, closed_tx).await;
                });
            }
        });
        FakeServer { base_url: format!("http://{addr}"), requests, closed, task }
    }

    pub fn recorded(&self) -> Vec<Recorded> {
        self.requests.lock().expect("lock").clone()
    }
}

async fn serve(
    mut socket: TcpStream,
    reply: Reply,
    recorded: Arc<Mutex<Vec<Recorded>>>,
    closed: mpsc::UnboundedSender<()>,
) -> std::io::Result<()> {
    let request = read_request(&mut socket).await?;
    recorded.lock().expect("lock").push(request);
    let mut head = format!("HTTP/1.1 {} Fake\r\nconnection: close\r\n", reply.status);
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if let Some(sent) = reply.abort_after {
        head.push_str("transfer-encoding: chunked\r\n\r\n");
        socket.write_all(head.as_bytes()).await?;
        socket.write_all(format!("{:x}\r\n", reply.body.len()).as_bytes()).await?;
        socket.write_all(&reply.body[..sent.min(reply.body.len())]).await?;
        socket.flush().await?;
        return socket.shutdown().await;
    }
    if let Some(prefix) = reply.stall_after {
        head.push_str("transfer-encoding: chunked\r\n\r\n");
        socket.write_all(head.as_bytes()).await?;
        let prefix = &reply.body[..prefix.min(reply.body.len())];
        socket.write_all(format!("{:x}\r\n", prefix.len()).as_bytes()).await?;
        socket.write_all(prefix).await?;
        socket.write_all(b"\r\n").await?;
        socket.flush().await?;
        // Wait (bounded) for the client to hang up: a read of 0 bytes or an error.
        let mut buf = [0u8; 64];
        let hung_up = tokio::time::timeout(Duration::from_secs(20), async {
            loop {
                match socket.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(_) => continue,
                }
            }
        })
        .await;
        if hung_up.is_ok() {
            let _ = closed.send(());
        }
        return Ok(());
    }
    match &reply.chunks {
        None => {
            head.push_str(&format!("content-length: {}\r\n\r\n", reply.body.len()));
            socket.write_all(head.as_bytes()).await?;
            socket.write_all(&reply.body).await?;
        }
        Some(sizes) => {
            head.push_str("transfer-encoding: chunked\r\n\r\n");
            socket.write_all(head.as_bytes()).await?;
            let mut rest = &reply.body[..];
            let mut sizes = sizes.iter().copied().filter(|s| *s > 0).cycle();
            while !rest.is_empty() {
                let size = sizes.next().unwrap_or(rest.len()).min(rest.len());
                let (piece, tail) = rest.split_at(size);
                socket.write_all(format!("{size:x}\r\n").as_bytes()).await?;
                socket.write_all(piece).await?;
                socket.write_all(b"\r\n").await?;
                // Separate TCP writes so the client sees the body split across reads.
                socket.flush().await?;
                tokio::task::yield_now().await;
                rest = tail;
            }
            socket.write_all(b"0\r\n\r\n").await?;
        }
    }
    socket.flush().await?;
    socket.shutdown().await
}

async fn read_request(socket: &mut TcpStream) -> std::io::Result<Recorded> {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        if let Some(pos) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break pos;
        }
        let n = socket.read(&mut buf).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        data.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&data[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    let mut parts = request_line.split(' ');
    let method = parts.next().unwrap_or_default().to_string();
    let path = parts.next().unwrap_or_default().to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let length: usize =
        headers.iter().find(|(k, _)| k == "content-length").and_then(|(_, v)| v.parse().ok()).unwrap_or(0);
    let mut body = data[head_end + 4..].to_vec();
    while body.len() < length {
        let n = socket.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&buf[..n]);
    }
    Ok(Recorded { method, path, headers, body })
}

// ---------------------------------------------------------------------------------------------
// Requests and results

pub fn simple_request(request_number: u32) -> ModelRequest {
    let history: History = [Message::user_text("hello")].into_iter().collect();
    ModelRequest::new("test-model", 1024, history, request_number)
}

/// The stream's events, its `Started` head left out (checked by [`check_contract`] and by the
/// providers' own tests).
pub async fn collect(provider: &dyn ModelProvider, request: ModelRequest) -> Vec<StreamEvent> {
    collect_all(provider, request).await.into_iter().filter(|e| !matches!(e, StreamEvent::Started { .. })).collect()
}

/// Every event of the stream.
pub async fn collect_all(provider: &dyn ModelProvider, request: ModelRequest) -> Vec<StreamEvent> {
    tokio::time::timeout(Duration::from_secs(30), provider.stream(request).collect::<Vec<_>>())
        .await
        .expect("the stream finished within 30 s")
}

/// Checks the stream order contract and that each text block equals its deltas.
pub fn check_contract(events: &[StreamEvent]) {
    let starts = events.iter().filter(|e| matches!(e, StreamEvent::Started { .. })).count();
    assert!(starts == 0 || matches!(events.first(), Some(StreamEvent::Started { .. })), "Started comes first");
    assert!(starts <= 1, "at most one Started: {events:#?}");
    let terminals = events.iter().filter(|e| e.is_terminal()).count();
    assert_eq!(terminals, 1, "exactly one Done/Failed: {events:#?}");
    assert!(events.last().is_some_and(StreamEvent::is_terminal), "the terminal event is last");
    let mut seen = std::collections::BTreeSet::new();
    for event in events {
        if let StreamEvent::Block { index, block } = event {
            assert!(seen.insert(*index), "block {index} emitted twice");
            if let ContentBlock::Text(text) = block {
                let deltas: String = events
                    .iter()
                    .filter_map(|e| match e {
                        StreamEvent::TextDelta { index: i, text } if i == index => Some(text.as_str()),
                        _ => None,
                    })
                    .collect();
                assert_eq!(deltas, text.text, "text deltas of block {index} add up to the block");
            }
        }
    }
}

/// A compact, reviewable JSON view of a stream's result for snapshots. Strings longer than 240
/// characters (signatures, encrypted search results) are replaced by their length, head and a
/// hash, so the snapshot still changes if a single byte does.
pub fn summary(events: &[StreamEvent]) -> Value {
    let deltas = events.iter().filter(|e| matches!(e, StreamEvent::TextDelta { .. })).count();
    let blocks: Vec<Value> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Block { index, block } => {
                Some(json!({"index": index, "block": shorten(serde_json::to_value(block).expect("block serializes"))}))
            }
            _ => None,
        })
        .collect();
    let end = match events.last() {
        Some(StreamEvent::Done { id, model, stop_reason, usage }) => json!({
            "done": {"id": id, "model": model, "stop_reason": stop_reason, "usage": usage}
        }),
        Some(StreamEvent::Failed(error)) => json!({"failed": error}),
        other => json!({"unterminated": format!("{other:?}")}),
    };
    json!({"text_deltas": deltas, "blocks": blocks, "end": end})
}

fn shorten(value: Value) -> Value {
    match value {
        Value::String(s) if s.chars().count() > 240 => {
            let head: String = s.chars().take(60).collect();
            Value::String(format!("<{} chars, fnv {:016x}> {head}…", s.chars().count(), fnv(s.as_bytes())))
        }
        Value::Array(items) => Value::Array(items.into_iter().map(shorten).collect()),
        Value::Object(map) => Value::Object(map.into_iter().map(|(k, v)| (k, shorten(v))).collect()),
        other => other,
    }
}

fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3))
}

/// Deterministic, varied chunk sizes (1..=211 bytes) so each fixture is split differently.
pub fn chunk_pattern(seed: usize) -> Vec<usize> {
    let mut x = (seed as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..64)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 211) as usize + 1
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Real recorded fixtures

/// `shared/fixtures/real`, beside the repository (CI copies `shared/` next to its clone).
pub fn fixtures_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures/real");
    assert!(
        root.is_dir(),
        "the real recorded fixtures are missing: expected the folder {} (the repository's parent \
         directory must hold shared/fixtures/real)",
        root.display()
    );
    root
}

pub fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("read {}: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    Anthropic,
    OpenAi,
}

/// One HTTP response body found among the fixtures, ready to serve.
#[derive(Debug, Clone)]
pub struct FixtureStream {
    /// Relative path, plus `#N` for interaction N of a cassette.
    pub name: String,
    pub wire: Wire,
    pub body: Vec<u8>,
    /// The fixture authors' own one-line description of this stream, from SOURCES.md.
    pub summary: String,
}

impl FixtureStream {
    pub fn snapshot_name(&self) -> String {
        self.name.replace(['/', '#'], "__").replace(".chunks.txt", "").replace(".sse", "").replace(".txt", "")
    }
}

/// Every recorded provider stream: `.sse` bodies, raw SSE `.txt`, JSON-lines `.chunks.txt`
/// (re-framed as SSE, as their upstream tests do) and cassettes not already extracted into
/// `_derived/`. Session transcripts and non-streaming recordings are not streams.
pub fn discover_streams() -> Vec<FixtureStream> {
    let root = fixtures_root();
    let summaries = machine_summaries(&root);
    let derived: Vec<String> = walk(&root.join("_derived")).iter().map(|p| rel(&root, p)).collect();
    let mut out = Vec::new();
    for path in walk(&root) {
        let name = rel(&root, &path);
        let file = name.rsplit('/').next().unwrap_or_default().to_string();
        let text = || std::fs::read(&path).unwrap_or_else(|e| panic!("read {name}: {e}"));
        let summary = |key: &str| summaries.iter().find(|(k, _)| k == key).map(|(_, s)| s.clone()).unwrap_or_default();
        if file.ends_with(".sse") || (name.starts_with("anthropic-sdk-python/") && file.ends_with(".txt")) {
            let body = text();
            let wire = if contains(&body, b"event: message_start") { Wire::Anthropic } else { Wire::OpenAi };
            out.push(FixtureStream { summary: summary(&name), name, wire, body });
        } else if file.ends_with(".chunks.txt") {
            let raw = String::from_utf8(text()).expect("chunks are UTF-8");
            let lines: Vec<&str> = raw.lines().filter(|l| !l.trim().is_empty()).collect();
            let first: Value = serde_json::from_str(lines[0]).expect("chunk line is JSON");
            let anthropic = first.get("type").and_then(Value::as_str) == Some("message_start");
            let mut body = String::new();
            for line in &lines {
                if anthropic {
                    let kind: Value = serde_json::from_str(line).expect("chunk line is JSON");
                    body.push_str(&format!("event: {}\n", kind["type"].as_str().expect("type")));
                }
                body.push_str(&format!("data: {line}\n\n"));
            }
            let wire = if anthropic { Wire::Anthropic } else { Wire::OpenAi };
            out.push(FixtureStream { summary: summary(&name), name, wire, body: body.into_bytes() });
        } else if file.ends_with(".yaml") {
            let prefix = format!("_derived/{}.", name.trim_end_matches(".yaml"));
            if derived.iter().any(|d| d.starts_with(&prefix)) {
                continue; // already served from its extraction
            }
            let cassette: Value = serde_norway::from_slice(&text()).unwrap_or_else(|e| panic!("{name}: {e}"));
            let all = summary(&name);
            let parts: Vec<&str> = all.split(" | ").collect();
            for (i, interaction) in cassette["interactions"].as_array().expect("interactions").iter().enumerate() {
                let response = &interaction["response"];
                let body = response["body"]["string"].as_str().or_else(|| response["body"].as_str()).expect("body");
                let wire = if body.contains("event: message_start") { Wire::Anthropic } else { Wire::OpenAi };
                let part = parts.get(i).copied().unwrap_or_default();
                let part = part.split_once(": ").map_or(part, |(_, rest)| rest).to_string();
                out.push(FixtureStream {
                    name: format!("{name}#{i}"),
                    wire,
                    body: body.as_bytes().to_vec(),
                    summary: part,
                });
            }
        }
    }
    out
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn rel(root: &Path, path: &Path) -> String {
    path.strip_prefix(root).expect("under root").to_string_lossy().replace('\\', "/")
}

/// `(relative path, machine summary)` from every SOURCES.md.
fn machine_summaries(root: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for path in walk(root).into_iter().filter(|p| p.file_name().is_some_and(|n| n == "SOURCES.md")) {
        let folder = rel(root, path.parent().expect("parent"));
        let text = std::fs::read_to_string(&path).expect("SOURCES.md");
        let mut current: Option<String> = None;
        for line in text.lines() {
            let quoted = line.split('`').nth(1);
            if let (Some(file), true) = (quoted, line.starts_with("## `") || line.starts_with("- `")) {
                let file = file.to_string();
                // `_derived/SOURCES.md` names files relative to `_derived/`.
                let key = if folder.is_empty() { file } else { format!("{folder}/{file}") };
                current = Some(key);
            } else if let Some(key) = &current {
                let trimmed = line.trim_start_matches([' ', '-']);
                let summary = trimmed.strip_prefix("machine summary: ").or_else(|| {
                    (trimmed.starts_with("Anthropic SSE:") || trimmed.starts_with("OpenAI ")).then_some(trimmed)
                });
                if let Some(summary) = summary {
                    out.push((key.clone(), summary.to_string()));
                    current = None;
                }
            }
        }
    }
    out
}

/// A `key=value` field of a machine summary.
pub fn summary_field<'a>(summary: &'a str, key: &str) -> Option<&'a str> {
    summary.split([';', ':']).map(str::trim).find_map(|part| part.strip_prefix(key)?.strip_prefix('='))
}
