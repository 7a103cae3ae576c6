//! `reloop` with no subcommand: Claude Code's print mode, driven here line by line through the
//! CLI with a scripted model (the real Agent SDKs drive it in tests/sdk.rs).

mod common;

use std::io::Write;

use common::{call, json_lines, response, stderr, stdout, text, Workspace};
use serde_json::{json, Value};

/// A cassette file in the workspace's folder.
fn cassette(ws: &Workspace, responses: Vec<Value>) -> String {
    let path = ws.dir.path().join(format!("cassette-{}.json", responses.len()));
    let body = json!({ "responses": responses });
    std::fs::write(&path, body.to_string()).unwrap();
    path.display().to_string()
}

/// Runs the print mode in the workspace with `lines` on stdin (then closed).
fn print_mode(ws: &Workspace, args: &[&str], lines: &[Value]) -> std::process::Output {
    let mut child = ws.command(args).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for line in lines {
        match line {
            // A string stands for a raw line, not a JSON one.
            Value::String(raw) => writeln!(stdin, "{raw}").unwrap(),
            line => writeln!(stdin, "{line}").unwrap(),
        }
    }
    drop(stdin);
    child.wait_with_output().unwrap()
}

fn user(text: &str) -> Value {
    json!({"type": "user", "session_id": "", "message": {"role": "user", "content": text}, "parent_tool_use_id": null})
}

fn stream_args(script: &str) -> Vec<&str> {
    vec!["--output-format", "stream-json", "--verbose", "--input-format", "stream-json", "--script", script]
}

fn of_type<'a>(lines: &'a [Value], kind: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["type"] == kind).collect()
}

#[test]
fn a_prompt_argument_prints_only_the_answer_as_claude_p_does() {
    let ws = Workspace::seed();
    let script = cassette(&ws, vec![response("m1", text("the answer"), "end_turn", 3)]);
    let out = print_mode(&ws, &["-p", "question", "--script", &script], &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "the answer\n");

    let json_out = print_mode(&ws, &["-p", "question", "--script", &script, "--output-format", "json"], &[]);
    let lines = json_lines(&json_out);
    assert_eq!(lines.len(), 1, "json prints the result alone");
    assert_eq!(lines[0]["type"], "result");
    assert_eq!(lines[0]["result"], "the answer");
    assert_eq!(lines[0]["num_turns"], 1);
}

#[test]
fn stream_json_lines_carry_claude_code_s_ids_and_a_replay_reprints_nothing_new() {
    let ws = Workspace::seed();
    let login = ws.cwd().join("src/auth/login.ts").display().to_string();
    let script = cassette(
        &ws,
        vec![
            response("m1", json!([call("toolu_1", "Read", json!({"file_path": login}))]), "tool_use", 5),
            response("m2", text("read it"), "end_turn", 3),
        ],
    );
    let out = print_mode(&ws, &stream_args(&script), &[user("read login")]);
    assert!(out.status.success(), "{}", stderr(&out));
    let lines = json_lines(&out);
    let session = lines[0]["session_id"].as_str().unwrap().to_string();
    assert_eq!(session.len(), 36, "a UUID: {session}");
    let kinds: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["system", "assistant", "user", "assistant", "result"]);
    let uuids: std::collections::HashSet<&str> = lines.iter().map(|l| l["uuid"].as_str().unwrap()).collect();
    assert_eq!(uuids.len(), lines.len(), "every line has its own uuid");
    for line in &lines {
        assert_eq!(line["session_id"], session.as_str());
    }
    let assistant = of_type(&lines, "assistant")[0];
    assert_eq!(assistant["message"]["id"], "m1");
    assert_eq!(assistant["message"]["usage"]["output_tokens"], 5);
    assert_eq!(assistant["parent_tool_use_id"], Value::Null);
    let result = of_type(&lines, "result")[0];
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["num_turns"], 2);
    assert_eq!(result["stop_reason"], "end_turn");
    assert_eq!(result["usage"]["output_tokens"], 8);
    // The default profile's model, with its prices and the limit the profile gives it.
    let usage = &result["modelUsage"]["claude-opus-5-5"];
    assert!(usage["costUSD"].as_f64().unwrap() > 0.0, "{result}");
    assert_eq!(usage["maxOutputTokens"], 128000);
    assert_eq!(usage["contextWindow"], 1000000);

    let replay = ws.reloop(&["replay", &session[..8]]);
    assert!(stdout(&replay).contains("identical"), "{}", stdout(&replay));
}

#[test]
fn messages_after_the_first_are_queries_of_the_same_session_each_with_its_init_and_result() {
    let ws = Workspace::seed();
    let script =
        cassette(&ws, vec![response("m1", text("uno"), "end_turn", 1), response("m2", text("dos"), "end_turn", 1)]);
    let out = print_mode(&ws, &stream_args(&script), &[user("alpha"), user("bravo")]);
    assert!(out.status.success(), "{}", stderr(&out));
    let lines = json_lines(&out);
    let kinds: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["system", "assistant", "result", "system", "assistant", "result"]);
    let results = of_type(&lines, "result");
    assert_eq!(results[0]["result"], "uno");
    assert_eq!(results[1]["result"], "dos");
    assert_eq!(results[0]["session_id"], results[1]["session_id"]);
    let shown = ws.reloop(&["show", "last", "--request", "2"]);
    let request = stdout(&shown);
    let (alpha, uno, bravo) =
        (request.find("alpha").unwrap(), request.find("uno").unwrap(), request.find("bravo").unwrap());
    assert!(alpha < uno && uno < bravo, "the second query carries the first: {request}");
    let why = stdout(&ws.reloop(&["why", "last"]));
    assert!(why.contains("caller: prompt: a new prompt starts the next query: bravo"), "{why}");
}

#[test]
fn control_requests_are_answered_and_bad_lines_are_skipped_with_a_word_on_stderr() {
    let ws = Workspace::seed();
    let script = cassette(&ws, vec![response("m1", text("fine"), "end_turn", 1)]);
    let request = |id: &str, body: Value| json!({"type": "control_request", "request_id": id, "request": body});
    let lines = [
        request("r1", json!({"subtype": "initialize", "hooks": null})),
        Value::String("not a protocol line".into()),
        request("r2", json!({"subtype": "mcp_status"})),
        request("r3", json!({"subtype": "rewind_files", "user_message_id": "x"})),
        request("r4", json!({"subtype": "set_model", "model": "has space"})),
        request("r5", json!({"subtype": "set_permission_mode", "mode": "sideways"})),
        json!({"type": "control_response", "response": {"subtype": "success", "request_id": "nobody"}}),
        user("hello"),
    ];
    let out = print_mode(&ws, &stream_args(&script), &lines);
    assert!(out.status.success(), "{}", stderr(&out));
    let answers: Vec<Value> = json_lines(&out).into_iter().filter(|l| l["type"] == "control_response").collect();
    let by_id = |id: &str| answers.iter().find(|a| a["response"]["request_id"] == id).unwrap()["response"].clone();
    assert_eq!(by_id("r1")["subtype"], "success");
    assert!(by_id("r1")["response"]["pid"].is_u64());
    assert_eq!(by_id("r2")["response"], json!({"mcpServers": []}));
    assert_eq!(by_id("r3")["error"], "Unsupported control request subtype: rewind_files");
    assert_eq!(by_id("r4")["subtype"], "error");
    assert!(by_id("r5")["error"].as_str().unwrap().contains("unknown permission mode"));
    let err = stderr(&out);
    assert!(err.contains("stdin line 2: not JSON"), "{err}");
    assert!(err.contains("a control_response for nobody"), "{err}");
    assert_eq!(of_type(&json_lines(&out), "result")[0]["result"], "fine");
}

/// A session of two queries (`alpha`, `bravo`) on a cassette of `answers` one-word answers:
/// the workspace, the cassette, the lines printed and the session's id.
fn two_queries(answers: usize) -> (Workspace, String, Vec<Value>, String) {
    let ws = Workspace::seed();
    let words = ["one", "two", "three", "four"];
    let responses = (0..answers).map(|i| response(&format!("m{}", i + 1), text(words[i]), "end_turn", 1)).collect();
    let script = cassette(&ws, responses);
    let first = json_lines(&print_mode(&ws, &stream_args(&script), &[user("alpha"), user("bravo")]));
    let parent = first[0]["session_id"].as_str().unwrap().to_string();
    (ws, script, first, parent)
}

#[test]
fn a_fork_session_resume_goes_on_in_a_new_session_and_resume_session_at_forks_at_that_line() {
    let (ws, script, first, parent) = two_queries(4);
    let first_result_uuid = of_type(&first, "result")[0]["uuid"].as_str().unwrap().to_string();

    // --resume --fork-session: a new session whose history is the parent's.
    let fork_id = "7f0c5a52-1e2b-4c1d-9a61-0c8b5d1d2e3f";
    let mut args = stream_args(&script);
    let resume = format!("--resume={}", &parent[..8]);
    args.extend([resume.as_str(), "--fork-session", "--session-id", fork_id]);
    let out = print_mode(&ws, &args, &[user("charlie")]);
    assert!(out.status.success(), "{}", stderr(&out));
    let forked = json_lines(&out);
    assert_eq!(of_type(&forked, "result")[0]["session_id"], fork_id);
    let sessions = stdout(&ws.reloop(&["sessions", "--json"]));
    assert!(sessions.contains(fork_id), "{sessions}");
    let request = stdout(&ws.reloop(&["show", fork_id, "--request", "3"]));
    assert!(request.contains("bravo") && request.contains("charlie"), "{request}");

    // --resume-session-at the first query's result: the second query is not in the new history.
    let mut args = stream_args(&script);
    let resume = format!("--resume={parent}");
    let at = format!("--resume-session-at={first_result_uuid}");
    args.extend([resume.as_str(), at.as_str()]);
    let out = print_mode(&ws, &args, &[user("delta")]);
    assert!(out.status.success(), "{}", stderr(&out));
    let lines = json_lines(&out);
    let at_id = of_type(&lines, "result")[0]["session_id"].as_str().unwrap().to_string();
    assert_ne!(at_id, parent);
    let request = stdout(&ws.reloop(&["show", &at_id, "--request", "2"]));
    assert!(request.contains("alpha") && request.contains("delta") && !request.contains("bravo"), "{request}");

    for id in [parent.as_str(), fork_id, at_id.as_str()] {
        let replay = ws.reloop(&["replay", id]);
        assert!(stdout(&replay).contains("identical"), "{id}: {}", stdout(&replay));
    }
    // A fork's stream replayed is what its own run printed, not the parent's queries before it.
    let kinds = |lines: &[Value]| -> Vec<String> {
        lines.iter().map(|l| format!("{}/{}", l["type"], l["subtype"].as_str().unwrap_or(""))).collect()
    };
    for (id, live) in [(fork_id, &forked), (at_id.as_str(), &lines)] {
        let replayed = json_lines(&ws.reloop(&["replay", id, "--output-format", "stream-json"]));
        assert_eq!(kinds(&replayed), kinds(live), "{id}");
    }
}

#[test]
fn resume_drops_turn_lets_a_truncating_resume_drop_only_the_declared_turn_and_refuses_it_otherwise_as_claude_code_does()
{
    let (ws, script, first, parent) = two_queries(3);
    // The first turn's answer, as the stream showed it; the session file's next line is the
    // second turn's prompt.
    let keep_at = of_type(&first, "assistant")[0]["uuid"].as_str().unwrap().to_string();
    let file = std::fs::read_dir(ws.claude_dir().join("projects"))
        .unwrap()
        .flat_map(|d| std::fs::read_dir(d.unwrap().path()).unwrap())
        .map(|f| f.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy() == format!("{parent}.jsonl"))
        .expect("the session file");
    let entries: Vec<Value> =
        std::fs::read_to_string(file).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let bravo = entries.iter().find(|e| e["type"] == "user" && e["message"]["content"] == "bravo").unwrap();
    let bravo = bravo["uuid"].as_str().unwrap().to_string();
    let sessions = || stdout(&ws.reloop(&["sessions", "--json"])).matches("\"id\"").count();
    let before = sessions();

    let resume = |drops: &str| {
        let mut args = stream_args(&script);
        let (resume, at, drops) = (
            format!("--resume={parent}"),
            format!("--resume-session-at={keep_at}"),
            format!("--resume-drops-turn={drops}"),
        );
        args.extend([resume.as_str(), "--fork-session", at.as_str(), drops.as_str()]);
        print_mode(&ws, &args, &[user("charlie")])
    };
    let other = "9e1d2c3b-4a5f-4e6d-8c7b-6a5f4e3d2c1b";
    for (drops, reason) in [
        (other, "range does not start with the declared turn prompt; first discarded entry ".to_string()),
        ("not-a-uuid", "declared turn id is not a UUID: not-a-uuid".to_string()),
    ] {
        let out = resume(drops);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        let said = format!(
            "Resume rejected by --resume-drops-turn: resuming at {keep_at} would discard entries not attributable to turn {drops}: {reason}"
        );
        assert!(stderr(&out).contains(&said), "{}", stderr(&out));
        let lines = json_lines(&out);
        assert_eq!(lines.len(), 1, "{lines:?}");
        let result = &lines[0];
        assert_eq!(
            (result["subtype"].as_str(), result["is_error"].as_bool()),
            (Some("error_during_execution"), Some(true))
        );
        assert!(result["errors"][0].as_str().unwrap().starts_with(&said), "{result}");
        assert_eq!(sessions(), before, "a refused resume forks nothing");
    }

    // The declared turn is the one dropped: the fork goes on from the first turn.
    let out = resume(&bravo);
    assert!(out.status.success(), "{}", stderr(&out));
    let forked = of_type(&json_lines(&out), "result")[0]["session_id"].as_str().unwrap().to_string();
    let request = stdout(&ws.reloop(&["show", &forked, "--request", "2"]));
    assert!(request.contains("alpha") && request.contains("charlie") && !request.contains("bravo"), "{request}");
}

#[test]
fn flags_reloop_cannot_honour_are_named_once_and_bad_combinations_exit_2() {
    let ws = Workspace::seed();
    let script = cassette(&ws, vec![response("m1", text("ok"), "end_turn", 1)]);
    let out = print_mode(&ws, &["-p", "q", "--script", &script, "--effort", "high", "--betas", "a,b"], &[]);
    assert!(out.status.success());
    let err = stderr(&out);
    assert_eq!(err.matches("--effort is accepted but not honoured").count(), 1, "{err}");
    assert_eq!(err.matches("--betas is accepted but not honoured").count(), 1, "{err}");

    for (args, says) in [
        (vec!["-p", "q", "--session-id", "not-a-uuid"], "not a valid UUID"),
        (vec!["-p", "q", "--fork-session"], "--fork-session goes with --resume"),
        (vec!["--input-format", "stream-json", "--output-format", "text"], "requires --output-format=stream-json"),
        (vec!["-p", "q", "--permission-prompt-tool", "mcp__auth__prompt"], "only over stdio"),
        (vec!["-p", "q", "--no-such-flag"], "--no-such-flag"),
        (vec!["-p", "q", "--json-schema", "{}"], "the root schema must declare type: 'object'"),
    ] {
        let out = print_mode(&ws, &args, &[]);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
    }
    let version = print_mode(&ws, &["-v"], &[]);
    assert!(stdout(&version).starts_with("2.1.197 (Claude Code compatible; reloop "), "{}", stdout(&version));
}

#[test]
fn a_tool_removed_by_the_flags_is_not_offered_to_the_model() {
    let ws = Workspace::seed();
    let script = cassette(&ws, vec![response("m1", text("ok"), "end_turn", 1)]);
    let out = print_mode(
        &ws,
        &["-p", "q", "--script", &script, "--tools", "Read,Grep,Bash", "--disallowedTools", "Bash"],
        &[],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let request: Value = serde_json::from_str(&stdout(&ws.reloop(&["show", "last", "--request", "1"]))).unwrap();
    let offered: Vec<&str> =
        request["body"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(offered, ["Read", "Grep"], "--tools keeps Read, Grep and Bash; --disallowedTools Bash removes Bash");
}

#[test]
fn an_interrupt_ends_the_query_and_the_session_takes_the_next_message() {
    let ws = Workspace::seed();
    // The first answer asks for a slow Bash call; the interrupt lands while it runs.
    let script = cassette(
        &ws,
        vec![
            response("m1", json!([call("toolu_1", "Bash", json!({"command": "sleep 5"}))]), "tool_use", 1),
            response("m2", text("after"), "end_turn", 1),
        ],
    );
    let mut args = stream_args(&script);
    args.extend(["--permission-mode", "bypassPermissions", "--dangerously-allow-root"]);
    let mut child = ws.command(&args).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut reader = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut read_until = |kind: &str| -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let mut line = String::new();
            assert!(std::io::BufRead::read_line(&mut reader, &mut line).unwrap() > 0, "stdout ended: {seen:?}");
            let value: Value = serde_json::from_str(&line).unwrap();
            let done = value["type"] == kind;
            seen.push(value);
            if done {
                return seen;
            }
        }
    };
    writeln!(stdin, "{}", user("run it")).unwrap();
    read_until("assistant");
    std::thread::sleep(std::time::Duration::from_millis(300));
    let started = std::time::Instant::now();
    writeln!(stdin, "{}", json!({"type": "control_request", "request_id": "i1", "request": {"subtype": "interrupt"}}))
        .unwrap();
    let seen = read_until("result");
    assert!(started.elapsed() < std::time::Duration::from_secs(4), "the interrupt stopped the sleeping call");
    let result = seen.last().unwrap();
    assert_eq!(result["subtype"], "error_during_execution");
    assert_eq!(result["terminal_reason"], "aborted_tools");
    assert!(result["errors"].is_array());
    writeln!(stdin, "{}", user("again")).unwrap();
    let seen = read_until("result");
    assert_eq!(seen.last().unwrap()["result"], "after");
    drop(stdin);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "the last query succeeded");
    let replay = ws.reloop(&["replay", "last"]);
    assert!(stdout(&replay).contains("identical"), "{}", stdout(&replay));
}

/// The journal is written beside the loop and a step's lines wait for its commit: however the
/// writer keeps pace, the caller gets every line once, in the order of the steps.
#[test]
fn lines_held_for_the_journals_commits_come_out_in_step_order() {
    let ws = Workspace::seed();
    let turns = 400;
    let mut responses: Vec<Value> = (1..turns)
        .map(|i| {
            let content = json!([call(&format!("toolu_{i}"), "Read", json!({"file_path": "README.md"}))]);
            response(&format!("m{i}"), content, "tool_use", 5)
        })
        .collect();
    responses.push(response("mlast", text("done"), "end_turn", 2));
    let script = cassette(&ws, responses);
    let out = print_mode(
        &ws,
        &["-p", "read it", "--script", &script, "--output-format", "stream-json", "--verbose", "--max-turns", "1000"],
        &[],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let lines = json_lines(&out);
    let calls: Vec<u64> = of_type(&lines, "assistant")
        .iter()
        .filter_map(|l| l["message"]["content"][0]["id"].as_str())
        .filter_map(|id| id.strip_prefix("toolu_")?.parse().ok())
        .collect();
    let results: Vec<u64> = of_type(&lines, "user")
        .iter()
        .filter_map(|l| l["message"]["content"][0]["tool_use_id"].as_str())
        .filter_map(|id| id.strip_prefix("toolu_")?.parse().ok())
        .collect();
    let expected: Vec<u64> = (1..turns as u64).collect();
    assert_eq!(calls, expected, "every call once, in order");
    assert_eq!(results, expected, "every result once, in order");
    let result = lines.last().expect("a result line");
    assert_eq!((result["type"].as_str(), result["num_turns"].as_u64()), (Some("result"), Some(turns as u64)));
}
