//! reloop as the CLI behind the official Claude Agent SDKs.
//!
//! Each test runs a scenario driver (`tests/sdk/scenario.py` with the real Python SDK,
//! `tests/sdk/scenario.mjs` with the real TypeScript SDK) whose `cli_path` /
//! `pathToClaudeCodeExecutable` is the reloop binary, with a fake Anthropic server on 127.0.0.1
//! answering the model requests. The assertions are what the real Claude Code CLI does in the same
//! scenario (recordings in /work/shared/fixtures/real/claude-agent-sdk/): the messages the SDK
//! yields, the requests sent to the model, and then that the session replays identically and
//! `reloop why` explains it.
//!
//! The SDKs come from `bash scripts/sdk-setup.sh` (into target/sdk), found through
//! `RELOOP_SDK_DIR`. Without them the tests print a notice and pass, unless `RELOOP_REQUIRE_SDK=1`
//! (set by scripts/test.sh), which makes them fail.

mod common;
#[path = "sdk/harness.rs"]
mod harness;

use std::path::Path;

use common::{call, text};
use harness::*;
use serde_json::{json, Value};

// --- scenarios shared by both SDKs ------------------------------------------------------------

/// `query("read a.txt")`: the model calls Read, then answers.
fn oneshot_tool(sdk: Sdk) {
    let Some(s) = Scenario::start(|path| {
        vec![
            answer("msg_1", json!([call("toolu_01READ", "Read", json!({"file_path": path("a.txt")}))]), "tool_use", 5),
            answer("msg_2", text("done: hello"), "end_turn", 7),
        ]
    }) else {
        return;
    };
    let run = s.run(sdk, "oneshot_tool").ok();

    assert_eq!(run.kinds(), ["system", "assistant", "user", "assistant", "result"], "{}", run.dump());
    let session_id = run.session_id();
    assert_init(&run, run.inits()[0], &s.cwd());
    assert_eq!(run.inits()[0]["permissionMode"], "default");
    let calls = run.blocks("assistant");
    assert_eq!(calls[0]["type"], "tool_use");
    assert_eq!(calls[0]["name"], "Read");
    for assistant in run.of_type("assistant") {
        // Claude Code prints each assistant message with the usage its response started with.
        let usage = assistant.get("usage").unwrap_or(&assistant["message"]["usage"]);
        assert_eq!(usage["input_tokens"], 100, "assistant message usage: {assistant}");
    }
    let results = run.tool_results();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["tool_use_id"], "toolu_01READ");
    assert!(results[0]["content"].to_string().contains("hello from a.txt"), "{}", results[0]);
    assert_ne!(results[0]["is_error"], true);
    // What the call did as data: Python's `UserMessage.tool_use_result`, the line's own field in
    // TypeScript (Claude Code's Read shape; the file is read whole, one line).
    let user = run.of_type("user")[0];
    assert_eq!(user["tool_use_result"]["type"], "text", "{user}");
    let file = &user["tool_use_result"]["file"];
    assert!(file["filePath"].as_str().is_some_and(|p| p.ends_with("a.txt")), "{file}");
    assert!(file["content"].as_str().is_some_and(|c| c.starts_with("hello from a.txt")), "{file}");
    assert_eq!(file["startLine"], 1, "{file}");
    assert_eq!(file["numLines"], file["totalLines"], "{file}");
    assert_eq!(run.assistant_texts(), ["done: hello"]);

    let result = run.result();
    assert_success(&run, result, &session_id, 2, "done: hello");
    assert_eq!(result["permission_denials"], json!([]));
    assert_eq!(result["usage"]["input_tokens"], 200, "usage sums both requests: {}", result["usage"]);
    assert_eq!(result["usage"]["output_tokens"], 12, "usage sums both requests: {}", result["usage"]);
    let per_model = model_usage(result).as_object().unwrap();
    assert_eq!(per_model.len(), 1, "{per_model:?}");
    let (_, usage) = per_model.iter().next().unwrap();
    assert_eq!(usage["inputTokens"], 200);
    assert_eq!(usage["outputTokens"], 12);
    assert!(usage["costUSD"].as_f64().is_some_and(|c| c > 0.0));

    let requests = s.requests();
    assert_eq!(requests.len(), 2, "one request per model turn");
    assert!(requests[0].path.starts_with("/v1/messages"), "{}", requests[0].path);
    assert!(tool_names(&requests[0]).contains(&"Read".to_string()), "{:?}", tool_names(&requests[0]));
    assert_in_order(&transcript(&requests[1]), &["read a.txt", "toolu_01READ", "hello from a.txt"]);
    s.assert_replays_and_explains(&session_id);
}

/// Two user messages to one CLI process: two results, one session, the second request carries the first turn.
fn two_turns(sdk: Sdk) {
    let Some(s) = Scenario::start(|_| {
        vec![answer("msg_1", text("answer one"), "end_turn", 3), answer("msg_2", text("answer two"), "end_turn", 3)]
    }) else {
        return;
    };
    let run = s.run(sdk, "two_turns").ok();

    assert_eq!(
        run.kinds(),
        ["system", "assistant", "result", "system", "assistant", "result"],
        "Claude Code prints system/init at each turn:\n{}",
        run.dump()
    );
    let session_id = run.session_id();
    assert_init(&run, run.inits()[0], &s.cwd());
    assert_eq!(run.inits()[1]["session_id"], session_id);
    let results = run.results();
    assert_success(&run, results[0], &session_id, 1, "answer one");
    assert_success(&run, results[1], &session_id, 1, "answer two");
    // Claude Code: `usage` counts this turn, `modelUsage` and `total_cost_usd` the whole process.
    assert_eq!(results[1]["usage"]["input_tokens"], 100, "{}", results[1]["usage"]);
    let per_model = model_usage(results[1]).as_object().unwrap();
    assert_eq!(per_model.values().map(|u| u["inputTokens"].as_u64().unwrap_or(0)).sum::<u64>(), 200, "{per_model:?}");
    let cost = |r: &Value| r["total_cost_usd"].as_f64().unwrap_or(0.0);
    assert!(cost(results[1]) > cost(results[0]), "total_cost_usd adds up over the process");

    let requests = s.requests();
    assert_eq!(requests.len(), 2);
    assert_in_order(&transcript(&requests[1]), &["first question", "answer one", "second question"]);
    s.assert_replays_and_explains(&session_id);
}

/// can_use_tool allows the Write of out.txt and denies the Write of denied.txt.
fn can_use_tool(sdk: Sdk) {
    let Some(s) = Scenario::start(|path| {
        vec![
            answer(
                "msg_1",
                json!([call("toolu_01WRITE", "Write", json!({"file_path": path("out.txt"), "content": "written\n"}))]),
                "tool_use",
                5,
            ),
            answer(
                "msg_2",
                json!([call("toolu_02WRITE", "Write", json!({"file_path": path("denied.txt"), "content": "no\n"}))]),
                "tool_use",
                5,
            ),
            answer("msg_3", text("wrote one"), "end_turn", 3),
        ]
    }) else {
        return;
    };
    let (out, denied) = (s.path("out.txt"), s.path("denied.txt"));
    let run = s.run(sdk, "can_use_tool").ok();

    let asked = run.events("can_use_tool");
    assert_eq!(asked.len(), 2, "the SDK is asked once per Write:\n{}", run.dump());
    assert_eq!(asked[0]["tool_name"], "Write");
    assert_eq!(asked[0]["tool_use_id"], "toolu_01WRITE");
    assert_eq!(asked[0]["input"]["file_path"], out.as_str());
    assert_eq!(asked[0]["decision"], "allow");
    // Claude Code suggests accepting edits for the session, and the SDK hands that to the app.
    let suggested = asked[0]["suggestions"].to_string();
    assert!(suggested.contains("setMode") && suggested.contains("acceptEdits"), "{suggested}");
    assert_eq!(asked[1]["tool_use_id"], "toolu_02WRITE");
    assert_eq!(asked[1]["decision"], "deny");
    assert_eq!(std::fs::read_to_string(&out).ok().as_deref(), Some("written\n"), "the allowed Write ran");
    assert!(!Path::new(&denied).exists(), "the denied Write must not run");

    let results = run.tool_results();
    assert_eq!(results.len(), 2, "{}", run.dump());
    assert_ne!(results[0]["is_error"], true);
    assert_eq!(results[1]["tool_use_id"], "toolu_02WRITE");
    assert_eq!(results[1]["is_error"], true);
    assert_eq!(results[1]["content"], "nope-from-sdk", "Claude Code passes the deny message as the tool result");

    let session_id = run.session_id();
    let result = run.result();
    assert_success(&run, result, &session_id, 3, "wrote one");
    assert_eq!(
        result["permission_denials"],
        json!([{"tool_name": "Write", "tool_use_id": "toolu_02WRITE", "tool_input": {"file_path": denied, "content": "no\n"}}])
    );
    let requests = s.requests();
    assert_eq!(requests.len(), 3);
    assert_in_order(&transcript(&requests[2]), &["toolu_01WRITE", "toolu_02WRITE", "nope-from-sdk"]);
    s.assert_replays_and_explains(&session_id);
}

/// A PreToolUse hook callback matching Read denies the call.
fn hook_pretooluse(sdk: Sdk) {
    let Some(s) = Scenario::start(|path| {
        vec![
            answer("msg_1", json!([call("toolu_01READ", "Read", json!({"file_path": path("a.txt")}))]), "tool_use", 5),
            answer("msg_2", text("hook said no"), "end_turn", 3),
        ]
    }) else {
        return;
    };
    let a_txt = s.path("a.txt");
    let run = s.run(sdk, "hook_pretooluse").ok();
    let session_id = run.session_id();

    let hooks = run.events("hook_callback");
    assert_eq!(hooks.len(), 1, "{}", run.dump());
    let input = &hooks[0]["input"];
    assert_eq!(hooks[0]["tool_use_id"], "toolu_01READ");
    assert_eq!(input["hook_event_name"], "PreToolUse");
    assert_eq!(input["tool_name"], "Read");
    assert_eq!(input["tool_input"], json!({"file_path": a_txt}));
    assert_eq!(input["tool_use_id"], "toolu_01READ");
    assert_eq!(input["session_id"], session_id.as_str());
    assert_eq!(input["cwd"], s.cwd().as_str());

    let results = run.tool_results();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["is_error"], true);
    // As the bundled 2.1.332 told the model (tests/sdk/recorded/hook_pretooluse_deny.jsonl).
    let recorded = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sdk/recorded/hook_pretooluse_deny.jsonl"),
    )
    .unwrap();
    let told = recorded
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|l| l["type"] == "user")
        .map(|l| l["content"][0]["content"].clone())
        .unwrap();
    assert_eq!(told, "PreToolUse:Read hook error: blocked-by-sdk-hook");
    assert_eq!(results[0]["content"], told, "the hook's reason, as a hook error");
    let result = run.result();
    assert_success(&run, result, &session_id, 2, "hook said no");
    assert_eq!(
        result["permission_denials"],
        json!([{"tool_name": "Read", "tool_use_id": "toolu_01READ", "tool_input": {"file_path": a_txt}}])
    );
    let requests = s.requests();
    assert_eq!(requests.len(), 2);
    assert_in_order(&transcript(&requests[1]), &["toolu_01READ", "blocked-by-sdk-hook"]);
    s.assert_replays_and_explains(&session_id);
}

/// The SDK's in-process MCP server: the model calls its `echo` (which answers from inside the SDK
/// process) and its `explode` (which raises); both results reach the next model request, and the
/// session replays with the SDK gone.
fn sdk_mcp(sdk: Sdk) {
    let Some(s) = Scenario::start(|_| {
        vec![
            answer(
                "msg_1",
                json!([
                    call("toolu_01ECHO", "mcp__calc__echo", json!({"text": "hello"})),
                    call("toolu_02BOOM", "mcp__calc__explode", json!({"why": "on purpose"})),
                ]),
                "tool_use",
                9,
            ),
            answer("msg_2", text("calc said hello"), "end_turn", 4),
        ]
    }) else {
        return;
    };
    let run = s.run(sdk, "sdk_mcp").ok();
    let session_id = run.session_id();

    let servers = &run.inits()[0]["mcp_servers"];
    assert_eq!(servers, &json!([{"name": "calc", "status": "connected"}]), "{}", run.dump());
    let ran = run.events("tool_ran");
    assert_eq!(ran.len(), 2, "both tools ran in the SDK process:\n{}", run.dump());
    assert_eq!((&ran[0]["tool"], &ran[0]["args"]), (&json!("echo"), &json!({"text": "hello"})));
    assert_eq!((&ran[1]["tool"], &ran[1]["args"]), (&json!("explode"), &json!({"why": "on purpose"})));
    let echoed = format!("sdk-echo[{}]: hello", ran[0]["pid"]);

    let results = run.tool_results();
    assert_eq!(results.len(), 2, "{}", run.dump());
    assert_eq!(results[0]["tool_use_id"], "toolu_01ECHO");
    assert!(results[0]["content"].to_string().contains(&echoed), "{} lacks {echoed}", results[0]);
    assert_ne!(results[0]["is_error"], true);
    assert_eq!(results[1]["tool_use_id"], "toolu_02BOOM");
    assert_eq!(results[1]["is_error"], true, "{}", results[1]);
    assert!(results[1]["content"].to_string().contains("exploded: on purpose"), "{}", results[1]);
    // Claude Code counts each of the two results as a turn (one `user` line each).
    assert_success(&run, run.result(), &session_id, 3, "calc said hello");

    let requests = s.requests();
    assert_eq!(requests.len(), 2);
    let offered = &requests[0].body["tools"];
    let echo = offered.as_array().unwrap().iter().find(|t| t["name"] == "mcp__calc__echo");
    let echo = echo.unwrap_or_else(|| panic!("mcp__calc__echo not offered: {:?}", tool_names(&requests[0])));
    assert_eq!(echo["description"], "Echoes its text from inside the SDK process");
    assert_eq!(echo["input_schema"]["properties"]["text"]["type"], "string", "{echo}");
    assert!(tool_names(&requests[0]).contains(&"mcp__calc__explode".to_string()));
    assert_in_order(&transcript(&requests[1]), &["toolu_01ECHO", &echoed, "toolu_02BOOM", "exploded: on purpose"]);
    s.assert_replays_and_explains(&session_id);
}

// --- Python SDK ---------------------------------------------------------------------------------

#[test]
fn python_query_with_a_tool_call_streams_init_assistant_tool_result_and_a_successful_result() {
    oneshot_tool(Sdk::Python);
}

#[test]
fn python_options_set_the_model_system_prompt_tools_and_permission_mode() {
    let Some(s) = Scenario::start(|_| vec![answer("msg_1", text("ok"), "end_turn", 2)]) else { return };
    let run = s.run(Sdk::Python, "options").ok();

    let session_id = run.session_id();
    let init = run.inits()[0];
    assert_init(&run, init, &s.cwd());
    assert_eq!(init["model"], "claude-haiku-4-5");
    assert_eq!(init["permissionMode"], "acceptEdits");
    assert!(
        !init["tools"].as_array().unwrap().iter().any(|t| t == "Bash"),
        "a disallowed tool is not listed: {}",
        init["tools"]
    );
    assert_success(&run, run.result(), &session_id, 1, "ok");

    let requests = s.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].body["model"], "claude-haiku-4-5");
    let tools = tool_names(&requests[0]);
    assert!(tools.contains(&"Read".to_string()), "{tools:?}");
    assert!(!tools.contains(&"Bash".to_string()), "disallowed Bash offered to the model: {tools:?}");
    assert!(system_text(&requests[0]).contains("SDK-SYSTEM-PROMPT-MARKER"), "system: {}", requests[0].body["system"]);
    s.assert_replays_and_explains(&session_id);
}

#[test]
fn python_client_answers_two_messages_in_one_process_and_one_session() {
    two_turns(Sdk::Python);
}

#[test]
fn python_can_use_tool_allows_one_write_and_denies_another() {
    can_use_tool(Sdk::Python);
}

#[test]
fn python_pretooluse_hook_callback_denies_the_read() {
    hook_pretooluse(Sdk::Python);
}

#[test]
fn python_interrupt_ends_the_stalled_turn_and_the_next_message_completes() {
    let Some(s) = Scenario::start(|_| vec![stalled_answer(), answer("msg_2", text("after interrupt"), "end_turn", 3)])
    else {
        return;
    };
    let run = s.run(Sdk::Python, "interrupt").ok();
    assert_eq!(run.events("interrupt_answered").len(), 1, "the interrupt control request is answered:\n{}", run.dump());
    assert!(s.server.closed_at.lock().unwrap().is_some(), "the stalled model request was abandoned");

    let session_id = run.session_id();
    let results = run.results();
    assert_eq!(results.len(), 2, "{}", run.dump());
    assert_eq!(results[0]["subtype"], "error_during_execution", "Claude Code ends an interrupted turn so");
    assert_eq!(results[0]["is_error"], true);
    assert_eq!(results[0]["session_id"], session_id);
    let interrupted_at = run.messages().iter().position(|m| m == &results[0]).unwrap();
    assert!(
        run.messages()[..interrupted_at]
            .iter()
            .any(|m| m["type"] == "user" && content(m).to_string().contains("[Request interrupted by user]")),
        "Claude Code prints a [Request interrupted by user] user message:\n{}",
        run.dump()
    );
    assert_success(&run, results[1], &session_id, 1, "after interrupt");

    let requests = s.requests();
    assert_eq!(requests.len(), 2);
    assert_in_order(&transcript(&requests[1]), &["go", "again"]);
    s.assert_replays_and_explains(&session_id);
}

#[test]
fn python_set_model_and_permission_mode_between_turns_apply_to_the_next_turn() {
    let Some(s) = Scenario::start(|_| {
        vec![answer("msg_1", text("answer one"), "end_turn", 3), answer("msg_2", text("answer two"), "end_turn", 3)]
    }) else {
        return;
    };
    let run = s.run(Sdk::Python, "set_model_and_mode").ok();
    assert_eq!(run.events("set_model_answered").len(), 1, "{}", run.dump());
    assert_eq!(run.events("set_permission_mode_answered").len(), 1);

    let session_id = run.session_id();
    let inits = run.inits();
    assert_eq!(inits.len(), 2, "{}", run.dump());
    assert_eq!(inits[0]["permissionMode"], "default");
    assert_ne!(inits[0]["model"], "claude-haiku-4-5");
    assert_eq!(inits[1]["model"], "claude-haiku-4-5");
    assert_eq!(inits[1]["permissionMode"], "acceptEdits");
    assert!(
        run.of_type("system").iter().any(|m| m["subtype"] == "status" && m["permissionMode"] == "acceptEdits"),
        "Claude Code reports the new mode in a system/status message:\n{}",
        run.dump()
    );
    let results = run.results();
    assert_success(&run, results[0], &session_id, 1, "answer one");
    assert_success(&run, results[1], &session_id, 1, "answer two");

    let requests = s.requests();
    assert_eq!(requests.len(), 2);
    assert_ne!(requests[0].body["model"], "claude-haiku-4-5");
    assert_eq!(requests[1].body["model"], "claude-haiku-4-5");
    assert_in_order(&transcript(&requests[1]), &["first question", "answer one", "second question"]);
    s.assert_replays_and_explains(&session_id);
}

#[test]
fn python_resume_continues_the_first_session_with_its_history() {
    let Some(s) = Scenario::start(|_| {
        vec![
            answer("msg_1", text("I will remember banana"), "end_turn", 4),
            answer("msg_2", text("The word was banana"), "end_turn", 4),
        ]
    }) else {
        return;
    };
    let run = s.run(Sdk::Python, "resume").ok();
    let resuming = run.events("resuming");
    assert_eq!(resuming.len(), 1, "{}", run.dump());
    let first = resuming[0]["session_id"].as_str().unwrap().to_string();
    assert!(is_uuid(&first), "{first:?}");

    let results = run.results();
    assert_eq!(results.len(), 2, "{}", run.dump());
    assert_success(&run, results[0], &first, 1, "I will remember banana");
    // Without --fork-session, Claude Code keeps the resumed session's id.
    assert_eq!(run.inits().last().unwrap()["session_id"], first.as_str());
    assert_success(&run, results[1], &first, 1, "The word was banana");

    let requests = s.requests();
    assert_eq!(requests.len(), 2);
    assert_in_order(
        &transcript(&requests[1]),
        &["remember the word banana", "I will remember banana", "what was the word?"],
    );
    s.assert_replays_and_explains(&first);
}

#[test]
fn python_in_process_mcp_server_tools_run_in_the_sdk_and_replay_without_it() {
    sdk_mcp(Sdk::Python);
}

#[test]
fn python_max_turns_ends_with_error_max_turns_and_the_sdk_raises() {
    let Some(s) = Scenario::start(|path| {
        vec![
            answer("msg_1", json!([call("toolu_1", "Read", json!({"file_path": path("a.txt")}))]), "tool_use", 5),
            answer("msg_2", json!([call("toolu_2", "Read", json!({"file_path": path("a.txt")}))]), "tool_use", 5),
        ]
    }) else {
        return;
    };
    let run = s.run(Sdk::Python, "max_turns");

    // Claude Code exits 1 after an error result; the SDK turns that into a ResultError.
    assert!(!run.status.success(), "{}", run.dump());
    let error = run.error().unwrap_or_else(|| panic!("the SDK did not raise:\n{}", run.dump()));
    assert_eq!(error["error_type"], "ResultError", "{}", run.dump());
    assert!(error["error"].as_str().unwrap().contains("Reached maximum number of turns (2)"), "{error}");

    let session_id = run.session_id();
    let result = run.result();
    assert_eq!(result["subtype"], "error_max_turns");
    assert_eq!(result["is_error"], true);
    assert_eq!(result["num_turns"], 3, "Claude Code counts the turn it refused");
    assert_eq!(result["errors"], json!(["Reached maximum number of turns (2)"]));
    assert_eq!(result["session_id"], session_id);
    assert_eq!(run.tool_results().len(), 2);
    assert_eq!(s.requests().len(), 2, "no third model request");
    s.assert_replays_and_explains(&session_id);
}

// --- TypeScript SDK -----------------------------------------------------------------------------

#[test]
fn ts_query_with_a_tool_call_streams_init_assistant_tool_result_and_a_successful_result() {
    oneshot_tool(Sdk::Ts);
}

#[test]
fn ts_streamed_prompt_answers_two_messages_in_one_process_and_one_session() {
    two_turns(Sdk::Ts);
}

#[test]
fn ts_can_use_tool_allows_one_write_and_denies_another() {
    can_use_tool(Sdk::Ts);
}

#[test]
fn ts_pretooluse_hook_callback_denies_the_read() {
    hook_pretooluse(Sdk::Ts);
}

#[test]
fn ts_in_process_mcp_server_tools_run_in_the_sdk_and_replay_without_it() {
    sdk_mcp(Sdk::Ts);
}

// --- no SDK: reloop's side of `mcp_message` against a hostile control channel ----------------

/// What the scripted "SDK" below answers to one `mcp_message`: `None` is no answer at all.
fn hostile_sdk_answer(request_id: &str, message: &Value) -> Option<Value> {
    let id = &message["id"];
    let success = |response: Value| {
        Some(json!({"type": "control_response",
            "response": {"subtype": "success", "request_id": request_id, "response": response}}))
    };
    let reply = |result: Value| success(json!({"mcp_response": {"jsonrpc": "2.0", "id": id, "result": result}}));
    match message["method"].as_str() {
        Some("initialize") => reply(json!({"protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}}, "serverInfo": {"name": "calc", "version": "1.0.0"}})),
        Some("tools/list") => reply(json!({"tools": [{"name": "echo", "inputSchema": {"type": "object",
            "properties": {"text": {"type": "string"}}, "required": ["text"]}}]})),
        Some("tools/call") => match message["params"]["arguments"]["text"].as_str() {
            Some("silent") => None,
            Some("garbage") => success(json!({"mcp_response": "<html>not JSON-RPC</html>"})),
            Some("refused") => Some(json!({"type": "control_response",
                "response": {"subtype": "error", "request_id": request_id, "error": "handler blew up"}})),
            other => reply(json!({"content": [{"type": "text", "text": format!("echo: {}", other.unwrap_or(""))}]})),
        },
        _ => success(json!({"mcp_response": {"jsonrpc": "2.0", "result": {}}})),
    }
}

/// What the scripted "SDK" saw and reloop printed.
struct Driven {
    /// reloop's stdout lines up to the first result.
    lines: Vec<Value>,
    /// The JSON-RPC messages of reloop's `mcp_message` requests, in order.
    seen: Vec<Value>,
    stderr: String,
}

/// Runs the print mode with `args` and `env` as an SDK would, sending `initialize` (with `init`'s
/// fields), one prompt once it is answered, and `answer`'s replies to reloop's `mcp_message`s;
/// closes stdin after the first result. Bounded: past 60 s the test fails.
fn drive_with_scripted_sdk(
    ws: &common::Workspace,
    args: &[&str],
    env: &[(&str, &str)],
    init: Value,
    answer: impl Fn(&str, &Value) -> Option<Value>,
) -> Driven {
    use std::io::Write;
    let mut all = vec!["--output-format", "stream-json", "--verbose", "--input-format", "stream-json"];
    all.extend_from_slice(args);
    let mut cmd = ws.command(&all);
    cmd.envs(env.iter().copied());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let (rx, reader) = common::json_line_reader(child.stdout.take().unwrap());
    let mut send = |line: Value| writeln!(stdin, "{line}").unwrap();
    let mut initialize = json!({"subtype": "initialize", "hooks": null});
    initialize.as_object_mut().unwrap().extend(init.as_object().cloned().unwrap_or_default());
    send(json!({"type": "control_request", "request_id": "init", "request": initialize}));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let (mut lines, mut seen) = (Vec::new(), Vec::new());
    while let Ok(line) = rx.recv_timeout(deadline.saturating_duration_since(std::time::Instant::now())) {
        if line["type"] == "control_response" && line["response"]["request_id"] == "init" {
            send(json!({"type": "user", "session_id": "", "message": {"role": "user", "content": "use calc"},
                "parent_tool_use_id": null}));
        }
        if line["type"] == "control_request" && line["request"]["subtype"] == "mcp_message" {
            assert_eq!(line["request"]["server_name"], "calc");
            seen.push(line["request"]["message"].clone());
            if let Some(reply) = answer(line["request_id"].as_str().unwrap(), &line["request"]["message"]) {
                send(reply);
            }
        }
        let done = line["type"] == "result";
        lines.push(line);
        if done {
            break;
        }
    }
    drop(stdin);
    let status = child.wait().unwrap();
    reader.join().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(status.success(), "reloop failed:\n{stderr}");
    assert_eq!(lines.last().map(|l| &l["type"]), Some(&json!("result")), "no result within 60 s:\n{stderr}");
    Driven { lines, seen, stderr }
}

/// A cassette in `ws` where the model calls `mcp__calc__echo` with each text, then says "done".
fn echo_cassette(ws: &common::Workspace, texts: &[&str]) -> String {
    let cassette = ws.dir.path().join("cassette.json");
    let calls: Vec<Value> = texts
        .iter()
        .enumerate()
        .map(|(n, t)| call(&format!("toolu_0{n}"), "mcp__calc__echo", json!({"text": t})))
        .collect();
    let responses = json!({"responses": [common::response("m1", Value::Array(calls), "tool_use", 5),
                                         common::response("m2", text("done"), "end_turn", 2)]});
    std::fs::write(&cassette, responses.to_string()).unwrap();
    cassette.to_str().unwrap().to_string()
}

/// reloop's MCP client over the control channel, against a "SDK" that never answers one call,
/// garbles one and fails one: each is a bounded `is_error` result, the next call still works,
/// nothing hangs, and the session replays with nobody on the channel.
#[test]
fn an_in_process_server_that_is_silent_or_garbles_gives_bounded_tool_errors() {
    let ws = common::Workspace::seed();
    let cassette = echo_cassette(&ws, &["silent", "garbage", "refused", "fine"]);
    let config = r#"{"mcpServers": {"calc": {"type": "sdk", "name": "calc"}}}"#;
    let args = ["--script", &cassette, "--mcp-config", config, "--allowedTools", "mcp__calc__echo"];
    // The server's own timeout (the TypeScript SDK's `createSdkMcpServer({timeout})`) wins over
    // MCP_TOOL_TIMEOUT.
    let env = [("MCP_TOOL_TIMEOUT", "20000"), ("MCP_TIMEOUT", "5000")];
    let init = json!({"sdkMcpServerConfigs": {"calc": {"timeout": 1000}}});
    let Driven { lines, seen, stderr: err } = drive_with_scripted_sdk(&ws, &args, &env, init, hostile_sdk_answer);
    let result = lines.last().unwrap();
    assert_eq!((&result["type"], &result["result"]), (&json!("result"), &json!("done")), "{lines:?}\n{err}");
    let init = lines.iter().find(|l| l["subtype"] == "init").unwrap();
    assert_eq!(init["mcp_servers"], json!([{"name": "calc", "status": "connected"}]));
    let results: Vec<&Value> = lines
        .iter()
        .filter(|l| l["type"] == "user")
        .flat_map(|l| l["message"]["content"].as_array().unwrap().iter())
        .filter(|b| b["type"] == "tool_result")
        .collect();
    let shown = |n: usize| (results[n]["is_error"] == true, results[n]["content"].to_string());
    assert_eq!(results.len(), 4, "{results:?}");
    let (failed, said) = shown(0);
    assert!(failed && said.contains("did not answer echo within 1000 ms (MCP_TOOL_TIMEOUT)"), "{said}");
    let (failed, said) = shown(1);
    assert!(failed && said.contains("without an mcp_response object"), "{said}");
    let (failed, said) = shown(2);
    assert!(failed && said.contains("handler blew up"), "{said}");
    // Text content stays a list of blocks, as Claude Code gives it (sdk_wire/mcp_text).
    assert_eq!(shown(3), (false, r#"[{"type":"text","text":"echo: fine"}]"#.to_string()));
    assert!(err.contains("did not answer echo within 1000 ms"), "the user is told too:\n{err}");
    // The call given up on is cancelled on the server, as MCP says.
    let silent = seen.iter().find(|m| m["params"]["arguments"]["text"] == "silent").unwrap();
    let cancelled = seen.iter().find(|m| m["method"] == "notifications/cancelled");
    assert_eq!(cancelled.map(|m| &m["params"]["requestId"]), Some(&silent["id"]), "{seen:?}");

    let session = result["session_id"].as_str().unwrap();
    let replay = ws.reloop(&["replay", session]);
    assert!(common::stdout(&replay).contains("identical"), "{}\n{}", common::stdout(&replay), common::stderr(&replay));
    let export = ws.reloop(&["export", session, "--format", "journal"]);
    let header = &serde_json::from_str::<Value>(&common::stdout(&export)).unwrap()["header"];
    let server = &header["run_config"]["mcp_servers"][0];
    assert_eq!(
        (&server["name"], &server["transport"], &server["status"]),
        (&json!("calc"), &json!("sdk"), &json!("connected"))
    );
    assert_eq!(server["tools"][0]["name"], "mcp__calc__echo", "{server}");
}

/// A server named the TypeScript SDK's way (`sdkMcpServers` in `initialize`) whose SDK never
/// answers the handshake: it fails within `MCP_TIMEOUT`, is said on stderr and in `system/init`,
/// its tool is not offered, and the session goes on.
#[test]
fn an_in_process_server_silent_at_start_fails_within_mcp_timeout_and_the_session_goes_on() {
    let ws = common::Workspace::seed();
    let cassette = echo_cassette(&ws, &["anyone?"]);
    let args = ["--script", &cassette, "--allowedTools", "mcp__calc__echo"];
    let started = std::time::Instant::now();
    let init = json!({"sdkMcpServers": ["calc"]});
    let driven = drive_with_scripted_sdk(&ws, &args, &[("MCP_TIMEOUT", "500")], init, |_, _| None);
    assert!(started.elapsed() < std::time::Duration::from_secs(30), "took {:?}", started.elapsed());
    assert_eq!(driven.seen[0]["method"], "initialize", "{:?}", driven.seen);
    let init = driven.lines.iter().find(|l| l["subtype"] == "init").unwrap();
    let server = &init["mcp_servers"][0];
    assert_eq!((&server["name"], &server["status"]), (&json!("calc"), &json!("failed")), "{server}");
    let error = server["error"].as_str().unwrap();
    assert_eq!(error, "MCP server \"calc\" failed to start: no answer within 500 ms (MCP_TIMEOUT)");
    assert!(driven.stderr.contains(&format!("reloop: {error}")), "{}", driven.stderr);
    assert!(!init["tools"].as_array().unwrap().iter().any(|t| t == "mcp__calc__echo"), "{}", init["tools"]);
    let refused = driven.lines.iter().find(|l| l["type"] == "user").unwrap()["message"]["content"][0].clone();
    assert_eq!(refused["is_error"], true);
    assert!(refused["content"].to_string().contains("No such tool available: mcp__calc__echo"), "{refused}");
    assert_eq!(driven.lines.last().unwrap()["result"], "done");
}
