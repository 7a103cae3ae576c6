//! The real Claude Code recordings (`crates/reloop-import/tests/recorded/<version>/<family>/`)
//! through the CLI: `import`, then `why --json` reads the reasons a native reloop session of the
//! same behaviour has, and `why`, `view` and `sessions` say whose rules decided.

mod common;

use std::path::PathBuf;

use common::{stdout, Workspace};

fn recorded(version: &str, family: &str) -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("crates/reloop-import/tests/recorded");
    assert!(root.is_dir(), "the recorded transcripts are missing: expected {}", root.display());
    root.join(version).join(family).join("transcript.jsonl")
}

/// Imports one recording into a fresh workspace; returns it and `why --json`'s lines.
fn import(version: &str, family: &str) -> (Workspace, Vec<serde_json::Value>) {
    let ws = Workspace::seed();
    let file = recorded(version, family);
    let out = ws.reloop(&["import", "claude-code", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{version}/{family}: {}", common::stderr(&out));
    let why = ws.reloop(&["why", "last", "--json"]);
    let lines: Vec<serde_json::Value> = serde_json::from_str(&stdout(&why)).unwrap();
    (ws, lines)
}

fn reasons(lines: &[serde_json::Value]) -> Vec<String> {
    lines.iter().map(|l| l["reason"].as_str().unwrap_or_default().to_string()).collect()
}

#[test]
fn a_stop_hook_s_blocks_read_as_a_native_session_s() {
    for version in ["2.1.197", "2.1.332"] {
        let (ws, lines) = import(version, "stop_hook_block/exit2");
        let reasons = reasons(&lines);
        assert_eq!(
            reasons,
            ["next_turn", "stop_hook_blocking", "stop_hook_blocking", "stop_hook_blocking", "completed"]
        );
        let evidence: Vec<u64> = lines.iter().filter_map(|l| l["evidence"]["block"].as_u64()).collect();
        assert_eq!(evidence, [1, 2, 3], "{version}");
        assert!(lines.iter().all(|l| l["kind"] != "caller"), "{version}: no prompt but the person's");
        let text = stdout(&ws.reloop(&["why", "last"]));
        assert!(
            text.starts_with(&format!("rules: claude-code-{version} (the transcript's Claude Code {version})")),
            "{text}"
        );
        assert!(text.contains("(block 3 of 8)"), "{text}");
        let sessions = stdout(&ws.reloop(&["sessions"]));
        assert!(sessions.contains(&format!("(claude-code-{version}, Claude Code {version})")), "{sessions}");
        let page = ws.dir.path().join("page.html");
        assert_eq!(ws.reloop(&["view", "last", "-o", page.to_str().unwrap()]).status.code(), Some(0));
        let html = std::fs::read_to_string(page).unwrap();
        assert!(html.contains(&format!("\"rules\":\"claude-code-{version} (the transcript's Claude Code {version})\"")));
    }
}

#[test]
fn compaction_max_turns_and_the_cap_read_as_native_stops() {
    for version in ["2.1.197", "2.1.332"] {
        let (_, lines) = import(version, "max_turns");
        assert_eq!(reasons(&lines), ["next_turn", "max_turns"], "{version}");
        let (_, lines) = import(version, "auto_compact/auto");
        assert_eq!(reasons(&lines), ["next_turn", "next_turn", "next_turn", "compacted", "completed"], "{version}");
        let compaction = lines.iter().find(|l| l["reason"] == "compacted").unwrap();
        assert!(compaction["inferred"].as_str().unwrap().contains("reloop's estimates"), "{compaction}");
        let (_, lines) = import(version, "stop_hook_block/cap");
        assert_eq!(
            lines.last().unwrap()["explanation"],
            "A hook blocked the turn from ending 8 consecutive times — overriding and ending turn"
        );
    }
}

#[test]
fn a_subagent_s_transcript_is_a_child_session_of_the_call_it_answered() {
    for version in ["2.1.197", "2.1.332"] {
        let (ws, lines) = import(version, "subagent/foreground");
        assert_eq!(reasons(&lines)[0], "next_turn", "{version}");
        let sessions: Vec<serde_json::Value> =
            serde_json::from_str(&stdout(&ws.reloop(&["sessions", "--json"]))).unwrap();
        let child = sessions.iter().find(|s| !s["agent"].is_null());
        let Some(child) = child else {
            // 2.1.197 keeps no subagents/ folder beside the transcript.
            assert!(!recorded(version, "subagent/foreground").with_file_name("subagents").exists(), "{version}");
            continue;
        };
        let parent = sessions.iter().find(|s| s["agent"].is_null()).unwrap();
        assert_eq!(child["agent"]["parent"], parent["id"], "{version}");
        assert_eq!(child["agent"]["tool_use_id"], "toolu_01_AGENT", "{version}");
        assert!(stdout(&ws.reloop(&["why", "last"])).contains("toolu_01_AGENT -> agent general-purpose"));
    }
}

#[test]
fn a_refused_call_reads_as_denied_in_why() {
    for version in ["2.1.197", "2.1.332"] {
        let (ws, _) = import(version, "permission_denied/default_mode");
        let why = stdout(&ws.reloop(&["why", "last"]));
        assert!(why.contains("Write new.txt (toolu_02_WRITE, denied)"), "{version}: {why}");
    }
}
