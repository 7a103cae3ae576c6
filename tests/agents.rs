//! Subagents as a specification: a scripted parent calls two agents in one message; one reads a
//! file and notes it with Bash, the other hits its max turns. Each child is a session of its own in
//! the same journal, under its parent; one cassette scripts the whole tree; the parent replays
//! identical with its children; a crash inside a child resumes both with no tool run twice.

mod common;

use common::{cassette_path, stderr, stdout, Workspace};
use serde_json::Value;

const READER: &str = "---\nname: reader\ndescription: Reads files and reports what they say\n\
tools: Read, Bash\n---\nYou read the files you are asked about and answer in one line.\n";
const LOOPER: &str = "---\nname: looper\ndescription: Looks around the project without end\n\
tools: Glob\nmaxTurns: 1\n---\nYou look around.\n";

/// A workspace whose project defines the two agents.
fn scene() -> Workspace {
    let ws = Workspace::seed();
    let agents = ws.cwd().join(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(agents.join("reader.md"), READER).unwrap();
    std::fs::write(agents.join("looper.md"), LOOPER).unwrap();
    ws
}

fn run_tree(ws: &Workspace, env: &[(&str, &str)]) -> std::process::Output {
    let (cassette, cwd) = (cassette_path("agents_tree.json"), ws.cwd());
    ws.reloop_env(
        &[
            "run",
            "check the login module with two agents",
            "--script",
            cassette.to_str().unwrap(),
            "--cwd",
            cwd.to_str().unwrap(),
            "--allowed-tools",
            "Bash",
            "--output-format",
            "json",
        ],
        env,
    )
}

fn sessions(ws: &Workspace) -> Vec<Value> {
    let out = ws.reloop(&["sessions", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    serde_json::from_str::<Value>(&stdout(&out)).unwrap().as_array().unwrap().clone()
}

/// Every journaled step of a session.
fn steps(ws: &Workspace, id: &str) -> Vec<Value> {
    let out = ws.reloop(&["export", id, "--format", "journal"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    serde_json::from_str::<Value>(&stdout(&out)).unwrap()["steps"].as_array().unwrap().clone()
}

/// The `tool_done` outcomes of a session, in journal order.
fn outcomes(ws: &Workspace, id: &str) -> Vec<Value> {
    steps(ws, id).into_iter().filter(|s| s["event"]["kind"] == "tool_done").map(|s| s["event"].clone()).collect()
}

/// The child answering `tool_use_id`.
fn child<'a>(all: &'a [Value], tool_use_id: &str) -> &'a Value {
    all.iter()
        .find(|s| s["agent"]["tool_use_id"] == tool_use_id)
        .unwrap_or_else(|| panic!("no child for {tool_use_id}"))
}

fn text_of(outcome: &Value) -> String {
    match &outcome["content"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n"),
        other => other.to_string(),
    }
}

#[test]
fn two_agents_in_one_message_run_as_child_sessions_of_the_same_journal() {
    let ws = scene();
    let out = run_tree(&ws, &[]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let result: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert!(result["result"].as_str().unwrap().contains("ran out of turns"), "{result}");

    let all = sessions(&ws);
    assert_eq!(all.len(), 3, "a parent and two children: {all:#?}");
    let parent = all.iter().find(|s| s["agent"].is_null()).unwrap();
    let parent_id = parent["id"].as_str().unwrap();
    assert_eq!(result["session_id"], parent_id);
    let (reader, looper) = (child(&all, "toolu_agent_reader"), child(&all, "toolu_agent_looper"));
    for (c, kind) in [(reader, "reader"), (looper, "looper")] {
        assert_eq!(c["agent"]["parent"], parent_id);
        assert_eq!(c["agent"]["agent_type"], kind);
        assert_eq!(c["last"], false, "a subagent is never `last`");
    }
    assert_eq!(parent["last"], true);
    assert_eq!(reader["terminal_reason"], "completed");
    assert_eq!(looper["terminal_reason"], "max_turns");

    // The reader read the file and ran its note; its final text is the parent's tool result.
    let reader_done = outcomes(&ws, reader["id"].as_str().unwrap());
    assert!(text_of(&reader_done[0]).contains("verifyPassword"), "{reader_done:?}");
    assert_eq!(std::fs::read_to_string(ws.cwd().join("notes.txt")).unwrap(), "read\n");
    let parent_done = outcomes(&ws, parent_id);
    let answer = |id: &str| parent_done.iter().find(|o| o["tool_use_id"] == id).unwrap().clone();
    let (read_answer, loop_answer) = (answer("toolu_agent_reader"), answer("toolu_agent_looper"));
    // Handed back as the default profile's Claude Code (2.1.332) does: the report indented
    // under the hand-back frame, then the agent's id (from the child's session id).
    let answer_text = text_of(&read_answer);
    assert!(
        answer_text
            .contains("The report follows:\n  login.ts checks only that the user name and password are not empty."),
        "{answer_text}"
    );
    let agent_id = reloop_core::profile::agent_id(reader["id"].as_str().unwrap());
    assert!(
        answer_text.contains(&format!("\nagentId: {agent_id} (use SendMessage with to: '{agent_id}'")),
        "{answer_text}"
    );
    assert_eq!(read_answer["tool_use_result"]["agentId"], agent_id.as_str(), "the child's summary");
    assert!(read_answer.get("is_error").is_none(), "{read_answer}");
    // The other child's max turns end the child, not the parent: a clear error for the model.
    assert_eq!(loop_answer["is_error"], true);
    assert_eq!(
        text_of(&loop_answer),
        "<tool_use_error>Agent 'looper' stopped before it finished (max_turns): it reached its maximum number of turns (1)</tool_use_error>"
    );

    // The children's usage counts toward the parent's: 1200 + 1500 of its own, 400, 380 and 900
    // of theirs.
    assert_eq!(result["usage"]["input_tokens"], 4380, "{result}");
    assert_eq!(read_answer["agent_usage"]["model_usage"].as_object().unwrap().len(), 1, "{read_answer}");

    // They ran together: the looper started while the reader still waited for its first answer
    // (which the cassette delays by 1.5 s, a margin for a loaded machine).
    let (reader_steps, looper_steps) =
        (steps(&ws, reader["id"].as_str().unwrap()), steps(&ws, looper["id"].as_str().unwrap()));
    let reader_answered = reader_steps.iter().find(|s| s["event"]["kind"] == "model_done").unwrap()["at_ms"].as_u64();
    let looper_ended = looper_steps.last().unwrap()["at_ms"].as_u64();
    assert!(looper_ended <= reader_answered, "the looper ended before the reader's first answer came");
}

#[test]
fn sessions_show_the_tree_and_the_parent_replays_identical_with_its_children() {
    let ws = scene();
    assert_eq!(run_tree(&ws, &[]).status.code(), Some(0));
    let listing = stdout(&ws.reloop(&["sessions"]));
    let lines: Vec<&str> = listing.lines().collect();
    assert_eq!(lines.len(), 6, "{listing}");
    assert!(!lines[0].starts_with(' ') && lines[0].contains("completed") && lines[0].ends_with("<- last"), "{listing}");
    assert!(lines[2].starts_with("    ") && lines[2].contains("completed"), "{listing}");
    assert!(lines[3].trim_start().starts_with("agent reader for toolu_agent_reader of "), "{listing}");
    assert!(lines[4].starts_with("    ") && lines[4].contains("max_turns"), "{listing}");
    assert!(lines[5].trim_start().starts_with("agent looper for toolu_agent_looper of "), "{listing}");

    let out = ws.reloop(&["replay", "last"]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let replayed = stdout(&out);
    assert_eq!(replayed.matches("identical").count(), 3, "{replayed}");
    assert!(replayed.contains("agent reader for toolu_agent_reader"), "{replayed}");

    // The session page carries the tree: its subagents' sessions and calls.
    let page = ws.dir.path().join("parent.html");
    let out = ws.reloop(&["view", "last", "-o", page.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains(r#""tool_use_id":"toolu_agent_reader","agent_type":"reader""#), "the page names the reader");
    assert!(html.contains(r#""tool_use_id":"toolu_agent_looper","agent_type":"looper""#), "the page names the looper");

    let why = ws.why();
    let mut settings = common::settings();
    settings.add_filter(r"\b[0-9a-f]{8}\b", "[ID]");
    settings.add_filter(r"\$[0-9]+\.[0-9]{4}", "[$]");
    settings.bind(|| insta::assert_snapshot!("agents_why", why));
}

#[test]
fn a_crash_inside_a_child_resumes_the_child_then_the_parent_with_no_tool_run_twice() {
    let ws = scene();
    // The reader's step 8 is the first streamed step of its second answer: its Read and its
    // Bash note are done; the looper ended long before.
    let out = run_tree(&ws, &[("RELOOP_CRASH_AFTER_AGENT_STEP", "8")]);
    assert_eq!(out.status.code(), None, "the process was killed: {}{}", stdout(&out), stderr(&out));
    let before = sessions(&ws);
    let reader_id = child(&before, "toolu_agent_reader")["id"].as_str().unwrap().to_string();
    assert!(before.iter().all(|s| s["terminal_reason"].is_null() || s["agent"]["agent_type"] == "looper"));

    // The child goes on under its journaled header, even with its definition gone since.
    std::fs::remove_file(ws.cwd().join(".claude/agents/reader.md")).unwrap();
    let out = ws.reloop(&["resume", "last", "--output-format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let result: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert!(result["result"].as_str().unwrap().contains("ran out of turns"), "{result}");

    let after = sessions(&ws);
    assert_eq!(after.len(), 3, "the resume made no new child: {after:#?}");
    assert!(after.iter().all(|s| !s["terminal_reason"].is_null()), "{after:#?}");
    assert_eq!(child(&after, "toolu_agent_reader")["terminal_reason"], "completed");
    // Every call of the tree was answered once, and the Bash note was written once.
    for session in &after {
        let done = outcomes(&ws, session["id"].as_str().unwrap());
        let mut ids: Vec<&str> = done.iter().map(|o| o["tool_use_id"].as_str().unwrap()).collect();
        let count = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), count, "a call answered twice in {}: {done:?}", session["id"]);
    }
    assert_eq!(outcomes(&ws, &reader_id).len(), 2);
    assert_eq!(std::fs::read_to_string(ws.cwd().join("notes.txt")).unwrap(), "read\n");
    let parent = after.iter().find(|s| s["agent"].is_null()).unwrap()["id"].as_str().unwrap().to_string();
    let answers = outcomes(&ws, &parent);
    let reader_answer = answers.iter().find(|o| o["tool_use_id"] == "toolu_agent_reader").unwrap();
    assert!(text_of(reader_answer).contains("login.ts checks only"), "{reader_answer}");
    // Its summary counts the calls it made before the crash too (a Read and a Bash note).
    assert_eq!(reader_answer["tool_use_result"]["totalToolUseCount"], 2, "{reader_answer}");
    assert_eq!(reader_answer["tool_use_result"]["toolStats"]["bashCount"], 1, "{reader_answer}");
    let out = ws.reloop(&["replay", &parent]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
}

#[test]
fn no_type_runs_general_purpose_and_an_unknown_type_is_a_tool_error() {
    let ws = scene();
    let responses = vec![
        common::response(
            "msg_1",
            serde_json::json!([
                common::call(
                    "toolu_gp",
                    "Agent",
                    serde_json::json!({"description": "Say hi", "prompt": "Say hi.", "run_in_background": false})
                ),
                common::call(
                    "toolu_nope",
                    "Agent",
                    serde_json::json!({"description": "Nothing", "prompt": "x", "subagent_type": "nope", "run_in_background": false})
                ),
            ]),
            "tool_use",
            20,
        ),
        common::response("msg_2", common::text("hi from the general-purpose agent"), "end_turn", 5),
        common::response("msg_3", common::text("done"), "end_turn", 5),
    ];
    let out = ws.run_responses("go", responses, &[]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let all = sessions(&ws);
    let parent = all.iter().find(|s| s["agent"].is_null()).unwrap()["id"].as_str().unwrap().to_string();
    let answers = outcomes(&ws, &parent);
    assert_eq!(all.len(), 2, "only the known type ran: {answers:#?}");
    assert_eq!(child(&all, "toolu_gp")["agent"]["agent_type"], "general-purpose");
    let nope = answers.iter().find(|o| o["tool_use_id"] == "toolu_nope").unwrap();
    assert_eq!(nope["is_error"], true);
    assert_eq!(
        text_of(nope),
        "<tool_use_error>Agent type 'nope' not found. Available agents: general-purpose, looper, reader</tool_use_error>"
    );
    let gp = answers.iter().find(|o| o["tool_use_id"] == "toolu_gp").unwrap();
    assert!(text_of(gp).contains("The report follows:\n  hi from the general-purpose agent"), "{gp}");
}

#[test]
fn a_fork_of_the_parent_before_the_call_runs_new_children() {
    let ws = scene();
    assert_eq!(run_tree(&ws, &[]).status.code(), Some(0));
    std::fs::remove_file(ws.cwd().join("notes.txt")).unwrap();
    let out = ws.reloop(&["fork", "last", "--at", "1", "--output-format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let fork: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    let all = sessions(&ws);
    assert_eq!(all.len(), 6, "{all:#?}");
    let children: Vec<&Value> = all.iter().filter(|s| s["agent"]["parent"] == fork["session_id"]).collect();
    assert_eq!(children.len(), 2, "{all:#?}");
    assert_eq!(std::fs::read_to_string(ws.cwd().join("notes.txt")).unwrap(), "read\n");
}

/// A cassette response of `input`/`output` tokens on claude-sonnet-4-6 ($3 and $15 a million).
fn priced(id: &str, content: Value, stop_reason: &str, input: u64, output: u64) -> Value {
    serde_json::json!({"message": {
        "id": id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
        "content": content, "stop_reason": stop_reason,
        "usage": {"input_tokens": input, "output_tokens": output}
    }})
}

fn reader_call(id: &str) -> Value {
    common::call(
        id,
        "Agent",
        serde_json::json!({"description": "Read", "prompt": "Read it.", "subagent_type": "reader", "run_in_background": false}),
    )
}

#[test]
fn a_child_over_the_budget_ends_with_a_tool_error_and_its_cost_stops_the_parent() {
    let ws = scene();
    let responses = vec![
        // The parent spends $0.0045 of $0.006 ...
        priced("msg_p1", serde_json::json!([reader_call("toolu_agent")]), "tool_use", 1000, 100),
        // ... and the child $0.0045 of the $0.0015 left: it stops before its next request.
        priced(
            "msg_c1",
            serde_json::json!([common::call("toolu_read", "Read", serde_json::json!({"file_path": "README.md"}))]),
            "tool_use",
            1000,
            100,
        ),
        priced("msg_unused", common::text("never asked"), "end_turn", 1, 1),
    ];
    let out = ws.run_responses("go", responses, &["--model", "claude-sonnet-4-6", "--max-budget-usd", "0.006"]);
    assert_eq!(out.status.code(), Some(1), "{}{}", stdout(&out), stderr(&out));
    let all = sessions(&ws);
    let child_session = child(&all, "toolu_agent");
    assert_eq!(child_session["terminal_reason"], "max_budget_usd");
    let parent = all.iter().find(|s| s["agent"].is_null()).unwrap();
    assert_eq!(parent["terminal_reason"], "max_budget_usd", "the child's cost counts toward the parent's budget");
    let answer = outcomes(&ws, parent["id"].as_str().unwrap()).remove(0);
    assert_eq!(answer["is_error"], true);
    assert!(text_of(&answer).starts_with("<tool_use_error>Agent 'reader' stopped before it finished (max_budget_usd)"));
    assert!((answer["agent_usage"]["cost_usd"].as_f64().unwrap() - 0.0045).abs() < 1e-9, "{answer}");
}

/// A child whose request is refused ends on a model error; the parent's call is answered in the
/// profile's words (flag 35, `subagent/failed`) and the parent goes on. 2.1.332's child sends
/// the refused request twice more first, without its guesses (flag 41).
#[test]
fn a_child_whose_model_fails_is_answered_in_the_profile_s_words_and_the_parent_goes_on() {
    let failed = serde_json::json!({"error": {"status": 400, "body": {"type": "error",
        "error": {"type": "invalid_request_error", "message": "the child's request is malformed"}}}});
    let run = |compat: &[&str]| {
        let ws = scene();
        let tries = if compat.is_empty() { 3 } else { 1 };
        let mut responses =
            vec![common::response("msg_p1", serde_json::json!([reader_call("toolu_agent")]), "tool_use", 10)];
        responses.extend(std::iter::repeat_n(failed.clone(), tries));
        responses.push(common::response("msg_p2", common::text("the reader failed; I answer myself"), "end_turn", 10));
        let out = ws.run_responses("go", responses, compat);
        assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
        let all = sessions(&ws);
        assert_eq!(child(&all, "toolu_agent")["terminal_reason"], "model_error");
        let parent = all.iter().find(|s| s["agent"].is_null()).unwrap();
        assert_eq!(parent["terminal_reason"], "completed");
        outcomes(&ws, parent["id"].as_str().unwrap()).remove(0)
    };
    // The default profile, 2.1.332: the call failed, in its words (the script's server sends no
    // request id).
    let answer = run(&[]);
    assert_eq!(answer["is_error"], true);
    assert_eq!(
        text_of(&answer),
        "Agent terminated early due to an API error: API Error: 400 the child's request is malformed (error type \
         unknown, HTTP 400, model sent to the API: claude-opus-5-5)"
    );
    // 2.1.197: the error is the child's report, handed back as any report is.
    let answer = run(&["--compat", "claude-code-2.1.197"]);
    assert_ne!(answer["is_error"], true, "{answer}");
    let text = text_of(&answer);
    assert!(text.starts_with("API Error: 400 the child's request is malformed"), "{text}");
    assert!(text.contains("agentId: a"), "{text}");
    // reloop's own words.
    let answer = run(&["--compat", "reloop"]);
    assert_eq!(answer["is_error"], true);
    let text = text_of(&answer);
    assert!(text.starts_with("<tool_use_error>Agent 'reader' stopped before it finished (model_error)"), "{text}");
    assert!(text.contains("the child's request is malformed"), "{text}");
}

#[test]
fn an_abort_of_the_parent_aborts_its_running_child() {
    let ws = scene();
    let responses = vec![
        common::response("msg_p1", serde_json::json!([reader_call("toolu_agent")]), "tool_use", 10),
        // The child's answer takes long enough for the parent to be interrupted first.
        serde_json::json!({"delay_ms": 30000, "message": {"id": "msg_c1", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-6", "content": [{"type": "text", "text": "late"}], "stop_reason": "end_turn",
            "usage": {"input_tokens": 1, "output_tokens": 1}}}),
    ];
    let cassette = ws.dir.path().join("slow-child.json");
    std::fs::write(&cassette, serde_json::json!({ "responses": responses }).to_string()).unwrap();
    let cwd = ws.cwd();
    let mut run = common::reloop_bin()
        .args(["run", "go", "--script", cassette.to_str().unwrap(), "--cwd", cwd.to_str().unwrap()])
        .env("RELOOP_JOURNAL", ws.journal())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the child has asked the model (its first request is journaled).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        assert!(std::time::Instant::now() < deadline, "the child never started");
        if !ws.journal().exists() {
            std::thread::sleep(std::time::Duration::from_millis(50));
            continue;
        }
        // A listing that meets the journal while the run creates it fails; the next one reads it.
        let listing = ws.reloop(&["sessions", "--json"]);
        let all: Vec<Value> = serde_json::from_slice(&listing.stdout).unwrap_or_default();
        if all.iter().any(|s| !s["agent"].is_null() && s["steps"].as_u64() >= Some(1)) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::process::Command::new("kill").args(["-INT", &run.id().to_string()]).status().unwrap();
    let status = run.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let all = sessions(&ws);
    assert_eq!(child(&all, "toolu_agent")["terminal_reason"], "aborted_streaming", "{all:#?}");
    let parent = all.iter().find(|s| s["agent"].is_null()).unwrap();
    assert_eq!(parent["terminal_reason"], "aborted_tools");
}

/// 2.1.332's background agent (flag 44, `subagent/default`): a call that does not ask for the
/// foreground is answered `Async agent launched successfully`, and the child's end comes back as
/// a query of its own, its task notification the message (its `origin` naming the child's run),
/// which the journal holds: the parent replays identical. With a cassette the call waits for
/// its child, so the requests keep one order.
#[test]
fn a_background_agent_is_answered_at_once_and_its_end_starts_a_query() {
    let ws = scene();
    let call = common::call(
        "toolu_bg",
        "Agent",
        serde_json::json!({"description": "Read", "prompt": "Read it.", "subagent_type": "reader"}),
    );
    let responses = vec![
        common::response("msg_p1", serde_json::json!([call]), "tool_use", 10),
        common::response("msg_c1", common::text("REPORT: login.ts checks nothing."), "end_turn", 5),
        common::response("msg_p2", common::text("An agent is reading it."), "end_turn", 5),
        common::response("msg_p3", common::text("The agent says login.ts checks nothing."), "end_turn", 5),
    ];
    let out = ws.run_responses("go", responses, &[]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let results: Vec<Value> = stdout(&out)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l["type"] == "result")
        .collect();
    assert_eq!(results.len(), 2, "{}", stdout(&out));
    assert_eq!(results[0]["result"], "An agent is reading it.");
    assert_eq!(results[1]["result"], "The agent says login.ts checks nothing.");
    let all = sessions(&ws);
    let parent = all.iter().find(|s| s["agent"].is_null()).unwrap();
    let id = parent["id"].as_str().unwrap();
    let launched = outcomes(&ws, id).remove(0);
    assert!(text_of(&launched).starts_with("Async agent launched successfully."), "{launched}");
    assert_eq!(launched["tool_use_result"]["status"], "async_launched");
    let notices: Vec<Value> = steps(&ws, id)
        .into_iter()
        .filter(|s| s["event"]["kind"] == "user_input" && s["event"]["origin"]["kind"] == "task-notification")
        .collect();
    assert_eq!(notices.len(), 1);
    let told = text_of(&serde_json::json!({"content": notices[0]["event"]["content"]}));
    assert!(told.contains("<status>completed</status>\n<summary>Agent \"Read\" finished</summary>"), "{told}");
    assert!(told.contains("<result>REPORT: login.ts checks nothing.</result>"), "{told}");
    let child = child(&all, "toolu_bg");
    assert_eq!(child["terminal_reason"], "completed");
    let replay = ws.reloop(&["replay", id]);
    assert_eq!(replay.status.code(), Some(0), "{}{}", stdout(&replay), stderr(&replay));
    // `why` names the query the agent's end started by what it told.
    let why = stdout(&ws.reloop(&["why", id]));
    assert!(why.contains("prompt 2 (#"), "{why}");
    assert!(why.contains("): (task notification) Agent \"Read\" finished"), "{why}");
    // Under 2.1.197 the same call runs in the foreground: its report is the answer.
    let ws = scene();
    let call = common::call(
        "toolu_fg",
        "Agent",
        serde_json::json!({"description": "Read", "prompt": "Read it.", "subagent_type": "reader"}),
    );
    let responses = vec![
        common::response("msg_p1", serde_json::json!([call]), "tool_use", 10),
        common::response("msg_c1", common::text("REPORT"), "end_turn", 5),
        common::response("msg_p2", common::text("done"), "end_turn", 5),
    ];
    let out = ws.run_responses("go", responses, &["--compat", "claude-code-2.1.197"]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let parent = sessions(&ws).into_iter().find(|s| s["agent"].is_null()).unwrap();
    let answer = outcomes(&ws, parent["id"].as_str().unwrap()).remove(0);
    assert!(text_of(&answer).starts_with("REPORT"), "{answer}");
}

/// A crash inside a background agent (flag 44): with a cassette its call waits for it, so the
/// resumed parent finds its call unanswered, resumes the child where it stopped (its command
/// does not run twice), answers the call with the launch and tells the child's end as the next
/// query, once; the tree replays identical.
#[test]
fn a_crash_inside_a_background_agent_resumes_it_and_tells_its_end_once() {
    let ws = scene();
    let call = common::call(
        "toolu_bg",
        "Agent",
        serde_json::json!({"description": "Note", "prompt": "Note it.", "subagent_type": "reader"}),
    );
    let note = common::call("toolu_note", "Bash", serde_json::json!({"command": "echo read >> notes.txt"}));
    let responses = vec![
        common::response("msg_p1", serde_json::json!([call]), "tool_use", 10),
        common::response("msg_c1", serde_json::json!([note]), "tool_use", 5),
        common::response("msg_c2", common::text("REPORT: noted."), "end_turn", 5),
        common::response("msg_p2", common::text("An agent is noting it."), "end_turn", 5),
        common::response("msg_p3", common::text("The agent noted it."), "end_turn", 5),
    ];
    // The child's step 5 is its Bash call's result.
    let crash = [("RELOOP_CRASH_AFTER_AGENT_STEP", "5")];
    let out = ws.run_responses_env("go", responses, &["--allowed-tools", "Bash"], &crash);
    assert_eq!(out.status.code(), None, "the process was killed: {}{}", stdout(&out), stderr(&out));
    assert_eq!(std::fs::read_to_string(ws.cwd().join("notes.txt")).unwrap(), "read\n");
    let out = ws.reloop(&["resume", "last", "--output-format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains("The agent noted it."), "{}", stdout(&out));
    assert_eq!(std::fs::read_to_string(ws.cwd().join("notes.txt")).unwrap(), "read\n", "no command ran twice");
    let all = sessions(&ws);
    assert_eq!(all.len(), 2, "the resume made no new child: {all:#?}");
    assert_eq!(child(&all, "toolu_bg")["terminal_reason"], "completed");
    let parent = all.iter().find(|s| s["agent"].is_null()).unwrap()["id"].as_str().unwrap().to_string();
    let told = steps(&ws, &parent)
        .into_iter()
        .filter(|s| s["event"]["kind"] == "user_input" && s["event"]["origin"]["kind"] == "task-notification")
        .count();
    assert_eq!(told, 1);
    let answers = outcomes(&ws, &parent);
    assert_eq!(answers.len(), 1);
    assert!(text_of(&answers[0]).starts_with("Async agent launched successfully."), "{}", answers[0]);
    let out = ws.reloop(&["replay", &parent]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
}

/// A crash while a live session waits for its background agent (flag 44): the launch and the
/// parent's answer are journaled, the agent's command has run, its end is not told. `resume`
/// (given the agent's session, the last one) resumes the parent although its query had ended:
/// the agent goes on where it stopped, its command not run again, and its end is told once.
#[test]
fn a_crash_before_a_background_agent_s_end_was_told_is_resumed_to_tell_it() {
    use common::fake_server::{sse_from_message, Canned, FakeServer};
    let ws = scene();
    let answer = |r: Value| Canned::Sse(sse_from_message(&r["message"]));
    let call = common::call(
        "toolu_bg",
        "Agent",
        serde_json::json!({"description": "Note", "prompt": "Note it.", "subagent_type": "reader"}),
    );
    // The agent's command takes a second: the parent answers meanwhile and its query ends.
    let note = common::call("toolu_note", "Bash", serde_json::json!({"command": "sleep 1; echo read >> notes.txt"}));
    // The agent's requests (its conversation opens with its prompt) have answers of their own.
    let server = FakeServer::start_split(
        vec![
            answer(common::response("msg_p1", serde_json::json!([call]), "tool_use", 10)),
            answer(common::response("msg_p2", common::text("An agent is noting it."), "end_turn", 5)),
            answer(common::response("msg_p3", common::text("The agent noted it."), "end_turn", 5)),
        ],
        vec![
            answer(common::response("msg_c1", serde_json::json!([note]), "tool_use", 5)),
            answer(common::response("msg_c2", common::text("REPORT: noted."), "end_turn", 5)),
        ],
        |body| body["messages"][0].to_string().contains("Note it."),
    );
    let cwd = ws.cwd();
    let env = [("ANTHROPIC_BASE_URL", server.url.as_str()), ("ANTHROPIC_API_KEY", "test-key")];
    let mut crashing = env.to_vec();
    // The agent's step 6 is its command's result.
    crashing.push(("RELOOP_CRASH_AFTER_AGENT_STEP", "6"));
    let args = ["run", "go", "--cwd", cwd.to_str().unwrap(), "--allowed-tools", "Bash", "--output-format", "json"];
    let out = ws.reloop_env(&args, &crashing);
    assert_eq!(out.status.code(), None, "the process was killed: {}{}", stdout(&out), stderr(&out));
    let before = sessions(&ws);
    let parent = before.iter().find(|s| s["agent"].is_null()).unwrap()["id"].as_str().unwrap().to_string();
    assert_eq!(before.iter().find(|s| s["id"] == parent.as_str()).unwrap()["terminal_reason"], "completed");
    assert!(child(&before, "toolu_bg")["terminal_reason"].is_null(), "{before:#?}");
    let out = ws.reloop_env(&["resume", "last", "--output-format", "json"], &env);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains("The agent noted it."), "{}", stdout(&out));
    assert_eq!(std::fs::read_to_string(ws.cwd().join("notes.txt")).unwrap(), "read\n", "no command ran twice");
    let after = sessions(&ws);
    assert_eq!(after.len(), 2, "{after:#?}");
    assert_eq!(child(&after, "toolu_bg")["terminal_reason"], "completed");
    let told: Vec<Value> = steps(&ws, &parent)
        .into_iter()
        .filter(|s| s["event"]["kind"] == "user_input" && s["event"]["origin"]["kind"] == "task-notification")
        .collect();
    assert_eq!(told.len(), 1);
    let text = text_of(&serde_json::json!({"content": told[0]["event"]["content"]}));
    assert!(text.contains("<result>REPORT: noted.</result>"), "{text}");
    // Nothing more is owed: a second resume finds the session finished.
    let again = ws.reloop_env(&["resume", &parent], &env);
    assert!(stdout(&again).contains("already finished"), "{}{}", stdout(&again), stderr(&again));
    let out = ws.reloop(&["replay", &parent]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
}
