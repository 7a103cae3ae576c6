//! The lines of the built-in commands typed between queries of a stream-json session, as
//! Claude Code prints them.
//!
//! `/clear` (tests/print/recorded/*/settings_slash/stream_clear): the model is not asked, and
//! what follows belongs to a new session. 2.1.332: `conversation_reset` (its
//! `new_conversation_id` also its `uuid`, `trigger` `clear`, the typed message's
//! `user_message_uuid`) and `system/background_tasks_changed`, both with the old session's id;
//! then, with the new session's id, `system/init` and a `result` of no turns, empty text, no cost
//! (the new session has spent nothing) and `local_command` `clear`. 2.1.197: no reset line;
//! `system/init`, an `assistant` line `(no content)` from the `<synthetic>` model, and the
//! `result` with the process's cost so far.
//!
//! `/compact` (tests/print/recorded/*/sdk_wire/stream_compact, both versions): the compaction's
//! `system/status` `compacting`, then `compact_result`, then `system/init`, the
//! `compact_boundary`, the summary `user` line, a `user` line
//! `<local-command-stdout>Compacted </local-command-stdout>` (`isReplay`; its PreCompact hooks'
//! note after `Compacted `, `settings_slash/stream_compact`), and a `result` of no
//! turns and empty text with no `terminal_reason` (2.1.332: `local_command` `compact`).

use reloop_core::hook::session::{pre_compact_block, pre_compact_note};
use reloop_core::hook::HookRun;
use reloop_core::local_lines::LocalLine;
use reloop_core::profile::ProfileId;
use reloop_core::Usage;
use reloop_driver::{CompactStatus, RunEvent, RunResult};
use serde_json::{json, Map, Value};

use super::SdkStream;
use crate::sdk::clear::ClearedFrom;
use crate::sdk::usage::{minus, model_usage, usage_json};

impl SdkStream {
    /// `/clear`, live, when the session it begins starts at once (flag 38): prints the lines of
    /// the session it ends, and keeps the rest for when the new session `new_session` has run
    /// its SessionStart hooks ([`RunEvent::Ready`]). Returns what the new session's header keeps.
    pub fn clear_to(&mut self, new_session: &str, previous: Option<&RunResult>) -> ClearedFrom {
        let cleared = self.cleared_record(previous);
        self.reset_lines();
        // The conversation it ends takes what was said in it along; the new one starts with
        // the `/clear`'s own lines.
        self.local_lines.clear();
        self.said_locally("clear", "", Ok(""), LocalLine::output);
        self.cleared_later(new_session, &cleared);
        // Line uuids come from the session, step and place: the new session's lines start at
        // none, as its replay's do.
        (self.seq, self.line) = (0, 0);
        cleared
    }

    /// A session a `/clear` began at once (flag 38), live or in its replay: the `/clear`'s lines
    /// wait for its SessionStart hooks ([`SdkStream::started_unprompted`]).
    pub fn cleared_later(&mut self, new_session: &str, cleared: &ClearedFrom) {
        self.cleared = true;
        self.pending_clear = Some((new_session.to_string(), cleared.clone()));
    }

    /// A session `/clear` began ran its SessionStart hooks (live, or its replay past them):
    /// the `/clear`'s `system/init` and `result` follow.
    pub fn started_unprompted(&mut self) {
        if let Some((new_session, cleared)) = self.pending_clear.take() {
            self.cleared_start(&new_session, &cleared);
        }
    }

    /// What a `/clear`'s new session keeps of it: the session it ended, and (2.1.197) the cost
    /// the process reported so far.
    fn cleared_record(&self, previous: Option<&RunResult>) -> ClearedFrom {
        let latest = self.profile == ProfileId::ClaudeCode2_1_332;
        let (cost_usd, model_usage) = match (latest, previous) {
            (false, Some(previous)) => (
                previous.total_cost_usd,
                model_usage(&previous.model_usage, previous.profile, &self.prices, self.max_output_tokens),
            ),
            _ => (0.0, json!({})),
        };
        ClearedFrom { session: self.session_id.clone(), cost_usd, model_usage }
    }

    /// The lines `/clear` prints for the session it ends (2.1.332: `conversation_reset` and
    /// `system/background_tasks_changed`; 2.1.197: none), after that session's last step.
    pub fn reset_lines(&mut self) {
        // A session `/clear` ended before any query never printed its `system/init`
        // (`settings_slash/clear`): the one held for it is dropped, live and in its replay.
        self.held_init = None;
        if self.profile != ProfileId::ClaudeCode2_1_332 || self.output != super::Output::Lines {
            return;
        }
        // Not the new session's id: Claude Code's `new_conversation_id` is a uuid of its own.
        let id = self.uuid();
        let typed = self.uuid();
        let mut line = Map::new();
        line.insert("type".into(), json!("conversation_reset"));
        line.insert("new_conversation_id".into(), json!(id));
        line.insert("uuid".into(), json!(id));
        line.insert("trigger".into(), json!("clear"));
        line.insert("user_message_uuid".into(), json!(typed));
        line.insert("timestamp".into(), json!(crate::sdk::timestamp()));
        line.insert("session_id".into(), json!(self.session_id));
        self.wire.line(&Value::Object(line));
        self.system_line("background_tasks_changed", json!({"tasks": []}));
    }

    /// The lines `/clear` prints as session `new_session` begins, before its first query:
    /// `system/init`, 2.1.197's `<synthetic>` `(no content)`, and the `result` `cleared` records.
    pub fn cleared_start(&mut self, new_session: &str, cleared: &ClearedFrom) {
        let latest = self.profile == ProfileId::ClaudeCode2_1_332;
        // A replay has met the new session's `Started` already: its held `system/init` (and the
        // place its uuid took) waits for the first query, as it did live.
        let held = self.held_init.take().map(|init| (init, self.seq, self.line));
        self.session_id = new_session.to_string();
        self.cleared = true;
        // Line uuids come from the session, step and place: these lines belong to no step of
        // the new session's journal, so they take a step number none has.
        self.seq = u64::MAX;
        self.line = 0;
        self.usage_before = Usage::default();
        self.user_lines = 0;
        self.stop_reason = None;
        self.next_query();
        if !latest {
            let mut line = Map::new();
            line.insert("type".into(), json!("assistant"));
            line.insert(
                "message".into(),
                json!({"id": self.uuid(), "model": "<synthetic>", "role": "assistant",
                    "stop_reason": "stop_sequence", "stop_sequence": "", "type": "message",
                    "usage": usage_json(&Usage::default()),
                    "content": [{"type": "text", "text": "(no content)"}]}),
            );
            self.emit(line, true);
        }
        let usage = usage_json(&Usage::default());
        self.local_result(cleared.cost_usd, usage, cleared.model_usage.clone(), latest.then_some("clear"), "");
        (self.seq, self.line) = (0, 0);
        if let Some((init, seq, line)) = held {
            (self.held_init, self.seq, self.line) = (Some(init), seq, line);
        }
    }

    /// A `result` line of a built-in command: no turns, no text, no stop reason.
    pub(super) fn local_result(
        &mut self,
        cost: f64,
        usage: Value,
        model_usage: Value,
        command: Option<&str>,
        text: &str,
    ) {
        let mut line = Map::new();
        line.insert("type".into(), json!("result"));
        line.insert("subtype".into(), json!("success"));
        line.insert("is_error".into(), json!(false));
        line.insert("duration_ms".into(), json!(0));
        line.insert("duration_api_ms".into(), json!(0));
        line.insert("num_turns".into(), json!(0));
        line.insert("result".into(), json!(text));
        line.insert("stop_reason".into(), Value::Null);
        line.insert("session_id".into(), json!(self.session_id));
        line.insert("total_cost_usd".into(), json!(cost));
        line.insert("usage".into(), usage);
        line.insert("modelUsage".into(), model_usage);
        line.insert("permission_denials".into(), json!([]));
        if let Some(command) = command {
            line.insert("local_command".into(), json!(command));
        }
        line.insert("uuid".into(), json!(self.uuid()));
        match self.output {
            super::Output::Text => crate::term::outln!("{text}"),
            _ => self.wire.line(&Value::Object(line)),
        }
    }

    /// The lines the built-in commands answered since the last prompt left for the model
    /// ([`reloop_core::local_lines`]); the next prompt takes them.
    pub fn take_local_lines(&mut self) -> Vec<reloop_core::local_lines::LocalLine> {
        std::mem::take(&mut self.local_lines)
    }

    /// A built-in command `name` typed with `args` answered `output` (`Err`: its failure's
    /// text): its lines, under the version's caveat, wait for the next prompt. `kind`: how the
    /// output line is kept (a compaction's `Compacted ` as the user's, `/clear`'s as output, a
    /// failure, or 2.1.197's blocked compaction worded as output, as failed). Under reloop's own
    /// profile nothing is kept.
    pub(super) fn said_locally(
        &mut self,
        name: &str,
        args: &str,
        output: Result<&str, &str>,
        kind: fn(String) -> reloop_core::local_lines::LocalLine,
    ) {
        use reloop_core::local_lines::{command, stderr, stdout, LocalLine};
        let Some(caveat) = reloop_core::local_lines::caveat(self.profile) else { return };
        let text = match output {
            Ok(text) => stdout(text),
            Err(text) => stderr(text),
        };
        let said = kind(text);
        self.local_lines.extend([LocalLine::said(caveat), LocalLine::said(command(name, args)), said]);
    }

    /// `/compact` was typed: the query that follows is its compaction.
    /// Idempotent: a replay meets the compaction's journaled PreCompact runs first.
    pub fn compact_by_hand(&mut self) {
        self.by_hand.get_or_insert_with(ByHand::default);
    }

    /// A PreCompact hook of the compaction by hand ran: its line of the `Compacted ` note.
    pub(super) fn pre_compact_ran(&mut self, run: &HookRun) {
        if let Some(by_hand) = self.by_hand.as_mut() {
            by_hand.pre_compact.push(run.clone());
        }
    }

    /// Prints a line, or holds it while a compaction by hand has not said how it ended.
    pub(super) fn print(&mut self, line: Map<String, Value>) {
        match self.by_hand.as_mut() {
            Some(ByHand { held: Some(held), .. }) => held.push(line),
            _ => self.wire.line(&Value::Object(line)),
        }
    }

    /// The events of a compaction by hand, in Claude Code's order; `false` for every other
    /// event, which the stream prints as usual.
    pub(super) fn by_hand_event(&mut self, event: &RunEvent) -> bool {
        if self.by_hand.is_none() {
            return false;
        }
        match event {
            RunEvent::CompactStatus(CompactStatus::Compacting) => {
                self.compact_status(CompactStatus::Compacting);
                if let Some(by_hand) = self.by_hand.as_mut() {
                    by_hand.held = Some(Vec::new());
                }
                true
            }
            // 2.1.197 did not compact a single exchange (flag 22): its words, as a blocked one's.
            RunEvent::CompactStatus(CompactStatus::TooFewGroups)
                if self.profile.profile().compact.by_hand_too_few.is_some() =>
            {
                let text = self.profile.profile().compact.by_hand_too_few.unwrap_or_default();
                let held = self.by_hand.as_mut().and_then(|b| b.held.take()).unwrap_or_default();
                self.compact_status(CompactStatus::Blocked(text.to_string()));
                for line in held {
                    self.wire.line(&Value::Object(line));
                }
                if let Some(by_hand) = self.by_hand.as_mut() {
                    by_hand.refused = Some(text);
                }
                true
            }
            RunEvent::CompactStatus(status) => {
                let held = self.by_hand.as_mut().and_then(|b| b.held.take()).unwrap_or_default();
                self.compact_status(status.clone());
                if *status == CompactStatus::Succeeded {
                    self.next_query();
                }
                for line in held {
                    self.wire.line(&Value::Object(line));
                }
                // Its `Compacted ` line follows the boundary and the summary, which may come after.
                if let (true, Some(by_hand)) = (*status == CompactStatus::Succeeded, self.by_hand.as_mut()) {
                    by_hand.succeeded = true;
                }
                true
            }
            RunEvent::Finished(result) => {
                let by_hand = self.by_hand.take().unwrap_or_default();
                let blocked = pre_compact_block(&by_hand.pre_compact);
                match (&blocked, by_hand.refused) {
                    (Some(text), _) => self.compaction_blocked(text),
                    // Its status lines are printed already.
                    (None, Some(text)) => {
                        self.next_query();
                        self.local_error_line(text, "compact", "");
                    }
                    (None, None) => {}
                }
                // 2.1.197 keeps a hook's block as the command's output, 2.1.332 as its failure.
                match (&blocked, by_hand.refused) {
                    (Some(text), _) if self.profile == ProfileId::ClaudeCode2_1_197 => {
                        self.said_locally("compact", "", Ok(text.as_str()), LocalLine::failed)
                    }
                    (Some(text), _) => self.said_locally("compact", "", Err(text.as_str()), LocalLine::failed),
                    (None, Some(text)) => self.said_locally("compact", "", Err(text), LocalLine::failed),
                    (None, None) => {}
                }
                let blocked = blocked.or_else(|| by_hand.refused.map(str::to_string));
                if by_hand.succeeded {
                    let note = pre_compact_note(&by_hand.pre_compact);
                    self.said_locally("compact", "", Ok(&format!("Compacted {note}")), LocalLine::said);
                    let content = format!("<local-command-stdout>Compacted {note}</local-command-stdout>");
                    let mut line = Map::new();
                    line.insert("type".into(), json!("user"));
                    line.insert("message".into(), json!({"role": "user", "content": content}));
                    let tail = vec![("timestamp", json!(crate::sdk::timestamp())), ("isReplay", json!(true))];
                    self.emit_with_tail(line, true, tail);
                }
                self.streaming.reset();
                let query_usage = minus(&result.usage, &self.usage_before);
                self.usage_before = result.usage.clone();
                self.context_tokens = result.context_tokens;
                let usage = model_usage(&result.model_usage, result.profile, &self.prices, self.max_output_tokens);
                let latest = self.profile == ProfileId::ClaudeCode2_1_332;
                let text = blocked.as_deref().unwrap_or_default();
                self.local_result(
                    result.total_cost_usd,
                    usage_json(&query_usage),
                    usage,
                    latest.then_some("compact"),
                    text,
                );
                (self.retries, self.resumes, self.notified, self.user_lines) = (0, 0, false, 0);
                self.stop_reason = None;
                self.tool_names.clear();
                true
            }
            _ => false,
        }
    }
}

impl SdkStream {
    /// A PreCompact hook blocked the compaction by hand: its status lines, `system/init`, and a
    /// `<synthetic>` assistant line of the block's words, as each version prints them
    /// (`settings_slash/stream_compact_hooks`: 2.1.332's line ends its turn and names the
    /// command, 2.1.197's stops on an empty sequence); the `result` that follows has them too.
    fn compaction_blocked(&mut self, text: &str) {
        self.compact_status(CompactStatus::Compacting);
        self.compact_status(CompactStatus::Blocked(text.to_string()));
        self.next_query();
        self.local_error_line(text, "compact", "");
    }
}

/// A compaction typed as `/compact`: the lines held until it says how it ended.
#[derive(Debug, Default)]
pub(super) struct ByHand {
    held: Option<Vec<Map<String, Value>>>,
    /// Whether it succeeded: its `Compacted ` line is printed before its result.
    succeeded: bool,
    /// Its PreCompact hooks' runs (flag 10), worded into the `Compacted ` note.
    pre_compact: Vec<HookRun>,
    /// What the version answered instead of compacting a single exchange (flag 22).
    refused: Option<&'static str>,
}
