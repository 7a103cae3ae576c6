//! How a run is shown: streamed text, one JSON result, or Claude Code's stream-json lines.

use std::path::Path;

use reloop_core::{ContentBlock, Message, Role, TerminalReason};
use reloop_driver::{RunEvent, RunResult};
use serde_json::{json, Value};

use super::spinner::Spinner;
use super::{errln, out, outln, style, styled_errln, styled_line};

/// How a run is shown: streamed text, one JSON result, or Claude Code's stream-json lines.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    Text,
    Json,
    StreamJson,
}

pub struct Printer {
    format: OutputFormat,
    demo: bool,
    session_id: String,
    /// Whether the text stream is mid-line.
    mid_line: bool,
    /// What a live run waits for, shown in text mode on a terminal.
    spinner: Spinner,
    /// The tool calls asked for and not finished yet: (id, name).
    running: Vec<(String, String)>,
    /// The MCP servers `system/init` lists (the key is left out when there are none).
    mcp_servers: Vec<serde_json::Value>,
    /// Whether this process printed part of an answer not finished yet: what a withdrawal takes
    /// back. A fork or a resume withdraws an answer another process was streaming.
    partial_shown: bool,
}

impl Printer {
    pub fn new(format: OutputFormat, demo: bool) -> Self {
        Printer {
            format,
            demo,
            session_id: String::new(),
            mid_line: false,
            spinner: Spinner::off(),
            running: Vec::new(),
            mcp_servers: Vec::new(),
            partial_shown: false,
        }
    }

    /// The same printer for a live run: in text mode, with a spinner on a terminal's stderr
    /// while the run waits for the model or a tool.
    /// The MCP servers `system/init` lists.
    pub fn with_mcp_servers(mut self, servers: Vec<serde_json::Value>) -> Self {
        self.mcp_servers = servers;
        self
    }

    pub fn live(mut self) -> Self {
        self.spinner = Spinner::new(self.format == OutputFormat::Text);
        self
    }

    pub fn banner(&mut self, cwd: &Path, prompt: &str) {
        if self.format == OutputFormat::Text {
            outln!("reloop demo — workspace {}\n", cwd.display());
            outln!("> {prompt}\n");
        }
    }

    /// What to try after the demo: the README's seven commands, on this session (`last`).
    pub fn demo_footer(&mut self, session_id: &str, journal: Option<&Path>) {
        if self.format != OutputFormat::Text {
            return;
        }
        let (where_, flag) = match journal {
            Some(path) => (path.display().to_string(), format!(" --journal {}", path.display())),
            None => ("./.reloop/journal.db".to_string(), String::new()),
        };
        let short = session_id.get(..8).unwrap_or(session_id);
        let diff = format!("diff {short} last");
        let tries: [(&str, &str); 7] = [
            ("sessions", "the journal's sessions"),
            ("show last", "the conversation, rebuilt from the journal"),
            ("show last --steps", "the transition trace: event, phase change, effects, reason"),
            ("replay last", "today's engine over the journal, with no model and no tools"),
            ("why last", "why each turn continued or stopped"),
            ("view last -o last.html", "the session as one self-contained page, for a browser"),
            (&diff, "after another run: where the two sessions part ways"),
        ];
        outln!("\nThe session is journaled in {where_}. Try:");
        for (command, what) in tries {
            let command = format!("reloop {command}{flag}");
            outln!("  {command:<32}# {what}");
        }
    }

    pub fn on_event(&mut self, event: &RunEvent) {
        match self.format {
            OutputFormat::Text => {
                if matches!(event, RunEvent::TextDelta { .. }) {
                    // Streamed text goes where the spinner was; a redraw would wipe it.
                    self.spinner.hide();
                }
                let spinner = std::mem::replace(&mut self.spinner, Spinner::off());
                spinner.suspend(|| self.text(event));
                self.spinner = spinner;
                self.follow(event);
            }
            OutputFormat::StreamJson => self.stream_json(event),
            OutputFormat::Json => {
                if let RunEvent::Finished(result) = event {
                    json(&result_json(result));
                }
            }
        }
    }

    /// What the run waits for after `event`, on the spinner.
    fn follow(&mut self, event: &RunEvent) {
        const MODEL: &str = "waiting for the model";
        match event {
            RunEvent::Started { .. } => self.spinner.show(MODEL),
            RunEvent::Message(message) if message.role == Role::Assistant => {
                self.running = message.tool_uses().map(|t| (t.id.clone(), t.name.clone())).collect();
                self.show_running();
            }
            RunEvent::Message(_) => {
                self.running.clear();
                self.spinner.show(MODEL);
            }
            RunEvent::ToolFinished(outcome) => {
                self.running.retain(|(id, _)| *id != outcome.tool_use_id);
                self.show_running();
            }
            RunEvent::Retry(wait) => {
                self.spinner.show(&format!("retrying (attempt {} of {})", wait.attempt, wait.max_retries));
            }
            RunEvent::TextDelta { .. } | RunEvent::Response { .. } | RunEvent::Finished(_) => self.spinner.hide(),
            _ => {}
        }
        if self.mid_line {
            self.spinner.hide();
        }
    }

    fn show_running(&mut self) {
        if self.running.is_empty() {
            self.spinner.hide();
            return;
        }
        let mut names: Vec<&str> = self.running.iter().map(|(_, name)| name.as_str()).collect();
        names.dedup();
        self.spinner.show(&format!("running {}", names.join(", ")));
    }

    fn end_line(&mut self) {
        if self.mid_line {
            outln!();
            self.mid_line = false;
        }
    }

    fn text(&mut self, event: &RunEvent) {
        match event {
            RunEvent::Started { session_id, .. } => self.session_id = session_id.clone(),
            RunEvent::TextDelta { text, .. } => {
                out!("{text}");
                self.mid_line = !text.ends_with('\n');
                self.partial_shown = true;
            }
            RunEvent::Message(message) if message.role == Role::Assistant => {
                self.partial_shown = false;
                for call in message.tool_uses() {
                    self.end_line();
                    styled_line(style::STRONG, &format!("⏺ {}({})", call.name, call.input));
                }
            }
            RunEvent::Message(message) => {
                for block in &message.content {
                    if let ContentBlock::Text(t) = block {
                        self.end_line();
                        outln!("{}", t.text);
                    }
                }
            }
            RunEvent::ToolFinished(outcome) => {
                self.end_line();
                let text = outcome.content.as_text();
                let mut lines = text.lines();
                let first = lines.next().unwrap_or("");
                let more = lines.count();
                let mark = if outcome.is_error { " (error)" } else { "" };
                let line = match more {
                    0 => format!("  ⎿  {first}{mark}"),
                    n => format!("  ⎿  {first}{mark} … +{n} lines"),
                };
                styled_line(if outcome.is_error { style::ERROR } else { style::DIM }, &line);
            }
            RunEvent::Retry(wait) => {
                self.end_line();
                let status = wait.error_status.map(|s| format!("{s} ")).unwrap_or_default();
                let capped = wait
                    .retry_after_capped_from_ms
                    .map(|asked| format!("; the server asked for {asked} ms, capped at 6 hours"))
                    .unwrap_or_default();
                errln!(
                    "  · {status}{}: retrying in {} ms (attempt {} of {}{capped})",
                    wait.error,
                    wait.delay_ms,
                    wait.attempt,
                    wait.max_retries
                );
            }
            RunEvent::ModelFallback { from, to, .. } => {
                self.end_line();
                errln!("  · Switched to {to} due to high demand for {from}");
            }
            RunEvent::Withdrawn if std::mem::take(&mut self.partial_shown) => {
                self.end_line();
                errln!("  · (the failed attempt's output above is withdrawn)");
            }
            // Nothing of it was shown here: the answer a stopped process (or the session forked
            // mid-answer) was streaming is asked for again, and nothing failed.
            RunEvent::Withdrawn => {}
            RunEvent::HookNotice { command, message } => {
                self.end_line();
                errln!("  · hook [{command}]: {message}");
            }
            RunEvent::HookSystemMessage { hook_event, message, .. } => {
                self.end_line();
                errln!("  · {} says: {message}", hook_event.as_str());
            }
            RunEvent::Warning(text) => {
                self.end_line();
                styled_errln(style::WARN, &format!("  ! {text}"));
            }
            RunEvent::Input { id, status } => {
                self.end_line();
                errln!("  · queued input {id}: {status}");
            }
            RunEvent::CompactBoundary { trigger, pre_tokens, .. } => {
                self.end_line();
                errln!("  · Conversation compacted ({trigger}, {pre_tokens} tokens before)");
            }
            RunEvent::Transition { seq, reason, .. } => {
                self.end_line();
                // A rerun's divergence is journaled as a failed request, and told as what it is.
                let diverged = match reason {
                    reloop_core::Reason::Terminal(stop) => reloop_inspect::rerun::diverged_words(stop, *seq),
                    _ => None,
                };
                let line = match diverged {
                    Some(words) => format!("  · {words}"),
                    None => format!("  · {}: {}", reason.name(), reason.explain()),
                };
                if self.demo {
                    outln!("{line}");
                } else {
                    errln!("{line}");
                }
            }
            RunEvent::Finished(result) => {
                self.end_line();
                if let Some(error) = &result.terminal.error {
                    styled_line(style::ERROR, error);
                }
                errln!("");
                styled_errln(
                    if result.is_error { style::ERROR } else { style::DIM },
                    &format!(
                        "[{}] {} turn(s), {} model request(s), {} ms · session {}",
                        match reloop_inspect::rerun::diverged_code(&result.terminal.stop) {
                            Some(_) => "rerun_diverged",
                            None => result.terminal.reason().as_str(),
                        },
                        result.num_turns,
                        result.model_requests,
                        result.duration_ms,
                        result.session_id
                    ),
                );
            }
            _ => {}
        }
    }

    fn stream_json(&mut self, event: &RunEvent) {
        let line = match event {
            RunEvent::Started { session_id, model, cwd, tools, permission_mode, provider, .. } => {
                // Where the key came from; never the key.
                let api_key_source = if provider == "anthropic" { "ANTHROPIC_API_KEY" } else { "none" };
                self.session_id = session_id.clone();
                let mut init = json!({
                    "type": "system", "subtype": "init", "cwd": cwd, "session_id": session_id,
                    "tools": tools, "model": model, "permissionMode": permission_mode, "apiKeySource": api_key_source,
                });
                if !self.mcp_servers.is_empty() {
                    init["mcp_servers"] = serde_json::Value::Array(self.mcp_servers.clone());
                }
                init
            }
            RunEvent::Message(message) => message_line(message, &self.session_id),
            RunEvent::Retry(wait) => {
                let mut line = json!({
                    "type": "system", "subtype": "api_retry", "attempt": wait.attempt,
                    "max_retries": wait.max_retries, "retry_delay_ms": wait.delay_ms,
                    "error_status": wait.error_status, "error": wait.error, "session_id": self.session_id,
                });
                // reloop's own, only when the server's retry-after was capped.
                if let Some(asked) = wait.retry_after_capped_from_ms {
                    line["retry_after_capped_from_ms"] = json!(asked);
                }
                line
            }
            RunEvent::ModelFallback { trigger, from, to } => json!({
                "type": "system", "subtype": "model_fallback", "trigger": trigger,
                "original_model": from, "fallback_model": to,
                "content": format!("Switched to {to} due to high demand for {from}"),
                "session_id": self.session_id,
            }),
            RunEvent::Withdrawn => json!({"type": "system", "subtype": "tombstone", "session_id": self.session_id}),
            RunEvent::HookNotice { command, message } => json!({
                "type": "system", "subtype": "hook_error", "command": command, "content": message,
                "session_id": self.session_id,
            }),
            RunEvent::HookSystemMessage { hook_event, tool_use_id, message } => json!({
                "type": "system", "subtype": "informational", "content": format!("{} says: {message}", hook_event.as_str()),
                "level": "notice", "hook_event": hook_event.as_str(), "tool_use_id": tool_use_id,
                "session_id": self.session_id,
            }),
            RunEvent::Warning(text) => {
                json!({"type": "system", "subtype": "warning", "content": text, "session_id": self.session_id})
            }
            RunEvent::Input { id, status } => json!({
                "type": "system", "subtype": "queued_input", "id": id, "status": status,
                "session_id": self.session_id,
            }),
            RunEvent::CompactBoundary { trigger, pre_tokens, .. } => json!({
                "type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
                "compact_metadata": {"trigger": trigger, "pre_tokens": pre_tokens},
                "session_id": self.session_id,
            }),
            RunEvent::Finished(result) => {
                if let Some(error) = &result.terminal.error {
                    let message = Message::assistant(vec![ContentBlock::text(error.clone())]);
                    json(&message_line(&message, &self.session_id));
                }
                result_json(result)
            }
            _ => return,
        };
        json(&line);
    }
}

/// One JSON line on stdout; a value serde cannot write is a bug worth seeing, not a crash.
fn json(value: &Value) {
    if let Err(e) = crate::term::json_line(value, false) {
        errln!("reloop: cannot write a JSON line: {e}");
    }
}

fn message_line(message: &Message, session_id: &str) -> Value {
    let kind = match message.role {
        Role::Assistant => "assistant",
        Role::User => "user",
        Role::System => "system",
    };
    json!({"type": kind, "message": message, "parent_tool_use_id": null, "session_id": session_id})
}

/// The final result object, in Claude Code's shape.
pub fn result_json(result: &RunResult) -> Value {
    let subtype = match result.terminal.reason() {
        TerminalReason::Completed | TerminalReason::StopHookPrevented | TerminalReason::HookStopped => "success",
        TerminalReason::MaxTurns => "error_max_turns",
        TerminalReason::MaxBudgetUsd => "error_max_budget_usd",
        _ => "error_during_execution",
    };
    json!({
        "type": "result",
        "subtype": subtype,
        "is_error": result.is_error,
        "duration_ms": result.duration_ms,
        "num_turns": result.num_turns,
        "result": result.result,
        "session_id": result.session_id,
        "terminal_reason": result.terminal.reason().as_str(),
        "total_cost_usd": result.total_cost_usd,
        "modelUsage": result.model_usage,
        "usage": result.usage,
        "permission_denials": result.permission_denials,
    })
}
