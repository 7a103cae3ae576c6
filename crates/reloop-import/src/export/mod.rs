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

use std::collections::HashMap;
use std::io::Write;

use reloop_core::hook::{outcome, HookEventName};
use reloop_core::Digest;
use reloop_core::{
    Completion, ContentBlock, Continue, Effect, Event, Fold, Message, Notice, Reason, Role, State, Stop, ToolOutcome,
};
use reloop_journal::{SessionHeader, StepRecord};

use serde_json::{json, Map, Value};

use crate::error::ExportError;
use crate::items::api_error_text;
use crate::time::format_rfc3339_ms;

mod local;

/// Which shape to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExportFormat {
    /// The final history as an Anthropic Messages API array: what the next request would send.
    Messages,
    /// Claude Code's `--output-format stream-json` lines, for tools that read a run's output.
    StreamJson,
    /// A Claude Code transcript, one line per message, that re-imports to the same events.
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

/// A value written to `out` as JSON: a failure to write is the output's, any other the value's.
fn write_json(
    out: &mut dyn Write,
    what: &'static str,
    value: &impl serde::Serialize,
    pretty: bool,
) -> Result<(), ExportError> {
    let written =
        if pretty { serde_json::to_writer_pretty(&mut *out, value) } else { serde_json::to_writer(&mut *out, value) };
    written.map_err(|source| {
        if source.is_io() {
            ExportError::Write(source.into())
        } else {
            ExportError::Encode { what, source }
        }
    })
}

/// One JSON line.
fn write_line(out: &mut dyn Write, value: &Value) -> Result<(), ExportError> {
    write_json(out, "line", value, false)?;
    Ok(out.write_all(b"\n")?)
}

/// Writes a session in the given format.
pub fn export(format: ExportFormat, header: &SessionHeader, steps: &[StepRecord]) -> Result<String, ExportError> {
    let mut out = Vec::new();
    let mut exporter = Exporter::new(format, header, &mut out)?;
    for record in steps {
        exporter.step(record, &mut out)?;
    }
    exporter.finish(&mut out)?;
    // Every piece written is JSON text serde wrote, or a newline.
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// [`export`] a step at a time, so a session of any length is written in the memory of its
/// state, not of all its steps: the text goes to `out` as it is ready (`reloop export` streams
/// the journal through it to stdout). The text is the same.
pub struct Exporter<'a> {
    format: ExportFormat,
    header: &'a SessionHeader,
    /// The steps so far, folded through the core.
    fold: Fold,
    /// When the first and the last step were journaled: the run's duration.
    span: Option<(u64, u64)>,
    jsonl: JsonlWriter<'a>,
}

/// How a transcript's lines are laid out, beyond what [`ExportFormat::ClaudeJsonl`] writes by
/// default (one assistant line per response, a main session): the session files Claude Code
/// keeps under `~/.claude/projects/` split a response into one line per content block, and a
/// subagent's file is a sidechain of its parent's session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TranscriptStyle {
    /// One `assistant` line per content block, each with the response's id, as Claude Code
    /// writes them (the SDKs' session readers return one message per line).
    pub split_blocks: bool,
    /// A typed prompt is written as Claude Code writes it: its text as a string, without the
    /// `<system-reminder>` context the loop put before it (Claude Code keeps that context on
    /// lines of its own, which the SDKs' readers skip).
    pub plain_prompts: bool,
    /// The file is a subagent's: its lines are `isSidechain`, carry `agentId`, and name the
    /// parent's session.
    pub sidechain: Option<Sidechain>,
}

/// A subagent's transcript, as part of its parent's session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sidechain {
    /// The agent's id (`agent-<id>.jsonl`).
    pub agent_id: String,
    /// The parent's session id, which every line of the file names.
    pub session_id: String,
}

impl TranscriptStyle {
    /// Claude Code's session-file layout: a main session's, or (with `sidechain`) a subagent's.
    pub fn session_file(sidechain: Option<Sidechain>) -> Self {
        TranscriptStyle { split_blocks: true, plain_prompts: true, sidechain }
    }
}

impl<'a> Exporter<'a> {
    /// A Claude Code transcript in `style` (see [`TranscriptStyle`]); [`Exporter::new`] with
    /// [`ExportFormat::ClaudeJsonl`] is the default style.
    pub fn transcript(
        header: &'a SessionHeader,
        style: TranscriptStyle,
        out: &mut dyn Write,
    ) -> Result<Self, ExportError> {
        let mut exporter = Exporter::new(ExportFormat::ClaudeJsonl, header, out)?;
        exporter.jsonl.style = style;
        Ok(exporter)
    }

    /// An export of the session `header` describes; what comes before any step is written now.
    pub fn new(format: ExportFormat, header: &'a SessionHeader, out: &mut dyn Write) -> Result<Self, ExportError> {
        if format == ExportFormat::StreamJson {
            write_line(
                out,
                &json!({
                    "type": "system",
                    "subtype": "init",
                    "session_id": header.id,
                    "cwd": run_str(header, "cwd"),
                    "model": run_str(header, "model"),
                    "tools": [],
                    "reloop_engine_version": header.engine_version,
                }),
            )?;
        }
        let jsonl = JsonlWriter {
            header,
            cwd: run_str(header, "cwd").unwrap_or(""),
            version: run_str(header, "version").unwrap_or(&header.engine_version),
            parent: None,
            lines: 0,
            style: TranscriptStyle::default(),
            tool_use_results: HashMap::new(),
            asked_on: HashMap::new(),
            permission_decisions: HashMap::new(),
            denial_kinds: HashMap::new(),
        };
        Ok(Exporter { format, header, fold: Fold::new(&header.core_config), span: None, jsonl })
    }

    /// Replays one step, writing what it adds (a transcript's lines; the other formats are
    /// written from the final state).
    pub fn step(&mut self, record: &StepRecord, out: &mut dyn Write) -> Result<(), ExportError> {
        let Some(before) = self.fold.before() else { return Ok(()) };
        // The answer a step ends: the core may take it back rather than keep it (2.1.332's
        // malformed-call rule), and Claude Code still writes the last one.
        let answer = match (&record.event, self.fold.state().and_then(State::streaming)) {
            (Event::ModelDone { id, model, .. }, Some(streaming)) => {
                let message = json!({"role": "assistant", "content": streaming.blocks(), "id": id, "model": model});
                serde_json::from_value::<Message>(message).ok()
            }
            _ => None,
        };
        self.span = Some((self.span.map_or(record.at_ms, |(first, _)| first), record.at_ms));
        if let Event::ToolDone(ToolOutcome { tool_use_id, tool_use_result: Some(result), .. }) = &record.event {
            self.jsonl.tool_use_results.insert(tool_use_id.clone(), result.clone());
        }
        let latest = self.header.core_config.profile == reloop_core::profile::ProfileId::ClaudeCode2_1_332;
        if let (true, Event::ToolDone(ToolOutcome { tool_use_id, tool_result_meta: Some(meta), rule_source, .. })) =
            (latest, &record.event)
        {
            if let Some(ruling) = crate::permission_decision::from_meta(meta, *rule_source) {
                self.jsonl.permission_decisions.insert(tool_use_id.clone(), ruling);
            }
            // Why the call did not run, which the file repeats as `toolDenialKind`.
            if let Some(kind) = meta.get("non_execution_kind").and_then(Value::as_str) {
                self.jsonl.denial_kinds.insert(tool_use_id.clone(), kind.to_string());
            }
        }
        self.fold.push(record.seq, record.event.clone(), |_| ());
        self.rejected(record);
        let Some(state) = self.fold.state() else { return Ok(()) };
        if self.format == ExportFormat::ClaudeJsonl {
            if let Event::CompactDone { .. } = &record.event {
                return compaction_lines(&mut self.jsonl, record, state, out);
            }
            let added = state.messages().len().saturating_sub(before.messages);
            let mut messages = state.messages().tail(added);
            let exhausted = matches!(&record.reason, Some(Reason::Terminal(Stop::MalformedToolUseExhausted { .. })));
            if let (true, Some(answer)) = (exhausted && added == 0, answer.as_ref()) {
                messages.push(answer);
            }
            transcript_lines(&mut self.jsonl, record, messages, state, out)?;
        }
        Ok(())
    }

    /// Notes the calls an abort stopped while they ran, where the session answered them in its
    /// profile's words (flag 28): Claude Code writes them as rejected by the user, and 2.1.332
    /// says so again as their `toolDenialKind` (`interrupt/during_tool`).
    fn rejected(&mut self, record: &StepRecord) {
        let Some(Reason::Terminal(Stop::AbortedTools { tool_use_ids })) = &record.reason else { return };
        let config = &self.header.core_config;
        if config.interrupted_call_text().is_none() {
            return;
        }
        for id in tool_use_ids {
            self.jsonl
                .tool_use_results
                .insert(id.clone(), Value::String(reloop_core::profile::USER_REJECTED_RESULT.into()));
            if config.profile == reloop_core::profile::ProfileId::ClaudeCode2_1_332 {
                self.jsonl.denial_kinds.insert(id.clone(), reloop_core::profile::USER_REJECTED_KIND.to_string());
            }
        }
    }

    /// Writes what comes after the last step.
    pub fn finish(self, out: &mut dyn Write) -> Result<(), ExportError> {
        if self.fold.state().is_none() {
            return Ok(());
        }
        let state = self.fold.into_state();
        match self.format {
            // Serialized straight from the history: never a copy of the whole conversation as a
            // JSON value or one string.
            ExportFormat::Messages => write_json(out, "messages", state.messages(), true)?,
            ExportFormat::StreamJson => stream_json_tail(self.header, &state, self.span, out)?,
            ExportFormat::ClaudeJsonl => {}
        }
        Ok(())
    }
}

fn run_str<'a>(header: &'a SessionHeader, key: &str) -> Option<&'a str> {
    header.run_config.get(key).and_then(Value::as_str)
}

/// The stream-json lines after `init`: one per message of the final history, and the result.
fn stream_json_tail(
    header: &SessionHeader,
    state: &State,
    span: Option<(u64, u64)>,
    out: &mut dyn Write,
) -> Result<(), ExportError> {
    for message in state.messages().messages() {
        let role = if message.role == Role::User { "user" } else { "assistant" };
        write_line(
            out,
            &json!({
                "type": role,
                "message": encode("message", message)?,
                "parent_tool_use_id": null,
                "session_id": header.id,
            }),
        )?;
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
        let (first, last) = span.unwrap_or((0, 0));
        write_line(
            out,
            &json!({
                "type": "result",
                "subtype": if is_error { "error_during_execution" } else { "success" },
                "is_error": is_error,
                "duration_ms": last.saturating_sub(first),
                "num_turns": state.context().turn_count(),
                "result": result,
                "session_id": header.id,
                "usage": encode("usage", state.context().usage())?,
                "terminal_reason": terminal.reason().as_str(),
            }),
        )?;
    }
    Ok(())
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
    /// Lines written so far: the next line's index.
    lines: usize,
    style: TranscriptStyle,
    /// Each call's `tool_use_result` as its outcome kept it (flag 12), by call id: the line
    /// of the message carrying its result gets it as `toolUseResult`, as Claude Code's does.
    tool_use_results: HashMap<String, Value>,
    /// The uuid of the assistant line that asked for each call, by call id: the line of its
    /// result names it as `sourceToolAssistantUUID`, as both recorded versions write.
    asked_on: HashMap<String, String>,
    /// How the permission check ruled on each call, by call id, in the session file's words
    /// (2.1.332 profiles only, from the outcome's `tool_result_meta`): the line of its result
    /// carries it as `permissionDecision`.
    permission_decisions: HashMap<String, Value>,
    /// Why a call did not run, by call id (its `tool_result_meta` entry's `non_execution_kind`,
    /// or an interrupt's `user-rejected`, flag 28): 2.1.332 repeats it as the result line's
    /// `toolDenialKind`.
    denial_kinds: HashMap<String, String>,
}

impl JsonlWriter<'_> {
    fn push(
        &mut self,
        kind: &str,
        message: Value,
        at_ms: u64,
        flags: &[&str],
        out: &mut dyn Write,
    ) -> Result<(), ExportError> {
        let mut obj = Map::new();
        obj.insert("message".into(), message);
        for flag in flags {
            obj.insert((*flag).to_string(), Value::Bool(true));
        }
        self.push_line(kind, obj, at_ms, out)
    }

    /// A line of `kind` holding `fields` (a message and its flags, or a `system` line's own).
    fn push_line(
        &mut self,
        kind: &str,
        fields: Map<String, Value>,
        at_ms: u64,
        out: &mut dyn Write,
    ) -> Result<(), ExportError> {
        let uuid = line_uuid(&self.header.id, self.lines);
        let mut obj = Map::new();
        obj.insert("parentUuid".into(), self.parent.clone().map_or(Value::Null, Value::String));
        obj.insert("isSidechain".into(), Value::Bool(self.style.sidechain.is_some()));
        if let Some(side) = &self.style.sidechain {
            obj.insert("agentId".into(), Value::String(side.agent_id.clone()));
        }
        obj.insert("userType".into(), Value::String("external".into()));
        obj.insert("cwd".into(), Value::String(self.cwd.to_string()));
        let session = self.style.sidechain.as_ref().map_or(&self.header.id, |s| &s.session_id);
        obj.insert("sessionId".into(), Value::String(session.clone()));
        obj.insert("version".into(), Value::String(self.version.to_string()));
        obj.insert("type".into(), Value::String(kind.to_string()));
        obj.extend(fields);
        obj.insert("uuid".into(), Value::String(uuid.clone()));
        obj.insert("timestamp".into(), Value::String(format_rfc3339_ms(at_ms)));
        let first_result = obj.get("message").and_then(|m| m.get("content")).and_then(|c| c.get(0));
        let id = first_result.filter(|b| b["type"] == "tool_result").and_then(|b| b["tool_use_id"].as_str());
        let id = id.map(str::to_string);
        if let Some(result) = id.as_deref().and_then(|id| self.tool_use_results.get(id)) {
            obj.insert("toolUseResult".into(), result.clone());
        }
        if let Some(kind) = id.as_deref().and_then(|id| self.denial_kinds.get(id)) {
            obj.insert("toolDenialKind".into(), Value::String(kind.clone()));
        }
        if let Some(asked_on) = id.as_deref().filter(|_| kind == "user").and_then(|id| self.asked_on.get(id)) {
            obj.insert("sourceToolAssistantUUID".into(), Value::String(asked_on.clone()));
        }
        if let Some(ruling) = id.as_deref().filter(|_| kind == "user").and_then(|id| self.permission_decisions.get(id))
        {
            obj.insert("permissionDecision".into(), ruling.clone());
        }
        if kind == "assistant" {
            let blocks = obj.get("message").and_then(|m| m.get("content")).and_then(Value::as_array);
            for call in blocks.into_iter().flatten().filter(|b| b["type"] == "tool_use") {
                if let Some(id) = call["id"].as_str() {
                    self.asked_on.insert(id.to_string(), uuid.clone());
                }
            }
        }
        write_line(out, &Value::Object(obj))?;
        self.lines += 1;
        self.parent = Some(uuid);
        Ok(())
    }
}

/// A compaction as Claude Code writes it: the boundary (with the core's count before it), then
/// the message the compacted history opens with, marked as the summary. The rest of the new
/// history (the kept tail, what is given back) is the core's to rebuild.
fn compaction_lines(
    w: &mut JsonlWriter<'_>,
    record: &StepRecord,
    state: &State,
    out: &mut dyn Write,
) -> Result<(), ExportError> {
    let effects: Vec<Effect> = serde_json::from_value(record.effects.clone()).unwrap_or_default();
    let (trigger, pre_tokens) = effects
        .iter()
        .find_map(|e| match e {
            Effect::Notice(Notice::CompactBoundary { trigger, pre_tokens, .. }) => Some((trigger.clone(), *pre_tokens)),
            _ => None,
        })
        .unwrap_or_else(|| ("auto".to_string(), 0));
    let mut fields = Map::new();
    fields.insert("subtype".into(), json!("compact_boundary"));
    fields.insert("content".into(), json!("Conversation compacted"));
    fields.insert("compactMetadata".into(), json!({"trigger": trigger, "preTokens": pre_tokens}));
    w.push_line("system", fields, record.at_ms, out)?;
    if let Some(first) = state.messages().messages().first() {
        let value = match (w.style.plain_prompts, plain_text(first)) {
            (true, Some(text)) => json!({"role": "user", "content": text}),
            _ => encode("message", first)?,
        };
        w.push("user", value, record.at_ms, &["isCompactSummary"], out)?;
    }
    Ok(())
}

/// The step handed queued input to the model.
fn consumed_input(record: &StepRecord) -> bool {
    let effects: Vec<Effect> = serde_json::from_value(record.effects.clone()).unwrap_or_default();
    effects.iter().any(|e| matches!(e, Effect::Notice(Notice::InputConsumed { .. })))
}

/// A message of tool results as Claude Code writes it: each result a line of its own, as each
/// was a message of its own before the request joined them (`parallel_tools/two_reads`), where
/// the style splits blocks; one line otherwise.
fn push_results(
    w: &mut JsonlWriter<'_>,
    message: &Message,
    blocks: Vec<ContentBlock>,
    at_ms: u64,
    flags: &[&str],
    out: &mut dyn Write,
) -> Result<(), ExportError> {
    let each = w.style.split_blocks && blocks.iter().all(|b| matches!(b, ContentBlock::ToolResult(_)));
    let parts: Vec<Vec<ContentBlock>> = if each { blocks.into_iter().map(|b| vec![b]).collect() } else { vec![blocks] };
    for part in parts {
        let mut line = message.clone();
        line.content = part;
        w.push("user", encode("message", &line)?, at_ms, flags, out)?;
    }
    Ok(())
}

/// The transcript lines of one step: the messages it added, and a failed request's error line.
fn transcript_lines(
    w: &mut JsonlWriter<'_>,
    record: &StepRecord,
    added: Vec<&Message>,
    state: &State,
    out: &mut dyn Write,
) -> Result<(), ExportError> {
    for message in added {
        let mut value = encode("message", message)?;
        match message.role {
            Role::Assistant => {
                if let (Value::Object(obj), Event::ModelDone { stop_reason, usage, .. }) = (&mut value, &record.event) {
                    obj.insert("type".into(), Value::String("message".into()));
                    obj.insert("stop_reason".into(), encode("stop reason", stop_reason)?);
                    obj.insert("stop_sequence".into(), Value::Null);
                    obj.insert("usage".into(), encode("usage", usage)?);
                }
                match (&value, w.style.split_blocks) {
                    (Value::Object(obj), true) if message.content.len() > 1 => {
                        for block in &message.content {
                            let mut line = obj.clone();
                            line.insert("content".into(), json!([encode("content block", block)?]));
                            w.push("assistant", Value::Object(line), record.at_ms, &[], out)?;
                        }
                    }
                    _ => w.push("assistant", value, record.at_ms, &[], out)?,
                }
            }
            // An injected reminder: meta, as Claude Code marks what the user did not type.
            Role::System => {
                let value = match (w.style.plain_prompts, plain_text(message)) {
                    (true, Some(text)) => json!({"role": "user", "content": text}),
                    _ => value,
                };
                w.push("user", value, record.at_ms, &["isMeta"], out)?
            }
            Role::User => {
                let results = message.content.iter().any(|b| matches!(b, ContentBlock::ToolResult(_)));
                let from_outside = matches!(record.event, Event::UserInput { .. } | Event::Abort) || results;
                let flags: &[&str] = if from_outside { &[] } else { &["isMeta"] };
                // What the person queued joined the results; Claude Code writes it as its own
                // `queued_command` line after them.
                let queued = consumed_input(record) && results;
                let (kept, typed): (Vec<ContentBlock>, Vec<ContentBlock>) = if queued {
                    let split = message
                        .content
                        .iter()
                        .rposition(|b| matches!(b, ContentBlock::ToolResult(_)))
                        .map_or(0, |i| i + 1);
                    (message.content[..split].to_vec(), message.content[split..].to_vec())
                } else {
                    (Vec::new(), Vec::new())
                };
                let aborted = matches!(record.event, Event::Abort);
                let local = match &record.event {
                    Event::UserInput { local, .. } if w.style.plain_prompts => local.as_slice(),
                    _ => &[],
                };
                // What local commands said before the prompt, then the prompt without it.
                let newer = state.context().config().rules().claude_code_version == Some("2.1.332");
                w.local_lines(local, newer, record.at_ms, out)?;
                let unsaid = local::without_local(message, local.len());
                let message = unsaid.as_ref().unwrap_or(message);
                let prompt = match (&record.event, w.style.plain_prompts) {
                    (Event::UserInput { .. }, true) => plain_prompt(message),
                    (_, true) if !aborted => plain_text(message),
                    _ => None,
                };
                if let Some(text) = prompt {
                    w.push("user", json!({"role": "user", "content": text}), record.at_ms, flags, out)?;
                } else if aborted && results && w.style.plain_prompts {
                    // Claude Code writes the interrupted calls' results, then the interruption.
                    let (answered, said): (Vec<ContentBlock>, Vec<ContentBlock>) =
                        message.content.iter().cloned().partition(|b| matches!(b, ContentBlock::ToolResult(_)));
                    for part in [answered, said].into_iter().filter(|p| !p.is_empty()) {
                        let mut line = message.clone();
                        line.content = part;
                        w.push("user", encode("message", &line)?, record.at_ms, flags, out)?;
                    }
                } else if queued {
                    push_results(w, message, kept, record.at_ms, flags, out)?;
                } else if results && w.style.split_blocks {
                    push_results(w, message, message.content.clone(), record.at_ms, flags, out)?;
                } else {
                    w.push("user", value, record.at_ms, flags, out)?;
                }
                for block in typed {
                    if let ContentBlock::Text(t) = block {
                        let mut fields = Map::new();
                        fields.insert("attachment".into(), json!({"type": "queued_command", "prompt": t.text}));
                        w.push_line("attachment", fields, record.at_ms, out)?;
                    }
                }
            }
        }
    }
    // Lines 2.1.197 never writes into its session file (its loop lines live in the stream only).
    let quiet = w.style.plain_prompts && state.context().config().rules().claude_code_version == Some("2.1.197");
    // The Stop hooks that ran, as Claude Code sums them up: which, and whether one ended the run.
    if let (Event::HookDone { hook_event: HookEventName::Stop, runs, .. }, false) = (&record.event, quiet) {
        let combined = outcome(HookEventName::Stop, runs);
        // The block the cap overrode: never sent to the model, but Claude Code writes it.
        let capped = matches!(&record.reason, Some(Reason::Terminal(Stop::Completed(Completion::StopHookCap { .. }))));
        let overridden = capped.then(|| reloop_core::stop_hook_message(state.context().config().rules(), runs));
        if let Some(Some(text)) = overridden {
            let message = if w.style.plain_prompts {
                json!({"role": "user", "content": text})
            } else {
                encode("message", &Message::user_text(text))?
            };
            w.push("user", message, record.at_ms, &["isMeta"], out)?;
        }
        let prevented = combined.prevent.as_ref();
        // A hook that failed without blocking, in the words it failed with (read back as such).
        let errors: Vec<&str> =
            runs.iter().filter(|r| !matches!(r.exit_code, Some(0 | 2))).map(|r| r.stderr.as_str()).collect();
        let mut fields = Map::new();
        fields.insert("subtype".into(), json!("stop_hook_summary"));
        fields.insert("hookCount".into(), json!(runs.len()));
        fields
            .insert("hookInfos".into(), json!(runs.iter().map(|r| json!({"command": r.command})).collect::<Vec<_>>()));
        fields.insert("hookErrors".into(), json!(errors));
        fields.insert("preventedContinuation".into(), json!(prevented.is_some()));
        fields.insert("stopReason".into(), json!(prevented.and_then(|p| p.stop_reason.clone()).unwrap_or_default()));
        w.push_line("system", fields, record.at_ms, out)?;
        // 2.1.332's warning that the cap ended the turn, as its session file keeps it.
        if let (Some(Reason::Terminal(Stop::Completed(Completion::StopHookCap { cap }))), true) =
            (&record.reason, w.style.plain_prompts && state.context().config().rules().lines.block_cap)
        {
            let text = reloop_core::profile::BLOCK_CAP_TEXT.replace("{n}", &cap.saturating_add(1).to_string());
            let mut fields = Map::new();
            fields.insert("subtype".into(), json!("informational"));
            fields.insert("content".into(), json!(text));
            fields.insert("isMeta".into(), json!(false));
            fields.insert("level".into(), json!("warning"));
            w.push_line("system", fields, record.at_ms, out)?;
        }
    }
    // An answer the core took back (2.1.332's malformed-call rule): Claude Code keeps only its
    // uuid, on the reminder line that follows it.
    let rules = state.context().config().rules();
    if let (Some(Reason::Continue(Continue::MalformedToolCallRetry)), true) = (&record.reason, rules.malformed.retract)
    {
        let mut fields = Map::new();
        fields.insert("message".into(), json!({"role": "user", "content": rules.malformed.reminder.text}));
        fields.insert("isMeta".into(), json!(true));
        fields
            .insert("retractedMessageUuids".into(), json!([line_uuid(&w.header.id, usize::MAX - record.seq as usize)]));
        w.push_line("user", fields, record.at_ms, out)?;
    }
    // The switch to the fallback model, naming both models.
    if let (Event::ModelFailed { .. }, false) = (&record.event, quiet) {
        let effects: Vec<Effect> = serde_json::from_value(record.effects.clone()).unwrap_or_default();
        for (trigger, from, to) in effects.iter().filter_map(|e| match e {
            Effect::Notice(Notice::SwitchModel { trigger, from, to }) => Some((trigger, from, to)),
            _ => None,
        }) {
            let mut fields = Map::new();
            fields.insert("subtype".into(), json!("model_fallback"));
            fields.insert("trigger".into(), json!(trigger));
            fields.insert("original_model".into(), json!(from));
            fields.insert("fallback_model".into(), json!(to));
            fields
                .insert("content".into(), json!(format!("Switched to {to} after repeated {trigger} errors on {from}")));
            w.push_line("system", fields, record.at_ms, out)?;
        }
    }
    // A failed request the core retries, as 2.1.332 records each retry.
    if let (Event::ModelFailed { error, .. }, false) = (&record.event, quiet) {
        let effects: Vec<Effect> = serde_json::from_value(record.effects.clone()).unwrap_or_default();
        for wait in effects.iter().filter_map(|e| match e {
            Effect::Command(reloop_core::Command::WaitRetry(w)) => Some(w),
            _ => None,
        }) {
            let text = api_error_text(error);
            let message = text.strip_prefix("API Error: ").unwrap_or(&text);
            let mut fields = Map::new();
            fields.insert("subtype".into(), json!("api_error"));
            fields.insert("level".into(), json!("error"));
            fields.insert("error".into(), json!({"message": message, "status": error.status}));
            // 2.1.197 records its delay unrounded, as it waited it (flag 15).
            let delay =
                wait.unrounded_delay_ms.filter(|ms| ms.fract() != 0.0).map_or(json!(wait.delay_ms), |ms| json!(ms));
            fields.insert("retryInMs".into(), delay);
            fields.insert("retryAttempt".into(), json!(wait.attempt));
            fields.insert("maxRetries".into(), json!(wait.max_retries));
            w.push_line("system", fields, record.at_ms, out)?;
        }
    }
    // The `--max-turns` stop, as Claude Code records it.
    if let Some(Reason::Terminal(Stop::MaxTurns { max_turns, .. })) = &record.reason {
        let mut fields = Map::new();
        fields.insert("attachment".into(), json!({"type": "max_turns_reached", "maxTurns": max_turns}));
        w.push_line("attachment", fields, record.at_ms, out)?;
    }
    // A run the loop ended in error on its own (the output limit, malformed calls, exhausted):
    // Claude Code's session file ends with the error as a synthetic assistant message too.
    let ended_here = before_terminal_none(record) && w.style.plain_prompts;
    if let (Some(terminal), true) = (state.terminal(), ended_here) {
        let exhausted = matches!(
            terminal.evidence(),
            reloop_core::Evidence::MalformedToolCallExhausted { .. } | reloop_core::Evidence::OutputTruncated { .. }
        );
        if let (Some(error), true) = (&terminal.error, exhausted) {
            let message = json!({
                "id": format!("msg_api_error_{}", record.seq),
                "type": "message",
                "role": "assistant",
                "model": "<synthetic>",
                "content": [{"type": "text", "text": error}],
                "stop_reason": "stop_sequence",
                "stop_sequence": "",
                "usage": {"input_tokens": 0, "output_tokens": 0},
            });
            w.push("assistant", message, record.at_ms, &["isApiErrorMessage"], out)?;
        }
    }
    if let (Event::ModelFailed { error, .. } | Event::CompactFailed { error, .. }, Some(_)) =
        (&record.event, state.terminal())
    {
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
        w.push("assistant", message, record.at_ms, &["isApiErrorMessage"], out)?;
    }
    Ok(())
}

/// A typed prompt's text as Claude Code writes it, when the message is text alone: the
/// `<system-reminder>` blocks before it left out, the rest joined.
fn plain_prompt(message: &Message) -> Option<String> {
    let mut texts = Vec::new();
    for block in &message.content {
        match block {
            ContentBlock::Text(t) if texts.is_empty() && t.text.starts_with("<system-reminder>") => {}
            ContentBlock::Text(t) => texts.push(t.text.as_str()),
            _ => return None,
        }
    }
    (!texts.is_empty()).then(|| texts.join("\n"))
}

/// The step ended the run (it moved to a terminal phase), rather than being replayed after it.
fn before_terminal_none(record: &StepRecord) -> bool {
    matches!(&record.reason, Some(Reason::Terminal(_)))
        && !matches!(record.event, Event::ModelFailed { .. } | Event::CompactFailed { .. })
}

/// A message of text alone as one string, as Claude Code writes the lines it makes itself.
fn plain_text(message: &Message) -> Option<String> {
    let texts: Option<Vec<&str>> = message
        .content
        .iter()
        .map(|b| match b {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect();
    texts.filter(|t| !t.is_empty()).map(|t| t.join("\n"))
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
