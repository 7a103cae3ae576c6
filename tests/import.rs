//! Claude Code transcripts become reloop sessions through the CLI: every real transcript in the
//! fixtures imports and replays identical, or is refused with a clear message.

mod common;

use std::path::{Path, PathBuf};

use common::{stderr, stdout, Workspace};

/// The real Claude Code transcripts. `claude-agent-sdk/` holds recordings of the SDK's control
/// protocol (stdin/stdout lines), not transcripts, so it is not walked here.
fn fixtures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/real");
    assert!(
        root.is_dir(),
        "the real fixtures are missing: expected {} (shared/ beside the repository)",
        root.display()
    );
    let mut found = Vec::new();
    let mut dirs = vec![root];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if !path.ends_with("claude-agent-sdk") {
                    dirs.push(path);
                }
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

#[test]
fn every_real_transcript_imports_and_replays_or_is_refused_clearly() {
    let ws = Workspace::seed();
    let (mut imported, mut refused) = (0, 0);
    for file in fixtures() {
        let out = ws.reloop(&["import", "claude-code", file.to_str().unwrap(), "--json"]);
        match out.status.code() {
            Some(0) => {
                imported += 1;
                let report: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
                let id = report["session_id"].as_str().unwrap();
                let replay = ws.reloop(&["replay", id]);
                assert_eq!(replay.status.code(), Some(0), "{}: {}", file.display(), stdout(&replay));
                assert_eq!(ws.reloop(&["why", id]).status.code(), Some(0));
            }
            Some(2) => {
                refused += 1;
                let err = stderr(&out);
                assert!(err.contains(file.to_str().unwrap()) && !err.contains("panicked"), "{err}");
            }
            other => panic!("{}: exit {other:?}: {}", file.display(), stderr(&out)),
        }
    }
    assert_eq!((imported, refused), (29, 10));
}

#[test]
fn an_imported_session_exports_and_imports_again_unchanged() {
    let ws = Workspace::seed();
    let file = fixtures().into_iter().find(|f| f.ends_with("tool_heavy.jsonl")).unwrap();
    assert_eq!(ws.reloop(&["import", "claude-code", file.to_str().unwrap()]).status.code(), Some(0));
    let first = stdout(&ws.reloop(&["export", "last", "--format", "claude-jsonl"]));
    let copy = ws.dir.path().join("exported.jsonl");
    std::fs::write(&copy, &first).unwrap();
    assert_eq!(ws.reloop(&["import", "claude-code", copy.to_str().unwrap()]).status.code(), Some(0));
    let messages_a = stdout(&ws.reloop(&["export", "last", "--format", "messages"]));
    let second = stdout(&ws.reloop(&["export", "last", "--format", "claude-jsonl"]));
    assert_eq!(first.lines().count(), second.lines().count());
    let messages: serde_json::Value = serde_json::from_str(&messages_a).unwrap();
    assert!(messages.as_array().unwrap().len() > 4);
    let why = stdout(&ws.reloop(&["why", "last"]));
    assert!(why.contains("next_turn"), "{why}");
}

/// A transcript line of `kind` with `uuid` and `parent`, as Claude Code writes one.
fn line(kind: &str, uuid: &str, parent: &str, text: &str) -> String {
    let message = match kind {
        "user" => serde_json::json!({"role": "user", "content": text}),
        _ => serde_json::json!({"id": format!("msg_{uuid}"), "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-6", "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn", "usage": {"input_tokens": 1, "output_tokens": 1}}),
    };
    serde_json::json!({"parentUuid": parent, "isSidechain": false, "sessionId": "s", "cwd": "/w",
        "version": "2.1.0", "type": kind, "message": message, "uuid": uuid,
        "timestamp": "2026-01-01T00:00:00.000Z"})
    .to_string()
}

fn import_text(ws: &Workspace, name: &str, lines: &[String]) -> std::process::Output {
    let file = ws.dir.path().join(name);
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    ws.reloop(&["import", "claude-code", file.to_str().unwrap()])
}

#[test]
fn a_parent_chain_that_loops_is_refused_naming_the_uuid_where_it_closes() {
    let ws = Workspace::seed();
    // Every line has a parent, so no line is a leaf: the file used to be called uuid-less.
    let lines = [line("user", "u1", "u2", "hi"), line("assistant", "u2", "u1", "hello")];
    let out = import_text(&ws, "loop.jsonl", &lines);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(
            "loop.jsonl:1: the `parentUuid` chain forms a cycle: it comes back to the line with uuid `u1`, so the \
             conversation has no first message"
        ),
        "{err}"
    );
    assert!(!err.contains("without a `uuid`"), "{err}");
}

#[test]
fn a_leaf_whose_chain_runs_into_a_loop_is_refused_too() {
    let ws = Workspace::seed();
    // u3 is a leaf; its chain goes u3 → u2 → u1 → u2.
    let lines =
        [line("user", "u1", "u2", "hi"), line("assistant", "u2", "u1", "hello"), line("user", "u3", "u2", "more")];
    let out = import_text(&ws, "rho.jsonl", &lines);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("rho.jsonl:2: the `parentUuid` chain forms a cycle: it comes back to the line with uuid `u2`"),
        "{err}"
    );
}
