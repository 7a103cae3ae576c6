//! Print mode against the real Claude Code, recording by recording. Every fixture folder under
//! `tests/print/recorded/<version>/` and `crates/reloop-import/tests/recorded/<version>/` holds
//! what the real CLI of that version did (`scenario.json`: argv, env, the fake server's script;
//! `stdout.jsonl`; `requests.jsonl`). This test runs the same arguments and environment through
//! `reloop -p` under the version's profile, against a fake server on 127.0.0.1 that plays the
//! same script (tests/print/player.rs), and compares the two structurally: stdout's lines (types,
//! order, texts, the result's fields) and the requests (kinds, models, limits, messages).
//! Session ids, uuids, timestamps, durations, costs, token counts and the port are left out.
//!
//! A difference is allowed only when [`DELIBERATE`] lists it; each entry names the section of
//! docs/profiles.md ("Print mode against the recordings") that gives its reason. An entry that no
//! longer matches any difference fails the test too, so the list only ever shrinks honestly.

mod common;
#[path = "print/player.rs"]
mod player;
#[path = "print/views.rs"]
mod views;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use player::Player;
use serde_json::{json, Value};
use views::{
    background_lines_at_their_end, boundary_links, line_view, message_output_configs, re_date, re_estimate,
    re_request_id, re_task_output, re_transcript, request_view, short, tool_use_results,
};

/// The recorder's fixed paths (scripts/record-claude-code/record.py).
const PROJECT: &str = "/tmp/reloop-cc-project";
const HOOKS: &str = "/tmp/reloop-cc-hooks";
const HOME: &str = "/tmp/reloop-cc-home";

/// The differences kept on purpose or not reproduced yet: (fixture, a piece of the difference's
/// text, docs/profiles.md's reason). `fixture` is a prefix of `VERSION/NAME` (empty: every
/// recording); each reason is a bullet of docs/profiles.md, "Print mode against the recordings".
const DELIBERATE: &[(&str, &str, &str)] = &[
    ("2.1.332/error_endings/invalid_request", "requests: claude 7, reloop 4", "a 400 it has no words for"),
    ("2.1.332/subagent/failed", "requests: claude 8, reloop 5", "a 400 it has no words for"),
    // Its fifth request is the child's try without deferred tools; reloop's, the parent's next.
    ("2.1.332/subagent/failed", "request 4", "a 400 it has no words for"),
];

struct Fixture {
    dir: PathBuf,
    /// `VERSION/NAME`.
    id: String,
    version: String,
    scenario: Value,
}

/// Families recorded for other issues' tests and compared there, field by field as those
/// features need; this test leaves them out. Played through here they differ still (49 and 47 of
/// the 82 recordings of each version matched when they were added): built-in slash commands
/// reach the model (tests/hooks_session_events.rs holds the session events' hooks), 2.1.197's
/// `[1m]` display of aliases, partial messages' `status` lines, and the context blocks Claude
/// Code adds (skills, deferred tools) are not reproduced (docs/settings.md, docs/sdk.md).
/// `parallel_tools` is left out too: two equally fast concurrent Reads come back in whichever
/// order they finish (flag 13), so its line order is timing; tests/sdk.rs counts its turns.
const COMPARED_ELSEWHERE: &[(&str, &str)] = &[
    ("settings_sources/", "tests/settings.rs"),
    ("settings_slash/", "tests/settings.rs"),
    ("hooks_events/", "tests/hooks_events.rs"),
    ("sdk_agents/", "tests/sdk_features.rs"),
    ("structured_output/", "tests/sdk_features.rs"),
    ("model_alias/", "tests/sdk_features.rs"),
    ("partial_messages/", "tests/sdk_features.rs"),
    ("thinking_env/", "tests/sdk_features.rs"),
    ("tool_inputs/", "tests/conformance_requests.rs"),
    ("concurrent_results/", "tests/conformance_requests.rs"),
    ("total_tokens/", "tests/conformance_requests.rs"),
    ("model_fallback/answered_by_other_model", "tests/numbers.rs"),
    ("parallel_tools/", "tests/sdk.rs"),
    // The SDK's wire details: queued messages and MCP results there; `origin` and a command's
    // front matter are recorded but not reproduced yet (docs/sdk.md lists both).
    ("sdk_wire/", "tests/sdk_wire.rs"),
    // Local slash commands, compaction hooks, hook lines (scenarios_sdk36.py).
    ("sdk36/", "tests/sdk_local.rs, tests/hooks_session_events.rs"),
];

fn fixtures() -> Vec<Fixture> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for base in ["tests/print/recorded", "crates/reloop-import/tests/recorded"] {
        let mut stack = vec![root.join(base)];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            for entry in entries.flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.file_name().is_some_and(|n| n == "scenario.json") {
                    let scenario: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
                    let version = scenario["claude_code_version"].as_str().unwrap().to_string();
                    let name = scenario["name"].as_str().unwrap();
                    if COMPARED_ELSEWHERE.iter().any(|(family, _)| name.starts_with(family)) {
                        continue;
                    }
                    out.push(Fixture { dir: dir.clone(), id: format!("{version}/{name}"), version, scenario });
                }
            }
        }
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    out
}

/// A directory under /tmp whose path is exactly as long as `like`: texts that count characters
/// (a cut tool input's `len`) then agree once the path is put back.
fn same_length_dir(like: &str, prefix: &str) -> tempfile::TempDir {
    let rand = like.len() - "/tmp/".len() - prefix.len();
    tempfile::Builder::new().prefix(prefix).rand_bytes(rand).tempdir_in("/tmp").unwrap()
}

/// What reloop did with one recording's scenario.
struct Live {
    lines: Vec<Value>,
    /// stdout as printed.
    stdout: String,
    requests: Vec<player::Got>,
    code: Option<i32>,
    stderr: String,
    replayed: Vec<Value>,
    _dirs: Vec<tempfile::TempDir>,
}

fn run(fx: &Fixture) -> Live {
    let project = same_length_dir(PROJECT, "rlpr-");
    let hooks = same_length_dir(HOOKS, "rlph-");
    let home = tempfile::tempdir().unwrap();
    let (p, h) = (project.path().to_str().unwrap().to_string(), hooks.path().to_str().unwrap().to_string());
    // The recorder's seeds share one modification time; written one after the other here they
    // could differ by nanoseconds, and Glob lists the newest first.
    let seeded = std::time::SystemTime::now();
    for (rel, text) in common::RECORDER_SEED_FILES {
        let path = project.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        std::fs::File::options().write(true).open(&path).unwrap().set_modified(seeded).unwrap();
    }
    let script = hooks.path().join("stop.sh");
    std::fs::write(&script, common::RECORDER_STOP_HOOK.replace(HOOKS, &h)).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    // The scenario with the recorder's paths moved to this run's.
    let scenario: Value =
        serde_json::from_str(&fx.scenario.to_string().replace(PROJECT, &p).replace(HOOKS, &h)).unwrap();
    // The scenario's own files (hook scripts, servers), laid out as the recorder laid them out.
    let h_home = home.path().to_str().unwrap().to_string();
    common::lay_out_files(&scenario, |text| text.replace(HOME, &h_home));
    common::seed_git(&scenario, project.path());
    let settings = home.path().join("settings-under-test.json");
    if scenario.get("settings").is_some() {
        std::fs::write(&settings, scenario["settings"].to_string()).unwrap();
    }
    let player = Player::start(&scenario);
    let recorded_settings = format!("{HOME}/settings-under-test.json");
    let args: Vec<String> = scenario["argv"].as_array().unwrap()[1..]
        .iter()
        .map(|a| {
            let a = a.as_str().unwrap();
            if a == recorded_settings {
                settings.display().to_string()
            } else {
                a.to_string()
            }
        })
        .collect();
    let journal = home.path().join("journal.db");
    let mut cmd = common::reloop_bin();
    cmd.args(&args)
        .current_dir(project.path())
        .env("HOME", home.path())
        .env("RELOOP_JOURNAL", &journal)
        .env("RELOOP_COMPAT", format!("claude-code-{}", fx.version))
        .env("ANTHROPIC_BASE_URL", &player.url)
        .env("ANTHROPIC_API_KEY", "sk-ant-fake-key-for-recording")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in scenario["env_extra"].as_object().cloned().unwrap_or_default() {
        cmd.env(k, v.as_str().unwrap());
    }
    let child = cmd.spawn().unwrap();
    let out = wait_bounded(child, Duration::from_secs(180));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let lines = match text_output(fx) {
        true => Vec::new(),
        false => {
            text.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{}: {e}: {l}", fx.id))).collect()
        }
    };
    let replay = common::reloop_bin()
        .args(["replay", "last", "--output-format", "stream-json"])
        .current_dir(project.path())
        .env("HOME", home.path())
        .env("RELOOP_JOURNAL", &journal)
        .output()
        .unwrap();
    let replayed =
        String::from_utf8_lossy(&replay.stdout).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    Live {
        lines,
        stdout: text,
        requests: player.requests(),
        code: out.status.code(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        replayed,
        _dirs: vec![project, hooks, home],
    }
}

fn wait_bounded(mut child: std::process::Child, limit: Duration) -> std::process::Output {
    let started = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() || started.elapsed() > limit {
            let _ = child.kill();
            return child.wait_with_output().unwrap();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Puts the recorder's paths back and the port out of texts, so the two sides read alike.
fn normalize(value: &Value, live: Option<&Live>) -> Value {
    let mut s = value.to_string();
    if let Some(live) = live {
        let dirs: Vec<String> = live._dirs.iter().map(|d| d.path().display().to_string()).collect();
        s = s.replace(&dirs[0], PROJECT).replace(&dirs[1], HOOKS).replace(&dirs[2], HOME);
    }
    let re_port = |s: &str| {
        let mut out = String::new();
        let mut rest = s;
        while let Some(at) = rest.find("127.0.0.1:") {
            out.push_str(&rest[..at + 10]);
            rest = &rest[at + 10..];
            let digits = rest.chars().take_while(char::is_ascii_digit).count();
            out.push_str("PORT");
            rest = &rest[digits..];
        }
        out.push_str(rest);
        out
    };
    serde_json::from_str(&re_task_output(&re_request_id(&re_estimate(&re_transcript(&re_date(&re_port(&s))))))).unwrap()
}

/// The differences between the recording and reloop's run, each one line.
fn differences(fx: &Fixture, live: &Live) -> Vec<String> {
    let mut diffs = Vec::new();
    let read = |name: &str| -> Vec<Value> {
        std::fs::read_to_string(fx.dir.join(name))
            .unwrap()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let expected_code = fx.scenario["outcome"]["exit_code"].as_i64().map(|c| c as i32);
    if expected_code != live.code {
        diffs.push(format!("exit code: claude {expected_code:?}, reloop {:?} ({})", live.code, live.stderr.trim()));
    }
    // stdout: the result's fields one by one, the other lines in order.
    // `--output-format json --verbose` prints one array of lines: its lines are compared.
    let theirs: Vec<Value> = flattened(&read("stdout.jsonl")).iter().map(|l| normalize(l, None)).collect();
    let ours: Vec<Value> = flattened(&live.lines).iter().map(|l| normalize(l, Some(live))).collect();
    let (theirs, ours) = (background_lines_at_their_end(&theirs), background_lines_at_their_end(&ours));
    let results = |lines: &[Value]| -> Vec<Value> {
        lines.iter().filter(|l| l["type"] == "result").filter_map(line_view).collect()
    };
    let (rt, ro) = (results(&theirs), results(&ours));
    if rt.len() != ro.len() {
        diffs.push(format!("result lines: claude {}, reloop {}", rt.len(), ro.len()));
    }
    for (t, o) in rt.iter().zip(&ro) {
        let keys: std::collections::BTreeSet<&String> =
            t.as_object().unwrap().keys().chain(o.as_object().unwrap().keys()).collect();
        for k in keys {
            if t.get(k) != o.get(k) {
                diffs.push(format!(
                    "result.{k}: claude {}, reloop {}",
                    short(&t.get(k).cloned().unwrap_or(json!("<absent>"))),
                    short(&o.get(k).cloned().unwrap_or(json!("<absent>")))
                ));
            }
        }
    }
    let others = |lines: &[Value]| -> Vec<Value> {
        lines.iter().filter(|l| l["type"] != "result").filter_map(line_view).collect()
    };
    let (lt, lo) = (others(&theirs), others(&ours));
    if let Some(i) = (0..lt.len().max(lo.len())).find(|i| lt.get(*i) != lo.get(*i)) {
        let describe = |l: Option<&Value>| l.map_or("<none>".to_string(), short);
        diffs.push(format!("stdout line {i}: claude {} | reloop {}", describe(lt.get(i)), describe(lo.get(i))));
    }
    let (tt, to) = (tool_use_results(&theirs), tool_use_results(&ours));
    for i in 0..tt.len().max(to.len()) {
        if tt.get(i) != to.get(i) {
            let describe =
                |r: Option<&(String, Value)>| r.map_or("<none>".to_string(), |(id, v)| format!("{id} {}", short(v)));
            diffs.push(format!("tool_use_result {i}: claude {} | reloop {}", describe(tt.get(i)), describe(to.get(i))));
        }
    }
    let (bt, bo) = (boundary_links(&theirs), boundary_links(&ours));
    if bt != bo {
        diffs.push(format!("compact_boundary links: claude {} | reloop {}", short(&json!(bt)), short(&json!(bo))));
    }
    // requests: the Messages API ones, in order; a background agent's read together before the
    // notification's query, since they race the parent's on both sides.
    let concurrent =
        flattened(&read("stdout.jsonl")).iter().any(|l| l["tool_use_result"]["status"] == "async_launched");
    let recorded: Vec<Value> = background_requests_together(
        read("requests.jsonl").into_iter().filter(|r| r["method"] == "POST" && r.get("kind").is_some()).collect(),
        (|r: &Value| r["kind"] == "sub", |r: &Value| r["body"].to_string().contains("<task-notification>")),
        concurrent,
    );
    let requests = background_requests_together(
        live.requests.iter().collect(),
        (|r: &&player::Got| r.kind == "sub", |r: &&player::Got| r.body.to_string().contains("<task-notification>")),
        concurrent,
    );
    let theirs: Vec<Value> =
        recorded.iter().map(|r| normalize(&request_view(r["kind"].as_str().unwrap(), &r["body"]), None)).collect();
    let ours: Vec<Value> = requests.iter().map(|r| normalize(&request_view(&r.kind, &r.body), Some(live))).collect();
    if theirs.len() != ours.len() {
        diffs.push(format!("requests: claude {}, reloop {}", theirs.len(), ours.len()));
    }
    // The message-level `output_config`: Claude Code's rides on its first `role: "system"`
    // message, most often its environment context, which reloop does not send; where reloop sends
    // a system message, its first carries what Claude Code's first carried, and no other one has any.
    let their_bodies: Vec<Value> = recorded.iter().map(|r| r["body"].clone()).collect();
    // The 1M-context variant (2.1.197's default, `opus[1m]`) is asked for by its beta.
    let one_m = |beta: Option<&str>| beta.is_some_and(|b| b.split(',').any(|b| b.trim() == "context-1m-2025-08-07"));
    let their_betas: Vec<bool> = recorded.iter().map(|r| one_m(r["headers"]["anthropic-beta"].as_str())).collect();
    for (i, (t, o)) in their_betas.iter().zip(&requests).enumerate() {
        if *t != one_m(o.beta.as_deref()) {
            diffs.push(format!("request {i} context-1m beta: claude {t}, reloop {:?}", o.beta));
        }
    }
    // Every beta, in order (2.1.332's `fallback-credit` on a summary request's first try of its
    // shape among them), and the `context_management` beside the thinking.
    let betas = |header: Option<&str>| -> Vec<String> {
        header.unwrap_or_default().split(',').map(|b| b.trim().to_string()).filter(|b| !b.is_empty()).collect()
    };
    let their_headers: Vec<Value> = recorded.iter().map(|r| r["headers"]["anthropic-beta"].clone()).collect();
    for (i, ((t, body), o)) in their_headers.iter().zip(&their_bodies).zip(&requests).enumerate() {
        let (t, o_betas) = (betas(t.as_str()), betas(o.beta.as_deref()));
        if t != o_betas {
            diffs.push(format!("request {i} betas: claude {}, reloop {}", t.join(","), o_betas.join(",")));
        }
        if body["context_management"] != o.body["context_management"] {
            diffs.push(format!(
                "request {i} context_management: claude {}, reloop {}",
                body["context_management"], o.body["context_management"]
            ));
        }
    }
    for (i, (t, o)) in their_bodies.iter().zip(&requests).enumerate() {
        let (theirs, ours) = (message_output_configs(t), message_output_configs(&o.body));
        if ours.is_empty() {
            continue;
        }
        let first = |configs: &[(bool, Value)]| configs.first().map(|(_, c)| c.clone()).unwrap_or(Value::Null);
        let others = ours.iter().skip(1).filter(|(_, c)| !c.is_null()).count();
        if first(&theirs) != first(&ours) || others > 0 || !ours.iter().all(|(system, _)| *system) {
            diffs.push(format!(
                "request {i} output_config on messages: claude's first system message {}, reloop {:?}",
                first(&theirs),
                ours
            ));
        }
    }
    'requests: for (i, (t, o)) in theirs.iter().zip(&ours).enumerate() {
        for k in ["kind", "model", "max_tokens", "stream", "thinking"] {
            if t[k] != o[k] {
                diffs.push(format!("request {i}.{k}: claude {}, reloop {}", t[k], o[k]));
                continue 'requests;
            }
        }
        let (mt, mo) = (t["messages"].as_array().unwrap(), o["messages"].as_array().unwrap());
        if let Some(j) = (0..mt.len().max(mo.len())).find(|j| mt.get(*j) != mo.get(*j)) {
            let describe = |m: Option<&Value>| m.map_or("<none>".to_string(), short);
            diffs.push(format!(
                "request {i} message {j}: claude {} | reloop {}",
                describe(mt.get(j)),
                describe(mo.get(j))
            ));
        }
    }
    // The replay prints what the live run printed (timings aside).
    let timeless = |lines: &[Value]| -> Vec<Value> {
        lines
            .iter()
            .map(|l| {
                let mut l = l.clone();
                for k in [
                    "duration_ms",
                    "duration_api_ms",
                    "ttft_ms",
                    "ttft_stream_ms",
                    "time_to_request_ms",
                    "timestamp",
                    "first_content_frame_ms",
                ] {
                    if let Some(o) = l.as_object_mut() {
                        o.remove(k);
                    }
                }
                // A task's times, nested.
                for (outer, inner) in [("patch", "end_time"), ("usage", "duration_ms")] {
                    if let Some(Value::Object(o)) = l.get_mut(outer) {
                        o.remove(inner);
                    }
                }
                l
            })
            .collect()
    };
    // The replay prints the stream; the array holds what its run printed of it.
    let replayed = if is_array(&live.lines) { in_the_array(&live.replayed) } else { live.replayed.clone() };
    let (live_lines, replayed) = (timeless(&flattened(&live.lines)), timeless(&replayed));
    if let Some(i) = (0..live_lines.len().max(replayed.len())).find(|i| live_lines.get(*i) != replayed.get(*i)) {
        let describe = |l: Option<&Value>| l.map_or("<none>".to_string(), short);
        diffs.push(format!(
            "replay line {i}: live {} | replay {}",
            describe(live_lines.get(i)),
            describe(replayed.get(i))
        ));
    }
    diffs
}

/// The lines of stdout, an array's (`--output-format json --verbose`) one by one.
fn flattened(lines: &[Value]) -> Vec<Value> {
    lines.iter().flat_map(|l| l.as_array().cloned().unwrap_or_else(|| vec![l.clone()])).collect()
}

fn is_array(lines: &[Value]) -> bool {
    lines.len() == 1 && lines[0].is_array()
}

/// Of a stream, the lines Claude Code's json array holds (`flags/json_verbose`,
/// `subagent/default_json`): every message and result and `system/init`, but no other system
/// line and no line of a background agent's.
fn in_the_array(stream: &[Value]) -> Vec<Value> {
    let background: Vec<&Value> = stream
        .iter()
        .filter(|l| l["subtype"] == "task_started" && l["is_backgrounded"] == true)
        .map(|l| &l["tool_use_id"])
        .collect();
    stream
        .iter()
        .filter(|l| match l["type"].as_str() {
            Some("system") => l["subtype"] == "init",
            Some("assistant" | "user") => !background.contains(&&l["parent_tool_use_id"]),
            other => other == Some("result"),
        })
        .cloned()
        .collect()
}

/// `requests` with a background agent's (`is_sub`) read together just before the first of the
/// query its notification started (`told`), when the run had one (`concurrent`): its requests
/// and the parent's race, in Claude Code as in reloop (docs/profiles.md, `subagents`), while
/// every one of its comes before that query.
fn background_requests_together<T>(
    requests: Vec<T>,
    (is_sub, told): (impl Fn(&T) -> bool, impl Fn(&T) -> bool),
    concurrent: bool,
) -> Vec<T> {
    if !concurrent {
        return requests;
    }
    let at = requests.iter().position(|r| !is_sub(r) && told(r)).unwrap_or(requests.len());
    let (mut before, mut subs, mut after) = (Vec::new(), Vec::new(), Vec::new());
    for (i, request) in requests.into_iter().enumerate() {
        match (is_sub(&request), i < at) {
            (true, _) => subs.push(request),
            (false, true) => before.push(request),
            (false, false) => after.push(request),
        }
    }
    before.into_iter().chain(subs).chain(after).collect()
}

/// Each reason [`DELIBERATE`] gives is a bullet of docs/profiles.md's "Print mode against the
/// recordings", where the difference is explained.
#[test]
fn every_deliberate_difference_is_explained_in_the_profiles_doc() {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/profiles.md")).unwrap();
    let section = doc.split("## Print mode against the recordings").nth(1).unwrap();
    let section = section.split("\n## ").next().unwrap();
    for (_, _, reason) in DELIBERATE {
        assert!(section.contains(&format!("\n- **{reason}**")), "docs/profiles.md explains no `{reason}`");
    }
}

/// Recordings this harness does not run: their scenarios drive stdin or send signals
/// (tests/sdk.rs and tests/abort.rs cover those paths).
fn runnable(fx: &Fixture) -> bool {
    fx.scenario.get("input").is_none() && fx.scenario.get("actions").is_none() && !text_output(fx)
}

/// The recording printed text (`--output-format text` last among its arguments).
fn text_output(fx: &Fixture) -> bool {
    let argv: Vec<&str> = fx.scenario["argv"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    argv.windows(2).rfind(|w| w[0] == "--output-format").is_some_and(|w| w[1] == "text")
}

/// Text output prints what each version prints, byte for byte: 2.1.332 the results of the
/// prompt's query and of its background agent's notification at the end, a blank line between
/// them; 2.1.197 the one result of a foreground agent's run (`subagent/default_text`).
#[test]
fn text_output_prints_the_results_as_each_version_prints_them() {
    let texts: Vec<Fixture> = fixtures().into_iter().filter(text_output).collect();
    assert_eq!(texts.len(), 2, "both versions' text recordings are found");
    for fx in &texts {
        let live = run(fx);
        let recorded = std::fs::read_to_string(fx.dir.join("stdout.jsonl")).unwrap();
        assert_eq!(live.code, Some(0), "{}: {}", fx.id, live.stderr);
        assert_eq!(live.stdout, recorded, "{}", fx.id);
        assert_eq!(live.requests.len(), fx.scenario["outcome"]["requests"].as_u64().unwrap() as usize, "{}", fx.id);
    }
}

fn allowed(fixture: &str, diff: &str) -> Option<usize> {
    DELIBERATE.iter().position(|(f, piece, _)| fixture.starts_with(f) && diff.contains(piece))
}

#[test]
fn print_mode_matches_every_recording_of_the_real_claude_code() {
    let fixtures: Vec<Fixture> = fixtures().into_iter().filter(runnable).collect();
    assert!(fixtures.len() >= 40, "the recordings are found: {}", fixtures.len());
    let only = std::env::var("PRINT_RECORDED_ONLY").ok();
    let mut used = vec![false; DELIBERATE.len()];
    let mut unexplained = BTreeMap::new();
    let mut matching: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let chosen: Vec<&Fixture> =
        fixtures.iter().filter(|fx| only.as_deref().is_none_or(|o| fx.id.contains(o))).collect();
    // The runs mostly wait (retry backoffs, hooks): a few at once keep the test short.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let outcomes = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let Some(fx) = chosen.get(i) else { return };
                let started = Instant::now();
                let live = run(fx);
                let diffs = differences(fx, &live);
                eprintln!("{}: {} difference(s), {:.1}s", fx.id, diffs.len(), started.elapsed().as_secs_f64());
                outcomes.lock().unwrap().push((i, diffs));
            });
        }
    });
    let mut outcomes = outcomes.into_inner().unwrap();
    outcomes.sort_by_key(|(i, _)| *i);
    for (i, diffs) in outcomes {
        let fx = chosen[i];
        let mut left = Vec::new();
        for d in diffs {
            match allowed(&fx.id, &d) {
                Some(i) => used[i] = true,
                None => left.push(d),
            }
        }
        let tally = matching.entry(fx.version.clone()).or_default();
        tally.1 += 1;
        if left.is_empty() {
            tally.0 += 1;
        } else {
            unexplained.insert(fx.id.clone(), left);
        }
    }
    for (version, (ok, all)) in &matching {
        eprintln!("Claude Code {version}: {ok} of {all} recordings match (deliberate differences aside)");
    }
    let report: String = unexplained.iter().map(|(id, diffs)| format!("\n{id}:\n  {}", diffs.join("\n  "))).collect();
    assert!(unexplained.is_empty(), "reloop -p differs from the recordings:{report}");
    if only.is_none() {
        let stale: Vec<&(&str, &str, &str)> =
            DELIBERATE.iter().zip(&used).filter(|(_, u)| !**u).map(|(d, _)| d).collect();
        assert!(stale.is_empty(), "DELIBERATE entries that no difference needs any more: {stale:?}");
    }
}

/// Every flag either Claude Code version's `--help` lists (tests/print/help/, the real binaries'
/// output) parses in `reloop -p`: honoured, or accepted with a warning.
#[test]
fn every_flag_either_claude_code_version_accepts_is_accepted_by_print_mode() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/print/help");
    let mut flags = BTreeMap::new();
    for version in ["2.1.197", "2.1.332"] {
        let help = std::fs::read_to_string(dir.join(format!("{version}.txt"))).unwrap();
        for line in help.lines() {
            // An option line: `  -x, --name, --alias <value>   description`.
            let spec = line.trim_start();
            if !line.starts_with("  ") || !spec.starts_with('-') {
                continue;
            }
            let spec = spec.split("  ").next().unwrap_or_default();
            let takes_value = spec.contains(" <");
            let is_flag = |w: &&str| {
                w.len() > 2
                    && w.starts_with("--")
                    && w[2..].chars().all(|c| c.is_ascii_alphanumeric() || "-[]".contains(c))
            };
            for word in spec.split([',', ' ']).filter(is_flag) {
                // `--system-prompt[-file]` is two flags.
                let (base, optional) = word.split_once('[').map_or((word, ""), |(b, o)| (b, o.trim_end_matches(']')));
                *flags.entry(base.to_string()).or_insert(false) |= takes_value;
                if !optional.is_empty() {
                    *flags.entry(format!("{base}{optional}")).or_insert(false) |= takes_value;
                }
            }
        }
    }
    assert!(flags.len() > 60, "the help texts list the flags: {flags:?}");
    assert!(flags.contains_key("--prompt-suggestions"));
    // Values a flag checks; any other value-taking flag gets `x`.
    let value_of = |flag: &str| match flag {
        "--output-format" | "--input-format" => "text",
        "--max-budget-usd" => "1",
        "--permission-mode" => "default",
        _ => "x",
    };
    for (flag, takes_value) in &flags {
        let mut args = if flag == "--print" { vec!["hi", flag.as_str()] } else { vec!["-p", "hi", flag.as_str()] };
        // Flags only named in another flag's description (`--system-prompt[-file]`) take values.
        let named_in_text = flag.ends_with("-file") || flag.ends_with("-prompt") || flag == "--add-dir";
        if *takes_value || named_in_text {
            args.push(value_of(flag));
        }
        args.push("--help");
        let out = common::reloop_bin().args(&args).stdin(Stdio::null()).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "reloop {args:?} refused it: {err}");
    }
    // Given for real, a flag reloop does not honour is named on stderr and the run goes on.
    let home = tempfile::tempdir().unwrap();
    let player = Player::start(&json!({"steps": [{"text": "ok"}]}));
    let out = common::reloop_bin()
        .args(["-p", "hi", "--prompt-suggestions", "--output-format", "json"])
        .current_dir(home.path())
        .env("RELOOP_JOURNAL", home.path().join("j.db"))
        .env("ANTHROPIC_BASE_URL", &player.url)
        .env("ANTHROPIC_API_KEY", "k")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("warning: --prompt-suggestions is accepted but not honoured"), "{err}");
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["result"], "ok");
}
