//! How the driver runs the tool calls of one assistant message, with a tool that sleeps 100 ms:
//!
//! * 10 concurrency-safe calls run in parallel: from the `run_tools` step (or the first call's
//!   start, if it started earlier while the model streamed) to the 10th result, under 150 ms;
//! * 10 unsafe calls run one after another (~1 s), for contrast;
//! * 15 safe calls never run more than `MAX_PARALLEL` (10) at once;
//! * a safe call starts as soon as its `tool_use` block is complete, while the model still
//!   streams: the response's end is held back 300 ms and the tool starts long before it.
//!
//! Prints figures and a PASS/FAIL line per bar; never panics on a FAIL.
//!
//! `cargo bench -p reloop-driver --bench concurrency`

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::stream::BoxStream;
use futures::StreamExt;
use reloop_core::{Config, ContentBlock, Role};
use reloop_driver::{RunConfig, RunEvent, Session};
use reloop_model::{ModelProvider, ModelRequest, ScriptedProvider, StreamEvent};
use reloop_tools::{Tool, ToolContext, ToolOutput, ToolRegistry};
use serde_json::{json, Value};

/// The allocator the `reloop` binary uses, so the figures are the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const SLEEP: Duration = Duration::from_millis(100);
const BAR_MS: f64 = 150.0;
const STREAM_TAIL: Duration = Duration::from_millis(300);

/// When calls started and ended, and how many ran at once at most.
#[derive(Default)]
struct Log {
    starts: Mutex<Vec<Instant>>,
    ends: Mutex<Vec<Instant>>,
    running: AtomicUsize,
    peak: AtomicUsize,
}

/// Sleeps 100 ms. `Sleep` is concurrency-safe and read-only; `SleepSerial` is neither.
struct Sleeper {
    name: &'static str,
    safe: bool,
    log: Arc<Log>,
}

impl Tool for Sleeper {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        "Sleeps 100 ms."
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object", "properties": {"n": {"type": "integer"}}, "additionalProperties": false})
    }
    fn is_read_only(&self, _: &Value) -> bool {
        self.safe
    }
    fn is_concurrency_safe(&self, _: &Value) -> bool {
        self.safe
    }
    fn call(&self, input: &Value, _: &ToolContext) -> ToolOutput {
        self.log.starts.lock().unwrap().push(Instant::now());
        let now = self.log.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.log.peak.fetch_max(now, Ordering::SeqCst);
        std::thread::sleep(SLEEP);
        self.log.running.fetch_sub(1, Ordering::SeqCst);
        self.log.ends.lock().unwrap().push(Instant::now());
        ToolOutput::ok(format!("slept {}", input["n"]))
    }
}

/// Claude Code's built-in tools with the two sleepers registered next to them.
fn tools(log: &Arc<Log>) -> ToolRegistry {
    let mut registry = ToolRegistry::builtin();
    registry.register(Arc::new(Sleeper { name: "Sleep", safe: true, log: log.clone() }));
    registry.register(Arc::new(Sleeper { name: "SleepSerial", safe: false, log: log.clone() }));
    registry
}

/// One message calling `tool` `n` times, then "Done.".
fn cassette(tool: &str, n: usize) -> String {
    let calls: Vec<Value> = (0..n)
        .map(|i| json!({"type": "tool_use", "id": format!("toolu_{i}"), "name": tool, "input": {"n": i}}))
        .collect();
    json!({"responses": [
        {"message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "bench",
            "content": calls, "stop_reason": "tool_use", "usage": {"input_tokens": 100, "output_tokens": 50}}},
        {"message": {"id": "msg_2", "type": "message", "role": "assistant", "model": "bench",
            "content": [{"type": "text", "text": "Done."}], "stop_reason": "end_turn",
            "usage": {"input_tokens": 200, "output_tokens": 2}}},
    ]})
    .to_string()
}

/// The same tool calls as a raw SSE body: blocks stream in, then `message_delta`/`message_stop`.
fn sse_cassette(tool: &str, n: usize) -> String {
    let mut body = String::from(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\
         \"role\":\"assistant\",\"model\":\"bench\",\"content\":[],\"stop_reason\":null,\
         \"usage\":{\"input_tokens\":100,\"output_tokens\":1}}}\n\n",
    );
    for i in 0..n {
        let start = json!({"type": "content_block_start", "index": i,
            "content_block": {"type": "tool_use", "id": format!("toolu_{i}"), "name": tool, "input": {}}});
        let delta = json!({"type": "content_block_delta", "index": i,
            "delta": {"type": "input_json_delta", "partial_json": format!("{{\"n\": {i}}}")}});
        let stop = json!({"type": "content_block_stop", "index": i});
        body.push_str(&format!("event: content_block_start\ndata: {start}\n\n"));
        body.push_str(&format!("event: content_block_delta\ndata: {delta}\n\n"));
        body.push_str(&format!("event: content_block_stop\ndata: {stop}\n\n"));
    }
    body.push_str(
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\
         \"usage\":{\"output_tokens\":50}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
    );
    json!({"responses": [
        {"sse": body},
        {"message": {"id": "msg_2", "type": "message", "role": "assistant", "model": "bench",
            "content": [{"type": "text", "text": "Done."}], "stop_reason": "end_turn",
            "usage": {"input_tokens": 200, "output_tokens": 2}}},
    ]})
    .to_string()
}

/// A scripted provider whose first response holds back its end by [`STREAM_TAIL`], as a model
/// still generating after its last `tool_use` block would; records when that end came.
struct SlowTail {
    inner: ScriptedProvider,
    done_at: Arc<Mutex<Option<Instant>>>,
}

impl ModelProvider for SlowTail {
    fn name(&self) -> &str {
        "scripted"
    }
    fn stream(&self, request: ModelRequest) -> BoxStream<'static, StreamEvent> {
        let first = request.request_number == 1;
        let done_at = self.done_at.clone();
        self.inner
            .stream(request)
            .then(move |event| {
                let done_at = done_at.clone();
                async move {
                    if first && matches!(event, StreamEvent::Done { .. }) {
                        tokio::time::sleep(STREAM_TAIL).await;
                        *done_at.lock().unwrap() = Some(Instant::now());
                    }
                    event
                }
            })
            .boxed()
    }
}

/// What one session showed.
struct Timing {
    /// When the assistant message with the calls joined the history: the `run_tools` step.
    run_tools: Instant,
    /// When the caller saw each tool result.
    results: Vec<Instant>,
}

fn run(rt: &tokio::runtime::Runtime, provider: Arc<dyn ModelProvider>, registry: ToolRegistry) -> Timing {
    let session = Session::new(
        provider,
        registry,
        None,
        Config::default(),
        RunConfig::new("scripted", "bench", std::env::temp_dir()).with_gather_context(false),
    );
    rt.block_on(async move {
        let mut handle = session.start(vec![ContentBlock::text("go")]).expect("start");
        let (mut run_tools, mut results) = (None, Vec::new());
        while let Some(event) = handle.next().await {
            match event {
                RunEvent::Message(m) if m.role == Role::Assistant && m.tool_uses().next().is_some() => {
                    run_tools.get_or_insert_with(Instant::now);
                }
                RunEvent::ToolFinished(_) => results.push(Instant::now()),
                _ => {}
            }
        }
        let result = handle.finish().await.expect("run");
        assert!(!result.is_error, "bench session failed: {}", result.result);
        Timing { run_tools: run_tools.expect("a tool_use message"), results }
    })
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn verdict(pass: bool) -> &'static str {
    if pass {
        "PASS"
    } else {
        "FAIL"
    }
}

/// Runs `n` calls of `tool` in one message; returns (run_tools → last result, first start →
/// last result, peak parallelism).
fn batch(rt: &tokio::runtime::Runtime, tool: &str, n: usize) -> (f64, f64, usize) {
    let log = Arc::new(Log::default());
    let provider = Arc::new(ScriptedProvider::from_json(&cassette(tool, n)).expect("cassette"));
    let timing = run(rt, provider, tools(&log));
    assert_eq!(timing.results.len(), n, "every call answered");
    let last = *timing.results.last().expect("results");
    let first_start = *log.starts.lock().unwrap().iter().min().expect("a call ran");
    let from_step = ms(last.saturating_duration_since(timing.run_tools));
    let from_start = ms(last.saturating_duration_since(first_start.min(timing.run_tools)));
    (from_step, from_start, log.peak.load(Ordering::SeqCst))
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    println!("reloop tool concurrency (a tool sleeping {} ms; journal off)\n", SLEEP.as_millis());
    // Warm up the runtime and its blocking pool.
    let _ = batch(&rt, "Sleep", 10);

    let rounds = 5;
    let mut worst = 0f64;
    println!("10 safe calls in one message, {rounds} rounds:");
    for round in 1..=rounds {
        let (from_step, from_start, peak) = batch(&rt, "Sleep", 10);
        worst = worst.max(from_step.max(from_start));
        println!(
            "  round {round}: run_tools step → 10th result {from_step:7.1} ms; first start → 10th result {from_start:7.1} ms; {peak} at once"
        );
    }
    println!("  worst {worst:.1} ms: {} (bar: under {BAR_MS} ms)\n", verdict(worst < BAR_MS));

    let (serial, _, peak) = batch(&rt, "SleepSerial", 10);
    println!("10 unsafe calls in one message: run_tools step → 10th result {serial:7.1} ms; {peak} at once (serial, ~1000 ms expected)\n");

    let (wide, _, peak) = batch(&rt, "Sleep", 15);
    println!(
        "15 safe calls in one message: run_tools step → 15th result {wide:7.1} ms; at most {peak} at once: {} (bar: at most {})\n",
        verdict(peak <= 10),
        10
    );

    let log = Arc::new(Log::default());
    let done_at = Arc::new(Mutex::new(None));
    let provider = Arc::new(SlowTail {
        inner: ScriptedProvider::from_json(&sse_cassette("Sleep", 3)).expect("sse cassette"),
        done_at: done_at.clone(),
    });
    let started = Instant::now();
    let timing = run(&rt, provider, tools(&log));
    let first_start = *log.starts.lock().unwrap().iter().min().expect("a call ran");
    let done = done_at.lock().unwrap().expect("the response ended");
    let ahead = ms(done.saturating_duration_since(first_start));
    println!("3 safe calls streamed, the response's end held back {} ms:", STREAM_TAIL.as_millis());
    println!("  request sent → first tool start {:7.1} ms", ms(first_start.saturating_duration_since(started)));
    println!("  first tool start → response complete {ahead:7.1} ms (the tools ran while the model streamed)");
    println!(
        "  response complete → 3rd result {:7.1} ms (the results were waiting)",
        ms(timing.results.last().expect("results").saturating_duration_since(done))
    );
    println!(
        "  early start: {} (bar: the first tool starts at least {} ms before the response completes)",
        verdict(ahead >= ms(STREAM_TAIL) * 0.8),
        (ms(STREAM_TAIL) * 0.8) as u64
    );
}
