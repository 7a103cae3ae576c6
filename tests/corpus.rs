//! The recorded corpus: one journaled session per continue and terminal reason reloop has, per
//! provider and per tool path, kept as session dumps in `tests/journals/*.json` and replayed here
//! through today's engine. A behaviour change fails this test on the session where it bites.
//!
//! Re-record on purpose with `RELOOP_RERECORD=1 cargo test --test corpus`, or only some with
//! `RELOOP_RERECORD=name,name` (see docs/journal.md):
//! each scenario below is run live again (cassettes, fake servers on 127.0.0.1) and its dump
//! rewritten; review the diff like any other change.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::fake_server::{sse_from_message, Canned, FakeServer};
use common::{cassette_path, stderr, stdout, Workspace};
use serde_json::{json, Value};

/// A scenario: its file name, the reasons its journal must hold, and how to record it.
struct Scenario {
    name: &'static str,
    reasons: &'static [&'static str],
    record: fn(&Workspace) -> Output,
}

const SCENARIOS: &[Scenario] = &[
    Scenario { name: "scripted_seed", reasons: &["next_turn", "completed"], record: seed },
    Scenario { name: "scripted_max_turns", reasons: &["next_turn", "max_turns"], record: max_turns },
    Scenario { name: "scripted_model_error", reasons: &["next_turn", "model_error"], record: exhausted },
    Scenario { name: "scripted_retry_after", reasons: &["completed"], record: retry_after },
    Scenario {
        name: "scripted_output_recovery",
        reasons: &["max_output_tokens_recovery", "completed"],
        record: recovery,
    },
    Scenario { name: "scripted_escalate", reasons: &["max_output_tokens_escalate", "completed"], record: escalate },
    Scenario {
        name: "scripted_malformed_tool_call",
        reasons: &["malformed_tool_call_retry", "completed"],
        record: malformed,
    },
    Scenario { name: "scripted_token_budget", reasons: &["token_budget_continuation", "completed"], record: budget },
    Scenario { name: "scripted_prompt_too_long", reasons: &["prompt_too_long"], record: too_long },
    Scenario { name: "scripted_edit_bash_stop_hook", reasons: &["next_turn", "completed"], record: edit_bash_hook },
    Scenario { name: "scripted_resumed", reasons: &["next_turn", "completed"], record: resumed },
    Scenario { name: "scripted_aborted_tools", reasons: &["aborted_tools"], record: aborted_tools },
    Scenario {
        name: "scripted_stop_hook_blocking",
        reasons: &["stop_hook_blocking", "stop_hook_prevented"],
        record: stop_hooks,
    },
    Scenario { name: "scripted_hook_stopped", reasons: &["hook_stopped"], record: hook_stopped },
    Scenario { name: "scripted_reactive_compact", reasons: &["reactive_compact_retry", "completed"], record: reactive },
    Scenario { name: "scripted_auto_compact", reasons: &["next_turn", "completed"], record: auto_compact },
    Scenario { name: "scripted_blocking_limit", reasons: &["blocking_limit"], record: blocking_limit },
    Scenario { name: "scripted_max_budget_usd", reasons: &["max_budget_usd"], record: max_budget },
    Scenario { name: "scripted_fallback", reasons: &["completed"], record: fallback },
    Scenario { name: "anthropic_seed", reasons: &["next_turn", "completed"], record: anthropic },
    Scenario { name: "openai_parallel_tools", reasons: &["next_turn", "completed"], record: openai },
    Scenario { name: "scripted_agents", reasons: &["next_turn", "completed"], record: agents },
    // Digest version 3 (FNV-1a's fold over 64-bit words, usage as numbers): a plain session, and
    // one whose history is rebuilt by a compaction, which must keep the version.
    Scenario { name: "digest_v3_seed", reasons: &["next_turn", "completed"], record: seed },
    Scenario { name: "digest_v3_auto_compact", reasons: &["next_turn", "completed"], record: auto_compact },
    // Digest version 4's typed input, pinned the same way: a change to what it hashes (a field
    // renamed, a variant reordered in the typed serializer) fails here, not in users' journals.
    Scenario { name: "digest_v4_seed", reasons: &["next_turn", "completed"], record: seed },
    Scenario { name: "digest_v4_auto_compact", reasons: &["next_turn", "completed"], record: auto_compact },
];

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/journals")
}

#[test]
fn every_recorded_session_replays_identically() {
    // `1` re-records every scenario; a comma-separated list of names re-records those only.
    let rerecord = std::env::var("RELOOP_RERECORD").unwrap_or_default();
    let chosen = |name: &str| rerecord == "1" || rerecord.split(',').any(|n| n.trim() == name);
    let replayer = Workspace::seed();
    for scenario in SCENARIOS {
        let file = corpus_dir().join(format!("{}.json", scenario.name));
        if chosen(scenario.name) {
            let ws = Workspace::seed();
            let out = (scenario.record)(&ws);
            assert!(!stderr(&out).contains("panicked"), "{}: {}", scenario.name, stderr(&out));
            let dump = ws.reloop(&["export", "last", "--format", "journal"]);
            assert_eq!(dump.status.code(), Some(0), "{}: {}", scenario.name, stderr(&dump));
            std::fs::write(&file, stdout(&dump)).unwrap();
        }
        assert!(
            file.exists(),
            "{} is missing: record it with RELOOP_RERECORD=1 cargo test --test corpus",
            file.display()
        );
        let dump: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let found: Vec<&str> =
            dump["steps"].as_array().unwrap().iter().filter_map(|s| s["reason"]["reason"].as_str()).collect();
        for reason in scenario.reasons {
            assert!(found.contains(reason), "{}: no {reason} in {found:?}", scenario.name);
        }
        let import = replayer.reloop(&["import", "journal", file.to_str().unwrap(), "--json"]);
        let id = serde_json::from_str::<Value>(&stdout(&import))
            .unwrap_or_else(|_| panic!("{}: {}", scenario.name, stderr(&import)))["session_id"]
            .as_str()
            .unwrap()
            .to_string();
        let replay = replayer.reloop(&["replay", &id]);
        assert_eq!(replay.status.code(), Some(0), "{} diverged:\n{}", scenario.name, stdout(&replay));
        assert!(stdout(&replay).contains("identical"), "{}", scenario.name);
    }
}

/// `show --json`, `show --steps --json` and `export` write what they print as they walk the
/// journal (a session of any length is shown in the memory of its state, or of one step): the
/// text is still exactly the pretty JSON of what it holds, one element per step, and an export is
/// what the library writes from all the steps at once, on every corpus session.
#[test]
fn shown_sessions_print_the_pretty_json_they_hold_one_element_per_step() {
    let ws = Workspace::seed();
    let mut shown = 0;
    for entry in std::fs::read_dir(corpus_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let import = ws.reloop(&["import", "journal", path.to_str().unwrap(), "--json"]);
        let id = serde_json::from_str::<Value>(&stdout(&import)).unwrap()["session_id"].as_str().unwrap().to_string();
        let pretty = |text: &str| {
            let value: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(text, format!("{}\n", serde_json::to_string_pretty(&value).unwrap()), "{}", path.display());
            value
        };
        let session = pretty(&stdout(&ws.reloop(&["show", &id, "--json"])));
        let steps = pretty(&stdout(&ws.reloop(&["show", &id, "--steps", "--json"])));
        let seqs: Vec<u64> = steps.as_array().unwrap().iter().map(|s| s["seq"].as_u64().unwrap()).collect();
        assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>(), "{}", path.display());
        assert_eq!(Some(seqs.len() as u64), session["steps"].as_u64(), "{}", path.display());
        assert!(!session["messages"].as_array().unwrap().is_empty(), "{}", path.display());
        let journal = reloop_journal::Journal::open_for_reading(&ws.journal()).unwrap();
        let (header, all) = (journal.header(&id).unwrap(), journal.steps(&id).unwrap());
        drop(journal);
        for (flag, format) in [
            ("messages", reloop_import::ExportFormat::Messages),
            ("stream-json", reloop_import::ExportFormat::StreamJson),
            ("claude-jsonl", reloop_import::ExportFormat::ClaudeJsonl),
        ] {
            let mut expected = reloop_import::export(format, &header, &all).unwrap();
            if !expected.ends_with('\n') {
                expected.push('\n');
            }
            let printed = stdout(&ws.reloop(&["export", &id, "--format", flag]));
            assert_eq!(printed, expected, "{} as {flag}", path.display());
        }
        // The dump is written a step at a time too, and read back so through a pipe (which
        // cannot be read twice, so it is spooled) into another journal, where it is the same.
        let dump = reloop_journal::SessionDump::of(header, all).unwrap().to_json().unwrap();
        let exported = stdout(&ws.reloop(&["export", &id, "--format", "journal"]));
        assert_eq!(exported, format!("{dump}\n"), "{} as journal", path.display());
        let other = ws.dir.path().join(format!("other-{shown}.db"));
        let mut import = ws.command(&["import", "journal", "/dev/stdin", "--journal", other.to_str().unwrap()]);
        let mut child = import.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
        child.stdin.take().unwrap().write_all(exported.as_bytes()).unwrap();
        assert!(child.wait_with_output().unwrap().status.success(), "{}", path.display());
        let again = stdout(&ws.reloop(&["export", &id, "--format", "journal", "--journal", other.to_str().unwrap()]));
        assert_eq!(again, exported, "{} through a pipe", path.display());
        shown += 1;
    }
    assert!(shown >= 20, "the corpus holds its sessions");
}

/// Writes a cassette into the workspace's folder and runs it.
fn scripted(ws: &Workspace, responses: Value, extra: &[&str]) -> Output {
    let path = ws.dir.path().join("cassette.json");
    std::fs::write(&path, json!({ "responses": responses }).to_string()).unwrap();
    let cwd = ws.cwd();
    let mut args = vec!["run", "go", "--script", path.to_str().unwrap(), "--cwd", cwd.to_str().unwrap()];
    args.extend_from_slice(extra);
    ws.reloop(&args)
}

fn text(id: &str, text: &str, stop: &str, output_tokens: u64) -> Value {
    json!({"message": {"id": id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
        "content": [{"type": "text", "text": text}], "stop_reason": stop,
        "usage": {"input_tokens": 10, "output_tokens": output_tokens}}})
}

fn seed(ws: &Workspace) -> Output {
    ws.run("检查登录模块", "seed.json", &[])
}

/// A parent that runs two subagents in one message (docs/agents.md): its `tool_done`s carry
/// the children's answers and spend (`agent_usage`).
fn agents(ws: &Workspace) -> Output {
    let dir = ws.cwd().join(".claude/agents");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("reader.md"), "---\nname: reader\ndescription: Reads\ntools: Read, Bash\n---\nRead.\n")
        .unwrap();
    std::fs::write(
        dir.join("looper.md"),
        "---\nname: looper\ndescription: Loops\ntools: Glob\nmaxTurns: 1\n---\nLook.\n",
    )
    .unwrap();
    ws.run("check the login module with two agents", "agents_tree.json", &["--allowed-tools", "Bash"])
}

fn max_turns(ws: &Workspace) -> Output {
    ws.run("list the files", "tools_forever.json", &["--max-turns", "2"])
}

fn exhausted(ws: &Workspace) -> Output {
    let seed: Value = serde_json::from_str(&std::fs::read_to_string(cassette_path("seed.json")).unwrap()).unwrap();
    scripted(ws, json!([seed["responses"][0]]), &[])
}

fn retry_after(ws: &Workspace) -> Output {
    let error = json!({"error": {"status": 429, "headers": {"retry-after": "1"},
        "body": {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}}});
    scripted(ws, json!([error, text("m2", "answered after the wait", "end_turn", 5)]), &[])
}

fn recovery(ws: &Workspace) -> Output {
    scripted(ws, json!([text("m1", "the first half", "max_tokens", 100), text("m2", "the rest", "end_turn", 20)]), &[])
}

fn escalate(ws: &Workspace) -> Output {
    let cut = text("m1", "cut short", "max_tokens", 100);
    scripted(ws, json!([cut, text("m2", "all of it", "end_turn", 20)]), &["--escalate-max-tokens"])
}

fn malformed(ws: &Workspace) -> Output {
    scripted(ws, json!([text("m1", "calling a tool", "tool_use", 10), text("m2", "never mind", "end_turn", 5)]), &[])
}

fn budget(ws: &Workspace) -> Output {
    let responses = json!([text("m1", "some work", "end_turn", 50), text("m2", "more work", "end_turn", 50)]);
    scripted(ws, responses, &["--token-budget", "100"])
}

fn too_long(ws: &Workspace) -> Output {
    let error = json!({"error": {"status": 400,
        "body": {"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 210000 tokens > 200000 maximum"}}}});
    scripted(ws, json!([error]), &[])
}

fn hook_settings(ws: &Workspace) -> PathBuf {
    let settings = ws.dir.path().join("settings.json");
    std::fs::write(&settings, r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "exit 0"}]}]}}"#)
        .unwrap();
    settings
}

fn edit_bash_hook(ws: &Workspace) -> Output {
    let settings = hook_settings(ws);
    ws.run("tidy", "crash.json", &["--allowed-tools", "Edit,Bash", "--settings", settings.to_str().unwrap()])
}

fn resumed(ws: &Workspace) -> Output {
    let settings = hook_settings(ws);
    let crashed = ws.run(
        "tidy",
        "crash.json",
        &["--allowed-tools", "Edit,Bash", "--settings", settings.to_str().unwrap(), "--crash-after-step", "12"],
    );
    assert_eq!(crashed.status.code(), None, "{}", stderr(&crashed));
    ws.reloop(&["resume", "last", "--settings", settings.to_str().unwrap()])
}

fn aborted_tools(ws: &Workspace) -> Output {
    let cassette = cassette_path("slow_bash.json");
    let cwd = ws.cwd();
    let child = common::reloop_bin()
        .args(["run", "go", "--script", cassette.to_str().unwrap(), "--cwd", cwd.to_str().unwrap()])
        .args(["--allowed-tools", "Bash"])
        .env("RELOOP_JOURNAL", ws.journal())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Glob answers at once; Bash sleeps. Interrupt once Glob's result is journaled.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let steps = stdout(&ws.reloop(&["show", "last", "--steps"]));
        if steps.contains("tool_done") {
            break;
        }
        assert!(Instant::now() < deadline, "the session never ran its tools");
        std::thread::sleep(Duration::from_millis(20));
    }
    Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    child.wait_with_output().unwrap()
}

fn seed_messages(ws: &Workspace) -> Vec<Canned> {
    let text = std::fs::read_to_string(cassette_path("seed.json")).unwrap();
    let cwd = serde_json::to_string(ws.cwd().to_str().unwrap()).unwrap();
    let cassette: Value = serde_json::from_str(&text.replace("{{cwd}}", cwd.trim_matches('"'))).unwrap();
    cassette["responses"].as_array().unwrap().iter().map(|r| Canned::Sse(sse_from_message(&r["message"]))).collect()
}

fn anthropic(ws: &Workspace) -> Output {
    let server = FakeServer::start(seed_messages(ws));
    let cwd = ws.cwd();
    ws.reloop_env(
        &["run", "检查登录模块", "--cwd", cwd.to_str().unwrap(), "--base-url", &server.url],
        &[("ANTHROPIC_API_KEY", "sk-ant-corpus")],
    )
}

fn openai(ws: &Workspace) -> Output {
    let chunk = |delta: Value, finish: Option<&str>| {
        let c = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "qwen3",
                       "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        format!("data: {c}\n\n")
    };
    let mut first = chunk(json!({"role": "assistant", "content": "Looking."}), None);
    first += &chunk(
        json!({"tool_calls": [{"index": 0, "id": "call_a", "type": "function", "function": {"name": "Glob", "arguments": "{\"pattern\": \"**/*.ts\"}"}}]}),
        None,
    );
    first += &chunk(
        json!({"tool_calls": [{"index": 1, "id": "call_b", "type": "function", "function": {"name": "Grep", "arguments": "{\"pattern\": \"login\"}"}}]}),
        None,
    );
    first += &chunk(json!({}), Some("tool_calls"));
    first += "data: [DONE]\n\n";
    let mut second = chunk(json!({"role": "assistant", "content": "The login module is in src/auth."}), None);
    second += &chunk(json!({}), Some("stop"));
    second += "data: [DONE]\n\n";
    let server = FakeServer::start(vec![Canned::Sse(first), Canned::Sse(second)]);
    let cwd = ws.cwd();
    ws.reloop(&[
        "run",
        "where is login?",
        "--provider",
        "openai",
        "--base-url",
        &server.url,
        "--model",
        "qwen3",
        "--cwd",
        cwd.to_str().unwrap(),
    ])
}

fn glob_call(id: &str, input_tokens: u64) -> Value {
    json!({"message": {"id": id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
        "content": [{"type": "tool_use", "id": format!("toolu_{id}"), "name": "Glob", "input": {"pattern": "**/*.ts"}}],
        "stop_reason": "tool_use", "usage": {"input_tokens": input_tokens, "output_tokens": 20}}})
}

fn hook_script(ws: &Workspace, event: &str, name: &str, script: &str) -> PathBuf {
    let path = ws.cwd().join(name);
    std::fs::write(&path, format!("#!/usr/bin/env bash\n{script}\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let settings = ws.dir.path().join(format!("{name}.json"));
    let body =
        json!({"hooks": {event: [{"matcher": "", "hooks": [{"type": "command", "command": format!("./{name}")}]}]}});
    std::fs::write(&settings, body.to_string()).unwrap();
    settings
}

fn stop_hooks(ws: &Workspace) -> Output {
    let script = "if [ -e .blocked ]; then echo '{\"continue\": false, \"stopReason\": \"enough\"}'; exit 0; fi\ntouch .blocked\necho 'tests failing' >&2\nexit 2";
    let settings = hook_script(ws, "Stop", "check.sh", script);
    let responses = json!([text("m1", "done", "end_turn", 5), text("m2", "fixed", "end_turn", 5)]);
    scripted(ws, responses, &["--settings", settings.to_str().unwrap()])
}

fn hook_stopped(ws: &Workspace) -> Output {
    let settings = hook_script(ws, "PostToolUse", "halt.sh", r#"echo '{"continue": false, "stopReason": "spent"}'"#);
    scripted(
        ws,
        json!([glob_call("m1", 10), text("m2", "never", "end_turn", 5)]),
        &["--settings", settings.to_str().unwrap()],
    )
}

fn summary() -> Value {
    text("sum", "<summary>The user asked to look at the TypeScript files.</summary>", "end_turn", 100)
}

fn reactive(ws: &Workspace) -> Output {
    let too_long = json!({"error": {"status": 400,
        "body": {"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 210000 tokens > 200000 maximum"}}}});
    scripted(
        ws,
        json!([glob_call("m1", 100), glob_call("m2", 100), too_long, summary(), text("m5", "ok", "end_turn", 5)]),
        &[],
    )
}

fn auto_compact(ws: &Workspace) -> Output {
    let responses = json!([glob_call("m1", 1_000), glob_call("m2", 8_000), summary(), text("m4", "ok", "end_turn", 5)]);
    scripted(ws, responses, &["--context-window", "40000"])
}

fn blocking_limit(ws: &Workspace) -> Output {
    scripted(ws, json!([glob_call("m1", 18_000)]), &["--context-window", "40000", "--no-auto-compact"])
}

fn max_budget(ws: &Workspace) -> Output {
    scripted(ws, json!([glob_call("m1", 5_000), glob_call("m2", 5_000)]), &["--max-budget-usd", "0.01"])
}

fn fallback(ws: &Workspace) -> Output {
    let server_error = json!({"error": {"status": 500,
        "body": {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}}}});
    scripted(
        ws,
        json!([server_error, text("m2", "from the fallback", "end_turn", 5)]),
        &["--fallback-model", "claude-haiku-4-5"],
    )
}
