//! Prompts Claude Code answers itself, without the model, against the real Claude Code recorded
//! under `tests/print/recorded/<version>/settings_slash/` and `sdk36/`
//! (scripts/record-claude-code/scenarios_sdk36.py says how each was made): `/compact` with no
//! conversation yet, 2.1.197's `Unknown command: /X`, first and between queries, and a `/compact`
//! sent while a query runs.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use common::fake_server::{sse_from_message, Canned, FakeServer};
use common::sdk_play::{reloop_as, stream_json};
use common::{stderr, stdout, Workspace};
use serde_json::{json, Value};

const VERSIONS: [&str; 2] = ["2.1.332", "2.1.197"];

fn fixture(version: &str, family: &str, variant: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/print/recorded").join(version).join(family).join(variant)
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The model's recorded answers (not the `<synthetic>` lines Claude Code made itself), as the
/// Messages API sent them.
fn turns(dir: &Path) -> Vec<Canned> {
    let mut out = Vec::new();
    for line in lines(&dir.join("stdout.jsonl")) {
        if line["type"] != "assistant" || line["message"]["model"] == "<synthetic>" {
            continue;
        }
        let tool = line["message"]["content"].as_array().unwrap().iter().any(|b| b["type"] == "tool_use");
        let message = json!({"id": line["message"]["id"], "type": "message", "role": "assistant",
            "model": line["message"]["model"], "content": line["message"]["content"],
            "stop_reason": if tool { "tool_use" } else { "end_turn" }, "stop_sequence": null,
            "usage": {"input_tokens": 120, "output_tokens": 25}});
        out.push(Canned::Sse(sse_from_message(&message)));
    }
    out
}

/// The user messages the recording sent, in order.
fn sent(dir: &Path) -> Vec<String> {
    let scenario: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("scenario.json")).unwrap()).unwrap();
    scenario["input"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|step| step["send"]["type"] == "user")
        .map(|step| step["send"]["message"]["content"].as_str().unwrap().to_string())
        .collect()
}

/// A stream-json session: each message sent once the previous one's `result` is printed; all
/// at once when `at_once`.
fn drive(ws: &Workspace, version: &str, url: &str, messages: &[String], at_once: bool) -> Vec<Value> {
    let mut child = stream_json(ws, version, url)
        .args(["--input-format", "stream-json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let (rx, reader) = common::json_line_reader(child.stdout.take().unwrap());
    let mut got = Vec::new();
    for message in messages {
        let line = json!({"type": "user", "message": {"role": "user", "content": message},
            "parent_tool_use_id": null, "session_id": "default"});
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
        if at_once {
            continue;
        }
        loop {
            let line = rx.recv_timeout(Duration::from_secs(60)).expect("a result");
            let done = line["type"] == "result";
            got.push(line);
            if done {
                break;
            }
        }
    }
    drop(stdin);
    got.extend(rx.iter());
    reader.join().unwrap();
    assert!(child.wait().unwrap().success());
    got
}

/// A line's kind: `type`, with `subtype` for `system` lines, and `<synthetic>` for Claude
/// Code's own assistant lines.
fn kind(line: &Value) -> String {
    match line["subtype"].as_str() {
        Some(sub) if line["type"] == "system" => format!("system/{sub}"),
        _ if line["message"]["model"] == "<synthetic>" => "assistant <synthetic>".into(),
        _ => line["type"].as_str().unwrap_or_default().to_string(),
    }
}

/// What a local answer's lines say: the answer's line (its text, stop, the keys after its uuid)
/// and each result's text, turns, cost (spent or not), `local_command` and whether it has a
/// `terminal_reason`.
fn said(lines: &[Value]) -> Vec<Value> {
    lines
        .iter()
        .filter_map(|l| match kind(l).as_str() {
            "assistant <synthetic>" => {
                let keys: Vec<&String> =
                    l.as_object().unwrap().keys().filter(|k| k.starts_with("local_command")).collect();
                Some(json!([
                    "answer",
                    l["message"]["content"],
                    l["message"]["stop_reason"],
                    keys,
                    l["local_command_run"],
                    l["local_command_source"]
                ]))
            }
            "result" => Some(json!([
                "result",
                l["result"],
                l["num_turns"],
                l["is_error"],
                l["total_cost_usd"].as_f64().unwrap() > 0.0,
                l["local_command"],
                l.get("terminal_reason").is_some()
            ])),
            _ => None,
        })
        .collect()
}

/// `/compact` with nothing to compact, then 2.1.197's unknown commands first and between
/// queries: each answered as Claude Code answers it (no request, the same lines and results),
/// in one session. 2.1.332 sends the unknown commands to the model. What the local answers
/// said reaches the model with the first prompt, in each version's words. The journaled session
/// replays identical, and its replayed stream is the live one without the local answers.
#[test]
fn local_commands_are_answered_without_the_model_as_claude_code_does() {
    for version in VERSIONS {
        let dir = fixture(version, "sdk36", "stream_local");
        let server = FakeServer::start(turns(&dir));
        let ws = Workspace::seed();
        let live = drive(&ws, version, &server.url, &sent(&dir), false);
        let recorded = lines(&dir.join("stdout.jsonl"));
        let kinds = |lines: &[Value]| lines.iter().map(kind).collect::<Vec<_>>();
        assert_eq!(kinds(&live), kinds(&recorded), "{version}");
        assert_eq!(said(&live), said(&recorded), "{version}");
        assert_eq!(server.requests().len(), lines(&dir.join("requests.jsonl")).len(), "{version}");
        // What the local answers said opens the first prompt's message (reloop_core::local_lines).
        let context = version == "2.1.197";
        let sent: Vec<Value> = server.requests().into_iter().map(|r| r.body).collect();
        let recorded_sent = common::hooks_play::recorded_requests(version, "sdk36/stream_local");
        let lines_of = common::hooks_play::prompt_lines;
        assert_eq!(lines_of(&sent, context), lines_of(&recorded_sent, context), "{version}: what the model is sent");
        let sessions: std::collections::BTreeSet<&str> = live.iter().filter_map(|l| l["session_id"].as_str()).collect();
        assert_eq!(sessions.len(), 1, "{version}: one session throughout");
        let uuids: std::collections::BTreeSet<&str> = live.iter().filter_map(|l| l["uuid"].as_str()).collect();
        assert_eq!(uuids.len(), live.len(), "{version}: every line's uuid is its own");

        let replay = ws.reloop(&["replay", "last"]);
        assert!(stdout(&replay).contains("identical"), "{version}: {}{}", stdout(&replay), stderr(&replay));
        let replayed = common::json_lines(&ws.reloop(&["replay", "last", "--output-format", "stream-json"]));
        // The live queries the journal holds: those the model answered.
        let mut journaled = Vec::new();
        for query in live.split_inclusive(|l| l["type"] == "result") {
            if !query.iter().any(|l| kind(l) == "assistant <synthetic>") {
                journaled.extend(query.iter().cloned());
            }
        }
        assert_eq!(common::without_timings(&replayed), common::without_timings(&journaled), "{version}");
    }
}

/// `reloop -p /compact`: `Error: No messages to compact`, no request, exit 0, as both versions
/// print it; `-p "/nosuch foo"` under 2.1.197: `Unknown command: /nosuch` (text output too), and
/// `-p "/gret Alice"` with a `/greet` command: `Unknown command: /gret. Did you mean /greet?`.
#[test]
fn a_first_prompt_claude_code_answers_itself_asks_no_model() {
    for version in VERSIONS {
        for variant in ["compact", "unknown", "typo", "typo_hidden"] {
            let dir = fixture(version, "settings_slash", variant);
            let scenario: Value =
                serde_json::from_str(&std::fs::read_to_string(dir.join("scenario.json")).unwrap()).unwrap();
            let ws = Workspace::seed();
            // The project's command files (`typo`'s `/greet`), where the recording had them.
            for (path, text) in scenario["files"].as_object().into_iter().flatten() {
                if let Some(rel) = path.strip_prefix("/tmp/reloop-cc-project/") {
                    let path = ws.cwd().join(rel);
                    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                    std::fs::write(path, text.as_str().unwrap()).unwrap();
                }
            }
            let recorded = lines(&dir.join("stdout.jsonl"));
            if !recorded.iter().any(|l| kind(l) == "assistant <synthetic>") {
                // 2.1.332 sent `/nosuch foo` and `/gret Alice` to the model
                // (tests/local_command_lines.rs checks what it sent).
                assert_eq!(version, "2.1.332", "{variant}");
                continue;
            }
            let server = FakeServer::start(Vec::new());
            let prompt = scenario["prompt"].as_str().unwrap();
            let out = stream_json(&ws, version, &server.url).args(["-p", prompt]).output().unwrap();
            assert!(out.status.success(), "{version}/{variant}: {}", stderr(&out));
            let live = common::json_lines(&out);
            let kinds = |lines: &[Value]| lines.iter().map(kind).collect::<Vec<_>>();
            assert_eq!(kinds(&live), kinds(&recorded), "{version}/{variant}");
            assert_eq!(said(&live), said(&recorded), "{version}/{variant}");
            assert!(server.requests().is_empty(), "{version}/{variant}");
            let text =
                reloop_as(&ws, version, &server.url).args(["-p", prompt, "--output-format", "text"]).output().unwrap();
            let result = recorded.last().unwrap()["result"].as_str().unwrap();
            assert_eq!(stdout(&text), format!("{result}\n"), "{version}/{variant}");
        }
    }
}

/// A `/compact` sent while a query runs is not sent to the model: when the query ends it
/// compacts the conversation, as 2.1.332 does; 2.1.197 does not compact that single exchange
/// and says `Not enough messages to compact.` (its status line, `system/init`, a `<synthetic>`
/// line and the result), asking nothing. The session replays identical, its stream as printed.
#[test]
fn a_compact_queued_while_a_query_runs_compacts_when_it_ends() {
    for version in VERSIONS {
        let dir = fixture(version, "sdk36", "queued_compact");
        let scenario: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("scenario.json")).unwrap()).unwrap();
        let summary = scenario["steps"].as_array().unwrap().iter().find(|s| s["kind"] == "compact").unwrap();
        let summary = json!({"id": "msg_summary", "type": "message", "role": "assistant", "model": "claude-opus-5-5",
            "content": [{"type": "text", "text": summary["text"]}], "stop_reason": "end_turn", "stop_sequence": null,
            "usage": {"input_tokens": 120, "output_tokens": 25}});
        let mut answers = turns(&dir);
        // The first answer takes a while, as the recording's did, so `/compact` queues.
        let Canned::Sse(first) = answers.remove(0) else { unreachable!() };
        answers.insert(0, Canned::Delayed(Duration::from_millis(800), first));
        answers.push(Canned::Sse(sse_from_message(&summary)));
        let server = FakeServer::start(answers);
        let ws = Workspace::seed();
        let live = drive(&ws, version, &server.url, &sent(&dir), true);
        let recorded = lines(&dir.join("stdout.jsonl"));
        let kinds = |lines: &[Value]| lines.iter().map(kind).collect::<Vec<_>>();
        assert_eq!(kinds(&live), kinds(&recorded), "{version}");
        assert_eq!(said(&live), said(&recorded), "{version}");
        let statuses = |lines: &[Value]| -> Vec<Value> {
            lines
                .iter()
                .filter(|l| l["subtype"] == "status")
                .map(|l| json!([l["compact_result"], l["compact_error"]]))
                .collect()
        };
        assert_eq!(statuses(&live), statuses(&recorded), "{version}");
        assert_eq!(server.requests().len(), lines(&dir.join("requests.jsonl")).len(), "{version}");
        let replay = ws.reloop(&["replay", "last"]);
        assert!(stdout(&replay).contains("identical"), "{version}: {}{}", stdout(&replay), stderr(&replay));
        let replayed = common::json_lines(&ws.reloop(&["replay", "last", "--output-format", "stream-json"]));
        assert_eq!(kinds(&replayed), kinds(&live), "{version}: the replayed stream");
        assert_eq!(said(&replayed), said(&live), "{version}: the replayed stream");
    }
}

/// A recorded scenario played through reloop under `version`: its files laid out in a fresh
/// workspace (each text through `edit`, once the project's path is moved there), the recorded
/// answers served and its messages sent. The workspace, the server and the lines printed.
fn play(
    version: &str,
    family: &str,
    variant: &str,
    edit: impl Fn(String) -> String,
) -> (Workspace, FakeServer, Vec<Value>) {
    let dir = fixture(version, family, variant);
    let scenario: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("scenario.json")).unwrap()).unwrap();
    let ws = Workspace::seed();
    let cwd = ws.cwd().display().to_string();
    common::lay_out_files(&scenario, |text| edit(text.replace("/tmp/reloop-cc-project", &cwd)));
    let server = FakeServer::start(turns(&dir));
    let live = drive(&ws, version, &server.url, &sent(&dir), false);
    (ws, server, live)
}

/// A command file's `model` (`sdk_wire/command_frontmatter`): the query that runs the command is
/// asked with it, every request of it, and its `system/init` names it; the next query goes back
/// to the session's model, as both versions do. The switches are journaled, so the session
/// replays identical and its replayed stream is the live one (no `Set model to` line for them).
#[test]
fn a_command_file_s_model_asks_that_command_s_query_then_goes_back() {
    for version in VERSIONS {
        let dir = fixture(version, "sdk_wire", "command_frontmatter");
        let (ws, server, live) = play(version, "sdk_wire", "command_frontmatter", |text| text);
        let recorded = lines(&dir.join("stdout.jsonl"));
        let models: Vec<Value> =
            lines(&dir.join("requests.jsonl")).iter().map(|r| r["body"]["model"].clone()).collect();
        let asked: Vec<Value> = server.requests().iter().map(|r| r.body["model"].clone()).collect();
        assert_eq!(asked, models, "{version}: the models asked");
        let shown = |lines: &[Value]| -> Vec<Value> {
            lines
                .iter()
                .filter(|l| l["subtype"] == "init" || l["type"] == "result")
                .map(|l| match l["type"].as_str() {
                    Some("result") => json!(l["modelUsage"].as_object().unwrap().keys().collect::<Vec<_>>()),
                    _ => l["model"].clone(),
                })
                .collect()
        };
        assert_eq!(shown(&live), shown(&recorded), "{version}: init's model and each result's modelUsage");
        // 2.1.332 tells the command's model who it is on its query's tool result (flag 26),
        // before the `<total_tokens>` reminder; 2.1.197 tells it nothing.
        let recorded_result =
            lines(&dir.join("requests.jsonl"))[1]["body"]["messages"][2]["content"][0]["content"].clone();
        let asked = server.requests();
        let live_result = &asked[1].body["messages"].as_array().unwrap().last().unwrap()["content"][0]["content"];
        assert_eq!(live_result, &recorded_result, "{version}: the command's tool result");
        if version == "2.1.332" {
            assert!(recorded_result.as_str().unwrap().contains("You are powered by the model named Haiku 4.5."));
        }
        // Back on Opus 5.5 (the next command's query), 2.1.332 sends that result's reminders as
        // a `role: "system"` message after it and names Opus 5.5 again after the prompt; 2.1.197
        // neither. Compared from the tool result on, the context blocks reloop does not send
        // (the prompt's attribution reminder) left out.
        let from_result = |messages: &[Value]| -> Vec<Value> {
            let at = messages.iter().position(|m| m["content"][0]["type"] == "tool_result").unwrap();
            let strip = |m: &Value| match &m["content"] {
                Value::Array(blocks) => json!({"role": m["role"], "content": blocks.iter()
                    .filter(|b| !b["text"].as_str().is_some_and(|t| t.starts_with("<system-reminder>\nAttribution")))
                    .map(|b| json!([b["type"], b["text"], b["content"]])).collect::<Vec<_>>()}),
                other => json!({"role": m["role"], "content": [["text", other, null]]}),
            };
            messages[at..].iter().map(strip).collect()
        };
        let recorded_last = lines(&dir.join("requests.jsonl"))[2]["body"]["messages"].as_array().unwrap().clone();
        let live_last = asked[2].body["messages"].as_array().unwrap().clone();
        assert_eq!(from_result(&live_last), from_result(&recorded_last), "{version}: back on the session's model");
        // `show` rebuilds the same messages from the journal.
        let body: Value = serde_json::from_str(&stdout(&ws.reloop(&["show", "last", "--request", "3"]))).unwrap();
        assert_eq!(body["body"], asked[2].body, "{version}: show --request 3");
        let replay = ws.reloop(&["replay", "last"]);
        assert!(stdout(&replay).contains("identical"), "{version}: {}{}", stdout(&replay), stderr(&replay));
        let replayed = common::json_lines(&ws.reloop(&["replay", "last", "--output-format", "stream-json"]));
        assert_eq!(
            common::without_timings(&replayed),
            common::without_timings(&live),
            "{version}: the replayed stream"
        );

        // `-p /fm A B`: the one query is the command's.
        let server = FakeServer::start(turns(&dir).into_iter().take(2).collect());
        let ws2 = Workspace::seed();
        std::fs::create_dir_all(ws2.cwd().join(".claude/commands")).unwrap();
        std::fs::copy(ws.cwd().join(".claude/commands/fm.md"), ws2.cwd().join(".claude/commands/fm.md")).unwrap();
        let out = stream_json(&ws2, version, &server.url).args(["-p", "/fm A B"]).output().unwrap();
        assert!(out.status.success(), "{version}: {}", stderr(&out));
        let asked: Vec<Value> = server.requests().iter().map(|r| r.body["model"].clone()).collect();
        assert_eq!(asked, models[..2], "{version}: -p");
        assert_eq!(shown(&common::json_lines(&out))[0], shown(&recorded)[0], "{version}: -p's init");
    }
}

/// `/clear` as a new session's first prompt (`settings_slash/clear`): no request; the session
/// the process started prints no `system/init` (2.1.332 its reset lines only) and the new one
/// prints the `/clear`'s lines, as both versions do (the recording's hook lines aside: no hook
/// is set here; tests/hooks_session_events.rs runs them). With stream-json input the next
/// question is the new session's first. Each session is journaled and its replayed stream is
/// what was printed with its id.
#[test]
fn clear_as_the_first_prompt_starts_a_new_session_without_the_model() {
    for version in VERSIONS {
        let dir = fixture(version, "settings_slash", "clear");
        let recorded: Vec<Value> =
            lines(&dir.join("stdout.jsonl")).into_iter().filter(|l| !kind(l).starts_with("system/hook_")).collect();
        let kinds = |lines: &[Value]| lines.iter().map(kind).collect::<Vec<_>>();
        // Which lines carry the first session's id and which the new one's.
        let sessions = |lines: &[Value]| {
            let ids: Vec<&Value> = lines.iter().map(|l| &l["session_id"]).collect();
            ids.iter().map(|id| *id == ids[ids.len() - 1]).collect::<Vec<_>>()
        };
        let fields = |l: &Value| json!([l["result"], l["num_turns"], l["stop_reason"], l["local_command"]]);
        let results = |lines: &[Value]| lines.iter().filter(|l| l["type"] == "result").map(fields).collect::<Vec<_>>();
        let replayed = |ws: &Workspace, id: &str| {
            let replay = ws.reloop(&["replay", id]);
            assert!(stdout(&replay).contains("identical"), "{version}: {}{}", stdout(&replay), stderr(&replay));
            common::json_lines(&ws.reloop(&["replay", id, "--output-format", "stream-json"]))
        };

        let server = FakeServer::start(Vec::new());
        let ws = Workspace::seed();
        let out = stream_json(&ws, version, &server.url).args(["-p", "/clear"]).output().unwrap();
        assert!(out.status.success(), "{version}: {}", stderr(&out));
        let live = common::json_lines(&out);
        assert_eq!(kinds(&live), kinds(&recorded), "{version}");
        assert_eq!(sessions(&live), sessions(&recorded), "{version}");
        assert_eq!(results(&live), results(&recorded), "{version}");
        assert!(server.requests().is_empty(), "{version}: the model is not asked");
        let new = live.last().unwrap()["session_id"].as_str().unwrap();
        let old = ws.reloop(&["sessions"]);
        let old = stdout(&old);
        let ids: Vec<&str> = old.lines().filter_map(|l| l.split_whitespace().next()).filter(|w| w.len() == 8).collect();
        assert_eq!(ids.len(), 2, "{version}: both sessions are journaled: {old}");
        for id in ids {
            let printed: Vec<Value> = if new.starts_with(id) {
                live.iter().filter(|l| l["session_id"] == new).cloned().collect()
            } else {
                live.iter().filter(|l| l["session_id"] != new).cloned().collect()
            };
            assert_eq!(common::without_timings(&replayed(&ws, id)), common::without_timings(&printed), "{version}");
        }

        // stream-json input: `/clear`, then a question the new session asks from nothing.
        let after = fixture(version, "settings_slash", "stream_clear");
        let server = FakeServer::start(turns(&after).into_iter().skip(1).collect());
        let ws = Workspace::seed();
        let live = drive(&ws, version, &server.url, &["/clear".into(), "再说一遍".into()], false);
        let cleared = live.iter().position(|l| l["type"] == "result").unwrap() + 1;
        assert_eq!(kinds(&live[..cleared]), kinds(&recorded), "{version}: stream-json");
        assert_eq!(kinds(&live[cleared..]), ["system/init", "assistant", "result"], "{version}: stream-json");
        assert_eq!(server.requests().len(), 1, "{version}");
        assert_eq!(server.requests()[0].body["messages"].as_array().unwrap().len(), 1, "{version}");
        let new = live.last().unwrap()["session_id"].as_str().unwrap();
        assert!(live[cleared - 1]["session_id"] == new, "{version}: the question is the new session's");
        let printed: Vec<Value> = live.iter().filter(|l| l["session_id"] == new).cloned().collect();
        assert_eq!(common::without_timings(&replayed(&ws, new)), common::without_timings(&printed), "{version}");
    }
}

/// A command whose file names a model, sent while a query runs (`sdk36/queued_command_model`):
/// when that query ends it runs as a query of its own, asked with the command's model (its
/// `system/init` names it), as both versions do. The switches are journaled, so the session
/// replays identical and its replayed stream is the live one.
#[test]
fn a_queued_command_is_asked_with_its_file_s_model() {
    for version in VERSIONS {
        let dir = fixture(version, "sdk36", "queued_command_model");
        let scenario: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("scenario.json")).unwrap()).unwrap();
        let ws = Workspace::seed();
        let cwd = ws.cwd().display().to_string();
        common::lay_out_files(&scenario, |text| text.replace("/tmp/reloop-cc-project", &cwd));
        let mut answers = turns(&dir);
        // The first answer takes a while, as the recording's did, so the command queues.
        let Canned::Sse(first) = answers.remove(0) else { unreachable!() };
        answers.insert(0, Canned::Delayed(Duration::from_millis(800), first));
        let server = FakeServer::start(answers);
        let live = drive(&ws, version, &server.url, &sent(&dir), true);
        let recorded = lines(&dir.join("stdout.jsonl"));
        let kinds = |lines: &[Value]| lines.iter().map(kind).collect::<Vec<_>>();
        assert_eq!(kinds(&live), kinds(&recorded), "{version}");
        let models: Vec<Value> =
            lines(&dir.join("requests.jsonl")).iter().map(|r| r["body"]["model"].clone()).collect();
        let asked: Vec<Value> = server.requests().iter().map(|r| r.body["model"].clone()).collect();
        assert_eq!(asked, models, "{version}: the models asked");
        let inits = |lines: &[Value]| -> Vec<Value> {
            lines.iter().filter(|l| l["subtype"] == "init").map(|l| l["model"].clone()).collect()
        };
        assert_eq!(inits(&live), inits(&recorded), "{version}: each query's system/init");
        // The command's tool result: 2.1.332 names Haiku 4.5 there (flag 26), 2.1.197 nothing.
        let recorded_result =
            lines(&dir.join("requests.jsonl"))[2]["body"]["messages"][4]["content"][0]["content"].clone();
        let asked = server.requests();
        let live_result = &asked[2].body["messages"].as_array().unwrap().last().unwrap()["content"][0]["content"];
        assert_eq!(live_result, &recorded_result, "{version}: the command's tool result");
        let replay = ws.reloop(&["replay", "last"]);
        assert!(stdout(&replay).contains("identical"), "{version}: {}{}", stdout(&replay), stderr(&replay));
        let why = ws.reloop(&["why", "last"]);
        assert!(stdout(&why).contains("the command /fm asks its query with claude-haiku-4-5"), "{}", stdout(&why));
        let replayed = common::json_lines(&ws.reloop(&["replay", "last", "--output-format", "stream-json"]));
        assert_eq!(
            common::without_timings(&replayed),
            common::without_timings(&live),
            "{version}: the replayed stream"
        );
    }
}

/// A command file's `allowed-tools` (`sdk36/command_allowed_tools`): its rules let the call of
/// that command's query run (`touch a.txt`), and the same call in the next query is denied as
/// the session's own rules deny it, as both versions do. The rules are journaled for the
/// query (`why` names them), so the session replays identical, its stream as printed.
#[test]
fn a_command_file_s_allowed_tools_hold_for_its_query_only() {
    for version in VERSIONS {
        let dir = fixture(version, "sdk36", "command_allowed_tools");
        let (ws, _server, live) = play(version, "sdk36", "command_allowed_tools", |text| text);
        let recorded = lines(&dir.join("stdout.jsonl"));
        let kinds = |lines: &[Value]| lines.iter().map(kind).collect::<Vec<_>>();
        assert_eq!(kinds(&live), kinds(&recorded), "{version}");
        let denials = |lines: &[Value]| -> Vec<Value> {
            lines.iter().filter(|l| l["type"] == "result").map(|l| l["permission_denials"].clone()).collect()
        };
        assert_eq!(denials(&live), denials(&recorded), "{version}");
        assert!(ws.cwd().join("a.txt").exists(), "{version}: the command's query ran touch");
        assert!(!ws.cwd().join("b.txt").exists(), "{version}: the next query's touch was denied");
        let replay = ws.reloop(&["replay", "last"]);
        assert!(stdout(&replay).contains("identical"), "{version}: {}{}", stdout(&replay), stderr(&replay));
        let why = stdout(&ws.reloop(&["why", "last"]));
        assert!(why.contains("the command /allow allows Bash(touch:*) for its query, as its file says"), "{why}");
        assert!(why.contains("the command /allow's query is over: back to the session's permission rules"), "{why}");
        let replayed = common::json_lines(&ws.reloop(&["replay", "last", "--output-format", "stream-json"]));
        assert_eq!(
            common::without_timings(&replayed),
            common::without_timings(&live),
            "{version}: the replayed stream"
        );
    }
    // The same rule written as a YAML list, which Claude Code reads too.
    let listed = |text: String| text.replace("allowed-tools: Bash(touch:*)", "allowed-tools:\n  - Bash(touch:*)");
    let (ws, _server, _) = play("2.1.332", "sdk36", "command_allowed_tools", listed);
    let command = std::fs::read_to_string(ws.cwd().join(".claude/commands/allow.md")).unwrap();
    assert!(command.contains("allowed-tools:\n  - Bash(touch:*)"), "{command}");
    assert!(ws.cwd().join("a.txt").exists(), "the listed rule let the command's query run touch");
    assert!(!ws.cwd().join("b.txt").exists());
}
