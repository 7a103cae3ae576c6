//! Glob: matching, newest-first order, the 100-result cap and ignore rules.

mod common;

use common::Workspace;
use serde_json::json;

#[test]
fn matches_are_newest_first_with_ties_broken_by_path() {
    let ws = Workspace::new();
    for (rel, secs) in [("src/old.rs", 1_000), ("src/new.rs", 3_000), ("src/b_tie.rs", 2_000), ("src/a_tie.rs", 2_000)]
    {
        ws.file(rel, "");
        ws.set_mtime(rel, secs);
    }
    ws.file("src/notes.txt", "");
    assert_eq!(ws.ok("Glob", json!({"pattern": "**/*.rs"})), "src/new.rs\nsrc/a_tie.rs\nsrc/b_tie.rs\nsrc/old.rs");
}

#[test]
fn a_pattern_is_anchored_at_the_searched_directory_and_star_stays_in_one_level() {
    let ws = Workspace::new();
    ws.file("top.rs", "");
    ws.file("src/inner.rs", "");
    ws.file("src/deep/deeper.rs", "");
    assert_eq!(ws.ok("Glob", json!({"pattern": "*.rs"})), "top.rs");
    ws.set_mtime("src/inner.rs", 10);
    ws.set_mtime("src/deep/deeper.rs", 20);
    assert_eq!(ws.ok("Glob", json!({"pattern": "**/*.rs", "path": "src"})), "src/deep/deeper.rs\nsrc/inner.rs");
}

#[test]
fn no_match_says_no_files_found() {
    let ws = Workspace::new();
    ws.file("a.txt", "");
    assert_eq!(ws.ok("Glob", json!({"pattern": "**/*.zig"})), "No files found");
}

#[test]
fn more_than_100_matches_are_cut_with_a_note() {
    let ws = Workspace::new();
    for i in 0..105 {
        let rel = format!("f{i:03}.txt");
        ws.file(&rel, "");
        ws.set_mtime(&rel, 1_000 + i);
    }
    let out = ws.ok("Glob", json!({"pattern": "*.txt"}));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 101);
    assert_eq!(lines[0], "f104.txt");
    assert_eq!(lines[99], "f005.txt");
    assert_eq!(lines[100], "(Results are truncated. Consider using a more specific path or pattern.)");
}

#[test]
fn gitignored_and_hidden_files_are_skipped_like_rg_files() {
    let ws = Workspace::new();
    ws.file(".gitignore", "target/\n*.log\n");
    ws.file("target/debug/app.rs", "");
    ws.file("build.log", "");
    ws.file(".hidden/secret.rs", "");
    ws.file("src/lib.rs", "");
    assert_eq!(ws.ok("Glob", json!({"pattern": "**/*"})), "src/lib.rs");
}

#[test]
fn a_missing_directory_is_an_error() {
    let ws = Workspace::new();
    let out = ws.err("Glob", json!({"pattern": "*", "path": "nowhere"}));
    assert_eq!(
        out,
        format!(
            "Path does not exist: {}. Note: your current working directory is {}.",
            ws.path("nowhere").display(),
            ws.root.display()
        )
    );
}
