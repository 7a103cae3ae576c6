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
    pub(super) fn subagent_started(&mut self, tool_use_id: &str, agent_id: &str) {
        let (agent_type, task, prompt) = match self.calls.agents.get_mut(tool_use_id) {
            Some((agent_type, task, prompt)) => (agent_type.clone(), task.clone(), prompt.take()),
            None => Default::default(),
        };
        let claude_code = self.profile.profile().claude_code_version.is_some();
        if claude_code && !self.calls.tasks.contains_key(tool_use_id) {
            let started = tasks::Task::new(agent_id, tool_use_id, &agent_type, &task);
            let line = started.started(self.profile, prompt.as_deref());
            self.calls.tasks.insert(tool_use_id.to_string(), started);
            self.system_line("task_started", line);
        }
        if let Some(prompt) = prompt {
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
            Role::Assistant if self.forward_subagent_text || message.tool_uses().next().is_some() => {
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
        for (kind, body) in bodies {
            // A call's progress comes before the call's line.
            if kind == "assistant" {
                if let Some(progress) = progress.take() {
                    self.system_line("task_progress", progress);
                }
            }
            self.child_line(tool_use_id, agent_id, kind, body, (&agent_type, &task));
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
        let Some(task) = self.calls.tasks.remove(&outcome.tool_use_id) else { return };
        let (updated, notification) = task.finished(self.profile, outcome);
        self.system_line("task_updated", updated);
        self.system_line("task_notification", notification);
    }
}
