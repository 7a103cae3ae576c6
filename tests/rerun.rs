//! `reloop rerun`: a recorded session against today's workspace, its model answers taken from
//! the recording, its tools run live.

mod common;

use common::{call, reloop_bin, response, stderr, stdout, text, Workspace};
use serde_json::json;

/// Records a session that reads README.md, runs `touch marker` and answers.
fn record(ws: &Workspace) -> String {
    let readme = ws.cwd().join("README.md");
    let out = ws.run_responses(
        "look",
        vec![
            response("m1", json!([call("toolu_read", "Read", json!({"file_path": readme}))]), "tool_use", 10),
            response("m2", json!([call("toolu_bash", "Bash", json!({"command": "touch marker"}))]), "tool_use", 10),
            response("m3", text("all done"), "end_turn", 5),
        ],
        &["--permission-mode", "bypassPermissions", "--dangerously-allow-root"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let sessions: serde_json::Value = serde_json::from_str(&stdout(&ws.reloop(&["sessions", "--json"]))).unwrap();
    sessions[0]["id"].as_str().unwrap().to_string()
}

#[test]
fn a_rerun_against_an_unchanged_workspace_completes_identically() {
    let ws = Workspace::seed();
    let recorded = record(&ws);
    let out = ws.reloop(&["rerun", &recorded]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains("3 requests as recorded, identical"), "{}", stdout(&out));
    assert!(ws.replays_identical(), "the rerun is a session that replays");
    let view = stdout(&ws.reloop(&["sessions", "--json"]));
    assert!(view.contains(&recorded), "{view}");
}

#[test]
fn after_an_edit_the_rerun_stops_at_the_request_carrying_the_changed_read_and_shows_it() {
    let ws = Workspace::seed();
    let recorded = record(&ws);
    std::fs::write(ws.cwd().join("README.md"), "# store\n").unwrap();
    std::fs::remove_file(ws.cwd().join("marker")).unwrap();
    let out = ws.reloop(&["rerun", &recorded]);
    assert_eq!(out.status.code(), Some(3), "{}", stdout(&out));
    let said = stdout(&out);
    assert!(said.contains("RELOOP-R001: request 2 differs from the recording"), "{said}");
    assert!(said.contains("the result of toolu_read changed"), "{said}");
    assert!(said.contains("  - 1\t# shop") && said.contains("  + 1\t# store"), "{said}");
    assert!(!ws.cwd().join("marker").exists(), "nothing past the divergence ran");
    let diff = ws.reloop(&["diff", &recorded, "last"]);
    assert_eq!(diff.status.code(), Some(1), "the rerun parts from its recording: {}", stdout(&diff));
}

#[test]
fn recorded_tools_are_not_run_again() {
    let ws = Workspace::seed();
    let recorded = record(&ws);
    std::fs::remove_file(ws.cwd().join("marker")).unwrap();
    let out = ws.reloop(&["rerun", &recorded, "--recorded-tools", "Bash"]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    assert!(!ws.cwd().join("marker").exists(), "Bash was answered from the recording, not run");
    let live = ws.reloop(&["rerun", &recorded]);
    assert_eq!(live.status.code(), Some(0), "{}", stdout(&live));
    assert!(ws.cwd().join("marker").exists(), "without --recorded-tools, Bash runs live");
    let bad = ws.reloop(&["rerun", &recorded, "--recorded-tools", "Teleport"]);
    assert_eq!(bad.status.code(), Some(2));
}

/// A session that compacted reruns too: its summary request is the one the recording's history
/// shapes, answered by the recorded summary, and the rerun takes the same steps.
#[test]
fn a_session_that_compacted_reruns_identically_summary_included() {
    let ws = Workspace::seed();
    let readme = ws.cwd().join("README.md");
    let read = |id: &str, used: u64| {
        response(id, json!([call(&format!("toolu_{id}"), "Read", json!({"file_path": readme}))]), "tool_use", used)
    };
    let out = ws.run_responses(
        "look",
        vec![
            read("m1", 10),
            // The context is nearly full after this answer: the core compacts before asking again.
            read("m2", 195_000),
            response("summary", text("<summary>README read twice.</summary>"), "end_turn", 5),
            response("m3", text("all done"), "end_turn", 5),
        ],
        &["--context-window", "200000"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let sessions: serde_json::Value = serde_json::from_str(&stdout(&ws.reloop(&["sessions", "--json"]))).unwrap();
    let recorded = sessions[0]["id"].as_str().unwrap().to_string();
    let why = stdout(&ws.reloop(&["why", &recorded]));
    assert!(why.contains("compacted the history (auto)"), "the recording compacted: {why}");

    let out = ws.reloop(&["rerun", &recorded]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains("4 requests as recorded, identical"), "{}", stdout(&out));
    let sessions: serde_json::Value = serde_json::from_str(&stdout(&ws.reloop(&["sessions", "--json"]))).unwrap();
    let rerun = sessions[1]["id"].as_str().unwrap().to_string();
    let diff = ws.reloop(&["diff", &recorded, &rerun]);
    assert_eq!(diff.status.code(), Some(0), "the rerun takes the recording's steps: {}", stdout(&diff));
}

/// A divergence is the rerun's own verdict: not shown as an API error, and the rerun is listed
/// as a rerun of its recording, not as a fork of it.
#[test]
fn a_rerun_that_parts_says_so_in_its_own_words_and_is_listed_as_a_rerun() {
    let ws = Workspace::seed();
    let recorded = record(&ws);
    std::fs::write(ws.cwd().join("README.md"), "# store\n").unwrap();
    let out = ws.reloop(&["rerun", &recorded]);
    assert_eq!(out.status.code(), Some(3), "{}", stdout(&out));
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert!(!said.contains("API Error"), "{said}");
    assert!(said.contains("the rerun stopped: RELOOP-R001: request 2 differs from the recording"), "{said}");
    assert!(
        said.contains(
            "· rerun diverged: RELOOP-R001 at step 5: message 3 (user), block 1: the result of toolu_read changed"
        ),
        "{said}"
    );
    assert!(said.contains("[rerun_diverged]"), "{said}");
    let listed = stdout(&ws.reloop(&["sessions"]));
    assert!(listed.contains(&format!("rerun of {}", &recorded[..8])), "{listed}");
    assert!(listed.contains("rerun diverged: RELOOP-R001"), "{listed}");
    assert!(!listed.contains("fork of") && !listed.contains("model_error"), "{listed}");
    let listed: serde_json::Value = serde_json::from_str(&stdout(&ws.reloop(&["sessions", "--json"]))).unwrap();
    assert_eq!(listed[0]["rerun_diverged"], serde_json::Value::Null, "the recording completed");
    assert_eq!(
        listed[1]["rerun_diverged"],
        "rerun diverged: RELOOP-R001 at step 5: message 3 (user), block 1: the result of toolu_read changed"
    );
    assert_eq!(listed[1]["terminal_reason"], "model_error", "the journal keeps what it recorded");

    // `why`, `show` and `view` tell it the same way, never as a failed model request.
    let why = stdout(&ws.reloop(&["why", "last"]));
    assert!(
        why.contains("#5    stop: rerun_diverged: RELOOP-R001 at step 5: message 3 (user), block 1: the result of toolu_read changed"),
        "{why}"
    );
    assert!(!why.contains("model request failed") && !why.contains("model_error"), "{why}");
    let why: serde_json::Value = serde_json::from_str(&stdout(&ws.reloop(&["why", "last", "--json"]))).unwrap();
    let stop = why.as_array().unwrap().last().unwrap();
    assert_eq!((&stop["kind"], &stop["reason"]), (&json!("terminal"), &json!("rerun_diverged")), "{stop}");
    assert!(stop["explanation"].as_str().unwrap().starts_with("RELOOP-R001 at step 5: message 3"), "{stop}");
    let show = stdout(&ws.reloop(&["show", "last"]));
    assert!(show.contains("\nterminal: rerun diverged: RELOOP-R001 at step 5: message 3 (user)"), "{show}");
    let shown: serde_json::Value = serde_json::from_str(&stdout(&ws.reloop(&["show", "last", "--json"]))).unwrap();
    assert!(shown["rerun_diverged"].as_str().unwrap().starts_with("rerun diverged: RELOOP-R001 at step 5"), "{shown}");
    let page = ws.dir.path().join("rerun.html");
    let out = ws.reloop(&["view", "last", "-o", page.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let page = std::fs::read_to_string(page).unwrap();
    assert!(page.contains(r#""source":"rerun""#), "the page calls it a rerun of its recording");
    assert!(page.contains(r#""terminal":"rerun diverged: RELOOP-R001 at step 5: message 3 (user)"#), "the page's end");
    assert!(page.contains(r#"rerun ? "rerun of " : "fork of ""#), "the page words a rerun's parent as such");
}

/// A session recorded in one checkout reruns in another (a CI job's): the recorded workspace
/// root in its tool calls and results is today's, a path outside it stays as recorded (and here
/// no longer exists, so that call now fails), and `--map-path` maps such a root too.
#[test]
fn a_session_recorded_in_one_checkout_reruns_in_another_with_its_paths_mapped() {
    let recorded_in = Workspace::seed();
    let notes = recorded_in.dir.path().join("data/notes.txt");
    std::fs::create_dir_all(notes.parent().unwrap()).unwrap();
    std::fs::write(&notes, "remember the login\n").unwrap();
    let readme = recorded_in.cwd().join("README.md");
    let out = recorded_in.run_responses(
        &format!("look at {}", readme.display()),
        vec![
            response("m1", json!([call("toolu_read", "Read", json!({"file_path": readme}))]), "tool_use", 10),
            response("m2", json!([call("toolu_glob", "Glob", json!({"pattern": "*.md"}))]), "tool_use", 10),
            response("m3", json!([call("toolu_notes", "Read", json!({"file_path": notes}))]), "tool_use", 10),
            response("m4", text("all done"), "end_turn", 5),
        ],
        &["--permission-mode", "bypassPermissions", "--dangerously-allow-root"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let dump = recorded_in.reloop(&["export", "last", "--format", "journal"]);
    assert_eq!(dump.status.code(), Some(0), "{}", stderr(&dump));
    let old_data = recorded_in.dir.path().join("data").canonicalize().unwrap();
    drop(recorded_in); // the recording's checkout is gone, as on a CI machine

    let clone = Workspace::seed();
    std::fs::create_dir_all(clone.dir.path().join("data")).unwrap();
    std::fs::write(clone.dir.path().join("data/notes.txt"), "remember the login\n").unwrap();
    std::fs::write(clone.dir.path().join("fix-login.json"), &dump.stdout).unwrap();
    let imported = clone.reloop(&["import", "journal", "fix-login.json"]);
    assert_eq!(imported.status.code(), Some(0), "{}", stderr(&imported));

    let out = clone.reloop(&["rerun", "last", "--cwd", "ws"]);
    assert_eq!(out.status.code(), Some(3), "{}{}", stdout(&out), stderr(&out));
    let said = stdout(&out);
    assert!(said.contains("RELOOP-R002: request 4 differs") && said.contains("the call toolu_notes"), "{said}");

    let map = format!("--map-path={}=data", old_data.display());
    let recorded = stdout(&imported).split_whitespace().nth(4).unwrap().trim_end_matches(':').to_string();
    let out = clone.reloop(&["rerun", &recorded, "--cwd", "ws", &map]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains("4 requests as recorded, identical"), "{}", stdout(&out));
}

/// Two clones on one machine: `rerun` run inside the second, without `--cwd`, reruns in the
/// checkout it is run from, not in the first clone (the recorded directory, which exists too).
#[test]
fn a_rerun_from_inside_a_second_clone_runs_in_that_clone() {
    let ws = Workspace::seed();
    let git = |dir: &std::path::Path| {
        let out = std::process::Command::new("git").args(["init", "-q"]).current_dir(dir).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    git(&ws.cwd());
    let recorded = record(&ws);
    std::fs::remove_file(ws.cwd().join("marker")).unwrap();
    let clone = ws.dir.path().join("clone");
    std::fs::create_dir_all(clone.join("src/auth")).unwrap();
    std::fs::copy(ws.cwd().join("README.md"), clone.join("README.md")).unwrap();
    git(&clone);
    let rerun_in = |dir: &std::path::Path| {
        reloop_bin().args(["rerun", &recorded]).env("RELOOP_JOURNAL", ws.journal()).current_dir(dir).output().unwrap()
    };

    let out = rerun_in(&clone.join("src/auth"));
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains("3 requests as recorded, identical"), "{}", stdout(&out));
    assert!(clone.join("marker").exists(), "the rerun ran in the clone it was run from, at its top level");
    assert!(!ws.cwd().join("marker").exists(), "the first clone was left alone");
    let shown: serde_json::Value = serde_json::from_str(&stdout(&ws.reloop(&["show", "last", "--json"]))).unwrap();
    assert_eq!(shown["run_config"]["cwd"], clone.canonicalize().unwrap().to_str().unwrap());

    // From inside the recorded checkout itself, the rerun runs where it was recorded.
    let out = rerun_in(&ws.cwd().join("src"));
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    assert!(ws.cwd().join("marker").exists(), "run inside the recorded checkout, it reruns there");
}

/// A session recorded in a subdirectory of its checkout (`ws/`) reruns, from anywhere in a
/// second clone, in that clone's `ws/`.
#[test]
fn a_rerun_from_a_second_clone_finds_the_recorded_subdirectory_in_it() {
    let ws = Workspace::seed();
    let git = |dir: &std::path::Path| {
        let out = std::process::Command::new("git").args(["init", "-q"]).current_dir(dir).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    git(ws.dir.path());
    let recorded = record(&ws);
    std::fs::remove_file(ws.cwd().join("marker")).unwrap();
    let clone = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(clone.path().join("ws")).unwrap();
    std::fs::copy(ws.cwd().join("README.md"), clone.path().join("ws/README.md")).unwrap();
    git(clone.path());
    let out =
        reloop_bin().args(["rerun", &recorded]).env("RELOOP_JOURNAL", ws.journal()).current_dir(clone.path()).output();
    let out = out.unwrap();
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    assert!(clone.path().join("ws/marker").exists(), "the rerun ran in the clone's ws/");
    assert!(!ws.cwd().join("marker").exists(), "the first clone was left alone");
}
