//! Grep: result texts, modes, pagination and errors (rg parity is in grep_vs_rg.rs).

mod common;

use common::Workspace;
use serde_json::json;

fn workspace() -> Workspace {
    let ws = Workspace::new();
    ws.file("src/a.rs", "fn alpha() {}\nlet x = 1;\nfn beta() {}\n");
    ws.file("src/b.rs", "// nothing here\nfn gamma() {}\n");
    ws.file("docs/guide.md", "Functions are declared with fn.\n");
    ws
}

#[test]
fn files_with_matches_is_the_default_mode_newest_first() {
    let ws = workspace();
    ws.set_mtime("src/a.rs", 100);
    ws.set_mtime("src/b.rs", 200);
    ws.set_mtime("docs/guide.md", 50);
    assert_eq!(ws.ok("Grep", json!({"pattern": "fn"})), "Found 3 files\nsrc/b.rs\nsrc/a.rs\ndocs/guide.md");
}

#[test]
fn files_with_matches_ties_are_ordered_by_path() {
    let ws = workspace();
    for rel in ["src/a.rs", "src/b.rs", "docs/guide.md"] {
        ws.set_mtime(rel, 100);
    }
    assert_eq!(ws.ok("Grep", json!({"pattern": "fn"})), "Found 3 files\ndocs/guide.md\nsrc/a.rs\nsrc/b.rs");
}

#[test]
fn no_matching_file_says_no_files_found() {
    let ws = workspace();
    assert_eq!(ws.ok("Grep", json!({"pattern": "zzz_absent"})), "No files found");
}

#[test]
fn content_mode_prints_path_line_and_text() {
    let ws = workspace();
    assert_eq!(
        ws.ok("Grep", json!({"pattern": "^fn", "path": "src", "output_mode": "content"})),
        "src/a.rs:1:fn alpha() {}\nsrc/a.rs:3:fn beta() {}\nsrc/b.rs:2:fn gamma() {}"
    );
}

#[test]
fn content_mode_without_line_numbers() {
    let ws = workspace();
    assert_eq!(
        ws.ok("Grep", json!({"pattern": "gamma", "output_mode": "content", "-n": false})),
        "src/b.rs:fn gamma() {}"
    );
}

#[test]
fn content_mode_with_context_marks_context_lines_and_separates_groups() {
    let ws = Workspace::new();
    ws.file("f.txt", "a\nhit\nb\nc\nd\ne\nhit\nz\n");
    assert_eq!(
        ws.ok("Grep", json!({"pattern": "hit", "output_mode": "content", "-C": 1})),
        "f.txt-1-a\nf.txt:2:hit\nf.txt-3-b\n--\nf.txt-6-e\nf.txt:7:hit\nf.txt-8-z"
    );
    assert_eq!(
        ws.ok("Grep", json!({"pattern": "hit", "output_mode": "content", "-A": 1, "-B": 0})),
        "f.txt:2:hit\nf.txt-3-b\n--\nf.txt:7:hit\nf.txt-8-z"
    );
}

#[test]
fn no_matching_line_says_no_matches_found() {
    let ws = workspace();
    assert_eq!(ws.ok("Grep", json!({"pattern": "zzz_absent", "output_mode": "content"})), "No matches found");
    assert_eq!(ws.ok("Grep", json!({"pattern": "zzz_absent", "output_mode": "count"})), "No matches found");
}

#[test]
fn count_mode_lists_counts_then_a_total() {
    let ws = workspace();
    assert_eq!(
        ws.ok("Grep", json!({"pattern": "fn", "path": "src", "output_mode": "count"})),
        "src/a.rs:2\nsrc/b.rs:1\n\nFound 3 total occurrences across 2 files."
    );
    assert_eq!(
        ws.ok("Grep", json!({"pattern": "gamma", "output_mode": "count"})),
        "src/b.rs:1\n\nFound 1 total occurrence across 1 file."
    );
}

#[test]
fn head_limit_cuts_lines_and_says_so() {
    let ws = workspace();
    assert_eq!(
        ws.ok("Grep", json!({"pattern": "fn", "path": "src", "output_mode": "content", "head_limit": 2})),
        "src/a.rs:1:fn alpha() {}\nsrc/a.rs:3:fn beta() {}\n\n[Showing results with pagination = limit: 2, offset: 0]"
    );
    assert_eq!(
        ws.ok("Grep", json!({"pattern": "fn", "path": "src", "output_mode": "content", "head_limit": 1, "offset": 1})),
        "src/a.rs:3:fn beta() {}\n\n[Showing results with pagination = limit: 1, offset: 1]"
    );
}

#[test]
fn head_limit_applies_to_files_too() {
    let ws = workspace();
    ws.set_mtime("src/a.rs", 300);
    ws.set_mtime("src/b.rs", 200);
    ws.set_mtime("docs/guide.md", 100);
    assert_eq!(
        ws.ok("Grep", json!({"pattern": "fn", "head_limit": 1})),
        "Found 1 file\nsrc/a.rs\n\n[Showing results with pagination = limit: 1, offset: 0]"
    );
}

#[test]
fn a_limit_that_cuts_nothing_adds_no_note() {
    let ws = workspace();
    assert_eq!(
        ws.ok("Grep", json!({"pattern": "gamma", "output_mode": "content", "head_limit": 10})),
        "src/b.rs:2:fn gamma() {}"
    );
}

#[test]
fn case_insensitive_search() {
    let ws = workspace();
    assert_eq!(
        ws.ok("Grep", json!({"pattern": "FUNCTIONS", "output_mode": "content", "-i": true})),
        "docs/guide.md:1:Functions are declared with fn."
    );
}

#[test]
fn long_content_lines_are_cut_at_500_characters() {
    let ws = Workspace::new();
    ws.file("wide.txt", format!("needle{}\n", "x".repeat(1000)));
    let out = ws.ok("Grep", json!({"pattern": "needle", "output_mode": "content"}));
    let text = out.strip_prefix("wide.txt:1:").expect("path and line prefix");
    assert_eq!(text, format!("needle{}… [line truncated]", "x".repeat(494)));
}

#[test]
fn a_single_file_path_is_searched_even_if_hidden() {
    let ws = Workspace::new();
    ws.file(".env", "TOKEN=1\n");
    assert_eq!(ws.ok("Grep", json!({"pattern": "TOKEN", "path": ".env"})), "Found 1 file\n.env");
}

#[test]
fn an_invalid_regex_is_an_error_naming_the_pattern() {
    let ws = workspace();
    let out = ws.err("Grep", json!({"pattern": "fn(", "output_mode": "content"}));
    assert!(out.starts_with("<tool_use_error>Invalid regex pattern `fn(`: "), "{out}");
}

#[test]
fn an_unknown_file_type_is_an_error() {
    let ws = workspace();
    let out = ws.err("Grep", json!({"pattern": "fn", "type": "no-such-type"}));
    assert!(out.contains("no-such-type"), "{out}");
}

#[test]
fn a_missing_path_is_an_error() {
    let ws = workspace();
    let out = ws.err("Grep", json!({"pattern": "fn", "path": "missing"}));
    assert!(out.starts_with(&format!("Path does not exist: {}", ws.path("missing").display())), "{out}");
}

#[test]
fn a_raised_cancel_flag_interrupts_the_search() {
    let ws = workspace();
    ws.ctx.cancel.store(true, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(ws.err("Grep", json!({"pattern": "fn"})), "Interrupted by user");
}
