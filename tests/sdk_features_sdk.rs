//! Issue 36's SDK features through the real Agent SDKs (tests/sdk/scenario.py and .mjs, as
//! tests/sdk.rs runs them): structured output (`output_format` / `outputFormat`), SDK-defined
//! agents sent in `initialize`, and model aliases, each against a fake server on 127.0.0.1 that
//! refuses an alias as the real API does (by answering only what the test scripted for ids).

mod common;
#[path = "sdk/harness.rs"]
#[allow(dead_code)] // the harness serves tests/sdk.rs too; these tests use part of it
mod harness;

use common::call;
use harness::{answer, Scenario, Sdk};
use serde_json::{json, Value};

fn final_structured(id: &str) -> Value {
    json!([call(id, "StructuredOutput", json!({"file": "a.txt", "issues": 0}))])
}

#[test]
fn python_output_format_comes_back_as_structured_output() {
    let Some(s) = Scenario::start(|_| {
        vec![
            answer("m1", json!([call("toolu_s1", "StructuredOutput", json!({"file": "a.txt"}))]), "tool_use", 5),
            answer("m2", final_structured("toolu_s2"), "tool_use", 5),
        ]
    }) else {
        return;
    };
    let run = s.run(Sdk::Python, "structured").ok();
    let result = run.result();
    assert_eq!(result["structured_output"], json!({"file": "a.txt", "issues": 0}), "{}", run.dump());
    assert_eq!(result["is_error"], false);
    let errors: Vec<Value> = run.tool_results().into_iter().filter(|r| r["is_error"] == true).collect();
    assert_eq!(errors.len(), 1, "{}", run.dump());
    assert!(errors[0]["content"].to_string().contains("root: must have required property 'issues'"));
    let requests = s.requests();
    assert_eq!(requests.len(), 2);
    let tool = requests[0].body["tools"].as_array().unwrap().iter().find(|t| t["name"] == "StructuredOutput").cloned();
    assert_eq!(tool.unwrap()["input_schema"]["required"], json!(["file", "issues"]));
    s.assert_replays_and_explains(&run.session_id());
}

/// The parent (model `sonnet`) hands the review to the SDK's `reviewer` (model `haiku`), which
/// reads a.txt; the parent then answers through StructuredOutput when the SDK asked for it.
fn agents_answers(structured: bool) -> Vec<common::fake_server::Canned> {
    let mut answers = vec![
        answer(
            "m1",
            json!([call(
                "toolu_agent",
                "Agent",
                json!({"description": "Review a.txt", "subagent_type": "reviewer",
            "prompt": "Read a.txt and report.", "run_in_background": false})
            )]),
            "tool_use",
            5,
        ),
        answer("s1", json!([call("toolu_read", "Read", json!({"file_path": "a.txt"}))]), "tool_use", 5),
        answer("s2", json!([{"type": "text", "text": "REVIEW: fine"}]), "end_turn", 5),
    ];
    answers.push(if structured {
        answer("m2", final_structured("toolu_out"), "tool_use", 5)
    } else {
        answer("m2", json!([{"type": "text", "text": "done"}]), "end_turn", 5)
    });
    answers
}

fn assert_agents_ran(s: &Scenario, run: &harness::Run) {
    let requests = s.requests();
    assert_eq!(requests.len(), 4, "{}", run.dump());
    // Aliases never reach the API: the profile's ids do (claude-code-2.1.332 by default).
    assert_eq!(requests[0].body["model"], "claude-sonnet-5-5");
    assert_eq!(requests[1].body["model"], "claude-haiku-5-5");
    assert_eq!(harness::tool_names(&requests[1]), ["Read"]);
    assert!(harness::system_text(&requests[1]).contains("You are a strict reviewer."));
    let child: Vec<&Value> = run.messages().into_iter().filter(|m| m["parent_tool_use_id"] == "toolu_agent").collect();
    assert!(!child.is_empty(), "the child's lines carry the parent's call: {}", run.dump());
    let init = &run.inits()[0];
    let agents = init.get("agents").or_else(|| init.get("data").and_then(|d| d.get("agents")));
    assert!(agents.is_some_and(|a| a.to_string().contains("reviewer")), "{init}");
    s.assert_replays_and_explains(&run.session_id());
}

/// The child's text lines in the parent's stream: none unless the app asked for them.
fn child_texts(run: &harness::Run) -> Vec<Value> {
    run.messages()
        .into_iter()
        .filter(|m| m["parent_tool_use_id"] == "toolu_agent" && m["type"] == "assistant")
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "text")
        .collect()
}

#[test]
fn python_agents_run_on_their_own_model_and_tools() {
    let Some(s) = Scenario::start(|_| agents_answers(false)) else { return };
    let run = s.run(Sdk::Python, "sdk_agents").ok();
    assert_agents_ran(&s, &run);
    assert_eq!(run.result()["result"], "done");
    assert_eq!(child_texts(&run), Vec::<Value>::new(), "{}", run.dump());
}

#[test]
fn forward_subagent_text_shows_the_childs_answer_attributed_to_the_call_live_and_replayed() {
    let Some(s) = Scenario::start(|_| agents_answers(false)) else { return };
    let run = s.run(Sdk::Python, "sdk_agents_forwarded").ok();
    assert_agents_ran(&s, &run);
    assert_eq!(child_texts(&run), vec![json!({"type": "text", "text": "REVIEW: fine"})], "{}", run.dump());
}

#[test]
fn ts_output_format_and_agents_with_aliases_as_the_demos_pass_them() {
    let Some(s) = Scenario::start(|_| agents_answers(true)) else { return };
    let run = s.run(Sdk::Ts, "structured_agents").ok();
    assert_agents_ran(&s, &run);
    assert_eq!(run.result()["structured_output"], json!({"file": "a.txt", "issues": 0}), "{}", run.dump());
}

#[test]
fn a_session_store_holds_the_session_and_its_subagent_attributed_to_the_call() {
    let Some(s) = Scenario::start(|_| agents_answers(false)) else { return };
    let run = s.run(Sdk::Python, "session_store").ok();
    assert_agents_ran(&s, &run);
    let store = run.lines.iter().find_map(|l| l.get("store")).unwrap_or_else(|| panic!("{}", run.dump()));
    // The store's copy of the session reads as the session file does: prompt, answers, results.
    let main: Vec<&str> = store["main"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(main.starts_with(&["user", "assistant", "user"]) && main.ends_with(&["assistant"]), "{store}");
    // The subagent's messages come back attributed to the Agent call that spawned it.
    let subagents = store["subagents"].as_object().unwrap();
    assert_eq!(subagents.len(), 1, "{store}");
    assert_eq!(subagents.values().next().unwrap(), &json!(["toolu_agent"]), "{store}");
}
