//! What several hooks' verdicts add up to, and the texts the model and the user see.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{HookEventName, HookVerdict, Permission};

/// A hook that ended the loop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prevented {
    /// The hook that said it.
    pub command: String,
    /// Its `stopReason`.
    pub stop_reason: Option<String>,
}

/// A hook that blocked: the stop, the tool call, or (PostToolUse) the tool result as it stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Blocked {
    /// The hook that blocked.
    pub command: String,
    /// Its feedback for the model.
    pub message: String,
    /// It came from the JSON form, not exit code 2.
    pub from_json: bool,
}

impl Blocked {
    /// One feedback line: `[{command}]: {stderr}` for exit 2, the bare reason for JSON.
    pub fn line(&self) -> String {
        if self.from_json {
            self.message.clone()
        } else {
            format!("[{}]: {}", self.command, self.message)
        }
    }
}

/// The permission decision that won among a PreToolUse event's hooks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PermissionOutcome {
    /// The hook that decided.
    pub command: String,
    /// Its decision.
    pub decision: Permission,
    /// Its reason.
    pub reason: Option<String>,
}

/// A non-blocking error, shown to the user and never to the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserNotice {
    /// The hook that spoke.
    pub command: String,
    /// What the user is shown.
    pub message: String,
}

/// The verdicts of one event's hooks, merged. The driver acts on the first of these that is set:
/// `prevent` (stop the loop), `blocks` (feed them back), `permission` (with `updated_input`).
/// `user_messages` are shown whatever else happened.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Combined {
    /// The first `continue: false`, which ends the run.
    pub prevent: Option<Prevented>,
    /// Every block, in hook order.
    pub blocks: Vec<Blocked>,
    /// The strongest permission decision (deny over ask over allow).
    pub permission: Option<PermissionOutcome>,
    /// The last replacement tool input.
    pub updated_input: Option<Value>,
    /// Messages for the user.
    pub user_messages: Vec<UserNotice>,
}

/// Combines the verdicts of the hooks of one event (they run in parallel; `verdicts` is in hook
/// order, so the result does not depend on which finished first):
///
/// * Prevent wins over everything: the first preventing hook's stop reason is kept, and blocks,
///   permission and updated input are dropped, because a stopped loop acts on none of them.
/// * Block messages are collected in hook order.
/// * Permission: deny beats ask beats allow; among equals the first hook's reason is kept.
///   `updated_input` is the first one given by a hook with the winning decision, and never for deny.
/// * Non-blocking errors become `user_messages`, in hook order, kept even when prevented.
pub fn combine(verdicts: &[(String, HookVerdict)]) -> Combined {
    let mut combined = Combined::default();
    for (command, verdict) in verdicts {
        match verdict {
            HookVerdict::Pass => {}
            HookVerdict::NonBlockingError { message } => {
                combined.user_messages.push(UserNotice { command: command.clone(), message: message.clone() });
            }
            HookVerdict::Block { message, from_json } => combined.blocks.push(Blocked {
                command: command.clone(),
                message: message.clone(),
                from_json: *from_json,
            }),
            HookVerdict::Prevent { stop_reason } => {
                if combined.prevent.is_none() {
                    combined.prevent = Some(Prevented { command: command.clone(), stop_reason: stop_reason.clone() });
                }
            }
            HookVerdict::PermissionDecision { decision, reason, updated_input } => {
                let stronger = match &combined.permission {
                    None => true,
                    Some(won) => *decision > won.decision,
                };
                if stronger {
                    combined.permission = Some(PermissionOutcome {
                        command: command.clone(),
                        decision: *decision,
                        reason: reason.clone(),
                    });
                    combined.updated_input = updated_input.clone();
                } else if combined.updated_input.is_none()
                    && combined.permission.as_ref().is_some_and(|won| won.decision == *decision)
                {
                    combined.updated_input = updated_input.clone();
                }
            }
        }
    }
    if combined.permission.as_ref().is_some_and(|won| won.decision == Permission::Deny) {
        combined.updated_input = None;
    }
    if combined.prevent.is_some() {
        combined.blocks.clear();
        combined.permission = None;
        combined.updated_input = None;
    }
    combined
}

/// What the runs of one event's hooks add up to: each read by [`interpret`](super::interpret),
/// then merged by [`combine`] in hook order. The one reading of journaled runs, so the decision
/// a live run acted on and the stream a replay shows cannot drift apart.
pub fn outcome(event: HookEventName, runs: &[super::HookRun]) -> Combined {
    let verdicts: Vec<_> = runs.iter().map(|run| (run.command.clone(), super::interpret(event, run))).collect();
    combine(&verdicts)
}

/// The user message appended when Stop hooks block: one `Stop hook feedback:` header, then one
/// line per blocking hook in hook order (see [`Blocked::line`]). With a single hook this is
/// exactly Claude Code's `Stop hook feedback:\n[{command}]: {stderr}` / `Stop hook feedback:\n{R}`.
pub fn stop_hook_feedback(blocks: &[Blocked]) -> String {
    let mut text = String::from("Stop hook feedback:");
    for block in blocks {
        text.push('\n');
        text.push_str(&block.line());
    }
    text
}

/// `blocks` with each exit 2's feedback as the hook wrote its stderr, trailing newline included,
/// as Claude Code feeds it back (a Stop hook's, and a PreToolUse hook's under flag 33).
pub fn with_raw_stderr(blocks: &[Blocked], runs: &[super::HookRun]) -> Vec<Blocked> {
    blocks
        .iter()
        .map(|block| {
            let raw =
                runs.iter().find(|r| r.command == block.command && !block.from_json && !r.stderr.trim().is_empty());
            let mut block = block.clone();
            if let Some(run) = raw {
                block.message = run.stderr.clone();
            }
            block
        })
        .collect()
}

/// The error tool result when a PreToolUse hook exits 2.
pub fn pre_tool_use_error(tool: &str, command: &str, stderr: &str) -> String {
    format!("PreToolUse:{tool} hook error: [{command}]: {stderr}")
}

/// The error tool result when PreToolUse hooks block: one line per hook, in hook order; exit-2
/// lines as [`pre_tool_use_error`], JSON reasons as given.
pub fn pre_tool_use_feedback(tool: &str, blocks: &[Blocked]) -> String {
    tool_feedback(HookEventName::PreToolUse, tool, blocks)
}

/// The message for the model next to the tool result when PostToolUse hooks block: one line per
/// hook, `PostToolUse:{tool} hook error: [{command}]: {stderr}` for exit 2, the reason for JSON.
pub(crate) fn post_tool_use_feedback(tool: &str, blocks: &[Blocked]) -> String {
    tool_feedback(HookEventName::PostToolUse, tool, blocks)
}

fn tool_feedback(event: HookEventName, tool: &str, blocks: &[Blocked]) -> String {
    let lines: Vec<String> = blocks
        .iter()
        .map(|block| {
            if block.from_json {
                block.message.clone()
            } else {
                format!("{}:{tool} hook error: [{}]: {}", event.as_str(), block.command, block.message)
            }
        })
        .collect();
    lines.join("\n")
}

/// The error tool result when a PreToolUse hook denies the call: its reason, or a sentence naming
/// the tool when it gave none, so the model always learns why the call did not run.
pub fn pre_tool_use_denied(tool: &str, reason: Option<&str>) -> String {
    match reason.map(str::trim).filter(|reason| !reason.is_empty()) {
        Some(reason) => reason.to_string(),
        None => format!("PreToolUse:{tool} hook denied this tool call"),
    }
}

/// Claude Code's stop-hook cap: after this many consecutive blocks the turn ends anyway.
#[cfg(test)]
pub(crate) const DEFAULT_STOP_HOOK_CAP: u32 = 8;

/// The warning shown when stop hooks hit the cap and the turn is ended regardless.
pub(crate) fn stop_hook_cap_warning(cap: u32) -> String {
    format!("A hook blocked the turn from ending {cap} consecutive times — overriding and ending turn")
}
