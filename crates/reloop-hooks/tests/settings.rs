//! Settings files: what loads, which hooks match, and how a bad file is reported.

use std::time::Duration;

use reloop_core::hook::HookEventName::{PostToolUse, PreToolUse, Stop};
use reloop_hooks::{HookCommand, Settings, SettingsError, DEFAULT_HOOK_TIMEOUT};
use serde_json::{json, Value};

fn settings(value: Value) -> Settings {
    Settings::from_json(&value.to_string(), "settings.json").expect("valid settings")
}

fn error(text: &str) -> String {
    match Settings::from_json(text, "settings.json") {
        Ok(_) => panic!("{text} should not load"),
        Err(err) => err.to_string(),
    }
}

fn group(matcher: &str, commands: &[&str]) -> Value {
    let hooks: Vec<Value> = commands.iter().map(|c| json!({"type": "command", "command": c})).collect();
    json!({"matcher": matcher, "hooks": hooks})
}

fn names(hooks: Vec<HookCommand>) -> Vec<String> {
    hooks.into_iter().map(|h| h.command).collect()
}

#[test]
fn matchers_are_anchored_regexes_and_empty_or_star_match_everything() {
    let s = settings(json!({"hooks": {"PreToolUse": [
        group("Bash", &["bash-only"]),
        group("Edit|Write", &["edits"]),
        group("", &["empty"]),
        group("*", &["star"]),
        group("Notebook.*", &["notebooks"]),
    ]}}));
    let on = |tool| names(s.hooks.matching(PreToolUse, Some(tool)));
    assert_eq!(on("Bash"), ["bash-only", "empty", "star"]);
    assert_eq!(on("BashOutput"), ["empty", "star"]);
    assert_eq!(on("Edit"), ["edits", "empty", "star"]);
    assert_eq!(on("Write"), ["edits", "empty", "star"]);
    assert_eq!(on("MultiEdit"), ["empty", "star"]);
    assert_eq!(on("NotebookEdit"), ["empty", "star", "notebooks"], "file order");
    assert_eq!(names(s.hooks.matching(PreToolUse, None)), ["empty", "star"]);
    assert!(s.hooks.matching(PostToolUse, Some("Bash")).is_empty());
}

#[test]
fn a_group_without_a_matcher_matches_every_tool() {
    let s = settings(json!({"hooks": {"PostToolUse": [{"hooks": [{"type": "command", "command": "all"}]}]}}));
    assert_eq!(names(s.hooks.matching(PostToolUse, Some("Read"))), ["all"]);
}

#[test]
fn stop_hooks_ignore_the_matcher() {
    let s = settings(json!({"hooks": {"Stop": [group("Bash", &["one"]), group("", &["two"])]}}));
    assert_eq!(names(s.hooks.matching(Stop, None)), ["one", "two"]);
    assert_eq!(names(s.hooks.matching(Stop, Some("Edit"))), ["one", "two"]);
}

#[test]
fn a_command_listed_twice_runs_once_at_its_first_position() {
    let s =
        settings(json!({"hooks": {"PreToolUse": [group("Bash", &["fmt", "lint"]), group("*", &["lint", "audit"])]}}));
    assert_eq!(names(s.hooks.matching(PreToolUse, Some("Bash"))), ["fmt", "lint", "audit"]);
}

#[test]
fn timeouts_are_seconds_and_default_to_60() {
    let s = settings(json!({"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": "default"},
        {"type": "command", "command": "short", "timeout": 0.5},
        {"type": "command", "command": "long", "timeout": 600},
    ]}]}}));
    let timeouts: Vec<Duration> = s.hooks.matching(Stop, None).into_iter().map(|h| h.timeout).collect();
    assert_eq!(DEFAULT_HOOK_TIMEOUT, Duration::from_secs(60));
    assert_eq!(timeouts, [Duration::from_secs(60), Duration::from_millis(500), Duration::from_secs(600)]);
}

#[test]
fn unknown_events_keys_and_hook_types_load_without_error() {
    let s = settings(json!({
        "model": "opus",
        "hooks": {
            "Setup": [{"hooks": [{"type": "command", "command": "x"}]}],
            "FutureEvent": "not even a list",
            "Stop": [{"matcher": "", "extra": 1, "hooks": [
                {"type": "prompt", "prompt": "is the work done?"},
                {"type": "command", "command": "check", "async": true},
            ]}],
        },
        "permissions": {"allow": ["Read"], "defaultMode": "acceptEdits"},
    }));
    assert_eq!(names(s.hooks.matching(Stop, None)), ["check"]);
    let unknown: Vec<&String> = s.hooks.unknown_events().keys().collect();
    assert_eq!(unknown, ["Setup", "FutureEvent"]);
    assert_eq!(s.other.get("model"), Some(&json!("opus")));
}

#[test]
fn permission_rules_are_kept_verbatim() {
    let s = settings(json!({"permissions": {
        "allow": ["Bash(npm test:*)", "Read"], "deny": ["Bash(rm:*)"], "ask": ["Write"],
    }}));
    let bare = |texts: &[&str]| texts.iter().map(|t| reloop_core::SourcedRule::bare(*t)).collect::<Vec<_>>();
    assert_eq!(s.permissions.allow, bare(&["Bash(npm test:*)", "Read"]));
    assert_eq!(s.permissions.deny, bare(&["Bash(rm:*)"]));
    assert_eq!(s.permissions.ask, bare(&["Write"]));
    // A file read on its own names no origin; its reader gives one.
    let from_user = s.permissions.clone().from_source(reloop_core::RuleSource::UserSettings);
    assert!(from_user
        .allow
        .iter()
        .chain(&from_user.ask)
        .all(|r| r.source == Some(reloop_core::RuleSource::UserSettings)));
}

#[test]
fn is_empty_only_when_no_hook_could_run() {
    assert!(Settings::empty().hooks.is_empty());
    assert!(settings(json!({})).hooks.is_empty());
    assert!(settings(json!({"hooks": {"Setup": [group("", &["x"])], "Stop": []}})).hooks.is_empty());
    assert!(settings(json!({"hooks": {"Stop": [group("", &[])]}})).hooks.is_empty());
    assert!(!settings(json!({"hooks": {"PostToolUse": [group("Nothing", &["x"])]}})).hooks.is_empty());
}

#[test]
fn malformed_files_name_the_file_and_the_json_path() {
    assert!(error("{\"hooks\": ").starts_with("settings.json: not valid JSON: "));
    assert_eq!(error("[]"), "settings.json: $: expected an object, found an array");
    assert_eq!(error(r#"{"hooks": []}"#), "settings.json: hooks: expected an object, found an array");
    assert_eq!(error(r#"{"hooks": {"Stop": {}}}"#), "settings.json: hooks.Stop: expected an array, found an object");
    assert_eq!(
        error(
            r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "a"}, {"type": "command", "command": "b", "timeout": "1"}]}]}}"#
        ),
        r#"settings.json: hooks.Stop[0].hooks[1].timeout: expected a positive number of seconds, found "1""#
    );
    assert_eq!(
        error(r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "b", "timeout": 0}]}]}}"#),
        "settings.json: hooks.Stop[0].hooks[0].timeout: expected a positive number of seconds, found 0"
    );
    assert_eq!(
        error(r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command"}]}]}}"#),
        r#"settings.json: hooks.PreToolUse[0].hooks[0]: missing "command""#
    );
    assert_eq!(
        error(r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"command": "x"}]}]}}"#),
        r#"settings.json: hooks.PreToolUse[0].hooks[0]: missing "type""#
    );
    assert_eq!(error(r#"{"hooks": {"Stop": [{}]}}"#), r#"settings.json: hooks.Stop[0]: missing "hooks""#);
    assert_eq!(
        error(r#"{"hooks": {"PostToolUse": [{"matcher": 3, "hooks": []}]}}"#),
        "settings.json: hooks.PostToolUse[0].matcher: expected a string, found a number"
    );
    assert!(error(r#"{"hooks": {"PostToolUse": [{"matcher": "Edit(", "hooks": []}]}}"#)
        .starts_with("settings.json: hooks.PostToolUse[0].matcher: invalid regex: "));
    assert_eq!(
        error(r#"{"permissions": {"deny": ["Read", 7]}}"#),
        "settings.json: permissions.deny[1]: expected a string, found a number"
    );
}

#[test]
fn from_file_reads_the_file_and_names_it_in_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let good = dir.path().join("settings.json");
    std::fs::write(&good, json!({"hooks": {"Stop": [group("", &["check"])]}}).to_string()).expect("write");
    assert_eq!(names(Settings::from_file(&good).expect("loads").hooks.matching(Stop, None)), ["check"]);

    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, r#"{"hooks": {"Stop": 1}}"#).expect("write");
    let err = Settings::from_file(&bad).expect_err("an error");
    assert_eq!(err.to_string(), format!("{}: hooks.Stop: expected an array, found a number", bad.display()));

    let missing = dir.path().join("missing.json");
    let err = Settings::from_file(&missing).expect_err("an error");
    assert!(matches!(err, SettingsError::Read { ref path, .. } if path == &missing));
    assert!(err.to_string().starts_with(&format!("cannot read settings file {}: ", missing.display())));
}
