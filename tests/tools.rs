//! Every built-in tool through the CLI: its happy path and each of its error texts, byte for byte
//! as the model receives them in the `tool_result` blocks of the stream-json `user` lines. Each
//! session completes and replays identical.

mod common;

use common::{call, err, json_lines, ok, response, stderr, text, Workspace};
use serde_json::{json, Value};

/// Runs a session whose model makes one assistant message of calls per entry of `turns`, then
/// says "Done.". Returns the results of each turn, in `tool_use` order, after checking that each
/// turn's results came back in one user message naming the calls in order, that the run
/// completed, that no call was a permission denial, and that the session replays identical.
fn session(ws: &Workspace, turns: Vec<Vec<Value>>, extra: &[&str]) -> Vec<Vec<(String, bool)>> {
    let ids: Vec<Vec<String>> =
        turns.iter().map(|calls| calls.iter().map(|c| c["id"].as_str().unwrap().to_string()).collect()).collect();
    let mut responses: Vec<Value> = turns
        .into_iter()
        .enumerate()
        .map(|(i, calls)| response(&format!("msg_{i}"), Value::Array(calls), "tool_use", 10))
        .collect();
    responses.push(response("msg_done", text("Done."), "end_turn", 5));
    let out = ws.run_responses("go", responses, extra);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = json_lines(&out);
    let result = lines.last().unwrap();
    assert_eq!(result["terminal_reason"], "completed", "{result}");
    assert_eq!(result["permission_denials"], json!([]), "{result}");
    let users: Vec<&Value> = lines.iter().filter(|l| l["type"] == "user").collect();
    assert_eq!(users.len(), ids.len(), "one user message per turn of calls");
    let results: Vec<Vec<(String, bool)>> = users
        .iter()
        .zip(&ids)
        .map(|(user, ids)| {
            // A concurrent batch's results go back as they completed: compared in the calls' order.
            let mut blocks = user["message"]["content"].as_array().unwrap().clone();
            blocks.sort_by_key(|b| ids.iter().position(|id| b["tool_use_id"] == id.as_str()));
            let got: Vec<&str> = blocks.iter().map(|b| b["tool_use_id"].as_str().unwrap()).collect();
            assert_eq!(got, *ids, "one result per call");
            blocks
                .iter()
                .map(|b| (b["content"].as_str().unwrap().to_string(), b["is_error"].as_bool().unwrap_or(false)))
                .collect()
        })
        .collect();
    assert!(ws.replays_identical(), "the session replays identical");
    results
}

#[test]
fn read_numbers_lines_from_the_offset_up_to_the_limit() {
    let ws = Workspace::seed();
    let notes = ws.cwd().join("notes.txt");
    std::fs::write(&notes, "one\ntwo\nthree\nfour").unwrap();
    let results = session(
        &ws,
        vec![vec![
            call("toolu_all", "Read", json!({"file_path": notes})),
            call("toolu_window", "Read", json!({"file_path": notes, "offset": 2, "limit": 2})),
            call("toolu_relative", "Read", json!({"file_path": "src/auth/login.ts", "limit": 2})),
        ]],
        &[],
    );
    assert_eq!(
        results,
        vec![vec![
            ok("1\tone\n2\ttwo\n3\tthree\n4\tfour"),
            ok("2\ttwo\n3\tthree"),
            ok("1\texport interface Credentials {\n2\t  username: string;"),
        ]]
    );
}

#[test]
fn read_refuses_a_missing_file_a_directory_and_a_binary_file_and_warns_on_an_empty_one() {
    let ws = Workspace::seed();
    let cwd = ws.cwd();
    std::fs::write(cwd.join("logo.png"), b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap();
    std::fs::write(cwd.join("empty.txt"), "").unwrap();
    let results = session(
        &ws,
        vec![vec![
            call("toolu_missing", "Read", json!({"file_path": cwd.join("nope.txt")})),
            call("toolu_dir", "Read", json!({"file_path": cwd.join("src")})),
            call("toolu_binary", "Read", json!({"file_path": cwd.join("logo.png")})),
            call("toolu_empty", "Read", json!({"file_path": cwd.join("empty.txt")})),
        ]],
        &[],
    );
    assert_eq!(
        results,
        vec![vec![
            err(format!("File does not exist. Note: your current working directory is {}.", cwd.display())),
            err(format!("EISDIR: illegal operation on a directory, read '{}'", cwd.join("src").display())),
            err("This tool cannot read binary files. The file appears to be a binary .png file. Please use appropriate tools for binary file analysis."),
            ok("<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>"),
        ]]
    );
}

#[test]
fn write_creates_a_new_file_but_refuses_an_existing_file_that_was_not_read() {
    let ws = Workspace::seed();
    let (new, readme) = (ws.cwd().join("docs/new.md"), ws.cwd().join("README.md"));
    let results = session(
        &ws,
        vec![vec![
            call("toolu_new", "Write", json!({"file_path": new, "content": "# new\n"})),
            call("toolu_existing", "Write", json!({"file_path": readme, "content": "overwritten\n"})),
        ]],
        // Claude Code 2.1.197's read-first rule (2.1.332 has none: tests/conformance.rs).
        &["--permission-mode", "acceptEdits", "--compat", "claude-code-2.1.197"],
    );
    assert_eq!(
        results,
        vec![vec![
            ok(format!("File created successfully at: {}{}", new.display(), common::WRITTEN_NOTE)),
            err("<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>"),
        ]]
    );
    assert_eq!(std::fs::read_to_string(&new).unwrap(), "# new\n");
    assert_eq!(std::fs::read_to_string(&readme).unwrap(), "# shop\n", "the unread file is untouched");
}

#[test]
fn write_overwrites_a_file_once_it_was_read() {
    let ws = Workspace::seed();
    let readme = ws.cwd().join("README.md");
    let results = session(
        &ws,
        vec![
            vec![call("toolu_read", "Read", json!({"file_path": readme}))],
            vec![call("toolu_write", "Write", json!({"file_path": readme, "content": "# shop v2\n"}))],
        ],
        &["--permission-mode", "acceptEdits"],
    );
    assert_eq!(
        results,
        vec![
            vec![ok("1\t# shop\n2\t")],
            vec![ok(format!("The file {} has been updated successfully.{}", readme.display(), common::WRITTEN_NOTE))]
        ]
    );
    assert_eq!(std::fs::read_to_string(&readme).unwrap(), "# shop v2\n");
}

#[test]
fn edit_needs_a_read_first_then_refuses_zero_or_several_matches_and_replaces_a_unique_one() {
    let ws = Workspace::seed();
    let file = ws.cwd().join("config.txt");
    std::fs::write(&file, "mode = fast\nretries = 3\nmode_note = fast is default\n").unwrap();
    let edit = |id: &str, old: &str, new: &str| {
        call(id, "Edit", json!({"file_path": file, "old_string": old, "new_string": new}))
    };
    let results = session(
        &ws,
        vec![
            vec![edit("toolu_unread", "retries = 3", "retries = 5")],
            vec![call("toolu_read", "Read", json!({"file_path": file}))],
            vec![
                edit("toolu_absent", "timeout = 10", "timeout = 20"),
                edit("toolu_twice", "fast", "slow"),
                edit("toolu_unique", "retries = 3", "retries = 5"),
            ],
        ],
        &["--permission-mode", "acceptEdits", "--compat", "claude-code-2.1.197"],
    );
    assert_eq!(
        results,
        vec![
            vec![err("<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>")],
            vec![ok("1\tmode = fast\n2\tretries = 3\n3\tmode_note = fast is default\n4\t")],
            vec![
                err("<tool_use_error>String to replace not found in file.\nString: timeout = 10</tool_use_error>"),
                err("<tool_use_error>Found 2 matches of the string to replace, but replace_all is false. To replace all occurrences, set replace_all to true. To replace only one occurrence, please provide more context to uniquely identify the instance.\nString: fast</tool_use_error>"),
                ok(format!("The file {} has been updated successfully.{}", file.display(), common::WRITTEN_NOTE)),
            ],
        ]
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mode = fast\nretries = 5\nmode_note = fast is default\n");
}

#[test]
fn glob_lists_matching_files_relative_to_the_workspace() {
    let ws = Workspace::seed();
    std::fs::write(ws.cwd().join("src/auth/session.ts"), "export {};\n").unwrap();
    // Newest first: make login.ts clearly the older file.
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options().write(true).open(ws.cwd().join("src/auth/login.ts")).unwrap().set_modified(old).unwrap();
    let results = session(
        &ws,
        vec![vec![
            call("toolu_ts", "Glob", json!({"pattern": "**/*.ts"})),
            call("toolu_md", "Glob", json!({"pattern": "*.md"})),
            call("toolu_under", "Glob", json!({"pattern": "auth/login.*", "path": "src"})),
            call("toolu_none", "Glob", json!({"pattern": "**/*.py"})),
            call("toolu_bad_dir", "Glob", json!({"pattern": "*", "path": "lib"})),
        ]],
        &[],
    );
    let cwd = ws.cwd();
    assert_eq!(
        results,
        vec![vec![
            ok("src/auth/session.ts\nsrc/auth/login.ts"),
            ok("README.md"),
            ok("src/auth/login.ts"),
            ok("No files found"),
            err(format!(
                "Path does not exist: {}. Note: your current working directory is {}.",
                cwd.join("lib").display(),
                cwd.display()
            )),
        ]]
    );
}

#[test]
fn grep_lists_files_shows_lines_and_counts_matches() {
    let ws = Workspace::seed();
    let results = session(
        &ws,
        vec![vec![
            call("toolu_files", "Grep", json!({"pattern": "MAX_ATTEMPTS"})),
            call("toolu_content", "Grep", json!({"pattern": "MAX_ATTEMPTS", "output_mode": "content"})),
            call("toolu_count", "Grep", json!({"pattern": "MAX_ATTEMPTS", "output_mode": "count"})),
            call("toolu_nothing", "Grep", json!({"pattern": "no such text anywhere"})),
            call("toolu_no_lines", "Grep", json!({"pattern": "no such text anywhere", "output_mode": "content"})),
        ]],
        &[],
    );
    assert_eq!(
        results,
        vec![vec![
            ok("Found 1 file\nsrc/auth/login.ts"),
            ok("src/auth/login.ts:6:const MAX_ATTEMPTS = 5;\nsrc/auth/login.ts:11:  if (tries >= MAX_ATTEMPTS) {"),
            ok("src/auth/login.ts:2\n\nFound 2 total occurrences across 1 file."),
            ok("No files found"),
            ok("No matches found"),
        ]]
    );
}

#[test]
fn bash_reports_output_no_output_a_failing_exit_and_a_timeout() {
    let ws = Workspace::seed();
    let bash = |id: &str, input: Value| call(id, "Bash", input);
    let results = session(
        &ws,
        vec![vec![
            bash("toolu_out", json!({"command": "echo hello; echo to-stderr >&2"})),
            bash("toolu_quiet", json!({"command": "touch made.txt"})),
            bash("toolu_fails", json!({"command": "echo about to fail; exit 3"})),
            bash("toolu_silent_fail", json!({"command": "false"})),
            // Not read-only (the `touch` it never reaches), so not in the batch `false` cancels.
            bash("toolu_slow", json!({"command": "echo started; sleep 30; touch never.txt", "timeout": 300})),
        ]],
        &["--allowed-tools", "Bash"],
    );
    assert_eq!(
        results,
        vec![vec![
            ok("hello\nto-stderr"),
            ok("(Bash completed with no output)"),
            // The default profile's (Claude Code's) order: the code, then the output (flag 30).
            err("Exit code 3\nabout to fail"),
            err("Exit code 1"),
            err("Command timed out after 300ms\nstarted"),
        ]]
    );
    assert!(ws.cwd().join("made.txt").exists(), "the command ran in the workspace");
}

#[test]
fn an_unknown_tool_is_answered_with_an_error_and_nothing_runs() {
    let ws = Workspace::seed();
    let results = session(&ws, vec![vec![call("toolu_x", "Frobnicate", json!({"file_path": "README.md"}))]], &[]);
    assert_eq!(results, vec![vec![err("<tool_use_error>Error: No such tool available: Frobnicate</tool_use_error>")]]);
}

#[test]
fn an_invalid_input_is_answered_with_every_issue_and_the_tool_does_not_run() {
    let ws = Workspace::seed();
    let target = ws.cwd().join("never.txt");
    let results = session(
        &ws,
        vec![vec![
            call("toolu_names", "Read", json!({"path": "README.md"})),
            call("toolu_type", "Read", json!({"file_path": 42})),
            call("toolu_write", "Write", json!({"file_path": target, "content": ["not", "a", "string"]})),
        ]],
        &["--permission-mode", "acceptEdits"],
    );
    assert_eq!(
        results,
        vec![vec![
            err("<tool_use_error>InputValidationError: Read failed due to the following issues:\nThe required parameter `file_path` is missing\nAn unexpected parameter `path` was provided</tool_use_error>"),
            err("<tool_use_error>InputValidationError: Read failed due to the following issue:\nThe parameter `file_path` type is expected as `string` but provided as `number`</tool_use_error>"),
            err("<tool_use_error>InputValidationError: Write failed due to the following issue:\nThe parameter `content` type is expected as `string` but provided as `array`</tool_use_error>"),
        ]]
    );
    assert!(!target.exists(), "an invalid Write writes nothing");
}
