//! Replay names the first step where the engine behaves otherwise than the journal says, with a
//! stable code, the step, expected and actual effects, the reason and a short diff; exit 3.
//! Behaviour flags make such changes deliberate: a session replays under the flags it was
//! recorded with, and `--flip-flag N` shows where behaviour N bites.

mod common;

use std::path::Path;

use common::{stderr, stdout, Workspace};
use serde_json::Value;

fn load(ws: &Workspace, corpus: &str) -> String {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/journals").join(format!("{corpus}.json"));
    let out = ws.reloop(&["import", "journal", file.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    serde_json::from_str::<Value>(&stdout(&out)).unwrap()["session_id"].as_str().unwrap().to_string()
}

fn replay_json(ws: &Workspace, args: &[&str]) -> Value {
    let out = ws.reloop(args);
    assert_eq!(out.status.code(), Some(3), "{}{}", stdout(&out), stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap()
}

#[test]
fn flipping_the_interrupt_flag_changes_the_state_at_the_abort() {
    let ws = Workspace::seed();
    let id = load(&ws, "scripted_aborted_tools");
    assert_eq!(ws.reloop(&["replay", &id]).status.code(), Some(0), "recorded flags: identical");

    let text = ws.reloop(&["replay", &id, "--flip-flag", "1"]);
    assert_eq!(text.status.code(), Some(3));
    let out = stdout(&text);
    assert!(out.starts_with("RELOOP-D003: diverged at step "), "{out}");
    assert!(out.contains("(abort): the state differs"), "{out}");
    assert!(out.contains("  - digest: ") && out.contains("  + digest: "), "{out}");

    let report = replay_json(&ws, &["replay", &id, "--flip-flag", "1", "--json"]);
    let d = &report["divergence"];
    assert_eq!(d["code"], "RELOOP-D003");
    assert_eq!(d["event_kind"], "abort");
    assert_eq!(d["expected"]["effects"], d["actual"]["effects"]);
    assert_eq!(report["flags"], serde_json::json!([2]));
}

#[test]
fn flipping_the_retry_after_flag_changes_the_wait() {
    let ws = Workspace::seed();
    let id = load(&ws, "scripted_retry_after");
    let report = replay_json(&ws, &["replay", &id, "--flip-flag", "2", "--json"]);
    let d = &report["divergence"];
    assert_eq!(d["code"], "RELOOP-D001");
    assert_eq!(d["event_kind"], "model_failed");
    assert_eq!(d["expected"]["effects"][0]["delay_ms"], 1000, "retry-after: 1 was the floor");
    let diff: Vec<&str> = d["diff"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
    assert!(diff.contains(&"- effects[0].delay_ms: 1000"), "{diff:?}");
    assert!(diff.iter().any(|l| l.starts_with("+ effects[0].delay_ms: ")), "{diff:?}");
}

#[test]
fn a_journal_from_an_engine_with_unknown_flags_is_named_not_replayed() {
    let ws = Workspace::seed();
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/journals/scripted_seed.json");
    let mut dump: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    dump["header"]["core_config"]["flags"] = serde_json::json!([1, 2, 99]);
    dump["header"]["engine_version"] = "9.0.0".into();
    let edited = ws.dir.path().join("future.json");
    std::fs::write(&edited, dump.to_string()).unwrap();
    assert_eq!(ws.reloop(&["import", "journal", edited.to_str().unwrap()]).status.code(), Some(0));
    let out = ws.reloop(&["replay", "last"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        stdout(&out).starts_with("RELOOP-D004: the journal was recorded with behaviour flags [99]"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_tampered_journal_diverges_with_effects_and_reason_codes() {
    let ws = Workspace::seed();
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/journals/scripted_seed.json");
    let original: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let last = original["steps"].as_array().unwrap().len() - 1;

    let mut effects = original.clone();
    effects["header"]["id"] = "tampered-effects".into();
    effects["steps"][0]["effects"][0]["message_count"] = 7.into();
    let mut reason = original.clone();
    reason["header"]["id"] = "tampered-reason".into();
    reason["steps"][last]["reason"]["evidence"]["stop_reason"] = "max_tokens".into();
    for (dump, id, code) in [(effects, "tampered-effects", "RELOOP-D001"), (reason, "tampered-reason", "RELOOP-D002")] {
        let path = ws.dir.path().join(format!("{id}.json"));
        std::fs::write(&path, dump.to_string()).unwrap();
        assert_eq!(ws.reloop(&["import", "journal", path.to_str().unwrap()]).status.code(), Some(0));
        let report = replay_json(&ws, &["replay", id, "--json"]);
        assert_eq!(report["divergence"]["code"], code, "{report}");
    }

    // A reason paired with another reason's evidence cannot even be read: the journal is
    // refused with what is wrong, instead of replayed into a wrong explanation.
    let mut impossible = original.clone();
    impossible["header"]["id"] = "impossible-reason".into();
    impossible["steps"][last]["reason"]["reason"] = "max_turns".into();
    let path = ws.dir.path().join("impossible.json");
    std::fs::write(&path, impossible.to_string()).unwrap();
    let out = ws.reloop(&["import", "journal", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(stderr(&out).contains("the reason max_turns cannot carry no_tool_requested evidence"), "{}", stderr(&out));
}

/// Replay compares the hash a row holds of its effects and reason; a row written before rows
/// held it (its `outcome` is NULL) has it computed from its text. Bytes there that are not text
/// (a garbled page, a hand edit) are then refused, naming the step, and never pass for the
/// engine's own or crash the replay. A number stored there diverges like any other difference.
#[test]
fn effects_or_a_reason_that_are_not_text_are_refused_naming_the_step() {
    let ws = Workspace::seed();
    let id = load(&ws, "scripted_seed");
    let journal = ws.journal();
    let step_of = |column: &str| -> i64 {
        let conn = rusqlite::Connection::open(&journal).unwrap();
        conn.query_row(&format!("SELECT seq FROM steps WHERE {column} IS NOT NULL ORDER BY key LIMIT 1"), [], |r| {
            r.get(0)
        })
        .unwrap()
    };
    let (effects_step, reason_step) = (step_of("effects"), step_of("reason_json"));
    for (column, step, what) in [("effects", effects_step, "effects"), ("reason_json", reason_step, "reason")] {
        let copy = ws.dir.path().join(format!("{column}.db"));
        std::fs::copy(&journal, &copy).unwrap();
        let conn = rusqlite::Connection::open(&copy).unwrap();
        // Valid JSON up to a byte that is no UTF-8, and that byte alone.
        for bytes in [&b"[{\"effect\":\"call_model\"\xff}]"[..], b"\xff\xfe"] {
            let sql =
                format!("UPDATE steps SET {column} = CAST(?1 AS TEXT), outcome = NULL WHERE (key & 4294967295) = ?2");
            assert_eq!(conn.execute(&sql, rusqlite::params![bytes, step]).unwrap(), 1);
            let out = ws.reloop(&["replay", &id, "--journal", copy.to_str().unwrap()]);
            assert_eq!(out.status.code(), Some(2), "{}{}", stdout(&out), stderr(&out));
            let said = stderr(&out);
            assert!(said.contains(&format!("step {step}: stored {what} cannot be read")), "{said}");
        }
    }
    let copy = ws.dir.path().join("number.db");
    std::fs::copy(&journal, &copy).unwrap();
    let conn = rusqlite::Connection::open(&copy).unwrap();
    let sql = "UPDATE steps SET effects = 42, outcome = NULL WHERE (key & 4294967295) = ?1";
    assert_eq!(conn.execute(sql, [effects_step]).unwrap(), 1);
    let report = replay_json(&ws, &["replay", &id, "--journal", copy.to_str().unwrap(), "--json"]);
    assert_eq!(report["divergence"]["code"], "RELOOP-D001", "{report}");
}
