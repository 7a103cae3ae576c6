//! A subagent's lines in the parent's stream, marked with the parent's `Agent` call.

use std::collections::HashMap;

use reloop_core::profile::ProfileId;
use reloop_core::{Message, Role, ToolOutcome, Usage};
use serde_json::{json, Map, Value};

use super::{tasks, SdkStream};

/// The session's calls the stream looks back at.
#[derive(Default)]
pub(super) struct NotedCalls {
    /// `Agent` calls by id: their `subagent_type` and `description`, which the child's lines
    /// carry, and the prompt its first line shows (until shown).
    agents: HashMap<String, (Value, Value, Option<String>)>,
    /// `StructuredOutput` calls by id: their input, the structured output if it was valid.
    pub(super) structured: HashMap<String, Value>,
    /// The subagents running, by their `Agent` call's id.
    tasks: HashMap<String, tasks::Task>,
    /// The session's working directory, which a task's progress names paths from.
    pub(super) cwd: String,
    /// The agents running in the background, and the results waiting for them.
    pub(super) background: super::background::Background,
}

impl NotedCalls {
    /// The task of `tool_use_id`'s agent, which ends.
    pub(super) fn take_task(&mut self, tool_use_id: &str) -> Option<tasks::Task> {
        self.tasks.remove(tool_use_id)
    }

    /// `tool_use_id`'s `subagent_type` and `description`.
    pub(super) fn agent_call(&self, tool_use_id: &str) -> (Value, Value) {
        self.agents.get(tool_use_id).map(|(t, d, _)| (t.clone(), d.clone())).unwrap_or_default()
    }
}

impl SdkStream {
    /// The agents `system/init` lists, by name.
    pub fn with_agents(mut self, names: Vec<String>) -> Self {
        self.agents = names;
        self
    }

    /// Prints a subagent's text and thinking blocks as well (`initialize`'s `forwardSubagentText`).
    pub fn forwarding_subagent_text(mut self, forward: bool) -> Self {
        self.forward_subagent_text = forward;
        self
    }

    /// Keeps an `Agent` call's type and task for its child's lines.
    pub(super) fn note_agent_call(&mut self, call: &reloop_core::ToolUse) {
        if call.name == reloop_core::structured::TOOL {
            self.calls.structured.insert(call.id.clone(), call.input.clone());
        }
        if call.name == reloop_driver::agents::AGENT_TOOL {
            let field = |k: &str| call.input.get(k).cloned().unwrap_or(Value::Null);
            let prompt = call.input.get("prompt").and_then(Value::as_str).map(str::to_string);
            self.calls.agents.insert(call.id.clone(), (field("subagent_type"), field("description"), prompt));
        }
    }

    /// A subagent started (live, or in the replay of its parent): under a Claude Code profile its
    /// task's `task_started` line, then its prompt, which opens its lines (the driver does not
    /// echo a session's first message). A child whose first request fails has both and no
    /// message (`subagent/failed`).
    pub(super) fn subagent_started(&mut self, tool_use_id: &str, agent_id: &str, background: bool) {
        let (agent_type, task, prompt) = match self.calls.agents.get_mut(tool_use_id) {
            Some((agent_type, task, prompt)) => (agent_type.clone(), task.clone(), prompt.take()),
            None => Default::default(),
        };
        let claude_code = self.profile.profile().claude_code_version.is_some();
        if claude_code && !self.calls.tasks.contains_key(tool_use_id) {
            let started = tasks::Task::new(agent_id, tool_use_id, &agent_type, &task);
            if background {
                self.background_started(tool_use_id, agent_id);
            }
            let line = started.started(self.profile, prompt.as_deref(), background);
            self.calls.tasks.insert(tool_use_id.to_string(), started);
            self.system_line("task_started", line);
        }
        if let Some(prompt) = prompt.filter(|_| !self.in_background(tool_use_id)) {
            let body = json!({"role": "user", "content": [{"type": "text", "text": prompt}]});
            self.child_line(tool_use_id, agent_id, "user", body, (&agent_type, &task));
        }
    }

    /// A subagent's message as Claude Code prints it: its tool calls and their results, each
    /// line with the parent's call as `parent_tool_use_id` and the agent's type and task after
    /// the uuid. Its answer is not printed (it reaches the parent as the call's result) unless
    /// the app asked for the subagent's text: then each of its blocks is a line, as 2.1.332
    /// prints them (recorded against tests/sdk/examples.py's fake model). Under a Claude Code
    /// profile `task_progress` goes before each of its calls (`subagent/foreground`).
    pub(super) fn subagent_message(
        &mut self,
        tool_use_id: &str,
        agent_id: &str,
        message: &Message,
        usage: Option<&Usage>,
    ) {
        if self.in_background(tool_use_id) {
            return self.keep_background_message(tool_use_id, message, usage);
        }
        let (agent_type, task) = match self.calls.agents.get(tool_use_id) {
            Some((agent_type, task, _)) => (agent_type.clone(), task.clone()),
            None => Default::default(),
        };
        let mut progress = match (message.role, self.calls.tasks.get_mut(tool_use_id)) {
            (Role::Assistant, Some(running)) => running.progress(self.profile, message, usage, &self.calls.cwd),
            _ => None,
        };
        let mut bodies = Vec::new();
        match message.role {
            Role::User => bodies.push(("user", json!({"role": "user", "content": message.content}))),
            // A background agent's text is printed too (2.1.332 `subagent/default`).
            Role::Assistant
                if self.forward_subagent_text
                    || self.calls.background.telling
                    || message.tool_uses().next().is_some() =>
            {
                let kept = message.extra.to_map();
                for block in &message.content {
                    bodies.push((
                        "assistant",
                        json!({
                            "id": kept.get("id"), "type": "message", "role": "assistant", "model": kept.get("model"),
                            "content": [block], "stop_reason": null, "stop_sequence": null,
                        }),
                    ));
                }
            }
            _ => {}
        }
        // A call's progress comes before the call's line; a background agent's after it.
        let after = self.calls.background.telling;
        for (kind, body) in bodies {
            if kind == "assistant" && !after {
                if let Some(progress) = progress.take() {
                    self.system_line("task_progress", progress);
                }
            }
            self.child_line(tool_use_id, agent_id, kind, body, (&agent_type, &task));
            if kind == "assistant" && after {
                if let Some(progress) = progress.take() {
                    self.system_line("task_progress", progress);
                }
            }
        }
    }

    /// One line of a subagent's, marked with the parent's call, the agent's type and its task.
    fn child_line(
        &mut self,
        tool_use_id: &str,
        agent_id: &str,
        kind: &str,
        body: Value,
        (agent_type, task): (&Value, &Value),
    ) {
        let mut line = Map::new();
        line.insert("type".into(), json!(kind));
        line.insert("message".into(), body);
        line.insert("parent_tool_use_id".into(), json!(tool_use_id));
        if self.profile == ProfileId::ClaudeCode2_1_332 {
            line.insert("agent_id".into(), json!(agent_id));
        }
        let tail = vec![
            ("timestamp", json!(crate::sdk::timestamp())),
            ("subagent_type", agent_type.clone()),
            ("task_description", task.clone()),
        ];
        self.emit_with_tail(line, false, tail);
    }

    /// A subagent's `Agent` call finished: its task's last lines, before the call's result.
    pub(super) fn agent_finished(&mut self, outcome: &ToolOutcome) {
        // A background agent's call is answered at its launch: its task goes on.
        if self.in_background(&outcome.tool_use_id) {
            return;
        }
        let Some(task) = self.calls.tasks.remove(&outcome.tool_use_id) else { return };
        let (updated, notification) = task.finished(self.profile, outcome);
        self.system_line("task_updated", updated);
        self.system_line("task_notification", notification);
    }
}
