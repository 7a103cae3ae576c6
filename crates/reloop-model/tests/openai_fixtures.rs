//! Every real recorded OpenAI-compatible stream, served byte for byte by a fake server on
//! 127.0.0.1 and fetched through `OpenAiProvider`.

mod common;

use common::*;
use reloop_core::{ContentBlock, StopReason};
use reloop_model::{parse_openai_sse, OpenAiConfig, OpenAiProvider, StreamEvent};

fn openai_streams() -> Vec<FixtureStream> {
    discover_streams().into_iter().filter(|s| s.wire == Wire::OpenAi).collect()
}

fn expected_stop(finish_reason: &str) -> StopReason {
    match finish_reason.split('/').next().unwrap_or_default() {
        "stop" => StopReason::EndTurn,
        "tool_calls" => StopReason::ToolUse,
        "length" => StopReason::MaxTokens,
        other => panic!("unexpected finish_reason {other}"),
    }
}

fn expected_tool_calls(summary: &str) -> usize {
    if summary.contains("PARALLEL tool_calls") {
        let indices = summary.split("indices [").nth(1).and_then(|s| s.split(']').next()).expect("indices");
        indices.split(',').count()
    } else if summary.contains("single tool_call") {
        1
    } else {
        0
    }
}

fn count(summary: &str, key: &str) -> usize {
    summary_field(summary, key).map_or(0, |n| n.parse().expect("count"))
}

#[tokio::test]
async fn every_recorded_openai_stream_assembles_or_fails_clearly() {
    let streams = openai_streams();
    // 25 chat-completions streams, plus one OpenAI Responses API stream (not chat completions).
    assert_eq!(streams.len(), 26, "{:#?}", streams.iter().map(|s| &s.name).collect::<Vec<_>>());
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    let _guard = settings.bind_to_scope();
    let (mut done, mut failed) = (0, 0);
    for (i, stream) in streams.iter().enumerate() {
        let server = FakeServer::start(Reply::sse(stream.body.clone()).chunked(chunk_pattern(i + 100))).await;
        let provider =
            OpenAiProvider::new(OpenAiConfig::new(&server.base_url, Some("sk-openai-test".into()))).expect("provider");
        let events = collect(&provider, simple_request(1)).await;
        check_contract(&events);
        assert_eq!(events, parse_openai_sse(&stream.body), "{}: HTTP and in-memory parses differ", stream.name);
        let summary_text = &stream.summary;
        assert!(!summary_text.is_empty(), "{}: no machine summary found in SOURCES.md", stream.name);

        if summary_text.starts_with("OpenAI Responses API") {
            let Some(StreamEvent::Failed(error)) = events.last() else { panic!("{}: {events:?}", stream.name) };
            assert_eq!(error.error_type, "invalid_stream");
            assert!(
                error.message.contains("OpenAI Responses API stream (`response.created` event)"),
                "{}",
                error.message
            );
            failed += 1;
        } else if let Some(code) = summary_field(summary_text, "in-stream error") {
            let Some(StreamEvent::Failed(error)) = events.last() else { panic!("{}: {events:?}", stream.name) };
            assert!(error.status.is_none());
            match code {
                "tool_use_failed" => {
                    assert_eq!(error.error_type, "invalid_request_error");
                    assert!(error.message.starts_with("Tool call validation failed"), "{}", error.message);
                }
                "400" => assert_eq!(error.message, "Token limit reached"),
                other => panic!("unexpected in-stream error {other}"),
            }
            failed += 1;
        } else {
            let Some(StreamEvent::Done { stop_reason, .. }) = events.last() else {
                panic!("{}: expected Done, got {:?}", stream.name, events.last())
            };
            let finish = summary_field(summary_text, "finish_reason").expect("finish_reason");
            assert_eq!(stop_reason.as_ref(), Some(&expected_stop(finish)), "{}", stream.name);
            let blocks: Vec<&ContentBlock> = events
                .iter()
                .filter_map(|e| match e {
                    StreamEvent::Block { block, .. } => Some(block),
                    _ => None,
                })
                .collect();
            let of = |kind: &str| blocks.iter().filter(|b| b.type_name() == kind).count();
            assert_eq!(of("tool_use"), expected_tool_calls(summary_text), "{}: tool calls", stream.name);
            assert_eq!(of("thinking"), usize::from(count(summary_text, "reasoning_deltas") > 0), "{}", stream.name);
            assert_eq!(of("text"), usize::from(count(summary_text, "content_deltas") > 0), "{}", stream.name);
            // Text and thinking come before every tool call.
            let first_tool = blocks.iter().position(|b| b.type_name() == "tool_use").unwrap_or(blocks.len());
            assert!(blocks[first_tool..].iter().all(|b| b.type_name() == "tool_use"), "{}", stream.name);
            done += 1;
        }
        insta::assert_json_snapshot!(format!("openai__{}", stream.snapshot_name()), summary(&events));
    }
    assert_eq!((done, failed), (23, 3));
}

#[test]
fn tool_call_arguments_streamed_char_by_char_parse() {
    let stream =
        openai_streams().into_iter().find(|s| s.name.ends_with("deepseek-tool-call.chunks.txt")).expect("deepseek");
    let events = parse_openai_sse(&stream.body);
    let tool = events.iter().find_map(|e| match e {
        StreamEvent::Block { block: ContentBlock::ToolUse(t), .. } => Some(t.clone()),
        _ => None,
    });
    let tool = tool.expect("a tool call");
    assert!(tool.input.is_object(), "{:?}", tool.input);
    assert!(!tool.id.is_empty());
}

#[test]
fn a_tool_call_at_index_one_is_still_the_only_call() {
    let stream =
        openai_streams().into_iter().find(|s| s.name.ends_with("anthropic-fallback-tool-call.sse")).expect("fixture");
    let events = parse_openai_sse(&stream.body);
    let blocks: Vec<(usize, ContentBlock)> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Block { index, block } => Some((*index, block.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        blocks,
        vec![
            (0, ContentBlock::text("Reading it.")),
            (1, ContentBlock::tool_use("toolu_sanitized", "read_file", serde_json::json!({"path": "a.txt"})))
        ]
    );
}
