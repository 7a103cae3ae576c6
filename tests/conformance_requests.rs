//! Conformance of the requests reloop's print mode sends, against recordings of the real Claude
//! Code (`tests/print/recorded/<version>/<family>/<variant>/`, made by
//! scripts/record-claude-code/record.py). Each recording's scenario runs through `reloop -p`
//! under the version's profile against a fake server that gives the recorded answers in the
//! recorded order; what the model is sent is compared with what Claude Code sent, structurally:
//! the tool inputs sent back, the order of a turn's tool results, the `<total_tokens>` reminders.

mod common;

use std::path::PathBuf;

use common::fake_server::{Canned, FakeServer, Recorded};
use common::{stderr, Workspace};
use serde_json::{json, Value};

/// The project path the recorder runs Claude Code in; reloop's runs use their workspace.
const RECORDED_CWD: &str = "/tmp/reloop-cc-project";

struct Recording {
    scenario: Value,
    /// What Claude Code printed (stream-json), line by line.
    stdout: Vec<Value>,
    /// The Messages API requests Claude Code sent, in order.
    requests: Vec<Value>,
}

fn recording(version: &str, name: &str) -> Recording {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/print/recorded").join(version).join(name);
    let read = |file: &str| std::fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("{dir:?}/{file}: {e}"));
    let scenario: Value = serde_json::from_str(&read("scenario.json")).unwrap();
    let requests = read("requests.jsonl")
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["method"] == "POST" && r["path"].as_str().is_some_and(|p| p.starts_with("/v1/messages")))
        .collect();
    let stdout = read("stdout.jsonl").lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    Recording { scenario, stdout, requests }
}

impl Recording {
    /// The messages of request `n` exactly as Claude Code sent them (`messages_raw`: numbers as
    /// spelled, keys in order).
    fn messages(&self, n: usize) -> Vec<Value> {
        let raw = self.requests[n]["messages_raw"].as_str().expect("recorded with full_texts");
        serde_json::from_str(raw).unwrap()
    }
}

/// One answer of the recorder's fake server, rebuilt: the same ids, usage and streamed input.
fn canned(step: &Value, seq: usize, tool_seq: &mut usize, cwd: &str) -> Canned {
    let step: Value = serde_json::from_str(&step.to_string().replace(RECORDED_CWD, cwd)).unwrap();
    if let Some(status) = step["status"].as_u64() {
        let headers = step["headers"]
            .as_object()
            .map(|h| h.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string())).collect())
            .unwrap_or_default();
        let body = json!({"type": "error", "error": {"type": step["error_type"], "message": step["message"]}});
        return Canned::Error { status: u16::try_from(status).unwrap(), headers, body };
    }
    let blocks =
        step["blocks"].as_array().cloned().unwrap_or_else(|| vec![json!({"type": "text", "text": step["text"]})]);
    let mut usage = json!({"input_tokens": 120, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 25});
    if let Some(extra) = step["usage"].as_object() {
        for (k, v) in extra {
            usage[k] = v.clone();
        }
    }
    let stop = step["stop"].as_str().map(str::to_string).unwrap_or_else(|| {
        if blocks.iter().any(|b| b["type"] == "tool_use") { "tool_use" } else { "end_turn" }.to_string()
    });
    let mut out = String::new();
    let mut event = |name: &str, data: Value| out.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    let mut start_usage = usage.clone();
    start_usage["output_tokens"] = json!(1);
    event(
        "message_start",
        json!({"type": "message_start", "message": {"id": format!("msg_fake_{seq:03}"), "type": "message", "role": "assistant",
            "model": "claude", "content": [], "stop_reason": null, "stop_sequence": null, "usage": start_usage}}),
    );
    for (i, block) in blocks.iter().enumerate() {
        match block["type"].as_str() {
            Some("tool_use") => {
                *tool_seq += 1;
                let name = block["name"].as_str().unwrap();
                let id = format!("toolu_{:02}_{}", tool_seq, name.to_uppercase());
                event(
                    "content_block_start",
                    json!({"type": "content_block_start", "index": i, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
                );
                let raw = block["raw_input"].as_str().map(str::to_string).unwrap_or_else(|| block["input"].to_string());
                let chars: Vec<char> = raw.chars().collect();
                for part in chars.chunks(30) {
                    let part: String = part.iter().collect();
                    event(
                        "content_block_delta",
                        json!({"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": part}}),
                    );
                }
            }
            _ => {
                event(
                    "content_block_start",
                    json!({"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}}),
                );
                event(
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": block["text"]}}),
                );
            }
        }
        event("content_block_stop", json!({"type": "content_block_stop", "index": i}));
    }
    event(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": usage["output_tokens"]}}),
    );
    event("message_stop", json!({"type": "message_stop"}));
    Canned::Sse(out)
}

/// reloop's run of the recorded scenario: its prompt, flags and environment, the recorded
/// answers in the recorded order.
struct Run {
    requests: Vec<Recorded>,
    /// What reloop printed (stream-json), line by line.
    lines: Vec<Value>,
    code: Option<i32>,
    ws: Workspace,
}

fn run(version: &str, rec: &Recording) -> Run {
    let ws = Workspace::seed();
    std::fs::create_dir_all(ws.cwd().join("src/auth")).unwrap();
    std::fs::write(
        ws.cwd().join("src/auth/logout.ts"),
        "export function logout(): void {\n  // TODO: clear the session\n}\n",
    )
    .unwrap();
    let cwd = ws.cwd().to_string_lossy().into_owned();
    let mut tool_seq = 0;
    let answers =
        rec.requests.iter().enumerate().map(|(i, r)| canned(&r["answer"], i + 1, &mut tool_seq, &cwd)).collect();
    let server = FakeServer::start(answers);
    let sc = &rec.scenario;
    let flags: Vec<String> =
        sc["flags"].as_array().into_iter().flatten().map(|f| f.as_str().unwrap().replace(RECORDED_CWD, &cwd)).collect();
    let mut cmd = ws.command(&["-p", sc["prompt"].as_str().unwrap(), "--output-format", "stream-json", "--verbose"]);
    cmd.args(["--compat", &format!("claude-code-{version}")]).args(&flags).stdin(std::process::Stdio::null());
    for (k, v) in sc["env_extra"].as_object().into_iter().flatten() {
        cmd.env(k, v.as_str().unwrap());
    }
    let out = cmd.env("ANTHROPIC_BASE_URL", &server.url).env("ANTHROPIC_API_KEY", "test-key").output().unwrap();
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    let lines = common::stdout(&out).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    Run { requests: server.requests(), lines, code: out.status.code(), ws }
}

impl Run {
    fn messages(&self, n: usize) -> Vec<Value> {
        self.requests[n].body["messages"].as_array().cloned().unwrap_or_default()
    }

    fn replays_identical(&self) -> bool {
        self.ws.reloop(&["replay", "last"]).status.code() == Some(0)
    }
}

/// Every `tool_use` input of these messages as JSON text (key order and number spelling kept),
/// the project path written as `<cwd>` (and an unparsed input's `len` counted after that).
fn tool_inputs(messages: &[Value], cwd: &str) -> Vec<String> {
    messages
        .iter()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|b| b["type"] == "tool_use")
        .map(|b| {
            let mut input: Value = serde_json::from_str(&b["input"].to_string().replace(cwd, "<cwd>")).unwrap();
            if let Some(unparsed) = input.get_mut("__unparsedToolInput") {
                let len = unparsed["raw"].as_str().unwrap_or_default().encode_utf16().count();
                unparsed["len"] = json!(len);
            }
            serde_json::to_string(&input).unwrap()
        })
        .collect()
}

/// The `tool_use_id`s of the last message's `tool_result` blocks, in order.
fn result_order(messages: &[Value]) -> Vec<String> {
    let last = messages.iter().rev().find(|m| m["role"] == "user").cloned().unwrap_or(Value::Null);
    last["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|b| b["type"] == "tool_result")
        .map(|b| b["tool_use_id"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn tool_inputs_match(version: &str, variant: &str) {
    let rec = recording(version, &format!("tool_inputs/{variant}"));
    let r = run(version, &rec);
    assert_eq!(r.requests.len(), rec.requests.len(), "as many requests as Claude Code");
    let cwd = r.ws.cwd().to_string_lossy().into_owned();
    for n in 1..rec.requests.len() {
        assert_eq!(
            tool_inputs(&r.messages(n), &cwd),
            tool_inputs(&rec.messages(n), RECORDED_CWD),
            "request {}: the tool inputs sent back",
            n + 1
        );
    }
    // What an SDK app reads: the assistant lines' tool inputs (issue 36: `15.0` printed as `15`).
    let printed = |lines: &[Value]| -> Vec<Value> {
        lines.iter().filter(|l| l["type"] == "assistant").map(|l| l["message"].clone()).collect()
    };
    // (An input that did not parse is printed as Claude Code sends it, `{"__unparsedToolInput":
    // …}`, where reloop prints the raw string: an output-side difference, not compared here.)
    if variant == "spelling" {
        assert_eq!(tool_inputs(&printed(&r.lines), &cwd), tool_inputs(&printed(&rec.stdout), RECORDED_CWD), "stdout");
    }
    assert_eq!(r.code, Some(0));
    assert!(r.replays_identical());
}

#[test]
fn tool_inputs_are_sent_back_as_2_1_197_sends_them() {
    tool_inputs_match("2.1.197", "spelling");
}

#[test]
fn tool_inputs_are_sent_back_as_2_1_332_sends_them() {
    tool_inputs_match("2.1.332", "spelling");
}

#[test]
fn inputs_that_are_no_object_are_sent_back_as_2_1_197_sends_them() {
    tool_inputs_match("2.1.197", "invalid");
}

#[test]
fn inputs_that_are_no_object_are_sent_back_as_2_1_332_sends_them() {
    tool_inputs_match("2.1.332", "invalid");
}

fn results_in_recorded_order(version: &str, variant: &str) {
    let rec = recording(version, &format!("concurrent_results/{variant}"));
    let r = run(version, &rec);
    assert_eq!(r.requests.len(), rec.requests.len());
    let last = rec.requests.len() - 1;
    let recorded = result_order(&rec.messages(last));
    assert!(recorded.len() >= 2, "a concurrent turn was recorded");
    assert_eq!(result_order(&r.messages(last)), recorded, "the results in Claude Code's order");
    assert!(r.replays_identical());
}

#[test]
fn concurrent_results_go_back_as_they_completed_2_1_197() {
    results_in_recorded_order("2.1.197", "slow_first");
}

#[test]
fn concurrent_results_go_back_as_they_completed_2_1_332() {
    results_in_recorded_order("2.1.332", "slow_first");
}

#[test]
fn a_mixed_turn_s_results_in_claude_code_s_order_2_1_197() {
    results_in_recorded_order("2.1.197", "mixed");
}

#[test]
fn a_mixed_turn_s_results_in_claude_code_s_order_2_1_332() {
    results_in_recorded_order("2.1.332", "mixed");
}

/// Every `<total_tokens>` reminder of request `messages`, with where it sits: `first message
/// before the prompt`, `first message after the prompt`, or `tool result`.
fn total_tokens(messages: &[Value], prompt: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let Some(blocks) = m["content"].as_array() else { continue };
        let prompt_at = blocks.iter().position(|b| b["text"] == prompt);
        for (j, b) in blocks.iter().enumerate() {
            let text = match b["type"].as_str() {
                Some("text") => b["text"].as_str(),
                Some("tool_result") => b["content"].as_str(),
                _ => None,
            };
            let Some(text) = text else { continue };
            let Some(at) = text.find("<total_tokens>") else { continue };
            let end = text[at..].find("</total_tokens>").map_or(text.len(), |e| at + e + "</total_tokens>".len());
            let place = match (b["type"].as_str(), i, prompt_at) {
                (Some("tool_result"), ..) => "tool result",
                (_, 0, Some(p)) if j < p => "first message, before the prompt",
                (_, 0, _) => "first message, after the prompt",
                _ => "elsewhere",
            };
            out.push((place.to_string(), text[at..end].to_string()));
        }
    }
    out
}

fn total_tokens_match(version: &str) {
    let rec = recording(version, "total_tokens/sonnet");
    let r = run(version, &rec);
    assert_eq!(r.requests.len(), rec.requests.len());
    let prompt = rec.scenario["prompt"].as_str().unwrap();
    for n in 0..rec.requests.len() {
        let ours = total_tokens(&r.messages(n), prompt);
        assert_eq!(ours, total_tokens(&rec.messages(n), prompt), "request {}", n + 1);
        if version == "2.1.332" {
            assert!(!ours.is_empty(), "a reminder in every request");
        }
    }
    assert!(r.replays_identical());
}

#[test]
fn total_tokens_reminders_where_and_as_2_1_332_sends_them() {
    total_tokens_match("2.1.332");
}

#[test]
fn no_total_tokens_reminder_under_2_1_197() {
    total_tokens_match("2.1.197");
}

#[test]
fn the_rebuilt_answers_are_the_recorded_ones() {
    // The harness itself: an answer rebuilt from a recorded step streams the recorded raw input.
    let step = json!({"blocks": [{"type": "tool_use", "name": "Read", "input": {}, "raw_input": "{\"limit\": 5.0}"}]});
    let Canned::Sse(sse) = canned(&step, 1, &mut 0, "/ws") else { panic!("an SSE answer") };
    let partial: String = sse
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str::<Value>(d).unwrap())
        .filter_map(|d| d["delta"]["partial_json"].as_str().map(str::to_string))
        .collect();
    assert_eq!(partial, "{\"limit\": 5.0}");
    assert!(sse.contains("toolu_01_READ"));
}

/// Where `cache_control` sits in these messages: (messages from the end, blocks from the end
/// of that message), and whether the last message is a plain string.
fn cache_marks(messages: &[Value]) -> (Vec<(usize, usize)>, bool) {
    let mut marks = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let Some(blocks) = m["content"].as_array() else { continue };
        for (j, b) in blocks.iter().enumerate() {
            if b.get("cache_control").is_some() {
                marks.push((messages.len() - 1 - i, blocks.len() - 1 - j));
            }
        }
    }
    (marks, messages.last().is_some_and(|m| m["content"].is_string()))
}

/// The text blocks of the last message (the summary instruction is the last of them).
fn last_texts(messages: &[Value]) -> Vec<String> {
    let last = messages.last().cloned().unwrap_or(Value::Null);
    last["content"].as_array().into_iter().flatten().filter_map(|b| b["text"].as_str().map(str::to_string)).collect()
}

fn compaction_matches(version: &str, variant: &str) {
    let rec = recording(version, &format!("compaction/{variant}"));
    let r = run(version, &rec);
    assert_eq!(r.requests.len(), rec.requests.len(), "as many requests as Claude Code");
    let compact = rec.requests.iter().position(|q| q["kind"] == "compact").expect("a summary request");
    let (ours, theirs) = (r.messages(compact), rec.messages(compact));
    assert_eq!(last_texts(&ours).last(), last_texts(&theirs).last(), "the summary instruction, word for word");
    assert_eq!(cache_marks(&ours), cache_marks(&theirs), "cache_control in the summary request");
    assert_eq!(r.code, Some(0));
    assert!(r.replays_identical());
}

#[test]
fn auto_compaction_s_summary_request_as_2_1_197_sends_it() {
    // `CLAUDE_CODE_AUTO_COMPACT_WINDOW=200000`: 190,000 input tokens pass the threshold.
    compaction_matches("2.1.197", "auto");
}

#[test]
fn auto_compaction_s_summary_request_as_2_1_332_sends_it() {
    compaction_matches("2.1.332", "auto");
}

const SUMMARY_PREAMBLE: &str = "This session is being continued from a previous conversation";
const TRANSCRIPT_AT: &str = "read the full transcript at: ";

/// The summary message in these messages: its text with the transcript path it names put as
/// `<transcript>`, the path, and whether the message went as a plain string.
fn summary_sent(messages: &[Value]) -> (String, Option<String>, bool) {
    let (text, string) = messages
        .iter()
        .find_map(|m| match &m["content"] {
            Value::String(s) if s.starts_with(SUMMARY_PREAMBLE) => Some((s.clone(), true)),
            Value::Array(blocks) => blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .find(|t| t.starts_with(SUMMARY_PREAMBLE))
                .map(|t| (t.to_string(), false)),
            _ => None,
        })
        .expect("a summary message");
    let Some(at) = text.find(TRANSCRIPT_AT).map(|a| a + TRANSCRIPT_AT.len()) else { return (text, None, string) };
    let end = at + text[at..].find('\n').unwrap_or(text.len() - at);
    let path = text[at..end].to_string();
    (format!("{}<transcript>{}", &text[..at], &text[end..]), Some(path), string)
}

/// The summary message the model is sent after a compaction is the recorded one word for
/// word, in the recorded form (2.1.332: a plain string), and names the session file reloop
/// writes (none when the version leaves the paragraph out).
fn summary_message_matches(version: &str, variant: &str) {
    let rec = recording(version, &format!("compaction/{variant}"));
    let r = run(version, &rec);
    assert_eq!(r.requests.len(), rec.requests.len());
    let after = rec.requests.iter().position(|q| q["kind"] == "compact").expect("a summary request") + 1;
    let (theirs, their_path, their_string) = summary_sent(&rec.messages(after));
    let (ours, our_path, our_string) = summary_sent(&r.messages(after));
    assert_eq!(ours, theirs, "the summary message");
    assert_eq!(our_string, their_string, "a plain string or blocks");
    let session = r.lines[0]["session_id"].as_str().unwrap();
    let recorded_session = rec.scenario["outcome"]["session_id"].as_str().unwrap();
    assert_eq!(
        their_path,
        their_path
            .as_ref()
            .map(|_| format!("/tmp/reloop-cc-home/.claude/projects/-tmp-reloop-cc-project/{recorded_session}.jsonl"))
    );
    assert_eq!(our_path.is_some(), their_path.is_some(), "the transcript named or not");
    let persisted = !rec.scenario["flags"].as_array().into_iter().flatten().any(|f| f == "--no-session-persistence");
    if let Some(path) = our_path {
        let projects = r.ws.claude_dir().join("projects");
        assert!(path.starts_with(projects.to_str().unwrap()), "{path}");
        assert!(path.ends_with(&format!("/{session}.jsonl")), "{path}");
        // The file it names is the session's own, written unless persistence is off.
        assert_eq!(std::path::Path::new(&path).is_file(), persisted, "{path}");
    }
    assert!(r.replays_identical());
}

#[test]
fn the_summary_message_names_the_session_file_as_2_1_197_words_it() {
    summary_message_matches("2.1.197", "reactive");
    summary_message_matches("2.1.197", "auto");
}

#[test]
fn the_summary_message_as_2_1_332_sends_it_a_plain_string_naming_the_session_file() {
    summary_message_matches("2.1.332", "reactive");
    summary_message_matches("2.1.332", "auto");
}

#[test]
fn without_session_persistence_2_1_197_still_names_a_file_and_2_1_332_does_not() {
    // Recorded with `--no-session-persistence` (compaction/no_persistence): 2.1.197 names the
    // file it does not write; 2.1.332 leaves the paragraph out.
    summary_message_matches("2.1.197", "no_persistence");
    summary_message_matches("2.1.332", "no_persistence");
}

#[test]
fn reactive_compaction_s_summary_request_as_2_1_197_sends_it() {
    compaction_matches("2.1.197", "reactive");
}

#[test]
fn reactive_compaction_s_summary_request_as_2_1_332_sends_it() {
    compaction_matches("2.1.332", "reactive");
}

/// Where `cache_control` sits among the messages that are not `role: "system"` (Claude Code
/// sends system messages of product texts reloop does not: environment, agent types), and the
/// forms of the system messages (`true`: a plain string).
fn marks_beside_system(messages: &[Value]) -> (Vec<(usize, usize)>, Vec<bool>) {
    let others: Vec<Value> = messages.iter().filter(|m| m["role"] != "system").cloned().collect();
    let forms = messages.iter().filter(|m| m["role"] == "system").map(|m| m["content"].is_string()).collect();
    (cache_marks(&others).0, forms)
}

#[test]
fn cache_breakpoints_and_system_messages_through_a_compaction_as_2_1_197_sends_them() {
    let rec = recording("2.1.197", "compaction/reactive");
    let r = run("2.1.197", &rec);
    assert_eq!(r.requests.len(), rec.requests.len());
    for n in 0..rec.requests.len() {
        let (ours, theirs) = (marks_beside_system(&r.messages(n)), marks_beside_system(&rec.messages(n)));
        assert_eq!(ours.0, theirs.0, "request {}: cache_control", n + 1);
        assert!(theirs.1.iter().all(|s| *s), "2.1.197 sends every system message as a string");
        assert!(ours.1.iter().all(|s| *s), "request {}: every system message a string", n + 1);
    }
    assert!(r.messages(4).last().is_some_and(|m| m["role"] == "system"), "the files read, given back last");
}

#[test]
fn cache_breakpoints_up_to_the_summary_request_as_2_1_332_sends_them() {
    // After the summary, 2.1.332's breakpoint is on a trailing system message of product texts
    // (deferred tools, agent types, environment) reloop does not send.
    let rec = recording("2.1.332", "compaction/reactive");
    let r = run("2.1.332", &rec);
    assert_eq!(r.requests.len(), rec.requests.len());
    for n in 1..4 {
        let (ours, theirs) = (marks_beside_system(&r.messages(n)), marks_beside_system(&rec.messages(n)));
        assert_eq!(ours.0, theirs.0, "request {}: cache_control", n + 1);
    }
}
