//! `sessions`, `last`, `import` and `why` as a person debugging real Claude Code sessions uses
//! them (issue #15, items 3 and 4).

mod common;

use std::path::PathBuf;

use common::{stderr, stdout, Workspace};
use serde_json::Value;

fn real(name: &str) -> PathBuf {
    PathBuf::from("/work/shared/fixtures/real/marot-spotter").join(name)
}

fn sessions_json(ws: &Workspace) -> Vec<Value> {
    serde_json::from_str::<Value>(&stdout(&ws.reloop(&["sessions", "--json"]))).unwrap().as_array().unwrap().clone()
}

#[test]
fn sessions_show_date_source_model_steps_cost_end_and_first_prompt() {
    let ws = Workspace::seed();
    assert_eq!(ws.run("检查登录模块", "seed.json", &[]).status.code(), Some(0));
    let file = real("tool_heavy.jsonl");
    assert_eq!(ws.reloop(&["import", "claude-code", file.to_str().unwrap()]).status.code(), Some(0));
    let list = stdout(&ws.reloop(&["sessions"]));
    // The import's transcript is older than the run: it is listed first, and still is `last`.
    let lines: Vec<&str> = list.lines().collect();
    assert_eq!(lines.len(), 4, "{list}");
    // data/models.json has no price for claude-opus-4-6: its cost is unknown, not Sonnet's.
    assert!(lines[0].contains("   23 steps  cost unknown  aborted_streaming  claude-opus-4-6  <- last"), "{list}");
    assert!(
        lines[0].starts_with(&format!("{}  2026-02-1", &sessions_json(&ws)[0]["id"].as_str().unwrap()[..8])),
        "{list}"
    );
    // Whose rules: the profile nearest the transcript's Claude Code version, said to be nearest.
    assert_eq!(
        lines[1].trim(),
        format!(
            "import {} (claude-code-2.1.197, nearest to Claude Code 2.1.38): start phoenix in background",
            file.display()
        )
    );
    assert!(
        lines[2].contains("   14 steps  $0.0201  completed  claude-opus-5-5 (answered by claude-sonnet-4-6)"),
        "{list}"
    );
    assert_eq!(lines[3].trim(), "run (scripted): 检查登录模块");
    let why = stdout(&ws.reloop(&["why", "last"]));
    // The rules the transcript's Claude Code version had, then the prompts.
    assert!(
        why.starts_with(
            "rules: claude-code-2.1.197, the nearest known to the transcript's Claude Code 2.1.38\nprompt 1 (#1): start phoenix in background\n"
        ),
        "{why}"
    );
    let rows = sessions_json(&ws);
    assert_eq!(rows[0]["last"], true);
    assert_eq!(rows[0]["source"], format!("import {}", file.display()));
    assert_eq!(rows[1]["first_prompt"], "检查登录模块");
    assert_eq!(rows[1]["model"], "claude-sonnet-4-6");
}

#[test]
fn importing_the_same_transcript_twice_is_refused_and_names_the_first_import() {
    let ws = Workspace::seed();
    let file = real("tool_heavy.jsonl");
    let first = ws.reloop(&["import", "claude-code", file.to_str().unwrap(), "--json"]);
    let id = serde_json::from_str::<Value>(&stdout(&first)).unwrap()["session_id"].as_str().unwrap().to_string();
    // The same file by another path is the same file.
    let again = ws.reloop(&[
        "import",
        "claude-code",
        "/work/shared/fixtures/real/marot-spotter/../marot-spotter/tool_heavy.jsonl",
    ]);
    assert_eq!(again.status.code(), Some(2));
    assert!(
        stderr(&again).contains(&format!("is already imported as session {id} (same conversation)")),
        "{}",
        stderr(&again)
    );
    assert_eq!(sessions_json(&ws).len(), 1);
}

#[test]
fn a_claude_code_project_folder_imports_each_transcript_once() {
    let ws = Workspace::seed();
    let project = ws.dir.path().join("-home-marco-projects-spotter");
    std::fs::create_dir(&project).unwrap();
    for name in ["short.jsonl", "tool_heavy.jsonl", "subagent.jsonl"] {
        std::fs::copy(real(name), project.join(name)).unwrap();
    }
    // Claude Code leaves empty session files behind; they are named and skipped.
    std::fs::write(project.join("empty.jsonl"), "").unwrap();
    let out = ws.reloop(&["import", "claude-code", project.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out)
            .ends_with(&format!("3 imported, 0 already imported, 1 could not be imported ({})\n", project.display())),
        "{}",
        stdout(&out)
    );
    assert!(stderr(&out).contains("empty.jsonl: the file is empty"), "{}", stderr(&out));
    let again = ws.reloop(&["import", "claude-code", project.to_str().unwrap()]);
    assert!(stdout(&again).contains("0 imported, 3 already imported"), "{}", stdout(&again));
    assert_eq!(sessions_json(&ws).len(), 3);
}

#[test]
fn why_groups_decisions_by_prompt_with_tool_inputs_costs_and_filters() {
    let ws = Workspace::seed();
    let file = real("tool_heavy.jsonl");
    assert_eq!(ws.reloop(&["import", "claude-code", file.to_str().unwrap()]).status.code(), Some(0));
    let why = stdout(&ws.reloop(&["why", "last"]));
    common::settings().bind(|| insta::assert_snapshot!("why_imported_two_prompts", why));

    let only = stdout(&ws.reloop(&["why", "last", "--prompt", "2", "--reason", "next_turn"]));
    let rules = "rules: claude-code-2.1.197, the nearest known to the transcript's Claude Code 2.1.38";
    assert!(only.starts_with(&format!("{rules}\nprompt 2 (#10): scrolling back in xterm.js")), "{only}");
    assert_eq!(only.lines().filter(|l| l.contains("next_turn")).count(), 2, "{only}");
    assert!(!only.contains("prompt 1") && !only.contains("stop:"), "{only}");

    let stops: Value = serde_json::from_str(&stdout(&ws.reloop(&[
        "why",
        "last",
        "--turn",
        "3",
        "--reason",
        "aborted_streaming",
        "--json",
    ])))
    .unwrap();
    let prompts: Vec<_> = stops.as_array().unwrap().iter().map(|l| l["prompt"].as_u64().unwrap()).collect();
    assert_eq!(prompts, [1, 2], "{stops}");
    assert_eq!(stdout(&ws.reloop(&["why", "last", "--reason", "no_such_reason"])), "no decisions match\n");
}

#[test]
fn why_marks_every_event_the_importer_inferred() {
    let ws = Workspace::seed();
    let file = real("subagent.jsonl");
    assert_eq!(ws.reloop(&["import", "claude-code", file.to_str().unwrap()]).status.code(), Some(0));
    let why = stdout(&ws.reloop(&["why", "last"]));
    assert!(
        why.contains(
            "#1    inferred: a response answers meta or command text: the import takes that text as the prompt"
        ),
        "{why}"
    );
    let lines: Value = serde_json::from_str(&stdout(&ws.reloop(&["why", "last", "--json"]))).unwrap();
    let inferred: Vec<_> = lines.as_array().unwrap().iter().filter(|l| l.get("inferred").is_some()).collect();
    assert_eq!(inferred.len(), 1, "{lines}");
    assert_eq!(inferred[0]["seq"], 1);
    // A session reloop ran itself has nothing inferred.
    assert_eq!(ws.run("检查登录模块", "seed.json", &[]).status.code(), Some(0));
    assert!(!stdout(&ws.reloop(&["why", "last"])).contains("inferred"));
}
