//! The Python Agent SDK's `setting_sources` through reloop: what the SDK's own e2e tests
//! (`test_setting_sources_default`, `_user_only`, `_project_included` in
//! anthropics/claude-agent-sdk-python's e2e-tests/test_agents_and_settings.py) check, with a
//! project command run as a prompt as well. The SDK comes from `RELOOP_SDK_DIR` as in tests/sdk.rs;
//! without it these print a notice and pass, unless `RELOOP_REQUIRE_SDK=1`.

mod common;
#[path = "sdk/harness.rs"]
#[allow(dead_code)]
mod harness;

use std::path::Path;
use std::process::Command;

use common::fake_server::Recorded;
use common::text;
use harness::{answer, sdk_dir, spawn_with_deadline, Scenario};
use serde_json::Value;

/// Runs the driver with `sources` and `prompt` in a project holding a local `outputStyle` and a
/// project command `testcmd`; returns its lines and the requests the model got.
fn run(sources: &str, prompt: &str) -> Option<(Vec<Value>, Vec<Recorded>)> {
    sdk_dir()?;
    let s = Scenario::start(|_| vec![answer("msg_1", text("4"), "end_turn", 3)])?;
    let claude = s.ws.cwd().join(".claude");
    std::fs::create_dir_all(claude.join("commands")).unwrap();
    std::fs::write(claude.join("settings.local.json"), r#"{"outputStyle": "local-test-style"}"#).unwrap();
    std::fs::write(
        claude.join("commands/testcmd.md"),
        "---\ndescription: Test command\n---\n\nThis is a test command: $ARGUMENTS\n",
    )
    .unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut cmd = Command::new(s.sdk_dir.join("venv/bin/python"));
    common::hermetic(&mut cmd)
        .arg(root.join("tests/settings_sdk/driver.py"))
        .args([sources, prompt])
        .env("RELOOP_BIN", env!("CARGO_BIN_EXE_reloop"))
        .env("WORKDIR", s.ws.cwd())
        .env("RELOOP_JOURNAL", s.ws.journal())
        .env("ANTHROPIC_BASE_URL", &s.server.url)
        .env("ANTHROPIC_API_KEY", "sk-ant-fake-key-for-tests")
        .env("HOME", s.ws.dir.path().join("home"))
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env_remove("CLAUDE_CONFIG_DIR")
        .current_dir(s.ws.dir.path());
    let done = spawn_with_deadline(cmd);
    let lines: Vec<Value> = done.stdout.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    assert!(
        done.status.success() && lines.iter().all(|l| l.get("error").is_none()),
        "{}\n{}",
        done.stdout,
        done.stderr
    );
    Some((lines, s.requests()))
}

fn init(lines: &[Value]) -> &Value {
    &lines.iter().find(|l| l.get("init").is_some()).unwrap()["init"]
}

fn commands(lines: &[Value]) -> Vec<String> {
    init(lines)["slash_commands"].as_array().unwrap().iter().map(|c| c.as_str().unwrap().to_string()).collect()
}

#[test]
fn unset_setting_sources_reads_every_layer() {
    let Some((lines, _)) = run("default", "What is 2 + 2?") else { return };
    assert_eq!(init(&lines)["output_style"], "local-test-style");
    assert_eq!(commands(&lines), ["testcmd"]);
}

#[test]
fn user_only_sources_leave_the_project_out() {
    let Some((lines, _)) = run("user", "What is 2 + 2?") else { return };
    assert_eq!(init(&lines)["output_style"], "default");
    assert!(!commands(&lines).contains(&"testcmd".to_string()));
}

#[test]
fn all_three_sources_read_the_local_file_and_run_project_commands() {
    let Some((lines, requests)) = run("user,project,local", "/testcmd now") else { return };
    assert_eq!(init(&lines)["output_style"], "local-test-style");
    let user = &requests[0].body["messages"][0]["content"];
    let texts: Vec<&str> = user.as_array().unwrap().iter().filter_map(|b| b["text"].as_str()).collect();
    assert_eq!(
        texts[texts.len() - 2..],
        [
            "<command-message>testcmd</command-message>\n<command-name>/testcmd</command-name>\n<command-args>now</command-args>\n",
            "\nThis is a test command: now\n",
        ]
    );
}
