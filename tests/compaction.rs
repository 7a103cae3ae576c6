//! Context management through the CLI: auto-compaction at the threshold, reactive compaction on
//! "prompt is too long", the circuit breaker, the blocking limit, and the cost budget.
//! With --context-window 40000 and 32000 output tokens: effective 20,000, compact at 7,000,
//! block at 17,000.

mod common;

use common::{json_lines, response, stderr, stdout, text, user_texts, Workspace};
use serde_json::{json, Value};

fn glob(id: &str, input_tokens: u64) -> Value {
    let mut r = response(
        id,
        json!([{"type": "tool_use", "id": format!("toolu_{id}"), "name": "Glob", "input": {"pattern": "**/*.ts"}}]),
        "tool_use",
        20,
    );
    r["message"]["usage"]["input_tokens"] = json!(input_tokens);
    r
}

fn summary() -> Value {
    response("msg_sum", text("<analysis>the user wants the login module checked</analysis>\n<summary>The user asked to check the login module; it is in src/auth/login.ts.</summary>"), "end_turn", 200)
}

fn too_long() -> Value {
    json!({"error": {"status": 400, "body": {"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 210000 tokens > 200000 maximum"}}}})
}

fn server_error() -> Value {
    json!({"error": {"status": 500, "body": {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}}}})
}

const WINDOW: [&str; 2] = ["--context-window", "40000"];

fn call_counts(ws: &Workspace) -> Vec<u64> {
    let steps: Value = serde_json::from_str(&stdout(&ws.reloop(&["show", "last", "--steps", "--json"]))).unwrap();
    steps
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["effects"].as_array().unwrap().clone())
        .filter(|e| e["effect"] == "call_model")
        .map(|e| e["message_count"].as_u64().unwrap())
        .collect()
}

/// The summary message under the default profile (Claude Code 2.1.332's shape: the tools used
/// before it named; `KEPT_NOTE` after it when messages were kept).
const SUMMARY_TEXT: &str = "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\n<system-reminder>\n<tools-used-before-summary>Glob</tools-used-before-summary>\n</system-reminder>\nSummary:\nThe user asked to check the login module; it is in src/auth/login.ts.\nContinue the conversation from where it left off without asking the user any further questions. Resume directly — do not acknowledge the summary, do not recap what was happening, do not preface with \"I'll continue\" or similar. Pick up the last task as if the break never happened.";

#[test]
fn auto_compaction_at_the_threshold_keeps_the_latest_exchange() {
    let ws = Workspace::seed();
    let out = ws.run_responses(
        "check the login module",
        vec![glob("1", 1_000), glob("2", 8_000), summary(), response("msg_4", text("Checked."), "end_turn", 30)],
        &WINDOW,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = json_lines(&out);
    let boundary = lines.iter().find(|l| l["subtype"] == "compact_boundary").unwrap();
    assert_eq!(boundary["compact_metadata"]["trigger"], "auto");
    assert!(boundary["compact_metadata"]["pre_tokens"].as_u64().unwrap() >= 8_000);
    let summary = format!("{SUMMARY_TEXT}\n\n{}", reloop_core::compact::shape::KEPT_NOTE);
    assert!(user_texts(&lines).contains(&summary), "{:?}", user_texts(&lines));
    // Requests 1 and 2 carry 1 and 3 messages; after the summary request, the next carries the
    // summary, today's date (a system message, as 2.1.332 gives it back) and the kept exchange
    // (assistant tool_use + its tool_result).
    assert_eq!(call_counts(&ws), vec![1, 3, 4]);
    let show: Value = serde_json::from_str(&stdout(&ws.reloop(&["show", "last", "--json"]))).unwrap();
    let messages = show["messages"].as_array().unwrap();
    assert_eq!(messages[1]["role"], "system");
    assert_eq!(messages[2]["content"][0]["id"], "toolu_2");
    assert_eq!(messages[3]["content"][0]["tool_use_id"], "toolu_2");
    let why = ws.why();
    assert!(
        why.contains("compacted: the request would reach the auto-compact threshold; compacted the history (auto)"),
        "{why}"
    );
    common::settings().bind(|| insta::assert_snapshot!("compaction_auto_why", why));
    assert!(ws.replays_identical());
}

#[test]
fn reactive_compaction_on_prompt_too_long_retries_once() {
    let ws = Workspace::seed();
    let out = ws.run_responses(
        "check",
        vec![
            glob("1", 100),
            glob("2", 100),
            too_long(),
            summary(),
            response("msg_5", text("Checked."), "end_turn", 30),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = json_lines(&out);
    assert_eq!(
        lines.iter().find(|l| l["subtype"] == "compact_boundary").unwrap()["compact_metadata"]["trigger"],
        "reactive"
    );
    let why = ws.why();
    assert!(why.contains("reactive_compact_retry: prompt is too long; compacted the history (reactive)"), "{why}");
    common::settings().bind(|| insta::assert_snapshot!("compaction_reactive_why", why));
    assert!(ws.replays_identical());

    // Still too long after the one compaction: the loop stops.
    let ws = Workspace::seed();
    let out = ws.run_responses("check", vec![glob("1", 100), glob("2", 100), too_long(), summary(), too_long()], &[]);
    assert_eq!(out.status.code(), Some(1));
    let result = json_lines(&out).pop().unwrap();
    assert_eq!(result["terminal_reason"], "prompt_too_long");
    assert_eq!(result["result"], "Prompt is too long");
    assert!(ws.replays_identical());
}

#[test]
fn a_single_exchange_cannot_be_compacted() {
    let ws = Workspace::seed();
    let out = ws.run_responses("a huge prompt", vec![too_long()], &[]);
    assert_eq!(out.status.code(), Some(1));
    let result = json_lines(&out).pop().unwrap();
    assert_eq!(result["terminal_reason"], "prompt_too_long");
    // Claude Code's words (flag 20): the API's sizes, and its estimate of the conversation.
    let text = result["result"].as_str().unwrap();
    assert!(text.starts_with("Prompt is too long · the request is ~210000 tokens (limit 200000) but"), "{text}");
    common::settings().bind(|| insta::assert_snapshot!("compaction_single_exchange_why", ws.why()));
    assert!(ws.replays_identical());
}

#[test]
fn a_failing_summary_request_ends_a_reactive_compaction() {
    let ws = Workspace::seed();
    let out = ws.run_responses("check", vec![glob("1", 100), glob("2", 100), too_long(), server_error()], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(json_lines(&out).pop().unwrap()["terminal_reason"], "prompt_too_long");
    let why = ws.why();
    assert!(why.contains("compaction (reactive) failed"), "{why}");
    assert!(ws.replays_identical());
}

#[test]
fn three_failed_compactions_open_the_circuit_breaker() {
    let ws = Workspace::seed();
    let out = ws.run_responses(
        "check",
        vec![
            glob("1", 1_000),
            glob("2", 8_000),
            server_error(),
            glob("4", 8_000),
            server_error(),
            glob("6", 8_000),
            server_error(),
            glob("8", 8_000),
            response("msg_9", text("Checked."), "end_turn", 30),
        ],
        &WINDOW,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let warnings: Vec<String> = json_lines(&out)
        .iter()
        .filter(|l| l["subtype"] == "warning")
        .map(|l| l["content"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(warnings.len(), 3, "{warnings:?}");
    assert!(warnings[2].contains("3 in a row; auto-compaction is off for the rest of the run"), "{}", warnings[2]);
    common::settings().bind(|| insta::assert_snapshot!("compaction_circuit_breaker_why", ws.why()));
    assert!(ws.replays_identical());
}

#[test]
fn the_blocking_limit_stops_without_calling_the_model() {
    let ws = Workspace::seed();
    let out = ws.run_responses(
        "check",
        vec![glob("1", 18_000), response("msg_2", text("never"), "end_turn", 5)],
        &["--context-window", "40000", "--no-auto-compact"],
    );
    assert_eq!(out.status.code(), Some(1));
    let result = json_lines(&out).pop().unwrap();
    assert_eq!(result["terminal_reason"], "blocking_limit");
    assert_eq!(result["result"], "Prompt is too long");
    assert_eq!(call_counts(&ws), vec![1], "no second request");
    let why = ws.why();
    assert!(why.contains("stop: blocking_limit: the request would hold about"), "{why}");
    common::settings().bind(|| insta::assert_snapshot!("reason_blocking_limit", why));
    assert!(ws.replays_identical());
}

#[test]
fn the_cost_budget_ends_the_run() {
    let ws = Workspace::seed();
    let costly = |id: &str| {
        let mut r = glob(id, 2_000);
        r["message"]["usage"]["output_tokens"] = json!(100);
        r
    };
    let out = ws.run_responses(
        "check",
        vec![costly("1"), costly("2"), costly("3")],
        &["--max-budget-usd", "0.01", "--model", "claude-sonnet-4-6"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let result = json_lines(&out).pop().unwrap();
    assert_eq!(result["subtype"], "error_max_budget_usd");
    assert_eq!(result["result"], "Reached maximum budget ($0.01)");
    assert!((result["total_cost_usd"].as_f64().unwrap() - 0.015).abs() < 1e-9, "{result}");
    assert_eq!(result["modelUsage"]["claude-sonnet-4-6"]["input_tokens"], 4_000);
    // The second response's Glob never runs: under a Claude Code profile the budget stop comes
    // before the calls of the response that reached it (flag 11).
    common::settings().bind(|| insta::assert_snapshot!("reason_max_budget_usd_why", ws.why()));
    assert!(ws.replays_identical());
}

#[test]
fn reloop_compact_compacts_a_stopped_session_as_a_fork() {
    let ws = Workspace::seed();
    let out = ws.run_responses(
        "check",
        vec![glob("1", 100), glob("2", 100), response("msg_3", text("Checked."), "end_turn", 30)],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let parent = json_lines(&out)[0]["session_id"].as_str().unwrap().to_string();
    let script = ws.dir.path().join("summary.json");
    std::fs::write(&script, json!({"responses": [summary()]}).to_string()).unwrap();
    let out = ws.reloop(&["compact", &parent, "--script", script.to_str().unwrap(), "--output-format", "stream-json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = json_lines(&out);
    let boundary = lines.iter().find(|l| l["subtype"] == "compact_boundary").unwrap();
    assert_eq!(boundary["compact_metadata"]["trigger"], "manual");
    let show: Value = serde_json::from_str(&stdout(&ws.reloop(&["show", "last", "--json"]))).unwrap();
    let messages = show["messages"].as_array().unwrap();
    // The last answer is kept after the summary, which says so, as Claude Code's `/compact`
    // between queries keeps it (flag 27, sdk_wire/stream_compact).
    let kept = format!("{SUMMARY_TEXT}\n\n{}", reloop_core::compact::shape::KEPT_NOTE);
    assert_eq!(messages[0]["content"][0]["text"], kept);
    let answers: Vec<&Value> = messages.iter().filter(|m| m["role"] == "assistant").collect();
    assert_eq!(answers.len(), 1, "{messages:?}");
    assert_eq!(answers[0]["content"][0]["text"], "Checked.");
    // The original is untouched and still replays; the compacted fork replays too.
    assert_eq!(ws.reloop(&["replay", &parent]).status.code(), Some(0));
    assert!(ws.replays_identical());
    let sessions = stdout(&ws.reloop(&["sessions"]));
    assert!(sessions.contains(&format!("fork of {} @", &parent[..8])), "{sessions}");
}

/// The files a compaction gives back come in the order both versions give them: by when each
/// was last changed as its Read saw it, newest first, and files changed in the same
/// millisecond in the order Claude Code's read-file cache leaves them (flag 45). Each
/// recording is a `/compact` between queries of a stream-json session, played on reloop; the
/// session replays identically.
#[test]
fn a_compaction_gives_files_back_newest_change_first_ties_as_claude_code_leaves_them() {
    use common::hooks_play::{play, recorded_requests, VERSIONS};
    // The paths of the files given back in the last request, as far as it holds them whole
    // (the recorder keeps 300 characters of a long `role: "system"` message).
    let given_back = |requests: &[Value], project: &str| -> Vec<String> {
        let text = serde_json::to_string(&requests.last().unwrap()["messages"]).unwrap().replace("\\\"", "\"");
        let opening = "Called the Read tool with the following input: {\"file_path\":\"";
        text.match_indices(opening)
            .filter_map(|(at, _)| {
                let rest = &text[at + opening.len()..];
                // Whole: the call's line ends after it (`"}` and a newline, escaped here).
                let path = &rest[..rest.find("\"}\\n")?];
                Some(path.trim_start_matches(project).to_string())
            })
            .collect()
    };
    for scenario in ["two_reads", "read_order", "six_reads", "mtimes", "later_query"] {
        let scenario = format!("settings_slash/stream_compact_{scenario}");
        for version in VERSIONS {
            let played = play(version, &scenario);
            let ours = given_back(&played.requests, &played.cwd);
            let theirs = given_back(&recorded_requests(version, &scenario), "/tmp/reloop-cc-project");
            assert!(!theirs.is_empty(), "{version} {scenario}: the recording gives files back");
            assert_eq!(ours[..theirs.len()], theirs[..], "{version} {scenario}: {ours:?}");
            assert!(ours.len() <= 5 && ours.len() >= theirs.len(), "{version} {scenario}: {ours:?}");
            assert!(played.replays_identical, "{version} {scenario}");
        }
    }
}

/// Both versions give back the files the session wrote or edited too, read again from disk as
/// they compact: the edited README.md with its new text, the written file beside the one read
/// (`settings_slash/stream_compact_written`, flag 47). Which of the written two comes first
/// follows their modification times, a clock tick apart at most here, so only the set is held.
#[test]
fn a_compaction_gives_back_written_and_edited_files_as_they_are_on_disk() {
    use common::hooks_play::{play, recorded_requests, VERSIONS};
    let scenario = "settings_slash/stream_compact_written";
    for version in VERSIONS {
        let played = play(version, scenario);
        let last = |requests: &[Value], project: &str| {
            serde_json::to_string(&requests.last().unwrap()["messages"])
                .unwrap()
                .replace(project, "/tmp/reloop-cc-project")
        };
        let ours = last(&played.requests, &played.cwd);
        let theirs = last(&recorded_requests(version, scenario), "/tmp/reloop-cc-project");
        for path in ["/tmp/reloop-cc-project/README.md", "/tmp/reloop-cc-project/src/new.ts"] {
            let called = format!("Called the Read tool with the following input: {{\\\"file_path\\\":\\\"{path}\\\"}}");
            assert!(theirs.contains(&called), "{version}: the recording gives back {path}");
            assert!(ours.contains(&called), "{version}: {path} given back: {ours}");
        }
        let edited = "Result of calling the Read tool:\\n1\\t# shop";
        assert!(theirs.contains(edited) && ours.contains(edited), "{version}: README.md as edited: {ours}");
        assert!(ours.contains("src/auth/login.ts"), "{version}: the file read");
        assert!(played.replays_identical, "{version}");
    }
}
