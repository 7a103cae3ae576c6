//! The harness of tests/sdk.rs: a scenario (a workspace, a fake model server, the SDK install),
//! the driver run under a deadline, what the driver printed, and the assertions shared by tests.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::common::fake_server::{sse_from_message, Canned, FakeServer, Recorded};
use crate::common::{response, stderr, stdout, text, Workspace};
use serde_json::{json, Value};

/// Past this the driver (which has its own 60 s timeout) and everything it started are killed.
pub const DRIVER_DEADLINE: Duration = Duration::from_secs(120);
pub const A_TXT: &str = "hello from a.txt\n";

#[derive(Clone, Copy, Debug)]
pub enum Sdk {
    Python,
    Ts,
}

/// Where the SDKs are installed, or `None` (after a notice on stderr) when they are not and not required.
pub fn sdk_dir() -> Option<PathBuf> {
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
pub struct Scenario {
    pub ws: Workspace,
    pub server: FakeServer,
    pub sdk_dir: PathBuf,
}

impl Scenario {
    /// The fake server answers with `answers(workspace path of a file)`, in order. `None` when the
    /// SDKs are absent and not required (the test then returns).
    pub fn start(answers: impl FnOnce(&dyn Fn(&str) -> String) -> Vec<Canned>) -> Option<Scenario> {
        let sdk_dir = sdk_dir()?;
        let ws = Workspace::seed();
        std::fs::write(ws.cwd().join("a.txt"), A_TXT).unwrap();
        std::fs::create_dir_all(ws.dir.path().join("home")).unwrap();
        let cwd = ws.cwd();
        let server = FakeServer::start(answers(&|name: &str| cwd.join(name).to_str().unwrap().to_string()));
        Some(Scenario { ws, server, sdk_dir })
    }

    pub fn cwd(&self) -> String {
        self.ws.cwd().to_str().unwrap().to_string()
    }

    pub fn path(&self, name: &str) -> String {
        self.ws.cwd().join(name).to_str().unwrap().to_string()
    }

    /// Runs the driver's scenario `name` and parses what it printed.
    pub fn run(&self, sdk: Sdk, name: &str) -> Run {
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
        crate::common::hermetic(&mut cmd)
            .arg(name)
            .env("RELOOP_BIN", self.teeing_cli())
            .env("REAL_RELOOP", env!("CARGO_BIN_EXE_reloop"))
            .env("STREAM_LOG", self.stream_log())
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

    pub fn requests(&self) -> Vec<Recorded> {
        self.server.requests()
    }

    /// The CLI the SDK starts: reloop, its stdout copied to [`Self::stream_log`] on the way, so
    /// the test sees every line the SDK read.
    fn teeing_cli(&self) -> PathBuf {
        let path = self.ws.dir.path().join("reloop-tee");
        std::fs::write(&path, "#!/bin/bash\nexec \"$REAL_RELOOP\" \"$@\" > >(tee -a \"$STREAM_LOG\")\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    /// Every stdout line of every CLI process the scenario started.
    pub fn stream_log(&self) -> PathBuf {
        self.ws.dir.path().join("live-stream.jsonl")
    }

    /// `reloop replay ID --output-format stream-json` prints the message types, in order, that
    /// the live processes printed for the session.
    pub fn assert_replay_stream_matches_live(&self, session_id: &str) {
        let kind = |l: &Value| format!("{}/{}", l["type"].as_str().unwrap_or("?"), l["subtype"].as_str().unwrap_or(""));
        let live: Vec<String> = std::fs::read_to_string(self.stream_log())
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|l| l["session_id"] == session_id && !l["type"].as_str().unwrap_or("").starts_with("control"))
            .map(|l| kind(&l))
            .collect();
        let journal = self.ws.journal();
        let out = self.ws.reloop(&[
            "replay",
            session_id,
            "--journal",
            journal.to_str().unwrap(),
            "--output-format",
            "stream-json",
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let replayed: Vec<String> =
            stdout(&out).lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()).map(|l| kind(&l)).collect();
        assert!(!live.is_empty(), "no live line of session {session_id} was logged");
        assert_eq!(replayed, live, "the replayed stream of {session_id} (left) is not the live one (right)");
    }

    /// `reloop replay` reproduces the session identically, its stream is the live one, and `reloop why` explains it.
    pub fn assert_replays_and_explains(&self, session_id: &str) {
        self.assert_replay_stream_matches_live(session_id);
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

pub struct Finished {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `cmd` in its own process group; past the deadline the whole group (the driver and the
/// CLI it started) is killed, so a hung CLI fails the test instead of hanging it.
pub fn spawn_with_deadline(mut cmd: Command) -> Finished {
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
pub struct Run {
    pub sdk: Sdk,
    pub name: String,
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    pub lines: Vec<Value>,
}

impl Run {
    pub fn dump(&self) -> String {
        format!(
            "{:?} scenario {} exited with {}\n--- stdout\n{}\n--- stderr\n{}",
            self.sdk, self.name, self.status, self.stdout, self.stderr
        )
    }

    /// The scenario finished without the SDK raising.
    pub fn ok(self) -> Run {
        assert!(self.status.success() && self.error().is_none(), "the SDK failed:\n{}", self.dump());
        self
    }

    /// The driver's `{"error": ...}` line (messages, which may carry an `error` field, have a `type`).
    pub fn error(&self) -> Option<&Value> {
        self.lines.iter().find(|l| l.get("error").is_some() && l.get("type").is_none())
    }

    pub fn messages(&self) -> Vec<&Value> {
        self.lines.iter().filter(|l| l.get("type").is_some()).collect()
    }

    pub fn of_type(&self, kind: &str) -> Vec<&Value> {
        self.messages().into_iter().filter(|m| m["type"] == kind).collect()
    }

    pub fn events(&self, name: &str) -> Vec<&Value> {
        self.lines.iter().filter(|l| l["event"] == name).collect()
    }

    pub fn inits(&self) -> Vec<&Value> {
        self.of_type("system").into_iter().filter(|m| m["subtype"] == "init").collect()
    }

    pub fn results(&self) -> Vec<&Value> {
        self.of_type("result")
    }

    pub fn result(&self) -> &Value {
        let results = self.results();
        assert_eq!(results.len(), 1, "expected one result message:\n{}", self.dump());
        results[0]
    }

    /// The message types in order, system lines other than `init` left out.
    pub fn kinds(&self) -> Vec<String> {
        self.messages()
            .into_iter()
            .filter(|m| m["type"] != "system" || m["subtype"] == "init")
            .map(|m| m["type"].as_str().unwrap().to_string())
            .collect()
    }

    /// Every content block of the messages of `kind` (`assistant` or `user`), in order.
    pub fn blocks(&self, kind: &str) -> Vec<Value> {
        self.of_type(kind).into_iter().flat_map(|m| content(m).as_array().cloned().unwrap_or_default()).collect()
    }

    pub fn tool_results(&self) -> Vec<Value> {
        self.blocks("user").into_iter().filter(|b| b["type"] == "tool_result").collect()
    }

    pub fn assistant_texts(&self) -> Vec<String> {
        self.blocks("assistant")
            .into_iter()
            .filter(|b| b["type"] == "text")
            .map(|b| b["text"].as_str().unwrap_or_default().to_string())
            .collect()
    }

    /// The session id every message carries; checks it is one UUID throughout.
    pub fn session_id(&self) -> String {
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
pub fn content(m: &Value) -> &Value {
    m.get("content").unwrap_or(&m["message"]["content"])
}

pub fn model_usage(result: &Value) -> &Value {
    result.get("model_usage").unwrap_or(&result["modelUsage"])
}

pub fn is_uuid(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    parts.iter().map(|p| p.len()).eq([8, 4, 4, 4, 12]) && parts.iter().all(|p| p.chars().all(|c| c.is_ascii_hexdigit()))
}

/// The fake server's answer: `content` as one streamed Messages API response.
pub fn answer(id: &str, content: Value, stop_reason: &str, output_tokens: u64) -> Canned {
    Canned::Sse(sse_from_message(&response(id, content, stop_reason, output_tokens)["message"]))
}

/// A reply that starts streaming (message_start) and then never finishes.
pub fn stalled_answer() -> Canned {
    let full = sse_from_message(&response("msg_stall", text("never finished"), "end_turn", 1)["message"]);
    let end = full.find("\n\n").unwrap() + 2;
    Canned::Stall(full[..end].to_string())
}

pub fn tool_names(request: &Recorded) -> Vec<String> {
    request.body["tools"]
        .as_array()
        .map(|tools| tools.iter().map(|t| t["name"].as_str().unwrap_or_default().to_string()).collect())
        .unwrap_or_default()
}

pub fn system_text(request: &Recorded) -> String {
    match &request.body["system"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => {
            blocks.iter().map(|b| b["text"].as_str().unwrap_or_default()).collect::<Vec<_>>().join("\n")
        }
        _ => String::new(),
    }
}

/// The request's conversation, as JSON text, for "contains these in this order" checks.
pub fn transcript(request: &Recorded) -> String {
    request.body["messages"].to_string()
}

pub fn assert_in_order(haystack: &str, needles: &[&str]) {
    let mut from = 0;
    for needle in needles {
        match haystack[from..].find(needle) {
            Some(at) => from += at + needle.len(),
            None => panic!("{needle:?} missing (or out of order) in {haystack}"),
        }
    }
}

/// What Claude Code's system/init carries (the TS SDK's `SDKSystemMessage` fields).
pub fn assert_init(run: &Run, init: &Value, cwd: &str) {
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
pub fn assert_success(run: &Run, result: &Value, session_id: &str, num_turns: u64, text: &str) {
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
