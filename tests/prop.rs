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
    let mut words: Vec<&str> = command.split(' ').skip(1).collect();
    let cwd = ws.cwd();
    words.extend(["--cwd", cwd.to_str().unwrap()]);
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
fn with_hooks_run_the_settings_file_s_hook_command_really_runs() {
    let ws = Workspace::seed();
    let marker = ws.dir.path().join("hook-ran");
    let settings = ws.dir.path().join("settings.json");
    let hook = format!(
        "echo ran >> {}; test -f README.md || echo missing-workspace >> {}",
        marker.display(),
        marker.display()
    );
    let body = serde_json::json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": hook}]}]}});
    std::fs::write(&settings, body.to_string()).unwrap();
    let cwd = ws.cwd();
    let out = ws.reloop(&[
        "prop",
        "--cases",
        "20",
        "--seed",
        "3",
        "--settings",
        settings.to_str().unwrap(),
        "--hooks",
        "run",
        "--workspace",
        cwd.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let ran = std::fs::read_to_string(&marker).expect("the Stop hook ran");
    assert!(ran.lines().count() >= 1 && !ran.contains("missing-workspace"), "{ran}");
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
