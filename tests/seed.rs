//! The seed scenario end to end through the CLI: 检查登录模块 with a cassette.

mod common;

use common::{json_lines, stderr, stdout, Workspace};
use serde_json::Value;

#[test]
fn the_seed_scenario_runs_replays_and_is_explained() {
    let ws = Workspace::seed();
    let out = ws.run("检查登录模块", "seed.json", &["--output-format", "stream-json"]);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let lines = json_lines(&out);

    assert_eq!(lines[0]["type"], "system");
    assert_eq!(lines[0]["subtype"], "init");
    let session = lines[0]["session_id"].as_str().unwrap().to_string();

    // Grep's result, exactly.
    let results: Vec<&Value> = lines.iter().filter(|l| l["type"] == "user").collect();
    assert_eq!(results.len(), 2);
    let grep = &results[0]["message"]["content"][0];
    assert_eq!(grep["type"], "tool_result");
    assert_eq!(grep["tool_use_id"], "toolu_01");
    assert_eq!(grep["content"], "Found 1 file\nsrc/auth/login.ts");

    // Read's result: the file, numbered from 1, with a last numbered empty line.
    let read = results[1]["message"]["content"][0]["content"].as_str().unwrap();
    let expected: String = common::LOGIN_TS
        .split('\n')
        .enumerate()
        .map(|(i, line)| format!("{}\t{line}", i + 1))
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(read, expected);
    assert!(read.starts_with("1\texport interface Credentials {\n2\t  username: string;\n"));

    let result = lines.last().unwrap();
    assert_eq!(result["type"], "result");
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["is_error"], false);
    assert_eq!(result["terminal_reason"], "completed");
    assert_eq!(result["num_turns"], 3);
    assert_eq!(result["session_id"], session.as_str());
    assert!(result["result"].as_str().unwrap().contains("登录模块检查完毕"));

    // Model requests carry 1, 3 and 5 messages.
    let show = ws.reloop(&["show", &session, "--steps", "--json"]);
    assert_eq!(show.status.code(), Some(0), "{}", stderr(&show));
    let steps: Vec<Value> = serde_json::from_str(&stdout(&show)).unwrap();
    let counts: Vec<u64> = steps
        .iter()
        .flat_map(|s| s["effects"].as_array().unwrap().clone())
        .filter(|e| e["effect"] == "call_model")
        .map(|e| e["message_count"].as_u64().unwrap())
        .collect();
    assert_eq!(counts, vec![1, 3, 5]);

    let replay = ws.reloop(&["replay", &session]);
    assert_eq!(replay.status.code(), Some(0), "{}", stderr(&replay));
    assert!(stdout(&replay).starts_with("replayed "), "{}", stdout(&replay));
    assert!(stdout(&replay).trim_end().ends_with("steps: identical"));

    let why = ws.reloop(&["why", "last"]);
    assert_eq!(why.status.code(), Some(0));
    let trace = ws.reloop(&["show", "last", "--steps"]);
    common::settings().bind(|| {
        insta::assert_snapshot!("seed_why", stdout(&why));
        insta::assert_snapshot!("seed_trace", stdout(&trace).replace(ws.cwd().to_str().unwrap(), "[CWD]"));
    });

    let why_json: Vec<Value> = serde_json::from_str(&stdout(&ws.reloop(&["why", "last", "--json"]))).unwrap();
    assert_eq!(why_json.len(), 3);
    for line in &why_json {
        for key in ["seq", "turn", "kind", "reason"] {
            assert!(line.get(key).is_some(), "why --json lacks {key}: {line}");
        }
    }
    assert_eq!(why_json[2]["kind"], "terminal");
    assert_eq!(why_json[2]["reason"], "completed");
}

#[test]
fn max_turns_stops_a_model_that_keeps_asking_for_tools() {
    let ws = Workspace::seed();
    let out = ws.run("list the files", "tools_forever.json", &["--max-turns", "2", "--output-format", "stream-json"]);
    assert_eq!(out.status.code(), Some(1), "stderr: {}", stderr(&out));
    let lines = json_lines(&out);
    let result = lines.last().unwrap();
    assert_eq!(result["subtype"], "error_max_turns");
    assert_eq!(result["terminal_reason"], "max_turns");
    assert_eq!(result["is_error"], true);
    // The tools of the last turn still ran: two tool results, no third request.
    assert_eq!(lines.iter().filter(|l| l["type"] == "user").count(), 2);
    assert_eq!(lines.iter().filter(|l| l["type"] == "assistant").count(), 2);

    let why = ws.reloop(&["why", "last"]);
    let text = stdout(&why);
    assert!(text.contains("stop: max_turns: turn 3 would exceed --max-turns 2"), "{text}");
    common::settings().bind(|| insta::assert_snapshot!("max_turns_why", text));
    assert_eq!(ws.reloop(&["replay", "last"]).status.code(), Some(0));
}

#[test]
fn the_demo_runs_on_a_fresh_machine() {
    let ws = Workspace::seed();
    let out = ws.reloop(&["run", "--demo"]);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("⏺ Grep("), "{text}");
    assert!(text.contains("Found 1 file"), "{text}");
    assert!(text.contains("next_turn: the model asked for Read (toolu_02)"), "{text}");
    assert!(text.contains("reloop replay"), "{text}");
    assert!(text.contains("reloop why"), "{text}");
    assert_eq!(ws.reloop(&["replay", "last"]).status.code(), Some(0));
}

/// The first contact in a repository: the demo keeps its workspace beside the journal (nothing
/// left in the temp dir), `.reloop/` keeps itself out of `git status`, and the demo suggests the
/// README's seven commands on `last`, each of which runs.
#[test]
fn the_demo_in_a_git_repository_leaves_nothing_behind_and_every_command_it_suggests_runs() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, tmp) = (dir.path().join("repo"), dir.path().join("tmp"));
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::create_dir_all(&tmp).unwrap();
    let git = |args: &[&str]| {
        common::hermetic(&mut std::process::Command::new("git")).args(args).current_dir(&repo).output().unwrap()
    };
    assert!(git(&["init", "-q"]).status.success());
    let reloop =
        |args: &[&str]| common::reloop_bin().args(args).current_dir(&repo).env("TMPDIR", &tmp).output().unwrap();
    let out = reloop(&["run", "--demo"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0, "the demo left something in the temp dir");
    assert_eq!(common::stdout(&git(&["status", "--porcelain"])), "", "git status offers reloop's files");
    assert!(repo.join(".reloop/demo/src/auth/login.ts").exists());

    let readme = include_str!("../README.md");
    let block = readme.split("The demo prints the commands").nth(1).unwrap().split("```sh\n").nth(1).unwrap();
    let block = block.split("```").next().unwrap();
    let listed: Vec<&str> = block.lines().map(|l| l.split('#').next().unwrap().trim()).collect();
    let said = stdout(&out);
    let suggested: Vec<&str> =
        said.lines().filter(|l| l.starts_with("  reloop ")).map(|l| l.split('#').next().unwrap().trim()).collect();
    assert_eq!(suggested.len(), listed.len(), "{said}");
    // The README's `diff A B` is this session and the next run's.
    let as_listed: Vec<String> = suggested
        .iter()
        .map(|c| if c.starts_with("reloop diff ") { "reloop diff A B".to_string() } else { c.to_string() })
        .collect();
    assert_eq!(as_listed, listed, "{said}");
    assert_eq!(reloop(&["run", "--demo"]).status.code(), Some(0));
    for command in suggested {
        let args: Vec<&str> = command.split_whitespace().skip(1).collect();
        let ran = reloop(&args);
        let expected: &[i32] = if args[0] == "diff" { &[0, 1] } else { &[0] };
        assert!(ran.status.code().is_some_and(|c| expected.contains(&c)), "{command}: {}", stderr(&ran));
    }
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0, "a second demo left something in the temp dir");
    // `view -o last.html` wrote the page it was asked for; nothing else appears.
    assert_eq!(common::stdout(&git(&["status", "--porcelain"])), "?? last.html\n", "git status offers reloop's files");
}

#[test]
fn text_and_json_formats() {
    let ws = Workspace::seed();
    let out = ws.run("检查登录模块", "seed.json", &["--output-format", "json"]);
    assert_eq!(out.status.code(), Some(0));
    let result: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["usage"]["output_tokens"], 61 + 58 + 196);

    let out = ws.run("检查登录模块", "seed.json", &[]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(text.contains("我先找一下登录模块在哪里。"));
    assert!(text.contains("⏺ Read("));
    assert!(text.contains("  ⎿  Found 1 file … +1 lines"), "{text}");
}

#[test]
fn a_tool_call_cut_by_max_tokens_is_answered_without_running_it() {
    let ws = Workspace::seed();
    let out = ws.run("write x", "max_tokens_in_tool_use.json", &["--output-format", "stream-json"]);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let lines = json_lines(&out);
    let user = lines.iter().find(|l| l["type"] == "user").unwrap();
    let result = &user["message"]["content"][0];
    assert_eq!(result["is_error"], true);
    let raw = r#"{"file_path": "/tmp/x.txt", "content": "a very long"#;
    assert_eq!(
        result["content"],
        format!(
            "<tool_use_error>InputValidationError: Write was called with input that could not be parsed as JSON.\nYou sent (first {n} of {n} bytes): {raw}\nCommon causes: unescaped backslashes in file paths (use / or \\\\), unescaped control characters, or truncated output. Retry with valid JSON.</tool_use_error>",
            n = raw.len()
        )
    );
    assert_eq!(lines.last().unwrap()["terminal_reason"], "completed");
    assert_eq!(ws.reloop(&["replay", "last"]).status.code(), Some(0));
}

#[test]
fn replay_reproduces_the_stream_byte_for_byte_timings_aside() {
    let ws = Workspace::seed();
    for (cassette, format) in
        [("seed.json", "stream-json"), ("tools_forever.json", "stream-json"), ("seed.json", "text")]
    {
        let live = ws.run("检查登录模块", cassette, &["--output-format", format, "--max-turns", "3"]);
        let replayed = ws.reloop(&["replay", "last", "--output-format", format]);
        assert_eq!(replayed.status.code(), Some(0), "{}", stderr(&replayed));
        let strip = |text: String| -> String {
            text.lines()
                .map(|l| match serde_json::from_str::<Value>(l) {
                    Ok(mut v) if v.get("duration_ms").is_some() => {
                        v["duration_ms"] = Value::Null;
                        v.to_string()
                    }
                    _ => l.to_string(),
                })
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert_eq!(strip(stdout(&replayed)), strip(stdout(&live)), "{cassette} as {format}");
    }
}
