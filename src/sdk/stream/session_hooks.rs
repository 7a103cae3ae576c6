//! The session events' lines of the SDK stream (flag 10), as both recorded versions print them
//! (`tests/print/recorded/*/hooks_events/`): a SessionStart hook's `hook_started` and
//! `hook_response` before `system/init`, and a refused prompt's `system/informational`.

use reloop_core::hook::{HookEventName, HookRun};
use reloop_core::{Reason, Stop};
use reloop_driver::RunEvent;
use serde_json::{json, Map, Value};

use super::SdkStream;

impl SdkStream {
    /// `system/init` waits for the session's SessionStart hook lines, which Claude Code prints
    /// first; it keeps the uuid it was given when the session started.
    pub(super) fn hold_init(&mut self, line: Map<String, Value>) {
        if self.output != super::Output::Lines {
            return;
        }
        let uuid = self.uuid();
        self.held_init = Some((line, uuid));
    }

    /// A query a callback hook's answer for another event ended: Claude Code's session crashed
    /// before the query printed its `system/init` (tests/sdk/recorded/hook_wrong_event*.jsonl).
    /// Only the session's first query holds its `init` that long; a later query's is printed
    /// when its message arrives.
    pub(super) fn crash_drops_init(&mut self, event: &RunEvent) {
        let RunEvent::Transition { reason: Reason::Terminal(Stop::HookAnswerRejected { .. }), .. } = event else {
            return;
        };
        if self.profile.profile().claude_code_version.is_some() {
            self.held_init = None;
        }
    }

    /// Prints the held `system/init`, if it still waits.
    pub(super) fn release_init(&mut self) {
        if let Some((mut line, uuid)) = self.held_init.take() {
            line.insert("session_id".into(), json!(self.session_id));
            line.insert("uuid".into(), json!(uuid));
            self.wire.line(&Value::Object(line));
        }
    }

    /// `--include-hook-events`: every hook's lines are printed, not only SessionStart's.
    pub fn with_hook_events(mut self, include: bool) -> Self {
        self.include_hook_events = include;
        self
    }

    /// A SessionStart hook's two lines: `hook_started`, then `hook_response` with what it
    /// printed and its exit code (one `hook_id` for both).
    /// A PreCompact hook prints no line of its own: it joins the compaction's note.
    /// With `--include-hook-events`, every other hook but SessionEnd's prints them too
    /// (`sdk36/include_hook_events`, `hooks_events/include_hook_events`, both versions), a tool
    /// event's named with its tool (`PreToolUse:Read`).
    pub(super) fn hook_ran(&mut self, event: HookEventName, call: Option<&str>, run: &HookRun) {
        // PreCompact prints no lines, `--include-hook-events` or not (`sdk36/compact_hook_events`,
        // `sdk36/auto_compact_hook_events`): its runs word the compaction's note alone.
        if event == HookEventName::PreCompact {
            return self.pre_compact_ran(run);
        }
        // SessionEnd's never print, the flag or not (recorded, `hooks_events/include_hook_events`).
        if event == HookEventName::SessionEnd || (event != HookEventName::SessionStart && !self.include_hook_events) {
            return;
        }
        let hook_id = self.uuid();
        let tool = call.and_then(|id| self.tool_names.get(id));
        let name = match event {
            _ if tool.is_some() => format!("{}:{}", event.as_str(), tool.map(String::as_str).unwrap_or_default()),
            // The session's start is before its `system/init` is out; a later SessionStart is a
            // compaction's (flag 21), `SessionStart:compact` as Claude Code names it.
            HookEventName::SessionStart if self.held_init.is_none() && self.init.is_some() => {
                "SessionStart:compact".to_string()
            }
            HookEventName::SessionStart if self.cleared => "SessionStart:clear".to_string(),
            HookEventName::SessionStart => "SessionStart:startup".to_string(),
            other => other.as_str().to_string(),
        };
        let common = json!({"hook_id": hook_id, "hook_name": name, "hook_event": event.as_str()});
        self.hook_line("hook_started", common.clone());
        let outcome = if run.exit_code == Some(0) { "success" } else { "error" };
        let mut fields = common;
        if let Value::Object(map) = &mut fields {
            map.insert("output".into(), json!(format!("{}{}", run.stdout, run.stderr)));
            map.insert("stdout".into(), json!(run.stdout));
            map.insert("stderr".into(), json!(run.stderr));
            map.insert("exit_code".into(), json!(run.exit_code));
            map.insert("outcome".into(), json!(outcome));
        }
        self.hook_line("hook_response", fields);
    }

    /// A prompt refused by its UserPromptSubmit hooks: a warning that ends the query (2.1.332
    /// adds `prompt_submit_outcome`).
    pub(super) fn prompt_refused(&mut self, content: &str, kind: &str, prompt_kept: bool, reason: &str) {
        let mut fields = json!({"content": content, "level": "warning", "prevent_continuation": true});
        if self.profile.profile().lines.prompt_submit_outcome {
            fields["prompt_submit_outcome"] = json!({"kind": kind, "prompt_kept": prompt_kept, "reason": reason});
        }
        self.system_line("informational", fields);
    }

    /// A line printed ahead of a held `system/init`.
    fn hook_line(&mut self, subtype: &str, fields: Value) {
        if self.output != super::Output::Lines {
            return;
        }
        let mut line = Map::new();
        line.insert("type".into(), json!("system"));
        line.insert("subtype".into(), json!(subtype));
        if let Value::Object(fields) = fields {
            line.extend(fields);
        }
        let uuid = self.uuid();
        line.insert("uuid".into(), json!(uuid));
        line.insert("session_id".into(), json!(self.session_id));
        self.wire.line(&Value::Object(line));
    }
}
