//! Hook events beyond PreToolUse/PostToolUse/Stop, end to end through `reloop -p`, against the
//! recordings of the real Claude Code under `tests/print/recorded/<version>/hooks_events/`.

mod common;

use std::path::Path;

use common::fake_server::{sse_from_message, Canned, FakeServer};
use common::{reloop_bin, stderr, Workspace};
use serde_json::{json, Value};

fn recorded_inputs(version: &str) -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/print/recorded")
        .join(version)
        .join("hooks_events/all_log/hook-inputs.jsonl");
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::Deserializer::from_str(&text).into_iter::<Value>().map(|v| v.unwrap()["input"].clone()).collect()
}

fn message(id: &str, content: Value, stop: &str) -> Canned {
    Canned::Sse(sse_from_message(&json!({"id": id, "type": "message", "role": "assistant", "model": "m",
        "content": content, "stop_reason": stop, "stop_sequence": null, "usage": {"input_tokens": 1, "output_tokens": 1}})))
}

/// The recorded session's first two calls (a Read that works, a Bash `false` that fails) with a
/// logging hook on every tool event: a failed call fires PostToolUseFailure, not PostToolUse,
/// with Claude Code's fields, and the session still replays identically.
#[test]
fn a_failed_call_fires_post_tool_use_failure_as_claude_code_does() {
    for version in ["2.1.332", "2.1.197"] {
        let ws = Workspace::seed();
        let log = ws.dir.path().join("hooks.jsonl");
        let hook = format!("cat >> {}; echo >> {}", log.display(), log.display());
        let group = json!([{"hooks": [{"type": "command", "command": hook}]}]);
        let settings = json!({"hooks": {"PreToolUse": group, "PostToolUse": group, "PostToolUseFailure": group}});
        let login = ws.cwd().join("src/auth/login.ts");
        let server = FakeServer::start(vec![
            message(
                "m1",
                json!([{"type": "tool_use", "id": "toolu_01_READ", "name": "Read", "input": {"file_path": login}}]),
                "tool_use",
            ),
            message(
                "m2",
                json!([{"type": "tool_use", "id": "toolu_02_BASH", "name": "Bash", "input": {"command": "false", "description": "fail"}}]),
                "tool_use",
            ),
            message("m3", json!([{"type": "text", "text": "done"}]), "end_turn"),
        ]);
        let home = tempfile::tempdir().unwrap();
        let compat = format!("claude-code-{version}");
        let out = reloop_bin()
            .args(["-p", "检查登录模块", "--output-format", "stream-json", "--verbose", "--allowedTools", "Bash"])
            .args(["--compat", &compat, "--settings", &settings.to_string()])
            .env("RELOOP_JOURNAL", ws.journal())
            .env("HOME", home.path())
            .env("ANTHROPIC_BASE_URL", &server.url)
            .env("ANTHROPIC_API_KEY", "sk-test")
            .current_dir(ws.cwd())
            .output()
            .unwrap();
        assert!(out.status.success(), "{version}: {}", stderr(&out));
        let got: Vec<Value> = std::fs::read_to_string(&log)
            .unwrap()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let tool_events = ["PreToolUse", "PostToolUse", "PostToolUseFailure"];
        let recorded: Vec<Value> = recorded_inputs(version)
            .into_iter()
            .filter(|i| tool_events.contains(&i["hook_event_name"].as_str().unwrap()) && i.get("agent_id").is_none())
            .take(4)
            .collect();
        let events = |inputs: &[Value]| -> Vec<(String, String)> {
            inputs
                .iter()
                .map(|i| (i["hook_event_name"].as_str().unwrap().into(), i["tool_use_id"].as_str().unwrap().into()))
                .collect()
        };
        assert_eq!(events(&got), events(&recorded), "{version}");
        // Claude Code's keys, less the ones reloop has no value for (`prompt_id`, `effort`).
        let keys = |input: &Value| -> Vec<String> {
            input.as_object().unwrap().keys().filter(|k| *k != "prompt_id" && *k != "effort").cloned().collect()
        };
        assert_eq!(keys(&got[3]), keys(&recorded[3]), "{version}");
        assert_eq!(got[3]["error"], recorded[3]["error"], "{version}");
        assert_eq!(got[3]["is_interrupt"], false);
        assert!(got[3]["duration_ms"].is_u64());
        assert!(ws.replays_identical(), "{version}");
    }
}

/// What the caller sees of a stream-json run: assistant and user lines, `system/informational`
/// contents and the result, leaving out the events reloop does not run (SessionStart,
/// UserPromptSubmit).
fn seen(lines: &[Value]) -> Vec<String> {
    lines
        .iter()
        .filter_map(|l| match (l["type"].as_str()?, l["subtype"].as_str()) {
            ("assistant", _) => Some("assistant".to_string()),
            ("user", _) => Some("user".to_string()),
            ("result", _) => Some("result".to_string()),
            ("system", Some("informational")) => {
                let content = l["content"].as_str()?;
                (!content.starts_with("UserPromptSubmit")).then(|| format!("informational: {content}"))
            }
            _ => None,
        })
        .collect()
}

/// Hooks answering `systemMessage` (PreToolUse, PostToolUse, Stop in the recorded `context`
/// scenario): 2.1.332 prints each as `EVENT says: MESSAGE`, a PostToolUse one after the results'
/// line; 2.1.197 prints none. The replayed stream shows the same messages.
#[test]
fn a_hook_s_system_message_is_shown_as_each_version_shows_it() {
    for version in ["2.1.332", "2.1.197"] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/print/recorded")
            .join(version)
            .join("hooks_events/context");
        let scenario: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("scenario.json")).unwrap()).unwrap();
        let recorded: Vec<Value> = std::fs::read_to_string(dir.join("stdout.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let ws = Workspace::seed();
        let hooks_dir = ws.dir.path().join("hooks");
        let place = |text: &str| text.replace("/tmp/reloop-cc-hooks", hooks_dir.to_str().unwrap());
        common::lay_out_files(&scenario, place);
        let login = ws.cwd().join("src/auth/login.ts");
        let server = FakeServer::start(vec![
            message(
                "m1",
                json!([{"type": "tool_use", "id": "toolu_01_READ", "name": "Read", "input": {"file_path": login}}]),
                "tool_use",
            ),
            message("m2", json!([{"type": "text", "text": "done"}]), "end_turn"),
        ]);
        let home = tempfile::tempdir().unwrap();
        let compat = format!("claude-code-{version}");
        let settings = place(&scenario["settings"].to_string());
        let run = |args: &[&str]| {
            reloop_bin()
                .args(args)
                .env("RELOOP_JOURNAL", ws.journal())
                .env("HOME", home.path())
                .env("ANTHROPIC_BASE_URL", &server.url)
                .env("ANTHROPIC_API_KEY", "sk-test")
                .current_dir(ws.cwd())
                .output()
                .unwrap()
        };
        let out = run(&[
            "-p",
            "检查登录模块",
            "--output-format",
            "stream-json",
            "--verbose",
            "--compat",
            &compat,
            "--settings",
            &settings,
        ]);
        assert!(out.status.success(), "{version}: {}", stderr(&out));
        let lines: Vec<Value> =
            String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
        assert_eq!(seen(&lines), seen(&recorded), "{version}");
        let replayed = run(&["replay", "last", "--output-format", "stream-json"]);
        assert!(replayed.status.success(), "{version}: {}", stderr(&replayed));
        let again: Vec<Value> =
            String::from_utf8_lossy(&replayed.stdout).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
        // The replayed stream is the live one again: the lines each version printed, no more.
        let says = |lines: &[Value]| -> usize {
            lines
                .iter()
                .filter(|l| {
                    l["subtype"] == "informational" && l["content"].as_str().is_some_and(|c| c.contains(" says: "))
                })
                .count()
        };
        assert_eq!(says(&again), says(&lines), "{version}: the replayed stream");
    }
}
