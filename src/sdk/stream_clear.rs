//! The lines of `/clear` typed between queries of a stream-json session, as Claude Code prints
//! them (tests/print/recorded/*/settings_slash/stream_clear): the model is not asked, and what
//! follows belongs to a new session.
//!
//! 2.1.332: `conversation_reset` (its `new_conversation_id` also its `uuid`, `trigger` `clear`,
//! the typed message's `user_message_uuid`) and `system/background_tasks_changed`, both with the
//! old session's id; then, with the new session's id, `system/init` and a `result` of no turns,
//! empty text, no cost (the new session has spent nothing) and `local_command` `clear`.
//! 2.1.197: no reset line; `system/init`, an `assistant` line `(no content)` from the
//! `<synthetic>` model, and the `result` with the process's cost so far.

use reloop_core::profile::ProfileId;
use reloop_core::Usage;
use reloop_driver::RunResult;
use serde_json::{json, Map, Value};

use super::SdkStream;
use crate::sdk::usage::{model_usage, usage_json};

impl SdkStream {
    /// `/clear`: prints its lines and goes on as session `new_session`, whose queries start
    /// from nothing. `previous` is the last query's result (2.1.197 reports its cost).
    pub fn conversation_reset(&mut self, new_session: &str, previous: Option<&RunResult>) {
        let latest = self.profile == ProfileId::ClaudeCode2_1_332;
        if latest {
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
        self.session_id = new_session.to_string();
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
        let (cost, usage) = match (latest, previous) {
            (false, Some(previous)) => (
                previous.total_cost_usd,
                model_usage(&previous.model_usage, previous.profile, &self.prices, self.max_output_tokens),
            ),
            _ => (0.0, json!({})),
        };
        let mut line = Map::new();
        line.insert("type".into(), json!("result"));
        line.insert("subtype".into(), json!("success"));
        line.insert("is_error".into(), json!(false));
        line.insert("duration_ms".into(), json!(0));
        line.insert("duration_api_ms".into(), json!(0));
        line.insert("num_turns".into(), json!(0));
        line.insert("result".into(), json!(""));
        line.insert("stop_reason".into(), Value::Null);
        line.insert("session_id".into(), json!(self.session_id));
        line.insert("total_cost_usd".into(), json!(cost));
        line.insert("usage".into(), usage_json(&Usage::default()));
        line.insert("modelUsage".into(), usage);
        line.insert("permission_denials".into(), json!([]));
        if latest {
            line.insert("local_command".into(), json!("clear"));
        }
        line.insert("uuid".into(), json!(self.uuid()));
        self.wire.line(&Value::Object(line));
        self.seq = 0;
        self.line = 0;
    }
}
