//! A journaled session written back out. The journal holds events, not messages, so every
//! format replays the events through today's core and writes what its history becomes.
//!
//! * [`ExportFormat::Messages`]: the final history as an Anthropic Messages API array (pretty).
//! * [`ExportFormat::StreamJson`]: Claude Code's `--output-format stream-json` shape: a
//!   `system`/`init` line, one `user`/`assistant` line per history message, and, when the session
//!   has ended, a `result` line (`subtype` `success` or `error_during_execution`).
//! * [`ExportFormat::ClaudeJsonl`]: a Claude Code transcript: one line per message (one assistant
//!   line per response, carrying its `stop_reason` and `usage`), uuids derived from the session id
//!   and the line's index, timestamps from the journal, and an `isApiErrorMessage` line for each
//!   request that failed for good. User text the core added on its own (recovery nudges) is
//!   marked `isMeta`, as Claude Code marks it. Importing it gives back the same events, except for
//!   a response cut off by an abort, which the transcript cannot tell from a finished one.

use reloop_core::history::Digest;
use reloop_core::{transition, ContentBlock, Event, Message, Role, State};
use reloop_journal::{SessionHeader, StepRecord};
use serde_json::{json, Map, Value};

use crate::error::ExportError;
use crate::items::api_error_text;
use crate::time::format_rfc3339_ms;

/// Which shape to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExportFormat {
    Messages,
    StreamJson,
    ClaudeJsonl,
}

impl ExportFormat {
    /// `messages`, `stream-json` or `claude-jsonl`, as a command line spells them.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "messages" => Some(ExportFormat::Messages),
            "stream-json" => Some(ExportFormat::StreamJson),
            "claude-jsonl" => Some(ExportFormat::ClaudeJsonl),
            _ => None,
        }
    }
}

fn encode<T: serde::Serialize>(what: &'static str, value: &T) -> Result<Value, ExportError> {
    serde_json::to_value(value).map_err(|source| ExportError::Encode { what, source })
}

fn line(value: &Value) -> Result<String, ExportError> {
    serde_json::to_string(value).map_err(|source| ExportError::Encode { what: "line", source })
}

/// Writes a session in the given format.
pub fn export(format: ExportFormat, header: &SessionHeader, steps: &[StepRecord]) -> Result<String, ExportError> {
    match format {
        ExportFormat::Messages => {
            let state = replay(header, steps, |_, _, _| Ok(()))?;
            let messages = encode("messages", &state.messages().to_vec())?;
            serde_json::to_string_pretty(&messages).map_err(|source| ExportError::Encode { what: "messages", source })
        }
        ExportFormat::StreamJson => stream_json(header, steps),
        ExportFormat::ClaudeJsonl => claude_jsonl(header, steps),
    }
}

/// Replays the steps, calling `each(record, messages added by its step, state after)`.
fn replay(
    header: &SessionHeader,
    steps: &[StepRecord],
    mut each: impl FnMut(&StepRecord, Vec<&Message>, &State) -> Result<(), ExportError>,
) -> Result<State, ExportError> {
    let mut state = State::new(header.core_config.clone());
    for record in steps {
        let before = state.messages().len();
        state = transition(state, record.event.clone()).state;
        let added = state.messages().len().saturating_sub(before);
        each(record, state.messages().tail(added), &state)?;
    }
    Ok(state)
}

fn run_str<'a>(header: &'a SessionHeader, key: &str) -> Option<&'a str> {
    header.run_config.get(key).and_then(Value::as_str)
}

fn stream_json(header: &SessionHeader, steps: &[StepRecord]) -> Result<String, ExportError> {
    let state = replay(header, steps, |_, _, _| Ok(()))?;
    let mut out = vec![line(&json!({
        "type": "system",
        "subtype": "init",
        "session_id": header.id,
        "cwd": run_str(header, "cwd"),
        "model": run_str(header, "model"),
        "tools": [],
        "reloop_engine_version": header.engine_version,
    }))?];
    for message in state.messages().messages() {
        let role = if message.role == Role::User { "user" } else { "assistant" };
        out.push(line(&json!({
            "type": role,
            "message": encode("message", message)?,
            "parent_tool_use_id": null,
            "session_id": header.id,
        }))?);
    }
    if let Some(terminal) = state.terminal() {
        let is_error = terminal.reason().is_error();
        let result = match &terminal.error {
            Some(error) => error.clone(),
            None => state
                .messages()
                .messages()
                .into_iter()
                .rev()
                .find(|m| m.role == Role::Assistant)
                .map(Message::text)
                .unwrap_or_default(),
        };
        let (first, last) = (steps.first().map_or(0, |s| s.at_ms), steps.last().map_or(0, |s| s.at_ms));
        out.push(line(&json!({
            "type": "result",
            "subtype": if is_error { "error_during_execution" } else { "success" },
            "is_error": is_error,
            "duration_ms": last.saturating_sub(first),
            "num_turns": state.context().turn_count(),
            "result": result,
            "session_id": header.id,
            "usage": encode("usage", &state.context().session.usage)?,
            "terminal_reason": terminal.reason().as_str(),
        }))?);
    }
    Ok(out.join("\n") + "\n")
}

/// A uuid-shaped id that depends only on the session id and the line's index, so exporting the
/// same session twice gives the same file.
fn line_uuid(session: &str, index: usize) -> String {
    let half = |salt: u8| {
        let mut d = Digest::default();
        d.bytes(&[salt]);
        d.bytes(session.as_bytes());
        d.u64(index as u64);
        d.finish()
    };
    let (a, b) = (half(1), half(2));
    // Version 8 (custom) and the RFC 4122 variant, so tools that check the shape accept it.
    let a = (a & !0xf000) | 0x8000;
    let b = (b & !(0xc000 << 48)) | (0x8000 << 48);
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xffff,
        b >> 48,
        b & 0xffff_ffff_ffff
    )
}

struct JsonlWriter<'a> {
    header: &'a SessionHeader,
    cwd: &'a str,
    version: &'a str,
    parent: Option<String>,
    out: Vec<String>,
}

impl JsonlWriter<'_> {
    fn push(&mut self, kind: &str, message: Value, at_ms: u64, flags: &[&str]) -> Result<(), ExportError> {
        let uuid = line_uuid(&self.header.id, self.out.len());
        let mut obj = Map::new();
        obj.insert("parentUuid".into(), self.parent.clone().map_or(Value::Null, Value::String));
        obj.insert("isSidechain".into(), Value::Bool(false));
        obj.insert("userType".into(), Value::String("external".into()));
        obj.insert("cwd".into(), Value::String(self.cwd.to_string()));
        obj.insert("sessionId".into(), Value::String(self.header.id.clone()));
        obj.insert("version".into(), Value::String(self.version.to_string()));
        obj.insert("type".into(), Value::String(kind.to_string()));
        obj.insert("message".into(), message);
        for flag in flags {
            obj.insert((*flag).to_string(), Value::Bool(true));
        }
        obj.insert("uuid".into(), Value::String(uuid.clone()));
        obj.insert("timestamp".into(), Value::String(format_rfc3339_ms(at_ms)));
        self.out.push(line(&Value::Object(obj))?);
        self.parent = Some(uuid);
        Ok(())
    }
}

fn claude_jsonl(header: &SessionHeader, steps: &[StepRecord]) -> Result<String, ExportError> {
    let mut w = JsonlWriter {
        header,
        cwd: run_str(header, "cwd").unwrap_or(""),
        version: run_str(header, "version").unwrap_or(&header.engine_version),
        parent: None,
        out: Vec::new(),
    };
    replay(header, steps, |record, added, state| {
        for message in added {
            let mut value = encode("message", message)?;
            match message.role {
                Role::Assistant => {
                    if let (Value::Object(obj), Event::ModelDone { stop_reason, usage, .. }) =
                        (&mut value, &record.event)
                    {
                        obj.insert("type".into(), Value::String("message".into()));
                        obj.insert("stop_reason".into(), encode("stop reason", stop_reason)?);
                        obj.insert("stop_sequence".into(), Value::Null);
                        obj.insert("usage".into(), encode("usage", usage)?);
                    }
                    w.push("assistant", value, record.at_ms, &[])?;
                }
                // An injected reminder: meta, as Claude Code marks what the user did not type.
                Role::System => w.push("user", value, record.at_ms, &["isMeta"])?,
                Role::User => {
                    let from_outside = matches!(record.event, Event::UserInput { .. } | Event::Abort)
                        || message.content.iter().any(|b| matches!(b, ContentBlock::ToolResult(_)));
                    let flags: &[&str] = if from_outside { &[] } else { &["isMeta"] };
                    w.push("user", value, record.at_ms, flags)?;
                }
            }
        }
        if let (Event::ModelFailed { error, .. }, Some(_)) = (&record.event, state.terminal()) {
            let message = json!({
                "id": format!("msg_api_error_{}", record.seq),
                "type": "message",
                "role": "assistant",
                "model": "<synthetic>",
                "content": [{"type": "text", "text": api_error_text(error)}],
                "stop_reason": "stop_sequence",
                "stop_sequence": "",
                "usage": {"input_tokens": 0, "output_tokens": 0},
            });
            w.push("assistant", message, record.at_ms, &["isApiErrorMessage"])?;
        }
        Ok(())
    })?;
    let mut text = w.out.join("\n");
    if !text.is_empty() {
        text.push('\n');
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_uuids_are_stable_distinct_and_uuid_shaped() {
        let a = line_uuid("s1", 0);
        assert_eq!(a, line_uuid("s1", 0));
        assert_ne!(a, line_uuid("s1", 1));
        assert_ne!(a, line_uuid("s2", 0));
        let parts: Vec<usize> = a.split('-').map(str::len).collect();
        assert_eq!(parts, vec![8, 4, 4, 4, 12], "{a}");
        assert_eq!(&a[14..15], "8");
    }
}
