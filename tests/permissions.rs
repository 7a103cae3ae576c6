//! Permissions through the CLI, decided headless: what each mode lets run, the text the model gets
//! for each refusal, and a workspace that `..`, absolute paths and symlinks cannot leave without
//! a rule naming the place. A refused call is an error result, does not run, is listed in the
//! result's `permission_denials`, and the loop goes on.

mod common;

use std::path::PathBuf;

use common::{call, err, json_lines, ok, response, stderr, text, Workspace};
use serde_json::{json, Value};

/// What a session showed: each turn's results in `tool_use` order, and the result line.
struct Run {
    results: Vec<Vec<(String, bool)>>,
    result: Value,
}

impl Run {
    /// `(tool_name, tool_use_id)` of each permission denial.
    fn denied(&self) -> Vec<(String, String)> {
        self.result["permission_denials"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| (d["tool_name"].as_str().unwrap().to_string(), d["tool_use_id"].as_str().unwrap().to_string()))
            .collect()
    }
}

/// Runs one assistant message of calls per entry of `turns`, then "Done.". Checks that the loop
/// went on to the end whatever was refused, and that the session replays identical.
fn session(ws: &Workspace, turns: Vec<Vec<Value>>, extra: &[&str]) -> Run {
    let ids: Vec<Vec<Value>> = turns.iter().map(|calls| calls.iter().map(|c| c["id"].clone()).collect()).collect();
    let mut responses: Vec<Value> = turns
        .into_iter()
        .enumerate()
        .map(|(i, calls)| response(&format!("msg_{i}"), Value::Array(calls), "tool_use", 10))
        .collect();
    let turns = responses.len();
    responses.push(response("msg_done", text("Done."), "end_turn", 5));
    let out = ws.run_responses("go", responses, extra);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = json_lines(&out);
    let result = lines.last().unwrap().clone();
    assert_eq!(result["terminal_reason"], "completed", "{result}");
    assert_eq!(result["result"], "Done.", "the loop went on after every refusal");
    let results: Vec<Vec<(String, bool)>> = lines
        .iter()
        .filter(|l| l["type"] == "user")
        .zip(&ids)
        .map(|(user, ids)| {
            // In the calls' order: a concurrent batch's go back as they completed.
            let mut blocks = user["message"]["content"].as_array().unwrap().clone();
            blocks.sort_by_key(|b| ids.iter().position(|id| *id == b["tool_use_id"]));
            blocks
                .iter()
                .map(|b| (b["content"].as_str().unwrap().to_string(), b["is_error"].as_bool().unwrap_or(false)))
                .collect()
        })
        .collect();
    assert_eq!(results.len(), turns, "one user message of results per turn");
    assert!(ws.replays_identical(), "the session replays identical");
    Run { results, result }
}

fn write_to(path: &std::path::Path) -> String {
    format!("Claude requested permissions to write to {}, but you haven't granted it yet.", path.display())
}

fn read_from(path: &std::path::Path) -> String {
    format!("Claude requested permissions to read from {}, but you haven't granted it yet.", path.display())
}

#[test]
fn default_mode_runs_reads_and_refuses_writes_and_commands_that_are_not_read_only() {
    let ws = Workspace::seed();
    let (new, readme) = (ws.cwd().join("new.txt"), ws.cwd().join("README.md"));
    let write_input = json!({"file_path": new, "content": "hello"});
    let run = session(
        &ws,
        vec![
            vec![call("toolu_read", "Read", json!({"file_path": readme}))],
            vec![
                call("toolu_write", "Write", write_input.clone()),
                call("toolu_edit", "Edit", json!({"file_path": readme, "old_string": "shop", "new_string": "store"})),
                call("toolu_touch", "Bash", json!({"command": "touch made.txt"})),
                call("toolu_ls", "Bash", json!({"command": "ls"})),
            ],
        ],
        &[],
    );
    assert_eq!(
        run.results,
        vec![
            vec![ok("1\t# shop\n2\t")],
            vec![err(write_to(&new)), err(write_to(&readme)), err(touch_needs_approval(&ws)), ok("README.md\nsrc")],
        ]
    );
    assert!(!new.exists(), "the refused Write did not run");
    assert_eq!(std::fs::read_to_string(&readme).unwrap(), "# shop\n", "the refused Edit did not run");
    assert!(!ws.cwd().join("made.txt").exists(), "the refused command did not run");
    assert_eq!(
        run.result["permission_denials"][0],
        json!({"tool_name": "Write", "tool_use_id": "toolu_write", "tool_input": write_input})
    );
    assert_eq!(
        run.denied(),
        [("Write", "toolu_write"), ("Edit", "toolu_edit"), ("Bash", "toolu_touch")]
            .map(|(t, i)| (t.to_string(), i.to_string()))
    );
}

#[test]
fn dont_ask_mode_refuses_outright_what_default_mode_would_ask() {
    let ws = Workspace::seed();
    let new = ws.cwd().join("new.txt");
    let run = session(
        &ws,
        vec![vec![
            call("toolu_write", "Write", json!({"file_path": new, "content": "hello"})),
            call("toolu_touch", "Bash", json!({"command": "touch made.txt"})),
            call("toolu_read", "Read", json!({"file_path": "README.md"})),
        ]],
        &["--permission-mode", "dontAsk"],
    );
    // The session's profile (claude-code-2.1.332 by default) words it as Claude Code does.
    let dont_ask = |tool: &str| reloop_core::profile::DONT_ASK_CLAUDE_CODE.replace("{tool}", tool);
    assert_eq!(run.results, vec![vec![err(dont_ask("Write")), err(dont_ask("Bash")), ok("1\t# shop\n2\t")]]);
    assert!(!new.exists() && !ws.cwd().join("made.txt").exists());
    assert_eq!(run.denied().len(), 2);
}

#[test]
fn a_disallowed_tool_is_not_enabled_even_for_a_read_only_call() {
    let ws = Workspace::seed();
    let run = session(
        &ws,
        vec![
            vec![call("toolu_ls", "Bash", json!({"command": "ls"}))],
            vec![call("toolu_glob", "Glob", json!({"pattern": "*.md"}))],
        ],
        &["--disallowed-tools", "Bash", "--compat", "claude-code-2.1.197"],
    );
    assert_eq!(
        run.results,
        vec![
            vec![err("<tool_use_error>Error: No such tool available: Bash. Bash exists but is not enabled in this context. Use one of the available tools instead.</tool_use_error>")],
            vec![ok("README.md")],
        ]
    );
    // A removed tool is not there to deny: Claude Code lists no permission denial for it.
    assert!(run.denied().is_empty(), "{:?}", run.denied());
}

#[test]
fn plan_mode_runs_only_read_only_tools() {
    let ws = Workspace::seed();
    let readme = ws.cwd().join("README.md");
    let run = session(
        &ws,
        vec![
            vec![
                call("toolu_read", "Read", json!({"file_path": readme})),
                call("toolu_grep", "Grep", json!({"pattern": "shop"})),
                call("toolu_glob", "Glob", json!({"pattern": "*.md"})),
                call("toolu_ls", "Bash", json!({"command": "ls src"})),
            ],
            vec![
                call("toolu_edit", "Edit", json!({"file_path": readme, "old_string": "shop", "new_string": "store"})),
                call("toolu_write", "Write", json!({"file_path": "plan.md", "content": "step 1"})),
                call("toolu_touch", "Bash", json!({"command": "touch made.txt"})),
            ],
        ],
        &["--permission-mode", "plan"],
    );
    let plan = |tool: &str| format!("Permission to use {tool} has been denied because reloop is in plan mode.");
    assert_eq!(
        run.results,
        vec![
            vec![ok("1\t# shop\n2\t"), ok("Found 1 file\nREADME.md"), ok("README.md"), ok("auth")],
            vec![err(plan("Edit")), err(plan("Write")), err(plan("Bash"))],
        ]
    );
    assert_eq!(std::fs::read_to_string(&readme).unwrap(), "# shop\n");
    assert!(!ws.cwd().join("plan.md").exists() && !ws.cwd().join("made.txt").exists());
    assert_eq!(run.denied().len(), 3);
}

#[test]
fn accept_edits_allows_writes_and_edits_inside_the_workspace_but_not_commands() {
    let ws = Workspace::seed();
    let (new, readme) = (ws.cwd().join("notes/new.txt"), ws.cwd().join("README.md"));
    let run = session(
        &ws,
        vec![
            vec![call("toolu_read", "Read", json!({"file_path": readme}))],
            vec![
                call("toolu_write", "Write", json!({"file_path": new, "content": "hello"})),
                call("toolu_edit", "Edit", json!({"file_path": readme, "old_string": "shop", "new_string": "store"})),
                call("toolu_touch", "Bash", json!({"command": "touch made.txt"})),
            ],
        ],
        &["--permission-mode", "acceptEdits"],
    );
    assert_eq!(
        run.results,
        vec![
            vec![ok("1\t# shop\n2\t")],
            vec![
                ok(format!("File created successfully at: {}{}", new.display(), common::WRITTEN_NOTE)),
                ok(format!("The file {} has been updated successfully.{}", readme.display(), common::WRITTEN_NOTE)),
                err(touch_needs_approval(&ws)),
            ],
        ]
    );
    assert_eq!(std::fs::read_to_string(&new).unwrap(), "hello");
    assert_eq!(std::fs::read_to_string(&readme).unwrap(), "# store\n");
    assert!(!ws.cwd().join("made.txt").exists());
    assert_eq!(run.denied(), vec![("Bash".to_string(), "toolu_touch".to_string())]);
}

fn running_as_root() -> bool {
    let out = std::process::Command::new("id").arg("-u").output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim() == "0"
}

#[test]
fn bypass_permissions_is_refused_to_root_unless_dangerously_allowed() {
    let ws = Workspace::seed();
    let touch = || vec![vec![call("toolu_touch", "Bash", json!({"command": "touch made.txt"}))]];
    if running_as_root() {
        let responses = vec![response("msg_0", Value::Array(touch().remove(0)), "tool_use", 10)];
        let out = ws.run_responses("go", responses, &["--permission-mode", "bypassPermissions"]);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(
            stderr(&out).contains(
                "--permission-mode bypassPermissions is refused when running as root: every tool could touch \
                 anything on this machine. Run as another user, or pass --dangerously-allow-root if you mean it."
            ),
            "{}",
            stderr(&out)
        );
        assert!(!ws.cwd().join("made.txt").exists(), "nothing ran");
        let run = session(&ws, touch(), &["--permission-mode", "bypassPermissions", "--dangerously-allow-root"]);
        assert_eq!(run.results, vec![vec![ok("(Bash completed with no output)")]]);
    } else {
        let run = session(&ws, touch(), &["--permission-mode", "bypassPermissions"]);
        assert_eq!(run.results, vec![vec![ok("(Bash completed with no output)")]]);
    }
    assert!(ws.cwd().join("made.txt").exists(), "bypassPermissions ran the command");
}

/// A workspace with a folder beside it holding `secret.txt`, and two symlinks inside the
/// workspace pointing there: `link` to the folder, `secret-link.txt` to the file.
fn with_outside() -> (Workspace, PathBuf) {
    let ws = Workspace::seed();
    let outside = ws.dir.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let outside = std::fs::canonicalize(outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "secret\n").unwrap();
    std::os::unix::fs::symlink(&outside, ws.cwd().join("link")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.txt"), ws.cwd().join("secret-link.txt")).unwrap();
    (ws, outside)
}

/// The names in `dir` and the secret's text, to show nothing outside was created or changed.
fn contents(dir: &std::path::Path) -> (Vec<String>, String) {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    (names, std::fs::read_to_string(dir.join("secret.txt")).unwrap())
}

#[test]
fn paths_leaving_the_workspace_by_dots_absolute_paths_or_symlinks_are_refused() {
    let (ws, outside) = with_outside();
    let secret = outside.join("secret.txt");
    let before = contents(&outside);
    let edit = |id: &str, path: &str| {
        call(id, "Edit", json!({"file_path": path, "old_string": "secret", "new_string": "leaked"}))
    };
    let run = session(
        &ws,
        vec![vec![
            call("toolu_r1", "Read", json!({"file_path": "../outside/secret.txt"})),
            call("toolu_r2", "Read", json!({"file_path": "src/../../outside/secret.txt"})),
            call("toolu_r3", "Read", json!({"file_path": secret})),
            call("toolu_r4", "Read", json!({"file_path": "link/secret.txt"})),
            call("toolu_r5", "Read", json!({"file_path": "secret-link.txt"})),
            call("toolu_g1", "Glob", json!({"pattern": "*", "path": "../outside"})),
            call("toolu_g2", "Glob", json!({"pattern": "*", "path": "link"})),
            call("toolu_s1", "Grep", json!({"pattern": "secret", "path": "src/../../outside"})),
            call("toolu_s2", "Grep", json!({"pattern": "secret", "path": "link"})),
            call("toolu_w1", "Write", json!({"file_path": "../outside/new.txt", "content": "x"})),
            call("toolu_w2", "Write", json!({"file_path": "link/new.txt", "content": "x"})),
            call("toolu_w3", "Write", json!({"file_path": "secret-link.txt", "content": "x"})),
            edit("toolu_e1", "src/../../outside/secret.txt"),
            edit("toolu_e2", "link/secret.txt"),
        ]],
        // acceptEdits: the same writes inside the workspace would run.
        &["--permission-mode", "acceptEdits"],
    );
    assert_eq!(
        run.results,
        vec![vec![
            err(read_from(&secret)),
            err(read_from(&secret)),
            err(read_from(&secret)),
            err(read_from(&secret)),
            err(read_from(&secret)),
            err(read_from(&outside)),
            err(read_from(&outside)),
            err(read_from(&outside)),
            err(read_from(&outside)),
            err(write_to(&outside.join("new.txt"))),
            err(write_to(&outside.join("new.txt"))),
            err(write_to(&secret)),
            err(write_to(&secret)),
            err(write_to(&secret)),
        ]]
    );
    assert_eq!(run.denied().len(), 14);
    assert_eq!(contents(&outside), before, "nothing outside was created or changed");
}

#[test]
fn a_read_rule_naming_the_outside_folder_lets_reads_through_there_and_only_reads() {
    let (ws, outside) = with_outside();
    let before = contents(&outside);
    let rule = format!("Read({}/**)", outside.display());
    let run = session(
        &ws,
        vec![vec![
            call("toolu_r1", "Read", json!({"file_path": "../outside/secret.txt"})),
            call("toolu_r2", "Read", json!({"file_path": "src/../../outside/secret.txt"})),
            call("toolu_r3", "Read", json!({"file_path": "link/secret.txt"})),
            call("toolu_r4", "Read", json!({"file_path": "secret-link.txt"})),
            call("toolu_g1", "Glob", json!({"pattern": "*.txt", "path": outside})),
            call("toolu_s1", "Grep", json!({"pattern": "secret", "path": outside, "output_mode": "count"})),
            call("toolu_w1", "Write", json!({"file_path": "link/new.txt", "content": "x"})),
        ]],
        &["--permission-mode", "acceptEdits", "--allowed-tools", &rule],
    );
    let secret = outside.join("secret.txt");
    assert_eq!(
        run.results,
        vec![vec![
            ok("1\tsecret\n2\t"),
            ok("1\tsecret\n2\t"),
            ok("1\tsecret\n2\t"),
            ok("1\tsecret\n2\t"),
            ok(secret.display().to_string()),
            ok(format!("{}:1\n\nFound 1 total occurrence across 1 file.", secret.display())),
            err(write_to(&outside.join("new.txt"))),
        ]]
    );
    assert_eq!(run.denied(), vec![("Write".to_string(), "toolu_w1".to_string())]);
    assert_eq!(contents(&outside), before, "the Read rule wrote nothing");
}

#[test]
fn an_edit_rule_naming_the_outside_folder_lets_writes_and_edits_through_there() {
    let (ws, outside) = with_outside();
    let rules = format!("Read({0}/**) Edit({0}/**)", outside.display());
    let run = session(
        &ws,
        vec![
            vec![call("toolu_read", "Read", json!({"file_path": "link/secret.txt"}))],
            vec![
                call(
                    "toolu_edit",
                    "Edit",
                    json!({"file_path": "src/../../outside/secret.txt", "old_string": "secret", "new_string": "shared"}),
                ),
                call("toolu_write", "Write", json!({"file_path": "../outside/new.txt", "content": "x"})),
            ],
        ],
        &["--allowed-tools", &rules],
    );
    assert_eq!(
        run.results,
        vec![
            vec![ok("1\tsecret\n2\t")],
            vec![
                ok(format!(
                    "The file {} has been updated successfully.{}",
                    outside.join("secret.txt").display(),
                    common::WRITTEN_NOTE
                )),
                ok(format!(
                    "File created successfully at: {}{}",
                    outside.join("new.txt").display(),
                    common::WRITTEN_NOTE
                )),
            ],
        ]
    );
    assert_eq!(run.denied(), vec![]);
    assert_eq!(std::fs::read_to_string(outside.join("secret.txt")).unwrap(), "shared\n");
    assert_eq!(std::fs::read_to_string(outside.join("new.txt")).unwrap(), "x");
}

#[test]
fn add_dir_widens_the_workspace() {
    let (ws, outside) = with_outside();
    let run = session(
        &ws,
        vec![
            vec![call("toolu_read", "Read", json!({"file_path": "../outside/secret.txt"}))],
            vec![call("toolu_write", "Write", json!({"file_path": "link/new.txt", "content": "x"}))],
        ],
        &["--permission-mode", "acceptEdits", "--add-dir", "../outside"],
    );
    assert_eq!(
        run.results,
        vec![
            vec![ok("1\tsecret\n2\t")],
            vec![ok(format!(
                "File created successfully at: {}{}",
                ws.cwd().join("link/new.txt").display(),
                common::WRITTEN_NOTE
            ))],
        ]
    );
    assert_eq!(run.denied(), vec![]);
    assert_eq!(std::fs::read_to_string(outside.join("new.txt")).unwrap(), "x");
}

/// What the default profile (claude-code-2.1.332) says of `touch made.txt` in the workspace.
fn touch_needs_approval(ws: &Workspace) -> String {
    let cwd = ws.cwd().display().to_string();
    format!(
        "touch in '{cwd}/made.txt' needs approval. The path is inside the working directories for this session ('{cwd}'), and Claude Code asks before a shell command creates, changes or removes files there."
    )
}
