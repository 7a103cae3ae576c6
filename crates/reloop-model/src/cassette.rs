//! One response of a cassette: what it may be (`message`, `error` or `sse`, with an optional
//! `delay_ms`), checked and read into the stream events it answers with, and how an error about
//! a cassette is worded. Below both ways of holding a cassette: its text in memory
//! ([`crate::scripted`]) and its places in a file ([`crate::cassette_file`]).

use std::path::Path;
use std::time::Duration;

use reloop_core::ModelError;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::anthropic::message::message_events;
use crate::anthropic::parse_anthropic_sse;
use crate::error::ScriptError;
use crate::http::error_from_http;
use crate::provider::StreamEvent;

/// A response as it answers: after its delay, these events.
#[derive(Debug, Clone)]
pub(crate) struct Scripted {
    pub(crate) delay: Option<Duration>,
    pub(crate) events: Vec<StreamEvent>,
}

/// What an error says the cassette is; the caller names the file.
pub(crate) const ORIGIN: &str = "cassette";

/// A text replaced in every response before it is read (the CLI's `{{cwd}}`, the workspace's
/// path as JSON string content).
#[derive(Debug, Clone)]
pub(crate) struct Replace {
    from: String,
    to: String,
}

impl Replace {
    /// Every `from` read as `to`.
    pub(crate) fn new(from: &str, to: &str) -> Self {
        Replace { from: from.to_string(), to: to.to_string() }
    }

    pub(crate) fn apply<'t>(&self, text: &'t str) -> std::borrow::Cow<'t, str> {
        if self.from.is_empty() || !text.contains(&self.from) {
            return std::borrow::Cow::Borrowed(text);
        }
        std::borrow::Cow::Owned(text.replace(&self.from, &self.to))
    }
}

/// A JSON error of the cassette file `path`: its line and column, or, for a failed read, the
/// read's error.
pub(crate) fn json_error(path: &Path, err: serde_json::Error) -> ScriptError {
    match err.io_error_kind() {
        Some(kind) => {
            ScriptError::Read { path: path.to_path_buf(), source: std::io::Error::new(kind, err.to_string()) }
        }
        None => ScriptError::Json {
            origin: ORIGIN.to_string(),
            line: err.line(),
            column: err.column(),
            message: strip_position(&err.to_string()),
        },
    }
}

/// Whether one response's text (after `replace`) is a response the provider can give.
pub(crate) fn validate_response(text: &str, replace: Option<&Replace>) -> Result<(), String> {
    let text = match replace {
        Some(replace) => replace.apply(text),
        None => std::borrow::Cow::Borrowed(text),
    };
    let value: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    parse_response(value).map(drop)
}

/// An `error` response: the HTTP status, headers and body of a failed request.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ErrorResponse {
    status: u16,
    #[serde(default)]
    headers: Map<String, Value>,
    #[serde(default)]
    body: Value,
}

/// The response `value` of a cassette, or what is wrong with it.
pub(crate) fn parse_response(value: Value) -> Result<Scripted, String> {
    let Value::Object(mut fields) = value else {
        return Err("expected an object with one of \"message\", \"error\" or \"sse\"".into());
    };
    let delay = match fields.remove("delay_ms") {
        None => None,
        Some(value) => Some(Duration::from_millis(
            value.as_u64().ok_or("\"delay_ms\" must be a non-negative integer (milliseconds)")?,
        )),
    };
    let kinds: Vec<String> = fields.keys().cloned().collect();
    let (kind, body) = match (fields.into_iter().next(), kinds.len()) {
        (Some(entry), 1) => entry,
        _ => {
            return Err(format!(
                "expected exactly one of \"message\", \"error\" or \"sse\" (besides \"delay_ms\"), found {kinds:?}"
            ))
        }
    };
    let events = match kind.as_str() {
        "message" => message_events(body)?,
        "error" => vec![StreamEvent::Failed(error_event(body)?)],
        "sse" => match body {
            Value::String(text) => parse_anthropic_sse(text.as_bytes()),
            _ => return Err("\"sse\" must be a string holding a raw SSE response body".into()),
        },
        other => return Err(format!("unknown response kind {other:?} (expected \"message\", \"error\" or \"sse\")")),
    };
    Ok(Scripted { delay, events })
}

fn error_event(body: Value) -> Result<ModelError, String> {
    let error: ErrorResponse = serde_json::from_value(body).map_err(|err| {
        format!("\"error\" must be {{\"status\": <HTTP status>, \"headers\"?: {{..}}, \"body\"?: ..}}: {err}")
    })?;
    let header = |name: &str| {
        error.headers.iter().find(|(key, _)| key.eq_ignore_ascii_case(name)).map(|(_, value)| match value {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        })
    };
    let body = match &error.body {
        Value::String(text) => text.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    Ok(error_from_http(error.status, header, &body))
}

/// serde_json appends " at line L column C"; the error reports those as fields.
pub(crate) fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(cut) => message[..cut].to_string(),
        None => message.to_string(),
    }
}

/// The keys a cassette may hold besides `"responses"`, for the run rather than the provider.
pub const EXTRA_KEYS: &[&str] = &["tool_results", "not_reproduced"];

/// The error for a cassette key that is none of reloop's.
pub(crate) fn unknown_key(key: &str) -> String {
    format!("unknown key {key:?} (expected \"responses\", \"tool_results\" or \"not_reproduced\")")
}
