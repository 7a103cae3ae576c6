//! A tool result bigger than one step may journal is cut before it is applied, so the session
//! still finishes, every row stays under the cap, and nothing is left to run again on resume.

use std::sync::Arc;

use reloop_core::{Config, ContentBlock};
use reloop_driver::{RunConfig, Session};
use reloop_journal::Journal;
use reloop_model::ScriptedProvider;
use reloop_tools::ToolRegistry;
use serde_json::json;

fn size(value: &impl serde::Serialize) -> usize {
    serde_json::to_string(value).unwrap().len()
}

#[tokio::test]
async fn a_result_over_the_share_is_cut_journaled_once_and_the_session_finishes() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    let big = cwd.join("big.txt");
    std::fs::write(&big, "a line of the big file\n".repeat(4_000)).unwrap();
    let cassette = json!({"responses": [
        {"message": {"id": "m1", "type": "message", "role": "assistant", "model": "m",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": big}}],
            "stop_reason": "tool_use", "usage": {"input_tokens": 1, "output_tokens": 1}}},
        {"message": {"id": "m2", "type": "message", "role": "assistant", "model": "m",
            "content": [{"type": "text", "text": "read it"}], "stop_reason": "end_turn",
            "usage": {"input_tokens": 1, "output_tokens": 1}}}
    ]});
    let share = 16 * 1024;
    let journal_path = dir.path().join("j.db");
    let session = Session::new(
        Arc::new(ScriptedProvider::from_json(&cassette.to_string()).unwrap()),
        ToolRegistry::builtin(),
        Some(Journal::create_or_open(&journal_path).unwrap().into()),
        Config::default(),
        RunConfig::new("scripted", "m", cwd.clone()).with_gather_context(false),
    )
    .with_max_event_bytes(share);
    let result = session.start(vec![ContentBlock::text("read big.txt")]).unwrap().finish().await.unwrap();
    assert_eq!(result.terminal.reason().as_str(), "completed", "{:?}", result.terminal);

    let journal = Journal::open_existing(&journal_path).unwrap();
    let steps = journal.steps(&result.session_id).unwrap();
    let done: Vec<_> = steps.iter().filter(|s| s.event.kind() == "tool_done").collect();
    assert_eq!(done.len(), 1, "the Read ran once");
    let reloop_core::Event::ToolDone(outcome) = &done[0].event else { unreachable!() };
    let text = outcome.content.as_text();
    assert!(text.contains("a line of the big file"), "the head is kept");
    assert!(text.contains("bytes left out: one journaled step holds at most"), "{}", &text[text.len() - 200..]);
    for step in &steps {
        let row = size(&step.event) + size(&step.effects) + step.reason.as_ref().map_or(0, size);
        assert!(row <= 4 * share, "step {} ({}) holds {row} bytes", step.seq, step.event.kind());
        assert!(size(&step.event) <= share, "step {} event over its share", step.seq);
    }
    let header = journal.header(&result.session_id).unwrap();
    assert!(reloop_inspect::replay(&header, &steps).divergence.is_none());
}
