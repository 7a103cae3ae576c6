//! The hooks recordings (`tests/print/recorded/<version>/hooks_events/`, and other families'
//! hook scenarios) played on `reloop -p` as the recorder played the real CLI: the scenario's
//! files, settings and model answers laid out again, what the hooks read and what was printed
//! and sent gathered for comparison (tests/hooks_session_events.rs).

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::fake_server::{sse_from_message, Canned, FakeServer};
use super::{reloop_bin, stderr, Workspace};

pub const VERSIONS: [&str; 2] = ["2.1.332", "2.1.197"];
pub const PROMPT: &str = "检查登录模块";

/// A scenario of `hooks_events`, or of another family when it is named `FAMILY/SCENARIO`.
pub fn recorded_dir(version: &str, scenario: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/print/recorded").join(version);
    match scenario.contains('/') {
        true => root.join(scenario),
        false => root.join("hooks_events").join(scenario),
    }
}

pub fn json_lines(text: &str) -> Vec<Value> {
    serde_json::Deserializer::from_str(text).into_iter::<Value>().filter_map(Result::ok).collect()
}

/// One recorded scenario played on reloop.
pub struct Played {
    /// reloop's stdout lines.
    pub lines: Vec<Value>,
    /// The same session's replayed stream.
    pub replayed: Vec<Value>,
    /// Claude Code's stdout lines.
    pub recorded: Vec<Value>,
    /// What reloop's hooks read, in order (the `input` of each logged run).
    pub inputs: Vec<Value>,
    /// Claude Code's, likewise.
    pub recorded_inputs: Vec<Value>,
    /// The requests reloop sent.
    pub requests: Vec<Value>,
    /// The session file print mode wrote last (under `$HOME/.claude/projects/`), as lines.
    pub session_file: Vec<Value>,
    /// `reloop rerun last`: its exit code and output (0: every request as recorded).
    pub rerun: (Option<i32>, String),
    /// The hooks' directory in this workspace (in place of the recording's `/tmp/reloop-cc-hooks`).
    pub hooks_dir: String,
    /// The project's folder in this workspace (in place of the recording's `/tmp/reloop-cc-project`).
    pub cwd: String,
    pub replays_identical: bool,
}

/// Plays `scenario` under `version`'s profile: its hook scripts and settings, its prompt, and a
/// model that answers with the scenario's top-level steps (tool calls whose paths are moved into
/// the workspace).
pub fn play(version: &str, scenario: &str) -> Played {
    let dir = recorded_dir(version, scenario);
    let spec: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("scenario.json")).unwrap()).unwrap();
    let ws = Workspace::seed();
    let hooks_dir = ws.dir.path().join("hooks").display().to_string();
    let cwd = ws.cwd().display().to_string();
    let place = |text: &str| text.replace("/tmp/reloop-cc-hooks", &hooks_dir).replace("/tmp/reloop-cc-project", &cwd);
    let mut files = spec["files"].as_object().cloned().unwrap_or_default();
    files.insert("/tmp/reloop-cc-hooks/stop.sh".into(), json!(super::RECORDER_STOP_HOOK));
    // The recorder's seed files, as it wrote them.
    for (rel, text) in super::RECORDER_SEED_FILES {
        files.insert(format!("/tmp/reloop-cc-project/{rel}"), json!(text));
    }
    for (path, text) in &files {
        let path = PathBuf::from(place(path));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, place(text.as_str().unwrap())).unwrap();
        if path.extension().is_some_and(|e| e == "sh") {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }
    // The recorder writes its project's files within a millisecond, and dates some apart
    // (`mtimes`): a compaction gives files back by when they were last changed.
    let seeded = std::time::SystemTime::now();
    let dated =
        |rel: &str| spec["mtimes"][rel].as_u64().map(|s| std::time::UNIX_EPOCH + std::time::Duration::from_secs(s));
    let project: Vec<String> = super::RECORDER_SEED_FILES
        .iter()
        .map(|(rel, _)| rel.to_string())
        .chain(files.keys().filter_map(|p| p.strip_prefix("/tmp/reloop-cc-project/").map(str::to_string)))
        .collect();
    for rel in project {
        let file = std::fs::File::options().write(true).open(ws.cwd().join(&rel)).unwrap();
        file.set_modified(dated(&rel).unwrap_or(seeded)).unwrap();
    }
    // The main thread's and a subagent's answers alike, in the order they are asked for.
    let steps = spec["steps"].as_array().map(Vec::as_slice).unwrap_or_default().iter();
    let answers: Vec<Canned> = steps
        .enumerate()
        .map(|(i, step)| {
            let (content, stop) = match step.get("blocks") {
                Some(blocks) => {
                    let blocks: Vec<Value> = blocks
                        .as_array()
                        .unwrap()
                        .iter()
                        .enumerate()
                        .map(|(j, b)| {
                            if b["type"] == "text" {
                                return b.clone();
                            }
                            let input: Value = serde_json::from_str(&place(&b["input"].to_string())).unwrap();
                            json!({"type": "tool_use", "id": format!("toolu_{i}_{j}"), "name": b["name"], "input": input})
                        })
                        .collect();
                    (json!(blocks), "tool_use")
                }
                None => (json!([{"type": "text", "text": step["text"]}]), "end_turn"),
            };
            // The recorded usage where the scenario gives one (an answer that fills the context).
            let mut usage = json!({"input_tokens": 1, "output_tokens": 1});
            for (key, value) in step.get("usage").and_then(Value::as_object).into_iter().flatten() {
                usage[key] = value.clone();
            }
            Canned::Sse(sse_from_message(&json!({"id": format!("m{i}"), "type": "message", "role": "assistant",
                "model": "m", "content": content, "stop_reason": stop, "stop_sequence": null,
                "usage": usage})))
        })
        .collect();
    // Then the scenario's default answer, as the recorder's server gave it once the steps ran out.
    let mut answers = answers;
    if let Some(text) = spec["defaults"]["main"]["text"].as_str() {
        let answer = json!({"id": "m_default", "type": "message", "role": "assistant", "model": "m",
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": null,
            "usage": {"input_tokens": 1, "output_tokens": 1}});
        answers.extend((0..8).map(|_| Canned::Sse(sse_from_message(&answer))));
    }
    let server = FakeServer::start(answers);
    let home = tempfile::tempdir().unwrap();
    let command = |args: &[&str]| {
        let mut command = reloop_bin();
        command
            .args(args)
            .env("RELOOP_JOURNAL", ws.journal())
            .env("HOME", home.path())
            .env("ANTHROPIC_BASE_URL", &server.url)
            .env("ANTHROPIC_API_KEY", "sk-test")
            .current_dir(ws.cwd());
        for (key, value) in spec["env"].as_object().into_iter().flatten() {
            command.env(key, value.as_str().unwrap());
        }
        command
    };
    let run = |args: &[&str]| command(args).output().unwrap();
    let compat = format!("claude-code-{version}");
    let settings = place(&spec["settings"].to_string());
    let mut args = vec!["-p", "--output-format", "stream-json", "--verbose", "--compat", &compat];
    // A scenario with no settings of its own is played with none.
    if !spec["settings"].is_null() {
        args.extend(["--settings", &settings]);
    }
    args.extend(spec["flags"].as_array().into_iter().flatten().filter_map(Value::as_str));
    let out = match spec["input"].as_array() {
        // A stream-json session: each message sent once the last query's result is out, as the
        // recorder sent them, then stdin closed.
        Some(actions) => {
            use std::io::{BufRead, Write};
            args.extend(["--input-format", "stream-json"]);
            let mut child = command(&args)
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            let mut stdin = child.stdin.take().unwrap();
            let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
            let mut seen = String::new();
            for message in actions.iter().filter_map(|a| a.get("send")) {
                writeln!(stdin, "{message}").unwrap();
                loop {
                    let mut line = String::new();
                    assert!(stdout.read_line(&mut line).unwrap() > 0, "{version} {scenario}: {seen}");
                    seen.push_str(&line);
                    if line.contains("\"type\":\"result\"") {
                        break;
                    }
                }
            }
            drop(stdin);
            let mut rest = String::new();
            std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
            seen.push_str(&rest);
            let mut out = child.wait_with_output().unwrap();
            out.stdout = seen.into_bytes();
            out
        }
        None => {
            args.insert(1, spec["prompt"].as_str().unwrap_or(PROMPT));
            run(&args)
        }
    };
    assert!(out.status.success(), "{version} {scenario}: {}", stderr(&out));
    let replayed = run(&["replay", "last", "--output-format", "stream-json"]);
    assert!(replayed.status.success(), "{version} {scenario}: {}", stderr(&replayed));
    let mut inputs = Vec::new();
    for n in 1.. {
        let Ok(text) = std::fs::read_to_string(Path::new(&hooks_dir).join(format!("input-{n}.json"))) else { break };
        inputs.push(unwrapped(serde_json::from_str::<Value>(&text).unwrap()));
    }
    let recorded_inputs = match std::fs::read_to_string(dir.join("hook-inputs.jsonl")) {
        Ok(text) => json_lines(&text).into_iter().map(unwrapped).collect(),
        Err(_) => Vec::new(),
    };
    Played {
        lines: json_lines(&String::from_utf8_lossy(&out.stdout)),
        replayed: json_lines(&String::from_utf8_lossy(&replayed.stdout)),
        recorded: json_lines(&std::fs::read_to_string(dir.join("stdout.jsonl")).unwrap()),
        inputs,
        recorded_inputs,
        requests: server.requests().into_iter().map(|r| r.body).collect(),
        session_file: last_session_file(&home.path().join(".claude/projects")),
        rerun: {
            let out = run(&["rerun", "last", "--no-pager"]);
            (out.status.code(), format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out)))
        },
        hooks_dir,
        cwd,
        replays_identical: ws.replays_identical(),
    }
}

/// A hook's input as logged: `ev.sh` wraps it (`{"_tag", "_env", "input"}`), `stop.sh` does not.
pub fn unwrapped(logged: Value) -> Value {
    match logged.get("input") {
        Some(input) => input.clone(),
        None => logged,
    }
}

/// A line's kind: `type`, or `system/SUBTYPE`.
pub fn kind(line: &Value) -> String {
    match (line["type"].as_str().unwrap_or_default(), line["subtype"].as_str()) {
        ("system", Some(subtype)) => format!("system/{subtype}"),
        (kind, _) => kind.to_string(),
    }
}

pub fn kinds(lines: &[Value]) -> Vec<String> {
    lines.iter().map(kind).collect()
}

/// The session events' hook inputs as compared: the event, its source or reason, the prompt,
/// and whether it was the process's first session's.
pub fn session_events(inputs: &[Value]) -> Vec<Value> {
    let first = &inputs[0]["session_id"];
    let seen =
        |i: &Value| json!([i["hook_event_name"], i["source"], i["reason"], i["prompt"], i["session_id"] == *first]);
    inputs.iter().map(seen).collect()
}

/// The keys of a hook input, in order, less those reloop has no value for.
pub fn keys(input: &Value) -> Vec<String> {
    input.as_object().unwrap().keys().filter(|k| *k != "prompt_id" && *k != "effort").cloned().collect()
}

/// `text` with the recording's paths and this workspace's made alike.
pub fn same_paths(text: &str, hooks_dir: &str) -> String {
    text.replace(hooks_dir, "/tmp/reloop-cc-hooks")
}

/// How 2.1.197's context reminder opens.
pub const CONTEXT: &str = "<system-reminder>\nAs you answer the user's questions";

/// The texts of each request's last user message that are the prompt or a local command's
/// lines, and where 2.1.197's context reminder sits among them (`<context>`, its date aside):
/// Claude Code's product reminders (other `<system-reminder>` blocks) left out, a text the
/// recorder kept only the digest of (over 2,000 characters) elided alike. `context`: whether
/// the context reminder is compared (2.1.332 words its context otherwise; docs/profiles.md).
pub fn prompt_lines(requests: &[Value], context: bool) -> Vec<Vec<String>> {
    let text = |b: &Value| match &b["text"] {
        Value::String(t) if t.chars().count() <= 2000 => Some(t.clone()),
        Value::String(_) | Value::Object(_) => Some("<elided>".to_string()),
        _ => None,
    };
    requests
        .iter()
        .map(|body| {
            let messages = body["messages"].as_array().cloned().unwrap_or_default();
            let last = messages.iter().rev().find(|m| m["role"] == "user").cloned().unwrap_or_default();
            let blocks = match &last["content"] {
                Value::String(text) => vec![text.clone()],
                Value::Array(blocks) => blocks.iter().filter_map(text).collect(),
                _ => Vec::new(),
            };
            blocks
                .into_iter()
                .filter_map(|t| match t.starts_with("<system-reminder>") {
                    true => (context && t.starts_with(CONTEXT)).then(|| "<context>".to_string()),
                    false => Some(t),
                })
                .collect()
        })
        .collect()
}

/// The bodies of the requests a recording's server received.
pub fn recorded_requests(version: &str, scenario: &str) -> Vec<Value> {
    let path = recorded_dir(version, scenario).join("requests.jsonl");
    let text = std::fs::read_to_string(path).unwrap();
    text.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()["body"].clone()).collect()
}

/// The lines of the session file last written under `projects` (a subagent's aside).
fn last_session_file(projects: &Path) -> Vec<Value> {
    let mut files = Vec::new();
    for project in std::fs::read_dir(projects).into_iter().flatten().flatten() {
        for file in std::fs::read_dir(project.path()).into_iter().flatten().flatten() {
            let path = file.path();
            if path.extension().is_some_and(|e| e == "jsonl") {
                let modified = file.metadata().and_then(|m| m.modified()).ok();
                files.push((modified, path));
            }
        }
    }
    files.sort();
    files.last().map_or_else(Vec::new, |(_, path)| json_lines(&std::fs::read_to_string(path).unwrap()))
}
