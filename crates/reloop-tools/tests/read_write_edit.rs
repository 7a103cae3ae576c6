//! Read, Write and Edit: their outputs and every refusal, worded as Claude Code words them.

mod common;

use common::{abs, Workspace};
use serde_json::json;

fn missing_file_text(ws: &Workspace) -> String {
    format!("File does not exist. Note: your current working directory is {}.", ws.root.display())
}

#[test]
fn read_numbers_lines_and_shows_a_trailing_newline_as_an_empty_last_line() {
    let ws = Workspace::new();
    let path = ws.file("a.txt", "a\nb\n");
    assert_eq!(ws.ok("Read", json!({"file_path": abs(&path)})), "1\ta\n2\tb\n3\t");
}

#[test]
fn read_accepts_a_path_relative_to_the_working_directory() {
    let ws = Workspace::new();
    ws.file("dir/a.txt", "only line");
    assert_eq!(ws.ok("Read", json!({"file_path": "dir/a.txt"})), "1\tonly line");
}

#[test]
fn read_starts_at_the_offset_and_stops_at_the_limit() {
    let ws = Workspace::new();
    let path = ws.file("a.txt", "one\ntwo\nthree\nfour\nfive");
    assert_eq!(ws.ok("Read", json!({"file_path": abs(&path), "offset": 2, "limit": 2})), "2\ttwo\n3\tthree");
}

#[test]
fn read_shows_at_most_2000_lines_by_default() {
    let ws = Workspace::new();
    let text: String = (1..=2500).map(|i| format!("line {i}\n")).collect();
    let path = ws.file("long.txt", text);
    let out = ws.ok("Read", json!({"file_path": abs(&path)}));
    assert_eq!(out.lines().count(), 2000);
    assert!(out.ends_with("2000\tline 2000"));
}

#[test]
fn read_cuts_lines_longer_than_2000_characters_with_a_marker() {
    let ws = Workspace::new();
    let path = ws.file("wide.txt", format!("{}\nshort", "x".repeat(2500)));
    let out = ws.ok("Read", json!({"file_path": abs(&path)}));
    assert_eq!(out, format!("1\t{}… [line truncated]\n2\tshort", "x".repeat(2000)));
}

#[test]
fn read_of_a_missing_file_names_the_working_directory() {
    let ws = Workspace::new();
    let out = ws.err("Read", json!({"file_path": abs(&ws.path("nope.txt"))}));
    assert_eq!(out, missing_file_text(&ws));
}

#[test]
fn read_of_a_directory_is_eisdir() {
    let ws = Workspace::new();
    ws.file("sub/x", "");
    let dir = ws.path("sub");
    let out = ws.err("Read", json!({"file_path": abs(&dir)}));
    assert_eq!(out, format!("EISDIR: illegal operation on a directory, read '{}'", dir.display()));
}

#[test]
fn read_refuses_binary_files_naming_their_extension() {
    let ws = Workspace::new();
    let path = ws.file("logo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR");
    assert_eq!(
        ws.err("Read", json!({"file_path": abs(&path)})),
        "This tool cannot read binary files. The file appears to be a binary .png file. Please use appropriate tools for binary file analysis."
    );
}

#[test]
fn read_of_an_empty_file_warns_in_a_system_reminder() {
    let ws = Workspace::new();
    let path = ws.file("empty.txt", "");
    assert_eq!(
        ws.ok("Read", json!({"file_path": abs(&path)})),
        "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>"
    );
}

#[test]
fn read_past_the_end_warns_with_the_line_count() {
    let ws = Workspace::new();
    let path = ws.file("short.txt", "a\nb\nc");
    assert_eq!(
        ws.ok("Read", json!({"file_path": abs(&path), "offset": 10})),
        "<system-reminder>Warning: the file exists but is shorter than the provided offset (10). The file has 3 lines.</system-reminder>"
    );
}

#[test]
fn write_creates_a_new_file_and_its_parent_directories() {
    let ws = Workspace::new();
    let path = ws.path("new/dir/file.txt");
    assert_eq!(
        ws.ok("Write", json!({"file_path": abs(&path), "content": "hello\n"})),
        format!("File created successfully at: {}", path.display())
    );
    assert_eq!(ws.read_to_string("new/dir/file.txt"), "hello\n");
}

#[test]
fn write_refuses_an_existing_file_that_was_not_read() {
    let ws = Workspace::new();
    let path = ws.file("a.txt", "original");
    assert_eq!(
        ws.err("Write", json!({"file_path": abs(&path), "content": "clobbered"})),
        "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>"
    );
    assert_eq!(ws.read_to_string("a.txt"), "original");
}

#[test]
fn write_overwrites_a_file_after_it_was_read() {
    let ws = Workspace::new();
    let path = ws.file("a.txt", "original");
    ws.ok("Read", json!({"file_path": abs(&path)}));
    assert_eq!(
        ws.ok("Write", json!({"file_path": abs(&path), "content": "replaced"})),
        format!("The file {} has been updated successfully.", path.display())
    );
    assert_eq!(ws.read_to_string("a.txt"), "replaced");
}

#[test]
fn a_written_file_counts_as_read_for_the_next_write() {
    let ws = Workspace::new();
    let path = ws.path("a.txt");
    ws.ok("Write", json!({"file_path": abs(&path), "content": "v1"}));
    ws.ok("Write", json!({"file_path": abs(&path), "content": "v2"}));
    assert_eq!(ws.read_to_string("a.txt"), "v2");
}

#[test]
fn edit_replaces_a_unique_string() {
    let ws = Workspace::new();
    let path = ws.file("a.rs", "fn main() {\n    println!(\"hi\");\n}\n");
    ws.ok("Read", json!({"file_path": abs(&path)}));
    assert_eq!(
        ws.ok("Edit", json!({"file_path": abs(&path), "old_string": "\"hi\"", "new_string": "\"bye\""})),
        format!("The file {} has been updated successfully.", path.display())
    );
    assert_eq!(ws.read_to_string("a.rs"), "fn main() {\n    println!(\"bye\");\n}\n");
}

#[test]
fn edit_refuses_a_file_that_was_not_read() {
    let ws = Workspace::new();
    let path = ws.file("a.txt", "x");
    assert_eq!(
        ws.err("Edit", json!({"file_path": abs(&path), "old_string": "x", "new_string": "y"})),
        "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>"
    );
}

#[test]
fn edit_of_a_missing_file_names_the_working_directory() {
    let ws = Workspace::new();
    let path = ws.path("missing.txt");
    assert_eq!(
        ws.err("Edit", json!({"file_path": abs(&path), "old_string": "x", "new_string": "y"})),
        missing_file_text(&ws)
    );
}

#[test]
fn edit_with_identical_strings_has_nothing_to_do() {
    let ws = Workspace::new();
    let path = ws.file("a.txt", "x");
    ws.ok("Read", json!({"file_path": abs(&path)}));
    assert_eq!(
        ws.err("Edit", json!({"file_path": abs(&path), "old_string": "x", "new_string": "x"})),
        "<tool_use_error>No changes to make: old_string and new_string are exactly the same.</tool_use_error>"
    );
}

#[test]
fn edit_reports_a_string_that_is_not_in_the_file() {
    let ws = Workspace::new();
    let path = ws.file("a.txt", "hello");
    ws.ok("Read", json!({"file_path": abs(&path)}));
    assert_eq!(
        ws.err("Edit", json!({"file_path": abs(&path), "old_string": "absent", "new_string": "y"})),
        "<tool_use_error>String to replace not found in file.\nString: absent</tool_use_error>"
    );
}

#[test]
fn edit_refuses_an_ambiguous_string_unless_replace_all() {
    let ws = Workspace::new();
    let path = ws.file("a.txt", "foo bar foo baz foo");
    ws.ok("Read", json!({"file_path": abs(&path)}));
    assert_eq!(
        ws.err("Edit", json!({"file_path": abs(&path), "old_string": "foo", "new_string": "qux"})),
        "<tool_use_error>Found 3 matches of the string to replace, but replace_all is false. To replace all occurrences, set replace_all to true. To replace only one occurrence, please provide more context to uniquely identify the instance.\nString: foo</tool_use_error>"
    );
    assert_eq!(ws.read_to_string("a.txt"), "foo bar foo baz foo");
    ws.ok("Edit", json!({"file_path": abs(&path), "old_string": "foo", "new_string": "qux", "replace_all": true}));
    assert_eq!(ws.read_to_string("a.txt"), "qux bar qux baz qux");
}

#[test]
fn edit_with_an_empty_old_string_creates_a_missing_file_but_not_over_an_existing_one() {
    let ws = Workspace::new();
    let path = ws.path("made.txt");
    assert_eq!(
        ws.ok("Edit", json!({"file_path": abs(&path), "old_string": "", "new_string": "fresh"})),
        format!("File created successfully at: {}", path.display())
    );
    assert_eq!(ws.read_to_string("made.txt"), "fresh");
    assert_eq!(
        ws.err("Edit", json!({"file_path": abs(&path), "old_string": "", "new_string": "again"})),
        "<tool_use_error>Cannot create new file - file already exists.</tool_use_error>"
    );
}

#[test]
fn the_read_rule_sees_through_different_spellings_of_the_same_path() {
    let ws = Workspace::new();
    ws.file("dir/a.txt", "x");
    ws.ok("Read", json!({"file_path": "dir/../dir/a.txt"}));
    ws.ok("Edit", json!({"file_path": abs(&ws.path("dir/a.txt")), "old_string": "x", "new_string": "y"}));
    assert_eq!(ws.read_to_string("dir/a.txt"), "y");
}

#[test]
fn read_shows_crlf_lines_without_their_carriage_returns_and_edit_keeps_them() {
    let ws = Workspace::new();
    let path = ws.file("dos.txt", "one\r\ntwo\r\n");
    assert_eq!(ws.ok("Read", json!({"file_path": abs(&path)})), "1\tone\n2\ttwo\n3\t");
    ws.ok("Edit", json!({"file_path": abs(&path), "old_string": "one\ntwo", "new_string": "uno\ndos"}));
    assert_eq!(ws.read_to_string("dos.txt"), "uno\r\ndos\r\n");
}

#[test]
fn edit_refuses_a_file_that_is_not_utf8_rather_than_corrupting_it() {
    let ws = Workspace::new();
    let path = ws.file("latin1.txt", b"caf\xe9\n");
    ws.ok("Read", json!({"file_path": abs(&path)}));
    let out = ws.err("Edit", json!({"file_path": abs(&path), "old_string": "caf", "new_string": "bar"}));
    assert_eq!(
        out,
        format!("<tool_use_error>{} is not valid UTF-8 text and cannot be edited.</tool_use_error>", path.display())
    );
    assert_eq!(std::fs::read(&path).expect("read"), b"caf\xe9\n");
}
