//! The hook verdicts, case by case.

use super::*;
use serde_json::json;

fn run(exit_code: Option<i32>, stdout: &str, stderr: &str) -> HookRun {
    HookRun { command: "./check.sh".into(), exit_code, stdout: stdout.into(), stderr: stderr.into(), timed_out: false }
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
    use HookEventName::*;
    let events = [
        Stop,
        PreToolUse,
        PostToolUse,
        PostToolUseFailure,
        SessionStart,
        UserPromptSubmit,
        SessionEnd,
        SubagentStart,
        SubagentStop,
        PreCompact,
        Notification,
    ];
    for event in events {
        assert_eq!(serde_json::to_value(event).unwrap(), json!(event.as_str()));
        assert_eq!(HookEventName::parse(event.as_str()), Some(event));
    }
    // The SDK's permission answer is journaled under this name; settings' hooks of it do not run.
    assert_eq!(HookEventName::parse("PermissionRequest"), None);
    assert_eq!(HookEventName::parse("Setup"), None);
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
    assert_eq!(stop(Some(1), "", "lint crashed\n"), non_blocking("Failed with non-blocking status code: lint crashed"));
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
    assert_eq!(pre(r#"{"hookSpecificOutput":{"permissionDecision":"ask"}}"#), permission(Permission::Ask, None, None));
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
    for bad in
        [r#"{"continue":"no"}"#, r#"{"decision":"maybe"}"#, r#"{"hookSpecificOutput":{"permissionDecision":"yes"}}"#]
    {
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
    let combined = combine(&hooks(vec![block("b0", false), non_blocking("n1"), block("b2", true), non_blocking("n3")]));
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
    assert_eq!((won.command.as_str(), won.decision, won.reason.as_deref()), ("hook1", Permission::Ask, Some("check")));
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
