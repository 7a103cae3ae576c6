//! The rules check cannot pass by construction: the import bends its events so that its own
//! engine can follow a transcript, and the check must see through that. Every recording whose
//! engine has stopped at its end is given one model answer more (the model asked again after the
//! stop), and every one must then disagree; every recording checked as it is keeps agreeing or
//! disagreeing as the CLI test pins.

use std::path::{Path, PathBuf};

use reloop_import::{check_rules, parse_claude_code, ImportOptions};
use serde_json::{json, Value};

fn transcripts() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/recorded");
    let mut found = Vec::new();
    let mut dirs = vec![root];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.file_name().is_some_and(|n| n == "transcript.jsonl") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// No tool is known: the check of tool inputs is the CLI's (with reloop-tools' registry).
fn no_tools(_: &str, _: &Value) -> Option<Result<(), String>> {
    None
}

/// The transcript with the model's last answer sent once more, after its last line.
fn one_more_answer(text: &str) -> Option<String> {
    let lines: Vec<Value> =
        text.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect();
    // The model's own answer, not a line Claude Code wrote for an error (`<synthetic>`).
    let mut answer =
        lines.iter().rev().find(|l| l["type"] == "assistant" && l["message"]["model"] != "<synthetic>")?.clone();
    let last = lines.iter().rev().find(|l| l["uuid"].is_string()).unwrap();
    answer["uuid"] = json!("00000000-0000-4000-8000-0000000000cc");
    answer["parentUuid"] = last["uuid"].clone();
    answer["message"]["id"] = json!("msg_after_the_stop");
    answer["requestId"] = json!("req_after_the_stop");
    let mut out = text.trim_end().to_string();
    out.push('\n');
    out.push_str(&answer.to_string());
    out.push('\n');
    Some(out)
}

#[test]
fn an_answer_after_the_engine_s_stop_always_disagrees() {
    let mut mutated = 0;
    for path in transcripts() {
        let text = std::fs::read_to_string(&path).unwrap();
        let name = path.display().to_string();
        let imported = parse_claude_code(&text, &name, &ImportOptions::default()).unwrap();
        // Only where the engine has stopped: an unfinished transcript may go on.
        if imported.summary.final_phase != "done" {
            continue;
        }
        // (A recording whose every request failed has no answer to send again.)
        let Some(edited) = one_more_answer(&text) else { continue };
        let report = check_rules(&edited, &name, &no_tools).unwrap();
        let d = report
            .disagreement
            .as_ref()
            .unwrap_or_else(|| panic!("{name}: an answer after the stop agrees: {report:#?}"));
        assert!(d.code.starts_with("RULES-"), "{name}: {d:?}");
        mutated += 1;
    }
    assert!(mutated >= 50, "only {mutated} recordings end stopped");
}

#[test]
fn a_check_names_the_profile_and_counts_what_it_compared() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/recorded/2.1.332/stop_hook_block/cap/transcript.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let report = check_rules(&text, "cap", &no_tools).unwrap();
    assert_eq!(report.disagreement, None, "{report:#?}");
    assert_eq!(report.profile, "claude-code-2.1.332");
    assert_eq!(report.profile_exact, Some(true));
    // Eight blocks, the ninth that meets the cap, the hooks' summaries: each met by the engine.
    assert!(report.decisions >= 9, "{report:#?}");
}
