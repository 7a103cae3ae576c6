//! A subagent's lines in the parent's stream, marked with the parent's `Agent` call.

use std::collections::HashMap;

use reloop_core::{Message, Role};
use serde_json::{json, Map, Value};

use super::SdkStream;

/// The session's calls the stream looks back at.
#[derive(Default)]
pub(super) struct NotedCalls {
    /// `Agent` calls by id: their `subagent_type` and `description`, which the child's lines
    /// carry, and the prompt its first line shows (until shown).
    agents: HashMap<String, (Value, Value, Option<String>)>,
    /// `StructuredOutput` calls by id: their input, the structured output if it was valid.
    pub(super) structured: HashMap<String, Value>,
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

    /// A subagent's message as Claude Code prints it: its prompt, its tool calls and their
    /// results, each line with the parent's call as `parent_tool_use_id` and the agent's type
    /// and task after the uuid. Its answer is not printed (it reaches the parent as the call's
    /// result) unless the app asked for the subagent's text: then each of its blocks is a line,
    /// as 2.1.332 prints them (recorded against tests/sdk/examples.py's fake model).
    pub(super) fn subagent_message(&mut self, tool_use_id: &str, message: &Message) {
        let (agent_type, task, prompt) = match self.calls.agents.get_mut(tool_use_id) {
            // The child's prompt opens its lines (the driver does not echo a session's first message).
            Some((agent_type, task, prompt)) => (agent_type.clone(), task.clone(), prompt.take()),
            None => Default::default(),
        };
        let mut bodies = Vec::new();
        if let Some(prompt) = prompt {
            bodies.push(("user", json!({"role": "user", "content": [{"type": "text", "text": prompt}]})));
        }
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
            let mut line = Map::new();
            line.insert("type".into(), json!(kind));
            line.insert("message".into(), body);
            line.insert("parent_tool_use_id".into(), json!(tool_use_id));
            let tail = vec![
                ("timestamp", json!(crate::sdk::timestamp())),
                ("subagent_type", agent_type.clone()),
                ("task_description", task.clone()),
            ];
            self.emit_with_tail(line, false, tail);
        }
    }
}
