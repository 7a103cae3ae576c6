//! A library caller's permission callback decides before the rules, and its refusals are
//! journaled: the replay never asks it again.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use reloop_core::{Config, ContentBlock};
use reloop_driver::{RunConfig, Session};
use reloop_journal::Journal;
use reloop_model::ScriptedProvider;
use reloop_tools::{Decision, ToolRegistry};
use serde_json::json;

#[tokio::test]
async fn the_callback_refuses_a_write_and_the_refusal_replays() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    let target = cwd.join("notes.txt");
    let cassette = json!({"responses": [
        {"message": {"id": "m1", "type": "message", "role": "assistant", "model": "m",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "Write", "input": {"file_path": target, "content": "x"}}],
            "stop_reason": "tool_use", "usage": {"input_tokens": 1, "output_tokens": 1}}},
        {"message": {"id": "m2", "type": "message", "role": "assistant", "model": "m",
            "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
            "usage": {"input_tokens": 1, "output_tokens": 1}}}
    ]});
    let asked = Arc::new(AtomicUsize::new(0));
    let counter = asked.clone();
    let journal_path = dir.path().join("j.db");
    let session = Session::new(
        Arc::new(ScriptedProvider::from_json(&cassette.to_string()).unwrap()),
        ToolRegistry::builtin(),
        Some(Journal::create_or_open(&journal_path).unwrap().into()),
        Config::default(),
        RunConfig::new("scripted", "m", cwd.clone()).with_gather_context(false),
    )
    .with_can_use_tool(Arc::new(move |tool, _input| {
        counter.fetch_add(1, Ordering::SeqCst);
        (tool == "Write").then(|| Decision::Deny { message: "no writes from this caller".into() })
    }));
    let result = session.start(vec![ContentBlock::text("take notes")]).unwrap().finish().await.unwrap();
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    assert!(!target.exists(), "the refused write ran");
    assert_eq!(result.permission_denials.len(), 1);
    assert_eq!(result.permission_denials[0].tool_use_id, "toolu_1");

    let journal = Journal::open_existing(&journal_path).unwrap();
    let header = journal.header(&result.session_id).unwrap();
    let steps = journal.steps(&result.session_id).unwrap();
    assert!(reloop_inspect::replay(&header, &steps).divergence.is_none());
    assert_eq!(asked.load(Ordering::SeqCst), 1, "replay asked the callback again");
}
