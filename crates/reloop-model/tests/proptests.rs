//! Properties: the way a body is split into reads never changes the events, and no input,
//! however malformed, panics the parsers or breaks the stream contract.

mod common;

use std::sync::OnceLock;

use bytes::Bytes;
use common::*;
use futures::executor::block_on;
use futures::stream::{self, StreamExt};
use proptest::prelude::*;
use reloop_model::{
    parse_anthropic_sse, parse_openai_sse, sse_events, AnthropicAssembler, OpenAiAssembler, SseAssembler, StreamEvent,
};

fn fixtures() -> &'static Vec<FixtureStream> {
    static STREAMS: OnceLock<Vec<FixtureStream>> = OnceLock::new();
    STREAMS.get_or_init(discover_streams)
}

/// Splits `body` at the given cut points (taken modulo its length) and assembles the pieces.
fn assemble_split<A: SseAssembler>(body: &[u8], cuts: &[usize], assembler: A) -> Vec<StreamEvent> {
    let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (body.len() + 1)).collect();
    cuts.sort_unstable();
    let mut pieces = Vec::new();
    let mut start = 0;
    for cut in cuts.into_iter().chain([body.len()]) {
        pieces.push(Ok::<Bytes, std::convert::Infallible>(Bytes::copy_from_slice(&body[start..cut])));
        start = cut;
    }
    block_on(sse_events(stream::iter(pieces), assembler).collect())
}

fn assert_contract(events: &[StreamEvent]) {
    let terminals = events.iter().filter(|e| e.is_terminal()).count();
    assert_eq!(terminals, 1, "{events:?}");
    assert!(events.last().is_some_and(StreamEvent::is_terminal));
}

fn crlf(body: &[u8]) -> Vec<u8> {
    String::from_utf8_lossy(body).replace('\n', "\r\n").into_bytes()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn any_split_of_a_real_stream_gives_the_same_events(
        which in 0usize..1000,
        cuts in proptest::collection::vec(0usize..1_000_000, 0..40),
    ) {
        let streams = fixtures();
        let stream = &streams[which % streams.len()];
        let (whole, split) = match stream.wire {
            Wire::Anthropic => (parse_anthropic_sse(&stream.body), assemble_split(&stream.body, &cuts, AnthropicAssembler::new())),
            Wire::OpenAi => (parse_openai_sse(&stream.body), assemble_split(&stream.body, &cuts, OpenAiAssembler::new())),
        };
        prop_assert_eq!(whole, split, "{}", stream.name);
    }

    #[test]
    fn crlf_line_endings_split_anywhere_give_the_same_events(
        which in 0usize..1000,
        cuts in proptest::collection::vec(0usize..1_000_000, 0..40),
    ) {
        let streams = fixtures();
        let stream = &streams[which % streams.len()];
        let body = crlf(&stream.body);
        let (lf, split) = match stream.wire {
            Wire::Anthropic => (parse_anthropic_sse(&stream.body), assemble_split(&body, &cuts, AnthropicAssembler::new())),
            Wire::OpenAi => (parse_openai_sse(&stream.body), assemble_split(&body, &cuts, OpenAiAssembler::new())),
        };
        prop_assert_eq!(lf, split, "{}", stream.name);
    }

    #[test]
    fn arbitrary_bytes_never_panic(body in proptest::collection::vec(any::<u8>(), 0..2048)) {
        assert_contract(&parse_anthropic_sse(&body));
        assert_contract(&parse_openai_sse(&body));
    }

    #[test]
    fn mangled_real_streams_never_panic(
        which in 0usize..1000,
        edits in proptest::collection::vec((0usize..1_000_000, any::<u8>()), 1..12),
        truncate in proptest::option::of(0usize..1_000_000),
    ) {
        let streams = fixtures();
        let mut body = streams[which % streams.len()].body.clone();
        for (at, byte) in edits {
            let at = at % body.len().max(1);
            if let Some(slot) = body.get_mut(at) {
                *slot = byte;
            }
        }
        if let Some(cut) = truncate {
            body.truncate(cut % (body.len() + 1));
        }
        assert_contract(&parse_anthropic_sse(&body));
        assert_contract(&parse_openai_sse(&body));
    }

    #[test]
    fn arbitrary_events_fed_directly_never_panic(
        events in proptest::collection::vec(
            (prop_oneof![
                proptest::sample::select(vec![
                    "message_start", "content_block_start", "content_block_delta", "content_block_stop",
                    "message_delta", "message_stop", "error", "message", "ping",
                ]).prop_map(str::to_string),
                ".{0,12}",
            ],
            prop_oneof![
                Just(r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"n","input":{}}}"#.to_string()),
                Just(r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"a"}}"#.to_string()),
                Just(r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}"#.to_string()),
                Just(r#"{"type":"content_block_stop","index":0}"#.to_string()),
                Just(r#"{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":1}}"#.to_string()),
                Just(r#"{"choices":[{"delta":{"tool_calls":[{"index":3,"function":{"arguments":"{"}}]},"finish_reason":"length"}]}"#.to_string()),
                Just("[DONE]".to_string()),
                "\\PC{0,40}",
            ]),
            0..24,
        ),
    ) {
        let mut anthropic = AnthropicAssembler::new();
        let mut openai = OpenAiAssembler::new();
        let (mut a, mut o) = (Vec::new(), Vec::new());
        for (name, data) in &events {
            a.extend(anthropic.on_event(name, data));
            o.extend(openai.on_event(name, data));
        }
        a.extend(anthropic.finish());
        o.extend(openai.finish());
        assert_contract(&a);
        assert_contract(&o);
    }
}

#[test]
fn a_read_ending_between_cr_and_lf_does_not_end_the_event_early() {
    for stream in fixtures() {
        let body = crlf(&stream.body);
        let cuts: Vec<usize> = body.iter().enumerate().filter(|(_, b)| **b == b'\r').map(|(i, _)| i + 1).collect();
        let (lf, split) = match stream.wire {
            Wire::Anthropic => {
                (parse_anthropic_sse(&stream.body), assemble_split(&body, &cuts, AnthropicAssembler::new()))
            }
            Wire::OpenAi => (parse_openai_sse(&stream.body), assemble_split(&body, &cuts, OpenAiAssembler::new())),
        };
        assert_eq!(lf, split, "{}", stream.name);
    }
}
