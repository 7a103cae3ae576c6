//! OpenAI-compatible chat completions (OpenAI, Groq, xAI, OpenRouter, DeepSeek, llama.cpp, …):
//! the request converted from the Anthropic-shaped history, the answer assembled into the same
//! blocks.

mod assembler;

use std::fmt;

use futures::stream::BoxStream;
use reloop_core::{ContentBlock, Message, Role};
use reqwest::header::{HeaderMap, HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use serde_json::{json, Map, Value};

pub use assembler::{parse_openai_sse, OpenAiAssembler};

use crate::anthropic::http::{add_headers, check_base_url, http_client};
use crate::error::ConfigError;
use crate::http::{join_url, post_sse, redact_url, url_secrets, SsePost};
use crate::limits::{ResponseLimits, Timeouts};
use crate::provider::{ModelProvider, ModelRequest, StreamEvent};

/// Where and how to reach the server. `Debug` redacts the key.
#[derive(Clone)]
#[non_exhaustive]
pub struct OpenAiConfig {
    /// e.g. `https://api.openai.com` or `http://localhost:8080/v1`.
    pub base_url: String,
    /// Sent as `Authorization: Bearer` when present; local servers need none.
    pub api_key: Option<String>,
    /// Sent with every request (an OpenRouter `HTTP-Referer`, say).
    pub extra_headers: Vec<(String, String)>,
    /// How long to wait for the server.
    pub timeouts: Timeouts,
}

impl OpenAiConfig {
    /// The server at `base_url`, with default timeouts and no extra headers.
    pub fn new(base_url: impl Into<String>, api_key: Option<String>) -> Self {
        OpenAiConfig { base_url: base_url.into(), api_key, extra_headers: Vec::new(), timeouts: Timeouts::default() }
    }

    /// This configuration with other timeouts (`API_TIMEOUT_MS`, the stream idle timeout).
    pub fn with_timeouts(mut self, timeouts: Timeouts) -> Self {
        self.timeouts = timeouts;
        self
    }

    /// This configuration with one more header sent with every request.
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.extra_headers.push((name.into(), value.into()));
        self
    }
}

impl fmt::Debug for OpenAiConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiConfig")
            .field("base_url", &redact_url(&self.base_url))
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("extra_headers", &self.extra_headers.iter().map(|(name, _)| name).collect::<Vec<_>>())
            .finish()
    }
}

/// Streams responses from `POST {base_url}/v1/chat/completions`.
#[derive(Clone)]
pub struct OpenAiProvider {
    client: reqwest::Client,
    url: String,
    headers: HeaderMap,
    timeouts: Timeouts,
    /// The key and the base URL's password, scrubbed from failure messages.
    secrets: Vec<String>,
}

impl fmt::Debug for OpenAiProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiProvider").field("url", &redact_url(&self.url)).finish_non_exhaustive()
    }
}

impl OpenAiProvider {
    /// A provider for `config`, checked now (the base URL's scheme, the key and headers as
    /// header values) so a bad configuration fails before the session starts, not at its first
    /// request.
    pub fn new(config: OpenAiConfig) -> Result<Self, ConfigError> {
        check_base_url(&config.base_url)?;
        let mut headers = HeaderMap::new();
        if let Some(key) = &config.api_key {
            let mut value = HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| ConfigError::ApiKey)?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        add_headers(&mut headers, &config.extra_headers)?;
        let base = config.base_url.trim_end_matches('/');
        let path = if base.ends_with("/v1") { "chat/completions" } else { "v1/chat/completions" };
        let mut secrets = url_secrets(base);
        secrets.extend(config.api_key);
        Ok(OpenAiProvider {
            client: http_client()?,
            url: join_url(base, path),
            headers,
            timeouts: config.timeouts,
            secrets,
        })
    }

    /// The endpoint requests go to, with any user information of the base URL redacted.
    pub fn url(&self) -> String {
        redact_url(&self.url)
    }
}

impl ModelProvider for OpenAiProvider {
    fn name(&self) -> &str {
        "openai"
    }

    fn stream(&self, request: ModelRequest) -> BoxStream<'static, StreamEvent> {
        let limits = ResponseLimits::for_max_tokens(request.max_tokens);
        let post = SsePost {
            client: self.client.clone(),
            url: self.url.clone(),
            headers: self.headers.clone(),
            body: serde_json::to_vec(&openai_request_body(&request)).unwrap_or_default(),
            limits,
            timeouts: self.timeouts,
            secrets: self.secrets.clone(),
        };
        post_sse(post, OpenAiAssembler::with_limits(limits))
    }
}

/// The exact JSON body sent for `request`.
pub fn openai_request_body(request: &ModelRequest) -> Value {
    let mut messages = Vec::new();
    if !request.system.is_empty() {
        let system: Vec<&str> = request.system.iter().map(|b| b.text.as_str()).collect();
        messages.push(json!({"role": "system", "content": system.join("\n\n")}));
    }
    for message in request.messages.messages() {
        convert_message(message, &mut messages);
    }
    let mut body = Map::new();
    body.insert("model".into(), Value::String(request.model.clone()));
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        let tools = request
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.input_schema}})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    body.insert("stream".into(), Value::Bool(true));
    body.insert("stream_options".into(), json!({"include_usage": true}));
    body.insert("max_tokens".into(), json!(request.max_tokens));
    Value::Object(body)
}

/// One Anthropic-shaped message becomes one or more chat messages: tool results become `tool`
/// messages (first, since they answer the previous assistant turn), thinking is dropped (chat
/// completions takes none back), other block types have no equivalent and are dropped.
fn convert_message(message: &Message, out: &mut Vec<Value>) {
    let mut texts = Vec::new();
    match message.role {
        Role::System => out.push(json!({"role": "system", "content": message.text()})),
        Role::User => {
            for block in &message.content {
                match block {
                    ContentBlock::ToolResult(result) => out.push(json!({
                        "role": "tool",
                        "tool_call_id": result.tool_use_id,
                        "content": result.content.as_text(),
                    })),
                    ContentBlock::Text(text) => texts.push(text.text.as_str()),
                    _ => {}
                }
            }
            if !texts.is_empty() {
                out.push(json!({"role": "user", "content": texts.join("\n")}));
            }
        }
        Role::Assistant => {
            let mut calls = Vec::new();
            for block in &message.content {
                match block {
                    ContentBlock::Text(text) => texts.push(text.text.as_str()),
                    ContentBlock::ToolUse(tool_use) => {
                        // Input that never parsed is sent as `{}`, as on the Anthropic path.
                        let arguments =
                            if tool_use.input.is_object() { tool_use.input.to_string() } else { "{}".into() };
                        calls.push(json!({
                            "id": tool_use.id,
                            "type": "function",
                            "function": {"name": tool_use.name, "arguments": arguments},
                        }));
                    }
                    _ => {}
                }
            }
            let mut assistant = Map::new();
            assistant.insert("role".into(), json!("assistant"));
            let content = if texts.is_empty() { Value::Null } else { Value::String(texts.join("\n")) };
            assistant.insert("content".into(), content);
            if !calls.is_empty() {
                assistant.insert("tool_calls".into(), Value::Array(calls));
            }
            out.push(Value::Object(assistant));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::SystemBlock;
    use reloop_core::{History, ToolSpec};

    #[test]
    fn history_converts_to_chat_messages() {
        let history: History = [
            Message::user_text("add 2 and 3"),
            Message::assistant(vec![
                ContentBlock::text("sure"),
                ContentBlock::tool_use("c1", "add", json!({"a": 2, "b": 3})),
                ContentBlock::tool_use("c2", "bad", Value::String("{\"a".into())),
            ]),
            Message::user(vec![
                ContentBlock::tool_result("c1", "5", false),
                ContentBlock::tool_result("c2", "invalid", true),
                ContentBlock::text("thanks"),
            ]),
        ]
        .into_iter()
        .collect();
        let request = ModelRequest::new("gpt-x", 100, history, 1)
            .with_system(vec![SystemBlock::new("be brief"), SystemBlock::new("be kind")])
            .with_tools(vec![ToolSpec {
                name: "add".into(),
                description: "adds".into(),
                input_schema: json!({"type": "object"}),
            }]);
        assert_eq!(
            openai_request_body(&request),
            json!({
                "model": "gpt-x",
                "messages": [
                    {"role": "system", "content": "be brief\n\nbe kind"},
                    {"role": "user", "content": "add 2 and 3"},
                    {"role": "assistant", "content": "sure", "tool_calls": [
                        {"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{\"a\":2,\"b\":3}"}},
                        {"id": "c2", "type": "function", "function": {"name": "bad", "arguments": "{}"}}
                    ]},
                    {"role": "tool", "tool_call_id": "c1", "content": "5"},
                    {"role": "tool", "tool_call_id": "c2", "content": "invalid"},
                    {"role": "user", "content": "thanks"}
                ],
                "tools": [{"type": "function", "function": {"name": "add", "description": "adds", "parameters": {"type": "object"}}}],
                "stream": true,
                "stream_options": {"include_usage": true},
                "max_tokens": 100
            })
        );
    }

    #[test]
    fn the_v1_suffix_is_not_doubled() -> Result<(), ConfigError> {
        let plain = OpenAiProvider::new(OpenAiConfig::new("http://127.0.0.1:9/", None))?;
        assert_eq!(plain.url(), "http://127.0.0.1:9/v1/chat/completions");
        let with_v1 = OpenAiProvider::new(OpenAiConfig::new("http://127.0.0.1:9/v1", Some("sk-secret".into())))?;
        assert_eq!(with_v1.url(), "http://127.0.0.1:9/v1/chat/completions");
        assert!(!format!("{with_v1:?}").contains("sk-secret"));
        Ok(())
    }
}
