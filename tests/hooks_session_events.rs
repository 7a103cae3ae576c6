//! The session events' hooks (SessionStart, UserPromptSubmit, SessionEnd; flag 10) end to end
//! through `reloop -p`, against the recordings of the real Claude Code under
//! `tests/print/recorded/<version>/hooks_events/`: each scenario's files, settings and model
//! answers are played again on reloop, and what the hooks read, what the model is sent and what
//! the caller is shown are held to what Claude Code did. Every session replays identically, and
//! its replayed stream has the live one's lines.

mod common;

use common::fake_server::{sse_from_message, Canned, FakeServer};
use common::hooks_play::{
    json_lines, keys, kind, kinds, play, recorded_dir, same_paths, session_events, PROMPT, VERSIONS,
};
use common::Workspace;
use serde_json::{json, Value};

#[test]
fn session_start_and_user_prompt_submit_read_claude_code_s_input_and_add_its_context() {
    for version in VERSIONS {
        let played = play(version, "context");
        // The lines in Claude Code's order: SessionStart's two hook lines before system/init,
        // `UserPromptSubmit says:` (2.1.332) before the first answer.
        assert_eq!(kinds(&played.lines), kinds(&played.recorded), "{version}: {:#?}", played.lines);
        let says = |lines: &[Value]| -> Vec<String> {
            lines.iter().filter(|l| kind(l) == "system/informational").map(|l| l["content"].to_string()).collect()
        };
        assert_eq!(says(&played.lines), says(&played.recorded), "{version}");
        let hook_response = |lines: &[Value]| -> Value {
            let line = lines.iter().find(|l| kind(l) == "system/hook_response").unwrap().clone();
            json!([
                line["hook_name"],
                line["hook_event"],
                line["output"],
                line["stdout"],
                line["exit_code"],
                line["outcome"]
            ])
        };
        assert_eq!(hook_response(&played.lines), hook_response(&played.recorded), "{version}");
        let started = played.lines.iter().find(|l| kind(l) == "system/hook_started").unwrap();
        assert_eq!(started["hook_id"], played.lines[1]["hook_id"], "{version}: one id for both lines");
        // The hooks read Claude Code's input, key for key.
        let events = |inputs: &[Value]| -> Vec<String> {
            inputs.iter().map(|i| i["hook_event_name"].as_str().unwrap().to_string()).collect()
        };
        assert_eq!(events(&played.inputs), events(&played.recorded_inputs), "{version}");
        for (ours, theirs) in played.inputs.iter().zip(&played.recorded_inputs) {
            // The session events' inputs; the tool events' differ as docs/settings.md says.
            if ["SessionStart", "UserPromptSubmit", "SessionEnd"].contains(&ours["hook_event_name"].as_str().unwrap()) {
                assert_eq!(keys(ours), keys(theirs), "{version}: {ours}");
            }
        }
        assert_eq!(played.inputs[0]["source"], "startup");
        assert_eq!(played.inputs[1]["prompt"], PROMPT);
        // SessionStart's context opens the system context; UserPromptSubmit's follows the prompt.
        let first = &played.requests[0];
        let system = first["system"].to_string();
        assert!(
            system.contains("SessionStart hook additional context: CTX-SessionStart-s\\n\\n"),
            "{version}: {system}"
        );
        let messages = first["messages"].as_array().unwrap();
        assert_eq!(messages[1]["role"], "system", "{version}: {messages:?}");
        assert!(
            messages[1].to_string().contains("UserPromptSubmit hook additional context: CTX-UserPromptSubmit-s"),
            "{version}: {messages:?}"
        );
        // PostToolUse's context follows the Read's result where the version puts it (flag 36):
        // what comes after the result, in roles and texts, is what Claude Code sent.
        let recorded_requests: Vec<Value> =
            json_lines(&std::fs::read_to_string(recorded_dir(version, "context").join("requests.jsonl")).unwrap())
                .into_iter()
                .map(|r| r["body"].clone())
                .collect();
        let after_result = |request: &Value| -> Vec<(String, String)> {
            let messages = request["messages"].as_array().unwrap();
            let at = messages.iter().position(|m| m.to_string().contains("\"tool_result\"")).unwrap();
            let mut out = Vec::new();
            for m in &messages[at..] {
                let blocks = match &m["content"] {
                    Value::Array(blocks) => blocks.clone(),
                    text => vec![json!({"type": "text", "text": text})],
                };
                for b in blocks.iter().filter(|b| b["type"] == "text") {
                    out.push((
                        m["role"].as_str().unwrap().to_string(),
                        b["text"].as_str().unwrap_or_default().to_string(),
                    ));
                }
            }
            out
        };
        let expected = after_result(&recorded_requests[1]);
        assert!(expected
            .iter()
            .any(|(_, t)| t.contains("PostToolUse:Read hook additional context: CTX-PostToolUse-s")));
        assert_eq!(after_result(&played.requests[1]), expected, "{version}");
        assert!(played.replays_identical, "{version}");
        assert_eq!(kinds(&played.replayed), kinds(&played.lines), "{version}: the replayed stream");
    }
}

/// A UserPromptSubmit hook answering as a SessionStart one (`hooks_events/prompt_wrong_event`):
/// both versions take it as the hook's error and ask the model without its context (flag 39).
#[test]
fn a_hook_answer_naming_another_event_adds_no_context() {
    for version in VERSIONS {
        let played = play(version, "prompt_wrong_event");
        let recorded: Vec<Value> = json_lines(
            &std::fs::read_to_string(recorded_dir(version, "prompt_wrong_event").join("requests.jsonl")).unwrap(),
        );
        assert!(!recorded[0].to_string().contains("WRONG-CTX"), "{version}: the recording");
        assert_eq!(played.requests.len(), recorded.len(), "{version}");
        assert!(!played.requests[0].to_string().contains("WRONG-CTX"), "{version}: {}", played.requests[0]);
        assert_eq!(played.inputs[0]["hook_event_name"], "UserPromptSubmit", "{version}: the hook ran");
        assert_eq!(kinds(&played.lines), kinds(&played.recorded), "{version}");
        assert!(played.replays_identical, "{version}");
    }
}

#[test]
fn plain_stdout_of_session_start_and_user_prompt_submit_is_context_too() {
    for version in VERSIONS {
        let played = play(version, "plain");
        assert_eq!(kinds(&played.lines), kinds(&played.recorded), "{version}: {:#?}", played.lines);
        let first = &played.requests[0];
        let system = first["system"].to_string();
        assert!(system.contains("SessionStart:startup hook success: PLAIN-STDOUT-SessionStart-s\\n\\n"), "{version}");
        assert!(
            first["messages"].to_string().contains("UserPromptSubmit hook success: PLAIN-STDOUT-UserPromptSubmit-s"),
            "{version}"
        );
        assert!(played.replays_identical, "{version}");
        assert_eq!(kinds(&played.replayed), kinds(&played.lines), "{version}: the replayed stream");
    }
}

#[test]
fn a_user_prompt_submit_block_or_stop_ends_the_query_before_any_request() {
    for version in VERSIONS {
        for scenario in ["prompt_block", "prompt_exit2", "prompt_stop"] {
            let played = play(version, scenario);
            let what = format!("{version} {scenario}");
            assert!(played.requests.is_empty(), "{what}: no request");
            assert_eq!(kinds(&played.lines), kinds(&played.recorded), "{what}: {:#?}", played.lines);
            let shown = |lines: &[Value]| -> Value {
                let info = lines.iter().find(|l| kind(l) == "system/informational").unwrap();
                let result = lines.last().unwrap();
                let text = |v: &Value| json!(same_paths(v.as_str().unwrap_or_default(), &played.hooks_dir));
                json!([
                    text(&info["content"]),
                    info["level"],
                    info["prevent_continuation"],
                    info["prompt_submit_outcome"],
                    result["subtype"],
                    result["is_error"],
                    text(&result["result"]),
                    result["num_turns"]
                ])
            };
            assert_eq!(shown(&played.lines), shown(&played.recorded), "{what}");
            assert!(played.replays_identical, "{what}");
            assert_eq!(kinds(&played.replayed), kinds(&played.lines), "{what}: the replayed stream");
        }
    }
}

/// The text blocks of a request's last message, joined.
fn last_message_text(request: &Value) -> String {
    let last = request["messages"].as_array().unwrap().last().unwrap().clone();
    match &last["content"] {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join(""),
        _ => String::new(),
    }
}

#[test]
fn subagent_start_and_a_blocking_subagent_stop_run_as_claude_code_runs_them() {
    for version in VERSIONS {
        let played = play(version, "subagent_stop_block");
        let events = |inputs: &[Value]| -> Vec<Value> {
            inputs
                .iter()
                .map(|i| json!([i["hook_event_name"], i["stop_hook_active"], i["last_assistant_message"]]))
                .collect()
        };
        assert_eq!(events(&played.inputs), events(&played.recorded_inputs), "{version}");
        // Claude Code's keys, less those Stop's input lacks too (docs/settings.md).
        let subagent_keys = |input: &Value| -> Vec<String> {
            keys(input).into_iter().filter(|k| k != "background_tasks" && k != "session_crons").collect()
        };
        for (ours, theirs) in played.inputs.iter().zip(&played.recorded_inputs) {
            assert_eq!(subagent_keys(ours), subagent_keys(theirs), "{version}: {ours}");
        }
        // The subagent's hooks name the calling session and one agent id.
        assert_eq!(played.inputs[0]["session_id"], played.inputs[2]["session_id"]);
        assert_eq!(played.inputs[0]["agent_id"], played.inputs[1]["agent_id"]);
        assert_eq!(played.inputs[1]["agent_type"], "general-purpose");
        // The block is fed back to the subagent as a Stop hook's is, in the version's words.
        let dir = recorded_dir(version, "subagent_stop_block");
        let recorded_requests: Vec<Value> = json_lines(&std::fs::read_to_string(dir.join("requests.jsonl")).unwrap())
            .into_iter()
            .map(|r| r["body"].clone())
            .collect();
        assert_eq!(played.requests.len(), recorded_requests.len(), "{version}");
        assert_eq!(
            same_paths(&last_message_text(&played.requests[2]), &played.hooks_dir),
            last_message_text(&recorded_requests[2]),
            "{version}"
        );
        assert!(played.replays_identical, "{version}");
        assert_eq!(kinds(&played.replayed), kinds(&played.lines), "{version}: the replayed stream");
    }
}

#[test]
fn a_stream_json_session_starts_once_submits_each_prompt_and_ends_once() {
    for version in VERSIONS {
        let played = play(version, "stream");
        let events = |inputs: &[Value]| -> Vec<Value> {
            inputs.iter().map(|i| json!([i["hook_event_name"], i["source"], i["prompt"], i["reason"]])).collect()
        };
        assert_eq!(events(&played.inputs), events(&played.recorded_inputs), "{version}");
        for (ours, theirs) in played.inputs.iter().zip(&played.recorded_inputs) {
            if ["SessionStart", "UserPromptSubmit", "SessionEnd"].contains(&ours["hook_event_name"].as_str().unwrap()) {
                assert_eq!(keys(ours), keys(theirs), "{version}: {ours}");
            }
        }
        assert_eq!(kinds(&played.lines), kinds(&played.recorded), "{version}: {:#?}", played.lines);
        assert!(played.replays_identical, "{version}");
        assert_eq!(kinds(&played.replayed), kinds(&played.lines), "{version}: the replayed stream");
    }
}

/// `/compact` typed between queries runs the PreCompact hooks first (`trigger: "manual"`,
/// `custom_instructions: null`, Claude Code's keys), and the compaction's note names each:
/// `Compacted PreCompact [COMMAND] completed successfully`, as both versions print it. The
/// session replays identical, the note too.
#[test]
fn pre_compact_hooks_run_before_a_compaction_by_hand_and_name_themselves_in_its_note() {
    for version in VERSIONS {
        let played = play(version, "settings_slash/stream_compact");
        let ours: Vec<&Value> = played.inputs.iter().filter(|i| i["hook_event_name"] == "PreCompact").collect();
        let theirs: Vec<&Value> =
            played.recorded_inputs.iter().filter(|i| i["hook_event_name"] == "PreCompact").collect();
        assert_eq!(ours.len(), 1, "{version}: {:#?}", played.inputs);
        assert_eq!(keys(ours[0]), keys(theirs[0]), "{version}");
        assert_eq!(ours[0]["trigger"], theirs[0]["trigger"], "{version}");
        assert_eq!(ours[0]["custom_instructions"], Value::Null, "{version}");
        // It runs before the compaction's request, after the first query's.
        let before_compaction = played.inputs.iter().position(|i| i["hook_event_name"] == "PreCompact");
        let second_prompt = played.inputs.iter().rposition(|i| i["hook_event_name"] == "UserPromptSubmit");
        assert!(before_compaction < second_prompt, "{version}");
        let note = |lines: &[Value]| -> Vec<String> {
            lines
                .iter()
                .filter_map(|l| l["message"]["content"].as_str())
                .filter(|c| c.starts_with("<local-command-stdout>"))
                .map(|c| same_paths(c, &played.hooks_dir))
                .collect()
        };
        let expected = note(&played.recorded);
        assert_eq!(
            expected,
            ["<local-command-stdout>Compacted PreCompact [/tmp/reloop-cc-hooks/ev.sh PreCompact s log] completed successfully</local-command-stdout>"],
            "{version}"
        );
        assert_eq!(note(&played.lines), expected, "{version}");
        assert!(played.replays_identical, "{version}");
        assert_eq!(note(&played.replayed), expected, "{version}: the replayed stream");
    }
}

/// A PreCompact hook that blocks (`decision: "block"`) cancels the compaction by hand: no
/// summary request is made, and 2.1.332's lines say so (`compact_result` `failed`, `skipped:
/// Compaction blocked by PreCompact hook: [COMMAND]: REASON`, a `<synthetic>` assistant line and
/// the `result` of those words; 2.1.197 alike, its status without `skipped: `). The next prompt goes on with the conversation whole; the
/// session replays identical, those lines too.
#[test]
fn a_pre_compact_block_cancels_the_compaction_by_hand() {
    for version in VERSIONS {
        pre_compact_block_cancels(version);
    }
}

fn pre_compact_block_cancels(version: &str) {
    let played = play(version, "settings_slash/stream_compact_hooks");
    let pre_compact = |inputs: &[Value]| -> Vec<Vec<String>> {
        inputs.iter().filter(|i| i["hook_event_name"] == "PreCompact").map(keys).collect()
    };
    assert_eq!(pre_compact(&played.inputs), pre_compact(&played.recorded_inputs));
    assert_eq!(pre_compact(&played.inputs).len(), 2);
    let recorded_requests =
        std::fs::read_to_string(recorded_dir(version, "settings_slash/stream_compact_hooks").join("requests.jsonl"))
            .unwrap();
    assert_eq!(played.requests.len(), recorded_requests.lines().count(), "no summary request");
    assert_eq!(kinds(&played.lines), kinds(&played.recorded), "{:#?}", played.lines);
    let said = |lines: &[Value]| -> Vec<String> {
        lines
            .iter()
            .filter_map(|l| match kind(l).as_str() {
                "system/status" => l["compact_error"].as_str().map(str::to_string),
                "assistant" if l["message"]["model"] == "<synthetic>" => {
                    Some(l["message"]["content"][0]["text"].as_str().unwrap().to_string())
                }
                "result" => l["result"].as_str().filter(|r| r.starts_with("Compaction")).map(str::to_string),
                _ => None,
            })
            .map(|text| same_paths(&text, &played.hooks_dir))
            .collect()
    };
    let block = "Compaction blocked by PreCompact hook: [/tmp/reloop-cc-hooks/ev.sh PreCompact b block]: BLOCK-REASON-PreCompact-b";
    // 2.1.332 says the compaction was skipped; 2.1.197 gives the block's words alone.
    let status = if version == "2.1.332" { format!("skipped: {block}") } else { block.to_string() };
    assert_eq!(said(&played.recorded), [status, block.to_string(), block.to_string()], "{version}");
    let synthetic = |lines: &[Value]| -> Vec<Value> {
        let line = lines.iter().find(|l| l["message"]["model"] == "<synthetic>").unwrap();
        let mut keys: Vec<&String> = line.as_object().unwrap().keys().collect();
        keys.sort();
        json!([line["message"]["stop_reason"], line["message"]["stop_sequence"], keys]).as_array().unwrap().clone()
    };
    assert_eq!(synthetic(&played.lines), synthetic(&played.recorded), "{version}");
    assert_eq!(said(&played.lines), said(&played.recorded));
    assert!(played.replays_identical);
    assert_eq!(kinds(&played.replayed), kinds(&played.lines), "the replayed stream");
    assert_eq!(said(&played.replayed), said(&played.recorded));
}

/// A 2.1.332 stream-json session whose app registers the SDK hook callbacks `hooks` in
/// `initialize`: it asks "first question", then `second` once the first result is out, and
/// answers each `hook_callback` with `answer(input)`. Returns the server, the lines printed and
/// the callbacks' (id, input), once the second query has its result.
fn with_callbacks(
    ws: &Workspace,
    hooks: Value,
    second: &str,
    answer: impl Fn(&Value) -> Value,
) -> (FakeServer, Vec<Value>, Vec<(Value, Value)>) {
    use std::io::Write;
    let server = FakeServer::start(vec![Canned::Sse(sse_from_message(&json!({"id": "m1", "type": "message",
        "role": "assistant", "model": "m", "content": [{"type": "text", "text": "FIRST"}], "stop_reason": "end_turn",
        "stop_sequence": null, "usage": {"input_tokens": 1, "output_tokens": 1}})))]);
    let args = ["--output-format", "stream-json", "--verbose", "--input-format", "stream-json"];
    let mut child = ws
        .command(&args)
        .args(["--compat", "claude-code-2.1.332"])
        .env("ANTHROPIC_BASE_URL", &server.url)
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("HOME", ws.dir.path())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let (rx, reader) = common::json_line_reader(child.stdout.take().unwrap());
    let mut send = |line: Value| writeln!(stdin, "{line}").unwrap();
    let user = |text: &str| json!({"type": "user", "session_id": "", "message": {"role": "user", "content": text}, "parent_tool_use_id": null});
    send(
        json!({"type": "control_request", "request_id": "init", "request": {"subtype": "initialize", "hooks": hooks}}),
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let (mut lines, mut inputs, mut results) = (Vec::new(), Vec::new(), 0);
    while let Ok(line) = rx.recv_timeout(deadline.saturating_duration_since(std::time::Instant::now())) {
        if line["type"] == "control_response" && line["response"]["request_id"] == "init" {
            send(user("first question"));
        }
        if line["type"] == "control_request" && line["request"]["subtype"] == "hook_callback" {
            let input = line["request"]["input"].clone();
            let response = answer(&input);
            inputs.push((line["request"]["callback_id"].clone(), input));
            send(json!({"type": "control_response", "response": {"subtype": "success",
                "request_id": line["request_id"], "response": response}}));
        }
        if line["type"] == "result" {
            results += 1;
            if results == 1 {
                send(user(second));
            }
        }
        lines.push(line);
        if results == 2 {
            break;
        }
    }
    drop(stdin);
    let status = child.wait().unwrap();
    reader.join().unwrap();
    assert!(status.success());
    (server, lines, inputs)
}

/// The SDK's hook callbacks (`initialize`'s `hooks`, answered over `hook_callback`) of the session
/// events run where command hooks do: SessionStart before the first prompt, UserPromptSubmit
/// before each, their answers read as a command's stdout. A callback's block ends the query
/// before any request, and the session replays with no SDK.
#[test]
fn sdk_hook_callbacks_of_session_events_run_and_a_prompt_block_ends_the_query() {
    let ws = Workspace::seed();
    let hooks = json!({"SessionStart": [{"hookCallbackIds": ["start"]}],
        "UserPromptSubmit": [{"hookCallbackIds": ["submit"]}]});
    // The second prompt is blocked; everything else passes.
    let (server, lines, inputs) = with_callbacks(&ws, hooks, "forbidden question", |input| {
        if input["prompt"] == "forbidden question" {
            json!({"decision": "block", "reason": "NOT-THIS-ONE"})
        } else {
            json!({})
        }
    });
    let called: Vec<Value> =
        inputs.iter().map(|(id, i)| json!([id, i["hook_event_name"], i["source"], i["prompt"]])).collect();
    assert_eq!(
        called,
        [
            json!(["start", "SessionStart", "startup", null]),
            json!(["submit", "UserPromptSubmit", null, "first question"]),
            json!(["submit", "UserPromptSubmit", null, "forbidden question"])
        ]
    );
    assert_eq!(server.requests().len(), 1, "the blocked prompt is never sent");
    let last = lines.last().unwrap();
    assert_eq!(
        last["result"],
        "UserPromptSubmit operation blocked by hook:\nNOT-THIS-ONE\n\nOriginal prompt: forbidden question"
    );
    assert_eq!(last["num_turns"], 0);
    let info = lines.iter().rev().find(|l| kind(l) == "system/informational").unwrap();
    assert_eq!(info["prompt_submit_outcome"]["kind"], "blocked_by_hook");
    assert!(ws.replays_identical());
}

/// An SDK PreCompact callback runs before `/compact` typed between queries, as a command hook
/// does (`trigger: "manual"`), and its block cancels the compaction: no summary request.
#[test]
fn an_sdk_pre_compact_callback_runs_before_compact_and_its_block_cancels_it() {
    let ws = Workspace::seed();
    let hooks = json!({"PreCompact": [{"hookCallbackIds": ["compact"]}]});
    let (server, lines, inputs) =
        with_callbacks(&ws, hooks, "/compact", |_| json!({"decision": "block", "reason": "NO-COMPACT"}));
    let called: Vec<Value> =
        inputs.iter().map(|(_, i)| json!([i["hook_event_name"], i["trigger"], i["custom_instructions"]])).collect();
    assert_eq!(called, [json!(["PreCompact", "manual", null])]);
    assert_eq!(server.requests().len(), 1, "the blocked compaction asks for no summary");
    let last = lines.last().unwrap()["result"].as_str().unwrap().to_string();
    assert!(last.starts_with("Compaction blocked by PreCompact hook: [") && last.ends_with("]: NO-COMPACT"), "{last}");
    assert!(ws.replays_identical());
}

/// An automatic compaction runs the hooks Claude Code runs around it (flag 21): PreCompact with
/// `trigger: "auto"` before the summary request, then SessionStart with `source: "compact"` and
/// the model's name, whose lines (`SessionStart:compact`) come between `compacting` and
/// `compact_result`, as both versions print them. The session replays identical, those lines
/// too.
#[test]
fn an_automatic_compaction_runs_pre_compact_and_session_start_as_claude_code_does() {
    for version in VERSIONS {
        let played = play(version, "sdk36/auto_compact_hooks");
        let events = |inputs: &[Value]| -> Vec<Value> {
            inputs.iter().map(|i| json!([i["hook_event_name"], i["trigger"], i["source"], i["model"]])).collect()
        };
        assert_eq!(events(&played.inputs), events(&played.recorded_inputs), "{version}");
        let keyed = |inputs: &[Value]| inputs.iter().map(keys).collect::<Vec<_>>();
        assert_eq!(keyed(&played.inputs), keyed(&played.recorded_inputs), "{version}");
        // PreCompact runs before the summary request: the requests before it are the main three.
        let hooks = |lines: &[Value]| -> Vec<String> {
            lines
                .iter()
                .filter(|l| l["subtype"] == "status" || l["subtype"].as_str().is_some_and(|s| s.starts_with("hook_")))
                .map(|l| format!("{} {} {}", kind(l), l["hook_name"], l["compact_result"]))
                .collect()
        };
        assert_eq!(hooks(&played.lines), hooks(&played.recorded), "{version}");
        assert_eq!(played.requests.len(), 5, "{version}: three answers, the summary, the answer after it");
        assert!(played.replays_identical, "{version}");
        assert_eq!(hooks(&played.replayed), hooks(&played.recorded), "{version}: the replayed stream");
    }
}

/// A compaction by hand runs the SessionStart hooks of `source: "compact"` too (flag 21), its
/// lines between `compacting` and `compact_result`, as recorded.
#[test]
fn a_compaction_by_hand_runs_session_start_compact_as_claude_code_does() {
    for version in VERSIONS {
        let played = play(version, "settings_slash/stream_compact");
        let starts = |inputs: &[Value]| -> Vec<Value> {
            inputs
                .iter()
                .filter(|i| i["hook_event_name"] == "SessionStart")
                .map(|i| json!([i["source"], i["model"], keys(i)]))
                .collect()
        };
        assert_eq!(starts(&played.inputs), starts(&played.recorded_inputs), "{version}");
        let lines = |lines: &[Value]| -> Vec<String> {
            lines
                .iter()
                .filter(|l| l["subtype"] == "status" || l["subtype"].as_str().is_some_and(|s| s.starts_with("hook_")))
                .map(|l| format!("{} {} {}", kind(l), l["hook_name"], l["compact_result"]))
                .collect()
        };
        assert_eq!(lines(&played.lines), lines(&played.recorded), "{version}");
        assert!(played.replays_identical, "{version}");
    }
}

/// `--include-hook-events`: every hook prints its `hook_started` / `hook_response` lines where
/// Claude Code prints them (UserPromptSubmit's before `system/init`, a tool's hooks named
/// `PreToolUse:Read` before its result's line, Stop's before the result), both versions alike;
/// SessionEnd's print none, nor do PreCompact's, by hand or automatic (`sdk36/compact_hook_events`,
/// `sdk36/auto_compact_hook_events`: only the SessionStart `compact` lines); the replayed stream
/// prints them too.
#[test]
fn include_hook_events_prints_every_hook_s_lines_as_claude_code_does() {
    let scenarios = [
        "sdk36/include_hook_events",
        "hooks_events/include_hook_events",
        "sdk36/compact_hook_events",
        "sdk36/auto_compact_hook_events",
    ];
    for (version, scenario) in VERSIONS.into_iter().flat_map(|v| scenarios.map(|s| (v, s))) {
        let version = format!("{version} {scenario}");
        let played = play(version.split(' ').next().unwrap(), scenario);
        let shown = |lines: &[Value]| -> Vec<String> {
            lines
                .iter()
                .map(|l| match l["hook_name"].as_str() {
                    Some(name) => format!("{} {name} {} {}", kind(l), l["hook_event"], l["outcome"]),
                    None => kind(l),
                })
                .collect()
        };
        assert_eq!(shown(&played.lines), shown(&played.recorded), "{version}");
        let response = |lines: &[Value]| -> Vec<Value> {
            lines
                .iter()
                .filter(|l| l["subtype"] == "hook_response")
                .map(|l| json!([l["output"], l["stdout"], l["stderr"], l["exit_code"]]))
                .collect()
        };
        assert_eq!(response(&played.lines), response(&played.recorded), "{version}");
        assert!(played.replays_identical, "{version}");
        assert_eq!(shown(&played.replayed), shown(&played.recorded), "{version}: the replayed stream");
    }
}

/// A subagent's tool hooks are told what Claude Code tells them: the calling session's
/// `session_id`, then the subagent's `agent_id` and `agent_type` after `permission_mode`
/// (`all_log`, both versions); the main thread's tool hooks name no agent.
#[test]
fn a_subagent_s_tool_hooks_name_the_subagent_as_claude_code_s_do() {
    for version in VERSIONS {
        let played = play(version, "all_log");
        // The tool events (a PermissionRequest is no settings hook reloop runs; this workspace
        // has no logout.ts, so the subagent's Read fails: PostToolUseFailure, not PostToolUse).
        let in_agent = |inputs: &[Value]| -> Vec<Value> {
            inputs
                .iter()
                .filter(|i| i["tool_name"].is_string() && i["hook_event_name"] != "PermissionRequest")
                .map(|i| {
                    let event = i["hook_event_name"].as_str().unwrap().trim_end_matches("Failure");
                    json!([event, i["tool_name"], i["agent_type"], i.get("agent_id").is_some()])
                })
                .collect()
        };
        let ours = in_agent(&played.inputs);
        assert_eq!(ours, in_agent(&played.recorded_inputs), "{version}");
        assert!(ours.iter().any(|i| i[3] == true), "{version}: the subagent's Read ran hooks");
        let parent = played.inputs[0]["session_id"].clone();
        let started = played.inputs.iter().find(|i| i["hook_event_name"] == "SubagentStart").unwrap();
        for input in played.inputs.iter().filter(|i| i["tool_name"].is_string() && i.get("agent_id").is_some()) {
            assert_eq!(input["session_id"], parent, "{version}: {input}");
            assert_eq!(input["agent_id"], started["agent_id"], "{version}: {input}");
            if input["hook_event_name"] != "PreToolUse" {
                continue;
            }
            let ours: Vec<String> = keys(input).into_iter().filter(|k| k != "duration_ms").collect();
            let theirs = played
                .recorded_inputs
                .iter()
                .find(|i| i["hook_event_name"] == input["hook_event_name"] && i.get("agent_id").is_some())
                .unwrap();
            let theirs: Vec<String> = keys(theirs).into_iter().filter(|k| k != "duration_ms").collect();
            assert_eq!(ours, theirs, "{version}");
        }
        assert!(played.replays_identical, "{version}");
    }
}

/// `/clear` as the first prompt (`settings_slash/clear`): the session the process started runs
/// its SessionStart (`startup`) and SessionEnd (`clear`) hooks, the one the `/clear` begins its
/// SessionStart (`clear`) at once and its SessionEnd (`other`) when the input ends, as both
/// versions do (flag 38); every line in Claude Code's order, each session's hook lines with its
/// id. Both sessions are journaled and replay identical.
#[test]
fn a_first_prompt_clear_runs_both_sessions_hooks() {
    for version in VERSIONS {
        let played = play(version, "settings_slash/clear");
        assert_eq!(session_events(&played.inputs), session_events(&played.recorded_inputs), "{version}");
        assert_eq!(kinds(&played.lines), kinds(&played.recorded), "{version}");
        // Which lines carry the first session's id.
        let first_session = |lines: &[Value]| -> Vec<bool> {
            lines.iter().map(|l| l["session_id"] == lines[0]["session_id"]).collect()
        };
        assert_eq!(first_session(&played.lines), first_session(&played.recorded), "{version}");
        assert!(played.replays_identical, "{version}");
        // The last session's replay: its SessionStart lines, then the `/clear`'s.
        let from = played.lines.iter().rposition(|l| l["subtype"] == "hook_started").unwrap();
        assert_eq!(kinds(&played.replayed), kinds(&played.lines[from..]), "{version}: the new session's replay");
    }
}

/// `/clear` between queries (`settings_slash/stream_clear`): the session it ends runs its
/// SessionEnd hooks with `reason: "clear"`, and the one it begins starts at once (flag 38): its
/// SessionStart hooks run with `source: "clear"`, their lines (`SessionStart:clear`) before the
/// `/clear`'s `system/init` and `result`, every line in Claude Code's order. The new session's
/// replay prints its lines as the live run did.
#[test]
fn a_clear_between_queries_ends_and_starts_sessions_with_the_clear_hooks() {
    for version in VERSIONS {
        let played = play(version, "settings_slash/stream_clear");
        assert_eq!(session_events(&played.inputs), session_events(&played.recorded_inputs), "{version}");
        let names = |lines: &[Value]| -> Vec<String> {
            let mut names: Vec<String> = lines
                .iter()
                .filter(|l| l["subtype"] == "hook_started")
                .map(|l| l["hook_name"].as_str().unwrap().to_string())
                .collect();
            names.sort();
            names
        };
        assert_eq!(names(&played.lines), names(&played.recorded), "{version}");
        assert_eq!(kinds(&played.lines), kinds(&played.recorded), "{version}");
        assert!(played.replays_identical, "{version}");
        assert_eq!(names(&played.replayed), ["SessionStart:clear"], "{version}: the new session's replayed stream");
        // The new session's part of the live stream: from its SessionStart lines on.
        let from = played.lines.iter().rposition(|l| l["subtype"] == "hook_started").unwrap();
        assert_eq!(kinds(&played.replayed), kinds(&played.lines[from..]), "{version}: the new session's replay");
    }
}
