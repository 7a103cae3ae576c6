//! Redirects never carry the API key or the conversation to another origin: only a 307 or 308
//! within the origin is followed, and anything else is a final error that says where it pointed.

mod common;

use common::*;
use reloop_core::ModelError;
use reloop_model::{AnthropicConfig, AnthropicProvider, OpenAiConfig, OpenAiProvider, StreamEvent};

const KEY: &str = "sk-ant-api03-SECRET-KEY-0123456789";

fn failure(events: &[StreamEvent]) -> ModelError {
    match events {
        [StreamEvent::Failed(error)] => error.clone(),
        other => panic!("expected one failure, got {other:?}"),
    }
}

/// A server that sends every request on to `to` with `status`.
async fn redirecting(status: u16, to: &str) -> FakeServer {
    FakeServer::start(Reply::json(status, "{}").header("location", to)).await
}

#[tokio::test]
async fn a_307_to_another_origin_sends_that_origin_nothing() {
    let elsewhere = FakeServer::start(Reply::sse("")).await;
    let first = redirecting(307, &format!("{}/v1/messages?token=t0k3n", elsewhere.base_url)).await;
    let provider = AnthropicProvider::new(
        AnthropicConfig::new(KEY).with_base_url(&first.base_url).with_header("x-gateway-secret", "g4t3"),
    )
    .expect("provider");

    let error = failure(&collect(&provider, simple_request(1)).await);

    assert!(elsewhere.recorded().is_empty(), "the other origin received a request");
    assert_eq!(first.recorded().len(), 1);
    assert_eq!(error.status, Some(307));
    assert_eq!(
        error.message,
        format!(
            "the server at {} answered with a redirect (307) to {}; reloop follows only a 307 or 308 within the \
             same origin, so neither the API key nor the conversation was sent there: set --base-url to the server \
             that answers",
            first.base_url, elsewhere.base_url
        )
    );
    assert!(!error.message.contains("t0k3n"), "the target's query is not repeated");
}

#[tokio::test]
async fn every_redirect_status_to_another_origin_is_refused_for_both_providers() {
    let elsewhere = FakeServer::start(Reply::sse("")).await;
    for status in [301, 302, 303, 307, 308] {
        let first = redirecting(status, &format!("{}/v1/chat/completions", elsewhere.base_url)).await;
        let anthropic =
            AnthropicProvider::new(AnthropicConfig::new(KEY).with_base_url(&first.base_url)).expect("provider");
        let openai = OpenAiProvider::new(OpenAiConfig::new(format!("{}/v1", first.base_url), Some(KEY.to_string())))
            .expect("provider");
        assert_eq!(failure(&collect(&anthropic, simple_request(1)).await).status, Some(status));
        assert_eq!(failure(&collect(&openai, simple_request(1)).await).status, Some(status));
    }
    assert!(elsewhere.recorded().is_empty(), "the other origin received a request");
}

#[tokio::test]
async fn another_port_on_the_same_host_is_another_origin() {
    let elsewhere = FakeServer::start(Reply::sse("")).await;
    let port = elsewhere.base_url.rsplit(':').next().expect("port");
    let first = redirecting(308, &format!("http://127.0.0.1:{port}/v1/messages")).await;
    let provider = AnthropicProvider::new(AnthropicConfig::new(KEY).with_base_url(&first.base_url)).expect("provider");
    assert_eq!(failure(&collect(&provider, simple_request(1)).await).status, Some(308));
    assert!(elsewhere.recorded().is_empty());
}

#[tokio::test]
async fn a_307_within_the_origin_is_followed_with_the_key_and_body() {
    // The server sends every request to itself again: followed, with the key, ten times.
    let server = FakeServer::start(Reply::json(307, "{}").header("location", "/v1/messages")).await;
    let provider = AnthropicProvider::new(AnthropicConfig::new(KEY).with_base_url(&server.base_url)).expect("provider");
    let error = failure(&collect(&provider, simple_request(1)).await);
    let recorded = server.recorded();
    assert_eq!(recorded.len(), 11, "the first request and ten redirects");
    assert!(recorded.iter().all(|r| r.header("x-api-key") == Some(KEY) && !r.body.is_empty()));
    assert_eq!(error.error_type, "connection_error");
    assert!(error.message.contains("more than 10 redirects"), "{}", error.message);
}
