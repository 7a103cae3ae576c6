//! `reloop prop` through the CLI: a true property passes over thousands of cases, a false one
//! is falsified with a small counterexample journaled as a session `why` explains and written
//! as a cassette `reloop run --script` turns into the same failure; the same seed finds the
//! same counterexample; a bad expression is named with its position; `--hooks run` runs the
//! settings file's real hook command.

mod common;

use common::{stderr, stdout, Workspace};
use serde_json::Value;

fn json(output: &std::process::Output) -> Value {
    serde_json::from_str(&stdout(output)).unwrap_or_else(|e| panic!("{e}: {}", stdout(output)))
}

#[test]
fn a_property_that_holds_passes_over_thousands_of_cases() {
    let ws = Workspace::seed();
    let out = ws.reloop(&[
        "prop",
        "--cases",
        "3000",
        "--seed",
        "7",
        "--max-turns",
        "5",
        "--property",
        "turns_bounded: turns <= config.max_turns",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let report = json(&out);
    assert_eq!(report["cases"], 3000);
    assert!(report["failure"].is_null());
    assert!(report["verdicts"].as_array().unwrap().iter().all(|v| v["holds"] == true));
    assert!(report["coverage"]["retried"].as_u64().unwrap() > 0, "{report}");
}

#[test]
fn max_turns_does_not_bound_requests_and_the_counterexample_replays_explains_and_reruns() {
    let ws = Workspace::seed();
    let args =
        ["prop", "--cases", "500", "--seed", "42", "--max-turns", "3", "--property", "few: requests <= 3", "--json"];
    let out = ws.reloop(&args);
    assert_eq!(out.status.code(), Some(1), "{}{}", stdout(&out), stderr(&out));
    let report = json(&out);
    let failure = &report["failure"];
    assert_eq!(failure["name"], "few");
    assert!(failure["responses"].as_u64().unwrap() <= 5, "{failure}");
    assert_eq!(failure["summary"]["requests"], 4, "{failure}");

    // The same seed finds the same counterexample.
    let again = json(&ws.reloop(&args));
    assert_eq!(again["failure"]["counterexample"], failure["counterexample"]);
    assert_eq!(again["cases"], report["cases"]);

    // The session: `why` explains it, replay runs it identically, `sessions` says where it came from.
    let session = failure["session"].as_str().unwrap();
    let why = ws.reloop(&["why", session]);
    assert_eq!(why.status.code(), Some(0), "{}", stderr(&why));
    assert!(stdout(&why).contains("stop: "), "{}", stdout(&why));
    let replay = ws.reloop(&["replay", session]);
    assert!(stdout(&replay).contains("identical"), "{}{}", stdout(&replay), stderr(&replay));
    assert!(stdout(&ws.reloop(&["sessions"])).contains("prop: few falsified, seed 42"));

    // The cassette: `reloop run --script` under the same limits breaks the property again.
    let command = failure["run_command"].as_str().unwrap();
    let words: Vec<&str> = command.split(' ').skip(1).collect();
    ws.reloop(&words);
    let steps = stdout(&ws.reloop(&["show", "--steps", "last"]));
    assert!(steps.matches("call_model(").count() > 3, "{steps}");
}

#[test]
fn an_expression_that_does_not_parse_names_the_property_and_the_position() {
    let ws = Workspace::seed();
    let out = ws.reloop(&["prop", "--property", "broken: requests <= ", "--cases", "5"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("property broken: line 1, column 13"), "{}", stderr(&out));
    let out = ws.reloop(&["prop", "--property", "typo: reqests <= 3", "--cases", "5"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("property typo"), "{}", stderr(&out));
}

#[test]
fn with_hooks_run_the_settings_file_s_hook_command_really_runs_contained_in_a_scratch_workspace() {
    let ws = Workspace::seed();
    let escaped = ws.dir.path().join("escaped");
    let settings = ws.dir.path().join("settings.json");
    // The hook blocks every stop, saying where it ran; it also tries to write outside the
    // scratch copy, which the containment refuses.
    let hook = format!(
        "touch {} 2>/dev/null; test -f README.md && echo \"tests fail in $(basename $PWD)\" >&2; exit 2",
        escaped.display()
    );
    let body = serde_json::json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": hook}]}]}});
    std::fs::write(&settings, body.to_string()).unwrap();
    let cwd = ws.cwd();
    let out = ws.reloop(&[
        "prop",
        "--cases",
        "50",
        "--seed",
        "3",
        "--settings",
        settings.to_str().unwrap(),
        "--hooks",
        "run",
        "--workspace",
        cwd.to_str().unwrap(),
        "--property",
        "never_blocked: stop_hook_blocks == 0",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}{}", stdout(&out), stderr(&out));
    let report = json(&out);
    assert_eq!(report["failure"]["name"], "never_blocked");
    let session = report["failure"]["session"].as_str().unwrap();
    let shown = stdout(&ws.reloop(&["why", session]));
    assert!(shown.contains("tests fail in reloop-prop-"), "{shown}");
    if std::path::Path::new("/usr/bin/bwrap").exists() {
        assert!(!escaped.exists(), "a hook wrote outside its scratch workspace");
    }
}

#[test]
fn docs_cli_md_documents_every_flag_of_reloop_prop() {
    let ws = Workspace::seed();
    let help = stdout(&ws.reloop(&["prop", "--help"]));
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/cli.md")).unwrap();
    let start = docs.find("## Property tests: `reloop prop`").expect("a section for reloop prop");
    let section = &docs[start..start + docs[start..].find("\n## Print mode").unwrap()];
    let flags: Vec<&str> = help
        .split(|c: char| c.is_whitespace() || c == ',' || c == '[' || c == '=')
        .filter(|w| w.starts_with("--") && w.len() > 2 && w[2..].chars().all(|c| c.is_ascii_lowercase() || c == '-'))
        .filter(|w| *w != "--help" && *w != "--no-pager")
        .collect();
    assert!(flags.len() > 20, "{flags:?}");
    for flag in flags {
        assert!(section.contains(flag), "docs/cli.md does not document {flag}");
    }
}

#[test]
fn from_a_recorded_session_its_limits_are_tested_and_junit_reports_each_verdict() {
    let ws = Workspace::seed();
    let out = ws.run("look", "seed.json", &["--max-turns", "2"]);
    assert!(out.status.code().is_some(), "{}", stderr(&out));
    let junit = ws.dir.path().join("prop.xml");
    let out = ws.reloop(&[
        "prop",
        "--from",
        "last",
        "--cases",
        "300",
        "--seed",
        "9",
        "--property",
        "limited: config.max_turns == 2 && turns <= 2",
        "--junit",
        junit.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("tests=\"10\" failures=\"0\" errors=\"0\" skipped=\"0\""), "{xml}");
    let case = xml.lines().find(|l| l.contains("name=\"property limited\"")).expect("the property's case");
    assert!(case.contains("classname=\"reloop.prop\"") && case.ends_with("/>"), "{xml}");
}

/// A bare deny rule removes the tool: each call is refused as a tool that does not exist, which
/// (as in Claude Code) is a tool error, not a permission denial.
#[test]
fn a_tool_a_deny_rule_names_whole_is_refused_in_every_case() {
    let ws = Workspace::seed();
    let settings = ws.dir.path().join("settings.json");
    std::fs::write(&settings, r#"{"permissions": {"deny": ["Bash"]}}"#).unwrap();
    let out = ws.reloop(&[
        "prop",
        "--cases",
        "300",
        "--seed",
        "4",
        "--tools",
        "Bash,Read",
        "--settings",
        settings.to_str().unwrap(),
        "--property",
        "bash_refused: tool_calls.Bash <= tool_errors",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    assert!(json(&out)["coverage"]["called_tools"].as_u64().unwrap() > 0);
}

#[test]
fn an_mcp_server_s_tools_are_listed_once_and_called_in_the_worlds() {
    let Some(py) = std::env::var_os("RELOOP_MCP_PY").map(std::path::PathBuf::from).filter(|p| p.exists()) else {
        assert_ne!(std::env::var("RELOOP_REQUIRE_MCP").as_deref(), Ok("1"), "RELOOP_MCP_PY is not set");
        eprintln!("notice: MCP test skipped (set RELOOP_MCP_PY, see tests/mcp.rs)");
        return;
    };
    let ws = Workspace::seed();
    let server = ws.dir.path().join("server.py");
    std::fs::copy(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp/server.py"), &server).unwrap();
    let config = serde_json::json!({"mcpServers": {"fix": {"command": py, "args": [server, "stdio"]}}}).to_string();
    let out = ws.reloop(&[
        "prop",
        "--cases",
        "200",
        "--seed",
        "6",
        "--mcp-config",
        &config,
        "--strict-mcp-config",
        "--tools",
        "mcp__fix__echo",
        "--property",
        "only_echo: tool_calls.mcp__fix__echo >= 0 && size(config.tools) == 1",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    assert!(json(&out)["coverage"]["called_tools"].as_u64().unwrap() > 0);
}

#[test]
fn a_cassette_of_every_outcome_kind_is_one_reloop_run_accepts() {
    use reloop_prop::{Call, ModelOutcome as M, ToolResult, World};
    let call = |name: &str, input: Value| Call {
        name: name.into(),
        input,
        result: ToolResult::Success,
        pre_hooks: vec![],
        post_hooks: vec![],
    };
    let script = vec![
        M::Calls { calls: vec![call("Read", serde_json::json!({"file_path": "README.md"}))], input_tokens: 100 },
        M::Text,
        M::Tools(1),
        M::Error,
        M::Overloaded,
        M::RateLimited { retry_after_ms: Some(1) },
        M::RateLimited { retry_after_ms: None },
        M::StreamCut,
        M::MaxTokens,
        M::MissingToolCall,
        M::TextTokens(7),
        M::Large { input_tokens: 5_000, tools: 1 },
        M::Stopped(reloop_core::StopReason::Refusal),
        M::PromptTooLong,
        M::Fatal,
    ];
    let world = World { script, stop_hooks: vec![], queue_at: vec![], abort_at: None };
    let ws = Workspace::seed();
    let path = ws.dir.path().join("every.json");
    let setup = reloop_prop::Setup::new(reloop_core::Config::default().with_model("claude-sonnet-4-6".to_string()));
    let cassette = reloop_prop::cassette::cassette(&world, &setup, &reloop_prop::Simulated);
    assert_eq!(cassette["tool_results"]["Read"][0]["content"], "ran Read", "{cassette}");
    std::fs::write(&path, cassette.to_string()).unwrap();
    let cwd = ws.cwd();
    let out = ws.reloop(&[
        "run",
        "go",
        "--script",
        path.to_str().unwrap(),
        "--cwd",
        cwd.to_str().unwrap(),
        "--max-retries",
        "0",
    ]);
    // The cassette is read whole before the run: a response it could not read would be exit 2.
    assert_ne!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(!stderr(&out).contains("cassette"), "{}", stderr(&out));
}

#[test]
fn each_configured_hook_is_drawn_apart_and_why_names_the_user_s_hook() {
    let ws = Workspace::seed();
    let settings = ws.dir.path().join("settings.json");
    let body = serde_json::json!({"hooks": {"Stop": [
        {"hooks": [{"type": "command", "command": "./scripts/tests-pass.sh"}]},
        {"hooks": [{"type": "command", "command": "npm run lint"}]},
    ]}});
    std::fs::write(&settings, body.to_string()).unwrap();
    let out = ws.reloop(&[
        "prop",
        "--cases",
        "300",
        "--seed",
        "11",
        "--settings",
        settings.to_str().unwrap(),
        "--property",
        "never_blocked: stop_hook_blocks == 0",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}{}", stdout(&out), stderr(&out));
    let session = json(&out)["failure"]["session"].as_str().unwrap().to_string();
    let why = stdout(&ws.reloop(&["why", &session, "--json"]));
    assert!(why.contains("./scripts/tests-pass.sh") || why.contains("npm run lint"), "{why}");
    assert!(!why.contains("./check.sh"), "{why}");
}

#[test]
fn a_rule_on_an_input_refuses_exactly_the_calls_it_names() {
    let ws = Workspace::seed();
    let settings = ws.dir.path().join("settings.json");
    let prop = |rules: &str| {
        std::fs::write(&settings, format!(r#"{{"permissions": {rules}}}"#)).unwrap();
        ws.reloop(&[
            "prop",
            "--cases",
            "400",
            "--seed",
            "5",
            "--tools",
            "Bash",
            "--settings",
            settings.to_str().unwrap(),
            "--property",
            "nothing_refused: denials == 0",
            "--json",
        ])
    };
    // Every Bash call allowed: nothing is refused, whatever the input (no random denial).
    let out = prop(r#"{"allow": ["Bash"]}"#);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    // A deny rule on `rm` refuses the calls that run rm, and only those.
    let out = prop(r#"{"allow": ["Bash"], "deny": ["Bash(rm:*)"]}"#);
    assert_eq!(out.status.code(), Some(1), "{}{}", stdout(&out), stderr(&out));
    let session = json(&out)["failure"]["session"].as_str().unwrap().to_string();
    let steps = stdout(&ws.reloop(&["show", "--steps", &session]));
    assert!(steps.contains("rm x"), "{steps}");
    // An ask rule, with nobody to ask, refuses as a non-interactive run does.
    let out = prop(r#"{"allow": ["Bash"], "ask": ["Bash(git push:*)"]}"#);
    assert_eq!(out.status.code(), Some(1), "{}{}", stdout(&out), stderr(&out));
    let session = json(&out)["failure"]["session"].as_str().unwrap().to_string();
    let steps = stdout(&ws.reloop(&["show", "--steps", &session]));
    assert!(steps.contains("git push x"), "{steps}");
}

/// The decisions `why --json` lists for a session, without the step numbers (a run journals
/// the stream's deltas as steps of their own).
fn decisions(ws: &Workspace, session: &str) -> Vec<Value> {
    let out = ws.reloop(&["why", session, "--json"]);
    let mut all: Vec<Value> = serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| panic!("{e}: {}", stdout(&out)));
    for d in &mut all {
        d.as_object_mut().unwrap().remove("seq");
    }
    all
}

/// The tool results of a session's conversation, as `show` prints them.
fn tool_results(ws: &Workspace, session: &str) -> Vec<String> {
    let shown = stdout(&ws.reloop(&["show", session]));
    shown.lines().filter(|l| l.starts_with("user: tool_result")).map(str::to_string).collect()
}

#[test]
fn the_cassette_of_a_counterexample_that_depends_on_a_tool_outcome_reruns_into_the_same_decisions() {
    let ws = Workspace::seed();
    let settings = ws.dir.path().join("settings.json");
    std::fs::write(&settings, r#"{"permissions": {"allow": ["Bash"]}}"#).unwrap();
    // False only when a Bash call succeeds: the drawn outcome ("ran Bash") decides it; the
    // real command (`x`) would fail.
    let out = ws.reloop(&[
        "prop",
        "--cases",
        "300",
        "--seed",
        "8",
        "--tools",
        "Bash",
        "--max-retries",
        "0",
        "--settings",
        settings.to_str().unwrap(),
        "--property",
        "every_bash_call_fails: tool_calls.Bash == tool_errors + denials",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}{}", stdout(&out), stderr(&out));
    let failure = &json(&out)["failure"];
    let session = failure["session"].as_str().unwrap().to_string();
    let cassette: Value =
        serde_json::from_str(&std::fs::read_to_string(failure["cassette"].as_str().unwrap()).unwrap()).unwrap();
    assert!(cassette["tool_results"]["Bash"].is_array(), "{cassette}");

    let command = failure["run_command"].as_str().unwrap();
    let words: Vec<&str> = command.split(' ').skip(1).collect();
    let run = ws.reloop(&words);
    assert_ne!(run.status.code(), Some(2), "{}", stderr(&run));
    let rerun = stdout(&ws.reloop(&["sessions", "--json"]));
    let sessions: Value = serde_json::from_str(&rerun).unwrap();
    let newest =
        sessions.as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap().to_string()).find(|id| *id != session);
    let newest = newest.expect("the run journaled a session");
    assert_eq!(decisions(&ws, &newest), decisions(&ws, &session));
    assert_eq!(tool_results(&ws, &newest), tool_results(&ws, &session));
    assert!(tool_results(&ws, &session).iter().any(|r| !r.contains("(error)")), "{:?}", tool_results(&ws, &session));
}

#[test]
fn what_a_cassette_cannot_reproduce_it_says_and_prop_prints() {
    let ws = Workspace::seed();
    let settings = ws.dir.path().join("settings.json");
    let body = serde_json::json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "./tests-pass.sh"}]}]}});
    std::fs::write(&settings, body.to_string()).unwrap();
    let out = ws.reloop(&[
        "prop",
        "--cases",
        "300",
        "--seed",
        "2",
        "--settings",
        settings.to_str().unwrap(),
        "--property",
        "never_blocked: stop_hook_blocks == 0",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("not reproduced by the cassette: the verdicts of the hooks ./tests-pass.sh"), "{text}");
    let path = text.lines().find_map(|l| l.trim().strip_prefix("cassette: ")).unwrap().trim().to_string();
    let cassette: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert!(cassette["not_reproduced"][0].as_str().unwrap().contains("./tests-pass.sh"), "{cassette}");
    // `reloop run` reads such a cassette and says the same.
    let cwd = ws.cwd();
    let run = ws.reloop(&["run", "go", "--script", &path, "--cwd", cwd.to_str().unwrap()]);
    assert_ne!(run.status.code(), Some(2), "{}", stderr(&run));
    assert!(stderr(&run).contains("the cassette does not reproduce: the verdicts of the hooks"), "{}", stderr(&run));
}
