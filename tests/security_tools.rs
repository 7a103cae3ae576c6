//! Issue 10, tool families, through the CLI: a scripted "model" asks for the hostile call and
//! the session refuses or bounds it. Each test uses other members of a family than the issue's
//! examples too, asserts what the model got back, that nothing happened on disk, and that
//! `permission_denials` lists every refused call.

mod common;

use common::{call, json_lines, response, stderr, text, Workspace};
use serde_json::{json, Value};

const NEEDS_APPROVAL: &str = "This command requires approval";
const DENIED_BASH: &str = "Permission to use Bash has been denied.";

/// What a session showed: each call's result by id, the result line, the journal's bytes.
struct Run {
    results: Vec<(String, String, bool)>,
    result: Value,
}

impl Run {
    fn get(&self, id: &str) -> (String, bool) {
        let (_, content, is_error) =
            self.results.iter().find(|(i, _, _)| i == id).unwrap_or_else(|| panic!("no result for {id}"));
        (content.clone(), *is_error)
    }

    /// Ids of the denied calls, sorted: parallel read-only calls may be decided in any order.
    fn denied_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.result["permission_denials"]
            .as_array()
            .expect("permission_denials")
            .iter()
            .map(|d| d["tool_use_id"].as_str().expect("id").to_string())
            .collect();
        ids.sort();
        ids
    }
}

/// One assistant message holding `calls`, then "Done."; checks the loop ran to the end and the
/// session replays identical.
fn session(ws: &Workspace, calls: Vec<Value>, extra: &[&str], env: &[(&str, &str)]) -> Run {
    let responses = vec![
        response("msg_0", Value::Array(calls), "tool_use", 10),
        response("msg_done", text("Done."), "end_turn", 5),
    ];
    let path = ws.dir.path().join("cassette-security.json");
    std::fs::write(&path, json!({ "responses": responses }).to_string()).expect("cassette");
    let cwd = ws.cwd();
    let mut args = vec![
        "run",
        "go",
        "--script",
        path.to_str().expect("utf-8"),
        "--cwd",
        cwd.to_str().expect("utf-8"),
        "--output-format",
        "stream-json",
    ];
    args.extend_from_slice(extra);
    let out = ws.reloop_env(&args, env);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = json_lines(&out);
    let result = lines.last().expect("result line").clone();
    assert_eq!(result["terminal_reason"], "completed", "{result}");
    assert_eq!(result["result"], "Done.", "the loop went on after every refusal");
    let results = lines
        .iter()
        .filter(|l| l["type"] == "user")
        .flat_map(|l| l["message"]["content"].as_array().cloned().unwrap_or_default())
        .map(|b| {
            (
                b["tool_use_id"].as_str().unwrap_or_default().to_string(),
                b["content"].as_str().unwrap_or_default().to_string(),
                b["is_error"].as_bool().unwrap_or(false),
            )
        })
        .collect();
    assert!(ws.replays_identical(), "the session replays identical");
    Run { results, result }
}

fn bash(id: &str, command: &str) -> Value {
    call(id, "Bash", json!({ "command": command }))
}

/// Sorted, to compare with [`Run::denied_ids`].
fn ids(ids: &[&str]) -> Vec<String> {
    let mut ids: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
    ids.sort();
    ids
}

#[test]
fn family_1_read_only_bash_really_only_reads() {
    let ws = Workspace::seed();
    let cwd = ws.cwd();
    std::fs::write(cwd.join("victim.txt"), "precious\n").expect("write");
    std::fs::write(cwd.join("notes.txt"), "b\na\n").expect("write");
    let calls = vec![
        bash("toolu_uniq", "echo pwn | uniq - victim.txt"),
        bash("toolu_sort_abbrev", "sort --outp=out.txt notes.txt"),
        bash("toolu_sort_short", "sort -ruoout.txt notes.txt"),
        bash("toolu_compress", "sort -S 64k --compress-prog=sh notes.txt"),
        bash("toolu_date", "date --se 2001-01-01"),
        bash("toolu_tree", "tree -R -H x ."),
        bash("toolu_find", "find . -fls out.txt"),
        bash("toolu_git", "git diff --ou=out.txt"),
        bash("toolu_file", "file --comp notes.txt"),
        bash("toolu_less", "less --log-f=out.txt notes.txt"),
        bash("toolu_read", "sort -r notes.txt"),
    ];
    let run = session(&ws, calls, &[], &[]);
    let refused = [
        "toolu_uniq",
        "toolu_sort_abbrev",
        "toolu_sort_short",
        "toolu_compress",
        "toolu_date",
        "toolu_tree",
        "toolu_find",
        "toolu_git",
        "toolu_file",
        "toolu_less",
    ];
    for id in refused {
        assert_eq!(run.get(id), (NEEDS_APPROVAL.to_string(), true), "{id}");
    }
    assert_eq!(run.get("toolu_read"), ("b\na".to_string(), false));
    assert_eq!(run.denied_ids(), ids(&refused));
    assert_eq!(std::fs::read_to_string(cwd.join("victim.txt")).expect("read"), "precious\n");
    assert!(!cwd.join("out.txt").exists() && !cwd.join("x").exists(), "nothing was written");
}

#[test]
fn family_2_bash_paths_are_checked_like_reads_and_the_environment_is_not_read() {
    let ws = Workspace::seed();
    std::fs::write(ws.dir.path().join("secret"), "outside\n").expect("write");
    let calls = vec![
        bash("toolu_parent", "cat ../secret"),
        bash("toolu_home", "cat ~/.bashrc"),
        bash("toolu_shadow", "cat /etc/shadow"),
        bash("toolu_find_root", "find / -name x"),
        bash("toolu_environ", "cat /proc/self/environ"),
        bash("toolu_cd", "cd / && ls"),
        bash("toolu_redirect", "head -n 1 < /etc/passwd"),
        bash("toolu_glob", "wc -c ../*"),
        bash("toolu_cd_or", "cd src || cat ../../secret"),
        bash("toolu_grep_etc", "grep -r root /etc"),
        bash("toolu_env", "env"),
        bash("toolu_printenv", "printenv HOME"),
        bash("toolu_jq_env", "jq -n env"),
        bash("toolu_export", "export -p"),
        bash("toolu_inside", "cd src && cat auth/login.ts | wc -l"),
    ];
    let run = session(&ws, calls, &[], &[]);
    let refused = [
        "toolu_parent",
        "toolu_home",
        "toolu_shadow",
        "toolu_find_root",
        "toolu_environ",
        "toolu_cd",
        "toolu_redirect",
        "toolu_glob",
        "toolu_cd_or",
        "toolu_grep_etc",
        "toolu_env",
        "toolu_printenv",
        "toolu_jq_env",
        "toolu_export",
    ];
    for id in refused {
        assert_eq!(run.get(id), (NEEDS_APPROVAL.to_string(), true), "{id}");
    }
    let lines = common::LOGIN_TS.lines().count();
    assert_eq!(run.get("toolu_inside"), (lines.to_string(), false));
    assert_eq!(run.denied_ids(), ids(&refused));
}

#[test]
fn family_3_deny_rules_cover_every_way_to_a_file() {
    let ws = Workspace::seed();
    let cwd = ws.cwd();
    std::fs::write(cwd.join("secret.txt"), "password=hunter2\n").expect("write");
    std::fs::write(cwd.join("notes.md"), "password is in the vault\n").expect("write");
    let settings = ws.dir.path().join("settings.json");
    let body = json!({"permissions": {"deny": ["Read(./secret.txt)", "Edit(./src/**)"]}});
    std::fs::write(&settings, body.to_string()).expect("settings");
    let login = cwd.join("src/auth/login.ts");
    let calls = vec![
        call("toolu_grep", "Grep", json!({"pattern": "hunter2|vault", "output_mode": "content"})),
        call("toolu_grep_files", "Grep", json!({"pattern": "hunter2"})),
        call("toolu_glob", "Glob", json!({"pattern": "*.txt"})),
        bash("toolu_cat", "cat secret.txt"),
        bash("toolu_cat_glob", "cat secr*"),
        bash("toolu_rg", "rg hunter2"),
        bash("toolu_input", "wc -l < ./src/../secret.txt"),
        call("toolu_write", "Write", json!({"file_path": login, "content": "pwned"})),
        bash("toolu_cp", "cp README.md src/auth/login.ts"),
        bash("toolu_redirect", "echo pwned > src/auth/login.ts"),
    ];
    let run = session(&ws, calls, &["--settings", settings.to_str().expect("utf-8")], &[]);
    assert_eq!(run.get("toolu_grep"), ("notes.md:1:password is in the vault".to_string(), false));
    assert_eq!(run.get("toolu_grep_files"), ("No files found".to_string(), false));
    assert_eq!(run.get("toolu_glob"), ("No files found".to_string(), false));
    for id in ["toolu_cat", "toolu_cat_glob", "toolu_rg", "toolu_input", "toolu_cp", "toolu_redirect"] {
        assert_eq!(run.get(id), (DENIED_BASH.to_string(), true), "{id}");
    }
    assert_eq!(run.get("toolu_write"), ("Permission to use Write has been denied.".to_string(), true));
    assert_eq!(
        run.denied_ids(),
        ids(&["toolu_cat", "toolu_cat_glob", "toolu_rg", "toolu_input", "toolu_write", "toolu_cp", "toolu_redirect"])
    );
    assert_eq!(std::fs::read_to_string(&login).expect("read"), common::LOGIN_TS);
}

#[test]
fn family_4_credentials_stay_out_of_tool_processes_unless_kept() {
    let ws = Workspace::seed();
    let settings = ws.dir.path().join("settings.json");
    std::fs::write(&settings, json!({"env": {"MY_SERVICE_TOKEN": "from-settings"}}).to_string()).expect("settings");
    let secrets = [
        ("ANTHROPIC_API_KEY", "sk-ant-SECRET-1"),
        ("ANTHROPIC_AUTH_TOKEN", "SECRET-2"),
        ("OPENAI_API_KEY", "sk-SECRET-3"),
        ("MY_SERVICE_TOKEN", "SECRET-4"),
    ];
    let allow = ["--allowed-tools", "Bash(printenv:*)", "--settings", settings.to_str().expect("utf-8")];
    let run = session(&ws, vec![bash("toolu_env", "printenv"), bash("toolu_path", "printenv PATH")], &allow, &secrets);
    let (env, _) = run.get("toolu_env");
    assert!(env.contains("PATH="), "the command ran: {env}");
    for (name, value) in secrets {
        assert!(!env.contains(value) && !env.contains(&format!("{name}=")), "{name} reached the tool");
    }
    let journal = std::fs::read(ws.journal()).expect("journal");
    for (_, value) in secrets {
        assert!(!journal.windows(value.len()).any(|w| w == value.as_bytes()), "{value} reached the journal");
    }
    // The user may keep one on purpose.
    let ws = Workspace::seed();
    let keep = ["--allowed-tools", "Bash(printenv:*)", "--tool-env-keep", "OPENAI_API_KEY"];
    let run = session(&ws, vec![bash("toolu_kept", "printenv OPENAI_API_KEY")], &keep, &secrets);
    assert_eq!(run.get("toolu_kept"), ("sk-SECRET-3".to_string(), false));
}

#[test]
fn family_5_configuration_that_runs_code_is_protected_even_in_accept_edits() {
    let ws = Workspace::seed();
    let cwd = ws.cwd();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git").args(args).current_dir(&cwd).output().expect("git");
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    git(&["init", "-q"]);
    let config = cwd.join(".git/config");
    // A repository that arrived with a hostile fsmonitor: read-only git must not run it.
    let hostile = format!("[core]\n\tfsmonitor = \"touch {}/PWNED; false\"\n", cwd.display());
    let mut text = std::fs::read_to_string(&config).expect("config");
    text.push_str(&hostile);
    std::fs::write(&config, &text).expect("config");
    let before = text.clone();
    let calls = vec![
        call("toolu_read", "Read", json!({"file_path": config})),
        call(
            "toolu_edit",
            "Edit",
            json!({"file_path": config, "old_string": "[core]", "new_string": "[core]\n\tfsmonitor = \"touch PWNED2; false\""}),
        ),
        call(
            "toolu_hook",
            "Write",
            json!({"file_path": cwd.join(".git/hooks/post-checkout"), "content": "#!/bin/sh\ntouch PWNED3\n"}),
        ),
        call("toolu_rc", "Write", json!({"file_path": cwd.join(".envrc"), "content": "touch PWNED4\n"})),
        call("toolu_settings", "Write", json!({"file_path": cwd.join(".claude/settings.json"), "content": "{}"})),
        call("toolu_ok", "Write", json!({"file_path": cwd.join("src/new.ts"), "content": "export {};\n"})),
        bash("toolu_status", "git status --short"),
    ];
    let run = session(&ws, calls, &["--permission-mode", "acceptEdits"], &[]);
    let write_to = |p: std::path::PathBuf| {
        format!("Claude requested permissions to write to {}, but you haven't granted it yet.", p.display())
    };
    assert_eq!(run.get("toolu_edit"), (write_to(config.clone()), true));
    assert_eq!(run.get("toolu_hook"), (write_to(cwd.join(".git/hooks/post-checkout")), true));
    assert_eq!(run.get("toolu_rc"), (write_to(cwd.join(".envrc")), true));
    assert_eq!(run.get("toolu_settings"), (write_to(cwd.join(".claude/settings.json")), true));
    assert!(!run.get("toolu_ok").1, "an ordinary edit still runs in acceptEdits");
    let (status, is_error) = run.get("toolu_status");
    assert!(!is_error && status.contains("src/"), "git status ran: {status}");
    assert_eq!(run.denied_ids(), ids(&["toolu_edit", "toolu_hook", "toolu_rc", "toolu_settings"]));
    assert_eq!(std::fs::read_to_string(&config).expect("config"), before);
    for marker in ["PWNED", "PWNED2", "PWNED3", "PWNED4"] {
        assert!(!cwd.join(marker).exists(), "{marker}: configured code ran");
    }
}

#[test]
fn family_6_tool_results_are_bounded_with_claude_codes_notes() {
    let ws = Workspace::seed();
    let cwd = ws.cwd();
    std::fs::write(cwd.join("big.log"), "line of the log\n".repeat(30_000)).expect("write");
    std::fs::write(cwd.join("hits.txt"), "hit\n".repeat(5_000)).expect("write");
    let calls = vec![
        bash("toolu_seq", "seq 1 500000"),
        call("toolu_read", "Read", json!({"file_path": cwd.join("big.log")})),
        call("toolu_window", "Read", json!({"file_path": cwd.join("big.log"), "offset": 30_000, "limit": 2})),
        call("toolu_grep", "Grep", json!({"pattern": "hit", "output_mode": "content"})),
    ];
    let run = session(&ws, calls, &[], &[]);
    let (seq, _) = run.get("toolu_seq");
    // Claude Code's cut: the first 30000 characters, then how many lines the rest had.
    let full: String = (1..=500_000).map(|i| format!("{i}\n")).collect();
    let rest_lines = full[30_000..].matches('\n').count() + 1;
    let expected = format!("{}\n\n... [{rest_lines} lines truncated] ...", &full[..30_000]);
    assert!(
        seq == expected,
        "Bash output was not cut as Claude Code cuts it: ends {:?}",
        &seq[seq.len().saturating_sub(80)..]
    );
    assert_eq!(
        run.get("toolu_read"),
        (
            "File content (468.8KB) exceeds maximum allowed size (256KB). Use offset and limit parameters to read \
             specific portions of the file, or search for specific content instead of reading the whole file."
                .to_string(),
            true
        )
    );
    assert_eq!(run.get("toolu_window"), ("30000\tline of the log\n30001\t".to_string(), false));
    let (grep, _) = run.get("toolu_grep");
    assert!(grep.ends_with(&reloop_tools::grep_truncated_note()), "{}", &grep[grep.len() - 200..]);
    assert_eq!(grep.lines().filter(|l| l.starts_with("hits.txt:")).count(), reloop_tools::MAX_GREP_RESULT_LINES);
    assert!(run.denied_ids().is_empty());
}

#[test]
fn family_7_fifos_and_devices_are_refused_without_hanging() {
    let ws = Workspace::seed();
    let cwd = ws.cwd();
    let pipe = cwd.join("pipe");
    assert!(std::process::Command::new("mkfifo").arg(&pipe).status().expect("mkfifo").success());
    std::fs::write(cwd.join("a.txt"), "needle\n").expect("write");
    let started = std::time::Instant::now();
    let calls = vec![
        call("toolu_read", "Read", json!({"file_path": pipe})),
        call("toolu_grep_named", "Grep", json!({"pattern": "x", "path": "pipe"})),
        call("toolu_grep_walk", "Grep", json!({"pattern": "needle"})),
        call("toolu_write", "Write", json!({"file_path": pipe, "content": "x"})),
        call("toolu_dev", "Read", json!({"file_path": "/dev/zero"})),
    ];
    let run = session(&ws, calls, &["--add-dir", "/dev"], &[]);
    assert!(started.elapsed() < std::time::Duration::from_secs(30), "nothing blocked");
    let refusal = |path: &std::path::Path, kind: &str| {
        format!(
            "Error: cannot use '{}': it is {kind}, not a regular file. Only regular files can be read or written.",
            path.display()
        )
    };
    assert_eq!(run.get("toolu_read"), (refusal(&pipe, "a FIFO"), true));
    assert_eq!(run.get("toolu_grep_named"), (refusal(&pipe, "a FIFO"), true));
    assert_eq!(run.get("toolu_grep_walk"), ("Found 1 file\na.txt".to_string(), false));
    assert_eq!(run.get("toolu_dev"), (refusal(std::path::Path::new("/dev/zero"), "a character device"), true));
    // Write of an existing file needs a Read first; the FIFO is refused before that question.
    assert!(run.get("toolu_write").1);
}

#[test]
fn refusals_are_journaled_so_show_why_and_replay_have_them() {
    let ws = Workspace::seed();
    let calls = vec![
        bash("toolu_outside", "cat /etc/shadow"),
        bash("toolu_abbrev", "sort --outp=o README.md"),
        call("toolu_git", "Write", json!({"file_path": ws.cwd().join(".git/config"), "content": "x"})),
        bash("toolu_fine", "wc -l README.md"),
    ];
    let run = session(&ws, calls, &["--permission-mode", "acceptEdits"], &[]);
    assert_eq!(run.denied_ids(), ids(&["toolu_abbrev", "toolu_git", "toolu_outside"]));
    // The conversation rebuilt from the journal holds each refusal as the call's result, and
    // `why` the turn that asked for them.
    let shown = common::stdout(&ws.reloop(&["show", "last"])).replace(ws.cwd().to_str().expect("utf-8"), "[CWD]");
    let conversation = &shown[shown.find("user: go").expect("the prompt")..];
    common::settings().bind(|| {
        insta::assert_snapshot!("security_show_refusals", conversation);
        insta::assert_snapshot!("security_why_refusals", ws.why());
    });
}

#[test]
fn a_hard_link_to_a_file_outside_is_not_written_through_even_in_accept_edits() {
    // The permission check sees the name inside the workspace; the content is shared outside.
    let ws = Workspace::seed();
    let outside = ws.dir.path().join("outside-secret.txt");
    std::fs::write(&outside, "outside content\n").expect("write");
    let linked = ws.cwd().join("linked.txt");
    std::fs::hard_link(&outside, &linked).expect("hard link");
    let responses = vec![
        response("msg_0", json!([call("toolu_read", "Read", json!({"file_path": linked}))]), "tool_use", 10),
        response(
            "msg_1",
            json!([
                call("toolu_write", "Write", json!({"file_path": linked, "content": "pwned\n"})),
                call(
                    "toolu_edit",
                    "Edit",
                    json!({"file_path": linked, "old_string": "outside", "new_string": "pwned"})
                )
            ]),
            "tool_use",
            10,
        ),
        response("msg_done", text("Done."), "end_turn", 5),
    ];
    let out = ws.run_responses_env("go", responses, &["--permission-mode", "acceptEdits"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let refusal = format!(
        "Error: cannot write '{}': it has 2 hard links, so writing it would also change the same file under its \
         other names, which may lie outside the workspace. Write and Edit do not change hard-linked files.",
        linked.display()
    );
    let results: Vec<Value> = json_lines(&out)
        .iter()
        .filter(|l| l["type"] == "user")
        .flat_map(|l| l["message"]["content"].as_array().cloned().unwrap_or_default())
        .collect();
    for id in ["toolu_write", "toolu_edit"] {
        let result = results.iter().find(|b| b["tool_use_id"] == id).unwrap_or_else(|| panic!("no result for {id}"));
        assert_eq!((result["content"].as_str(), result["is_error"].as_bool()), (Some(refusal.as_str()), Some(true)));
    }
    assert_eq!(std::fs::read_to_string(&outside).expect("read"), "outside content\n", "the outside file is unchanged");
    assert!(ws.replays_identical(), "the session replays identical");
}

#[test]
fn a_dangling_symlink_never_gets_a_file_created_through_it_even_when_every_call_is_allowed() {
    // bypassPermissions lets the call through; the tool itself still refuses to create the target.
    let ws = Workspace::seed();
    let target = ws.dir.path().join("planted.txt");
    let link = ws.cwd().join("notes.txt");
    std::os::unix::fs::symlink(&target, &link).expect("symlink");
    let calls = vec![
        call("toolu_write", "Write", json!({"file_path": link, "content": "x"})),
        call("toolu_edit", "Edit", json!({"file_path": link, "old_string": "", "new_string": "x"})),
    ];
    let run = session(&ws, calls, &["--permission-mode", "bypassPermissions", "--dangerously-allow-root"], &[]);
    let refusal = format!(
        "Error: cannot write '{}': it is a symbolic link to '{}', which does not exist. Write and Edit do not \
         create files through symbolic links; use the target's own path.",
        link.display(),
        target.display()
    );
    assert_eq!(run.get("toolu_write"), (refusal.clone(), true));
    assert_eq!(run.get("toolu_edit"), (refusal, true));
    assert!(!target.exists(), "a file was created outside the workspace");
}
