//! Every continue and terminal reason of the loop, end to end through the CLI with cassettes and
//! real hook scripts: the exact texts Claude Code sends, the `why` explanation, an identical replay.

mod common;

use common::{json_lines, response, stderr, text, user_texts, Workspace};
use serde_json::json;

fn snapshot(name: &str, why: &str) {
    common::settings().bind(|| insta::assert_snapshot!(name, why));
}

const RECOVERY: &str = "Output token limit hit. Resume directly — no apology, no recap of what you were doing. Pick up mid-thought if that is where the cut happened. Break remaining work into smaller pieces.";

#[test]
fn max_output_tokens_recovery_three_times_then_the_error() {
    let ws = Workspace::seed();
    let cut = |i: u32| response(&format!("msg_{i}"), text(&format!("part {i}")), "max_tokens", 32000);
    // reloop's own rules (the texts below); the Claude Code profiles are tests/conformance.rs's.
    let out = ws.run_responses("write a long essay", vec![cut(1), cut(2), cut(3), cut(4)], &["--compat", "reloop"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let lines = json_lines(&out);
    assert_eq!(user_texts(&lines), vec![RECOVERY; 3]);
    let result = lines.last().unwrap();
    assert_eq!(result["terminal_reason"], "model_error");
    assert_eq!(
        result["result"],
        "API Error: Claude's response exceeded the 32000 output token maximum. To configure this behavior, pass --max-output-tokens."
    );
    let why = ws.why();
    assert!(
        why.contains(
            "max_output_tokens_recovery: output cut at 32000 tokens; asked the model to resume (attempt 2 of 3)"
        ),
        "{why}"
    );
    snapshot("reason_max_output_tokens_recovery", &why);
    assert!(ws.replays_identical());
}

#[test]
fn max_output_tokens_escalate_repeats_the_request_with_64000() {
    let ws = Workspace::seed();
    let out = ws.run_responses(
        "write",
        vec![response("msg_1", text("half"), "max_tokens", 32000), response("msg_2", text("whole"), "end_turn", 50000)],
        &["--escalate-max-tokens", "--model", "claude-sonnet-4-6"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = json_lines(&out);
    assert!(user_texts(&lines).is_empty(), "escalation appends nothing");
    assert_eq!(lines.iter().filter(|l| l["subtype"] == "tombstone").count(), 1, "the cut text is withdrawn");
    let steps: serde_json::Value =
        serde_json::from_str(&common::stdout(&ws.reloop(&["show", "last", "--steps", "--json"]))).unwrap();
    let limits: Vec<u64> = steps
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["effects"].as_array().unwrap().clone())
        .filter(|e| e["effect"] == "call_model")
        .map(|e| e["max_tokens"].as_u64().unwrap())
        .collect();
    assert_eq!(limits, vec![32000, 64000]);
    snapshot("reason_max_output_tokens_escalate", &ws.why());
    assert!(ws.replays_identical());
}

#[test]
fn malformed_tool_call_is_retried_once_then_fails() {
    let ws = Workspace::seed();
    let announced = |i: u32| response(&format!("msg_{i}"), text("Let me check."), "tool_use", 10);
    let out = ws.run_responses("check", vec![announced(1), announced(2)], &["--compat", "reloop"]);
    assert_eq!(out.status.code(), Some(1));
    let lines = json_lines(&out);
    assert_eq!(user_texts(&lines), vec!["Your tool call was malformed and could not be parsed. Please retry."]);
    assert_eq!(lines.last().unwrap()["result"], "The model's tool call could not be parsed (retry also failed).");
    assert_eq!(lines.last().unwrap()["terminal_reason"], "model_error");
    snapshot("reason_malformed_tool_call_retry", &ws.why());
    assert!(ws.replays_identical());
}

#[test]
fn stop_hook_blocking_sends_the_feedback_and_the_loop_goes_on() {
    let ws = Workspace::seed();
    let settings = ws.hook(
        "Stop",
        "",
        "check.sh",
        "if [ -e .passed ]; then exit 0; fi\ntouch .passed\necho 'tests failing' >&2\nexit 2",
    );
    let out = ws.run_responses(
        "fix the tests",
        vec![response("msg_1", text("Done."), "end_turn", 5), response("msg_2", text("Fixed now."), "end_turn", 5)],
        &["--settings", settings.to_str().unwrap(), "--compat", "reloop"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = json_lines(&out);
    assert_eq!(user_texts(&lines), vec!["Stop hook feedback:\n[./check.sh]: tests failing"]);
    let why = ws.why();
    assert!(why.contains("stop_hook_blocking: [./check.sh]: tests failing (block 1 of 8)"), "{why}");
    snapshot("reason_stop_hook_blocking", &why);
    assert!(ws.replays_identical());
}

#[test]
fn stop_hooks_blocking_forever_are_overridden_at_the_cap() {
    let ws = Workspace::seed();
    let settings = ws.hook("Stop", "", "never.sh", "echo 'not yet' >&2\nexit 2");
    let responses = (1..=4).map(|i| response(&format!("msg_{i}"), text("Done."), "end_turn", 5)).collect();
    let out = ws.run_responses(
        "finish",
        responses,
        &["--settings", settings.to_str().unwrap(), "--stop-hook-block-cap", "3"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = json_lines(&out);
    let warning = lines.iter().find(|l| l["subtype"] == "warning").unwrap();
    assert_eq!(
        warning["content"],
        "A hook blocked the turn from ending 3 consecutive times — overriding and ending turn"
    );
    assert_eq!(lines.last().unwrap()["terminal_reason"], "completed");
    let why = ws.why();
    assert!(why.contains("stop: completed: A hook blocked the turn from ending 3 consecutive times"), "{why}");
    snapshot("reason_stop_hook_cap", &why);
    assert!(ws.replays_identical());
}

#[test]
fn a_stop_hook_that_says_continue_false_ends_the_run() {
    let ws = Workspace::seed();
    let settings = ws.hook("Stop", "", "enough.sh", r#"echo '{"continue": false, "stopReason": "done for today"}'"#);
    let out = ws.run_responses(
        "go",
        vec![response("msg_1", text("Done."), "end_turn", 5)],
        &["--settings", settings.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json_lines(&out).last().unwrap()["terminal_reason"], "stop_hook_prevented");
    let why = ws.why();
    assert!(why.contains("stop: stop_hook_prevented: [./enough.sh] said continue: false: done for today"), "{why}");
    snapshot("reason_stop_hook_prevented", &why);
    assert!(ws.replays_identical());
}

fn read_call(id: &str, ws: &Workspace) -> serde_json::Value {
    let path = ws.cwd().join("src/auth/login.ts");
    json!([{"type": "tool_use", "id": id, "name": "Read", "input": {"file_path": path}}])
}

#[test]
fn a_pre_tool_use_hook_that_exits_2_keeps_the_tool_from_running() {
    let ws = Workspace::seed();
    let settings =
        ws.hook("PreToolUse", "Read", "guard.sh", "cat > pre-input.json\necho 'no reading today' >&2\nexit 2");
    let out = ws.run_responses(
        "read it",
        vec![
            response("msg_1", read_call("toolu_1", &ws), "tool_use", 5),
            response("msg_2", text("OK."), "end_turn", 5),
        ],
        &["--settings", settings.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = json_lines(&out);
    // The stderr as the hook wrote it, trailing newline included, as Claude Code keeps it (the
    // default profile's, flag 33; tests/print/recorded/*/tool_results/hook_exit2).
    assert_eq!(user_texts(&lines), vec!["PreToolUse:Read hook error: [./guard.sh]: no reading today\n"]);
    let input: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(ws.cwd().join("pre-input.json")).unwrap()).unwrap();
    assert_eq!(input["hook_event_name"], "PreToolUse");
    assert_eq!(input["tool_name"], "Read");
    assert_eq!(input["tool_use_id"], "toolu_1");
    assert_eq!(input["permission_mode"], "default");
    assert!(input["session_id"].is_string() && input["transcript_path"].is_string());
    assert!(ws.replays_identical());
}

#[test]
fn a_pre_tool_use_deny_decision_is_a_permission_denial() {
    let ws = Workspace::seed();
    let settings = ws.hook(
        "PreToolUse",
        "",
        "deny.sh",
        r#"echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "secrets live there"}}'"#,
    );
    let out = ws.run_responses(
        "read it",
        vec![
            response("msg_1", read_call("toolu_1", &ws), "tool_use", 5),
            response("msg_2", text("OK."), "end_turn", 5),
        ],
        &["--settings", settings.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = json_lines(&out);
    assert!(user_texts(&lines)[0].contains("secrets live there"), "{:?}", user_texts(&lines));
    let denials = &lines.last().unwrap()["permission_denials"];
    assert_eq!(denials[0]["tool_name"], "Read");
    assert_eq!(denials[0]["tool_use_id"], "toolu_1");
    assert!(ws.replays_identical());
}

#[test]
fn post_tool_use_feedback_goes_next_to_the_result_and_continue_false_stops() {
    let ws = Workspace::seed();
    let settings = ws.hook("PostToolUse", "Read", "lint.sh", "echo 'file has lint errors' >&2\nexit 2");
    let out = ws.run_responses(
        "read it",
        vec![
            response("msg_1", read_call("toolu_1", &ws), "tool_use", 5),
            response("msg_2", text("OK."), "end_turn", 5),
        ],
        &["--settings", settings.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let texts = user_texts(&json_lines(&out));
    assert!(texts[0].starts_with("1\texport interface Credentials {"));
    assert_eq!(texts[1], "PostToolUse:Read hook error: [./lint.sh]: file has lint errors");
    assert!(ws.replays_identical());

    let ws = Workspace::seed();
    let settings = ws.hook("PostToolUse", "", "halt.sh", r#"echo '{"continue": false, "stopReason": "budget spent"}'"#);
    let out = ws.run_responses(
        "read it",
        vec![
            response("msg_1", read_call("toolu_1", &ws), "tool_use", 5),
            response("msg_2", text("OK."), "end_turn", 5),
        ],
        &["--settings", settings.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = json_lines(&out);
    assert_eq!(lines.last().unwrap()["terminal_reason"], "hook_stopped");
    assert_eq!(
        lines.iter().filter(|l| l["type"] == "assistant").count(),
        1,
        "no request after the hook stopped the loop"
    );
    let why = ws.why();
    assert!(why.contains("stop: hook_stopped: [./halt.sh] said continue: false after toolu_1: budget spent"), "{why}");
    snapshot("reason_hook_stopped", &why);
    assert!(ws.replays_identical());
}

#[test]
fn token_budget_continuation_until_90_percent() {
    let ws = Workspace::seed();
    let responses = (1..=5).map(|i| response(&format!("msg_{i}"), text("more"), "end_turn", 300)).collect();
    let out = ws.run_responses("+1k refactor", responses, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = json_lines(&out);
    assert_eq!(
        user_texts(&lines),
        vec![
            "Stopped at 30% of token target (300 / 1,000). Keep working — do not summarize.",
            "Stopped at 60% of token target (600 / 1,000). Keep working — do not summarize.",
        ]
    );
    assert_eq!(lines.iter().filter(|l| l["type"] == "assistant").count(), 3);
    let why = ws.why();
    assert!(why.contains("token_budget_continuation: 30% of 1,000"), "{why}");
    snapshot("reason_token_budget_continuation", &why);
    assert!(ws.replays_identical());
}
