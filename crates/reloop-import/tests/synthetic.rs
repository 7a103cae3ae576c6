//! Transcript shapes the real fixtures lack: API errors, compaction, stop-hook feedback, unknown
//! line types, calls never answered, cut-off files; and the other export formats.

mod common;

use reloop_core::{Event, Role};
use reloop_import::{export, parse_claude_code, Decision, ExportFormat, ImportError, ImportOptions, Imported};
use serde_json::{json, Value};

/// A transcript line chained to the previous one.
struct Writer {
    lines: Vec<String>,
    n: usize,
}

impl Writer {
    fn new() -> Self {
        Writer { lines: Vec::new(), n: 0 }
    }

    fn push(&mut self, kind: &str, message: Value, extra: Value) -> &mut Self {
        self.n += 1;
        let parent = if self.n == 1 { Value::Null } else { json!(format!("u{}", self.n - 1)) };
        let mut line = json!({
            "parentUuid": parent, "isSidechain": false, "sessionId": "s", "cwd": "/w", "version": "2.1.0",
            "type": kind, "message": message, "uuid": format!("u{}", self.n),
            "timestamp": format!("2026-01-01T00:00:{:02}.000Z", self.n),
        });
        if let (Value::Object(l), Value::Object(e)) = (&mut line, extra) {
            l.extend(e);
        }
        self.lines.push(line.to_string());
        self
    }

    fn user(&mut self, text: &str) -> &mut Self {
        self.push("user", json!({"role": "user", "content": text}), json!({}))
    }

    fn text(&mut self, id: &str, text: &str) -> &mut Self {
        let m = json!({"id": id, "role": "assistant", "model": "claude-x", "content": [{"type": "text", "text": text}],
                       "stop_reason": "end_turn", "usage": {"input_tokens": 1, "output_tokens": 2}});
        self.push("assistant", m, json!({}))
    }

    fn tool_use(&mut self, id: &str, call: &str) -> &mut Self {
        let m = json!({"id": id, "role": "assistant", "model": "claude-x",
                       "content": [{"type": "tool_use", "id": call, "name": "Bash", "input": {"command": "ls"}}]});
        self.push("assistant", m, json!({}))
    }

    fn result(&mut self, call: &str, text: &str) -> &mut Self {
        let m = json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": call, "content": text}]});
        self.push("user", m, json!({}))
    }

    fn text_lines(&self) -> String {
        self.lines.join("\n") + "\n"
    }

    fn import(&self) -> Imported {
        let imported = parse_claude_code(&self.text_lines(), "t.jsonl", &ImportOptions::default()).unwrap();
        let (header, steps) = common::journal(&imported, "t");
        common::assert_well_formed(&common::assert_replays(&header, &steps));
        let again = export(ExportFormat::ClaudeJsonl, &header, &steps).unwrap();
        let second = parse_claude_code(&again, "again.jsonl", &ImportOptions::default()).unwrap();
        assert_eq!(second.events, imported.events, "export → import changed the events");
        imported
    }
}

fn kinds(imported: &Imported) -> Vec<&'static str> {
    imported.events.iter().map(Event::kind).collect()
}

#[test]
fn an_api_error_line_fails_the_request_and_a_new_prompt_starts_a_new_query() {
    let mut w = Writer::new();
    w.user("hi");
    let error = r#"API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    let m =
        json!({"id": "e1", "role": "assistant", "model": "<synthetic>", "content": [{"type": "text", "text": error}]});
    w.push("assistant", m, json!({"isApiErrorMessage": true}));
    w.user("again").text("m1", "hello");
    let imported = w.import();
    assert_eq!(kinds(&imported), ["user_input", "model_failed", "user_input", "model_block", "model_done"]);
    let Event::ModelFailed { error, .. } = &imported.events[1] else { unreachable!() };
    assert_eq!(
        (error.status, error.error_type.as_str(), error.message.as_str()),
        (Some(529), "overloaded_error", "Overloaded")
    );
    assert_eq!(imported.summary.api_errors, 1);
    assert_eq!(imported.header_run_config["model"], "claude-x");
}

#[test]
fn a_compaction_boundary_is_crossed_and_its_summary_is_the_next_prompt() {
    let mut w = Writer::new();
    w.user("first").text("m1", "one");
    // The boundary starts a new root; its logical parent is the last line before it.
    w.push(
        "system",
        Value::Null,
        json!({"parentUuid": null, "logicalParentUuid": "u2", "subtype": "compact_boundary"}),
    );
    let summary = json!({"role": "user", "content": "This session is being continued from a previous conversation."});
    w.push("user", summary, json!({"isCompactSummary": true}));
    w.text("m2", "two");
    let imported = w.import();
    assert_eq!(imported.summary.compactions, 1);
    assert_eq!(imported.summary.compact_summaries, 1);
    assert_eq!(imported.summary.prompts, 2);
    assert_eq!(imported.summary.responses, 2, "the history before the boundary is kept");
}

fn reasons(imported: &Imported) -> Vec<String> {
    let (_, steps) = common::journal(imported, "r");
    steps.iter().filter_map(|s| s.reason.as_ref().map(|r| r.name().to_string())).collect()
}

#[test]
fn stop_hook_feedback_is_the_hook_s_block_not_a_prompt() {
    let mut w = Writer::new();
    w.user("do it").text("m1", "done");
    w.push(
        "user",
        json!({"role": "user", "content": "Stop hook feedback:\n[./check.sh]: tests fail\n"}),
        json!({"isMeta": true}),
    );
    w.text("m2", "fixed");
    let imported = w.import();
    assert_eq!(imported.summary.stop_hook_feedback, 1);
    assert_eq!(imported.summary.prompts, 1, "the person typed one prompt");
    assert!(imported.core_config.stop_hooks);
    assert_eq!(reasons(&imported), ["stop_hook_blocking", "completed"]);
    let Some(Event::HookDone { runs, .. }) = imported.events.iter().find(|e| e.kind() == "hook_done") else {
        panic!("no hook outcome")
    };
    assert_eq!(
        (runs[0].command.as_str(), runs[0].exit_code, runs[0].stderr.as_str()),
        ("./check.sh", Some(2), "tests fail\n")
    );
    let decisions: Vec<_> = imported.observed.iter().map(|o| o.decision.clone()).collect();
    assert_eq!(decisions, [Decision::StopHookBlocked { block: 1 }, Decision::Completed]);
    // The last turn's end: no line of the transcript says the hooks passed.
    let inferred = imported.header_run_config["inferred"].as_array().unwrap();
    assert_eq!(inferred.len(), 1, "{inferred:?}");
    assert!(inferred[0]["what"].as_str().unwrap().contains("no Stop hook outcome"));
}

#[test]
fn a_stop_hook_summary_says_the_hooks_passed_or_ended_the_run() {
    let summary = |prevented: bool| {
        json!({"subtype": "stop_hook_summary", "hookCount": 1, "hookInfos": [{"command": "./h.sh"}], "hookErrors": [],
               "preventedContinuation": prevented, "stopReason": if prevented { "enough" } else { "" }})
    };
    let mut w = Writer::new();
    w.user("do it").text("m1", "done").push("system", Value::Null, summary(false));
    let passed = w.import();
    assert_eq!(reasons(&passed), ["completed"]);
    assert_eq!(passed.header_run_config["inferred"], json!([]), "the summary says what happened");
    let mut w = Writer::new();
    w.user("do it").text("m1", "done").push("system", Value::Null, summary(true));
    let prevented = w.import();
    assert_eq!(reasons(&prevented), ["stop_hook_prevented"]);
}

#[test]
fn nine_blocks_end_the_turn_at_the_cap_as_claude_code_does() {
    let mut w = Writer::new();
    w.user("do it");
    for i in 0..9 {
        w.text(&format!("m{i}"), "done");
        let feedback = reloop_core::profile::CLAUDE_CODE_2_1_332
            .stop_hook_feedback("Stop hook feedback:\n[./h.sh]: STOP-HOOK-FEEDBACK: check logout\n");
        w.push("user", json!({"role": "user", "content": feedback}), json!({"isMeta": true}));
    }
    let imported = w.import();
    assert_eq!(imported.summary.prompts, 1);
    let reasons = reasons(&imported);
    assert_eq!(reasons.len(), 9);
    assert!(reasons[..8].iter().all(|r| r == "stop_hook_blocking"), "{reasons:?}");
    assert_eq!(reasons[8], "completed", "the ninth block ends the turn at the cap");
}

#[test]
fn the_max_turns_attachment_is_the_max_turns_stop() {
    let mut w = Writer::new();
    w.user("go").tool_use("m1", "t1").result("t1", "a").tool_use("m2", "t2").result("t2", "b");
    w.push(
        "attachment",
        Value::Null,
        json!({"attachment": {"type": "max_turns_reached", "maxTurns": 2, "turnCount": 3}}),
    );
    let imported = w.import();
    assert_eq!(imported.core_config.max_turns, Some(2));
    assert_eq!(reasons(&imported), ["next_turn", "max_turns"]);
    assert_eq!(imported.observed.last().map(|o| o.decision.clone()), Some(Decision::MaxTurns { max_turns: 2 }));
}

#[test]
fn an_auto_compaction_between_turns_is_the_core_s_compaction_there() {
    let mut w = Writer::new();
    w.user("go").tool_use("m1", "t1").result("t1", "a").tool_use("m3", "t3").result("t3", "c");
    let meta = json!({"subtype": "compact_boundary", "compactMetadata": {"trigger": "auto", "preTokens": 12466}});
    w.push("system", Value::Null, meta);
    let summary = "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\nSummary:\nTHE SUMMARY\n\nIf you need specific details from before compaction, read the full transcript at: /t.jsonl\nContinue the conversation from where it left off without asking the user any further questions.";
    w.push("user", json!({"role": "user", "content": summary}), json!({"isCompactSummary": true}));
    w.text("m2", "done");
    let imported = w.import();
    assert_eq!(imported.summary.prompts, 1, "the summary is no prompt");
    assert_eq!(
        kinds(&imported),
        [
            "user_input",
            "model_block",
            "model_done",
            "tool_done",
            "model_block",
            "model_done",
            "tool_done",
            "compact_requested",
            "compact_done",
            "model_block",
            "model_done"
        ]
    );
    let Some(Event::CompactDone { summary, .. }) = imported.events.iter().find(|e| e.kind() == "compact_done") else {
        panic!()
    };
    assert_eq!(summary, "THE SUMMARY");
    assert_eq!(reasons(&imported), ["next_turn", "next_turn", "completed"]);
    assert!(imported
        .observed
        .iter()
        .any(|o| o.decision == Decision::Compacted { trigger: Some("auto".into()), pre_tokens: Some(12466) }));
    let inferred = imported.header_run_config["inferred"].to_string();
    assert!(inferred.contains("Claude Code counted 12466 tokens before it"), "{inferred}");
}

#[test]
fn a_denied_call_is_a_permission_denial() {
    let mut w = Writer::new();
    w.user("go").tool_use("m1", "t1");
    let denied = json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "is_error": true,
        "content": "Claude requested permissions to write to /w/new.txt, but you haven't granted it yet."}]});
    w.push("user", denied, json!({})).text("m2", "ok");
    let imported = w.import();
    let Some(Event::ToolDone(outcome)) = imported.events.iter().find(|e| e.kind() == "tool_done") else { panic!() };
    assert!(outcome.denied && outcome.is_error);
    assert!(imported.observed.iter().any(|o| o.decision == Decision::PermissionDenied { tool_use_id: "t1".into() }));
}

#[test]
fn unknown_line_types_inside_a_transcript_are_counted_and_skipped() {
    let mut w = Writer::new();
    w.user("hi");
    w.lines.push(json!({"type": "custom-title", "title": "x"}).to_string());
    w.text("m1", "hello");
    let imported = w.import();
    assert_eq!(imported.summary.skipped.get("custom-title"), Some(&1));
    assert_eq!(imported.summary.responses, 1);
}

#[test]
fn calls_left_unanswered_are_closed_by_an_abort() {
    // Killed while the tool ran: the file ends after the call.
    let mut w = Writer::new();
    w.user("run").tool_use("m1", "t1");
    let imported = w.import();
    assert_eq!(kinds(&imported).last(), Some(&"abort"));
    assert_eq!(imported.summary.synthesized_aborts, 1);

    // A new prompt while a call is open: the call is interrupted first.
    let mut w = Writer::new();
    w.user("run").tool_use("m1", "t1").user("never mind").text("m2", "ok");
    let imported = w.import();
    assert_eq!(
        kinds(&imported),
        ["user_input", "model_block", "model_done", "abort", "user_input", "model_block", "model_done"]
    );

    // A response after a partial batch: the missing result is written as interrupted.
    let mut w = Writer::new();
    w.user("run").tool_use("m1", "t1").tool_use("m1", "t2").result("t1", "fine").text("m2", "ok");
    let imported = w.import();
    assert_eq!(imported.summary.synthesized_tool_results, 1);
    assert_eq!(imported.summary.tool_results, 1);
}

#[test]
fn an_interrupt_for_tool_use_lands_while_tools_run() {
    let mut w = Writer::new();
    w.user("run").tool_use("m1", "t1").tool_use("m1", "t2").result("t1", "fine").result("t2", "also fine");
    w.user("[Request interrupted by user for tool use]");
    let imported = w.import();
    // One real result is left for the abort, so that it interrupts the batch.
    assert_eq!(imported.summary.withheld_tool_results, 1);
    assert_eq!(kinds(&imported)[4..], ["tool_done", "abort"]);
}

#[test]
fn cut_off_and_broken_files_are_reported_by_line() {
    let mut w = Writer::new();
    w.user("hi").text("m1", "hello");
    let cut = w.text_lines() + "{\"type\":\"user\",\"mess";
    let imported = parse_claude_code(&cut, "cut.jsonl", &ImportOptions::default()).unwrap();
    assert_eq!(imported.summary.skipped.get("truncated_last_line"), Some(&1));

    let broken = format!("{}\nnot json\n{}\n", w.lines[0], w.lines[1]);
    let err = parse_claude_code(&broken, "broken.jsonl", &ImportOptions::default()).unwrap_err();
    assert!(matches!(err, ImportError::InvalidJson { line: 2, .. }), "{err}");
    assert!(err.to_string().starts_with("broken.jsonl:2:"), "{err}");

    let err = parse_claude_code("  \n\n", "blank.jsonl", &ImportOptions::default()).unwrap_err();
    assert!(matches!(err, ImportError::Empty { .. }), "{err}");
    let err = parse_claude_code("{\"a\":1}\n", "other.jsonl", &ImportOptions::default()).unwrap_err();
    assert!(matches!(err, ImportError::NotClaudeCode { line: 1, .. }), "{err}");
}

#[test]
fn messages_and_stream_json_exports_follow_the_history() {
    let mut w = Writer::new();
    w.user("run").tool_use("m1", "t1").result("t1", "fine").text("m2", "all good");
    let imported = w.import();
    let (header, steps) = common::journal(&imported, "x");
    let state = common::assert_replays(&header, &steps);

    let messages: Value = serde_json::from_str(&export(ExportFormat::Messages, &header, &steps).unwrap()).unwrap();
    assert_eq!(messages, serde_json::to_value(state.messages().to_vec()).unwrap());

    let stream = export(ExportFormat::StreamJson, &header, &steps).unwrap();
    let lines: Vec<Value> = stream.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), state.messages().len() + 2);
    assert_eq!((lines[0]["type"].as_str(), lines[0]["subtype"].as_str()), (Some("system"), Some("init")));
    assert_eq!(lines[1]["type"], "user");
    assert_eq!(lines[2]["message"]["role"], serde_json::to_value(Role::Assistant).unwrap());
    assert!(lines[1..lines.len() - 1].iter().all(|l| l["session_id"] == "x" && l["parent_tool_use_id"].is_null()));
    let result = &lines[lines.len() - 1];
    assert_eq!((result["type"].as_str(), result["subtype"].as_str()), (Some("result"), Some("success")));
    assert_eq!(result["result"], "all good");
    assert_eq!(result["num_turns"], 2);
}

/// Every step is written as the core takes it, in one transaction: an event the core refuses
/// (here a tool result with no call in flight, added by hand) stops the import, names the
/// event, and leaves no part of the session in the journal.
#[test]
fn an_event_the_core_refuses_writes_no_part_of_the_session() {
    let mut imported = Writer::new().user("hi").text("m1", "hello").import();
    let at = imported.events.len();
    imported.events.push(Event::ToolDone(reloop_core::ToolOutcome::error("toolu_nowhere", "out")));
    imported.at_ms.push(imported.at_ms.last().copied().unwrap_or(0));
    let mut journal = reloop_journal::Journal::in_memory().unwrap();
    let refused = reloop_import::import_into(&mut journal, &imported, "refused", 0);
    match refused {
        Err(ImportError::RejectedEvent { index, kind, .. }) => assert_eq!((index, kind.as_str()), (at, "tool_done")),
        other => panic!("{other:?}"),
    }
    assert!(journal.sessions().unwrap().is_empty(), "nothing was written");
    imported.events.pop();
    imported.at_ms.pop();
    let report = reloop_import::import_into(&mut journal, &imported, "whole", 0).unwrap();
    assert_eq!(report.steps, imported.events.len());
    assert_eq!(journal.steps("whole").unwrap().len(), imported.events.len());
}
