//! Every real recorded Anthropic stream, served byte for byte by a fake server on 127.0.0.1 and
//! fetched through `AnthropicProvider`.

mod common;

use std::collections::BTreeMap;

use common::*;
use reloop_core::{ContentBlock, StopReason};
use reloop_model::{parse_anthropic_sse, AnthropicConfig, AnthropicProvider, StreamEvent};
use serde_json::Value;

fn anthropic_streams() -> Vec<FixtureStream> {
    discover_streams().into_iter().filter(|s| s.wire == Wire::Anthropic).collect()
}

/// `textx1,tool_usex2` → {"text": 1, "tool_use": 2}
fn expected_blocks(summary: &str) -> BTreeMap<String, usize> {
    let blocks = summary_field(summary, "blocks").unwrap_or_else(|| panic!("no blocks= in {summary:?}"));
    blocks
        .split(',')
        .map(|entry| {
            let (kind, count) = entry.rsplit_once('x').expect("kindxN");
            (kind.to_string(), count.parse().expect("count"))
        })
        .collect()
}

#[tokio::test]
async fn every_recorded_anthropic_stream_assembles() {
    let streams = anthropic_streams();
    // 18 extracted cassette bodies, 3 raw SDK fixtures, 6 vercel JSON-lines streams.
    assert_eq!(streams.len(), 27, "{:#?}", streams.iter().map(|s| &s.name).collect::<Vec<_>>());
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    let _guard = settings.bind_to_scope();
    for (i, stream) in streams.iter().enumerate() {
        let server = FakeServer::start(Reply::sse(stream.body.clone()).chunked(chunk_pattern(i))).await;
        let provider = AnthropicProvider::new(AnthropicConfig::new("sk-ant-test").with_base_url(&server.base_url))
            .expect("provider");
        let all = collect_all(&provider, simple_request(1)).await;
        check_contract(&all);
        // The HTTP path and the in-memory path agree, whatever the TCP split.
        assert_eq!(all, parse_anthropic_sse(&stream.body), "{}: HTTP and in-memory parses differ", stream.name);
        let events: Vec<StreamEvent> = all.into_iter().filter(|e| !matches!(e, StreamEvent::Started { .. })).collect();

        let Some(StreamEvent::Done { stop_reason, .. }) = events.last() else {
            panic!("{}: expected Done, got {:?}", stream.name, events.last());
        };
        let expected_stop = summary_field(&stream.summary, "stop_reason").expect("stop_reason in summary");
        assert_eq!(stop_reason.as_ref().map(StopReason::as_str), Some(expected_stop), "{}", stream.name);
        let mut kinds = BTreeMap::new();
        for event in &events {
            if let StreamEvent::Block { block, .. } = event {
                *kinds.entry(block.type_name().to_string()).or_insert(0) += 1;
            }
        }
        assert_eq!(kinds, expected_blocks(&stream.summary), "{}: block types", stream.name);
        insta::assert_json_snapshot!(format!("anthropic__{}", stream.snapshot_name()), summary(&events));
    }
}

fn blocks(events: &[StreamEvent]) -> Vec<ContentBlock> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Block { block, .. } => Some(block.clone()),
            _ => None,
        })
        .collect()
}

fn stream_named(suffix: &str) -> FixtureStream {
    anthropic_streams().into_iter().find(|s| s.name.ends_with(suffix)).unwrap_or_else(|| panic!("fixture {suffix}"))
}

#[test]
fn max_tokens_inside_a_tool_use_keeps_the_raw_input() {
    let stream = stream_named("anthropic-sdk-python/incomplete_partial_json_response.txt");
    let events = parse_anthropic_sse(&stream.body);
    let blocks = blocks(&events);
    let ContentBlock::ToolUse(tool_use) = &blocks[1] else { panic!("{blocks:?}") };
    assert_eq!(tool_use.name, "make_file");
    let Value::String(raw) = &tool_use.input else { panic!("input should be the raw text: {:?}", tool_use.input) };
    assert!(raw.starts_with("{\"filename\": \"taxes.txt\", \"lines_of_text\": [") && raw.ends_with("\"Filing taxes"));
    assert!(matches!(events.last(), Some(StreamEvent::Done { stop_reason: Some(StopReason::MaxTokens), .. })));
}

#[test]
fn a_tool_without_arguments_gets_an_empty_object() {
    let events = parse_anthropic_sse(&stream_named("vercel-ai/anthropic-tool-no-args.chunks.txt").body);
    let tool = blocks(&events).into_iter().find_map(|b| match b {
        ContentBlock::ToolUse(t) => Some(t),
        _ => None,
    });
    assert_eq!(tool.map(|t| t.input.clone()), Some(serde_json::json!({})));
}

#[test]
fn server_tool_blocks_are_kept_whole() {
    let events = parse_anthropic_sse(&stream_named("test_anthropic_code_execution_tool_stream.0.sse").body);
    let blocks = blocks(&events);
    let server_use = blocks.iter().find(|b| b.type_name() == "server_tool_use").expect("server_tool_use");
    let ContentBlock::Other(fields) = server_use else { panic!("{server_use:?}") };
    assert_eq!(fields["name"], "bash_code_execution");
    assert_eq!(fields["input"]["command"], "echo \"65465-6544 * 65464-6+1.02255\" | bc -l");
    let result = blocks.iter().find(|b| b.type_name() == "bash_code_execution_tool_result").expect("result block");
    let ContentBlock::Other(fields) = result else { panic!("{result:?}") };
    assert_eq!(fields["content"]["stdout"], "-428330955.97745\n");
}

#[test]
fn citations_deltas_are_collected_on_their_text_block() {
    let events = parse_anthropic_sse(&stream_named("test_pause_turn_web_search_streaming_vcr.1.sse").body);
    let cited: usize = blocks(&events)
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text(t) => t.extra.get("citations").as_ref().and_then(Value::as_array).map(Vec::len),
            _ => None,
        })
        .sum();
    assert_eq!(cited, 19, "every citations_delta lands on a text block");
}

#[test]
fn thinking_keeps_its_signature() {
    let events =
        parse_anthropic_sse(&stream_named("TestAnthropicThinking/claude-sonnet-4/thinking-streaming.0.sse").body);
    let ContentBlock::Thinking(thinking) = &blocks(&events)[0] else { panic!("{events:?}") };
    assert!(!thinking.thinking.is_empty());
    assert!(thinking.signature.as_deref().is_some_and(|s| s.len() > 100));
}
