//! An event the state did not expect is a journaled, typed `Ignored` step: `show --steps` and
//! `why --steps` name it and why, replay re-decides it, and a journal whose record of it differs
//! from the engine's decision diverges with `RELOOP-D002` (exit 3), like a changed reason.

mod common;

use common::{cassette_path, stderr, stdout, Workspace};
use serde_json::{json, Value};

/// A seed session's dump with one more step: a late abort (a second Ctrl-C a driver recorded
/// after the end), journaled as the engine decides it.
fn dump_with_a_late_abort(ws: &Workspace) -> Value {
    let run = ws.run("检查登录模块", cassette_path("seed.json").to_str().unwrap(), &[]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let out = ws.reloop(&["export", "last", "--format", "journal"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let mut dump: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(dump["header"]["core_config"]["digest_version"], 4, "new sessions record digest version 4");
    let last = dump["steps"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["to_phase"], "done");
    let late = json!({
        "seq": last["seq"].as_u64().unwrap() + 1,
        "at_ms": last["at_ms"],
        "event": {"kind": "abort"},
        "from_phase": "done",
        "to_phase": "done",
        "turn_before": last["turn_after"],
        "turn_after": last["turn_after"],
        "ignored": {"phase": "done", "event_kind": "abort", "why": {"why": "finished"}},
        "effects": [],
        "digest": last["digest"],
    });
    dump["steps"].as_array_mut().unwrap().push(late);
    dump["header"]["id"] = "late-abort".into();
    dump
}

fn import(ws: &Workspace, dump: &Value, name: &str) {
    let file = ws.dir.path().join(name);
    std::fs::write(&file, dump.to_string()).unwrap();
    let out = ws.reloop(&["import", "journal", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn an_ignored_event_is_shown_explained_and_replayed() {
    let ws = Workspace::seed();
    let dump = dump_with_a_late_abort(&ws);
    import(&ws, &dump, "late.json");

    let rows: Vec<Value> =
        serde_json::from_str(&stdout(&ws.reloop(&["show", "late-abort", "--steps", "--json"]))).unwrap();
    assert_eq!(rows.last().unwrap()["ignored"]["why"], json!({"why": "finished"}));
    assert!(rows[..rows.len() - 1].iter().all(|r| r.get("ignored").is_none()), "only the ignored step says so");
    let trace = stdout(&ws.reloop(&["show", "late-abort", "--steps"]));
    let line = trace.lines().last().unwrap();
    assert!(line.contains("abort") && line.contains("done -> done"), "{line}");
    assert!(line.ends_with("=> ignored: abort ignored in done: the loop has stopped"), "{line}");

    let why = stdout(&ws.reloop(&["why", "late-abort"]));
    assert!(!why.contains("ignored"), "plain why lists decisions only:\n{why}");
    let why_steps = stdout(&ws.reloop(&["why", "late-abort", "--steps"]));
    let last = why_steps.lines().last().unwrap();
    assert!(last.contains("ignored: finished: abort ignored in done: the loop has stopped"), "{why_steps}");
    let lines: Vec<Value> =
        serde_json::from_str(&stdout(&ws.reloop(&["why", "late-abort", "--steps", "--json"]))).unwrap();
    let ignored = lines.last().unwrap();
    assert_eq!(ignored["kind"], "ignored");
    assert_eq!(ignored["ignored"]["why"], json!({"why": "finished"}));

    let replay = ws.reloop(&["replay", "late-abort"]);
    assert_eq!(replay.status.code(), Some(0), "{}{}", stdout(&replay), stderr(&replay));
    assert!(stdout(&replay).contains("identical"), "{}", stdout(&replay));
}

#[test]
fn a_journal_that_applied_what_the_engine_ignores_diverges_as_a_reason_does() {
    let ws = Workspace::seed();
    let mut dump = dump_with_a_late_abort(&ws);
    // An engine that let the late abort through silently, as reloop did before the table.
    dump["steps"].as_array_mut().unwrap().last_mut().unwrap().as_object_mut().unwrap().remove("ignored");
    import(&ws, &dump, "silent.json");
    let out = ws.reloop(&["replay", "late-abort", "--json"]);
    assert_eq!(out.status.code(), Some(3), "{}{}", stdout(&out), stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let d = &report["divergence"];
    assert_eq!(d["code"], "RELOOP-D002");
    assert_eq!(d["event_kind"], "abort");
    assert_eq!(d["reason"], "the journal says applied, the engine ignored (finished)");
}

#[test]
fn journals_from_before_ignored_steps_replay_under_digest_version_1() {
    let ws = Workspace::seed();
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/journals/scripted_seed.json");
    let dump: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    assert!(dump["header"]["core_config"].get("digest_version").is_none(), "recorded before digest versions");
    import(&ws, &dump, "old.json");
    let out = ws.reloop(&["replay", "last"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
}
