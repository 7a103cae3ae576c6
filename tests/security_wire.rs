//! A hostile model server on 127.0.0.1, through the CLI: every way of holding a run or growing
//! its memory ends in a bounded time with a clear error, retried when a retry may help; a
//! password in `--base-url` is never journaled or shown. Every session replays identical.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{json_lines, stderr, stdout, Workspace};
use serde_json::{json, Value};

const KEY: &str = "sk-ant-test-secret-key-0123456789";
const PASSWORD: &str = "hunter2-Pa55w0rd";

/// A server that reads each request, then behaves as told on the connection.
struct Hostile {
    url: String,
    requests: Arc<AtomicUsize>,
    authorizations: Arc<Mutex<Vec<String>>>,
}

type Behaviour = dyn Fn(&mut TcpStream) -> std::io::Result<()> + Send + Sync;

impl Hostile {
    fn start(behave: impl Fn(&mut TcpStream) -> std::io::Result<()> + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(AtomicUsize::new(0));
        let authorizations = Arc::new(Mutex::new(Vec::new()));
        let behave: Arc<Behaviour> = Arc::new(behave);
        let (count, auths) = (requests.clone(), authorizations.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let (count, auths, behave) = (count.clone(), auths.clone(), behave.clone());
                std::thread::spawn(move || {
                    let Some(authorization) = read_request(&stream) else { return };
                    auths.lock().unwrap().extend(authorization);
                    count.fetch_add(1, Ordering::SeqCst);
                    let _ = behave(&mut stream);
                });
            }
        });
        Hostile { url, requests, authorizations }
    }

    fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

/// Reads one request; its `authorization` header, if any.
fn read_request(stream: &TcpStream) -> Option<Option<String>> {
    let mut reader = BufReader::new(stream);
    let (mut length, mut authorization) = (0usize, None);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).ok()?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" => length = value.trim().parse().ok()?,
            "authorization" => authorization = Some(value.trim().to_string()),
            _ => {}
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).ok()?;
    Some(authorization)
}

/// Holds the connection until the client closes it (or 30 s pass).
fn hold(stream: &mut TcpStream) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut buf = [0u8; 64];
    while stream.read(&mut buf)? > 0 {}
    Ok(())
}

fn sse_head(stream: &mut TcpStream) -> std::io::Result<()> {
    stream.write_all(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n",
    )?;
    stream.flush()
}

fn chunk(stream: &mut TcpStream, bytes: &[u8]) -> std::io::Result<()> {
    write!(stream, "{:x}\r\n", bytes.len())?;
    stream.write_all(bytes)?;
    stream.write_all(b"\r\n")?;
    stream.flush()
}

fn end(stream: &mut TcpStream) -> std::io::Result<()> {
    stream.write_all(b"0\r\n\r\n")?;
    stream.flush()
}

fn event(name: &str, data: Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

fn message_start() -> String {
    event(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-6", "content": [], "stop_reason": null,
            "usage": {"input_tokens": 10, "output_tokens": 1}}}),
    )
}

fn block_start(block: Value) -> String {
    event("content_block_start", json!({"type": "content_block_start", "index": 0, "content_block": block}))
}

fn text_delta(text: &str) -> String {
    event(
        "content_block_delta",
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
    )
}

fn message_end() -> String {
    [
        event("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
        event(
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 5}}),
        ),
        event("message_stop", json!({"type": "message_stop"})),
    ]
    .concat()
}

/// A whole, ordinary answer: `text`, end_turn.
fn answer(stream: &mut TcpStream, text: &str) -> std::io::Result<()> {
    sse_head(stream)?;
    let body = [message_start(), block_start(json!({"type": "text", "text": ""})), text_delta(text), message_end()];
    chunk(stream, body.concat().as_bytes())?;
    end(stream)
}

fn run(ws: &Workspace, url: &str, extra: &[&str]) -> std::process::Output {
    let cwd = ws.cwd();
    let mut args =
        vec!["run", "hi", "--cwd", cwd.to_str().unwrap(), "--base-url", url, "--output-format", "stream-json"];
    args.extend_from_slice(extra);
    ws.reloop_env(&args, &[("ANTHROPIC_API_KEY", KEY)])
}

/// The `api_retry` lines' `error` fields, and the result line.
fn retries_and_result(out: &std::process::Output) -> (Vec<String>, Value) {
    let lines = json_lines(out);
    let retries = lines
        .iter()
        .filter(|l| l["subtype"] == "api_retry")
        .map(|l| l["error"].as_str().unwrap_or_default().to_string())
        .collect();
    (retries, lines.last().cloned().unwrap_or(Value::Null))
}

fn assert_replays_and_journal_holds_no(ws: &Workspace, secrets: &[&str]) {
    let replay = ws.reloop(&["replay", "last"]);
    assert_eq!(replay.status.code(), Some(0), "{}{}", stdout(&replay), stderr(&replay));
    let journal = std::fs::read(ws.journal()).unwrap();
    let wal = std::fs::read(ws.journal().with_extension("db-wal")).unwrap_or_default();
    for secret in secrets {
        for bytes in [&journal, &wal] {
            assert!(!bytes.windows(secret.len()).any(|w| w == secret.as_bytes()), "{secret} reached the journal");
        }
    }
}

fn journal_bytes(ws: &Workspace) -> u64 {
    let size = |p: std::path::PathBuf| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    size(ws.journal()) + size(ws.journal().with_extension("db-wal"))
}

#[test]
fn a_server_that_stalls_before_its_headers_times_out_and_is_retried() {
    let ws = Workspace::seed();
    let server = Hostile::start(hold);
    let out = run(&ws, &server.url, &["--api-timeout-ms", "300", "--max-retries", "2"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(server.requests(), 3);
    let (retries, result) = retries_and_result(&out);
    assert_eq!(retries, ["connection_error", "connection_error"]);
    assert_eq!(result["terminal_reason"], "model_error");
    assert_eq!(result["result"], "API Error: Request timed out: no response within 300 ms (API_TIMEOUT_MS)");
    assert_replays_and_journal_holds_no(&ws, &[KEY]);
}

#[test]
fn a_stream_of_pings_alone_times_out_and_is_retried() {
    let ws = Workspace::seed();
    let server = Hostile::start(|stream| {
        sse_head(stream)?;
        chunk(stream, message_start().as_bytes())?;
        loop {
            chunk(stream, event("ping", json!({"type": "ping"})).as_bytes())?;
            std::thread::sleep(Duration::from_millis(50));
        }
    });
    let out = run(&ws, &server.url, &["--stream-idle-timeout-ms", "500", "--max-retries", "1"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(server.requests(), 2);
    let (retries, result) = retries_and_result(&out);
    assert_eq!(retries, ["connection_error"]);
    assert_eq!(result["terminal_reason"], "model_error");
    assert_eq!(result["result"], "API Error: Stream idle timeout - partial response received");
    assert_replays_and_journal_holds_no(&ws, &[KEY]);
}

#[test]
fn a_trickle_that_never_completes_an_event_times_out() {
    let ws = Workspace::seed();
    let server = Hostile::start(|stream| {
        sse_head(stream)?;
        chunk(stream, message_start().as_bytes())?;
        // One byte at a time, five times faster than the idle timeout, of an event that never ends.
        for byte in text_delta(&"x".repeat(10_000)).bytes().cycle() {
            chunk(stream, &[byte])?;
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(())
    });
    let out = run(&ws, &server.url, &["--stream-idle-timeout-ms", "500", "--max-retries", "1"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(server.requests(), 2);
    let (retries, result) = retries_and_result(&out);
    assert_eq!(retries, ["connection_error"]);
    assert_eq!(result["result"], "API Error: Stream idle timeout - partial response received");
    assert_replays_and_journal_holds_no(&ws, &[KEY]);
}

#[test]
fn an_endless_stream_ends_at_its_cap_without_a_retry() {
    let ws = Workspace::seed();
    let server = Hostile::start(|stream| {
        sse_head(stream)?;
        chunk(stream, [message_start(), block_start(json!({"type": "text", "text": ""}))].concat().as_bytes())?;
        let delta = text_delta(&"y".repeat(100));
        loop {
            chunk(stream, delta.repeat(50).as_bytes())?;
        }
    });
    let out = run(&ws, &server.url, &["--max-output-tokens", "1000"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(server.requests(), 1, "a response past its cap is not retried");
    let (retries, result) = retries_and_result(&out);
    assert!(retries.is_empty(), "{retries:?}");
    assert_eq!(result["terminal_reason"], "model_error");
    // 1000 × 2 + 4096 content events: the block start and 6095 deltas of 100 bytes.
    assert_eq!(
        result["result"],
        "API Error: The response exceeded its size cap: more than 6096 content events for max_tokens 1000."
    );
    let why = stdout(&ws.reloop(&["why", "last"]));
    assert!(why.contains("response_too_large") && why.contains("(not retryable)"), "{why}");
    assert!(journal_bytes(&ws) < 20 << 20, "the journal grew to {} bytes", journal_bytes(&ws));
    assert_replays_and_journal_holds_no(&ws, &[KEY]);
}

#[test]
fn an_endless_openai_stream_ends_at_its_cap_too() {
    let ws = Workspace::seed();
    let server = Hostile::start(|stream| {
        sse_head(stream)?;
        let piece = format!(
            "data: {}\n\n",
            json!({"id": "c1", "choices": [{"index": 0, "delta": {"content": "z".repeat(1000)}}]})
        );
        loop {
            chunk(stream, piece.repeat(20).as_bytes())?;
        }
    });
    let cwd = ws.cwd();
    let args = ["run", "hi", "--cwd", cwd.to_str().unwrap(), "--provider", "openai", "--base-url", &server.url];
    let out = ws.reloop(&[&args[..], &["--output-format", "stream-json", "--max-output-tokens", "1000"]].concat());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(server.requests(), 1);
    let (retries, result) = retries_and_result(&out);
    assert!(retries.is_empty(), "{retries:?}");
    assert_eq!(
        result["result"],
        "API Error: The response exceeded its size cap: more than 1064576 bytes of content for max_tokens 1000."
    );
    assert_replays_and_journal_holds_no(&ws, &[]);
}

#[test]
fn a_finite_response_larger_than_max_tokens_allows_fails() {
    let ws = Workspace::seed();
    let server = Hostile::start(|stream| {
        sse_head(stream)?;
        let start = block_start(json!({"type": "tool_use", "id": "t1", "name": "Write", "input": {}}));
        chunk(stream, [message_start(), start].concat().as_bytes())?;
        // 1.2 MB of tool input in 64 KB deltas, then a proper end.
        let piece = "a".repeat(64 << 10);
        for _ in 0..19 {
            let delta = json!({"type": "content_block_delta", "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": piece}});
            chunk(stream, event("content_block_delta", delta).as_bytes())?;
        }
        chunk(stream, message_end().as_bytes())?;
        end(stream)
    });
    let out = run(&ws, &server.url, &["--max-output-tokens", "1000"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(server.requests(), 1);
    let (_, result) = retries_and_result(&out);
    assert_eq!(
        result["result"],
        "API Error: The response exceeded its size cap: more than 1064576 bytes of content for max_tokens 1000."
    );
    assert_replays_and_journal_holds_no(&ws, &[KEY]);
}

#[test]
fn a_16_mb_data_line_is_parsed_and_held_to_the_cap() {
    let ws = Workspace::seed();
    let server = Hostile::start(|stream| {
        sse_head(stream)?;
        chunk(stream, [message_start(), block_start(json!({"type": "text", "text": ""}))].concat().as_bytes())?;
        let line = text_delta(&"b".repeat(16 << 20));
        for piece in line.as_bytes().chunks(16 << 10) {
            chunk(stream, piece)?;
        }
        chunk(stream, message_end().as_bytes())?;
        end(stream)
    });
    let out = run(&ws, &server.url, &["--model", "claude-sonnet-4-6"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let (retries, result) = retries_and_result(&out);
    assert!(retries.is_empty(), "{retries:?}");
    // max_tokens 32000: 32000 × 16 + 1 MiB of content.
    assert_eq!(
        result["result"],
        "API Error: The response exceeded its size cap: more than 1560576 bytes of content for max_tokens 32000."
    );
    assert_replays_and_journal_holds_no(&ws, &[KEY]);
}

#[test]
fn a_password_in_the_base_url_is_used_but_never_journaled_or_shown() {
    let ws = Workspace::seed();
    let server = Hostile::start(|stream| answer(stream, "Done."));
    let url = server.url.replace("http://", &format!("http://reloop:{PASSWORD}@"));
    let out = run(&ws, &url, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let authorizations = server.authorizations.lock().unwrap().clone();
    assert!(authorizations.iter().all(|a| a.starts_with("Basic ")) && !authorizations.is_empty(), "{authorizations:?}");

    let redacted = server.url.replace("http://", "http://***@");
    let show = ws.reloop(&["show", "last", "--json"]);
    assert!(stdout(&show).contains(&redacted), "{}", stdout(&show));
    let mut printed = vec![out];
    for args in [
        &["show", "last"][..],
        &["show", "last", "--json"],
        &["show", "last", "--steps"],
        &["show", "last", "--turn", "1"],
        &["export", "last"],
        &["export", "last", "--format", "stream-json"],
        &["export", "last", "--format", "claude-jsonl"],
        &["export", "last", "--format", "journal"],
        &["replay", "last", "--output-format", "stream-json"],
        &["why", "last"],
        &["sessions", "--json"],
    ] {
        let out = ws.reloop(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        printed.push(out);
    }
    for out in &printed {
        assert!(!stdout(out).contains(PASSWORD) && !stderr(out).contains(PASSWORD), "{}", stdout(out));
    }
    assert_replays_and_journal_holds_no(&ws, &[PASSWORD, KEY]);

    // Going on needs the password again: the journal cannot supply it.
    let fork = ws.reloop_env(&["fork", "last", "--at", "1"], &[("ANTHROPIC_API_KEY", KEY)]);
    assert_eq!(fork.status.code(), Some(2), "{}", stdout(&fork));
    assert!(stderr(&fork).contains("pass --base-url again") && !stderr(&fork).contains(PASSWORD), "{}", stderr(&fork));
}

#[test]
fn a_password_in_an_unreachable_base_url_stays_out_of_the_error() {
    let ws = Workspace::seed();
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let url = format!("http://reloop:{PASSWORD}@127.0.0.1:{port}");
    let out = run(&ws, &url, &["--max-retries", "0"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let (_, result) = retries_and_result(&out);
    assert_eq!(result["terminal_reason"], "model_error");
    assert!(!stdout(&out).contains(PASSWORD) && !stderr(&out).contains(PASSWORD), "{}", stdout(&out));
    let not_http = run(&ws, &format!("ftp://reloop:{PASSWORD}@127.0.0.1:{port}"), &[]);
    assert_eq!(not_http.status.code(), Some(2));
    assert!(stderr(&not_http).contains("ftp://***@127.0.0.1") && !stderr(&not_http).contains(PASSWORD));
    assert_replays_and_journal_holds_no(&ws, &[PASSWORD, KEY]);
}

#[test]
fn a_redirect_to_another_origin_gets_neither_the_key_nor_the_conversation() {
    let ws = Workspace::seed();
    let elsewhere = Hostile::start(|stream| answer(stream, "stolen"));
    let target = format!("{}/v1/messages", elsewhere.url);
    let first = Hostile::start(move |stream| {
        write!(stream, "HTTP/1.1 307 Temporary Redirect\r\nlocation: {target}\r\ncontent-length: 0\r\n\r\n")?;
        stream.flush()
    });
    let out = run(&ws, &first.url, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(elsewhere.requests.load(Ordering::SeqCst), 0, "the other origin received a request");
    assert_eq!(first.requests.load(Ordering::SeqCst), 1, "a refused redirect is final, not retried");
    let (retries, result) = retries_and_result(&out);
    assert!(retries.is_empty(), "{retries:?}");
    assert_eq!(result["terminal_reason"], "model_error");
    let text = result["result"].as_str().unwrap_or_default();
    assert!(
        text.starts_with(&format!(
            "API Error: 307 the server at {} answered with a redirect (307) to {}",
            first.url, elsewhere.url
        )),
        "{text}"
    );
    assert_replays_and_journal_holds_no(&ws, &[KEY]);
}
