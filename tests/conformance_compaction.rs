//! Conformance, compaction family: the facts file's scenario e3 (a Read, a Grep, then a request
//! the API finds too long) and e4 (the summary request itself too long), under each profile,
//! in print mode against a fake Anthropic server. Expected shapes: `claude-code-facts.md` §6.

mod common;

use common::compat::{answer, run, text_of, Run};
use common::fake_server::Canned;
use common::{call, text};
use serde_json::{json, Value};

const V197: &str = "claude-code-2.1.197";
const V332: &str = "claude-code-2.1.332";
const CRITICAL: &str = "CRITICAL: Respond with TEXT ONLY. Do NOT call any tools.";
const SUMMARY: &str = "FAKE COMPACT SUMMARY: the user asked to check the login module.";

fn too_long() -> Canned {
    Canned::Error {
        status: 400,
        headers: Vec::new(),
        body: json!({"type": "error", "error": {"type": "invalid_request_error",
            "message": "prompt is too long: 210000 tokens > 200000 maximum"}}),
    }
}

/// main(2 messages) → Read → main(4) → Grep → main(6) is too long → the summary → main.
fn e3() -> Vec<Canned> {
    vec![
        answer(
            "msg_1",
            json!([{"type": "text", "text": "Reading."},
                   call("toolu_01READ", "Read", json!({"file_path": "src/auth/login.ts"}))]),
            "tool_use",
        ),
        answer("msg_2", json!([call("toolu_02GREP", "Grep", json!({"pattern": "password"}))]), "tool_use"),
        too_long(),
        answer("msg_sum", text(&format!("<analysis>…</analysis>\n<summary>{SUMMARY}</summary>")), "end_turn"),
        answer("msg_3", text("登录模块检查完毕"), "end_turn"),
    ]
}

fn messages(r: &Run, n: usize) -> &Vec<Value> {
    r.requests[n].body["messages"].as_array().unwrap()
}

fn status_lines(r: &Run) -> Vec<Value> {
    r.lines
        .iter()
        .filter(|l| l["subtype"] == "status")
        .map(|l| {
            let mut l = l.clone();
            let o = l.as_object_mut().unwrap();
            o.remove("uuid");
            o.remove("session_id");
            o.remove("type");
            o.remove("subtype");
            l
        })
        .collect()
}

/// Every text of a message (a string, or its text blocks), tool results as their content.
fn texts(message: &Value) -> Vec<String> {
    match &message["content"] {
        Value::Array(blocks) => blocks
            .iter()
            .map(|b| match b["type"].as_str() {
                Some("tool_result") => format!("tool_result:{}", b["tool_use_id"].as_str().unwrap_or("")),
                _ => b["text"].as_str().unwrap_or_default().to_string(),
            })
            .collect(),
        _ => text_of(message),
    }
}

/// The summary request of both versions: same system and tools as the main requests, the
/// messages without the last exchange, the instruction appended after the last tool_result.
fn assert_summary_request_is_shaped_like_a_main_request(r: &Run) {
    assert_eq!(r.requests.len(), 5, "main ×3, summary, main");
    let (main, summary) = (&r.requests[2].body, &r.requests[3].body);
    assert_eq!(summary["system"], main["system"]);
    assert_eq!(summary["tools"], main["tools"]);
    assert_eq!(summary["max_tokens"], main["max_tokens"]);
    assert_eq!(summary["stream"], true);
    let sent = messages(r, 3);
    // reloop sends no `role: "system"` message of its own before the prompt: 3, not Claude Code's 4.
    assert_eq!(sent.len(), 3, "the last assistant/tool_result pair is left out");
    let last = texts(&sent[2]);
    assert_eq!(last[0], "tool_result:toolu_01READ");
    assert!(last[1].starts_with(&format!("{CRITICAL}\n\n")), "{}", last[1]);
}

#[test]
fn compaction_2_1_197_summary_request_context_reminder_and_read_file_as_system_message() {
    let r = run(V197, e3(), &[], |_| Vec::new());
    assert_summary_request_is_shaped_like_a_main_request(&r);
    assert!(!texts(&messages(&r, 3)[2])[1].contains("user-role turns"), "2.1.332's sentence only");
    let after = messages(&r, 4);
    assert_eq!(after.len(), 4, "summary, the kept pair, the re-attached file");
    let summary = texts(&after[0]);
    assert!(summary[0].starts_with("<system-reminder>\nAs you answer the user's questions"), "{summary:?}");
    assert!(summary[0].contains("# currentDate\nToday's date is "), "the date comes back");
    assert!(summary[1].starts_with("This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\nSummary:\n"));
    // The paragraph naming the session file print mode writes, before the words that continue.
    let transcript = format!("{}/projects/", r.ws.claude_dir().display());
    assert!(
        summary[1].contains(&format!("Summary:\n{SUMMARY}\n\nIf you need specific details from before compaction (like exact code snippets, error messages, or content you generated), read the full transcript at: {transcript}")),
        "{}",
        summary[1]
    );
    assert!(summary[1].contains(".jsonl\nContinue the conversation"), "{}", summary[1]);
    assert!(summary[1].ends_with("Pick up the last task as if the break never happened."));
    assert_eq!(after[1]["role"], "assistant");
    assert_eq!(texts(&after[2]), ["tool_result:toolu_02GREP"]);
    assert_eq!(after[3]["role"], "system");
    let reattached = texts(&after[3]).join("");
    assert!(
        reattached.starts_with("Called the Read tool with the following input: {\"file_path\":\"src/auth/login.ts\"}\nResult of calling the Read tool:\n1\texport interface Credentials {"),
        "{reattached}"
    );
    assert_eq!(
        status_lines(&r),
        [json!({"status": "compacting"}), json!({"status": null, "compact_result": "success"})]
    );
    let boundary = r.lines.iter().find(|l| l["subtype"] == "compact_boundary").unwrap();
    assert_eq!(boundary["compact_metadata"]["trigger"], "auto", "Claude Code calls it auto");
    assert_eq!(r.result()["result"], "登录模块检查完毕");
    assert!(r.replays_identical());
}

#[test]
fn compaction_2_1_332_date_system_message_read_file_as_reminders_on_the_kept_tail() {
    let r = run(V332, e3(), &[], |_| Vec::new());
    assert_summary_request_is_shaped_like_a_main_request(&r);
    assert!(texts(&messages(&r, 3)[2])[1]
        .contains(" Only messages that actually came from the user (user-role turns) count as user messages."));
    let after = messages(&r, 4);
    assert_eq!(after.len(), 4, "summary, date, the kept pair");
    let summary = texts(&after[0]).join("");
    assert!(summary.starts_with("This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\n<system-reminder>\n<tools-used-before-summary>Read</tools-used-before-summary>\n</system-reminder>\nSummary:\n"), "{summary}");
    assert!(summary.ends_with("\n\nThe messages after this summary are the most recent messages from before compaction, kept verbatim. The summary was written without seeing them, so something it says has not happened yet may already have happened in them."));
    assert_eq!(after[1]["role"], "system");
    let date = texts(&after[1]).join("");
    assert!(date.starts_with("Today's date is 20") && date.ends_with('.'), "{date}");
    assert_eq!(after[2]["role"], "assistant");
    let tail = texts(&after[3]);
    assert_eq!(tail[0], "tool_result:toolu_02GREP");
    assert_eq!(tail[1], "<system-reminder>\nCalled the Read tool with the following input: {\"file_path\":\"src/auth/login.ts\"}\n</system-reminder>\n");
    assert!(
        tail[2].starts_with("<system-reminder>\nResult of calling the Read tool:\n1\texport interface Credentials {"),
        "{}",
        tail[2]
    );
    assert!(tail[2].ends_with("\n</system-reminder>"));
    assert_eq!(
        status_lines(&r),
        [
            json!({"status": "compacting", "compact_output_chars": 0}),
            json!({"status": null, "compact_result": "success"})
        ]
    );
    assert!(r.replays_identical());
    // A session recorded before this shape existed (flag 4 off) replays under reloop's shape:
    // flipping the flag shows exactly where the two differ.
    let flipped = r.ws.reloop(&["replay", "last", "--flip-flag", "4"]);
    assert_eq!(flipped.status.code(), Some(3), "{}", common::stdout(&flipped));
}

/// e4: the summary request is itself too long.
fn e4() -> Vec<Canned> {
    let mut answers = e3();
    answers.truncate(3);
    answers.extend(std::iter::repeat_with(too_long).take(6));
    answers
}

#[test]
fn a_summary_request_too_long_is_sent_again_head_cut_in_2_1_332_only() {
    let old = run(V197, e4(), &[], |_| Vec::new());
    assert_eq!(old.requests.len(), 4, "one summary request, then the end");
    let new = run(V332, e4(), &[], |_| Vec::new());
    // Each of three shapes twice, as 2.1.332 sends them (flag 18).
    assert_eq!(new.requests.len(), 9, "the summary request twice, head cut twice, date last twice");
    assert_eq!(messages(&new, 4), messages(&new, 3), "the full request again");
    let cut = messages(&new, 5);
    assert_eq!(messages(&new, 6), cut);
    assert_eq!(texts(&cut[0]), ["[earlier conversation truncated for compaction retry]"]);
    assert_eq!(cut[1]["role"], "system");
    assert!(texts(&cut[1]).join("").starts_with("Today's date is "));
    assert_eq!(cut[2]["role"], "assistant");
    // The history's last exchange, which the full request left out.
    assert_eq!(texts(&cut[3])[0], "tool_result:toolu_02GREP");
    assert!(texts(&cut[3])[1].starts_with(CRITICAL));
    let last = messages(&new, 7);
    assert_eq!(messages(&new, 8), last);
    assert_eq!((last[1]["role"].as_str(), last[1]["content"].as_array().map(Vec::len)), (Some("system"), Some(0)));
    assert!(texts(&last[4]).join("").starts_with("Today's date is "), "the date last");
    for r in [&old, &new] {
        assert_eq!(r.result()["terminal_reason"], "prompt_too_long");
        assert_eq!(r.result()["result"], "Prompt is too long");
        assert_eq!(
            status_lines(r).last().unwrap(),
            &json!({"status": null, "compact_result": "failed", "compact_error": "exhausted"})
        );
        assert_eq!(r.code, Some(1));
        assert!(r.replays_identical());
    }
    let why = new.ws.reloop(&["why", "last"]);
    let why = common::stdout(&why);
    assert!(why.contains("sent again with its head cut to the last exchange"), "{why}");
}

#[test]
fn reloop_s_own_profile_keeps_its_summary_request_and_prints_no_status_lines() {
    let r = run("reloop", e3(), &[], |_| Vec::new());
    assert_eq!(r.requests.len(), 5);
    let summary = &r.requests[3].body;
    assert!(summary.get("tools").is_none(), "no tools on reloop's summary request");
    let sent = messages(&r, 3);
    assert_eq!(sent.len(), 4, "the prefix and the instruction as a user message of its own");
    assert!(texts(&sent[3])[0].starts_with("Your task is to write a detailed summary"));
    assert_eq!(messages(&r, 4).len(), 3, "summary, then the kept pair; nothing re-attached");
    assert!(status_lines(&r).is_empty());
    assert!(r.replays_identical());
}

#[test]
fn after_a_compaction_2_1_197_reads_a_file_again_instead_of_calling_it_wasted() {
    let mut answers = e3();
    answers.pop();
    answers.push(answer(
        "msg_3",
        json!([call("toolu_03READ", "Read", json!({"file_path": "src/auth/login.ts"}))]),
        "tool_use",
    ));
    answers.push(answer("msg_4", text("done"), "end_turn"));
    let r = run(V197, answers, &[], |_| Vec::new());
    let last = messages(&r, 5).last().unwrap().clone();
    let result = &last["content"][0];
    assert_eq!(result["tool_use_id"], "toolu_03READ");
    assert!(result["content"].as_str().unwrap().starts_with("1\texport interface Credentials {"), "{result}");
    assert!(r.replays_identical());
}
