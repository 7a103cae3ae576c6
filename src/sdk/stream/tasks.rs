//! A subagent's task, as Claude Code tells an app of it: `task_started` when it starts,
//! `task_progress` at each of its tool calls, `task_updated` and `task_notification` when its
//! `Agent` call is answered (`subagent/foreground` in tests/print/recorded, both versions).

use std::time::{Instant, SystemTime, UNIX_EPOCH};

use reloop_core::profile::{run_id, ProfileId};
use reloop_core::{Message, ToolOutcome, ToolUse, Usage};
use serde_json::{json, Map, Value};

/// How many characters of a pattern, command or address a progress line quotes.
const QUOTED: usize = 50;

/// A subagent running for one `Agent` call.
pub(super) struct Task {
    agent_id: String,
    /// 2.1.332's id of this run of the agent.
    run_id: String,
    tool_use_id: String,
    agent_type: Value,
    description: Value,
    started: Instant,
    /// The calls it made so far.
    tool_uses: u64,
}

impl Task {
    pub(super) fn new(agent_id: &str, tool_use_id: &str, agent_type: &Value, description: &Value) -> Self {
        Task {
            agent_id: agent_id.to_string(),
            run_id: run_id(agent_id),
            tool_use_id: tool_use_id.to_string(),
            agent_type: agent_type.clone(),
            description: description.clone(),
            started: Instant::now(),
            tool_uses: 0,
        }
    }

    /// The fields every task line opens with: the task, and 2.1.332's run.
    fn head(&self, profile: ProfileId) -> Map<String, Value> {
        let mut line = Map::new();
        line.insert("task_id".into(), json!(self.agent_id));
        if profile == ProfileId::ClaudeCode2_1_332 {
            line.insert("run_id".into(), json!(self.run_id));
        }
        line
    }

    fn elapsed_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// `task_started`'s fields; `background`: the agent runs in the background (flag 44).
    pub(super) fn started(&self, profile: ProfileId, prompt: Option<&str>, background: bool) -> Value {
        let mut line = self.head(profile);
        line.insert("tool_use_id".into(), json!(self.tool_use_id));
        line.insert("description".into(), self.description.clone());
        line.insert("subagent_type".into(), self.agent_type.clone());
        if profile == ProfileId::ClaudeCode2_1_332 {
            line.insert("is_backgrounded".into(), json!(background));
            line.insert("spawn_depth".into(), json!(1));
        }
        line.insert("task_type".into(), json!("local_agent"));
        line.insert("prompt".into(), json!(prompt));
        Value::Object(line)
    }

    /// `task_progress`'s fields for a message of the subagent's, when it calls tools: what the
    /// last call does, in Claude Code's words, and what the subagent spent so far.
    pub(super) fn progress(
        &mut self,
        profile: ProfileId,
        message: &Message,
        usage: Option<&Usage>,
        cwd: &str,
    ) -> Option<Value> {
        let calls: Vec<&ToolUse> = message.tool_uses().map(|c| &**c).collect();
        let last = calls.last()?;
        self.tool_uses += calls.len() as u64;
        let tokens = usage.map_or(0, Usage::total);
        let mut line = self.head(profile);
        line.insert("tool_use_id".into(), json!(self.tool_use_id));
        line.insert("description".into(), json!(activity(last, cwd)));
        line.insert("subagent_type".into(), self.agent_type.clone());
        line.insert(
            "usage".into(),
            json!({"total_tokens": tokens, "tool_uses": self.tool_uses, "duration_ms": self.elapsed_ms()}),
        );
        line.insert("last_tool_name".into(), json!(last.name));
        Some(Value::Object(line))
    }

    /// `task_updated`'s and `task_notification`'s fields for a background agent whose end is
    /// told (`subagent/default`): its report, and what it spent by its last response.
    pub(super) fn told(self, profile: ProfileId, report: &str, usage: Option<&Usage>) -> (Value, Value) {
        let spent = json!({"total_tokens": usage.map_or(0, Usage::total), "tool_uses": self.tool_uses,
            "duration_ms": self.elapsed_ms()});
        self.end_lines(profile, ("completed", None), json!(report), Some(spent), true)
    }

    /// The task's two last lines: `task_updated` with its status, end time and `error` if it
    /// failed with one, and `task_notification` with the status, `summary` (`is_report`: it is
    /// the agent's report) and what the task spent, when it says.
    fn end_lines(
        &self,
        profile: ProfileId,
        (status, error): (&str, Option<&str>),
        summary: Value,
        spent: Option<Value>,
        is_report: bool,
    ) -> (Value, Value) {
        let end_time = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis());
        let mut patch = json!({"status": status, "end_time": end_time});
        if let Some(error) = error {
            patch["error"] = json!(error);
        }
        let mut updated = self.head(profile);
        updated.insert("patch".into(), patch);
        let mut notification = self.head(profile);
        notification.insert("tool_use_id".into(), json!(self.tool_use_id));
        notification.insert("status".into(), json!(status));
        // reloop keeps no task output file (docs/profiles.md).
        notification.insert("output_file".into(), json!(""));
        notification.insert("summary".into(), summary);
        if is_report {
            notification.insert("summary_is_report".into(), json!(true));
        }
        if let Some(spent) = spent {
            notification.insert("usage".into(), spent);
        }
        (Value::Object(updated), Value::Object(notification))
    }

    /// `task_updated`'s and `task_notification`'s fields, from the call's answer: the child's
    /// summary when the session keeps one, else what this task counted.
    pub(super) fn finished(self, profile: ProfileId, outcome: &ToolOutcome) -> (Value, Value) {
        let summary = outcome.tool_use_result.as_ref().filter(|r| r.get("agentId").is_some());
        let status = match summary.and_then(|s| s["status"].as_str()) {
            Some(status) => status,
            None if outcome.is_error => "failed",
            None => "completed",
        };
        // 2.1.332 says why a task failed, in the patch and as its summary, and counts nothing
        // (`subagent/failed`).
        let failure = (profile == ProfileId::ClaudeCode2_1_332 && status == "failed" && summary.is_none())
            .then(|| outcome.content.as_text());
        if let Some(error) = failure {
            return self.end_lines(profile, (status, Some(&error)), json!(error), None, false);
        }
        let count = |key: &str| summary.and_then(|s| s[key].as_u64());
        // 2.1.197 sums the task up as its description; 2.1.332 as the report.
        let report = summary.and_then(|s| s["content"].as_array()?.last()?["text"].as_str().map(str::to_string));
        let said = match (profile, report) {
            (ProfileId::ClaudeCode2_1_332, Some(report)) => json!(report),
            _ => self.description.clone(),
        };
        let spent = json!({
            "total_tokens": count("totalTokens").unwrap_or(0),
            "tool_uses": count("totalToolUseCount").unwrap_or(self.tool_uses),
            "duration_ms": count("totalDurationMs").unwrap_or_else(|| self.elapsed_ms()),
        });
        self.end_lines(profile, (status, None), said, Some(spent), false)
    }
}

/// What a call does, as Claude Code's tools describe their activity: a file's path from the
/// working directory, a pattern, command or address cut to [`QUOTED`] characters; a tool with
/// no description of its own is named.
fn activity(call: &ToolUse, cwd: &str) -> String {
    let field = |key: &str| call.input.get(key).and_then(Value::as_str).filter(|s| !s.is_empty());
    let path = |key: &str| field(key).map(|p| shown_path(p, cwd));
    let quoted = |key: &str| field(key).map(quote);
    let said = match call.name.as_str() {
        "Read" => Some(path("file_path").map_or("Reading file".into(), |p| format!("Reading {p}"))),
        "Write" => Some(path("file_path").map_or("Writing file".into(), |p| format!("Writing {p}"))),
        "Edit" => Some(path("file_path").map_or("Editing file".into(), |p| format!("Editing {p}"))),
        "NotebookEdit" => {
            Some(path("notebook_path").map_or("Editing notebook".into(), |p| format!("Editing notebook {p}")))
        }
        "Glob" => Some(quoted("pattern").map_or("Finding files".into(), |p| format!("Finding {p}"))),
        "Grep" => Some(quoted("pattern").map_or("Searching".into(), |p| format!("Searching for {p}"))),
        "WebFetch" => Some(quoted("url").map_or("Fetching web page".into(), |u| format!("Fetching {u}"))),
        "Bash" => Some(match field("command") {
            None => "Running command".into(),
            Some(command) => format!("Running {}", field("description").map_or_else(|| quote(command), str::to_string)),
        }),
        _ => None,
    };
    said.unwrap_or_else(|| call.name.clone())
}

/// A path as Claude Code shows one: from the working directory when it is under it.
fn shown_path(path: &str, cwd: &str) -> String {
    match std::path::Path::new(path).strip_prefix(cwd) {
        Ok(rest) if !cwd.is_empty() && !rest.as_os_str().is_empty() => rest.display().to_string(),
        _ => path.to_string(),
    }
}

/// At most [`QUOTED`] characters, the last an ellipsis when cut.
fn quote(text: &str) -> String {
    if text.chars().count() <= QUOTED {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(QUOTED - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, input: Value) -> ToolUse {
        let reloop_core::ContentBlock::ToolUse(call) = reloop_core::ContentBlock::tool_use("t", name, input) else {
            unreachable!()
        };
        (*call).clone()
    }

    /// `subagent/foreground`: `Reading src/auth/logout.ts` for a Read of a file under the
    /// project; the other tools as Claude Code's describe their activity.
    #[test]
    fn a_call_is_described_as_claude_codes_tools_describe_it() {
        let cwd = "/tmp/reloop-cc-project";
        let read = call("Read", json!({"file_path": "/tmp/reloop-cc-project/src/auth/logout.ts"}));
        assert_eq!(activity(&read, cwd), "Reading src/auth/logout.ts");
        assert_eq!(activity(&call("Read", json!({"file_path": "/etc/hosts"})), cwd), "Reading /etc/hosts");
        assert_eq!(activity(&call("Bash", json!({"command": "ls", "description": "List"})), cwd), "Running List");
        let long = "x".repeat(60);
        assert_eq!(
            activity(&call("Grep", json!({"pattern": long})), cwd),
            format!("Searching for {}…", "x".repeat(49))
        );
        assert_eq!(activity(&call("Bash", json!({})), cwd), "Running command");
        assert_eq!(activity(&call("Mystery", json!({})), cwd), "Mystery");
    }
}
