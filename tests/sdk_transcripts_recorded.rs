//! The session files reloop writes, held against the ones the real Claude Code wrote for the same
//! scenarios (crates/reloop-import/tests/recorded/, ground truth per version): each scenario of
//! scripts/record-claude-code is played again by the same recorder with reloop (under that
//! version's profile) as the CLI, and the two transcripts are compared line by line in shape —
//! the line types, `isMeta` / `isCompactSummary` / `isApiErrorMessage`, a message's content as a
//! string or its block types, `system` subtypes and the loop's attachments, and a tool result's
//! `permissionDecision` and `toolDenialKind` (2.1.332's). Every file reloop wrote must also import back
//! (`reloop import claude-code`).
//!
//! The scenarios where reloop's file differs are listed with the reason; the test fails when one
//! more differs, and when one of them stops differing (then strike it from the list).

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{stderr, Workspace};
use serde_json::Value;

/// Scenarios too slow to play in a test: reloop waits out every real retry delay.
const SLOW: &[&str] = &["api_errors/overloaded_exhausted", "api_errors/rate_limited_exhausted"];

/// Where reloop's session file differs from Claude Code's, and why. The reasons are the loop's,
/// not the file writer's: the file says what the journal holds.
const DIFFERS: &[(&str, &str)] = &[
    (
        "2.1.197/queued_command",
        "the queued message is answered as a query of its own (Claude Code folds it into the turn)",
    ),
    (
        "2.1.332/queued_command",
        "the queued message is answered as a query of its own (Claude Code folds it into the turn)",
    ),
    ("2.1.197/auto_compact/auto", "2.1.197's session file writes the kept tail again before the boundary"),
    ("2.1.197/interrupt/mid_stream", "the part of an answer streamed before the interrupt is not kept"),
    ("2.1.197/rule_sources/command", "a slash command's body is written as a meta line of its own there"),
    ("2.1.332/rule_sources/command", "a slash command's body is written as a meta line of its own there"),
    ("2.1.332/interrupt/mid_stream", "the part of an answer streamed before the interrupt is not kept"),
    ("2.1.197/interrupt/sigint", "2.1.197 writes no interruption line on SIGINT; reloop does"),
    ("2.1.332/interrupt/sigint", "the part of an answer streamed before the signal is not kept"),
    ("2.1.197/malformed_tool_call/no_block_exhausted", "2.1.197 retries without a meta reminder line in its file"),
    ("2.1.197/output_limit/resumed", "2.1.197 writes no line for its resume prompt"),
    ("2.1.197/output_limit/exhausted", "2.1.197 writes no line for its resume prompts"),
    ("2.1.197/stop_hook_block/cap", "the block the cap overrode is written as a meta line 2.1.197 does not write"),
    ("2.1.197/stop_hook_block/json_cap", "the block the cap overrode is written as a meta line 2.1.197 does not write"),
    ("2.1.332/stop_hook_block/json", "a JSON block's reason reaches the model twice (feedback and a system reminder)"),
    (
        "2.1.332/stop_hook_block/json_cap",
        "a JSON block's reason reaches the model twice (feedback and a system reminder)",
    ),
    (
        "2.1.332/api_errors/sse_overloaded_at_start",
        "2.1.332 writes no api_error line for a stream that broke at its start",
    ),
    ("2.1.332/subagent/default", "2.1.332 runs the agent in the background and is told when it ends"),
    (
        "2.1.332/structured_output/always_invalid",
        "reloop's file holds a meta user line before the last invalid call that 2.1.332's does not",
    ),
];

/// One line's shape, or `None` for lines that are Claude Code's bookkeeping. A tool result's
/// `permissionDecision` is kept whole: its decision, source, reason type, the rule's origin
/// (`ruleSource`) and reason code.
fn shape(line: &Value) -> Option<String> {
    let kind = line["type"].as_str().unwrap_or("?");
    match kind {
        "user" | "assistant" => {
            let content = match &line["message"]["content"] {
                Value::String(_) => "str".to_string(),
                Value::Array(blocks) => {
                    blocks.iter().map(|b| b["type"].as_str().unwrap_or("?")).collect::<Vec<_>>().join("+")
                }
                _ => "?".to_string(),
            };
            let mut tag = kind.to_string();
            for (flag, name) in [("isMeta", "meta"), ("isApiErrorMessage", "apierr"), ("isCompactSummary", "summary")] {
                if line[flag] == true {
                    tag.push_str(&format!("({name})"));
                }
            }
            // What a built-in file tool's or Bash's call did, as data (flag 12). An `Agent` call's
            // (its child's summary) is not written (docs/profiles.md, "Not reproduced yet").
            let builtin = ["file", "stdout", "filePath", "filenames", "mode"];
            if line.get("toolUseResult").is_some_and(|r| builtin.iter().any(|k| r.get(k).is_some())) {
                tag.push_str("(result:data)");
            }
            if let Some(kind) = line["toolDenialKind"].as_str() {
                tag.push_str(&format!("(denied:{kind})"));
            }
            if let Some(decision) = line.get("permissionDecision") {
                tag.push_str(&format!("(permission:{decision})"));
            }
            Some(format!("{tag}:{content}"))
        }
        "system" => Some(format!("system:{}", line["subtype"].as_str().unwrap_or("?"))),
        "attachment" => match line["attachment"]["type"].as_str() {
            Some(a @ ("queued_command" | "max_turns_reached")) => Some(format!("attachment:{a}")),
            _ => None,
        },
        _ => None,
    }
}

/// Each line's shape; a tool result's line is tagged `(source)` when its
/// `sourceToolAssistantUUID` names the earlier assistant line that asked for the call, as both
/// versions write for every result.
fn shapes(file: &Path) -> Vec<String> {
    let mut asked_on: BTreeMap<String, String> = BTreeMap::new();
    let mut out = Vec::new();
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    for line in text.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()) {
        let blocks = line["message"]["content"].as_array().cloned().unwrap_or_default();
        if line["type"] == "assistant" {
            for call in blocks.iter().filter(|b| b["type"] == "tool_use") {
                let (id, uuid) = (call["id"].as_str(), line["uuid"].as_str());
                if let (Some(id), Some(uuid)) = (id, uuid) {
                    asked_on.insert(id.to_string(), uuid.to_string());
                }
            }
        }
        let Some(mut shape) = shape(&line) else { continue };
        let answered = blocks.first().filter(|b| b["type"] == "tool_result").and_then(|b| b["tool_use_id"].as_str());
        if let Some(id) = answered.filter(|_| line["type"] == "user") {
            if line["sourceToolAssistantUUID"].as_str().is_some_and(|uuid| asked_on.get(id).is_some_and(|u| u == uuid))
            {
                shape.push_str("(source)");
            }
        }
        out.push(shape);
    }
    out
}

/// Every `transcript.jsonl` under `root`, by its scenario path (`VERSION/FAMILY[/VARIANT]`).
fn transcripts(root: &Path) -> BTreeMap<String, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == "transcript.jsonl") {
                let rel = p.parent().unwrap().strip_prefix(root).unwrap().to_string_lossy().into_owned();
                out.insert(rel, p);
            }
        }
    }
    out
}

fn tool_present(name: &str) -> bool {
    Command::new("sh").args(["-c", &format!("command -v {name}")]).output().is_ok_and(|o| o.status.success())
}

#[test]
fn reloop_session_files_have_claude_codes_shape_for_the_recorded_scenarios_and_import_back() {
    if !tool_present("python3") || !tool_present("flock") {
        eprintln!("notice: skipped, python3 and flock are needed to play the recorded scenarios");
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let recorded = root.join("crates/reloop-import/tests/recorded");
    let ws = Workspace::seed();
    let work = ws.dir.path();
    let mut bins = Vec::new();
    for version in ["2.1.197", "2.1.332"] {
        let wrapper = work.join(format!("reloop-{version}"));
        let script =
            format!("#!/bin/sh\nexec '{}' --compat claude-code-{version} \"$@\"\n", env!("CARGO_BIN_EXE_reloop"));
        std::fs::write(&wrapper, script).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
        bins.push(format!("{version}={}", wrapper.display()));
    }
    let recorder = root.join("scripts/record-claude-code");
    // The scenario names, from the recorder's own list.
    let names = Command::new("python3")
        .arg("-c")
        .arg("import sys, scenarios as S; print('\\n'.join(s['name'] for s in S.SCENARIOS))")
        .current_dir(&recorder)
        .output()
        .unwrap();
    let names: Vec<String> = String::from_utf8_lossy(&names.stdout)
        .lines()
        .map(str::to_string)
        .filter(|n| !SLOW.contains(&n.as_str()))
        .collect();
    assert!(names.len() >= 30, "{names:?}");
    let out_dir = work.join("played");
    let mut cmd = Command::new("flock");
    cmd.arg("/tmp/reloop-cc-record.lock")
        .arg("python3")
        .arg(recorder.join("record.py"))
        .args(["--no-unshare", "--out"])
        .arg(&out_dir);
    for bin in &bins {
        cmd.args(["--bin", bin]);
    }
    for name in &names {
        cmd.args(["--only", name]);
    }
    common::hermetic(&mut cmd).env_remove("CLAUDE_CONFIG_DIR");
    let played = cmd.output().unwrap();
    assert!(played.status.success(), "{}\n{}", common::stdout(&played), stderr(&played));

    let ours = transcripts(&out_dir);
    let theirs = transcripts(&recorded);
    let mut differ = Vec::new();
    let mut report = String::new();
    for (scenario, file) in &ours {
        let Some(real) = theirs.get(scenario) else { continue };
        let (a, b) = (shapes(real), shapes(file));
        if a != b {
            report.push_str(&format!("{scenario}\n  claude code: {a:?}\n  reloop:      {b:?}\n"));
            differ.push(scenario.clone());
        }
        let imported = ws.reloop(&["import", "claude-code", file.to_str().unwrap()]);
        assert_eq!(imported.status.code(), Some(0), "{scenario}: {}", stderr(&imported));
    }
    let played_count = ours.keys().filter(|k| theirs.contains_key(*k)).count();
    assert!(played_count >= 60, "only {played_count} scenarios wrote a session file: {:?}", ours.keys());
    let known: Vec<String> = DIFFERS.iter().map(|(s, _)| s.to_string()).collect();
    let mut expected = known.clone();
    expected.sort();
    differ.sort();
    assert_eq!(differ, expected, "scenarios whose session file differs from Claude Code's:\n{report}");
}
