//! Recorded sessions as regression tests: `reloop check` over a folder, and what-if replays
//! under changed rules (`reloop replay --set`).

mod common;

use std::path::Path;

use common::{call, response, stderr, stdout, text, Workspace};
use serde_json::json;

fn corpus() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/journals"))
}

#[test]
fn check_passes_over_the_recorded_corpus_and_writes_a_junit_report() {
    let ws = Workspace::seed();
    let junit = ws.dir.path().join("report.xml");
    let out = ws.reloop(&["check", corpus().to_str().unwrap(), "--junit", junit.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let said = stdout(&out);
    let sessions = std::fs::read_dir(corpus()).unwrap().count();
    assert!(said.ends_with(&format!("{sessions} passed, 0 failed\n")), "{said}");
    assert!(said.contains("ok        ") && said.contains("claude_code_tool_turn.jsonl"), "{said}");
    let xml = std::fs::read_to_string(junit).unwrap();
    assert!(xml.contains(&format!("tests=\"{sessions}\" failures=\"0\"")), "{xml}");
}

#[test]
fn check_fails_naming_a_session_whose_journal_was_changed() {
    let ws = Workspace::seed();
    let folder = ws.dir.path().join("recorded");
    std::fs::create_dir(&folder).unwrap();
    for name in ["scripted_seed.json", "scripted_max_turns.json"] {
        std::fs::copy(corpus().join(name), folder.join(name)).unwrap();
    }
    // A recorded request that today's engine would not make.
    let changed = std::fs::read_to_string(folder.join("scripted_seed.json")).unwrap().replacen(
        "\"max_tokens\": 32000",
        "\"max_tokens\": 31999",
        1,
    );
    std::fs::write(folder.join("scripted_seed.json"), changed).unwrap();
    let junit = ws.dir.path().join("report.xml");
    let out = ws.reloop(&["check", folder.to_str().unwrap(), "--junit", junit.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3), "{}", stdout(&out));
    let said = stdout(&out);
    assert!(said.contains("DIVERGED  ") && said.contains("scripted_seed.json: RELOOP-D001 at step"), "{said}");
    assert!(said.contains("ok        ") && said.contains("scripted_max_turns.json"), "{said}");
    assert!(said.ends_with("1 passed, 1 failed\n"), "{said}");
    assert!(std::fs::read_to_string(junit).unwrap().contains("<failure message=\"RELOOP-D00"));
}

/// What a CI system reads: the report's folders are made, the suite carries its counts, start
/// and duration and each case its time; a divergence's failure says what the journal holds and
/// what today's engine does, and gives a command that, run as written, shows it again; a file
/// that cannot be read is an error (exit 2), not a failure.
#[test]
fn the_junit_report_is_what_ci_systems_read_and_its_command_shows_the_divergence_again() {
    let ws = Workspace::seed();
    let folder = ws.dir.path().join("recorded");
    std::fs::create_dir(&folder).unwrap();
    let changed = std::fs::read_to_string(corpus().join("scripted_seed.json")).unwrap().replacen(
        "\"max_tokens\": 32000",
        "\"max_tokens\": 31999",
        1,
    );
    std::fs::write(folder.join("changed.json"), changed).unwrap();
    std::fs::copy(corpus().join("scripted_max_turns.json"), folder.join("kept.json")).unwrap();
    let out = ws.reloop(&["check", "recorded", "--junit", "reports/agents/check.xml"]);
    assert_eq!(out.status.code(), Some(3), "{}{}", stdout(&out), stderr(&out));
    let xml = std::fs::read_to_string(ws.dir.path().join("reports/agents/check.xml")).unwrap();
    let suite = xml.lines().find(|l| l.starts_with("  <testsuite ")).unwrap();
    assert!(suite.contains("tests=\"2\" failures=\"1\" errors=\"0\" skipped=\"0\" time=\""), "{suite}");
    assert!(regex_like_timestamp(suite), "{suite}");
    assert_eq!(xml.matches("<testcase ").count(), 2, "{xml}");
    assert!(xml.lines().filter(|l| l.contains("<testcase ")).all(|l| l.contains(" time=\"")), "{xml}");
    let failure = xml.split("<failure ").nth(1).unwrap().split("</failure>").next().unwrap();
    assert!(failure.contains("type=\"RELOOP-D001\">RELOOP-D001 at step "), "{failure}");
    assert!(failure.contains("&#10;  - effects") && failure.contains("&#10;  + effects"), "{failure}");
    let command = failure.split("to see it again: ").nth(1).unwrap().replace("&amp;", "&");
    let again = common::hermetic(&mut std::process::Command::new("sh"))
        .args(["-c", &command])
        .current_dir(ws.dir.path())
        .env("PATH", path_with_reloop())
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(3), "{command}: {}{}", stdout(&again), stderr(&again));
    assert!(stdout(&again).contains("RELOOP-D001"), "{}", stdout(&again));

    // A file that is no session: an error of the input, exit 2, `<error>` in the report.
    std::fs::write(folder.join("broken.json"), "{not json").unwrap();
    let out = ws.reloop(&["check", "recorded", "--junit", "reports/check.xml"]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(stdout(&out).contains("ERROR     recorded/broken.json: not a session dump"), "{}", stdout(&out));
    assert!(stdout(&out).ends_with("1 passed, 1 failed, 1 unreadable\n"), "{}", stdout(&out));
    let xml = std::fs::read_to_string(ws.dir.path().join("reports/check.xml")).unwrap();
    assert!(xml.contains("failures=\"1\" errors=\"1\""), "{xml}");
    assert!(xml.contains("<error message=\"not a session dump"), "{xml}");
    let missing = ws.reloop(&["check", "recorded/gone.json"]);
    assert_eq!(missing.status.code(), Some(2), "{}", stdout(&missing));
    assert!(stdout(&missing).starts_with("ERROR     recorded/gone.json: cannot read it"), "{}", stdout(&missing));
}

/// `timestamp="YYYY-MM-DDTHH:MM:SS"`, JUnit's form.
fn regex_like_timestamp(line: &str) -> bool {
    let Some(at) = line.split("timestamp=\"").nth(1).and_then(|t| t.get(..19)) else { return false };
    at.bytes().enumerate().all(|(i, b)| match i {
        4 | 7 => b == b'-',
        10 => b == b'T',
        13 | 16 => b == b':',
        _ => b.is_ascii_digit(),
    })
}

/// PATH with the `reloop` under test first, so a command written for people runs it.
fn path_with_reloop() -> String {
    let bin = Path::new(env!("CARGO_BIN_EXE_reloop")).parent().unwrap().display().to_string();
    format!("{bin}:{}", std::env::var("PATH").unwrap_or_default())
}

/// A journal is checked a session at a time, each replayed as `reloop replay` replays it: one
/// whose recorded digest was changed diverges, one with a row that cannot be read fails naming
/// the step, and the others pass.
#[test]
fn check_replays_every_session_of_a_journal_and_names_each_that_fails() {
    let ws = Workspace::seed();
    for _ in 0..3 {
        assert_eq!(ws.run("检查登录模块", "seed.json", &[]).status.code(), Some(0));
    }
    let journal = ws.journal();
    let out = ws.reloop(&["check", journal.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).ends_with("3 passed, 0 failed\n"), "{}", stdout(&out));

    // Sessions are numbered 1, 2, 3 in the order they were run; a step's key is its session's
    // number times 2^32 plus its seq.
    let conn = rusqlite::Connection::open(&journal).unwrap();
    assert_eq!(conn.execute("UPDATE steps SET digest = digest + 1 WHERE key = (1 << 32) + 4", []).unwrap(), 1);
    assert_eq!(conn.execute("UPDATE steps SET event = '{not json' WHERE key = (3 << 32) + 2", []).unwrap(), 1);
    drop(conn);
    let junit = ws.dir.path().join("report.xml");
    let out = ws.reloop(&["check", journal.to_str().unwrap(), "--junit", junit.to_str().unwrap()]);
    // A row that cannot be read is bad input (exit 2), not a regression.
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    let said = stdout(&out);
    let lines: Vec<&str> = said.lines().collect();
    assert_eq!(lines.len(), 4, "{said}");
    assert!(lines.iter().any(|l| l.starts_with("DIVERGED") && l.contains("RELOOP-D003 at step 4")), "{said}");
    assert!(
        lines.iter().any(|l| l.starts_with("ERROR     ") && l.contains("step 2") && l.contains("cannot be read")),
        "{said}"
    );
    assert!(lines.iter().any(|l| l.starts_with("ok        ") && l.contains("steps identical")), "{said}");
    assert_eq!(lines[3], "1 passed, 1 failed, 1 unreadable");
    let xml = std::fs::read_to_string(junit).unwrap();
    assert!(xml.contains("failures=\"1\" errors=\"1\""), "{xml}");
}

/// Three tool turns, then an answer, recorded under the default profile.
fn three_turns(ws: &Workspace) {
    let glob = |i: u32| {
        response(
            &format!("m{i}"),
            json!([call(&format!("toolu_{i}"), "Glob", json!({"pattern": "*"}))]),
            "tool_use",
            100,
        )
    };
    let out = ws.run_responses(
        "look around",
        vec![glob(1), glob(2), glob(3), response("m4", text("done"), "end_turn", 5)],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn what_if_a_lower_max_turns_names_the_turn_and_the_reason_and_a_higher_budget_changes_nothing() {
    let ws = Workspace::seed();
    three_turns(&ws);
    let out = ws.reloop(&["replay", "last", "--set", "max_turns=2"]);
    assert_eq!(out.status.code(), Some(3));
    let said = stdout(&out);
    assert!(
        said.contains("what-if max_turns=2: at step")
            && said.contains(
                "(turn 2, tool_done) the session would have stopped with max_turns: turn 3 would exceed --max-turns 2"
            ),
        "{said}"
    );
    assert!(said.contains("it was recorded as next_turn"), "{said}");

    let same = ws.reloop(&["replay", "last", "--set", "max_budget_usd=100", "--set", "max_turns=10"]);
    assert_eq!(same.status.code(), Some(0), "{}", stdout(&same));
    assert!(stdout(&same).starts_with("what-if max_budget_usd=100 max_turns=10: no change"), "{}", stdout(&same));

    let json: serde_json::Value =
        serde_json::from_str(&stdout(&ws.reloop(&["replay", "last", "--set", "max_turns=1", "--json"]))).unwrap();
    assert_eq!(json["differs"], true);
    assert_eq!(json["turn"], 1);

    let bad = ws.reloop(&["replay", "last", "--set", "max_tokens=5"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("unknown setting; known: compat"), "{}", stderr(&bad));
}

/// A dump is replayed as it is read, a step at a time: through a pipe too (read once, held),
/// and one cut short is a failed case that says it is not a dump, whatever it replayed first.
#[test]
fn a_dump_is_checked_through_a_pipe_and_a_cut_one_fails_as_not_a_dump() {
    use std::io::Write;
    let ws = Workspace::seed();
    let text = std::fs::read_to_string(corpus().join("scripted_seed.json")).unwrap();
    let mut child = ws
        .command(&["check", "/dev/stdin"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(stdout(&out).contains("/dev/stdin") && stdout(&out).contains("steps identical"), "{}", stdout(&out));

    let cut = ws.dir.path().join("cut.json");
    std::fs::write(&cut, &text[..text.len() * 2 / 3]).unwrap();
    let out = ws.reloop(&["check", cut.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(stdout(&out).starts_with("ERROR     ") && stdout(&out).contains("not a session dump"), "{}", stdout(&out));
}
