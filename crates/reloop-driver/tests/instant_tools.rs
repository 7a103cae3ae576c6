//! A tool that says it answers at once runs on the loop's own thread, not in the blocking pool
//! (and, started while the model streams, without a task of its own); it is answered all the
//! same when it panics, and its session replays.

use std::sync::{Arc, Mutex};

use reloop_core::{Config, ContentBlock, ToolResultContent};
use reloop_driver::{RunConfig, Session};
use reloop_journal::Journal;
use reloop_model::ScriptedProvider;
use reloop_tools::{Tool, ToolContext, ToolOutput, ToolRegistry};
use serde_json::{json, Value};

/// Records the name of the thread each call ran on; panics when asked to.
struct Instant {
    threads: Arc<Mutex<Vec<String>>>,
}

impl Tool for Instant {
    fn name(&self) -> &str {
        "Lookup"
    }
    fn description(&self) -> &str {
        "Answers from memory."
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object", "properties": {"panic": {"type": "boolean"}}})
    }
    fn is_read_only(&self, _: &Value) -> bool {
        true
    }
    /// A safe call is answered as soon as its block arrives, while the model streams; the
    /// other waits for the response's end and runs in the call's task: both paths are taken.
    fn is_concurrency_safe(&self, input: &Value) -> bool {
        input["panic"] != true
    }
    fn is_instant(&self, _: &Value) -> bool {
        true
    }
    fn call(&self, input: &Value, _: &ToolContext) -> ToolOutput {
        let thread = std::thread::current().name().unwrap_or_default().to_string();
        self.threads.lock().unwrap().push(thread);
        assert!(input["panic"] != true, "the tool was told to panic");
        ToolOutput::ok("found")
    }
}

fn tool_turn(i: usize, input: Value) -> Value {
    json!({"message": {"id": format!("m{i}"), "type": "message", "role": "assistant", "model": "m",
        "content": [{"type": "tool_use", "id": format!("toolu_{i}"), "name": "Lookup", "input": input}],
        "stop_reason": "tool_use", "usage": {"input_tokens": 1, "output_tokens": 1}}})
}

// A current-thread runtime: the loop runs on the test's own thread, the blocking pool on others.
#[tokio::test]
async fn an_instant_tool_runs_outside_the_blocking_pool_and_a_panic_is_answered() {
    let dir = tempfile::tempdir().unwrap();
    let cassette = json!({"responses": [
        tool_turn(1, json!({})),
        tool_turn(2, json!({"panic": true})),
        {"message": {"id": "m3", "type": "message", "role": "assistant", "model": "m",
            "content": [{"type": "text", "text": "done"}], "stop_reason": "end_turn",
            "usage": {"input_tokens": 1, "output_tokens": 1}}}
    ]});
    let threads = Arc::new(Mutex::new(Vec::new()));
    let mut tools = ToolRegistry::empty();
    tools.register(Arc::new(Instant { threads: threads.clone() }));
    let path = dir.path().join("j.db");
    let session = Session::new(
        Arc::new(ScriptedProvider::from_json(&cassette.to_string()).unwrap()),
        tools,
        Some(Journal::create_or_open(&path).unwrap().into()),
        Config::default(),
        RunConfig::new("scripted", "m", dir.path().to_path_buf()).with_gather_context(false),
    );
    let result = session.start(vec![ContentBlock::text("look")]).unwrap().finish().await.unwrap();
    assert_eq!(result.num_turns, 3, "{}", result.result);

    let ran_on = threads.lock().unwrap().clone();
    let here = std::thread::current().name().unwrap_or_default().to_string();
    assert_eq!(ran_on, vec![here.clone(), here], "an instant call went through the blocking pool");

    let journal = Journal::open_existing(&path).unwrap();
    let steps = journal.steps(&result.session_id).unwrap();
    let outcomes: Vec<(String, bool)> = steps
        .iter()
        .filter_map(|s| match &s.event {
            reloop_core::Event::ToolDone(o) => match &o.content {
                ToolResultContent::Text(t) => Some((t.clone(), o.is_error)),
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert_eq!(outcomes[0], ("found".to_string(), false));
    assert!(outcomes[1].1 && outcomes[1].0.contains("the tool failed unexpectedly"), "{outcomes:?}");
    let header = journal.header(&result.session_id).unwrap();
    assert!(reloop_inspect::replay(&header, &steps).divergence.is_none());
}
