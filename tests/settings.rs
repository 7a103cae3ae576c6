//! The settings hierarchy and custom slash commands in print mode, end to end through
//! `reloop -p`, against what the real Claude Code did in the recordings under
//! `tests/print/recorded/<version>/settings_sources/` and `settings_slash/`
//! (scripts/record-claude-code/scenarios.py says how each was made).
//!
//! Each test lays out the recorded scenario's files (user settings under a fresh HOME, project
//! and local settings and commands in the workspace), answers with the recorded model turns from
//! a fake server on 127.0.0.1, and compares what reloop asked the model and which tool calls it
//! refused with what Claude Code did.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::fake_server::{sse_from_message, Canned, FakeServer, Recorded};
use common::{reloop_bin, stderr, Workspace};
use serde_json::{json, Value};

const VERSIONS: [&str; 2] = ["2.1.332", "2.1.197"];

/// A recording of print mode's (`tests/print/recorded/`), else of the importer's
/// (`crates/reloop-import/tests/recorded/`).
fn fixture(version: &str, family: &str, variant: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let print = root.join("tests/print/recorded").join(version).join(family).join(variant);
    match print.is_dir() {
        true => print,
        false => root.join("crates/reloop-import/tests/recorded").join(version).join(family).join(variant),
    }
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// A recorded scenario laid out for reloop: its files in `ws` and `home`, its model turns.
struct Scenario {
    dir: PathBuf,
    scenario: Value,
    home: tempfile::TempDir,
}

impl Scenario {
    fn load(ws: &Workspace, version: &str, family: &str, variant: &str) -> Scenario {
        let dir = fixture(version, family, variant);
        let scenario: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("scenario.json")).unwrap()).unwrap();
        let home = tempfile::tempdir().unwrap();
        let hooks = ws.dir.path().join("hooks");
        let place = |text: &str| {
            text.replace("/tmp/reloop-cc-project", ws.cwd().to_str().unwrap())
                .replace("/tmp/reloop-cc-home", home.path().to_str().unwrap())
                .replace("/tmp/reloop-cc-hooks", hooks.to_str().unwrap())
        };
        common::lay_out_files(&scenario, place);
        common::seed_git(&scenario, &ws.cwd());
        if let Some(settings) = scenario.get("settings") {
            std::fs::write(ws.dir.path().join("settings-under-test.json"), place(&settings.to_string())).unwrap();
        }
        Scenario { dir, scenario, home }
    }

    /// The main session's recorded assistant turns, as the Messages API sent them.
    fn turns(&self) -> Vec<Canned> {
        self.turns_placed(&|line| line.to_string())
    }

    /// [`Scenario::turns`] with the recorder's project path put back as this workspace's.
    fn turns_in(&self, ws: &Workspace) -> Vec<Canned> {
        let cwd = ws.cwd().to_str().unwrap().to_string();
        self.turns_placed(&|line| line.replace("/tmp/reloop-cc-project", &cwd))
    }

    fn turns_placed(&self, place: &dyn Fn(&str) -> String) -> Vec<Canned> {
        let mut out = Vec::new();
        let text = std::fs::read_to_string(self.dir.join("stdout.jsonl")).unwrap();
        for line in text.lines().map(|l| serde_json::from_str::<Value>(&place(l)).unwrap()) {
            if line["type"] != "assistant"
                || !line["parent_tool_use_id"].is_null()
                || line["message"]["model"] == "<synthetic>"
            {
                continue;
            }
            let content = line["message"]["content"].clone();
            let tool = content.as_array().unwrap().iter().any(|b| b["type"] == "tool_use");
            let message = json!({"id": line["message"]["id"], "type": "message", "role": "assistant",
                "model": line["message"]["model"], "content": content,
                "stop_reason": if tool { "tool_use" } else { "end_turn" }, "stop_sequence": null,
                "usage": {"input_tokens": 120, "output_tokens": 25}});
            out.push(Canned::Sse(sse_from_message(&message)));
        }
        out
    }

    /// Runs the scenario's prompt and flags through `reloop -p` under the version's profile.
    fn run(&self, ws: &Workspace, version: &str, server: &FakeServer) -> Output {
        let prompt = self.scenario["prompt"].as_str().unwrap();
        let compat = format!("claude-code-{version}");
        let mut args = vec!["-p", prompt, "--output-format", "stream-json", "--verbose", "--compat", &compat];
        let flags: Vec<String> =
            self.scenario["flags"].as_array().into_iter().flatten().map(|f| f.as_str().unwrap().to_string()).collect();
        args.extend(flags.iter().map(String::as_str));
        let settings = ws.dir.path().join("settings-under-test.json");
        let settings = settings.to_str().unwrap().to_string();
        if self.scenario.get("settings").is_some() {
            args.extend(["--settings", &settings]);
        }
        let mut cmd = reloop_bin();
        cmd.args(&args)
            .env("RELOOP_JOURNAL", ws.journal())
            .env("HOME", self.home.path())
            .env("ANTHROPIC_BASE_URL", &server.url)
            .env("ANTHROPIC_API_KEY", "sk-test")
            .current_dir(ws.cwd());
        cmd.output().unwrap()
    }

    /// The models Claude Code asked for, request by request.
    fn recorded_models(&self) -> Vec<String> {
        lines(&self.dir.join("requests.jsonl"))
            .iter()
            .map(|r| r["body"]["model"].as_str().unwrap().to_string())
            .collect()
    }
}

/// `tool_use_id` → whether its result was an error, from stream-json `user` lines.
fn refusals(stdout: &[Value]) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    for line in stdout.iter().filter(|l| l["type"] == "user") {
        for block in line["message"]["content"].as_array().into_iter().flatten() {
            if block["type"] == "tool_result" {
                out.push((block["tool_use_id"].as_str().unwrap().to_string(), block["is_error"] == true));
            }
        }
    }
    out
}

fn models(requests: &[Recorded]) -> Vec<String> {
    requests.iter().map(|r| r.body["model"].as_str().unwrap().to_string()).collect()
}

fn stdout_lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
}

/// Which layers are read and which wins: the model each request asks for (local over project
/// over user, `--settings` over all) and which Bash calls the merged rules refuse (a project deny
/// rule, a local ask rule that print mode cannot ask), as the recordings show, for every
/// `--setting-sources` variant and both versions.
#[test]
fn the_settings_layers_decide_model_and_rules_as_claude_code_does() {
    for version in VERSIONS {
        for variant in ["default", "user", "project_local", "empty", "flag", "user_model"] {
            let ws = Workspace::seed();
            let scenario = Scenario::load(&ws, version, "settings_sources", variant);
            let server = FakeServer::start(scenario.turns());
            let out = scenario.run(&ws, version, &server);
            assert!(out.status.success(), "{version}/{variant}: {}", stderr(&out));
            let what = format!("{version}/{variant}");
            // Claude Code moved the user file's claude-opus-4-1 to its current Opus (a model
            // migration, not a settings rule): that variant's model is not compared.
            if variant != "user" {
                assert_eq!(models(&server.requests()), scenario.recorded_models(), "{what}");
            }
            let recorded = refusals(&lines(&scenario.dir.join("stdout.jsonl")));
            let got = refusals(&stdout_lines(&out));
            // The first call (`echo $VARS`) is refused by Claude Code's variable check in every
            // variant, a Bash classifier matter rather than settings; the rest are the rules'.
            assert_eq!(got.get(1..), recorded.get(1..), "{what}");
        }
    }
}

/// `rule_sources/allow_project`, both versions: in a folder Claude Code has not trusted, the
/// project settings' allow rules let nothing through (the `Write` they allow is refused, as
/// recorded), and stderr says so in Claude Code's words. Once its global config trusts the
/// folder (`projects[CWD].hasTrustDialogAccepted`), they apply and nothing is said.
#[test]
fn an_untrusted_folder_s_project_settings_allow_nothing() {
    for version in VERSIONS {
        let ws = Workspace::seed();
        let scenario = Scenario::load(&ws, version, "rule_sources", "allow_project");
        let server = FakeServer::start(scenario.turns_in(&ws));
        let out = scenario.run(&ws, version, &server);
        assert!(out.status.success(), "{version}: {}", stderr(&out));
        let recorded = refusals(&lines(&scenario.dir.join("stdout.jsonl")));
        assert_eq!(refusals(&stdout_lines(&out)), recorded, "{version}");
        assert!(recorded.iter().any(|(_, refused)| *refused), "{version}: the recording refuses the Write");
        let said = scenario.scenario["outcome"]["stderr"].as_str().unwrap().trim_end().to_string();
        let said = said
            .replace("/tmp/reloop-cc-project", ws.cwd().to_str().unwrap())
            .replace("/tmp/reloop-cc-home", scenario.home.path().to_str().unwrap());
        assert!(stderr(&out).contains(&said), "{version}: {}\nwanted: {said}", stderr(&out));

        let ws = Workspace::seed();
        let scenario = Scenario::load(&ws, version, "rule_sources", "allow_project");
        let trust = json!({"projects": {ws.cwd().to_str().unwrap(): {"hasTrustDialogAccepted": true}}});
        std::fs::write(scenario.home.path().join(".claude.json"), trust.to_string()).unwrap();
        let server = FakeServer::start(scenario.turns_in(&ws));
        let out = scenario.run(&ws, version, &server);
        assert!(out.status.success(), "{version}: {}", stderr(&out));
        assert!(refusals(&stdout_lines(&out)).iter().all(|(_, refused)| !refused), "{version}: trusted");
        assert!(!stderr(&out).contains("Ignoring"), "{version}: {}", stderr(&out));
    }
}

/// `rule_sources/local_*`, both versions: in a git repository, the local settings' allow rules
/// count as the project's once git tracks the file (committed, or only added): an untrusted
/// folder's then let nothing through, and stderr names `.claude/settings.local.json` in Claude
/// Code's words; untracked, or in a trusted folder, they apply and nothing is said.
#[test]
fn tracked_local_settings_allow_nothing_in_an_untrusted_folder() {
    for version in VERSIONS {
        for (variant, refused) in [
            ("local_tracked", true),
            ("local_staged", true),
            ("local_untracked", false),
            ("local_tracked_trusted", false),
        ] {
            let what = format!("{version} {variant}");
            let ws = Workspace::seed();
            let scenario = Scenario::load(&ws, version, "rule_sources", variant);
            let server = FakeServer::start(scenario.turns_in(&ws));
            let out = scenario.run(&ws, version, &server);
            assert!(out.status.success(), "{what}: {}", stderr(&out));
            let recorded = refusals(&lines(&scenario.dir.join("stdout.jsonl")));
            assert_eq!(refusals(&stdout_lines(&out)), recorded, "{what}");
            assert_eq!(recorded.iter().any(|(_, r)| *r), refused, "{what}: the recording");
            let said = scenario.scenario["outcome"]["stderr"].as_str().unwrap().trim_end().to_string();
            let said = said
                .replace("/tmp/reloop-cc-project", ws.cwd().to_str().unwrap())
                .replace("/tmp/reloop-cc-home", scenario.home.path().to_str().unwrap());
            assert_eq!(said.is_empty(), !refused, "{what}: the recording's stderr");
            match refused {
                true => assert!(stderr(&out).contains(&said), "{what}: {}\nwanted: {said}", stderr(&out)),
                false => assert!(!stderr(&out).contains("Ignoring"), "{what}: {}", stderr(&out)),
            }
        }
    }
}

#[test]
fn a_malformed_settings_layer_is_refused_naming_the_file_and_the_value() {
    let ws = Workspace::seed();
    std::fs::create_dir_all(ws.cwd().join(".claude")).unwrap();
    std::fs::write(ws.cwd().join(".claude/settings.local.json"), r#"{"permissions": {"allow": "Bash"}}"#).unwrap();
    let home = tempfile::tempdir().unwrap();
    let out = reloop_bin()
        .args(["-p", "hi", "--output-format", "stream-json", "--verbose"])
        .env("RELOOP_JOURNAL", ws.journal())
        .env("HOME", home.path())
        .current_dir(ws.cwd())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains(".claude/settings.local.json") && err.contains("permissions.allow"), "{err}");
    // Not read when the sources leave it out.
    let out = reloop_bin()
        .args(["-p", "hi", "--setting-sources", "user,project", "--setting-sources", "nosuch"])
        .env("HOME", home.path())
        .current_dir(ws.cwd())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

/// A custom command's prompt reaches the model as Claude Code sends it: the command tags, then
/// the body with its arguments, in place of the typed text; a command the sources leave out is
/// sent as typed (2.1.332; 2.1.197 answers those locally, see docs/settings.md).
#[test]
fn custom_slash_commands_reach_the_model_as_claude_code_sends_them() {
    for version in VERSIONS {
        for variant in ["custom", "namespaced", "user_command", "custom_user_only", "unknown"] {
            let what = format!("{version}/{variant}");
            let ws = Workspace::seed();
            let scenario = Scenario::load(&ws, version, "settings_slash", variant);
            let recorded = lines(&scenario.dir.join("requests.jsonl"));
            let Some(first) = recorded.first() else {
                // 2.1.197 answered this one locally ("Unknown command: ..."): nothing to compare.
                assert_eq!(version, "2.1.197", "{what}");
                continue;
            };
            let server = FakeServer::start(scenario.turns());
            let out = scenario.run(&ws, version, &server);
            assert!(out.status.success(), "{what}: {}", stderr(&out));
            let requests = server.requests();
            let tail = |message: &Value, n: usize| -> Vec<String> {
                let texts: Vec<String> = message["content"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter_map(|b| b["text"].as_str().map(str::to_string))
                    .collect();
                texts[texts.len().saturating_sub(n)..].to_vec()
            };
            let user_of = |body: &Value| {
                body["messages"].as_array().unwrap().iter().find(|m| m["role"] == "user").cloned().unwrap()
            };
            let expanded = variant != "custom_user_only" && variant != "unknown";
            let n = if expanded { 2 } else { 1 };
            assert_eq!(tail(&user_of(&requests[0].body), n), tail(&user_of(&first["body"]), n), "{what}");
            assert_eq!(requests.len(), recorded.len(), "{what}");
        }
    }
}

/// `init` lists the custom commands the sources let in, first and in Claude Code's order, and
/// reports the settings' `outputStyle` (the Python SDK's e2e tests read both from `init`).
#[test]
fn init_reports_the_commands_and_output_style_the_layers_give() {
    for version in VERSIONS {
        let ws = Workspace::seed();
        let scenario = Scenario::load(&ws, version, "settings_slash", "custom");
        std::fs::write(ws.cwd().join(".claude/settings.local.json"), r#"{"outputStyle": "local-test-style"}"#).unwrap();
        let server = FakeServer::start(scenario.turns());
        let out = scenario.run(&ws, version, &server);
        assert!(out.status.success(), "{}", stderr(&out));
        let init = stdout_lines(&out).into_iter().find(|l| l["subtype"] == "init").unwrap();
        let recorded = lines(&scenario.dir.join("stdout.jsonl")).into_iter().find(|l| l["subtype"] == "init").unwrap();
        let custom: Vec<&Value> = recorded["slash_commands"].as_array().unwrap().iter().take(3).collect();
        let got: Vec<&Value> = init["slash_commands"].as_array().unwrap().iter().collect();
        assert_eq!(got, custom, "{version}: reloop lists the custom commands (no built-ins)");
        assert_eq!(init["output_style"], "local-test-style", "{version}");
    }
}

/// The recorded hooks' `_env`: the value of PROBE_ALL (set by every layer's `env`) a hook
/// process saw, in the order the hooks ran.
fn recorded_env(dir: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(dir.join("hook-inputs.jsonl")) else { return Vec::new() };
    serde_json::Deserializer::from_str(&text)
        .into_iter::<Value>()
        .map(|v| v.unwrap()["_env"].as_str().unwrap().to_string())
        .collect()
}

/// The settings' `env` reaches tool processes with the value of the highest layer read, the value
/// Claude Code's hooks saw in the same layouts.
#[test]
fn the_settings_env_reaches_tools_from_the_highest_layer() {
    for version in VERSIONS {
        for variant in ["default", "user", "project_local", "empty", "flag"] {
            let what = format!("{version}/{variant}");
            let ws = Workspace::seed();
            let scenario = Scenario::load(&ws, version, "settings_sources", variant);
            let expected = recorded_env(&scenario.dir).first().cloned().unwrap_or_default();
            let probe = json!({"id": "m1", "type": "message", "role": "assistant", "model": "m",
                "content": [{"type": "tool_use", "id": "toolu_env", "name": "Bash",
                             "input": {"command": "printf '%s' \"${PROBE_ALL:-unset}\"", "description": "probe"}}],
                "stop_reason": "tool_use", "stop_sequence": null, "usage": {"input_tokens": 1, "output_tokens": 1}});
            let done = json!({"id": "m2", "type": "message", "role": "assistant", "model": "m",
                "content": [{"type": "text", "text": "done"}], "stop_reason": "end_turn", "stop_sequence": null,
                "usage": {"input_tokens": 1, "output_tokens": 1}});
            let server =
                FakeServer::start(vec![Canned::Sse(sse_from_message(&probe)), Canned::Sse(sse_from_message(&done))]);
            let mut scenario = scenario;
            let flags = scenario.scenario["flags"].as_array().cloned().unwrap_or_default();
            let mut flags: Vec<Value> = flags;
            flags.extend([json!("--allowedTools"), json!("Bash")]);
            scenario.scenario["flags"] = Value::Array(flags);
            let out = scenario.run(&ws, version, &server);
            assert!(out.status.success(), "{what}: {}", stderr(&out));
            let requests = server.requests();
            let result = requests[1].body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
                .find(|b| b["tool_use_id"] == "toolu_env")
                .unwrap();
            let content = result["content"]
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| result["content"][0]["text"].as_str().unwrap().to_string());
            let want = if expected.is_empty() { "unset".to_string() } else { expected };
            // (A reminder may follow the output, as Claude Code appends its token budget.)
            assert_eq!(content.lines().next().unwrap_or(""), want, "{what}");
        }
    }
}
