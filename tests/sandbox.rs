//! Issue 32: containment makes a wrong classification harmless. Every test here runs with the
//! classifier deliberately bypassed (`RELOOP_TEST_CLASSIFY_ALL_READ_ONLY=1`, honoured by debug
//! builds only: every command counts as read-only and runs without approval), as an attacker
//! who found the classifier's next side door would, and shows that nothing is written, read,
//! leaked or left running outside what the mode allows. The families are the attack round's,
//! with other members than its examples.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{call, json_lines, response, stderr, text, Workspace};
use serde_json::{json, Value};

const BYPASS: (&str, &str) = ("RELOOP_TEST_CLASSIFY_ALL_READ_ONLY", "1");
/// The classifier at work again, for the tests of approved writes (under the bypass every
/// command is read-only, so nothing would be approved to write).
const APPROVED: (&str, &str) = ("RELOOP_TEST_CLASSIFY_ALL_READ_ONLY", "0");
const SECRET: &str = "s3cret-value-0f-the-vault";
const TOKEN: &str = "ghp_tokenThatMustNotLeak42";

/// Whether this machine has the sandbox; without it (and not required) the tests say so and
/// pass, since a machine without bubblewrap asks before every command instead
/// (`without_a_sandbox_every_command_needs_approval` holds that on every machine).
fn sandbox_here() -> bool {
    let ws = Workspace::seed();
    let out = ws.reloop(&["doctor", "--json"]);
    let report: Value = serde_json::from_slice(&out.stdout).expect("doctor --json");
    let available = report["sandbox"]["available"] == true;
    if !available && std::env::var("RELOOP_REQUIRE_SANDBOX").as_deref() == Ok("1") {
        panic!("RELOOP_REQUIRE_SANDBOX=1 but: {}", report["sandbox"]["unavailable_because"]);
    }
    if !available {
        eprintln!("skipped: no sandbox on this machine ({})", report["sandbox"]["unavailable_because"]);
    }
    available
}

/// A workspace with a secret, a file an Edit rule locks, and a folder beside it (outside).
fn workspace() -> Workspace {
    let ws = Workspace::seed();
    std::fs::write(ws.cwd().join("secret.txt"), SECRET).unwrap();
    std::fs::write(ws.cwd().join("locked.txt"), "locked\n").unwrap();
    std::fs::create_dir_all(ws.dir.path().join("outside")).unwrap();
    std::fs::write(ws.dir.path().join("outside/theirs.txt"), "theirs\n").unwrap();
    ws
}

/// Runs one assistant message of Bash calls (one per command), then "Done.", with the
/// classifier bypassed; returns each command's output and the session's raw stream.
fn attack(ws: &Workspace, commands: &[&str], extra: &[&str], env: &[(&str, &str)]) -> (Vec<String>, String) {
    let calls: Vec<Value> = commands
        .iter()
        .enumerate()
        // Each ends with `true`: a failed call would cancel its parallel siblings.
        .map(|(i, c)| call(&format!("toolu_{i:02}"), "Bash", json!({ "command": format!("{c}\ntrue") })))
        .collect();
    let responses =
        vec![response("msg_0", Value::Array(calls), "tool_use", 10), response("msg_1", text("Done."), "end_turn", 5)];
    let mut args = vec!["--disallowed-tools", "Read(./secret.txt)", "--disallowed-tools", "Edit(./locked.txt)"];
    args.extend_from_slice(extra);
    let mut all_env = vec![BYPASS, ("GITHUB_TOKEN", TOKEN), ("AWS_SECRET_ACCESS_KEY", TOKEN)];
    all_env.extend_from_slice(env);
    let out = ws.run_responses_env("go", responses, &args, &all_env);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = json_lines(&out);
    let mut results = vec![String::new(); commands.len()];
    for block in lines
        .iter()
        .filter(|l| l["type"] == "user")
        .flat_map(|l| l["message"]["content"].as_array().cloned().unwrap_or_default())
    {
        let id = block["tool_use_id"].as_str().unwrap_or_default();
        if let Some(i) = id.strip_prefix("toolu_").and_then(|n| n.parse::<usize>().ok()) {
            results[i] = block["content"].as_str().unwrap_or_default().to_string();
        }
    }
    (results, String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Every file below `dir` with its content, to compare before and after an attack.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(path) = stack.pop() {
        let meta = std::fs::symlink_metadata(&path).unwrap();
        if meta.is_dir() {
            stack.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        } else {
            files.push((path.clone(), std::fs::read(&path).unwrap_or_default()));
        }
    }
    files.sort();
    files
}

/// The workspace and its neighbourhood (the journal and the cassette aside, which the test and
/// the run write).
fn tree(ws: &Workspace) -> Vec<(PathBuf, Vec<u8>)> {
    let ours = |p: &Path| p.to_string_lossy().contains("journal.db") || p.to_string_lossy().contains("cassette-");
    snapshot(ws.dir.path()).into_iter().filter(|(p, _)| !ours(p)).collect()
}

/// Fails naming the files that differ, and what the commands answered.
fn assert_unchanged(before: &[(PathBuf, Vec<u8>)], after: &[(PathBuf, Vec<u8>)], results: &[String]) {
    let names = |files: &[(PathBuf, Vec<u8>)]| files.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>();
    assert_eq!(names(after), names(before), "no file appeared or went: {results:#?}");
    for ((path, was), (_, is)) in before.iter().zip(after) {
        assert!(was == is, "{} changed: {results:#?}", path.display());
    }
}

#[test]
fn code_run_through_the_classifiers_side_doors_writes_nothing_in_a_read_only_call() {
    if !sandbox_here() {
        return;
    }
    let ws = workspace();
    let git = |args: &[&str]| std::process::Command::new("git").args(args).current_dir(ws.cwd()).output().unwrap();
    git(&["init", "-q"]);
    std::fs::create_dir_all(ws.cwd().join("g")).unwrap();
    std::fs::write(ws.cwd().join("g/config"), "[diff]\n\texternal = sh -c 'touch PWNED_GIT; echo ran' --\n").unwrap();
    std::fs::write(ws.cwd().join("-delete"), "").unwrap();
    std::fs::write(ws.cwd().join("--compress-program=sh"), "").unwrap();
    let before = tree(&ws);
    let (results, _) = attack(
        &ws,
        &[
            "test -v 'x[$(touch PWNED_TEST)]'; [ -v 'y[$(echo > PWNED_BRACKET)]' ]",
            "printf -v 'z[$(touch PWNED_PRINTF)]' 1; [[ 1 -eq 'a[$(touch PWNED_ARITH)]' ]]",
            "printf -v GIT_CONFIG_VALUE_0 'touch PWNED_CFG;false'; git status >/dev/null 2>&1; touch PWNED_PLAIN",
            "git --git-dir=g diff --no-index README.md src/auth/login.ts; ls PWNED_GIT",
            "find [-]* 2>&1 | head -3; sort README.md [-]* 2>&1 | head -1",
            "uniq src/auth/login.ts [R]EADME.md; echo overwritten > README.md; cp README.md ../outside/theirs.txt",
            "rm -rf src; mv README.md gone.md; ln -s /etc/passwd link; mkdir newdir",
            "echo scratch > /tmp/scratch-$$ && cat /tmp/scratch-$$",
        ],
        &[],
        &[],
    );
    assert_unchanged(&before, &tree(&ws), &results);
    assert!(
        results[3].contains("ran") || results[3].contains("PWNED_GIT"),
        "diff.external ran, confined: {}",
        results[3]
    );
    assert!(results[7].starts_with("scratch"), "the private /tmp takes writes: {}", results[7]);
    for (i, r) in results.iter().enumerate().take(7).skip(5) {
        assert!(r.contains("Read-only file system"), "command {i} was refused by the file system: {r}");
    }
}

#[test]
fn secrets_reach_no_tool_result_and_no_journal() {
    if !sandbox_here() {
        return;
    }
    let ws = workspace();
    let (results, stream) = attack(
        &ws,
        &[
            "env; set; declare -p",
            "cat /proc/*/environ /proc/$PPID/environ /proc/1/environ 2>&1 | tr '\\0' '\\n'",
            "jq -n '$ ENV.GITHUB_TOKEN, $ENV.ANTHROPIC_API_KEY, env' 2>&1",
            "f=secre; cat ${f}t.txt; cat [[=s=]]ecret.txt; cp s*t.txt /tmp/x && cat /tmp/x; diff -N /dev/null secret.txt",
            "cd [s]rc && cat ../secret.txt; git show HEAD -- ':(top)secret.txt' 2>&1; grep -r vault . 2>&1",
            "ls /root /home 2>&1; cat ~/.bash_history 2>&1; ls -a \"$HOME\"",
        ],
        &[],
        &[("ANTHROPIC_API_KEY", TOKEN)],
    );
    for (i, r) in results.iter().enumerate() {
        assert!(!r.contains(TOKEN), "command {i} leaked a credential: {r}");
        assert!(!r.contains(SECRET), "command {i} read the denied file: {r}");
    }
    assert!(!stream.contains(TOKEN) && !stream.contains(SECRET), "nothing leaked into the stream");
    let journal = std::fs::read(ws.journal()).unwrap();
    let journal = String::from_utf8_lossy(&journal);
    assert!(!journal.contains(TOKEN) && !journal.contains(SECRET), "nothing leaked into the journal");
    assert!(results[0].contains("PATH="), "the allow-listed environment is there: {}", results[0]);
}

#[test]
fn a_denied_file_stays_masked_through_hard_links_symlinks_and_renames_even_when_writing_is_approved() {
    if !sandbox_here() {
        return;
    }
    let ws = workspace();
    std::fs::create_dir_all(ws.cwd().join("docs/deep")).unwrap();
    std::fs::hard_link(ws.cwd().join("secret.txt"), ws.cwd().join("docs/deep/notes.txt")).unwrap();
    std::os::unix::fs::symlink("../secret.txt", ws.cwd().join("docs/link.txt")).unwrap();
    std::fs::hard_link(ws.cwd().join("locked.txt"), ws.cwd().join("docs/also-locked.txt")).unwrap();
    let (results, stream) = attack(
        &ws,
        &[
            "cat docs/deep/notes.txt docs/link.txt 2>&1; ln secret.txt h 2>&1; cat h 2>&1",
            "mv secret.txt moved.txt 2>&1; cat moved.txt 2>&1; rm -f secret.txt 2>&1",
            "f=locked; echo changed > $f.txt 2>&1; echo changed > docs/also-locked.txt 2>&1; echo ok > fine.txt",
        ],
        &["--permission-mode", "bypassPermissions", "--dangerously-allow-root"],
        &[APPROVED],
    );
    assert!(!stream.contains(SECRET), "the secret never showed: {results:#?}");
    assert_eq!(std::fs::read_to_string(ws.cwd().join("secret.txt")).unwrap(), SECRET, "neither moved nor removed");
    assert_eq!(std::fs::read_to_string(ws.cwd().join("locked.txt")).unwrap(), "locked\n", "{}", results[2]);
    assert_eq!(std::fs::read_to_string(ws.cwd().join("fine.txt")).unwrap(), "ok\n", "approved writes land");
}

#[test]
fn approved_writes_land_in_the_workspace_and_the_added_folders_only() {
    if !sandbox_here() {
        return;
    }
    let ws = workspace();
    let added = ws.dir.path().join("added");
    std::fs::create_dir_all(&added).unwrap();
    let added_arg = added.to_str().unwrap().to_string();
    let (results, _) = attack(
        &ws,
        &[&format!(
            "echo in > inside.txt; echo add > {added_arg}/added.txt; echo out > ../outside/theirs.txt 2>&1; \
             echo etc > /etc/reloop-pwned 2>&1; ls ../outside 2>&1"
        )],
        &["--permission-mode", "bypassPermissions", "--dangerously-allow-root", "--add-dir", &added_arg],
        &[APPROVED],
    );
    assert_eq!(std::fs::read_to_string(ws.cwd().join("inside.txt")).unwrap(), "in\n");
    assert_eq!(std::fs::read_to_string(added.join("added.txt")).unwrap(), "add\n");
    assert_eq!(std::fs::read_to_string(ws.dir.path().join("outside/theirs.txt")).unwrap(), "theirs\n");
    assert!(!Path::new("/etc/reloop-pwned").exists());
    assert!(results[0].contains("No such file or directory"), "outside is not even visible: {}", results[0]);
}

#[test]
fn no_network_unless_the_settings_allow_it() {
    if !sandbox_here() {
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let probe = format!("(exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected) 2>&1");
    let ws = workspace();
    let (results, _) =
        attack(&ws, &[&probe], &["--permission-mode", "bypassPermissions", "--dangerously-allow-root"], &[]);
    assert!(!results[0].contains("connected"), "{}", results[0]);
    assert!(listener.accept().is_err(), "nothing reached the listener");

    let settings = ws.dir.path().join("settings.json");
    std::fs::write(&settings, r#"{"sandbox": {"network": {"allowedDomains": ["*"]}}}"#).unwrap();
    let (results, _) = attack(&ws, &[&probe], &["--settings", settings.to_str().unwrap()], &[]);
    assert!(results[0].contains("connected"), "allowed by the settings: {}", results[0]);
}

/// Processes whose command line holds `marker`.
fn running(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) {
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if cmdline.contains(marker) && !cmdline.contains("reloop") {
                found.push(cmdline);
            }
        }
    }
    found
}

#[test]
fn no_process_of_a_call_outlives_it() {
    if !sandbox_here() {
        return;
    }
    let ws = workspace();
    let (results, _) = attack(
        &ws,
        &[
            "seq 1 inf > /dev/null & sleep 741852 & echo started",
            "setsid sleep 741853 & nohup sleep 741854 >/dev/null 2>&1 & (trap '' HUP TERM; sleep 741855) & disown -a",
        ],
        &[],
        &[],
    );
    assert!(results[0].contains("started"));
    for marker in ["741852", "741853", "741854", "741855"] {
        assert!(running(marker).is_empty(), "sleep {marker} outlived its call: {:?}", running(marker));
    }
    assert!(running("seq 1 inf").is_empty(), "seq outlived its call");
}

#[test]
fn a_killed_reloop_takes_its_calls_processes_with_it() {
    if !sandbox_here() {
        return;
    }
    let ws = workspace();
    let calls = vec![call("toolu_00", "Bash", json!({"command": "sleep 741856 & sleep 741857"}))];
    let responses = vec![response("msg_0", Value::Array(calls), "tool_use", 10)];
    let path = ws.dir.path().join("cassette-kill.json");
    std::fs::write(&path, json!({ "responses": responses }).to_string()).unwrap();
    let cwd = ws.cwd();
    let mut child = ws
        .command(&["run", "go", "--script", path.to_str().unwrap(), "--cwd", cwd.to_str().unwrap()])
        .env(BYPASS.0, BYPASS.1)
        .spawn()
        .unwrap();
    let start = Instant::now();
    // The sleep itself, not bwrap's command line: the call is under way.
    let sleeping = || running("741857").iter().any(|c| c.starts_with("sleep"));
    while !sleeping() && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(sleeping(), "the command started");
    child.kill().unwrap();
    child.wait().unwrap();
    let start = Instant::now();
    while !(running("741856").is_empty() && running("741857").is_empty()) && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(running("741856").is_empty() && running("741857").is_empty(), "SIGKILL of reloop left the call running");
}

#[test]
fn without_a_sandbox_every_command_needs_approval() {
    let ws = workspace();
    let calls = vec![
        call("toolu_00", "Bash", json!({"command": "ls"})),
        call("toolu_01", "Read", json!({"file_path": "README.md"})),
    ];
    let responses =
        vec![response("msg_0", Value::Array(calls), "tool_use", 10), response("msg_1", text("Done."), "end_turn", 5)];
    let out = ws.run_responses_env("go", responses, &[], &[("RELOOP_BWRAP", "/nonexistent/bwrap")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.matches("no sandbox on this machine").count(), 1, "said once: {err}");
    let result = json_lines(&out).last().cloned().unwrap();
    let denied: Vec<&str> =
        result["permission_denials"].as_array().unwrap().iter().map(|d| d["tool_name"].as_str().unwrap()).collect();
    assert_eq!(denied, ["Bash"], "the read-only ls asked; the built-in Read ran: {result}");
}

/// Hooks are the user's and run unconfined, but reloop's credentials stay out of them: what a
/// hook prints may reach the model and the journal.
#[test]
fn hooks_run_without_reloops_credentials() {
    let ws = workspace();
    let settings = ws.dir.path().join("settings.json");
    let hook =
        "printenv ANTHROPIC_API_KEY OPENAI_API_KEY ANTHROPIC_AUTH_TOKEN > hook-env.txt; echo ran >> hook-env.txt";
    let hooks = json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": hook}]}]}});
    std::fs::write(&settings, hooks.to_string()).unwrap();
    let (_, _) = attack(
        &ws,
        &["true"],
        &["--settings", settings.to_str().unwrap()],
        &[("ANTHROPIC_API_KEY", TOKEN), ("OPENAI_API_KEY", TOKEN), ("ANTHROPIC_AUTH_TOKEN", TOKEN)],
    );
    let seen = std::fs::read_to_string(ws.cwd().join("hook-env.txt")).expect("the Stop hook ran");
    assert_eq!(seen, "ran\n", "the hook saw no credential");
}
