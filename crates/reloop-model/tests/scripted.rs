//! The scripted provider: cassette responses of every kind, request-number indexing, delays,
//! exhaustion, and the errors a bad cassette produces.

mod common;

use std::time::Duration;

use common::*;
use futures::StreamExt;
use reloop_core::{ContentBlock, ModelError, StopReason, Usage};
use reloop_model::{parse_anthropic_sse, ModelProvider, ScriptError, ScriptedProvider, StreamEvent};
use serde_json::{json, Value};

fn cassette(responses: Value) -> ScriptedProvider {
    ScriptedProvider::from_json(&json!({ "responses": responses }).to_string()).expect("valid cassette")
}

#[tokio::test]
async fn message_error_and_sse_responses() {
    let sse =
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_s\",\"model\":\"m\"}}\n\n\
               event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"}}\n\n\
               event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    let provider = cassette(json!([
        {"message": {
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
            "content": [
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"path": "a.txt"}}
            ],
            "stop_reason": "tool_use", "stop_sequence": null,
            "usage": {"input_tokens": 12, "output_tokens": 5, "cache_read_input_tokens": null}
        }},
        {"error": {
            "status": 529,
            "headers": {"Retry-After": "2", "x-should-retry": "false"},
            "body": {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
        }},
        {"sse": sse}
    ]));
    assert_eq!(provider.name(), "scripted");
    assert_eq!(provider.len(), 3);

    let first = collect(&provider, simple_request(1)).await;
    check_contract(&first);
    assert_eq!(
        first,
        vec![
            StreamEvent::TextDelta { index: 0, text: "Let me look.".into() },
            StreamEvent::Block { index: 0, block: ContentBlock::text("Let me look.") },
            StreamEvent::Block { index: 1, block: ContentBlock::tool_use("toolu_1", "Read", json!({"path": "a.txt"})) },
            StreamEvent::Done {
                id: Some("msg_1".into()),
                model: Some("claude-x".into()),
                stop_reason: Some(StopReason::ToolUse),
                usage: Usage { input_tokens: 12, output_tokens: 5, ..Usage::default() },
            },
        ]
    );

    let second = collect(&provider, simple_request(2)).await;
    assert_eq!(
        second,
        vec![StreamEvent::Failed(
            ModelError::new(Some(529), "overloaded_error", "Overloaded")
                .with_retry_after_ms(Some(2000))
                .with_should_retry(Some(false))
        )]
    );

    let third = collect_all(&provider, simple_request(3)).await;
    assert_eq!(third, parse_anthropic_sse(sse.as_bytes()));
    assert!(matches!(third.last(), Some(StreamEvent::Done { id: Some(id), .. }) if id == "msg_s"));
}

#[tokio::test]
async fn responses_are_chosen_by_request_number_not_by_call_order() {
    let provider = cassette(json!([
        {"message": {"content": "one", "stop_reason": "end_turn"}},
        {"message": {"content": "two", "stop_reason": "end_turn"}}
    ]));
    // A resumed session asks request 2 first, and may ask it again.
    for number in [2, 2, 1] {
        let events = collect(&provider, simple_request(number)).await;
        let expected = if number == 1 { "one" } else { "two" };
        assert_eq!(events[1], StreamEvent::Block { index: 0, block: ContentBlock::text(expected) });
    }
}

#[tokio::test]
async fn a_request_beyond_the_script_is_exhausted() {
    let provider = cassette(json!([
        {"message": {"content": "a"}}, {"message": {"content": "b"}}, {"message": {"content": "c"}}
    ]));
    let events = collect(&provider, simple_request(4)).await;
    assert_eq!(
        events,
        vec![StreamEvent::Failed(ModelError::new(
            None,
            "script_exhausted",
            "the script has no response for model request 4 (it holds 3)"
        ))]
    );
    let zero = collect(&provider, simple_request(0)).await;
    assert!(matches!(&zero[..], [StreamEvent::Failed(e)] if e.error_type == "script_exhausted"));
}

#[tokio::test(start_paused = true)]
async fn delay_ms_waits_before_answering_and_can_be_aborted() {
    let provider = cassette(json!([{"delay_ms": 5000, "message": {"content": "late"}}]));
    let started = tokio::time::Instant::now();
    let events = collect(&provider, simple_request(1)).await;
    assert!(started.elapsed() >= Duration::from_millis(5000));
    assert_eq!(events.len(), 3);

    // Aborting mid-request: nothing arrives before the delay, and dropping is immediate.
    let mut stream = provider.stream(simple_request(1));
    let early = tokio::time::timeout(Duration::from_millis(4000), stream.next()).await;
    assert!(early.is_err(), "nothing arrives before delay_ms");
    drop(stream);
}

#[tokio::test]
async fn real_recorded_non_streaming_responses_replay() {
    // The TypeScript SDK's recorded tool-runner loop: ten real Messages API responses.
    let path = fixtures_root().join("anthropic-sdk-typescript/ToolRunner.json");
    let recorded: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("JSON");
    let responses: Vec<Value> = recorded.iter().map(|pair| json!({"message": pair["response"]})).collect();
    let provider = cassette(Value::Array(responses));
    assert_eq!(provider.len(), 10);
    for (i, pair) in recorded.iter().enumerate() {
        let events = collect(&provider, simple_request(i as u32 + 1)).await;
        check_contract(&events);
        let tools =
            events.iter().filter(|e| matches!(e, StreamEvent::Block { block: ContentBlock::ToolUse(_), .. })).count();
        let expected_tools =
            pair["response"]["content"].as_array().expect("content").iter().filter(|b| b["type"] == "tool_use").count();
        assert_eq!(tools, expected_tools, "response {}", i + 1);
        let Some(StreamEvent::Done { id, stop_reason, .. }) = events.last() else { panic!("{events:?}") };
        assert_eq!(id.as_deref(), pair["response"]["id"].as_str());
        assert_eq!(stop_reason.as_ref().map(StopReason::as_str), pair["response"]["stop_reason"].as_str());
    }
}

fn load_error(text: &str) -> String {
    match ScriptedProvider::from_json(text) {
        Ok(_) => panic!("expected {text} to be rejected"),
        Err(err) => err.to_string(),
    }
}

#[test]
fn bad_cassettes_are_rejected_with_the_place_and_the_reason() {
    assert_eq!(
        load_error("{\"responses\": [\n  {\"message\": {\"content\": \"a\"}}\n  {\"message\": {}}\n]}"),
        "cassette: invalid JSON at line 3, column 3: expected `,` or `]`"
    );
    assert_eq!(load_error("[]"), "cassette: expected an object {\"responses\": [...]}");
    assert_eq!(load_error("{\"response\": []}"), "cassette: expected a \"responses\" array");
    let unknown = load_error(r#"{"responses": [{"message": {"content": "a"}}, {"reply": "hi"}]}"#);
    assert_eq!(
        unknown,
        "cassette: response 2: unknown response kind \"reply\" (expected \"message\", \"error\" or \"sse\")"
    );
    let two = load_error(r#"{"responses": [{"message": {"content": "a"}, "sse": ""}]}"#);
    assert!(two.starts_with("cassette: response 1: expected exactly one of"), "{two}");
    let delay = load_error(r#"{"responses": [{"message": {"content": "a"}, "delay_ms": "soon"}]}"#);
    assert!(delay.contains("response 1: \"delay_ms\" must be a non-negative integer"), "{delay}");
    let message = load_error(r#"{"responses": [{"message": {"id": "m"}}]}"#);
    assert!(
        message
            .starts_with("cassette: response 1: \"message\" is not a Messages API response: missing field `content`"),
        "{message}"
    );
    let error = load_error(r#"{"responses": [{"error": {"body": {}}}]}"#);
    assert!(error.contains("response 1: \"error\" must be {\"status\""), "{error}");
    let sse = load_error(r#"{"responses": [{"sse": 3}]}"#);
    assert!(sse.contains("\"sse\" must be a string"), "{sse}");
}

#[test]
fn file_errors_name_the_file() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path();
    let bad = dir.join("bad.json");
    std::fs::write(&bad, "{\"responses\": [}").expect("write");
    let err = ScriptedProvider::from_file(&bad).expect_err("bad JSON");
    assert!(matches!(err, ScriptError::Json { line: 1, column: 16, .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!("cassette {}: invalid JSON at line 1, column 16: expected value", bad.display())
    );

    let shape = dir.join("shape.json");
    std::fs::write(&shape, r#"{"responses": [{"nope": 1}]}"#).expect("write");
    let err = ScriptedProvider::from_file(&shape).expect_err("bad shape").to_string();
    assert!(err.starts_with(&format!("cassette {}: response 1: unknown response kind", shape.display())), "{err}");

    let missing = dir.join("missing.json");
    let err = ScriptedProvider::from_file(&missing).expect_err("missing").to_string();
    assert!(err.starts_with(&format!("cannot read cassette {}", missing.display())), "{err}");

    let good = dir.join("good.json");
    std::fs::write(&good, r#"{"responses": [{"message": {"content": "hi"}}]}"#).expect("write");
    assert_eq!(ScriptedProvider::from_file(&good).expect("good").len(), 1);
}

/// A cassette file's responses are read from it when their requests come, in any order, with
/// escapes and multi-byte text intact; a file changed since loading answers with an error for
/// the response, not a panic nor a wrong answer.
#[tokio::test]
async fn a_cassette_file_is_read_one_response_at_a_time() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path();
    let path = dir.join("c.json");
    let text = "{\"responses\": [\n  {\"message\": {\"content\": \"检查 \\\"one\\\"\"}},\n  {\"message\": {\"content\": \"two\"}}\n]}";
    std::fs::write(&path, text).expect("write");
    let provider = ScriptedProvider::from_file(&path).expect("loads");
    for (number, expected) in [(2, "two"), (1, "检查 \"one\""), (2, "two")] {
        let events = collect(&provider, simple_request(number)).await;
        assert_eq!(events[1], StreamEvent::Block { index: 0, block: ContentBlock::text(expected) }, "{number}");
    }
    std::fs::write(&path, "{}").expect("truncate");
    let events = collect(&provider, simple_request(2)).await;
    assert!(
        matches!(&events[..], [StreamEvent::Failed(e)] if e.error_type == "invalid_stream" && e.message.contains("response 2 of the script is invalid")),
        "{events:?}"
    );
}

/// A cassette from a pipe cannot be read again: its responses are kept as text.
#[tokio::test]
async fn a_cassette_from_a_pipe_is_kept_as_text() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path();
    let fifo = dir.join("c.fifo");
    let status = std::process::Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(status.success());
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(fifo, r#"{"responses": [{"message": {"content": "piped"}}]}"#))
    };
    let provider = ScriptedProvider::from_file(&fifo).expect("loads from a pipe");
    writer.join().expect("writer").expect("written");
    let events = collect(&provider, simple_request(1)).await;
    assert_eq!(events[1], StreamEvent::Block { index: 0, block: ContentBlock::text("piped") });
}

#[test]
fn an_endless_cassette_file_is_refused() {
    let err = ScriptedProvider::from_file("/dev/zero").expect_err("endless").to_string();
    assert!(err.starts_with("cannot read cassette /dev/zero") && err.contains("at most 128 MiB"), "{err}");
}

/// A cassette file is streamed, not held: whatever the whitespace between and around its
/// responses, each is found where it lies and answers its request; a text replaced in a
/// response is replaced when it is read; errors are those of the same text given whole.
#[tokio::test]
async fn a_cassette_file_answers_whatever_its_layout() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let responses: Vec<String> = (0..40)
        .map(|i| json!({"message": {"content": format!("answer {i} at {{{{cwd}}}} \u{e9}\"q\"")}}).to_string())
        .collect();
    let gaps = ["", " ", "\n", "\r\n\t ", "  \n\n  "];
    for (k, gap) in gaps.iter().enumerate() {
        let mut text = format!("{gap}{{{gap}\"responses\"{gap}:{gap}[{gap}");
        for (i, r) in responses.iter().enumerate() {
            if i > 0 {
                text.push_str(&format!("{gap},{}", gaps[(i + k) % gaps.len()]));
            }
            text.push_str(r);
        }
        text.push_str(&format!("{gap}]{gap}}}{gap}"));
        let path = tmp.path().join(format!("c{k}.json"));
        std::fs::write(&path, &text).expect("write");
        let provider = ScriptedProvider::from_file_replacing(&path, Some(("{{cwd}}", "/w \\\"x\\\""))).expect("loads");
        assert_eq!(provider.len(), responses.len());
        for number in [40, 1, 17, 2, 39] {
            let events = collect(&provider, simple_request(number)).await;
            let expected = format!("answer {} at /w \"x\" \u{e9}\"q\"", number - 1);
            assert_eq!(
                events[1],
                StreamEvent::Block { index: 0, block: ContentBlock::text(expected) },
                "{k}: {number}"
            );
        }
        let whole = ScriptedProvider::from_json(&text).expect("the same text given whole");
        assert_eq!(whole.len(), provider.len());
    }
    let cases = [
        "{\"responses\": [\n  {\"message\": {\"content\": \"a\"}}\n  {\"message\": {}}\n]}",
        "[]",
        "{\"response\": []}",
        "{\"responses\": {}}",
        "{\"responses\": [], \"b\": 1, \"a\": 2}",
        "{\"a\": 1}",
        "3",
        "{\"responses\": [{\"message\": {\"content\": \"a\"}}, {\"reply\": \"hi\"}]}",
        "{\"responses\": [{\"reply\": \"hi\"}], \"responses\": [{\"message\": {\"content\": \"a\"}}]}",
        "{\"responses\": [{\"message\": {\"content\": \"a\"}}], \"responses\": [1]}",
        "{\"responses\": [{\"sse\": 3}]}",
        "{\"responses\": []} x",
        "",
    ];
    for (k, text) in cases.iter().enumerate() {
        let path = tmp.path().join(format!("bad{k}.json"));
        std::fs::write(&path, text).expect("write");
        let streamed = ScriptedProvider::from_file_replacing(&path, None).map(|p| p.len()).map_err(|e| e.to_string());
        let whole = ScriptedProvider::from_json(text).map(|p| p.len()).map_err(|e| e.to_string());
        assert_eq!(streamed, whole, "{text}");
    }
}
