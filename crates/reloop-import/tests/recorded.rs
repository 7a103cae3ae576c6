//! The transcripts recorded from the real Claude Code CLI (`tests/recorded/<version>/<family>[/<variant>]`,
//! made by `scripts/record-claude-code/`) stay a well-formed fixture set: every folder has its note,
//! scenario and transcript, every line is JSON, every conversation line carries the folder's Claude
//! Code version, and SOURCES.md indexes every folder. The importer's tests rely on all of this.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/recorded")
}

/// Every fixture folder (one holding a scenario.json), as `<version>/<family>[/<variant>]`.
fn fixture_dirs() -> Vec<String> {
    fn walk(dir: &Path, base: &Path, out: &mut Vec<String>) {
        let mut entries: Vec<PathBuf> = fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.expect("directory entry").path())
            .collect();
        entries.sort();
        if dir.join("scenario.json").is_file() {
            let rel = dir.strip_prefix(base).expect("inside the root");
            out.push(rel.to_string_lossy().replace('\\', "/"));
            return;
        }
        for p in entries.into_iter().filter(|p| p.is_dir()) {
            walk(&p, base, out);
        }
    }
    let mut out = Vec::new();
    walk(&root(), &root(), &mut out);
    out
}

fn json_lines(path: &Path) -> Vec<Value> {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).unwrap_or_else(|e| panic!("{}:{}: {e}", path.display(), i + 1)))
        .collect()
}

/// The transcript files of one fixture: the session's own and its subagents'.
fn transcripts(dir: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in fs::read_dir(dir).expect("readable fixture folder") {
            let p = e.expect("directory entry").path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "jsonl")
                && !matches!(
                    p.file_name().and_then(|n| n.to_str()),
                    Some("stdout.jsonl" | "requests.jsonl" | "hook-inputs.jsonl")
                )
            {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, &mut out);
    out.sort();
    out
}

#[test]
fn both_versions_are_recorded() {
    let dirs = fixture_dirs();
    for version in ["2.1.197", "2.1.332"] {
        assert!(
            dirs.iter().filter(|d| d.starts_with(&format!("{version}/"))).count() >= 12,
            "fewer than 12 recorded fixtures for Claude Code {version}: {dirs:?}"
        );
    }
}

#[test]
fn every_fixture_has_its_note_scenario_and_transcript() {
    for rel in fixture_dirs() {
        let dir = root().join(&rel);
        let version = rel.split('/').next().expect("a version folder");
        for file in ["NOTE.md", "scenario.json", "transcript.jsonl", "stdout.jsonl", "requests.jsonl"] {
            assert!(dir.join(file).is_file(), "{rel}: missing {file}");
        }
        let scenario: Value =
            serde_json::from_str(&fs::read_to_string(dir.join("scenario.json")).expect("readable scenario"))
                .unwrap_or_else(|e| panic!("{rel}/scenario.json: {e}"));
        assert_eq!(scenario["claude_code_version"], version, "{rel}: scenario of another version");
        let name = rel.split_once('/').map(|(_, n)| n).expect("a family below the version");
        assert_eq!(scenario["name"], name, "{rel}: scenario named otherwise");
        assert!(scenario["argv"].is_array() && scenario["outcome"].is_object(), "{rel}: argv/outcome missing");
        assert!(
            fs::read_to_string(dir.join("NOTE.md")).expect("readable note").contains(version),
            "{rel}: NOTE.md does not say the version"
        );
    }
}

#[test]
fn every_line_is_json_and_carries_the_folders_version() {
    for rel in fixture_dirs() {
        let dir = root().join(&rel);
        let version = rel.split('/').next().expect("a version folder");
        for file in ["stdout.jsonl", "requests.jsonl"] {
            json_lines(&dir.join(file));
        }
        for path in transcripts(&dir) {
            let lines = json_lines(&path);
            assert!(!lines.is_empty(), "{}: empty transcript", path.display());
            let mut versioned = 0;
            for (i, line) in lines.iter().enumerate() {
                let kind = line["type"].as_str().unwrap_or_else(|| panic!("{}:{}: no type", path.display(), i + 1));
                match line.get("version") {
                    Some(v) => {
                        assert_eq!(v, version, "{}:{}: another version", path.display(), i + 1);
                        versioned += 1;
                    }
                    None => assert!(
                        !matches!(kind, "user" | "assistant" | "system"),
                        "{}:{}: a {kind} line without version",
                        path.display(),
                        i + 1
                    ),
                }
            }
            assert!(versioned > 0, "{}: no line carries the version", path.display());
        }
    }
}

#[test]
fn sources_index_every_fixture() {
    let sources = fs::read_to_string(root().join("SOURCES.md")).expect("tests/recorded/SOURCES.md");
    for rel in fixture_dirs() {
        assert!(sources.contains(&format!("`{rel}`")), "SOURCES.md does not list `{rel}`");
    }
}
