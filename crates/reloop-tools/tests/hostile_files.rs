//! Files that would hang or flood a session: FIFOs, devices and sockets are refused, big files
//! are refused or streamed, and every answer is bounded.

mod common;

use std::time::{Duration, Instant};

use common::Workspace;
use serde_json::json;

#[allow(unsafe_code)]
fn fifo(ws: &Workspace, rel: &str) -> std::path::PathBuf {
    let path = ws.path(rel);
    let c = std::ffi::CString::new(path.to_str().expect("utf-8 path")).expect("no NUL");
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
    path
}

fn refusal(path: &std::path::Path, kind: &str) -> String {
    format!(
        "Error: cannot use '{}': it is {kind}, not a regular file. Only regular files can be read or written.",
        path.display()
    )
}

#[test]
fn read_edit_write_and_grep_refuse_a_fifo_at_once() {
    let ws = Workspace::new();
    let pipe = fifo(&ws, "pipe");
    let started = Instant::now();
    assert_eq!(ws.err("Read", json!({"file_path": pipe})), refusal(&pipe, "a FIFO"));
    assert_eq!(ws.err("Write", json!({"file_path": pipe, "content": "x"})), refusal(&pipe, "a FIFO"));
    assert_eq!(
        ws.err("Edit", json!({"file_path": pipe, "old_string": "a", "new_string": "b"})),
        refusal(&pipe, "a FIFO")
    );
    assert_eq!(ws.err("Grep", json!({"pattern": "x", "path": "pipe"})), refusal(&pipe, "a FIFO"));
    assert!(started.elapsed() < Duration::from_secs(5), "nothing blocked");
}

#[test]
fn devices_are_refused_by_kind() {
    let ws = Workspace::new();
    let zero = std::path::Path::new("/dev/zero");
    assert_eq!(ws.err("Read", json!({"file_path": zero})), refusal(zero, "a character device"));
    assert_eq!(ws.err("Grep", json!({"pattern": "x", "path": zero})), refusal(zero, "a character device"));
}

#[test]
fn a_walk_skips_a_fifo_without_opening_it() {
    let ws = Workspace::new();
    ws.file("a.txt", "needle\n");
    fifo(&ws, "pipe.txt");
    assert_eq!(ws.ok("Grep", json!({"pattern": "needle"})), "Found 1 file\na.txt");
    assert_eq!(ws.ok("Glob", json!({"pattern": "*.txt"})), "a.txt");
}

#[test]
fn a_file_over_256_kb_needs_an_offset_or_a_limit() {
    let ws = Workspace::new();
    let big = ws.file("big.txt", "0123456789\n".repeat(40_000));
    assert_eq!(
        ws.err("Read", json!({"file_path": big})),
        "File content (429.7KB) exceeds maximum allowed size (256KB). Use offset and limit parameters to read \
         specific portions of the file, or search for specific content instead of reading the whole file."
    );
    let window = ws.ok("Read", json!({"file_path": big, "offset": 39_999, "limit": 5}));
    assert_eq!(window, "39999\t0123456789\n40000\t0123456789\n40001\t");
}

#[test]
fn an_answer_over_25000_tokens_is_refused_with_its_estimate() {
    let ws = Workspace::new();
    // 2000 lines of 2000 characters: under the default line limit, over the token limit.
    let wide = ws.file("wide.txt", format!("{}\n", "w".repeat(2000)).repeat(2000));
    let out = ws.err("Read", json!({"file_path": wide, "limit": 2000}));
    assert!(out.starts_with("File content ("), "{out}");
    assert!(out.contains(" tokens) exceeds maximum allowed tokens (25000)."), "{out}");
    let ok = ws.ok("Read", json!({"file_path": wide, "limit": 10}));
    assert_eq!(ok.lines().count(), 10);
}

#[test]
fn a_refused_read_does_not_count_as_read_for_edit() {
    let ws = Workspace::new();
    let big = ws.file("big.txt", "x\n".repeat(200_000));
    ws.err("Read", json!({"file_path": big}));
    assert_eq!(
        ws.err("Edit", json!({"file_path": big, "old_string": "x", "new_string": "y", "replace_all": true})),
        "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>"
    );
}

#[test]
fn grep_content_is_cut_at_its_cap_with_a_note() {
    let ws = Workspace::new();
    ws.file("many.txt", "hit\n".repeat(reloop_tools::MAX_GREP_RESULT_LINES + 500));
    let out = ws.ok("Grep", json!({"pattern": "hit", "output_mode": "content"}));
    assert!(out.ends_with(&reloop_tools::grep_truncated_note()), "{}", &out[out.len() - 200..]);
    assert_eq!(out.lines().filter(|l| l.starts_with("many.txt:")).count(), reloop_tools::MAX_GREP_RESULT_LINES);
    let paged = ws.ok("Grep", json!({"pattern": "hit", "output_mode": "content", "head_limit": 2, "offset": 1400}));
    assert_eq!(
        paged,
        "many.txt:1401:hit\nmany.txt:1402:hit\n\n[Showing results with pagination = limit: 2, offset: 1400]"
    );
}

#[test]
fn edit_refuses_a_file_it_would_have_to_hold_past_its_bound() {
    let ws = Workspace::new();
    let big = ws.path("big.txt");
    std::fs::write(&big, "text\n".repeat(4096)).expect("write");
    // The rest is a hole: the file is big without taking the disk.
    let file = std::fs::File::options().write(true).open(&big).expect("open");
    file.set_len(reloop_tools::MAX_EDIT_BYTES + 1).expect("sparse file");
    ws.ok("Read", json!({"file_path": big, "limit": 1}));
    assert_eq!(
        ws.err("Edit", json!({"file_path": big, "old_string": "a", "new_string": "b"})),
        "<tool_use_error>File is too large to edit (64MB). Maximum editable file size is 64MB.</tool_use_error>"
    );
}

#[test]
fn grep_lists_of_files_and_counts_are_capped_too() {
    let ws = Workspace::new();
    for i in 0..reloop_tools::MAX_GREP_RESULT_LINES + 5 {
        ws.file(&format!("f{i:04}.txt"), "hit\n");
    }
    let files = ws.ok("Grep", json!({"pattern": "hit"}));
    assert!(files.starts_with(&format!("Found {} files\n", reloop_tools::MAX_GREP_RESULT_LINES)), "{}", &files[..40]);
    assert!(files.ends_with(&reloop_tools::grep_truncated_note()));
    let counts = ws.ok("Grep", json!({"pattern": "hit", "output_mode": "count"}));
    assert!(counts.ends_with(&reloop_tools::grep_truncated_note()));
}

#[test]
fn a_far_offset_is_counted_not_held_and_pages_exactly_like_the_whole_list() {
    let ws = Workspace::new();
    ws.file("a.txt", "x\nhit 1\ny\nz\nhit 2\n");
    ws.file("b.txt", "hit 3\nq\n");
    let input = |extra: serde_json::Value| {
        let mut base = json!({"pattern": "hit", "output_mode": "content", "-C": 1});
        base.as_object_mut().expect("object").extend(extra.as_object().expect("object").clone());
        base
    };
    let full = ws.ok("Grep", input(json!({})));
    let all: Vec<&str> = full.lines().collect();
    assert!(all.contains(&"--"), "context groups are separated: {full}");
    for offset in 0..all.len() {
        let page = ws.ok("Grep", input(json!({"offset": offset, "head_limit": 2})));
        let shown: Vec<&str> = page.split("\n\n[Showing").next().unwrap_or_default().lines().collect();
        let expected: Vec<&str> = all.iter().skip(offset).take(2).copied().collect();
        assert_eq!(shown, expected, "offset {offset}");
    }
}
