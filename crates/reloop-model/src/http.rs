//! HTTP plumbing shared by the Anthropic and OpenAI-compatible providers: one POST under the
//! request timeout, status errors read from the (capped) body and headers, connection errors,
//! and the SSE body handed to an assembler under the response's caps and the idle timer.
//! Header values that carry secrets are marked sensitive and never formatted.

use std::error::Error as _;
use std::time::Duration;

use futures::stream::{self, BoxStream, StreamExt};
use reloop_core::ModelError;
use reqwest::header::HeaderMap;
use serde_json::Value;

use crate::limits::{ResponseLimits, Timeouts, API_TIMEOUT_ENV};
use crate::provider::StreamEvent;
use crate::sse::{excerpt, sse_events_with, SseAssembler};

/// The most of a non-2xx body read: enough for any real error object, and only 500
/// characters of it are quoted.
const ERROR_BODY_CAP: usize = 64 << 10;

/// Redirects a request follows at most, all within its origin.
const MAX_REDIRECTS: usize = 10;

/// The redirect policy of the model clients: only a 307 or 308 to the same origin (scheme, host,
/// port) is followed. reqwest's default follows any redirect anywhere, re-sending the API key
/// (`x-api-key` is not among the headers it drops across hosts), the `--header` extras and the
/// whole conversation to whatever origin a `location` names. A 301, 302 or 303 would turn the
/// POST into a GET without its body. Anything else comes back as the 3xx response itself, which
/// [`redirect_refused`] turns into a final error. rmcp's MCP client applies the same rule.
pub(crate) fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let keeps_body = matches!(attempt.status().as_u16(), 307 | 308);
        let same_origin = attempt.previous().first().is_some_and(|first| first.origin() == attempt.url().origin());
        if !keeps_body || !same_origin {
            attempt.stop()
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
        } else {
            attempt.follow()
        }
    })
}

/// The error for a redirect that was not followed: where it pointed (its origin only, since a
/// path or query may carry a token) and why nothing was sent there. HTTP 3xx is not retried.
fn redirect_refused(status: u16, url: &str, headers: &HeaderMap) -> ModelError {
    let base = reqwest::Url::parse(url).ok();
    let target = headers
        .get(reqwest::header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|location| base.as_ref().and_then(|b| b.join(location).ok()))
        .map_or_else(|| "nowhere readable".to_string(), |t| t.origin().ascii_serialization());
    let from = base.map_or_else(String::new, |b| b.origin().ascii_serialization());
    let message = format!(
        "the server at {from} answered with a redirect ({status}) to {target}; reloop follows only a 307 or 308 \
         within the same origin, so neither the API key nor the conversation was sent there: set --base-url to \
         the server that answers"
    );
    ModelError::new(Some(status), "redirect_refused", message)
}

/// One streamed POST: where, what, and under which caps.
pub(crate) struct SsePost {
    pub client: reqwest::Client,
    pub url: String,
    pub headers: HeaderMap,
    /// The request's JSON, serialized once.
    pub body: Vec<u8>,
    pub limits: ResponseLimits,
    pub timeouts: Timeouts,
    /// The API key and the base URL's password: scrubbed from every failure message, since a
    /// proxy or server that echoes request headers into its error body must not leak them
    /// into the journal.
    pub secrets: Vec<String>,
}

/// POSTs and streams the SSE answer through `assembler`. Everything the stream needs is moved
/// into it, so dropping the stream drops the request or the response body.
pub(crate) fn post_sse<A: SseAssembler>(post: SsePost, assembler: A) -> BoxStream<'static, StreamEvent> {
    let SsePost { client, url, headers, body, limits, timeouts, secrets } = post;
    let response = async move {
        let deadline = tokio::time::Instant::now() + timeouts.request;
        let sent = tokio::time::timeout_at(deadline, client.post(&url).headers(headers).body(body).send()).await;
        let response = match sent {
            Ok(Ok(response)) => response,
            Ok(Err(err)) => return failed(connection_error(&err)),
            Err(_) => return failed(request_timed_out(timeouts.request)),
        };
        let status = response.status();
        if status.is_redirection() {
            return failed(redirect_refused(status.as_u16(), &url, response.headers()));
        }
        if !status.is_success() {
            let headers = response.headers().clone();
            let text = match tokio::time::timeout_at(deadline, read_capped(response, ERROR_BODY_CAP)).await {
                Ok(text) => text,
                Err(_) => "(the error body did not arrive before the request timeout)".to_string(),
            };
            let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_string);
            return failed(error_from_http(status.as_u16(), header, &text));
        }
        sse_events_with(Box::pin(response.bytes_stream()), assembler, limits, Some(timeouts.stream_idle))
    };
    let secrets: Vec<String> = secrets.into_iter().filter(|s| !s.trim().is_empty()).collect();
    stream::once(response)
        .flatten()
        .map(move |event| match event {
            StreamEvent::Failed(mut error) => {
                for secret in &secrets {
                    if error.message.contains(secret.as_str()) {
                        error.message = error.message.replace(secret.as_str(), "<redacted>");
                    }
                }
                StreamEvent::Failed(error)
            }
            event => event,
        })
        .boxed()
}

/// POSTs for a whole (non-streamed) answer and turns it into events with `events`. The body is
/// read to at most `cap` bytes within the request timeout; a larger one is an error, never held.
pub(crate) fn post_json(
    post: SsePost,
    cap: usize,
    events: fn(Value) -> Result<Vec<StreamEvent>, String>,
) -> BoxStream<'static, StreamEvent> {
    let SsePost { client, url, headers, body, timeouts, secrets, .. } = post;
    let response = async move {
        let deadline = tokio::time::Instant::now() + timeouts.request;
        let sent = tokio::time::timeout_at(deadline, client.post(&url).headers(headers).body(body).send()).await;
        let response = match sent {
            Ok(Ok(response)) => response,
            Ok(Err(err)) => return vec![StreamEvent::Failed(connection_error(&err))],
            Err(_) => return vec![StreamEvent::Failed(request_timed_out(timeouts.request))],
        };
        let status = response.status();
        if status.is_redirection() {
            return vec![StreamEvent::Failed(redirect_refused(status.as_u16(), &url, response.headers()))];
        }
        let response_headers = response.headers().clone();
        let cap = if status.is_success() { cap.saturating_add(1) } else { ERROR_BODY_CAP };
        let text = match tokio::time::timeout_at(deadline, read_capped(response, cap)).await {
            Ok(text) => text,
            Err(_) => return vec![StreamEvent::Failed(request_timed_out(timeouts.request))],
        };
        if !status.is_success() {
            let header = |name: &str| response_headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_string);
            return vec![StreamEvent::Failed(error_from_http(status.as_u16(), header, &text))];
        }
        if text.len() >= cap {
            let message = format!("the whole answer is larger than {} bytes", cap - 1);
            return vec![StreamEvent::Failed(ModelError::new(None, "response_too_large", message))];
        }
        match serde_json::from_str::<Value>(&text).map_err(|e| e.to_string()).and_then(events) {
            Ok(events) => events,
            Err(e) => vec![StreamEvent::invalid_stream(format!("the whole answer is not a response: {e}"))],
        }
    };
    let secrets: Vec<String> = secrets.into_iter().filter(|s| !s.trim().is_empty()).collect();
    stream::once(response)
        .flat_map(stream::iter)
        .map(move |event| match event {
            StreamEvent::Failed(mut error) => {
                for secret in &secrets {
                    error.message = error.message.replace(secret.as_str(), "<redacted>");
                }
                StreamEvent::Failed(error)
            }
            event => event,
        })
        .boxed()
}

/// At most `cap` bytes of a body, as text; the rest is never read.
async fn read_capped(mut response: reqwest::Response, cap: usize) -> String {
    let mut bytes = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                bytes.extend_from_slice(&chunk[..chunk.len().min(cap - bytes.len())]);
                if bytes.len() >= cap {
                    break;
                }
            }
            Ok(None) => break,
            Err(err) => return format!("(the error body could not be read: {})", error_chain(&err)),
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// No response headers within the request timeout: retryable, like a connection error.
fn request_timed_out(timeout: Duration) -> ModelError {
    ModelError::new(
        None,
        "connection_error",
        format!("Request timed out: no response within {} ms ({API_TIMEOUT_ENV})", timeout.as_millis()),
    )
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
    let asked = crate::retry_after::asked(
        header("retry-after-ms").as_deref(),
        header("retry-after").as_deref(),
        std::time::SystemTime::now(),
    );
    let should_retry = header("x-should-retry").and_then(|v| match v.trim() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    });
    // Anthropic's `request-id` header, else the id its error body repeats.
    let request_id = header("request-id")
        .or_else(|| parsed.as_ref()?.get("request_id")?.as_str().map(str::to_string))
        .map(|id| excerpt(id.trim(), 200))
        .filter(|id| !id.is_empty());
    let mut error = ModelError::new(Some(status), error_type, message)
        .with_retry_after_ms(asked.map(|a| a.ms))
        .with_should_retry(should_retry)
        .with_request_id(request_id);
    error.retry_after_capped_from_ms = asked.and_then(|a| a.capped_from);
    error
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
    if let Some(url) = err.url().filter(|url| is_refused(err) && is_local(url)) {
        return ModelError::new(None, "connection_error", nothing_listening(url));
    }
    let kind = if err.is_timeout() { "timed out" } else { "failed" };
    ModelError::new(None, "connection_error", format!("the request {kind}: {}", error_chain(err)))
}

/// The message for a local model server that is not running: where reloop knocked and what
/// starts one, since the usual cause is a server not started yet (the URL was given, so the
/// hint is the wire the usual local servers speak, not `--base-url`).
fn nothing_listening(url: &reqwest::Url) -> String {
    format!(
        "nothing is listening at {} — start your model server there (ollama serve, vllm serve and \
         llama-server speak the OpenAI wire: --provider openai)",
        url.origin().ascii_serialization()
    )
}

/// Whether the connection was refused: the port is closed, nobody listens.
fn is_refused(err: &reqwest::Error) -> bool {
    let mut source = err.source();
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::ConnectionRefused {
                return true;
            }
        }
        source = cause.source();
    }
    false
}

fn is_local(url: &reqwest::Url) -> bool {
    let Some(host) = url.host_str() else { return false };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost") || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Whether `base_url` names a server on this machine (`localhost`, `127.0.0.0/8`, `::1`):
/// there, a refused connection means the server is not running, and the loop gives up soon.
pub fn is_local_url(base_url: &str) -> bool {
    reqwest::Url::parse(base_url).is_ok_and(|url| is_local(&url))
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

/// What stands for the user information (`user:password@`) of a base URL wherever it is
/// shown or journaled.
const REDACTED_USERINFO: &str = "***";

/// The base URL as it may be shown and journaled: any user information (a password, or a
/// token passed as the user name) replaced by `***`.
pub fn redact_url(url: &str) -> String {
    match userinfo(url) {
        Some((from, to)) => format!("{}{REDACTED_USERINFO}{}", &url[..from], &url[to..]),
        None => url.to_string(),
    }
}

/// Whether `url` came out of [`redact_url`] with its user information taken out: it cannot
/// be used to connect again.
pub fn is_redacted_url(url: &str) -> bool {
    userinfo(url).is_some_and(|(from, to)| &url[from..to] == REDACTED_USERINFO)
}

/// What of a base URL is secret: its whole user information and its password, as written.
pub(crate) fn url_secrets(url: &str) -> Vec<String> {
    let Some((from, to)) = userinfo(url) else { return Vec::new() };
    let info = &url[from..to];
    let mut secrets = vec![info.to_string()];
    if let Some((_, password)) = info.split_once(':') {
        secrets.push(password.to_string());
    }
    secrets.retain(|s| !s.is_empty());
    secrets
}

/// The byte span of `user:password` in `scheme://user:password@host/...`.
fn userinfo(url: &str) -> Option<(usize, usize)> {
    let from = url.find("://")? + 3;
    let rest = &url[from..];
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    let at = authority.rfind('@')?;
    Some((from, from + at))
}

/// `{base}/{path}`, tolerating a trailing slash on the base.
pub(crate) fn join_url(base: &str, path: &str) -> String {
    format!("{}/{}", base.trim_end_matches('/'), path.trim_start_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_information_never_shows() {
        assert_eq!(redact_url("http://user:pa55@127.0.0.1:8080/v1"), "http://***@127.0.0.1:8080/v1");
        assert_eq!(redact_url("https://tok3n@gw.example/x?a=b@c"), "https://***@gw.example/x?a=b@c");
        assert_eq!(redact_url("http://127.0.0.1:8080/a@b"), "http://127.0.0.1:8080/a@b");
        assert_eq!(redact_url("not a url"), "not a url");
        assert!(is_redacted_url("http://***@127.0.0.1:8080"));
        assert!(!is_redacted_url("http://user:pa55@127.0.0.1:8080"));
        assert_eq!(url_secrets("http://user:pa55@h"), vec!["user:pa55".to_string(), "pa55".to_string()]);
        assert!(url_secrets("http://h/@").is_empty());
    }

    #[test]
    fn loopback_hosts_are_local_and_others_are_not() {
        for url in ["http://127.0.0.1:11434", "http://localhost:8000/v1", "http://[::1]:8080", "http://127.1.2.3"] {
            assert!(is_local_url(url), "{url}");
        }
        for url in ["https://api.anthropic.com", "http://10.0.0.2:11434", "http://localhost.example", "nonsense"] {
            assert!(!is_local_url(url), "{url}");
        }
    }

    #[tokio::test]
    async fn a_refused_local_connection_names_the_url_and_what_starts_a_server() {
        // A port that was just free: bound, then released, so nothing listens on it.
        let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).unwrap();
        let url = format!("http://127.0.0.1:{port}/v1/messages");
        let err = reqwest::Client::new().post(&url).send().await.unwrap_err();
        let error = connection_error(&err);
        assert_eq!(error.error_type, "connection_error");
        assert_eq!(
            error.message,
            format!(
                "nothing is listening at http://127.0.0.1:{port} — start your model server there \
                 (ollama serve, vllm serve and llama-server speak the OpenAI wire: --provider openai)"
            )
        );
    }
}
