//! The HTTP providers against a fake server on 127.0.0.1: what is sent, status errors,
//! connection errors, truncated bodies, cancellation, and the API key staying secret.

mod common;

use std::time::{Duration, Instant};

use common::*;
use futures::StreamExt;
use reloop_core::ModelError;
use reloop_model::{
    request_body, AnthropicConfig, AnthropicProvider, ModelProvider, OpenAiConfig, OpenAiProvider, StreamEvent,
};

const KEY: &str = "sk-ant-api03-SECRET-KEY-0123456789";

fn anthropic(base_url: &str) -> AnthropicProvider {
    AnthropicProvider::new(AnthropicConfig::new(KEY).with_base_url(base_url).with_header("anthropic-beta", "b1"))
        .expect("provider")
}

fn failure(events: &[StreamEvent]) -> ModelError {
    assert_eq!(events.len(), 1, "{events:?}");
    match &events[0] {
        StreamEvent::Failed(error) => {
            assert!(!error.message.contains(KEY), "the key leaked: {}", error.message);
            error.clone()
        }
        other => panic!("expected Failed, got {other:?}"),
    }
}

const OK_STREAM: &str = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"m\",\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n\
event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n\
event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n\
event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n\
event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n\
event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";

#[tokio::test]
async fn anthropic_sends_the_documented_request() {
    let server = FakeServer::start(Reply::sse(OK_STREAM)).await;
    let provider = anthropic(&format!("{}/", server.base_url));
    let request = simple_request(1);
    let events = collect(&provider, request.clone()).await;
    check_contract(&events);
    assert!(matches!(events.last(), Some(StreamEvent::Done { .. })));
    let sent = server.recorded();
    assert_eq!(sent.len(), 1);
    let sent = &sent[0];
    assert_eq!((sent.method.as_str(), sent.path.as_str()), ("POST", "/v1/messages"));
    assert_eq!(sent.header("x-api-key"), Some(KEY));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(sent.header("anthropic-beta"), Some("b1"));
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert_eq!(sent.header("accept"), Some("text/event-stream"));
    assert_eq!(sent.json(), request_body(&request));
    assert!(!format!("{provider:?}").contains(KEY));
}

#[tokio::test]
async fn openai_sends_bearer_only_with_a_key() {
    let body = "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
    let server = FakeServer::start(Reply::sse(body)).await;
    for key in [Some("sk-openai-SECRET".to_string()), None] {
        let provider =
            OpenAiProvider::new(OpenAiConfig::new(format!("{}/v1", server.base_url), key.clone())).expect("provider");
        let events = collect(&provider, simple_request(1)).await;
        assert!(matches!(events.last(), Some(StreamEvent::Done { .. })), "{events:?}");
        let sent = server.recorded().pop().expect("a request");
        assert_eq!(sent.path, "/v1/chat/completions");
        assert_eq!(sent.header("authorization").map(str::to_string), key.map(|k| format!("Bearer {k}")));
        assert_eq!(sent.json()["stream_options"]["include_usage"], true);
    }
}

#[tokio::test]
async fn overloaded_529_carries_retry_after_and_should_retry() {
    let body = r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    let reply = Reply::json(529, body).header("retry-after", "2").header("x-should-retry", "false");
    let server = FakeServer::start(reply).await;
    let error = failure(&collect(&anthropic(&server.base_url), simple_request(1)).await);
    assert_eq!(
        error,
        ModelError::new(Some(529), "overloaded_error", "Overloaded")
            .with_retry_after_ms(Some(2000))
            .with_should_retry(Some(false))
    );
}

/// The id Claude Code quotes when a subagent's request fails: the `request-id` header, else the
/// one the error body repeats; a hostile one is cut.
#[tokio::test]
async fn a_failed_request_keeps_the_server_s_request_id() {
    let body = r#"{"type":"error","error":{"type":"invalid_request_error","message":"bad"},"request_id":"req_body"}"#;
    let server = FakeServer::start(Reply::json(400, body).header("request-id", "req_header")).await;
    let error = failure(&collect(&anthropic(&server.base_url), simple_request(1)).await);
    assert_eq!(error.request_id.as_deref(), Some("req_header"));
    let server = FakeServer::start(Reply::json(400, body)).await;
    let error = failure(&collect(&anthropic(&server.base_url), simple_request(1)).await);
    assert_eq!(error.request_id.as_deref(), Some("req_body"));
    let long =
        format!(r#"{{"type":"error","error":{{"type":"x","message":"m"}},"request_id":"{}"}}"#, "r".repeat(10_000));
    let server = FakeServer::start(Reply::json(400, &long)).await;
    let error = failure(&collect(&anthropic(&server.base_url), simple_request(1)).await);
    assert!(error.request_id.is_some_and(|id| id.chars().count() <= 201));
}

#[tokio::test]
async fn prompt_too_long_400_keeps_the_message() {
    let body = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#;
    let server = FakeServer::start(Reply::json(400, body)).await;
    let error = failure(&collect(&anthropic(&server.base_url), simple_request(1)).await);
    assert_eq!(
        error,
        ModelError::new(Some(400), "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum")
    );
}

#[tokio::test]
async fn a_non_json_error_body_is_cut_and_the_key_scrubbed() {
    // A misbehaving proxy that echoes the request's headers into its error page.
    let page = format!("<html>bad gateway; you sent x-api-key: {KEY}{}</html>", " padding".repeat(200));
    let reply = Reply::json(502, &page).header("content-type", "text/html");
    let server = FakeServer::start(reply).await;
    let error = failure(&collect(&anthropic(&server.base_url), simple_request(1)).await);
    assert_eq!((error.status, error.error_type.as_str()), (Some(502), "api_error"));
    assert!(error.message.starts_with("<html>bad gateway; you sent x-api-key: <redacted>"), "{}", error.message);
    assert!(error.message.chars().count() <= 501, "cut to 500 characters: {}", error.message.len());
}

#[tokio::test]
async fn openai_status_errors_read_the_openai_error_shape() {
    let body = r#"{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}"#;
    let server = FakeServer::start(Reply::json(429, body).header("retry-after", "0.5")).await;
    let provider = OpenAiProvider::new(OpenAiConfig::new(&server.base_url, None)).expect("provider");
    let error = failure(&collect(&provider, simple_request(1)).await);
    assert_eq!(error, ModelError::new(Some(429), "requests", "Rate limit reached").with_retry_after_ms(Some(500)));
}

#[tokio::test]
async fn connection_refused_is_a_connection_error() {
    // Bind, learn the port, close: nothing listens there any more.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    drop(listener);
    let error = failure(&collect(&anthropic(&format!("http://{addr}")), simple_request(1)).await);
    assert_eq!((error.status, error.error_type.as_str()), (None, "connection_error"));
    // A local server that is not running: the message says where and what starts one.
    let down = format!(
        "nothing is listening at http://{addr} — start your model server there (ollama serve, vllm serve and \
         llama-server speak the OpenAI wire: --provider openai)"
    );
    assert_eq!(error.message, down);
    let provider = OpenAiProvider::new(OpenAiConfig::new(format!("http://{addr}"), Some(KEY.into()))).expect("p");
    let error = failure(&collect(&provider, simple_request(1)).await);
    assert_eq!((error.error_type.as_str(), error.message.as_str()), ("connection_error", down.as_str()));
}

#[tokio::test]
async fn a_body_cut_short_fails_as_invalid_stream() {
    let cut = &OK_STREAM[..OK_STREAM.find("event: message_delta").expect("delta")];
    let server = FakeServer::start(Reply::sse(cut).chunked(vec![7, 13])).await;
    let events = collect(&anthropic(&server.base_url), simple_request(1)).await;
    check_contract(&events);
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Failed(ModelError::new(None, "invalid_stream", "the stream ended before message_stop")))
    );
}

#[tokio::test]
async fn a_mid_stream_error_event_fails() {
    let cut = &OK_STREAM[..OK_STREAM.find("event: content_block_stop").expect("stop")];
    let body = format!(
        "{cut}event: error\ndata: {{\"type\":\"error\",\"error\":{{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}}}\n\n"
    );
    let server = FakeServer::start(Reply::sse(body)).await;
    let events = collect(&anthropic(&server.base_url), simple_request(1)).await;
    assert_eq!(events.first(), Some(&StreamEvent::TextDelta { index: 0, text: "Hi".into() }));
    assert_eq!(events.last(), Some(&StreamEvent::Failed(ModelError::new(None, "overloaded_error", "Overloaded"))));
    assert_eq!(events.len(), 2);
}

#[tokio::test]
async fn dropping_the_stream_closes_the_connection_promptly() {
    // The server sends the first events, then holds the connection open indefinitely.
    let prefix = OK_STREAM.find("event: content_block_stop").expect("stop");
    let mut server = FakeServer::start(Reply::sse(OK_STREAM).stalling_after(prefix)).await;
    for provider in [
        Box::new(anthropic(&server.base_url)) as Box<dyn ModelProvider>,
        Box::new(OpenAiProvider::new(OpenAiConfig::new(&server.base_url, None)).expect("provider")),
    ] {
        let mut stream = provider.stream(simple_request(1));
        if provider.name() == "anthropic" {
            let first = tokio::time::timeout(Duration::from_secs(10), stream.next()).await.expect("first event");
            assert!(matches!(first, Some(StreamEvent::Started { .. })), "{first:?}");
            let second = tokio::time::timeout(Duration::from_secs(10), stream.next()).await.expect("second event");
            assert_eq!(second, Some(StreamEvent::TextDelta { index: 0, text: "Hi".into() }));
        } else {
            // Wait until the server has answered the request, then give up on it.
            let started = Instant::now();
            while server.recorded().len() < 2 && started.elapsed() < Duration::from_secs(10) {
                let _ = tokio::time::timeout(Duration::from_millis(20), stream.next()).await;
            }
            assert_eq!(server.recorded().len(), 2);
        }
        let dropped = Instant::now();
        drop(stream);
        tokio::time::timeout(Duration::from_secs(5), server.closed.recv())
            .await
            .expect("the server saw the connection close within 5 s")
            .expect("closed signal");
        assert!(dropped.elapsed() < Duration::from_secs(5));
    }
}

#[tokio::test]
async fn a_connection_lost_mid_body_is_a_connection_error() {
    let sent = OK_STREAM.find("event: content_block_stop").expect("stop");
    let server = FakeServer::start(Reply::sse(OK_STREAM).aborting_after(sent)).await;
    let events = collect(&anthropic(&server.base_url), simple_request(1)).await;
    check_contract(&events);
    assert_eq!(events.first(), Some(&StreamEvent::TextDelta { index: 0, text: "Hi".into() }));
    let Some(StreamEvent::Failed(error)) = events.last() else { panic!("{events:?}") };
    assert_eq!((error.status, error.error_type.as_str()), (None, "connection_error"));
    assert!(error.message.starts_with("the connection failed while reading the response"), "{}", error.message);
}
