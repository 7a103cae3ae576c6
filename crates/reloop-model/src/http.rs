//! HTTP plumbing shared by the Anthropic and OpenAI-compatible providers: one POST, status
//! errors read from the body and headers, connection errors, and the SSE body handed to an
//! assembler. Header values that carry secrets are marked sensitive and never formatted.

use std::error::Error as _;

use futures::stream::{self, BoxStream, StreamExt};
use reloop_core::ModelError;
use reqwest::header::HeaderMap;
use serde_json::Value;

use crate::provider::StreamEvent;
use crate::sse::{excerpt, sse_events, SseAssembler};

/// POSTs `body` and streams the SSE answer through `assembler`. Everything the stream needs is
/// moved into it, so dropping the stream drops the request or the response body.
///
/// `secret` (the API key) is scrubbed from every failure message: a proxy or server that
/// echoes request headers into its error body must not leak it into the journal.
pub(crate) fn post_sse<A: SseAssembler>(
    client: reqwest::Client,
    url: String,
    headers: HeaderMap,
    body: Value,
    assembler: A,
    secret: Option<String>,
) -> BoxStream<'static, StreamEvent> {
    let response = async move {
        let sent = client.post(url).headers(headers).json(&body).send().await;
        let response = match sent {
            Ok(response) => response,
            Err(err) => return failed(connection_error(&err)),
        };
        let status = response.status();
        if !status.is_success() {
            let headers = response.headers().clone();
            let text = match response.text().await {
                Ok(text) => text,
                Err(err) => format!("(the error body could not be read: {})", error_chain(&err)),
            };
            let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_string);
            return failed(error_from_http(status.as_u16(), header, &text));
        }
        sse_events(Box::pin(response.bytes_stream()), assembler)
    };
    let secret = secret.filter(|s| !s.trim().is_empty());
    stream::once(response)
        .flatten()
        .map(move |event| match (event, &secret) {
            (StreamEvent::Failed(mut error), Some(secret)) if error.message.contains(secret.as_str()) => {
                error.message = error.message.replace(secret.as_str(), "<redacted>");
                StreamEvent::Failed(error)
            }
            (event, _) => event,
        })
        .boxed()
}

fn failed(error: ModelError) -> BoxStream<'static, StreamEvent> {
    stream::iter([StreamEvent::Failed(error)]).boxed()
}

/// A non-2xx answer. The body is an Anthropic (`{"type":"error","error":{..}}`) or OpenAI
/// (`{"error":{..}}`) error object, or anything else, kept as text cut to 500 characters.
pub(crate) fn error_from_http(status: u16, header: impl Fn(&str) -> Option<String>, body: &str) -> ModelError {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let error = parsed.as_ref().and_then(|v| v.get("error")).filter(|e| e.is_object());
    let error_type = error
        .and_then(|e| e.get("type").or_else(|| e.get("code")))
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| default_error_type(status).to_string());
    let message = match error.and_then(|e| e.get("message")).and_then(Value::as_str) {
        Some(message) => message.to_string(),
        None if body.trim().is_empty() => format!("HTTP {status} with an empty body"),
        None => excerpt(body.trim(), 500),
    };
    // `retry-after-ms` is the precise form Anthropic sends beside the standard header.
    let retry_after_ms = header("retry-after-ms")
        .and_then(|v| v.trim().parse::<f64>().ok())
        .or_else(|| header("retry-after").and_then(|v| v.trim().parse::<f64>().ok()).map(|s| s * 1000.0))
        .filter(|ms| ms.is_finite() && *ms >= 0.0)
        .map(|ms| ms.round() as u64);
    let should_retry = header("x-should-retry").and_then(|v| match v.trim() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    });
    ModelError::new(Some(status), error_type, message)
        .with_retry_after_ms(retry_after_ms)
        .with_should_retry(should_retry)
}

fn default_error_type(status: u16) -> &'static str {
    match status {
        400 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        _ => "api_error",
    }
}

/// A request that got no HTTP answer. The request's headers (the API key) are not part of
/// reqwest's error text; the URL is, and it holds no secret.
pub(crate) fn connection_error(err: &reqwest::Error) -> ModelError {
    let kind = if err.is_timeout() { "timed out" } else { "failed" };
    ModelError::new(None, "connection_error", format!("the request {kind}: {}", error_chain(err)))
}

fn error_chain(err: &reqwest::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// `{base}/{path}`, tolerating a trailing slash on the base.
pub(crate) fn join_url(base: &str, path: &str) -> String {
    format!("{}/{}", base.trim_end_matches('/'), path.trim_start_matches('/'))
}
