//! The mapping, as a specification: recorded sessions (the corpus in `tests/journals/`) turned
//! into spans, snapshotted as trees of names, times and attributes.

use std::path::Path;

use reloop_journal::SessionDump;
use reloop_otel::{render_tree, semconv, AttrValue, SessionMapper, SpanRecord};

fn spans_of(name: &str) -> Vec<SpanRecord> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/journals").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let (header, steps) = SessionDump::from_json(&text).unwrap().records().unwrap();
    let mut mapper = SessionMapper::new(&header);
    let mut spans = Vec::new();
    for step in &steps {
        spans.extend(mapper.step(step));
    }
    spans.extend(mapper.finish());
    spans
}

/// Every span but the root has its parent among the spans, and every child lies inside the
/// session's time.
fn assert_well_formed(spans: &[SpanRecord]) {
    let roots: Vec<_> = spans.iter().filter(|s| s.parent.is_none()).collect();
    assert_eq!(roots.len(), 1, "one root");
    for span in spans {
        if let Some(parent) = span.parent {
            assert!(spans.iter().any(|p| p.span_id == parent), "{} has no parent", span.name);
        }
        assert!(span.start_ms <= span.end_ms, "{}", span.name);
        assert!(span.start_ms >= roots[0].start_ms && span.end_ms <= roots[0].end_ms, "{}", span.name);
        assert_eq!(span.trace_id, roots[0].trace_id);
        for (key, _) in &span.attributes {
            assert!(semconv::ATTRIBUTE_KEYS.contains(key), "{key} is not listed");
        }
    }
    let mut ids: Vec<_> = spans.iter().map(|s| s.span_id).collect();
    ids.sort_by_key(|id| id.to_bytes());
    ids.dedup();
    assert_eq!(ids.len(), spans.len(), "span ids are unique");
}

#[test]
fn a_session_with_tools_and_a_stop_hook_is_a_trace_of_turns_requests_tools_and_hooks() {
    let spans = spans_of("scripted_edit_bash_stop_hook.json");
    assert_well_formed(&spans);
    insta::assert_snapshot!(render_tree(&spans));
}

#[test]
fn a_retried_request_is_a_failed_chat_span_then_a_good_one() {
    let spans = spans_of("scripted_retry_after.json");
    assert_well_formed(&spans);
    insta::assert_snapshot!(render_tree(&spans));
}

#[test]
fn a_hook_that_stops_the_run_is_a_prevent_decision_and_the_terminal_reason() {
    let spans = spans_of("scripted_hook_stopped.json");
    assert_well_formed(&spans);
    insta::assert_snapshot!(render_tree(&spans));
}

#[test]
fn a_compaction_is_a_chat_span_of_its_own() {
    let spans = spans_of("scripted_auto_compact.json");
    assert_well_formed(&spans);
    let compaction: Vec<_> = spans
        .iter()
        .filter(|s| s.attribute(semconv::REQUEST_PURPOSE) == Some(&AttrValue::Str("compaction".into())))
        .collect();
    assert_eq!(compaction.len(), 1, "{}", render_tree(&spans));
    assert!(compaction[0].name.starts_with("chat "));
}

#[test]
fn every_session_of_the_corpus_maps_to_one_well_formed_trace_and_the_same_ids_each_time() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/journals");
    let mut seen = 0;
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".json") {
            continue;
        }
        let spans = spans_of(&name);
        assert_well_formed(&spans);
        assert_eq!(spans, spans_of(&name), "{name}: a second mapping differs");
        let chats = spans.iter().filter(|s| s.name.starts_with("chat ")).count();
        assert!(chats >= 1, "{name}: no model request");
        seen += 1;
    }
    assert!(seen >= 20, "the corpus was read: {seen}");
}

#[test]
fn the_root_span_carries_the_session_and_its_terminal_reason() {
    let spans = spans_of("scripted_max_turns.json");
    let root = spans.iter().find(|s| s.parent.is_none()).unwrap();
    assert_eq!(root.name, "invoke_agent reloop");
    assert_eq!(root.attribute(semconv::TERMINAL_REASON), Some(&AttrValue::Str("max_turns".into())));
    assert!(matches!(root.attribute(semconv::CONVERSATION_ID), Some(AttrValue::Str(id)) if !id.is_empty()));
    assert!(matches!(root.status, reloop_otel::SpanStatus::Error(_)), "max_turns is an error end");
}
