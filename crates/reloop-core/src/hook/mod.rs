//! Hook outcomes and what they mean for the loop.
//!
//! Running a hook is I/O, so the driver does it and journals each [`HookRun`]. Everything after
//! that is pure: [`interpret`] reads one run the way Claude Code does, [`combine`] merges the
//! verdicts of the hooks of one event, and the text functions word the result exactly as Claude
//! Code words it, because those are the texts the model was trained to act on. Replaying a journal
//! therefore re-derives the same verdicts and the same messages from the same runs.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The hook events reloop runs. Settings may name others; they are kept but never fired.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, strum::IntoStaticStr)]
#[serde(rename_all = "PascalCase")]
#[non_exhaustive]
pub enum HookEventName {
    /// When the model asks for no tool and the turn would end.
    Stop,
    /// Before a tool call runs.
    PreToolUse,
    /// After a tool call ran.
    PostToolUse,
    /// After a tool call ran and failed (its result is an error): Claude Code runs these instead
    /// of PostToolUse for such a call (both recorded versions, `tests/print/recorded/*/hooks_events/all_log`).
    /// The driver fires them under [`crate::Flag::PostToolUseFailureHooks`]; before, a failed
    /// call ran its PostToolUse hooks.
    PostToolUseFailure,
    /// The permission rules would ask the user about a tool call, and the caller answered: the
    /// Agent SDK's `can_use_tool` over `--permission-prompt-tool stdio`. Its one run holds the
    /// answer verbatim as stdout, so a replay needs no caller. Settings-file hooks of this event
    /// are not run (it is not [`HookEventName::parse`]d).
    PermissionRequest,
    /// A new session starts (`source: "startup"`), before its first prompt: its
    /// `additionalContext` (or plain stdout) opens the system context ([`session::session_start_context`]).
    /// Fired by the driver under [`crate::Flag::SessionEventHooks`], as are the four below.
    SessionStart,
    /// A prompt is submitted, before it joins the conversation: its hooks may block it, stop the
    /// session, or add context ([`session::PromptVerdict`]).
    UserPromptSubmit,
    /// The session ends (`reason: "other"` when the print-mode run is over); its output is ignored.
    SessionEnd,
    /// A subagent (an `Agent` call) starts.
    SubagentStart,
    /// A subagent's loop would end: like Stop, for the child.
    SubagentStop,
    /// Before a compaction (`trigger`, `custom_instructions`): fired before a `/compact` typed
    /// between queries, whose block cancels it; not yet before an automatic compaction.
    PreCompact,
    /// Claude Code's notifications (permission prompts, idle). Never fired in print mode, as
    /// recorded; settings may name it.
    Notification,
}

impl HookEventName {
    /// The name as it appears in settings files and in `hook_event_name`.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// The event a settings key names, if reloop runs it.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "Stop" => Some(HookEventName::Stop),
            "PreToolUse" => Some(HookEventName::PreToolUse),
            "PostToolUse" => Some(HookEventName::PostToolUse),
            "PostToolUseFailure" => Some(HookEventName::PostToolUseFailure),
            "SessionStart" => Some(HookEventName::SessionStart),
            "UserPromptSubmit" => Some(HookEventName::UserPromptSubmit),
            "SessionEnd" => Some(HookEventName::SessionEnd),
            "SubagentStart" => Some(HookEventName::SubagentStart),
            "SubagentStop" => Some(HookEventName::SubagentStop),
            "PreCompact" => Some(HookEventName::PreCompact),
            "Notification" => Some(HookEventName::Notification),
            _ => None,
        }
    }
}

/// What running one hook command produced: the outside fact the driver journals.
///
/// `exit_code` is `None` when the command did not exit on its own (timeout, cancel, spawn
/// failure); the runner then says why in the last line of `stderr`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookRun {
    /// The hook's command line.
    pub command: String,
    /// Its exit code (`None` when it was killed).
    pub exit_code: Option<i32>,
    /// What it wrote to stdout.
    pub stdout: String,
    /// What it wrote to stderr.
    pub stderr: String,
    /// It ran past its timeout and was killed.
    pub timed_out: bool,
}

/// A permission decision a PreToolUse hook returned. Ordered by strength: deny beats ask beats
/// allow when several hooks decide, so one hook cannot wave through a call another refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Permission {
    /// Run the call without asking.
    Allow,
    /// Ask the user.
    Ask,
    /// Refuse the call.
    Deny,
}

/// What one hook run means for the loop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
#[non_exhaustive]
pub enum HookVerdict {
    /// Nothing to act on.
    Pass,
    /// Other exit codes, timeouts, unreadable JSON: shown to the user only; the loop goes on.
    NonBlockingError {
        /// What the user is shown.
        message: String,
    },
    /// Exit 2 (`message` is stderr) or JSON `{"decision":"block","reason":R}` (`message` is R).
    /// `from_json` decides the wording: exit-2 texts name the command, JSON reasons stand alone.
    Block {
        /// The feedback the model gets.
        message: String,
        /// It came from the JSON form (`decision: block`), not exit code 2.
        from_json: bool,
    },
    /// JSON `{"continue": false, "stopReason": S}`: the loop stops.
    Prevent {
        /// The hook's `stopReason`.
        stop_reason: Option<String>,
    },
    /// A PreToolUse `hookSpecificOutput` (or the legacy `{"decision":"approve"}`).
    PermissionDecision {
        /// Allow, deny or ask.
        decision: Permission,
        /// Why, as the hook says it.
        reason: Option<String>,
        /// The tool input to run with instead.
        updated_input: Option<Value>,
    },
}

/// Shown for a blocking exit with nothing on stderr, so the message never ends in a bare colon.
pub(crate) const NO_STDERR: &str = "No stderr output";
/// The reason of a JSON block that gave none.
pub(crate) const DEFAULT_BLOCK_REASON: &str = "Blocked by hook";

/// Reads one run as Claude Code does: JSON stdout counts only on exit 0, exit 2 blocks with
/// stderr, anything else is a non-blocking error.
pub fn interpret(event: HookEventName, run: &HookRun) -> HookVerdict {
    match run.exit_code {
        Some(0) => interpret_stdout(event, &run.stdout),
        Some(2) => HookVerdict::Block { message: or_default(&run.stderr, NO_STDERR), from_json: false },
        Some(_) => HookVerdict::NonBlockingError {
            message: format!("Failed with non-blocking status code: {}", or_default(&run.stderr, NO_STDERR)),
        },
        None => HookVerdict::NonBlockingError {
            message: or_default(&run.stderr, if run.timed_out { "Hook timed out" } else { "Hook did not exit" }),
        },
    }
}

fn or_default(text: &str, default: &str) -> String {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        default.to_string()
    } else {
        trimmed.to_string()
    }
}

/// The JSON a hook may print on exit 0. Unknown fields (`systemMessage`, `suppressOutput`, ...)
/// are ignored.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct HookOutput {
    #[serde(rename = "continue")]
    keep_going: Option<bool>,
    stop_reason: Option<String>,
    decision: Option<Decision>,
    reason: Option<String>,
    hook_specific_output: Option<SpecificOutput>,
}

#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum Decision {
    Approve,
    Block,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SpecificOutput {
    hook_event_name: Option<String>,
    permission_decision: Option<Permission>,
    permission_decision_reason: Option<String>,
    updated_input: Option<serde_json::Map<String, Value>>,
}

/// Plain-text stdout passes; stdout that starts like a JSON object must be valid hook output,
/// or the user hears about it (the hook author almost certainly meant it as a decision).
fn interpret_stdout(event: HookEventName, stdout: &str) -> HookVerdict {
    let text = stdout.trim();
    if !text.starts_with('{') {
        return HookVerdict::Pass;
    }
    let value: Value = match serde_json::from_str(text) {
        Ok(value) => value,
        Err(err) => return HookVerdict::NonBlockingError { message: format!("Hook JSON output is invalid: {err}") },
    };
    let output: HookOutput = match serde_json::from_value(value) {
        Ok(output) => output,
        Err(err) => {
            return HookVerdict::NonBlockingError { message: format!("Hook JSON output validation failed: {err}") }
        }
    };
    if output.keep_going == Some(false) {
        return HookVerdict::Prevent { stop_reason: output.stop_reason };
    }
    if let Some(specific) = output.hook_specific_output {
        if let Some(name) = specific.hook_event_name.as_deref().filter(|name| *name != event.as_str()) {
            return HookVerdict::NonBlockingError {
                message: format!("Hook returned incorrect event name: expected '{}' but got '{name}'", event.as_str()),
            };
        }
        if let (HookEventName::PreToolUse, Some(decision)) = (event, specific.permission_decision) {
            return HookVerdict::PermissionDecision {
                decision,
                reason: specific.permission_decision_reason,
                updated_input: specific.updated_input.map(Value::Object),
            };
        }
    }
    match (output.decision, event) {
        (Some(Decision::Block), _) => HookVerdict::Block {
            message: output.reason.unwrap_or_else(|| DEFAULT_BLOCK_REASON.to_string()),
            from_json: true,
        },
        (Some(Decision::Approve), HookEventName::PreToolUse) => {
            HookVerdict::PermissionDecision { decision: Permission::Allow, reason: output.reason, updated_input: None }
        }
        _ => HookVerdict::Pass,
    }
}

mod combine;
pub mod session;

pub use combine::*;

#[cfg(test)]
mod tests;
