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
