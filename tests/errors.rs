//! Bad input gets a clear message and a non-zero exit, never a panic, and loses nothing.

mod common;

use common::{stderr, Workspace};

fn assert_clean_failure(out: &std::process::Output, code: i32, needle: &str) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(code), "stderr: {err}");
    assert!(err.contains(needle), "expected {needle:?} in: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn a_missing_cassette() {
    let ws = Workspace::seed();
    let out = ws.reloop(&["run", "hi", "--script", "nope.json"]);
    assert_clean_failure(&out, 2, "cannot read the script nope.json");
}

#[test]
fn a_bad_cassette() {
    let ws = Workspace::seed();
    let path = ws.dir.path().join("bad.json");
    std::fs::write(&path, "{\"responses\": [ {\"message\": 3} ]").unwrap();
    let out = ws.reloop(&["run", "hi", "--script", path.to_str().unwrap()]);
    assert_clean_failure(&out, 2, "bad.json");
}

#[test]
fn no_model_at_all() {
    let ws = Workspace::seed();
    let out = ws.reloop(&["run", "hi"]);
    assert_clean_failure(&out, 2, "--script");
}

#[test]
fn a_cassette_that_runs_out_names_the_request() {
    let ws = Workspace::seed();
    let path = ws.dir.path().join("short.json");
    let seed = std::fs::read_to_string(common::cassette_path("seed.json")).unwrap();
    let mut value: serde_json::Value = serde_json::from_str(&seed).unwrap();
    value["responses"].as_array_mut().unwrap().truncate(1);
    std::fs::write(&path, value.to_string()).unwrap();
    let out = ws.reloop(&["run", "hi", "--script", path.to_str().unwrap(), "--cwd", ws.cwd().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = common::stdout(&out);
    assert!(text.contains("model request 2"), "{text}");
    let why = common::stdout(&ws.reloop(&["why", "last"]));
    assert!(why.contains("stop: model_error"), "{why}");
}

#[test]
fn an_unreadable_journal_is_refused_and_kept() {
    let ws = Workspace::seed();
    std::fs::write(ws.journal(), b"not a database at all, but my notes").unwrap();
    let out = ws.reloop(&["sessions"]);
    assert_clean_failure(&out, 2, "is not a reloop journal");
    let out = ws.run("hi", "seed.json", &[]);
    assert_clean_failure(&out, 2, "is not a reloop journal");
    assert_eq!(std::fs::read(ws.journal()).unwrap(), b"not a database at all, but my notes");
}

#[test]
fn a_missing_journal_and_an_unknown_session() {
    let ws = Workspace::seed();
    assert_clean_failure(&ws.reloop(&["why", "last"]), 2, "no journal at");
    assert_eq!(ws.run("检查登录模块", "seed.json", &[]).status.code(), Some(0));
    assert_clean_failure(&ws.reloop(&["replay", "zzzz"]), 2, "no session matches `zzzz`");
}
