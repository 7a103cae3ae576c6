//! How a print-mode run that ended in error shows it, in a Claude Code profile: Claude Code
//! prints the error as a synthetic `assistant` message (`model: "<synthetic>"`, `stop_reason:
//! "stop_sequence"`) just before the `result`, whose `stop_reason` is then `stop_sequence` too,
//! and whose text names what print mode can change (`CLAUDE_CODE_MAX_OUTPUT_TOKENS`). The shapes
//! are each version's as recorded (tests/print_recorded.rs; claude-code-facts.md §2, §4).
//!
//! Everything here is the stream's: the journal keeps the run's own words, so replays of
//! journals written before these lines existed stay identical.

use reloop_core::profile::{api_error_kind, error_message_usage, ProfileId};
use reloop_core::{Failure, ModelFailure, Stop, TooLong};
use reloop_driver::RunResult;
use serde_json::{json, Map, Value};

/// The error a run ended with, as the synthetic message and the result carry it.
pub struct ErrorEnding {
    /// The message's text, and the result's.
    pub text: String,
    /// 2.1.197's and 2.1.332's `error` key ([`api_error_kind`]): `server_error`, `rate_limit`,
    /// `invalid_request`, `unknown`, `max_output_tokens`; none for a malformed call.
    error: Option<&'static str>,
    /// The failed request's HTTP status and error type (2.1.332 prints them on the line).
    api: Option<(u16, String)>,
    /// 2.1.332's `api_error` key: `max_output_tokens`, `malformed_tool_use_exhausted`.
    api_error: Option<&'static str>,
    /// The result's `api_error_status` is `null` though a status is known (2.1.197 after
    /// repeated 529s).
    status_hidden: bool,
}

impl ErrorEnding {
    /// The error a Claude Code profile's run ended with; `None` for any other end (or profile).
    pub fn of(result: &RunResult, gateway: Option<&str>) -> Option<Self> {
        result.profile.profile().claude_code_version?;
        // An error inside a 200 stream (2.1.197 ends on it) has no status: `unknown`.
        let too_long = matches!(result.terminal.stop, Stop::PromptTooLong(_));
        let request = |failure: &ModelFailure, text: String| {
            let error = Some(api_error_kind(failure.status, too_long));
            let api = failure.status.map(|s| (s, failure.error_type.clone()));
            ErrorEnding { text, error, api, api_error: None, status_hidden: false }
        };
        match &result.terminal.stop {
            Stop::ModelError(Failure::Request(failure)) if failure.why_final == reloop_core::REPEATED_OVERLOADS => {
                let mut text = REPEATED_529.to_string();
                if let Some(gateway) = gateway {
                    text.push_str(&format!(" If it persists, check your inference gateway ({gateway})."));
                }
                let status_hidden = !result.profile.profile().result.overload_stop_status;
                Some(ErrorEnding { status_hidden, ..request(failure, text) })
            }
            Stop::ModelError(Failure::Request(failure)) => {
                let text = api_error_text(failure, gateway).unwrap_or_else(|| result.result.clone());
                Some(request(failure, text))
            }
            Stop::ModelError(Failure::OutputTokensExhausted { limit, .. }) => Some(ErrorEnding {
                text: format!(
                    "API Error: Claude's response exceeded the {limit} output token maximum. To configure this \
                     behavior, set the CLAUDE_CODE_MAX_OUTPUT_TOKENS environment variable."
                ),
                error: Some("max_output_tokens"),
                api: None,
                api_error: Some("max_output_tokens"),
                status_hidden: false,
            }),
            Stop::ModelError(Failure::MalformedToolCall) | Stop::MalformedToolUseExhausted { .. } => {
                Some(ErrorEnding {
                    text: result.result.clone(),
                    error: None,
                    api: None,
                    api_error: Some("malformed_tool_use_exhausted"),
                    status_hidden: false,
                })
            }
            Stop::PromptTooLong(TooLong::Refused(failure)) => Some(request(failure, result.result.clone())),
            Stop::PromptTooLong(TooLong::CompactionFailed(_)) => Some(ErrorEnding {
                text: result.result.clone(),
                error: Some("invalid_request"),
                api: Some((400, "invalid_request_error".into())),
                api_error: None,
                status_hidden: false,
            }),
            _ => None,
        }
    }

    /// The result's `api_error_status` is `null` whatever the failure's status.
    pub fn status_hidden(&self) -> bool {
        self.status_hidden
    }

    /// The failed request's HTTP status.
    pub fn status(&self) -> Option<u16> {
        self.api.as_ref().map(|(status, _)| *status)
    }

    /// The failed request's error type.
    pub fn error_type(&self) -> Option<String> {
        self.api.as_ref().map(|(_, kind)| kind.clone())
    }

    /// The synthetic `assistant` line, without the `session_id`/`uuid` the stream adds:
    /// its keys, then those Claude Code prints after the uuid (`tail`).
    pub fn line(&self, result: &RunResult) -> (Map<String, Value>, Vec<(&'static str, Value)>) {
        let newer = result.profile == ProfileId::ClaudeCode2_1_332;
        let mut message = Map::new();
        if newer {
            message.insert("diagnostics".into(), Value::Null);
        }
        // The message's id is the line's own uuid in Claude Code; the stream's uuids are the
        // journal step's, so the id is left to the caller (`with_id`).
        message.insert("id".into(), Value::Null);
        for (k, v) in [
            ("container", Value::Null),
            ("model", json!("<synthetic>")),
            ("role", json!("assistant")),
            ("stop_details", Value::Null),
            ("stop_reason", json!("stop_sequence")),
            ("stop_sequence", json!("")),
            ("type", json!("message")),
            ("usage", error_message_usage(newer)),
            ("content", json!([{"type": "text", "text": self.text}])),
            ("context_management", Value::Null),
        ] {
            message.insert(k.into(), v);
        }
        let mut line = Map::new();
        line.insert("type".into(), json!("assistant"));
        line.insert("message".into(), Value::Object(message));
        let mut tail = Vec::new();
        if newer {
            tail.push(("timestamp", json!(crate::sdk::timestamp())));
        }
        if let Some(error) = self.error {
            tail.push(("error", json!(error)));
        }
        if newer {
            tail.push(("is_api_error_message", json!(true)));
            if let Some((status, kind)) = &self.api {
                tail.push(("api_error_status", json!(status)));
                tail.push(("api_error_type", json!(kind)));
            }
            if let Some(api_error) = self.api_error {
                tail.push(("api_error", json!(api_error)));
                if api_error == "max_output_tokens" {
                    tail.push(("api_error_params", json!({"cut": "output_limit"})));
                }
            }
        }
        (line, tail)
    }
}

/// Claude Code's words when 529s in a row ended the run ([`reloop_core::REPEATED_OVERLOADS`]);
/// the gateway sentence follows, as after other server errors.
const REPEATED_529: &str =
    "API Error: Repeated 529 Overloaded errors. The API is at capacity — this is usually temporary. Try again in a moment.";

/// Claude Code's words for a request its API ended: a rejected (429) request, or a server-side
/// error with the gateway it came through. `None`: the run's own result text stands.
pub fn api_error_text(failure: &ModelFailure, gateway: Option<&str>) -> Option<String> {
    api_error_words(failure.status, &failure.message, gateway)
}

/// [`api_error_text`] of an error's status and message (a failed summary request's too).
pub fn api_error_words(status: Option<u16>, message: &str, gateway: Option<&str>) -> Option<String> {
    match status? {
        429 => Some("API Error: Request rejected (429) · rate limited".to_string()),
        status @ 500.. => {
            let mut text = format!(
                "API Error: {status} {}. This is a server-side issue, usually temporary — try again in a moment.",
                message.trim_end_matches('.')
            );
            if let Some(gateway) = gateway {
                text.push_str(&format!(" If it persists, check your inference gateway ({gateway})."));
            }
            Some(text)
        }
        _ => None,
    }
}
