//! Prints the model wire's figures against a hostile server on 127.0.0.1:
//!
//! * peak memory (VmHWM, reset before each case) while an endless SSE stream is read until its
//!   cap ends it, for several `max_tokens`;
//! * the time from a stall to the idle timeout's abort, and from a stall before the headers to
//!   the request timeout's abort, past the timeout itself;
//! * the time from dropping a stalled stream (what Ctrl-C does) to the server seeing the
//!   connection closed;
//! * SSE parse throughput for one 16 MiB `data:` line, whole and in 16 KiB pieces.
//!
//! `cargo run --release -p reloop-model --example wire_figures`
//! `cargo run --release -p reloop-model --example wire_figures -- serve-endless [DELTA_BYTES]`
//! serves the endless stream until killed, to measure the CLI against it (`/usr/bin/time -v
//! reloop run ... --base-url URL`).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use reloop_core::History;
use reloop_model::{
    parse_anthropic_sse, sse_events, AnthropicAssembler, AnthropicConfig, AnthropicProvider, ModelProvider,
    ModelRequest, StreamEvent, Timeouts,
};

type Behaviour = fn(&mut TcpStream, &mpsc::Sender<Instant>) -> std::io::Result<()>;

/// Serves every connection with `behave`; each sends when it saw its connection closed.
fn serve(behave: Behaviour) -> (String, mpsc::Receiver<Instant>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
    let url = format!("http://{}", listener.local_addr().expect("local address"));
    let (closed_tx, closed_rx) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let closed = closed_tx.clone();
            std::thread::spawn(move || {
                if read_request(&stream).is_some() {
                    let _ = behave(&mut stream, &closed);
                }
            });
        }
    });
    (url, closed_rx)
}

fn read_request(stream: &TcpStream) -> Option<()> {
    let mut reader = BufReader::new(stream);
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).ok()?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().ok()?;
            }
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).ok()
}

fn head(stream: &mut TcpStream) -> std::io::Result<()> {
    stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
}

fn chunk(stream: &mut TcpStream, bytes: &[u8]) -> std::io::Result<()> {
    write!(stream, "{:x}\r\n", bytes.len())?;
    stream.write_all(bytes)?;
    stream.write_all(b"\r\n")?;
    stream.flush()
}

const MESSAGE_START: &str = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"m\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n";
const TEXT_START: &str = "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n";

fn text_delta(text: &str) -> String {
    format!(
        "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"text_delta\",\"text\":\"{text}\"}}}}\n\n"
    )
}

/// The text bytes of each endless delta: 400 makes the content cap end the stream, 1 the
/// content-event cap (the most journal rows).
static DELTA_BYTES: AtomicUsize = AtomicUsize::new(400);

fn endless(stream: &mut TcpStream, _: &mpsc::Sender<Instant>) -> std::io::Result<()> {
    head(stream)?;
    chunk(stream, format!("{MESSAGE_START}{TEXT_START}").as_bytes())?;
    let size = DELTA_BYTES.load(Ordering::Relaxed);
    let deltas = text_delta(&"y".repeat(size)).repeat(64_000 / size.max(1));
    loop {
        chunk(stream, deltas.as_bytes())?;
    }
}

/// Sends the first event, then holds the connection until the client closes it.
fn stall(stream: &mut TcpStream, closed: &mpsc::Sender<Instant>) -> std::io::Result<()> {
    head(stream)?;
    chunk(stream, format!("{MESSAGE_START}{TEXT_START}{}", text_delta("Hi")).as_bytes())?;
    wait_closed(stream, closed)
}

fn stall_before_headers(stream: &mut TcpStream, closed: &mpsc::Sender<Instant>) -> std::io::Result<()> {
    wait_closed(stream, closed)
}

fn wait_closed(stream: &mut TcpStream, closed: &mpsc::Sender<Instant>) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(60)))?;
    let mut buf = [0u8; 64];
    while stream.read(&mut buf).unwrap_or(0) > 0 {}
    let _ = closed.send(Instant::now());
    Ok(())
}

/// Peak resident memory since the last reset, in MiB.
fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(f64::NAN);
    kib / 1024.0
}

fn current_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(f64::NAN);
    kib / 1024.0
}

/// Linux: writing 5 to clear_refs resets VmHWM to the current RSS.
fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn anthropic(url: &str, timeouts: Timeouts) -> AnthropicProvider {
    let config = AnthropicConfig::new("sk-figures").with_base_url(url).with_timeouts(timeouts);
    match AnthropicProvider::new(config) {
        Ok(provider) => provider,
        Err(err) => panic!("provider: {err}"),
    }
}

fn request(max_tokens: u32) -> ModelRequest {
    ModelRequest::new("m", max_tokens, History::new(), 1)
}

fn describe(event: Option<&StreamEvent>) -> String {
    match event {
        Some(StreamEvent::Failed(error)) => format!("{}: {}", error.error_type, error.message),
        Some(other) => format!("{other:?}"),
        None => "no event".into(),
    }
}

async fn endless_memory() {
    let (url, _) = serve(endless);
    for max_tokens in [32_000u32, 128_000, 1_000_000] {
        let provider = anthropic(&url, Timeouts::default());
        reset_peak();
        let before = current_rss_mib();
        let started = Instant::now();
        // Keep the events as the driver's inbox would: the worst case for memory.
        let events: Vec<StreamEvent> = provider.stream(request(max_tokens)).collect().await;
        let took = started.elapsed();
        println!(
            "endless stream, max_tokens {max_tokens:>7}: ended after {took:>9.2?} with {:>6} events kept, RSS {before:.1} MiB -> peak {:.1} MiB; {}",
            events.len(),
            peak_rss_mib(),
            describe(events.last())
        );
    }
}

async fn timeouts() {
    let (url, _) = serve(stall);
    let idle = Duration::from_millis(200);
    let provider = anthropic(&url, Timeouts::new(Duration::from_secs(600), idle));
    let mut stream = provider.stream(request(1000));
    let first = stream.next().await;
    let stalled = Instant::now();
    let mut last = first;
    while let Some(event) = stream.next().await {
        last = Some(event);
    }
    let took = stalled.elapsed();
    println!(
        "stall after the first event, idle timeout {idle:?}: aborted {took:.2?} after the stall ({:.2?} past the timeout); {}",
        took.saturating_sub(idle),
        describe(last.as_ref())
    );

    let (url, _) = serve(stall_before_headers);
    let timeout = Duration::from_millis(200);
    let provider = anthropic(&url, Timeouts::new(timeout, Duration::from_secs(90)));
    let started = Instant::now();
    let events: Vec<StreamEvent> = provider.stream(request(1000)).collect().await;
    let took = started.elapsed();
    println!(
        "stall before the headers, request timeout {timeout:?}: aborted after {took:.2?} ({:.2?} past the timeout); {}",
        took.saturating_sub(timeout),
        describe(events.last())
    );
}

async fn abort() {
    let (url, closed) = serve(stall);
    let mut samples = Vec::new();
    for _ in 0..5 {
        let provider = anthropic(&url, Timeouts::default());
        let mut stream = provider.stream(request(1000));
        let _ = stream.next().await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        let dropped = Instant::now();
        drop(stream);
        match closed.recv_timeout(Duration::from_secs(5)) {
            Ok(at) => samples.push(at.saturating_duration_since(dropped)),
            Err(_) => println!("abort: the server did not see the connection close within 5 s"),
        }
    }
    samples.sort();
    println!(
        "abort of a stalled stream (the stream dropped, as on Ctrl-C): connection closed after {:.2?} median, {:.2?} max of {}",
        samples.get(samples.len() / 2).copied().unwrap_or_default(),
        samples.last().copied().unwrap_or_default(),
        samples.len()
    );
}

async fn throughput() {
    let size = 16 << 20;
    let body = format!(
        "{MESSAGE_START}{TEXT_START}{}event: content_block_stop\ndata: {{\"type\":\"content_block_stop\",\"index\":0}}\n\nevent: message_delta\ndata: {{\"type\":\"message_delta\",\"delta\":{{\"stop_reason\":\"end_turn\"}}}}\n\nevent: message_stop\ndata: {{\"type\":\"message_stop\"}}\n\n",
        text_delta(&"b".repeat(size))
    );
    let mib = body.len() as f64 / f64::from(1u32 << 20);
    let started = Instant::now();
    let events = parse_anthropic_sse(body.as_bytes());
    let whole = started.elapsed();
    let pieces: Vec<Result<Vec<u8>, std::convert::Infallible>> =
        body.as_bytes().chunks(16 << 10).map(|c| Ok(c.to_vec())).collect();
    let started = Instant::now();
    let chunked: Vec<StreamEvent> =
        sse_events(futures::stream::iter(pieces), AnthropicAssembler::new()).collect().await;
    let split = started.elapsed();
    assert_eq!(events, chunked);
    println!(
        "one 16 MiB data line ({mib:.1} MiB body), framing + JSON + assembly: whole {whole:.2?} ({:.0} MiB/s), in 16 KiB pieces {split:.2?} ({:.0} MiB/s); {}",
        mib / whole.as_secs_f64(),
        mib / split.as_secs_f64(),
        match events.last() {
            Some(StreamEvent::Done { .. }) => "Done",
            _ => "not Done",
        }
    );
}

#[tokio::main]
async fn main() {
    if std::env::args().nth(1).as_deref() == Some("serve-endless") {
        if let Some(size) = std::env::args().nth(2).and_then(|s| s.parse().ok()) {
            DELTA_BYTES.store(size, Ordering::Relaxed);
        }
        let (url, _) = serve(endless);
        println!("{url}");
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
    // Memory first, before the throughput case's 16 MiB buffers raise the baseline.
    endless_memory().await;
    timeouts().await;
    abort().await;
    throughput().await;
}
