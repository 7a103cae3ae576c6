//! A background agent's lines (2.1.332, flag 44; `subagent/default`): `background_tasks_changed`
//! and `task_started` when its call launches it, its own lines, then `task_updated`,
//! `task_notification` and `background_tasks_changed` again when its end is told, before the
//! query its notification starts; the queries' `result` lines wait until no agent runs in the
//! background, as 2.1.332 prints them all at the end.
//!
//! Claude Code prints a background agent's lines as they come, between the parent's, in
//! whichever order the two happen to run. reloop prints them together when the agent's end is
//! told, a point the parent's journal holds, so a session prints the same lines on every run
//! and in its replay (docs/profiles.md, "Print mode against the recordings").

use reloop_core::profile::run_id;
use reloop_core::{Message, Role, Usage};
use serde_json::{json, Value};

use super::SdkStream;

/// The background agents of a session, and the results waiting for them.
#[derive(Default)]
pub(super) struct Background {
    /// The agents running, in launch order: their call, their id and the lines they have sent.
    running: Vec<Running>,
    /// Results of queries that ended while agents ran, as they would have been printed.
    held: Vec<Held>,
    /// An agent's lines are being printed at its end: each call's progress follows its line,
    /// as 2.1.332 prints a background agent's.
    pub(super) telling: bool,
}

struct Running {
    tool_use_id: String,
    agent_id: String,
    /// Its messages, printed when its end is told; each assistant one with its response's usage.
    messages: Vec<(Message, Option<Usage>)>,
}

/// A result kept back: its line, or (`text` output) its text.
pub(super) enum Held {
    Line(Value),
    Text(String),
}

impl SdkStream {
    /// A background agent's launch: the tasks running, then its `task_started`.
    pub(super) fn background_started(&mut self, tool_use_id: &str, agent_id: &str) {
        let running = Running { tool_use_id: tool_use_id.into(), agent_id: agent_id.into(), messages: Vec::new() };
        self.calls.background.running.push(running);
        self.background_tasks_changed();
    }

    /// Whether `tool_use_id`'s agent runs in the background (its lines wait).
    pub(super) fn in_background(&self, tool_use_id: &str) -> bool {
        self.calls.background.running.iter().any(|r| r.tool_use_id == tool_use_id)
    }

    /// Keeps a background agent's message until its end is told.
    pub(super) fn keep_background_message(&mut self, tool_use_id: &str, message: &Message, usage: Option<&Usage>) {
        if let Some(running) = self.calls.background.running.iter_mut().find(|r| r.tool_use_id == tool_use_id) {
            running.messages.push((message.clone(), usage.cloned()));
        }
    }

    /// The end of the agent of run `run` is told: its lines, its task's last lines, the tasks
    /// still running, and the `system/init` of the query its notification starts.
    pub(super) fn notified(&mut self, run: &str) {
        let background = &mut self.calls.background.running;
        let Some(at) = background.iter().position(|r| run_id(&r.agent_id) == run) else { return };
        let ended = background.remove(at);
        self.calls.background.telling = true;
        for (message, usage) in &ended.messages {
            self.subagent_message(&ended.tool_use_id, &ended.agent_id, message, usage.as_ref());
        }
        self.calls.background.telling = false;
        let report = ended
            .messages
            .iter()
            .rev()
            .find(|(m, _)| m.role == Role::Assistant)
            .map(|(m, _)| m.text())
            .unwrap_or_default();
        let usage = ended.messages.iter().rev().find_map(|(_, u)| u.clone());
        if let Some(task) = self.calls.take_task(&ended.tool_use_id) {
            let (updated, notification) = task.told(self.profile, &report, usage.as_ref());
            self.system_line("task_updated", updated);
            self.system_line("task_notification", notification);
        }
        self.background_tasks_changed();
        self.next_query();
        self.set_origin(Some(reloop_core::profile::notification_origin(run)));
    }

    /// `background_tasks_changed`: the agents running now.
    fn background_tasks_changed(&mut self) {
        let tasks: Vec<Value> = self
            .calls
            .background
            .running
            .iter()
            .map(|r| {
                let (agent_type, description) = self.calls.agent_call(&r.tool_use_id);
                json!({"task_id": r.agent_id, "run_id": run_id(&r.agent_id), "task_type": "local_agent",
                       "subagent_type": agent_type, "description": description})
            })
            .collect();
        self.system_line("background_tasks_changed", json!({ "tasks": tasks }));
    }

    /// Prints the results still kept: the stream ends with agents whose end was never told
    /// (the session stopped them).
    pub fn flush_held(&mut self) {
        let mut texts = 0;
        for result in std::mem::take(&mut self.calls.background.held) {
            match result {
                Held::Line(line) => self.wire.line(&line),
                Held::Text(text) => {
                    // A blank line between the texts of the results held together
                    // (`subagent/default_text`).
                    if texts > 0 {
                        crate::term::outln!();
                    }
                    texts += 1;
                    crate::term::outln!("{text}");
                }
            }
        }
    }

    /// Prints a query's result, or keeps it while agents run in the background; a result
    /// printed brings the kept ones out first.
    pub(super) fn put_result(&mut self, result: Held) {
        if !self.calls.background.running.is_empty() {
            self.calls.background.held.push(result);
            return;
        }
        self.calls.background.held.push(result);
        self.flush_held();
    }
}
