//! The lines of a prompt Claude Code answers itself (see `crate::sdk::local_answer`), as it
//! prints them (`tests/print/recorded/*/settings_slash/compact`, `unknown`,
//! `sdk36/stream_local`): `system/init`, an `assistant` line of the answer from the
//! `<synthetic>` model, and a `result` of no turns. 2.1.197: the line stops on an empty sequence,
//! and the result has the process's cost so far; `/compact`'s result text is empty, an unknown
//! command's is the answer. 2.1.332: the line ends its turn and names the command it ran
//! (`local_command_source`, `_run`, `_outcome` `failed`), the result says `local_command`.

use reloop_core::profile::ProfileId;
use reloop_core::Usage;
use reloop_driver::{RunEvent, RunResult};
use serde_json::{json, Map, Value};

use super::SdkStream;
use crate::sdk::local_answer::Local;
use crate::sdk::usage::{model_usage, usage_json};

impl SdkStream {
    /// A custom command's query is asked with its file's `model` (or the session goes back
    /// after it): later lines name it, and so does the `system/init` of the session's first
    /// query when it is that command's (`sdk_wire/command_frontmatter`).
    pub fn command_model(&mut self, model: String) {
        match (&mut self.held_init, &self.init) {
            (Some((line, _)), _) => {
                line.insert("model".into(), serde_json::json!(super::shown_id(self.profile, &model)));
            }
            (None, None) => self.init_model = Some(model.clone()),
            (None, Some(_)) => {}
        }
        self.model = model;
    }

    /// Prints Claude Code's answer to a local prompt. `previous`: the session's last query's
    /// result, if one ran (2.1.197 reports the process's cost). The session's `system/init` is
    /// printed first: `started`'s (the session's first prompt), or again between queries.
    pub fn answer_locally(&mut self, answer: &Local, previous: Option<&RunResult>, started: Option<&RunEvent>) {
        // These lines belong to no journal step: each answer takes a step number of its own,
        // far from any step's, so their uuids stay unique in the session.
        let (seq, line) = (self.seq, self.line);
        self.local_answers += 1;
        self.seq = u64::MAX - 1 - u64::from(self.local_answers);
        self.line = 0;
        match started {
            Some(started) => self.on_event(started),
            None => self.next_query(),
        }
        let text = answer.text();
        let (command, args) = match answer {
            Local::NoMessages { args } => ("compact", args.as_str()),
            Local::Unknown { name, .. } => (name.as_str(), ""),
        };
        self.local_error_line(&text, command, args);
        match answer {
            Local::NoMessages { args } => {
                self.said_locally("compact", args, Err(&text), reloop_core::local_lines::LocalLine::failed)
            }
            // 2.1.197 keeps the message as typed, and its answer, with no caveat.
            Local::Unknown { name, args, .. } => {
                use reloop_core::local_lines::{stdout, LocalLine};
                let typed = if args.is_empty() { format!("/{name}") } else { format!("/{name} {args}") };
                self.local_lines.extend([LocalLine::failed(typed), LocalLine::failed(stdout(&text))]);
            }
        }
        let latest = self.profile == ProfileId::ClaudeCode2_1_332;
        let (cost, usage) = match (latest, previous) {
            (false, Some(previous)) => (
                previous.total_cost_usd,
                model_usage(&previous.model_usage, previous.profile, &self.prices, self.max_output_tokens),
            ),
            _ => (0.0, json!({})),
        };
        let shown = match answer {
            Local::NoMessages { .. } => "",
            Local::Unknown { .. } => text.as_str(),
        };
        self.local_result(cost, usage_json(&Usage::default()), usage, latest.then_some(command), shown);
        (self.seq, self.line) = (seq, line);
    }

    /// The `<synthetic>` assistant line of a built-in command's failure `text`, as each version
    /// prints it (2.1.332 names the command and its arguments).
    pub(super) fn local_error_line(&mut self, text: &str, command: &str, args: &str) {
        let latest = self.profile == ProfileId::ClaudeCode2_1_332;
        let (stop_reason, stop_sequence) =
            if latest { ("end_turn", Value::Null) } else { ("stop_sequence", json!("")) };
        let mut line = Map::new();
        line.insert("type".into(), json!("assistant"));
        line.insert(
            "message".into(),
            json!({"id": self.uuid(), "model": "<synthetic>", "role": "assistant",
                "stop_reason": stop_reason, "stop_sequence": stop_sequence, "type": "message",
                "usage": usage_json(&Usage::default()), "content": [{"type": "text", "text": text}]}),
        );
        let tail = match latest {
            true => vec![
                ("local_command_source", json!(format!("<local-command-stderr>{text}</local-command-stderr>"))),
                ("timestamp", json!(crate::sdk::timestamp())),
                ("local_command_run", json!({"command": command, "args": args})),
                ("local_command_outcome", json!({"kind": "failed"})),
            ],
            false => Vec::new(),
        };
        self.emit_with_tail(line, true, tail);
    }
}
