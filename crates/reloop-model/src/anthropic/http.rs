//! The Anthropic Messages API over HTTP, streaming.

use std::fmt;
use std::time::Duration;

use futures::stream::BoxStream;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE};
use serde_json::Value;

use crate::anthropic::sse::AnthropicAssembler;
use crate::error::ConfigError;
use crate::http::{join_url, post_json, post_sse, redact_url, url_secrets, SsePost};
use crate::limits::{ResponseLimits, Timeouts};
use crate::provider::{ModelProvider, ModelRequest, StreamEvent};

/// Where requests go unless the configuration names another server (a proxy, a gateway).
pub(crate) const DEFAULT_ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";
const ANTHROPIC_VERSION: &str = "2023-06-01";

/// Where and how to reach the API. `Debug` redacts the key.
#[derive(Clone)]
#[non_exhaustive]
pub struct AnthropicConfig {
    /// The server, without `/v1/messages`: the API's own, a proxy's or a gateway's.
    pub base_url: String,
    /// Sent as `x-api-key`.
    pub api_key: String,
    /// Sent with every request (e.g. `anthropic-beta`).
    pub extra_headers: Vec<(String, String)>,
    /// How long to wait for the server.
    pub timeouts: Timeouts,
}

impl AnthropicConfig {
    /// The Anthropic API itself with `api_key`, default timeouts and no extra headers.
    pub fn new(api_key: impl Into<String>) -> Self {
        AnthropicConfig {
            base_url: DEFAULT_ANTHROPIC_BASE_URL.into(),
            api_key: api_key.into(),
            extra_headers: Vec::new(),
            timeouts: Timeouts::default(),
        }
    }

    /// This configuration with other timeouts (`API_TIMEOUT_MS`, the stream idle timeout).
    pub fn with_timeouts(mut self, timeouts: Timeouts) -> Self {
        self.timeouts = timeouts;
        self
    }

    /// This configuration sending to another server (`ANTHROPIC_BASE_URL`, `--base-url`).
    pub fn with_base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = base_url.into();
        self
    }

    /// This configuration with one more header sent with every request.
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.extra_headers.push((name.into(), value.into()));
        self
    }
}

impl fmt::Debug for AnthropicConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnthropicConfig")
            .field("base_url", &redact_url(&self.base_url))
            .field("api_key", &"<redacted>")
            .field("extra_headers", &self.extra_headers.iter().map(|(name, _)| name).collect::<Vec<_>>())
            .finish()
    }
}

/// Streams responses from `POST {base_url}/v1/messages`.
#[derive(Clone)]
pub struct AnthropicProvider {
    client: reqwest::Client,
    url: String,
    headers: HeaderMap,
    timeouts: Timeouts,
    /// The key and the base URL's password, scrubbed from failure messages.
    secrets: Vec<String>,
}

impl fmt::Debug for AnthropicProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnthropicProvider").field("url", &redact_url(&self.url)).finish_non_exhaustive()
    }
}

impl AnthropicProvider {
    /// A provider for `config`, checked now (the base URL's scheme, the key and headers as
    /// header values) so a bad configuration fails before the session starts, not at its first
    /// request.
    pub fn new(config: AnthropicConfig) -> Result<Self, ConfigError> {
        check_base_url(&config.base_url)?;
        let mut headers = HeaderMap::new();
        let mut key = HeaderValue::from_str(&config.api_key).map_err(|_| ConfigError::ApiKey)?;
        key.set_sensitive(true);
        headers.insert(HeaderName::from_static("x-api-key"), key);
        headers.insert(HeaderName::from_static("anthropic-version"), HeaderValue::from_static(ANTHROPIC_VERSION));
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        add_headers(&mut headers, &config.extra_headers)?;
        let mut secrets = url_secrets(&config.base_url);
        secrets.push(config.api_key);
        Ok(AnthropicProvider {
            client: http_client()?,
            url: join_url(&config.base_url, "v1/messages"),
            headers,
            timeouts: config.timeouts,
            secrets,
        })
    }
}

impl ModelProvider for AnthropicProvider {
    fn name(&self) -> &str {
        "anthropic"
    }

    fn stream(&self, request: ModelRequest) -> BoxStream<'static, StreamEvent> {
        let limits = ResponseLimits::for_max_tokens(request.max_tokens);
        let mut headers = self.headers.clone();
        if let Some(seconds) = request.timeout_header {
            headers.insert(HeaderName::from_static("x-stainless-timeout"), HeaderValue::from(seconds));
        }
        for beta in request.profile_betas() {
            add_beta(&mut headers, beta);
        }
        if crate::anthropic::body::api_model(&request.model).1 {
            add_beta(&mut headers, crate::anthropic::body::ONE_M_BETA);
        }
        let post = SsePost {
            client: self.client.clone(),
            url: self.url.clone(),
            headers,
            body: request_bytes(&request),
            limits,
            timeouts: self.timeouts,
            secrets: self.secrets.clone(),
        };
        if !request.stream {
            let cap = usize::try_from(limits.wire_bytes).unwrap_or(usize::MAX);
            return post_json(post, cap, crate::anthropic::message::message_events);
        }
        post_sse(post, AnthropicAssembler::with_limits(limits))
    }
}

/// `beta` joined to the `anthropic-beta` header (comma-separated, as the API reads it).
fn add_beta(headers: &mut HeaderMap, beta: &'static str) {
    let name = HeaderName::from_static("anthropic-beta");
    let value = match headers.get(&name).and_then(|v| v.to_str().ok()) {
        Some(given) if given.split(',').any(|b| b.trim() == beta) => return,
        Some(given) => HeaderValue::from_str(&format!("{given},{beta}")).unwrap_or(HeaderValue::from_static(beta)),
        None => HeaderValue::from_static(beta),
    };
    headers.insert(name, value);
}

pub(crate) fn check_base_url(url: &str) -> Result<(), ConfigError> {
    if url.starts_with("http://") || url.starts_with("https://") {
        Ok(())
    } else {
        Err(ConfigError::BaseUrl { url: redact_url(url) })
    }
}

pub(crate) fn add_headers(headers: &mut HeaderMap, extra: &[(String, String)]) -> Result<(), ConfigError> {
    for (name, value) in extra {
        let header_name =
            HeaderName::from_bytes(name.as_bytes()).map_err(|_| ConfigError::HeaderName { name: name.clone() })?;
        let mut header_value =
            HeaderValue::from_str(value).map_err(|_| ConfigError::HeaderValue { name: name.clone() })?;
        // Extra headers may carry credentials (proxies, gateways): never print them.
        header_value.set_sensitive(true);
        headers.insert(header_name, header_value);
    }
    Ok(())
}

/// No overall timeout: a long answer streams for minutes. Connecting is bounded here, the
/// wait for headers and between events by [`Timeouts`] in the stream. Redirects: see
/// [`crate::http::same_origin_redirects`].
pub(crate) fn http_client() -> Result<reqwest::Client, ConfigError> {
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(30))
        .redirect(crate::http::same_origin_redirects())
        .build()
        .map_err(|err| ConfigError::Client(err.to_string()))
}

/// The exact JSON body sent for `request`, as a value, so tests and `reloop request` can see
/// it. The provider sends `request_bytes`, the same body serialized straight from the history.
pub fn request_body(request: &ModelRequest) -> Value {
    serde_json::to_value(crate::anthropic::body::Body(request)).unwrap_or(Value::Null)
}

/// The body sent for `request`, serialized straight from the history.
pub(crate) fn request_bytes(request: &ModelRequest) -> Vec<u8> {
    serde_json::to_vec(&crate::anthropic::body::Body(request)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::SystemBlock;
    use reloop_core::{ContentBlock, History, Message, ToolSpec};
    use serde_json::json;

    #[test]
    fn the_body_marks_cache_breakpoints_and_repairs_unparsed_input() {
        let mut history = History::new();
        history.push(Message::user_text("hi"));
        let mut answer = Message::assistant(vec![ContentBlock::tool_use("t1", "Write", Value::String("{\"pa".into()))]);
        answer.extra.insert("id", json!("msg_1"));
        history.push(answer);
        history.push(Message::user(vec![ContentBlock::tool_result("t1", "bad input", true)]));
        let request = ModelRequest::new("claude-x", 1024, history, 2)
            .with_system(vec![SystemBlock::new("a"), SystemBlock::new("b")])
            .with_tools(vec![ToolSpec {
                name: "Write".into(),
                description: "w".into(),
                input_schema: json!({"type": "object"}),
            }])
            .with_thinking(Some(json!({"type": "enabled", "budget_tokens": 2048})));
        let body = request_body(&request);
        assert_eq!(
            body,
            json!({
                "model": "claude-x",
                "max_tokens": 1024,
                "system": [{"type": "text", "text": "a"}, {"type": "text", "text": "b", "cache_control": {"type": "ephemeral"}}],
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "hi"}]},
                    {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Write", "input": {"__unparsedToolInput": {"raw": "{\"pa", "len": 4}}}]},
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "bad input", "is_error": true, "cache_control": {"type": "ephemeral"}}]}
                ],
                "tools": [{"name": "Write", "description": "w", "input_schema": {"type": "object"}}],
                "stream": true,
                "thinking": {"type": "enabled", "budget_tokens": 2048}
            })
        );
    }

    #[test]
    fn at_most_three_system_breakpoints() {
        let system = (0..6).map(|i| SystemBlock::cached(i.to_string())).collect();
        let body = request_body(&ModelRequest::new("m", 1, History::new(), 1).with_system(system));
        let marked: Vec<bool> =
            body["system"].as_array().into_iter().flatten().map(|b| b.get("cache_control").is_some()).collect();
        assert_eq!(marked, vec![false, false, false, true, true, true]);
    }

    #[test]
    fn debug_redacts_the_key_and_the_url_password() {
        let config = AnthropicConfig::new("sk-ant-secret")
            .with_header("anthropic-beta", "x")
            .with_base_url("http://user:hunter2@127.0.0.1:9");
        assert!(!format!("{config:?}").contains("sk-ant-secret"));
        assert!(!format!("{config:?}").contains("hunter2"));
        let provider = AnthropicProvider::new(config).map_err(|e| e.to_string());
        assert!(!format!("{provider:?}").contains("sk-ant-secret"));
        assert!(!format!("{provider:?}").contains("hunter2"), "{provider:?}");
        let bad = AnthropicProvider::new(AnthropicConfig::new("k").with_base_url("ftp://u:hunter2@h")).err();
        assert!(!bad.map(|e| e.to_string()).unwrap_or_default().contains("hunter2"));
    }
}
