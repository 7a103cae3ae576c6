//! What a successful call did, as data: Claude Code's `tool_use_result`, which its stream-json
//! `user` lines and its transcript carry next to the text the model reads (an SDK app reads it as
//! `UserMessage.tool_use_result`). The shapes are those of Claude Code 2.1.332, the later of the
//! versions recorded (tests/print/recorded/*/tool_results/); a printer drops what an earlier
//! version does not print. Journaled with the outcome, so a replay prints what the live run did.

use serde_json::{json, Value};

/// The text a Bash call that printed nothing answers with.
pub(crate) const BASH_NO_OUTPUT: &str = "(Bash completed with no output)";

/// Commands that print nothing when they succeed: Claude Code marks a call made only of these
/// `noOutputExpected`.
const SILENT_COMMANDS: &[&str] =
    &["mkdir", "touch", "rm", "rmdir", "mv", "cp", "ln", "chmod", "chown", "chgrp", "cd", "export", "true"];

/// A finished Bash call: the two streams arrive as one (the child writes both into one pipe, as
/// Claude Code's does), so `stderr` is always empty.
pub(crate) fn bash(command: &str, text: &str) -> Value {
    let stdout = if text == BASH_NO_OUTPUT { "" } else { text };
    json!({"stdout": stdout, "stderr": "", "interrupted": false, "isImage": false,
           "noOutputExpected": no_output_expected(command)})
}

fn no_output_expected(command: &str) -> bool {
    let parts: Vec<&str> = command.split(['\n', ';', '|', '&']).map(str::trim).filter(|p| !p.is_empty()).collect();
    !parts.is_empty()
        && parts.iter().all(|p| p.split_whitespace().next().is_some_and(|word| SILENT_COMMANDS.contains(&word)))
}

/// A Read of numbered lines (`N\t…`, as the model reads them) starting at line `first` of a file
/// of `total` lines: the text without the numbers.
pub(crate) fn read(file_path: &str, numbered: &[String], first: usize, total: usize) -> Value {
    let lines: Vec<&str> = numbered.iter().map(|l| l.split_once('\t').map_or(l.as_str(), |(_, text)| text)).collect();
    json!({"type": "text", "file": {"filePath": file_path, "content": lines.join("\n"), "numLines": lines.len(),
           "startLine": first, "totalLines": total}})
}

/// A Write: `original` is the file it replaced (`None`: it created one).
pub(crate) fn write(file_path: &str, content: &str, original: Option<&str>) -> Value {
    let (kind, patch) = match original {
        Some(old) => ("update", structured_patch(old, content)),
        None => ("create", Value::Array(Vec::new())),
    };
    json!({"type": kind, "filePath": file_path, "content": content, "structuredPatch": patch,
           "originalFile": original, "userModified": false})
}

/// The strings and flags of an Edit, as the model gave them.
pub(crate) struct EditCall<'a> {
    pub(crate) file_path: &'a str,
    pub(crate) old_string: &'a str,
    pub(crate) new_string: &'a str,
    pub(crate) replace_all: bool,
}

/// An Edit that turned `original` into `edited`; `unread`: the session never read the file, so
/// its content is not in the model's context (2.1.332 says so).
pub(crate) fn edit(call: &EditCall<'_>, original: &str, edited: &str, unread: bool) -> Value {
    let mut out = json!({"filePath": call.file_path, "oldString": call.old_string, "newString": call.new_string,
                         "originalFile": original, "structuredPatch": structured_patch(original, edited),
                         "userModified": false, "replaceAll": call.replace_all});
    if unread {
        out["contentNotInModelContext"] = json!(true);
    }
    out
}

/// A Glob's answer: its files as listed (the text, one a line), and how long the search took.
pub(crate) fn glob(text: &str, truncated: bool, total: usize, duration_ms: u64) -> Value {
    let filenames: Vec<&str> = if total == 0 { Vec::new() } else { text.lines().take(total).collect() };
    json!({"filenames": filenames, "durationMs": duration_ms, "numFiles": filenames.len(), "truncated": truncated,
           "totalMatches": total, "countIsComplete": true})
}

/// A Grep's answer in each output mode, read from its text (`Found N files\n…`, the matching
/// lines, or `path:count` lines and their total).
pub(crate) fn grep(mode: &str, text: &str) -> Value {
    let body = text.split("\n\n[Showing results with pagination").next().unwrap_or_default();
    match mode {
        "content" => {
            let lines = if body == "No matches found" || body.is_empty() { 0 } else { body.lines().count() };
            json!({"mode": "content", "numFiles": 0, "filenames": [], "content": body, "numLines": lines,
                   "totalLines": lines})
        }
        "count" => {
            let (counts, total) = body.split_once("\n\nFound ").unwrap_or((body, ""));
            let matches: u64 = total.split_whitespace().next().and_then(|n| n.parse().ok()).unwrap_or(0);
            let files = if total.is_empty() { 0 } else { counts.lines().count() };
            json!({"mode": "count", "numFiles": files, "filenames": [], "content": counts, "numMatches": matches})
        }
        _ => {
            let filenames: Vec<&str> = body.lines().skip(1).collect();
            let filenames = if body.starts_with("Found ") { filenames } else { Vec::new() };
            json!({"mode": "files_with_matches", "filenames": filenames, "numFiles": filenames.len(),
                   "totalFiles": filenames.len()})
        }
    }
}

/// The change from `old` to `new` as jsdiff's `structuredPatch` gives its hunks (three lines of
/// context, 1-based starts, each line marked ` `, `-` or `+`), as Claude Code records them.
pub(crate) fn structured_patch(old: &str, new: &str) -> Value {
    let diff = similar::TextDiff::from_lines(old, new);
    let hunks: Vec<Value> = diff
        .grouped_ops(3)
        .iter()
        .filter_map(|group| {
            let (first, last) = (group.first()?, group.last()?);
            let (old_range, new_range) =
                (first.old_range().start..last.old_range().end, first.new_range().start..last.new_range().end);
            let lines: Vec<String> = group
                .iter()
                .flat_map(|op| diff.iter_changes(op))
                .map(|change| {
                    let mark = match change.tag() {
                        similar::ChangeTag::Equal => ' ',
                        similar::ChangeTag::Delete => '-',
                        similar::ChangeTag::Insert => '+',
                    };
                    format!("{mark}{}", change.value().trim_end_matches('\n'))
                })
                .collect();
            Some(json!({"oldStart": old_range.start + 1, "oldLines": old_range.len(),
                        "newStart": new_range.start + 1, "newLines": new_range.len(), "lines": lines}))
        })
        .collect();
    Value::Array(hunks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_patch_reads_as_the_recorded_edits() {
        // tests/print/recorded/*/tool_results/success: Edit, then Write over the edited file.
        assert_eq!(
            structured_patch("alpha\nbeta\ngamma\n", "alpha\nBETA\ngamma\n"),
            json!([{"oldStart": 1, "oldLines": 3, "newStart": 1, "newLines": 3,
                    "lines": [" alpha", "-beta", "+BETA", " gamma"]}])
        );
        assert_eq!(
            structured_patch("alpha\nBETA\ngamma\n", "one\ntwo\n"),
            json!([{"oldStart": 1, "oldLines": 3, "newStart": 1, "newLines": 2,
                    "lines": ["-alpha", "-BETA", "-gamma", "+one", "+two"]}])
        );
        assert_eq!(structured_patch("same\n", "same\n"), json!([]));
    }

    #[test]
    fn grep_texts_read_back_as_the_recorded_results() {
        assert_eq!(
            grep("files_with_matches", "Found 1 file\nsrc/auth/login.ts"),
            json!({"mode": "files_with_matches", "filenames": ["src/auth/login.ts"], "numFiles": 1, "totalFiles": 1})
        );
        assert_eq!(grep("files_with_matches", "No files found")["numFiles"], 0);
        let count =
            grep("count", "src/auth/login.ts:2\nsrc/auth/logout.ts:1\n\nFound 3 total occurrences across 2 files.");
        assert_eq!(
            count,
            json!({"mode": "count", "numFiles": 2, "filenames": [], "content": "src/auth/login.ts:2\nsrc/auth/logout.ts:1",
                   "numMatches": 3})
        );
        assert_eq!(grep("content", "a:6:x\nb:1:y")["numLines"], 2);
    }

    #[test]
    fn only_commands_that_print_nothing_expect_no_output() {
        assert_eq!(bash("mkdir -p made", BASH_NO_OUTPUT)["noOutputExpected"], true);
        assert_eq!(bash("mkdir -p made", BASH_NO_OUTPUT)["stdout"], "");
        assert_eq!(bash("sleep 2; echo slow", "slow")["noOutputExpected"], false);
        assert_eq!(bash("mkdir a && ls", "x")["noOutputExpected"], false);
    }
}
