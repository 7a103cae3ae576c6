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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
#[non_exhaustive]
pub enum HookEventName {
    Stop,
    PreToolUse,
    PostToolUse,
}

impl HookEventName {
    /// The name as it appears in settings files and in `hook_event_name`.
    pub fn as_str(self) -> &'static str {
        match self {
            HookEventName::Stop => "Stop",
            HookEventName::PreToolUse => "PreToolUse",
            HookEventName::PostToolUse => "PostToolUse",
        }
    }

    /// The event a settings key names, if reloop runs it.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "Stop" => Some(HookEventName::Stop),
            "PreToolUse" => Some(HookEventName::PreToolUse),
            "PostToolUse" => Some(HookEventName::PostToolUse),
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
    pub command: String,
    pub exit_code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub timed_out: bool,
}

/// A permission decision a PreToolUse hook returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Permission {
    Allow,
    Deny,
    Ask,
}

impl Permission {
    /// Deny beats ask beats allow when several hooks decide, so one hook cannot wave through a
    /// call another refused.
    fn strength(self) -> u8 {
        match self {
            Permission::Allow => 0,
            Permission::Ask => 1,
            Permission::Deny => 2,
        }
    }
}

/// What one hook run means for the loop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
#[non_exhaustive]
pub enum HookVerdict {
    Pass,
    /// Other exit codes, timeouts, unreadable JSON: shown to the user only; the loop goes on.
    NonBlockingError {
        message: String,
    },
    /// Exit 2 (`message` is stderr) or JSON `{"decision":"block","reason":R}` (`message` is R).
    /// `from_json` decides the wording: exit-2 texts name the command, JSON reasons stand alone.
    Block {
        message: String,
        from_json: bool,
    },
    /// JSON `{"continue": false, "stopReason": S}`: the loop stops.
    Prevent {
        stop_reason: Option<String>,
    },
    /// A PreToolUse `hookSpecificOutput` (or the legacy `{"decision":"approve"}`).
    PermissionDecision {
        decision: Permission,
        reason: Option<String>,
        updated_input: Option<Value>,
    },
}

/// Shown for a blocking exit with nothing on stderr, so the message never ends in a bare colon.
pub const NO_STDERR: &str = "No stderr output";
/// The reason of a JSON block that gave none.
pub const DEFAULT_BLOCK_REASON: &str = "Blocked by hook";

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

/// A hook that ended the loop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prevented {
    pub command: String,
    pub stop_reason: Option<String>,
}

/// A hook that blocked: the stop, the tool call, or (PostToolUse) the tool result as it stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Blocked {
    pub command: String,
    pub message: String,
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
    pub command: String,
    pub decision: Permission,
    pub reason: Option<String>,
}

/// A non-blocking error, shown to the user and never to the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserNotice {
    pub command: String,
    pub message: String,
}

/// The verdicts of one event's hooks, merged. The driver acts on the first of these that is set:
/// `prevent` (stop the loop), `blocks` (feed them back), `permission` (with `updated_input`).
/// `user_messages` are shown whatever else happened.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Combined {
    pub prevent: Option<Prevented>,
    pub blocks: Vec<Blocked>,
    pub permission: Option<PermissionOutcome>,
    pub updated_input: Option<Value>,
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
                    Some(won) => decision.strength() > won.decision.strength(),
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
pub fn post_tool_use_feedback(tool: &str, blocks: &[Blocked]) -> String {
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
pub const DEFAULT_STOP_HOOK_CAP: u32 = 8;

/// The warning shown when stop hooks hit the cap and the turn is ended regardless.
pub fn stop_hook_cap_warning(cap: u32) -> String {
    format!("A hook blocked the turn from ending {cap} consecutive times — overriding and ending turn")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(exit_code: Option<i32>, stdout: &str, stderr: &str) -> HookRun {
        HookRun {
            command: "./check.sh".into(),
            exit_code,
            stdout: stdout.into(),
            stderr: stderr.into(),
            timed_out: false,
        }
    }

    fn stop(exit_code: Option<i32>, stdout: &str, stderr: &str) -> HookVerdict {
        interpret(HookEventName::Stop, &run(exit_code, stdout, stderr))
    }

    fn pre(stdout: &str) -> HookVerdict {
        interpret(HookEventName::PreToolUse, &run(Some(0), stdout, ""))
    }

    fn block(message: &str, from_json: bool) -> HookVerdict {
        HookVerdict::Block { message: message.into(), from_json }
    }

    fn blocked(command: &str, message: &str, from_json: bool) -> Blocked {
        Blocked { command: command.into(), message: message.into(), from_json }
    }

    fn non_blocking(message: &str) -> HookVerdict {
        HookVerdict::NonBlockingError { message: message.into() }
    }

    fn permission(decision: Permission, reason: Option<&str>, updated_input: Option<Value>) -> HookVerdict {
        HookVerdict::PermissionDecision { decision, reason: reason.map(Into::into), updated_input }
    }

    fn hooks(verdicts: Vec<HookVerdict>) -> Vec<(String, HookVerdict)> {
        verdicts.into_iter().enumerate().map(|(i, v)| (format!("hook{i}"), v)).collect()
    }

    #[test]
    fn event_names_are_the_settings_keys() {
        for event in [HookEventName::Stop, HookEventName::PreToolUse, HookEventName::PostToolUse] {
            assert_eq!(serde_json::to_value(event).unwrap(), json!(event.as_str()));
            assert_eq!(HookEventName::parse(event.as_str()), Some(event));
        }
        assert_eq!(HookEventName::parse("UserPromptSubmit"), None);
    }

    #[test]
    fn exit_0_with_plain_or_no_stdout_passes() {
        assert_eq!(stop(Some(0), "", ""), HookVerdict::Pass);
        assert_eq!(stop(Some(0), "all good\n", "noise"), HookVerdict::Pass);
        assert_eq!(stop(Some(0), "[1, 2]", ""), HookVerdict::Pass);
    }

    #[test]
    fn exit_2_blocks_with_trimmed_stderr_and_ignores_stdout() {
        assert_eq!(stop(Some(2), r#"{"continue": false}"#, "tests failing\n"), block("tests failing", false));
        assert_eq!(stop(Some(2), "", "  \n"), block("No stderr output", false));
    }

    #[test]
    fn other_exits_are_non_blocking_errors_even_with_json_stdout() {
        assert_eq!(
            stop(Some(1), "", "lint crashed\n"),
            non_blocking("Failed with non-blocking status code: lint crashed")
        );
        assert_eq!(
            stop(Some(127), r#"{"decision":"block","reason":"x"}"#, ""),
            non_blocking("Failed with non-blocking status code: No stderr output")
        );
    }

    #[test]
    fn a_run_that_did_not_exit_reports_the_runners_note() {
        let mut timed_out = run(None, "partial", "Hook timed out after 1s\n");
        timed_out.timed_out = true;
        assert_eq!(interpret(HookEventName::Stop, &timed_out), non_blocking("Hook timed out after 1s"));
        timed_out.stderr.clear();
        assert_eq!(interpret(HookEventName::Stop, &timed_out), non_blocking("Hook timed out"));
        assert_eq!(stop(None, "", ""), non_blocking("Hook did not exit"));
    }

    #[test]
    fn json_block_uses_the_reason_or_a_default() {
        assert_eq!(stop(Some(0), r#"{"decision":"block","reason":"tests failing"}"#, ""), block("tests failing", true));
        assert_eq!(stop(Some(0), r#" {"decision":"block"} "#, ""), block("Blocked by hook", true));
        let post = interpret(HookEventName::PostToolUse, &run(Some(0), r#"{"decision":"block","reason":"r"}"#, ""));
        assert_eq!(post, block("r", true));
    }

    #[test]
    fn continue_false_prevents_and_beats_a_block_in_the_same_output() {
        assert_eq!(
            stop(Some(0), r#"{"continue":false,"stopReason":"done for today","decision":"block"}"#, ""),
            HookVerdict::Prevent { stop_reason: Some("done for today".into()) }
        );
        assert_eq!(pre(r#"{"continue":false}"#), HookVerdict::Prevent { stop_reason: None });
        assert_eq!(stop(Some(0), r#"{"continue":true,"systemMessage":"hi"}"#, ""), HookVerdict::Pass);
    }

    #[test]
    fn pre_tool_use_hook_specific_output_is_a_permission_decision() {
        let out = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny",
            "permissionDecisionReason":"no rm","updatedInput":{"command":"ls"}}}"#;
        assert_eq!(pre(out), permission(Permission::Deny, Some("no rm"), Some(json!({"command": "ls"}))));
        let allow = r#"{"hookSpecificOutput":{"permissionDecision":"allow"},"decision":"block"}"#;
        assert_eq!(pre(allow), permission(Permission::Allow, None, None));
        assert_eq!(
            pre(r#"{"hookSpecificOutput":{"permissionDecision":"ask"}}"#),
            permission(Permission::Ask, None, None)
        );
    }

    #[test]
    fn legacy_approve_allows_a_tool_and_permissions_mean_nothing_elsewhere() {
        assert_eq!(pre(r#"{"decision":"approve","reason":"safe"}"#), permission(Permission::Allow, Some("safe"), None));
        assert_eq!(stop(Some(0), r#"{"decision":"approve"}"#, ""), HookVerdict::Pass);
        let out = r#"{"hookSpecificOutput":{"hookEventName":"PostToolUse","permissionDecision":"deny"}}"#;
        assert_eq!(interpret(HookEventName::PostToolUse, &run(Some(0), out, "")), HookVerdict::Pass);
    }

    #[test]
    fn a_wrong_event_name_in_hook_specific_output_is_reported() {
        let out = r#"{"hookSpecificOutput":{"hookEventName":"Stop","permissionDecision":"deny"}}"#;
        assert_eq!(pre(out), non_blocking("Hook returned incorrect event name: expected 'PreToolUse' but got 'Stop'"));
    }

    #[test]
    fn json_that_cannot_be_read_is_a_non_blocking_error() {
        let HookVerdict::NonBlockingError { message } = pre(r#"{"decision": "#) else { panic!("expected an error") };
        assert!(message.starts_with("Hook JSON output is invalid: "), "{message}");
        for bad in [
            r#"{"continue":"no"}"#,
            r#"{"decision":"maybe"}"#,
            r#"{"hookSpecificOutput":{"permissionDecision":"yes"}}"#,
        ] {
            let HookVerdict::NonBlockingError { message } = pre(bad) else { panic!("expected an error for {bad}") };
            assert!(message.starts_with("Hook JSON output validation failed: "), "{bad}: {message}");
        }
    }

    #[test]
    fn verdicts_serialize_with_a_verdict_tag() {
        let verdict = permission(Permission::Deny, Some("r"), None);
        let value = serde_json::to_value(&verdict).unwrap();
        assert_eq!(
            value,
            json!({"verdict": "permission_decision", "decision": "deny", "reason": "r", "updated_input": null})
        );
        assert_eq!(serde_json::from_value::<HookVerdict>(value).unwrap(), verdict);
        assert_eq!(serde_json::to_value(HookVerdict::Pass).unwrap(), json!({"verdict": "pass"}));
    }

    #[test]
    fn combine_of_nothing_or_passes_is_empty() {
        assert_eq!(combine(&[]), Combined::default());
        assert_eq!(combine(&hooks(vec![HookVerdict::Pass, HookVerdict::Pass])), Combined::default());
    }

    #[test]
    fn combine_collects_blocks_and_notices_in_hook_order() {
        let combined =
            combine(&hooks(vec![block("b0", false), non_blocking("n1"), block("b2", true), non_blocking("n3")]));
        assert_eq!(combined.blocks, vec![blocked("hook0", "b0", false), blocked("hook2", "b2", true)]);
        let notices: Vec<_> = combined.user_messages.iter().map(|n| (n.command.as_str(), n.message.as_str())).collect();
        assert_eq!(notices, vec![("hook1", "n1"), ("hook3", "n3")]);
        assert_eq!(combined.prevent, None);
    }

    #[test]
    fn combine_prevent_wins_over_blocks_and_permissions_but_keeps_notices() {
        let combined = combine(&hooks(vec![
            block("b", false),
            HookVerdict::Prevent { stop_reason: Some("first".into()) },
            permission(Permission::Allow, None, Some(json!({}))),
            HookVerdict::Prevent { stop_reason: Some("second".into()) },
            non_blocking("n"),
        ]));
        assert_eq!(combined.prevent, Some(Prevented { command: "hook1".into(), stop_reason: Some("first".into()) }));
        assert!(combined.blocks.is_empty());
        assert_eq!(combined.permission, None);
        assert_eq!(combined.updated_input, None);
        assert_eq!(combined.user_messages.len(), 1);
    }

    #[test]
    fn combine_permission_deny_beats_ask_beats_allow() {
        let combined = combine(&hooks(vec![
            permission(Permission::Allow, Some("ok"), Some(json!({"a": 1}))),
            permission(Permission::Ask, Some("check"), None),
            permission(Permission::Ask, Some("later"), Some(json!({"b": 2}))),
        ]));
        let won = combined.permission.unwrap();
        assert_eq!(
            (won.command.as_str(), won.decision, won.reason.as_deref()),
            ("hook1", Permission::Ask, Some("check"))
        );
        assert_eq!(combined.updated_input, Some(json!({"b": 2})), "from a hook with the winning decision");

        let combined = combine(&hooks(vec![
            permission(Permission::Deny, Some("no"), Some(json!({"c": 3}))),
            permission(Permission::Allow, None, Some(json!({"a": 1}))),
        ]));
        assert_eq!(combined.permission.map(|p| p.decision), Some(Permission::Deny));
        assert_eq!(combined.updated_input, None, "a denied call has no input to rewrite");
    }

    #[test]
    fn combine_keeps_the_first_updated_input_among_equal_decisions() {
        let combined = combine(&hooks(vec![
            permission(Permission::Allow, None, Some(json!({"first": true}))),
            permission(Permission::Allow, None, Some(json!({"second": true}))),
        ]));
        assert_eq!(combined.updated_input, Some(json!({"first": true})));
        assert_eq!(combined.permission.map(|p| p.command), Some("hook0".to_string()));
    }

    #[test]
    fn stop_hook_feedback_texts() {
        assert_eq!(
            stop_hook_feedback(&[blocked("./check.sh", "tests failing", false)]),
            "Stop hook feedback:\n[./check.sh]: tests failing"
        );
        assert_eq!(
            stop_hook_feedback(&[blocked("./check.sh", "tests failing", true)]),
            "Stop hook feedback:\ntests failing"
        );
        assert_eq!(
            stop_hook_feedback(&[
                blocked("a.sh", "one", false),
                blocked("b.sh", "two", true),
                blocked("c.sh", "three", false)
            ]),
            "Stop hook feedback:\n[a.sh]: one\ntwo\n[c.sh]: three"
        );
    }

    #[test]
    fn pre_tool_use_texts() {
        assert_eq!(
            pre_tool_use_error("Bash", "guard.sh", "no rm -rf"),
            "PreToolUse:Bash hook error: [guard.sh]: no rm -rf"
        );
        assert_eq!(
            pre_tool_use_feedback("Bash", &[blocked("guard.sh", "no rm -rf", false), blocked("j.sh", "reason", true)]),
            "PreToolUse:Bash hook error: [guard.sh]: no rm -rf\nreason"
        );
        assert_eq!(pre_tool_use_denied("Bash", Some("no rm")), "no rm");
        assert_eq!(pre_tool_use_denied("Bash", Some(" ")), "PreToolUse:Bash hook denied this tool call");
        assert_eq!(pre_tool_use_denied("Edit", None), "PreToolUse:Edit hook denied this tool call");
    }

    #[test]
    fn post_tool_use_texts() {
        assert_eq!(
            post_tool_use_feedback("Edit", &[blocked("fmt.sh", "unformatted", false)]),
            "PostToolUse:Edit hook error: [fmt.sh]: unformatted"
        );
        assert_eq!(post_tool_use_feedback("Edit", &[blocked("fmt.sh", "run cargo fmt", true)]), "run cargo fmt");
    }

    #[test]
    fn stop_hook_cap_warning_text() {
        assert_eq!(
            stop_hook_cap_warning(DEFAULT_STOP_HOOK_CAP),
            "A hook blocked the turn from ending 8 consecutive times — overriding and ending turn"
        );
        assert_eq!(
            stop_hook_cap_warning(3),
            "A hook blocked the turn from ending 3 consecutive times — overriding and ending turn"
        );
    }
}
