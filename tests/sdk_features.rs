//! Issue 36's SDK features through the CLI under each Claude Code profile, against a fake
//! Anthropic server on 127.0.0.1, compared with what the real versions did in the same scenario
//! (`crates/reloop-import/tests/recorded/VERSION/{model_alias,...}/`, recorded by
//! scripts/record-claude-code with scenarios_sdkfeat.py).

mod common;

use std::path::PathBuf;

use common::compat::{answer, run};
use common::{call, text};
use serde_json::{json, Value};

const VERSIONS: [&str; 2] = ["2.1.197", "2.1.332"];

/// A recording's folder: with the importer's (`crates/reloop-import/tests/recorded`), or in
/// `tests/recorded_sdk` for those whose transcripts the importer cannot check (its README says why).
fn recorded(version: &str, scenario: &str) -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let imported = root.join("crates/reloop-import/tests/recorded").join(version).join(scenario);
    if imported.is_dir() {
        imported
    } else {
        root.join("tests/recorded_sdk").join(version).join(scenario)
    }
}

/// The bodies of the requests a recording's fake server received.
fn recorded_requests(version: &str, scenario: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(recorded(version, scenario).join("requests.jsonl")).unwrap();
    text.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()["body"].clone()).collect()
}

/// The headers of the requests a recording's fake server received.
fn recorded_headers(version: &str, scenario: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(recorded(version, scenario).join("requests.jsonl")).unwrap();
    text.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()["headers"].clone()).collect()
}

#[test]
fn model_aliases_reach_the_api_as_the_ids_each_version_sends() {
    let aliases = [
        ("opus", "opus"),
        ("sonnet", "sonnet"),
        ("haiku", "haiku"),
        ("opusplan", "opusplan"),
        ("opus[1m]", "opus_1m"),
        ("sonnet[1m]", "sonnet_1m"),
        ("best", "best"),
        ("default", "default"),
    ];
    for version in VERSIONS {
        for (alias, folder) in aliases {
            let real = &recorded_requests(version, &format!("model_alias/{folder}"))[0];
            let profile = format!("claude-code-{version}");
            let r = run(&profile, vec![answer("m1", text("done"), "end_turn")], &["--model", alias], |_| Vec::new());
            let sent = &r.requests[0].body;
            assert_eq!(
                (&sent["model"], &sent["max_tokens"]),
                (&real["model"], &real["max_tokens"]),
                "{version} --model {alias}"
            );
            // 2.1.197's 1M-context variant (`opus[1m]`, `default`): `[1m]` on `system/init`, the
            // id sent with the `context-1m-2025-08-07` beta.
            let init = |lines: &[Value]| lines.iter().find(|l| l["subtype"] == "init").map(|l| l["model"].clone());
            let real_lines = recorded_stdout(version, &format!("model_alias/{folder}"));
            assert_eq!(init(&r.lines), init(&real_lines), "{version} --model {alias}: system/init");
            let one_m = |beta: Option<&str>| beta.is_some_and(|b| b.split(',').any(|b| b == "context-1m-2025-08-07"));
            let real_beta = recorded_headers(version, &format!("model_alias/{folder}"))[0]["anthropic-beta"].clone();
            let sent_beta = r.requests[0].headers.iter().find(|(k, _)| k.eq_ignore_ascii_case("anthropic-beta"));
            assert_eq!(
                one_m(sent_beta.map(|(_, v)| v.as_str())),
                one_m(real_beta.as_str()),
                "{version} --model {alias}: the 1M beta"
            );
            assert_eq!(sent.get("thinking"), real.get("thinking"), "{version} --model {alias}: thinking");
            assert_eq!(r.result()["is_error"], false);
            assert!(r.replays_identical(), "{version} --model {alias}");
        }
    }
}

/// `MAX_THINKING_TOKENS` 0 and 8000 on models that think adaptively, on a budget, or refuse to
/// stop (`thinking_env/`): the `thinking` each version sent, key for key.
#[test]
fn thinking_is_asked_for_as_each_version_asks_for_it() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("crates/reloop-import/tests/recorded");
    let mut seen = 0;
    for version in VERSIONS {
        let Ok(entries) = std::fs::read_dir(dir.join(version).join("thinking_env")) else { continue };
        for entry in entries.flatten().filter(|e| e.path().join("scenario.json").is_file()) {
            let name = entry.file_name().to_string_lossy().into_owned();
            let scenario: Value =
                serde_json::from_str(&std::fs::read_to_string(entry.path().join("scenario.json")).unwrap()).unwrap();
            let argv: Vec<&str> = scenario["argv"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
            let model = argv[argv.iter().position(|a| *a == "--model").unwrap() + 1];
            let budget = scenario["env_extra"]["MAX_THINKING_TOKENS"].as_str().unwrap();
            let real = &recorded_requests(version, &format!("thinking_env/{name}"))[0];
            let profile = format!("claude-code-{version}");
            let args = ["--model", model, "--max-thinking-tokens", budget];
            let r = run(&profile, vec![answer("m1", text("done"), "end_turn")], &args, |_| Vec::new());
            let sent = &r.requests[0].body;
            assert_eq!(
                sent.get("thinking").map(Value::to_string),
                real.get("thinking").map(Value::to_string),
                "{version} {name}"
            );
            seen += 1;
        }
    }
    assert!(seen >= 12, "the recordings are found: {seen}");
}

/// The line kinds of a stream-json run the way the SDKs dispatch them (`stream_event` by its
/// event's type), without `system` lines but the thinking estimates, with their figures, and the
/// status lines, and with consecutive deltas of one block as one (the server decides how a tool
/// input is chunked).
fn partial_shape(lines: &[Value]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in lines {
        let kind = match line["type"].as_str().unwrap_or_default() {
            "system" if line["subtype"] == "thinking_tokens" => {
                format!("thinking_tokens:{}:{}", line["estimated_tokens"], line["estimated_tokens_delta"])
            }
            "system" if line["subtype"] == "status" => format!("status:{}", line["status"].as_str().unwrap_or("")),
            "system" => continue,
            "stream_event" => format!("{}:{}", line["event"]["type"].as_str().unwrap(), line["event"]["index"]),
            "assistant" => format!("assistant:{}", line["message"]["content"][0]["type"].as_str().unwrap()),
            other => other.to_string(),
        };
        if kind.starts_with("content_block_delta") && out.last() == Some(&kind) {
            continue;
        }
        out.push(kind);
    }
    out
}

fn recorded_stdout(version: &str, scenario: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(recorded(version, scenario).join("stdout.jsonl")).unwrap();
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn partial_messages_come_in_claude_code_s_order_around_each_block_s_assistant_line() {
    for version in VERSIONS {
        let real = partial_shape(&recorded_stdout(version, "partial_messages/tool_and_text"));
        assert_eq!(real.iter().filter(|k| k.starts_with("assistant:")).count(), 3, "{real:?}");
        assert!(real.contains(&"message_delta:null".to_string()) && real.contains(&"content_block_stop:1".to_string()));
        let first = json!([{"type": "text", "text": "先读 login.ts。"},
            call("toolu_01_READ", "Read", json!({"file_path": "src/auth/login.ts"}))]);
        let answers = vec![answer("msg_1", first, "tool_use"), answer("msg_2", text("登录模块检查完毕。"), "end_turn")];
        let profile = format!("claude-code-{version}");
        let r = run(&profile, answers, &["--include-partial-messages"], |_| Vec::new());
        assert_eq!(partial_shape(&r.lines), real, "{version}");
        let delta = r.lines.iter().find(|l| l["event"]["type"] == "message_delta").unwrap();
        assert_eq!(delta["event"]["delta"], json!({"stop_reason": "tool_use", "stop_sequence": null}));
        let tool_start = r.lines.iter().find(|l| l["event"]["content_block"]["type"] == "tool_use").unwrap();
        assert_eq!(tool_start["event"]["content_block"]["input"], json!({}));
        // Each response's head is the server's: its id and the usage it opened with, in the
        // recorded key order.
        let starts = |lines: &[Value]| -> Vec<Value> {
            lines
                .iter()
                .filter(|l| l["event"]["type"] == "message_start")
                .map(|l| l["event"]["message"].clone())
                .collect()
        };
        let keys = |m: &Value| m.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        let (ours, theirs) = (starts(&r.lines), starts(&recorded_stdout(version, "partial_messages/tool_and_text")));
        assert_eq!(ours.iter().map(keys).collect::<Vec<_>>(), theirs.iter().map(keys).collect::<Vec<_>>(), "{version}");
        assert_eq!(ours.len(), r.requests.len(), "{version}: a head per response");
        assert_eq!((ours[0]["id"].clone(), ours[1]["id"].clone()), (json!("msg_1"), json!("msg_2")), "{version}");
        assert!(ours.iter().all(|m| m["usage"]["input_tokens"].is_u64()), "{version}: {ours:?}");
        // Each block's `assistant` line carries the usage its response opened with.
        let opened = |lines: &[Value]| -> Vec<bool> {
            let mut head = Value::Null;
            let mut out = Vec::new();
            for line in lines {
                match (line["type"].as_str(), line["event"]["type"].as_str()) {
                    (Some("stream_event"), Some("message_start")) => head = line["event"]["message"]["usage"].clone(),
                    (Some("assistant"), _) => out.push(line["message"]["usage"] == head),
                    _ => {}
                }
            }
            out
        };
        let recorded = recorded_stdout(version, "partial_messages/tool_and_text");
        assert_eq!(opened(&r.lines), opened(&recorded), "{version}");
        assert!(opened(&recorded).iter().all(|same| *same), "{version}: the recording");
        assert!(r.replays_identical(), "{version}");
        // The replay shows the same heads, from the journal.
        let replayed = r.ws.reloop(&["replay", "last", "--output-format", "stream-json"]);
        let replayed: Vec<Value> =
            common::stdout(&replayed).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(starts(&replayed), ours, "{version}: replayed");
    }
}

/// A thinking block's estimate (`system/thinking_tokens`, a token for every 4 characters)
/// between its `content_block_start` and its delta, and the block's lines printed when it
/// completes, before the next block's text streams, as both versions print them
/// (`partial_messages/thinking_env`); the replay prints the same.
#[test]
fn a_thinking_block_s_estimate_comes_after_its_start_as_claude_code_prints_it() {
    for version in VERSIONS {
        let real = partial_shape(&recorded_stdout(version, "partial_messages/thinking_env"));
        assert_eq!(real[2..5], ["content_block_start:0", "thinking_tokens:5:5", "content_block_delta:0"], "{real:?}");
        let blocks = json!([{"type": "thinking", "thinking": "Read login.ts first.", "signature": "sig-fake-001"},
            {"type": "text", "text": "登录模块检查完毕。"}]);
        let profile = format!("claude-code-{version}");
        let args = ["--include-partial-messages", "--max-thinking-tokens", "8000"];
        let r = run(&profile, vec![answer("msg_1", blocks, "end_turn")], &args, |_| Vec::new());
        assert_eq!(partial_shape(&r.lines), real, "{version}");
        assert!(r.replays_identical(), "{version}");
        let replayed = r.ws.reloop(&["replay", "last", "--output-format", "stream-json"]);
        let replayed: Vec<Value> =
            common::stdout(&replayed).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(partial_shape(&replayed), real, "{version}: replayed");
    }
}

#[test]
fn sdk_defined_agents_run_like_project_agents_under_each_version() {
    let agents = json!({"reviewer": {"description": "Reviews one file and reports problems.",
        "prompt": "You are a strict code reviewer.", "tools": ["Read"], "model": "haiku"}});
    for version in VERSIONS {
        let real = recorded_requests(version, "sdk_agents/flag");
        let real_init = &recorded_stdout(version, "sdk_agents/flag")[0];
        let call_agent = json!([{"type": "text", "text": "交给 reviewer。"}, call("toolu_01_AGENT", "Agent",
            json!({"description": "Review logout", "subagent_type": "reviewer",
                   "prompt": "SUBAGENT-TASK: read src/auth/logout.ts and report.", "run_in_background": false}))]);
        let answers = vec![
            answer("m1", call_agent, "tool_use"),
            answer(
                "s1",
                json!([call("toolu_02_READ", "Read", json!({"file_path": "src/auth/logout.ts"}))]),
                "tool_use",
            ),
            answer("s2", text("SUBAGENT REPORT: logout() is a stub."), "end_turn"),
            answer("m2", text("登录模块检查完毕。"), "end_turn"),
        ];
        let profile = format!("claude-code-{version}");
        let r = run(&profile, answers, &["--agents", &agents.to_string()], |_| Vec::new());
        assert_eq!(r.requests.len(), 4, "{version}: {:?}", r.lines);
        let names = |body: &Value| -> Vec<String> {
            body["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect()
        };
        // The parent is offered Agent; the child runs on the definition's model, resolved as the
        // version resolves `haiku`, with only the tools it lists.
        assert!(names(&r.requests[0].body).contains(&"Agent".to_string()), "{version}");
        assert_eq!(r.requests[1].body["model"], real[1]["model"], "{version}");
        assert_eq!(names(&r.requests[1].body), ["Read"], "{version}");
        assert!(r.requests[1].body["system"].to_string().contains("You are a strict code reviewer."));
        let init = &r.lines[0];
        let listed: Vec<&str> = init["agents"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
        assert_eq!(listed, ["general-purpose", "reviewer"], "reloop lists the agents it can run");
        assert!(real_init["agents"].as_array().unwrap().iter().any(|a| a == "reviewer"));
        assert_eq!(r.result()["result"], "登录模块检查完毕。");
        // The child's prompt, call and result are printed marked with the parent's call, as the
        // version printed them; its answer reaches the app only as the call's result.
        let child = |lines: &[Value]| -> Vec<String> {
            lines
                .iter()
                .filter(|l| l["parent_tool_use_id"] == "toolu_01_AGENT")
                .map(|l| {
                    format!("{}:{}", l["type"].as_str().unwrap(), l["message"]["content"][0]["type"].as_str().unwrap())
                })
                .collect()
        };
        assert_eq!(child(&r.lines), child(&recorded_stdout(version, "sdk_agents/flag")), "{version}");
        let first = r.lines.iter().find(|l| l["parent_tool_use_id"] == "toolu_01_AGENT").unwrap();
        assert_eq!(
            (&first["subagent_type"], &first["task_description"]),
            (&json!("reviewer"), &json!("Review logout"))
        );
        assert!(r.replays_identical(), "{version}");
    }
}

#[test]
fn agent_is_offered_with_general_purpose_in_every_claude_code_print_session() {
    let r = run("claude-code-2.1.332", vec![answer("m1", text("done"), "end_turn")], &[], |_| Vec::new());
    let tools: Vec<&str> =
        r.requests[0].body["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(tools.contains(&"Agent"), "{tools:?}");
    assert_eq!(r.lines[0]["agents"], json!(["general-purpose"]));
    // reloop's own profile keeps its rule: only a project with agents gets the tool.
    let r = run("reloop", vec![answer("m1", text("done"), "end_turn")], &[], |_| Vec::new());
    let tools = r.requests[0].body["tools"].to_string();
    assert!(!tools.contains("\"Agent\""), "{tools}");
    // Bad definitions are refused before anything runs.
    let r = run("claude-code-2.1.332", vec![], &["--agents", "{\"x\": {\"prompt\": \"p\"}}"], |_| Vec::new());
    assert_eq!(r.code, Some(2));
    assert!(r.requests.is_empty());
}

#[test]
fn the_budget_stop_reads_as_each_version_s() {
    for version in VERSIONS {
        let real = recorded_stdout(version, "budget/max_budget_usd");
        let answers = vec![
            answer("m1", json!([call("toolu_01_READ", "Read", json!({"file_path": "src/auth/login.ts"}))]), "tool_use"),
            answer("m2", text("never asked"), "end_turn"),
        ];
        let profile = format!("claude-code-{version}");
        let r = run(
            &profile,
            answers,
            &["--max-budget-usd", "0.0000001", "--price", "claude-opus-5-5=5,25", "--price", "claude-opus-4-8=5,25"],
            |_| Vec::new(),
        );
        // Claude Code stops before the call runs (flag 11): no tool_result line, and the one
        // turn in `num_turns`, as recorded.
        let kinds = |lines: &[Value]| -> Vec<String> {
            lines.iter().map(|l| l["type"].as_str().unwrap().to_string()).collect()
        };
        assert_eq!(kinds(&r.lines), kinds(&real), "{version}: {:?}", r.lines);
        let (ours, theirs) = (r.result(), real.last().unwrap());
        let turns = |v: &Value| v["num_turns"].as_u64().unwrap_or_default();
        assert_eq!(turns(r.result()), turns(real.last().unwrap()), "{version} num_turns");
        for key in ["subtype", "is_error", "stop_reason", "terminal_reason", "errors"] {
            let budget = |v: &Value| v.to_string().replace("0.0000001", "B").replace("0.0001", "B");
            assert_eq!(budget(&ours[key]), budget(&theirs[key]), "{version} {key}: {ours}");
            assert_eq!(ours.get(key).is_some(), theirs.get(key).is_some(), "{version} {key} present: {ours}");
        }
        assert_eq!(r.code, Some(1));
        assert!(r.replays_identical(), "{version}");
    }
}

/// The model's answers of a structured-output recording: a Read, then StructuredOutput calls
/// with the recorded inputs, then text.
fn structured_answers(inputs: &[Value]) -> Vec<common::fake_server::Canned> {
    let mut answers = vec![answer(
        "m0",
        json!([call("toolu_01_READ", "Read", json!({"file_path": "src/auth/login.ts"}))]),
        "tool_use",
    )];
    for (i, input) in inputs.iter().enumerate() {
        let id = format!("toolu_{:02}_STRUCTUREDOUTPUT", i + 2);
        answers.push(answer(&format!("m{}", i + 1), json!([call(&id, "StructuredOutput", input.clone())]), "tool_use"));
    }
    answers.push(answer("mt", text("登录模块检查完毕。"), "end_turn"));
    answers.push(answer("mt2", text("登录模块检查完毕。"), "end_turn"));
    answers
}

/// What a structured-output run shows an app: its lines' kinds and tool results, and the result.
fn structured_shape(lines: &[Value]) -> (Vec<String>, Vec<Value>, Value) {
    let kinds = lines
        .iter()
        .filter(|l| l["type"] == "assistant" || l["type"] == "user")
        .map(|l| format!("{}:{}", l["type"].as_str().unwrap(), l["message"]["content"][0]["type"].as_str().unwrap()))
        .collect();
    let results = lines
        .iter()
        .filter(|l| l["type"] == "user")
        .map(|l| &l["message"]["content"][0])
        .filter(|b| b["tool_use_id"].as_str().is_some_and(|id| id.contains("STRUCTURED")) || b["type"] == "text")
        .map(|b| json!({"content": b.get("content").or(b.get("text")), "is_error": b.get("is_error").cloned().unwrap_or(json!(false))}))
        .collect();
    let result = lines.iter().rev().find(|l| l["type"] == "result").unwrap();
    let keys =
        ["subtype", "is_error", "result", "structured_output", "errors", "terminal_reason", "num_turns", "stop_reason"];
    let picked = keys.iter().map(|k| (k.to_string(), result.get(*k).cloned().unwrap_or(json!("<absent>")))).collect();
    (kinds, results, Value::Object(picked))
}

#[test]
fn structured_output_answers_retries_and_gives_up_as_each_version_does() {
    let schema = json!({"type": "object", "properties": {"file": {"type": "string"}, "issues": {"type": "integer"}},
        "required": ["file", "issues"]});
    let (good, bad) = (json!({"file": "login.ts", "issues": 1}), json!({"file": "login.ts"}));
    let scenarios = [
        ("valid", vec![good.clone()]),
        ("invalid_then_valid", vec![bad.clone(), good.clone()]),
        ("always_invalid", vec![bad.clone(); 8]),
        ("text_only", vec![]),
    ];
    for version in VERSIONS {
        for (name, inputs) in &scenarios {
            let scenario = format!("structured_output/{name}");
            let real = recorded_stdout(version, &scenario);
            let profile = format!("claude-code-{version}");
            let r = run(&profile, structured_answers(inputs), &["--json-schema", &schema.to_string()], |_| Vec::new());
            let (ours, theirs) = (structured_shape(&r.lines), structured_shape(&real));
            assert_eq!(ours.0, theirs.0, "{version} {name}: lines");
            assert_eq!(ours.1, theirs.1, "{version} {name}: tool results");
            assert_eq!(ours.2, theirs.2, "{version} {name}: result");
            assert_eq!(r.requests.len(), recorded_requests(version, &scenario).len(), "{version} {name}: requests");
            let tool = r.requests[0].body["tools"]
                .as_array()
                .unwrap()
                .iter()
                .find(|t| t["name"] == "StructuredOutput")
                .cloned();
            assert_eq!(tool.map(|t| t["input_schema"].clone()), Some(schema.clone()), "{version} {name}");
            assert!(r.replays_identical(), "{version} {name}");
        }
    }
}
