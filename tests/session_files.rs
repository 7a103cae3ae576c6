//! A session named by its file: every command that takes a session reads a dump, a `.db`
//! journal or a Claude Code transcript in place, without importing it into the working journal.

mod common;

use std::path::Path;

use common::{stderr, stdout, Workspace};

fn corpus(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/journals").join(name).display().to_string()
}

#[test]
fn the_reading_commands_take_a_dump_a_transcript_or_a_journal_by_its_file_and_import_nothing() {
    let ws = Workspace::seed();
    assert_eq!(ws.run("检查登录模块", "seed.json", &[]).status.code(), Some(0));
    let db = ws.dir.path().join("kept.db");
    std::fs::rename(ws.journal(), &db).unwrap();
    let (dump, transcript, db) =
        (corpus("scripted_seed.json"), corpus("claude_code_tool_turn.jsonl"), db.display().to_string());
    for file in [&dump, &transcript, &db] {
        let replay = ws.reloop(&["replay", file]);
        assert_eq!(replay.status.code(), Some(0), "{file}: {}{}", stdout(&replay), stderr(&replay));
        assert!(stdout(&replay).contains("identical"), "{file}: {}", stdout(&replay));
        for args in [&["why", file.as_str()][..], &["show", file], &["show", file, "--steps"], &["export", file]] {
            let out = ws.reloop(args);
            assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
            assert!(!stdout(&out).is_empty(), "{args:?}");
        }
        let page = ws.dir.path().join("page.html");
        let view = ws.reloop(&["view", file, "-o", page.to_str().unwrap()]);
        assert_eq!(view.status.code(), Some(0), "{file}: {}", stderr(&view));
        assert!(std::fs::read_to_string(&page).unwrap().contains("<html"), "{file}");
        let what_if = ws.reloop(&["replay", file, "--set", "max_turns=1"]);
        assert!(matches!(what_if.status.code(), Some(0 | 3)), "{file}: {}", stderr(&what_if));
    }
    // A dump and itself agree; a dump and a session of the working journal compare too.
    let same = ws.reloop(&["diff", &dump, &dump]);
    assert_eq!(same.status.code(), Some(0), "{}{}", stdout(&same), stderr(&same));
    assert!(!ws.journal().exists(), "a reading command made or filled the working journal");
    assert_eq!(ws.run("检查登录模块", "seed.json", &[]).status.code(), Some(0));
    let mixed = ws.reloop(&["diff", &db, "last"]);
    assert_eq!(mixed.status.code(), Some(0), "{}{}", stdout(&mixed), stderr(&mixed));
    let sessions: serde_json::Value = serde_json::from_str(&stdout(&ws.reloop(&["sessions", "--json"]))).unwrap();
    assert_eq!(sessions.as_array().unwrap().len(), 1, "nothing was imported: {sessions:#}");

    // A file that is no session is bad input.
    let broken = ws.dir.path().join("broken.json");
    std::fs::write(&broken, "{not json").unwrap();
    let out = ws.reloop(&["replay", broken.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("not a session dump"), "{}", stderr(&out));
}

/// A command that goes on from a session (`fork`, `resume`, `compact`) takes its file too: the
/// file's session is read into the working journal once, and the new session is its child.
#[test]
fn a_fork_of_a_dump_or_a_transcript_by_its_file_goes_on_from_it_in_the_working_journal() {
    let ws = Workspace::seed();
    assert_eq!(ws.run("检查登录模块", "seed.json", &[]).status.code(), Some(0));
    let (dump, transcript) = (ws.dir.path().join("kept.json"), ws.dir.path().join("kept.jsonl"));
    for (file, format) in [(&dump, "journal"), (&transcript, "claude-jsonl")] {
        let out = ws.reloop(&["export", "last", "--format", format]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        std::fs::write(file, &out.stdout).unwrap();
    }
    std::fs::remove_file(ws.journal()).unwrap();
    let script = common::cassette_path("fork_answer.json");
    for file in [&dump, &transcript] {
        let file = file.to_str().unwrap();
        // The step that sent the second request, as the file's own steps number it.
        let steps: serde_json::Value =
            serde_json::from_str(&stdout(&ws.reloop(&["show", file, "--steps", "--json"]))).unwrap();
        let at = steps
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["effects"].as_array().unwrap().iter().any(|e| e["effect"] == "call_model" && e["request"] == 2))
            .map(|s| s["seq"].as_u64().unwrap())
            .unwrap()
            .to_string();
        let mut parents = Vec::new();
        for _ in 0..2 {
            let fork = ws.reloop(&[
                "fork",
                file,
                "--at",
                &at,
                "--script",
                script.to_str().unwrap(),
                "--output-format",
                "json",
            ]);
            assert_eq!(fork.status.code(), Some(0), "{file}: {}{}", stdout(&fork), stderr(&fork));
            assert!(stderr(&fork).contains("the new session goes on from it"), "{}", stderr(&fork));
            let result: serde_json::Value = serde_json::from_str(&stdout(&fork)).unwrap();
            assert_eq!(result["result"], "A different ending, from the fork.");
            let sessions: serde_json::Value =
                serde_json::from_str(&stdout(&ws.reloop(&["sessions", "--json"]))).unwrap();
            let row = sessions.as_array().unwrap().iter().find(|s| s["id"] == result["session_id"]).unwrap().clone();
            assert_eq!(row["fork_seq"].to_string(), at, "{file}: {row:#}");
            parents.push(row["parent"].clone());
        }
        assert!(parents[0].is_string(), "{file}: the fork has a parent: {parents:?}");
        assert_eq!(parents[0], parents[1], "{file}: the file's session is read once");
    }
    let sessions: serde_json::Value = serde_json::from_str(&stdout(&ws.reloop(&["sessions", "--json"]))).unwrap();
    assert_eq!(sessions.as_array().unwrap().len(), 6, "two sessions read in and four forks: {sessions:#}");
}

/// `reloop rerun FILE` in a checkout with no journal yet (a CI job): the recording is read from
/// the file, the rerun is journaled in a new working journal, listed as a rerun of it.
#[test]
fn a_dump_reruns_by_its_file_in_a_checkout_with_no_journal() {
    let ws = Workspace::seed();
    let readme = ws.cwd().join("README.md");
    let out = ws.run_responses(
        "look",
        vec![
            common::response(
                "m1",
                serde_json::json!([common::call("toolu_read", "Read", serde_json::json!({"file_path": readme}))]),
                "tool_use",
                10,
            ),
            common::response("m2", common::text("all done"), "end_turn", 5),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let dump = ws.reloop(&["export", "last", "--format", "journal"]);
    std::fs::write(ws.dir.path().join("fix-login.json"), &dump.stdout).unwrap();
    std::fs::remove_file(ws.journal()).unwrap();

    let out = ws.reloop(&["rerun", "fix-login.json", "--cwd", "ws"]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains("2 requests as recorded, identical"), "{}", stdout(&out));
    std::fs::write(&readme, "# store\n").unwrap();
    let out = ws.reloop(&["rerun", "fix-login.json", "--cwd", "ws"]);
    assert_eq!(out.status.code(), Some(3), "{}", stdout(&out));
    assert!(stdout(&out).contains("RELOOP-R001"), "{}", stdout(&out));
    let listed = stdout(&ws.reloop(&["sessions"]));
    assert_eq!(listed.matches("rerun of ").count(), 2, "{listed}");
}
