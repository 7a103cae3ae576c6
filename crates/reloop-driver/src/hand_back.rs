//! An `Agent` call's answer: the child's report handed back in the profile's words, and the
//! child's summary Claude Code keeps as the call's `tool_use_result` (`subagent/foreground` in
//! tests/print/recorded, both versions). What the summary counts is tallied from the child's
//! messages as they go by ([`Tally`]).

use reloop_core::profile::{
    agent_trailer, error_message_usage, indented, tools_used_reminder, HandBack, TaskEnd, TaskNotice, HAND_BACK_FRAME,
};
use reloop_core::{ContentBlock, Event, Message, Role, ToolResultContent, ToolUse, Usage};
use reloop_journal::{JournalBackend, JournalError};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

/// The note 2.1.332 puts above the frame: the tools the subagent used.
const TOOLS_NOTE: &str = "tools-used-before-summary";

/// What the parent learns of a child from its messages: its calls and its last response.
#[derive(Debug, Default, Clone)]
pub(crate) struct Tally {
    /// The child's tool calls, in order: name and input.
    calls: Vec<(String, Value)>,
    /// The usage of the child's last response.
    last_usage: Usage,
    /// The child had a response at all (one whose first request failed had none).
    answered: bool,
}

impl Tally {
    /// Counts one of the child's messages; `usage` is its response's.
    pub(crate) fn message(&mut self, message: &Message, usage: Option<&Usage>) {
        if message.role != Role::Assistant {
            return;
        }
        self.calls.extend(message.tool_uses().map(|call| (call.name.clone(), call.input.clone())));
        if let Some(usage) = usage {
            self.last_usage = usage.clone();
            self.answered = true;
        }
    }

    /// The tally of a child that already ended, from its journal (a resumed parent takes its
    /// answer from there): the calls of the responses it kept, its last response's usage, and
    /// the time from its first step to its last.
    pub(crate) fn journaled(journal: &dyn JournalBackend, id: &str) -> Result<(Tally, u64), JournalError> {
        let (mut tally, mut pending, mut span) = (Tally::default(), Vec::new(), None::<(u64, u64)>);
        journal.visit_steps(id, &mut |step| {
            match &step.event {
                Event::ModelBlock { block: ContentBlock::ToolUse(call), .. } => {
                    pending.push((call.name.clone(), call.input.clone()))
                }
                Event::ModelDone { usage, .. } => {
                    tally.calls.append(&mut pending);
                    tally.last_usage = usage.clone();
                    tally.answered = true;
                }
                // A failed attempt's calls were taken back.
                Event::ModelFailed { .. } => pending.clear(),
                _ => {}
            }
            span = Some((span.map_or(step.at_ms, |(first, _)| first), step.at_ms));
            Ok(true)
        })?;
        Ok((tally, span.map_or(0, |(first, last)| last.saturating_sub(first))))
    }

    /// The child's calls as Claude Code counts them: the final-answer tool is not one.
    fn counted(&self) -> impl Iterator<Item = &(String, Value)> {
        self.calls.iter().filter(|(name, _)| name != reloop_core::structured::TOOL)
    }

    /// The tools the child used, each once, in the order it first used them.
    fn tools_used(&self) -> Vec<&str> {
        let mut used: Vec<&str> = Vec::new();
        for (name, _) in self.counted() {
            if !used.contains(&name.as_str()) {
                used.push(name);
            }
        }
        used
    }

    /// Tokens of the last response, as Claude Code totals a usage.
    fn total_tokens(&self) -> u64 {
        self.last_usage.total()
    }

    /// Claude Code's `toolStats`: reads, searches, commands, edits with the lines they add and
    /// remove, and the rest; `None` when the child called no tool.
    fn stats(&self) -> Option<Value> {
        let (mut read, mut search, mut bash, mut edit, mut added, mut removed, mut other) = (0, 0, 0, 0, 0, 0, 0);
        let lines = |v: Option<&Value>| match v.and_then(Value::as_str) {
            Some(s) if !s.is_empty() => s.matches('\n').count() as u64 + 1,
            _ => 0,
        };
        for (name, input) in self.counted() {
            match name.as_str() {
                "Read" => read += 1,
                "Grep" | "Glob" => search += 1,
                "Bash" => bash += 1,
                "Edit" => {
                    edit += 1;
                    match input.get("edits").and_then(Value::as_array) {
                        Some(edits) => edits.iter().for_each(|e| {
                            added += lines(e.get("new_string"));
                            removed += lines(e.get("old_string"));
                        }),
                        None => {
                            added += lines(input.get("new_string"));
                            removed += lines(input.get("old_string"));
                        }
                    }
                }
                "Write" => {
                    edit += 1;
                    added += lines(input.get("content"));
                }
                "NotebookEdit" => {
                    edit += 1;
                    added += lines(input.get("new_source"));
                }
                _ => other += 1,
            }
        }
        (read + search + bash + edit + other > 0).then(|| {
            json!({"readCount": read, "searchCount": search, "bashCount": bash, "editFileCount": edit,
                   "linesAdded": added, "linesRemoved": removed, "otherToolCount": other})
        })
    }
}

/// A child's report, to hand back.
pub(crate) struct Report<'a> {
    pub call: &'a ToolUse,
    pub agent_type: &'a str,
    /// The model the child was set to ask, as Claude Code names it (`resolvedModel`).
    pub model: &'a str,
    pub agent_id: String,
    /// The child's final text.
    pub text: &'a str,
    pub tally: &'a Tally,
    pub duration_ms: u64,
}

impl Report<'_> {
    /// The note above 2.1.332's frame, when the child used tools.
    fn note(&self) -> Option<String> {
        let used = self.tally.tools_used();
        let named: Vec<&str> =
            used.iter().map(|t| if shown_name(t) { *t } else { "unreadable-tools-used-before-summary" }).collect();
        (!named.is_empty()).then(|| format!("<{TOOLS_NOTE}>{}</{TOOLS_NOTE}>\n", named.join(", ")))
    }

    fn trailer(&self) -> String {
        let tool_uses = self.tally.counted().count() as u64;
        agent_trailer(&self.agent_id, self.tally.total_tokens(), tool_uses, self.duration_ms)
    }

    /// What the model reads, in the words of `style`.
    pub(crate) fn answer(&self, style: HandBack) -> ToolResultContent {
        match style {
            HandBack::Reloop => ToolResultContent::Blocks(vec![
                ContentBlock::text(self.text.to_string()),
                ContentBlock::text(format!(
                    "agentId: {} (for resuming to continue this agent's work if needed)",
                    self.agent_id
                )),
            ]),
            HandBack::Trailer => ToolResultContent::Blocks(vec![
                ContentBlock::text(self.text.to_string()),
                ContentBlock::text(self.trailer()),
            ]),
            HandBack::Framed => {
                let note = self.note().map(|n| format!("{}\n", indented(&n))).unwrap_or_default();
                let report = indented(self.text);
                let text = format!("{note}{HAND_BACK_FRAME}\n{report}\n{}", self.trailer());
                ToolResultContent::Blocks(vec![ContentBlock::text(text)])
            }
        }
    }

    /// The notification of a background child's end (2.1.332 `subagent/default`): the tools
    /// it used as a reminder of their own, then the notification.
    pub(crate) fn notification(&self, description: &str, end: &TaskEnd) -> Vec<ContentBlock> {
        let tool_uses = self.tally.counted().count() as u64;
        let usage = (self.tally.total_tokens(), tool_uses, self.duration_ms);
        let notice = TaskNotice { agent_id: &self.agent_id, tool_use_id: &self.call.id, description, end, usage };
        let mut blocks: Vec<ContentBlock> =
            self.note().map(|note| ContentBlock::text(tools_used_reminder(&note))).into_iter().collect();
        blocks.push(ContentBlock::text(notice.text()));
        blocks
    }

    /// The child's summary as 2.1.332 keeps it (the printer leaves out what 2.1.197 lacks).
    pub(crate) fn summary(&self) -> Value {
        let prompt = self.call.input.get("prompt").cloned().unwrap_or(Value::Null);
        let mut content = Vec::new();
        let note = self.note();
        if let Some(note) = &note {
            content.push(note.clone());
        }
        content.push(self.text.to_string());
        let mut s = Map::new();
        s.insert("status".into(), json!("completed"));
        s.insert("prompt".into(), prompt);
        s.insert("agentId".into(), json!(self.agent_id));
        s.insert("agentType".into(), json!(self.agent_type));
        let used = self.tally.tools_used();
        if !used.is_empty() {
            s.insert("toolsUsed".into(), json!(used));
        }
        s.insert("harnessNoteCount".into(), json!(usize::from(note.is_some())));
        s.insert("harnessTailCount".into(), json!(0));
        s.insert("harnessSectionHash".into(), json!(section_hash(&content)));
        let blocks: Vec<Value> = content.iter().map(|t| json!({"type": "text", "text": t})).collect();
        s.insert("content".into(), Value::Array(blocks));
        s.insert("resolvedModel".into(), json!(self.model));
        s.insert("totalDurationMs".into(), json!(self.duration_ms));
        s.insert("totalTokens".into(), json!(self.tally.total_tokens()));
        s.insert("totalToolUseCount".into(), json!(self.tally.counted().count()));
        // A child that had no response is summed up with its error message's usage (2.1.197
        // `subagent/failed`; the printer drops 2.1.332's keys for 2.1.197).
        let spent = if self.tally.answered { usage(&self.tally.last_usage) } else { error_message_usage(true) };
        s.insert("usage".into(), spent);
        if let Some(stats) = self.tally.stats() {
            s.insert("toolStats".into(), stats);
        }
        s.insert("canContinueAgent".into(), json!(true));
        Value::Object(s)
    }
}

/// A tool name Claude Code quotes in the note as it is.
fn shown_name(name: &str) -> bool {
    (1..=256).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"_.:-".contains(&b))
}

/// Claude Code's fingerprint of the summary's blocks: SHA-256 over their count and each text
/// after its length in UTF-16 units, the first 16 hex digits.
fn section_hash(texts: &[String]) -> String {
    let mut hash = Sha256::new();
    hash.update(texts.len().to_string());
    for text in texts {
        hash.update(format!(":{}:", text.encode_utf16().count()));
        hash.update(text);
    }
    hash.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// The last response's usage in 2.1.332's shape.
fn usage(u: &Usage) -> Value {
    json!({
        "output_tokens_details": {"thinking_tokens": 0},
        "input_tokens": u.input_tokens,
        "cache_creation_input_tokens": u.cache_creation_input_tokens,
        "cache_read_input_tokens": u.cache_read_input_tokens,
        "output_tokens": u.output_tokens,
        "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
        "service_tier": "standard",
        "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0},
        "inference_geo": "",
        "iterations": [],
        "speed": "standard",
        "fallback_credit": null,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_call() -> Message {
        Message::assistant(vec![ContentBlock::tool_use("t2", "Read", json!({"file_path": "/a"}))])
    }

    /// 2.1.332 `subagent/foreground`: the answer and the summary's fingerprint as recorded.
    #[test]
    fn a_framed_hand_back_is_what_2_1_332_sent_and_kept() {
        let mut tally = Tally::default();
        let usage = Usage { input_tokens: 120, output_tokens: 25, ..Usage::default() };
        tally.message(&read_call(), Some(&usage));
        let ContentBlock::ToolUse(call) = ContentBlock::tool_use("t1", "Agent", json!({"prompt": "P"})) else {
            unreachable!()
        };
        let report = Report {
            call: &call,
            agent_type: "general-purpose",
            model: "claude-opus-5-5",
            agent_id: "a6968f9f08d06c421".into(),
            text: "SUBAGENT REPORT: logout() is a stub with a TODO.",
            tally: &tally,
            duration_ms: 135,
        };
        let ToolResultContent::Blocks(blocks) = report.answer(HandBack::Framed) else { panic!("blocks") };
        let ContentBlock::Text(text) = &blocks[0] else { panic!("text") };
        assert_eq!(
            text.text,
            format!(
                "  <tools-used-before-summary>Read</tools-used-before-summary>\n  \n{HAND_BACK_FRAME}\n  SUBAGENT REPORT: logout() is a stub with a TODO.\nagentId: a6968f9f08d06c421 (use SendMessage with to: 'a6968f9f08d06c421', summary: '<5-10 word recap>' to continue this agent)\n<usage>subagent_tokens: 145\ntool_uses: 1\nduration_ms: 135</usage>"
            )
        );
        let summary = report.summary();
        assert_eq!(summary["harnessSectionHash"], "8bc7ca464df0db66");
        assert_eq!(summary["toolStats"]["readCount"], 1);
        assert_eq!(summary["totalTokens"], 145);
    }
}
