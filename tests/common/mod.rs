//! Helpers for the end-to-end tests: a workspace, the `reloop` binary, its journal.

#![allow(dead_code)]

pub mod compat;
pub mod fake_server;
pub mod hooks_play;
pub mod sdk_play;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// What a Write's or an Edit's result ends with under the Claude Code profiles (flag 24), when
/// the model knows the file as written.
pub const WRITTEN_NOTE: &str = " (file state is current in your context — no need to Read it back)";

pub const LOGIN_TS: &str = include_str!("../../src/demo/login.ts");

/// The recorder's seed files (record.py `SEED_FILES`), by their path in its project.
pub const RECORDER_SEED_FILES: &[(&str, &str)] = &[
    ("src/auth/login.ts", "export interface Credentials {\n  user: string;\n  password: string;\n}\n\nexport function login(c: Credentials): boolean {\n  return c.user === \"admin\" && c.password === \"secret\";\n}\n"),
    ("src/auth/logout.ts", "export function logout(): void {\n  // TODO: clear the session\n}\n"),
    ("README.md", "# demo\n\nA tiny project used to record Claude Code transcripts.\n"),
];

/// The Claude Code recorder's Stop-hook script (`STOP_HOOK` in scripts/record-claude-code/record.py),
/// which it lays out for every scenario: `stop.sh MODE N` blocks while its count is at most N.
pub const RECORDER_STOP_HOOK: &str = r#"#!/bin/sh
# usage: stop.sh MODE N   MODE=exit2|json, N=number of blocks or "always"
mode=$1; n=$2; d=/tmp/reloop-cc-hooks
c=$(cat $d/count 2>/dev/null || echo 0); c=$((c+1)); echo $c > $d/count
cat > $d/input-$c.json
if [ "$n" != "always" ] && [ $c -gt $n ]; then exit 0; fi
if [ "$mode" = json ]; then
  printf '{"decision":"block","reason":"JSON-STOP-HOOK-REASON: block %s, also check logout.ts"}\n' $c
  exit 0
fi
echo "STOP-HOOK-FEEDBACK: block $c, you forgot to also check src/auth/logout.ts" >&2
exit 2
"#;

/// Every variable of the caller's environment that reloop reads as a person's setting: colour
/// (`anstream`'s), the pager, reloop's own, the provider's, Claude Code's limits. A test's child
/// process starts without them ([`hermetic`]), so the suite passes whatever the developer's
/// shell exports (`NO_COLOR=1`, `PAGER=less`, `RELOOP_COMPAT=...`); a test that depends on one
/// sets it itself. tests/layout.rs holds this list to every variable the code reads.
pub const USER_ENV: &[&str] = &[
    "NO_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "TERM",
    "CI",
    "PAGER",
    "LESS",
    "LV",
    "RELOOP_PAGER",
    "RELOOP_JOURNAL",
    "RELOOP_COMPAT",
    "RELOOP_LEASE_TTL_MS",
    "RELOOP_SERVE_TOKEN",
    "RELOOP_CRASH_AFTER_AGENT_STEP",
    "RELOOP_TEST_CLASSIFY_ALL_READ_ONLY",
    "CLAUDE_CONFIG_DIR",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_MODEL",
    "CLAUDE_CONFIG_DIR",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "API_TIMEOUT_MS",
    "CLAUDE_STREAM_IDLE_TIMEOUT_MS",
    "CLAUDE_CODE_MAX_OUTPUT_TOKENS",
    "CLAUDE_CODE_MAX_RETRIES",
    "CLAUDE_CODE_AUTO_COMPACT_WINDOW",
    "ENABLE_TOOL_SEARCH",
    "MAX_THINKING_TOKENS",
    "CLAUDE_CODE_DISABLE_THINKING",
    "CLAUDE_CODE_DISABLE_ADAPTIVE_THINKING",
    "BASH_MAX_OUTPUT_LENGTH",
    "MAX_MCP_OUTPUT_TOKENS",
    "MCP_TIMEOUT",
    "MCP_TOOL_TIMEOUT",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
];

/// `cmd` without any of [`USER_ENV`]: what a test's child sees is what the test sets.
pub fn hermetic(cmd: &mut Command) -> &mut Command {
    for name in USER_ENV {
        cmd.env_remove(name);
    }
    cmd
}

/// The `reloop` binary, started without the caller's settings ([`hermetic`]).
pub fn reloop_bin() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_reloop"));
    hermetic(&mut cmd);
    cmd
}

/// A temporary workspace holding `src/auth/login.ts`, and a journal beside it.
pub struct Workspace {
    pub dir: tempfile::TempDir,
}

impl Workspace {
    pub fn seed() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("ws/src/auth")).unwrap();
        std::fs::write(dir.path().join("ws/src/auth/login.ts"), LOGIN_TS).unwrap();
        std::fs::write(dir.path().join("ws/README.md"), "# shop\n").unwrap();
        Workspace { dir }
    }

    pub fn cwd(&self) -> PathBuf {
        std::fs::canonicalize(self.dir.path().join("ws")).unwrap()
    }

    pub fn journal(&self) -> PathBuf {
        self.dir.path().join("journal.db")
    }

    /// Where print-mode runs write Claude Code's session files (`CLAUDE_CONFIG_DIR`), so a test
    /// never writes into the developer's `~/.claude`.
    pub fn claude_dir(&self) -> PathBuf {
        self.dir.path().join("claude-config")
    }

    /// Runs `reloop ARGS` with this workspace's journal.
    pub fn reloop(&self, args: &[&str]) -> Output {
        self.reloop_env(args, &[])
    }

    /// Runs `reloop ARGS` with extra environment variables (and no inherited provider keys).
    pub fn reloop_env(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut cmd = reloop_bin();
        cmd.args(args)
            .env("RELOOP_JOURNAL", self.journal())
            .env("CLAUDE_CONFIG_DIR", self.claude_dir())
            .current_dir(self.dir.path());
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    }

    /// `reloop ARGS` run in the workspace with its journal and piped stdio, no provider
    /// variables inherited: the print mode, which works in its current directory.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = reloop_bin();
        cmd.args(args)
            .env("RELOOP_JOURNAL", self.journal())
            .env("CLAUDE_CONFIG_DIR", self.claude_dir())
            .current_dir(self.cwd())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        cmd
    }

    /// `reloop run PROMPT --script CASSETTE --cwd ws EXTRA...`
    pub fn run(&self, prompt: &str, cassette: &str, extra: &[&str]) -> Output {
        let cassette = cassette_path(cassette);
        let cwd = self.cwd();
        let mut args = vec!["run", prompt, "--script", cassette.to_str().unwrap(), "--cwd", cwd.to_str().unwrap()];
        args.extend_from_slice(extra);
        self.reloop(&args)
    }
}

pub fn cassette_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cassettes").join(name)
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Parses stream-json output, one object a line.
pub fn json_lines(output: &Output) -> Vec<serde_json::Value> {
    stdout(output).lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect()
}

/// Lays out a recorded scenario's `files` (commands, hook scripts, servers) as the recorder laid
/// them out, with `place` moving the recorder's paths, in their names and texts, to this run's;
/// shell scripts are made executable.
pub fn lay_out_files(scenario: &serde_json::Value, place: impl Fn(&str) -> String) {
    use std::os::unix::fs::PermissionsExt;
    for (path, text) in scenario["files"].as_object().into_iter().flatten() {
        let path = std::path::PathBuf::from(place(path));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, place(text.as_str().unwrap())).unwrap();
        if path.extension().is_some_and(|e| e == "sh") {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }
}

/// Makes `project` the git repository a recorded scenario's `git` asks for, as the recorder
/// made it (scripts/record-claude-code/record.py `seed_git`): its first commit holds `commit`,
/// its index also `stage`, the rest stays untracked. Nothing when the scenario has no `git`.
pub fn seed_git(scenario: &serde_json::Value, project: &std::path::Path) {
    let Some(git) = scenario.get("git").filter(|g| g.is_object()) else { return };
    let paths = |key: &str| -> Vec<String> {
        git[key].as_array().into_iter().flatten().filter_map(|p| p.as_str().map(str::to_string)).collect()
    };
    let run = |args: &[&str], paths: &[String]| {
        let status = std::process::Command::new("git")
            .arg("-C")
            .arg(project)
            .args(["-c", "init.defaultBranch=main", "-c", "user.name=rec", "-c", "user.email=rec@example.invalid"])
            .args(args)
            .args(paths)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .status()
            .expect("git, which the recordings' repositories need");
        assert!(status.success(), "git {args:?} {paths:?}");
    };
    run(&["init", "-q"], &[]);
    if !paths("commit").is_empty() {
        run(&["add", "--"], &paths("commit"));
        run(&["commit", "-q", "-m", "seed"], &[]);
    }
    if !paths("stage").is_empty() {
        run(&["add", "--"], &paths("stage"));
    }
}

/// Stream-json lines without what differs between two printings of the same session (their
/// durations and timestamps): a live run and its replay compare equal through it.
pub fn without_timings(lines: &[serde_json::Value]) -> Vec<serde_json::Value> {
    lines
        .iter()
        .map(|l| {
            let mut l = l.clone();
            for timing in ["duration_ms", "duration_api_ms", "timestamp"] {
                if l.get(timing).is_some() {
                    l[timing] = serde_json::Value::Null;
                }
            }
            l
        })
        .collect()
}

/// A child's stream-json stdout read on a thread, a parsed line at a time, so a test can wait
/// on it with a deadline while it writes the child's stdin.
pub fn json_line_reader(
    stdout: std::process::ChildStdout,
) -> (std::sync::mpsc::Receiver<serde_json::Value>, std::thread::JoinHandle<()>) {
    use std::io::BufRead;
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}")));
        }
    });
    (rx, reader)
}

/// Snapshot settings shared by every end-to-end test: snapshots live in `snapshots/`.
pub fn settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_snapshot_path(Path::new(env!("CARGO_MANIFEST_DIR")).join("snapshots"));
    s.set_prepend_module_to_snapshot(false);
    // A turn's time is the wall clock's: everything else on a `why` turn line is the journal's.
    s.add_filter(r"(?m)(out tokens(?:, cache hit [0-9.]+%)?, (?:\$[0-9.]+|cost unknown)), [^\n]*$", "$1, [time]");
    s
}

/// A response object for a cassette.
pub fn response(id: &str, content: serde_json::Value, stop_reason: &str, output_tokens: u64) -> serde_json::Value {
    serde_json::json!({"message": {
        "id": id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
        "content": content, "stop_reason": stop_reason,
        "usage": {"input_tokens": 100, "output_tokens": output_tokens}
    }})
}

pub fn text(t: &str) -> serde_json::Value {
    serde_json::json!([{"type": "text", "text": t}])
}

impl Workspace {
    /// Writes `responses` as a cassette and runs `reloop run PROMPT` on it with stream-json.
    pub fn run_responses(&self, prompt: &str, responses: Vec<serde_json::Value>, extra: &[&str]) -> Output {
        self.run_responses_env(prompt, responses, extra, &[])
    }

    /// [`Workspace::run_responses`] with extra environment variables.
    pub fn run_responses_env(
        &self,
        prompt: &str,
        responses: Vec<serde_json::Value>,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Output {
        let path = self.dir.path().join(format!("cassette-{}.json", responses.len()));
        std::fs::write(&path, serde_json::json!({ "responses": responses }).to_string()).unwrap();
        let cwd = self.cwd();
        let mut args = vec![
            "run",
            prompt,
            "--script",
            path.to_str().unwrap(),
            "--cwd",
            cwd.to_str().unwrap(),
            "--output-format",
            "stream-json",
        ];
        args.extend_from_slice(extra);
        self.reloop_env(&args, env)
    }

    /// Writes an executable hook script into the workspace and a settings file naming it.
    pub fn hook(&self, event: &str, matcher: &str, name: &str, script: &str) -> PathBuf {
        let path = self.cwd().join(name);
        std::fs::write(&path, format!("#!/usr/bin/env bash\n{script}\n")).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        let settings = self.dir.path().join(format!("settings-{name}.json"));
        let body = serde_json::json!({"hooks": {event: [{"matcher": matcher, "hooks": [{"type": "command", "command": format!("./{name}"), "timeout": 10}]}]}});
        std::fs::write(&settings, body.to_string()).unwrap();
        settings
    }

    /// `why last`, with the workspace's path replaced by `[CWD]`.
    pub fn why(&self) -> String {
        stdout(&self.reloop(&["why", "last"])).replace(self.cwd().to_str().unwrap(), "[CWD]")
    }

    pub fn replays_identical(&self) -> bool {
        self.reloop(&["replay", "last"]).status.code() == Some(0)
    }
}

/// The user messages' text blocks and tool results of a stream-json run, in order.
pub fn user_texts(lines: &[serde_json::Value]) -> Vec<String> {
    lines
        .iter()
        .filter(|l| l["type"] == "user")
        .flat_map(|l| l["message"]["content"].as_array().cloned().unwrap_or_default())
        .map(|b| match b["type"].as_str() {
            Some("text") => b["text"].as_str().unwrap_or_default().to_string(),
            _ => b["content"].as_str().unwrap_or_default().to_string(),
        })
        .collect()
}

/// A `tool_use` block.
pub fn call(id: &str, name: &str, input: serde_json::Value) -> serde_json::Value {
    serde_json::json!({"type": "tool_use", "id": id, "name": name, "input": input})
}

/// What the model gets back for one call: the text and whether it is flagged as an error.
pub fn ok(content: impl Into<String>) -> (String, bool) {
    (content.into(), false)
}

pub fn err(content: impl Into<String>) -> (String, bool) {
    (content.into(), true)
}
