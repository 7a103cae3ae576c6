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

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use common::fake_server::{sse_from_message, Canned, FakeServer, Recorded};
use common::{call, response, stderr, stdout, text, Workspace};
use serde_json::{json, Value};

/// Past this the driver (which has its own 60 s timeout) and everything it started are killed.
const DRIVER_DEADLINE: Duration = Duration::from_secs(120);
const A_TXT: &str = "hello from a.txt\n";

#[derive(Clone, Copy, Debug)]
enum Sdk {
    Python,
    Ts,
}

/// Where the SDKs are installed, or `None` (after a notice on stderr) when they are not and not required.
fn sdk_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("RELOOP_SDK_DIR").map(PathBuf::from);
    let installed = dir.as_ref().filter(|d| {
        d.join("venv/bin/python").exists()
            && d.join("node/node_modules/@anthropic-ai/claude-agent-sdk/sdk.mjs").exists()
    });
    match installed {
        Some(d) => Some(d.clone()),
        None if std::env::var("RELOOP_REQUIRE_SDK").as_deref() == Ok("1") => panic!(
            "the Claude Agent SDKs are not installed (RELOOP_SDK_DIR={dir:?}): run `bash scripts/sdk-setup.sh` \
             and set RELOOP_SDK_DIR=$PWD/target/sdk (scripts/test.sh does both)"
        ),
        None => {
            eprintln!(
                "notice: SDK test skipped, the Claude Agent SDKs are not installed \
                 (run `bash scripts/sdk-setup.sh` and set RELOOP_SDK_DIR=$PWD/target/sdk)"
            );
            None
        }
    }
}

/// A workspace holding `a.txt`, a fake model server, and the SDK install.
struct Scenario {
    ws: Workspace,
    server: FakeServer,
    sdk_dir: PathBuf,
}

impl Scenario {
    /// The fake server answers with `answers(workspace path of a file)`, in order. `None` when the
    /// SDKs are absent and not required (the test then returns).
    fn start(answers: impl FnOnce(&dyn Fn(&str) -> String) -> Vec<Canned>) -> Option<Scenario> {
        let sdk_dir = sdk_dir()?;
        let ws = Workspace::seed();
        std::fs::write(ws.cwd().join("a.txt"), A_TXT).unwrap();
        std::fs::create_dir_all(ws.dir.path().join("home")).unwrap();
        let cwd = ws.cwd();
        let server = FakeServer::start(answers(&|name: &str| cwd.join(name).to_str().unwrap().to_string()));
        Some(Scenario { ws, server, sdk_dir })
    }

    fn cwd(&self) -> String {
        self.ws.cwd().to_str().unwrap().to_string()
    }

    fn path(&self, name: &str) -> String {
        self.ws.cwd().join(name).to_str().unwrap().to_string()
    }

    /// Runs the driver's scenario `name` and parses what it printed.
    fn run(&self, sdk: Sdk, name: &str) -> Run {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut cmd = match sdk {
            Sdk::Python => {
                let mut c = Command::new(self.sdk_dir.join("venv/bin/python"));
                c.arg(root.join("tests/sdk/scenario.py"));
                c
            }
            Sdk::Ts => {
                let mut c = Command::new("node");
                c.arg(root.join("tests/sdk/scenario.mjs"));
                c
            }
        };
        cmd.arg(name)
            .env("RELOOP_BIN", env!("CARGO_BIN_EXE_reloop"))
            .env("RELOOP_SDK_DIR", &self.sdk_dir)
            .env("WORKDIR", self.ws.cwd())
            .env("RELOOP_JOURNAL", self.ws.journal())
            .env("ANTHROPIC_BASE_URL", &self.server.url)
            .env("ANTHROPIC_API_KEY", "sk-ant-fake-key-for-tests")
            .env("HOME", self.ws.dir.path().join("home"))
            .env("NO_PROXY", "127.0.0.1,localhost")
            .env("PYTHONUNBUFFERED", "1");
        for var in ["ANTHROPIC_MODEL", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "CLAUDECODE", "CLAUDE_CONFIG_DIR"] {
            cmd.env_remove(var);
        }
        cmd.current_dir(self.ws.dir.path());
        let run = spawn_with_deadline(cmd);
        let lines = run
            .stdout
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("driver printed a non-JSON line ({e}): {l}")))
            .collect();
        Run { sdk, name: name.to_string(), status: run.status, stdout: run.stdout, stderr: run.stderr, lines }
    }

    fn requests(&self) -> Vec<Recorded> {
        self.server.requests()
    }

    /// `reloop replay` reproduces the session identically and `reloop why` explains it.
    fn assert_replays_and_explains(&self, session_id: &str) {
        let journal = self.ws.journal();
        let journal = journal.to_str().unwrap();
        let replay = self.ws.reloop(&["replay", session_id, "--journal", journal]);
        assert_eq!(
            replay.status.code(),
            Some(0),
            "reloop replay {session_id} failed:\n{}\n{}",
            stdout(&replay),
            stderr(&replay)
        );
        assert!(stdout(&replay).contains("identical"), "replay not identical:\n{}", stdout(&replay));
        let why = self.ws.reloop(&["why", session_id, "--journal", journal]);
        assert_eq!(why.status.code(), Some(0), "reloop why {session_id} failed:\n{}", stderr(&why));
        assert!(!stdout(&why).trim().is_empty(), "reloop why printed nothing");
    }
}

struct Finished {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

/// Runs `cmd` in its own process group; past the deadline the whole group (the driver and the
/// CLI it started) is killed, so a hung CLI fails the test instead of hanging it.
fn spawn_with_deadline(mut cmd: Command) -> Finished {
    use std::os::unix::process::CommandExt;
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0);
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("cannot start the scenario driver {cmd:?}: {e}"));
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = String::new();
            let _ = pipe.read_to_string(&mut buf);
            buf
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > DRIVER_DEADLINE {
            let _ = Command::new("kill").args(["-KILL", "--", &format!("-{}", child.id())]).status();
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // The CLI may outlive the driver briefly while holding its stderr: end the group.
    let _ = Command::new("kill").args(["-KILL", "--", &format!("-{}", child.id())]).stderr(Stdio::null()).status();
    Finished { status, stdout: out.join().unwrap(), stderr: err.join().unwrap() }
}

/// What a driver printed: the SDK's messages, callback events, maybe an error.
struct Run {
    sdk: Sdk,
    name: String,
    status: ExitStatus,
    stdout: String,
    stderr: String,
    lines: Vec<Value>,
}

impl Run {
    fn dump(&self) -> String {
        format!(
            "{:?} scenario {} exited with {}\n--- stdout\n{}\n--- stderr\n{}",
            self.sdk, self.name, self.status, self.stdout, self.stderr
        )
    }

    /// The scenario finished without the SDK raising.
    fn ok(self) -> Run {
        assert!(self.status.success() && self.error().is_none(), "the SDK failed:\n{}", self.dump());
        self
    }

    /// The driver's `{"error": ...}` line (messages, which may carry an `error` field, have a `type`).
    fn error(&self) -> Option<&Value> {
        self.lines.iter().find(|l| l.get("error").is_some() && l.get("type").is_none())
    }

    fn messages(&self) -> Vec<&Value> {
        self.lines.iter().filter(|l| l.get("type").is_some()).collect()
    }

    fn of_type(&self, kind: &str) -> Vec<&Value> {
        self.messages().into_iter().filter(|m| m["type"] == kind).collect()
    }

    fn events(&self, name: &str) -> Vec<&Value> {
        self.lines.iter().filter(|l| l["event"] == name).collect()
    }

    fn inits(&self) -> Vec<&Value> {
        self.of_type("system").into_iter().filter(|m| m["subtype"] == "init").collect()
    }

    fn results(&self) -> Vec<&Value> {
        self.of_type("result")
    }

    fn result(&self) -> &Value {
        let results = self.results();
        assert_eq!(results.len(), 1, "expected one result message:\n{}", self.dump());
        results[0]
    }

    /// The message types in order, system lines other than `init` left out.
    fn kinds(&self) -> Vec<String> {
        self.messages()
            .into_iter()
            .filter(|m| m["type"] != "system" || m["subtype"] == "init")
            .map(|m| m["type"].as_str().unwrap().to_string())
            .collect()
    }

    /// Every content block of the messages of `kind` (`assistant` or `user`), in order.
    fn blocks(&self, kind: &str) -> Vec<Value> {
        self.of_type(kind).into_iter().flat_map(|m| content(m).as_array().cloned().unwrap_or_default()).collect()
    }

    fn tool_results(&self) -> Vec<Value> {
        self.blocks("user").into_iter().filter(|b| b["type"] == "tool_result").collect()
    }

    fn assistant_texts(&self) -> Vec<String> {
        self.blocks("assistant")
            .into_iter()
            .filter(|b| b["type"] == "text")
            .map(|b| b["text"].as_str().unwrap_or_default().to_string())
            .collect()
    }

    /// The session id every message carries; checks it is one UUID throughout.
    fn session_id(&self) -> String {
        let inits = self.inits();
        assert!(!inits.is_empty(), "no system/init message:\n{}", self.dump());
        let id = inits[0]["session_id"].as_str().unwrap_or_default().to_string();
        assert!(is_uuid(&id), "session_id {id:?} is not a UUID");
        for m in self.messages() {
            if let Some(other) = m.get("session_id").filter(|v| !v.is_null()) {
                assert_eq!(other, &json!(id), "a {} message carries another session id", m["type"]);
            }
        }
        id
    }
}

/// A message's content: the Python driver prints parsed messages (`content`), the TS SDK hands
/// over the raw line (`message.content`).
fn content(m: &Value) -> &Value {
    m.get("content").unwrap_or(&m["message"]["content"])
}

fn model_usage(result: &Value) -> &Value {
    result.get("model_usage").unwrap_or(&result["modelUsage"])
}

fn is_uuid(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    parts.iter().map(|p| p.len()).eq([8, 4, 4, 4, 12]) && parts.iter().all(|p| p.chars().all(|c| c.is_ascii_hexdigit()))
}

/// The fake server's answer: `content` as one streamed Messages API response.
fn answer(id: &str, content: Value, stop_reason: &str, output_tokens: u64) -> Canned {
    Canned::Sse(sse_from_message(&response(id, content, stop_reason, output_tokens)["message"]))
}

/// A reply that starts streaming (message_start) and then never finishes.
fn stalled_answer() -> Canned {
    let full = sse_from_message(&response("msg_stall", text("never finished"), "end_turn", 1)["message"]);
    let end = full.find("\n\n").unwrap() + 2;
    Canned::Stall(full[..end].to_string())
}

fn tool_names(request: &Recorded) -> Vec<String> {
    request.body["tools"]
        .as_array()
        .map(|tools| tools.iter().map(|t| t["name"].as_str().unwrap_or_default().to_string()).collect())
        .unwrap_or_default()
}

fn system_text(request: &Recorded) -> String {
    match &request.body["system"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => {
            blocks.iter().map(|b| b["text"].as_str().unwrap_or_default()).collect::<Vec<_>>().join("\n")
        }
        _ => String::new(),
    }
}

/// The request's conversation, as JSON text, for "contains these in this order" checks.
fn transcript(request: &Recorded) -> String {
    request.body["messages"].to_string()
}

fn assert_in_order(haystack: &str, needles: &[&str]) {
    let mut from = 0;
    for needle in needles {
        match haystack[from..].find(needle) {
            Some(at) => from += at + needle.len(),
            None => panic!("{needle:?} missing (or out of order) in {haystack}"),
        }
    }
}

/// What Claude Code's system/init carries (the TS SDK's `SDKSystemMessage` fields).
fn assert_init(run: &Run, init: &Value, cwd: &str) {
    for field in [
        "session_id",
        "cwd",
        "tools",
        "mcp_servers",
        "model",
        "permissionMode",
        "slash_commands",
        "apiKeySource",
        "claude_code_version",
        "output_style",
        "skills",
        "plugins",
        "uuid",
    ] {
        assert!(init.get(field).is_some_and(|v| !v.is_null()), "system/init lacks {field}:\n{}", run.dump());
    }
    assert_eq!(init["cwd"], cwd);
    assert!(init["tools"].as_array().unwrap().iter().any(|t| t == "Read"), "init tools lack Read: {}", init["tools"]);
    let version = init["claude_code_version"].as_str().unwrap();
    assert!(
        version.split('.').take(3).filter(|p| p.parse::<u32>().is_ok()).count() == 3,
        "claude_code_version {version:?} is not x.y.z (the Python SDK warns on it)"
    );
}

/// The result fields every successful turn carries, as Claude Code prints them.
fn assert_success(run: &Run, result: &Value, session_id: &str, num_turns: u64, text: &str) {
    assert_eq!(result["subtype"], "success", "{}", run.dump());
    assert_eq!(result["is_error"], false);
    assert_eq!(result["num_turns"], num_turns);
    assert_eq!(result["result"], text);
    assert_eq!(result["session_id"], session_id);
    assert!(result["duration_ms"].is_number() && result["duration_api_ms"].is_number());
    assert!(result["total_cost_usd"].as_f64().is_some_and(|c| c > 0.0), "total_cost_usd: {}", result["total_cost_usd"]);
    assert!(
        result["usage"]["input_tokens"].is_u64() && result["usage"]["output_tokens"].is_u64(),
        "usage: {}",
        result["usage"]
    );
    assert!(model_usage(result).as_object().is_some_and(|m| !m.is_empty()), "modelUsage: {}", model_usage(result));
    assert!(result["permission_denials"].is_array(), "permission_denials: {}", result["permission_denials"]);
}

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
    assert_eq!(results[0]["content"], "blocked-by-sdk-hook", "the hook's reason is the tool result");
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
