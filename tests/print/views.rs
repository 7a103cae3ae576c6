//! How tests/print_recorded.rs reads a recording and reloop's run alike: the views of stdout's
//! lines and of the requests it compares (what each keeps, what it reduces to a shape), and the
//! texts it rewrites first (dates, the transcript's path, Claude Code's own token estimate).

use serde_json::{json, Map, Value};

/// `s` with what follows each `mark` rewritten: `cut` gives how many bytes after the mark to
/// replace and with what, or `None` to leave them.
fn rewrite_after(s: &str, mark: &str, cut: impl Fn(&str) -> Option<(usize, &'static str)>) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(at) = rest.find(mark) {
        out.push_str(&rest[..at + mark.len()]);
        rest = &rest[at + mark.len()..];
        if let Some((len, with)) = cut(rest) {
            out.push_str(with);
            rest = &rest[len..];
        }
    }
    out.push_str(rest);
    out
}

/// The conversation's estimate in the single-exchange prompt-too-long text: a token count, and
/// Claude Code's counts its own agent and skill listings, which reloop does not hold
/// (docs/profiles.md, "Print mode against the recordings"); the text around it is compared.
pub fn re_estimate(s: &str) -> String {
    rewrite_after(s, "but this conversation is only ~", |rest| {
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        (digits > 0).then_some((digits, "E"))
    })
}

/// The transcript path a compaction's summary message names: each run's session id and project.
pub fn re_transcript(s: &str) -> String {
    rewrite_after(s, "read the full transcript at: ", |rest| {
        Some((rest.find(".jsonl").map_or(0, |e| e + ".jsonl".len()), "<transcript>"))
    })
}

/// The request id an error text quotes (`request id req_fake_7`): the fake server numbers its
/// answers, so the id tells how many requests came before, which the request count compares.
pub fn re_request_id(s: &str) -> String {
    rewrite_after(s, "request id ", |rest| {
        let id = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
        rest[..id].starts_with("req_").then_some((id, "<request id>"))
    })
}

/// Today's date as a message gives it (`Today's date is 2026-12-04.`): the day of each run.
pub fn re_date(s: &str) -> String {
    rewrite_after(s, "Today's date is ", |rest| {
        let date = rest.chars().take(10).filter(|c| c.is_ascii_digit() || *c == '-').count();
        (date == 10).then_some((10, "DATE"))
    })
}

fn text_value(t: &Value) -> Value {
    match t {
        // The recorder keeps texts over 2000 characters as sha256, length and head.
        Value::Object(o) => json!({"len": o["len"], "head": o["head"]}),
        Value::String(s) if s.chars().count() > 2000 => {
            json!({"len": s.chars().count(), "head": s.chars().take(300).collect::<String>()})
        }
        other => other.clone(),
    }
}

fn tool_result_text(content: &Value) -> Value {
    match content {
        Value::Array(blocks) => Value::String(agent_shapes(
            &blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n"),
        )),
        other => other.clone(),
    }
}

/// An `Agent` call's answer with its agent's id and its duration by shape: each side's own.
fn agent_shapes(text: &str) -> String {
    let Some((before, trailer)) = text.rsplit_once("\nagentId: ") else { return text.to_string() };
    let id: String = trailer.chars().take_while(char::is_ascii_alphanumeric).collect();
    let id_shape = if id.len() == 17 && id.starts_with('a') { "<agent id>" } else { "<not an agent id>" };
    let trailer = trailer.replace(&id, id_shape);
    let trailer = match trailer.split_once("\nduration_ms: ") {
        Some((head, rest)) => {
            let digits = rest.chars().take_while(char::is_ascii_digit).count();
            format!("{head}\nduration_ms: <ms>{}", &rest[digits..])
        }
        None => trailer,
    };
    format!("{before}\nagentId: {trailer}")
}

/// A subagent's task line, or its `Agent` call's summary, with what each side draws or times
/// for itself by shape: the agent's and the run's ids, times, token counts (reloop counts a
/// task's tokens from its last response, Claude Code by its own tally) and the task's output
/// file, which reloop does not keep (docs/profiles.md, "Print mode against the recordings").
fn task_shapes(fields: &mut Map<String, Value>) {
    for key in ["task_id", "agentId"] {
        if let Some(id) = fields.get_mut(key) {
            let shaped = id.as_str().is_some_and(|s| s.len() == 17 && s.starts_with('a'));
            *id = json!(if shaped { "<agent id>" } else { "<not an agent id>" });
        }
    }
    if let Some(run) = fields.get_mut("run_id") {
        let shaped = run.as_str().and_then(|s| s.split_once('-')).is_some_and(|(a, b)| a.len() == 9 && b.len() == 8);
        *run = json!(if shaped { "<run id>" } else { "<not a run id>" });
    }
    for key in ["end_time", "duration_ms", "totalDurationMs", "total_tokens"] {
        let shape = |v: &mut Value| *v = json!(if v.is_u64() { "<number>" } else { "<not a number>" });
        fields.get_mut(key).map(shape);
        for nested in ["patch", "usage"] {
            if let Some(Value::Object(inner)) = fields.get_mut(nested) {
                inner.get_mut(key).map(shape);
            }
        }
    }
    if let Some(file) = fields.get_mut("output_file") {
        *file = json!("<output file>");
    }
    // A background agent's launch: whether the model may read the file, which reloop keeps none of.
    fields.remove("outputFile");
    if let Some(readable) = fields.get_mut("canReadOutputFile") {
        *readable = json!("<whether there is a task output file>");
    }
}

/// A background agent's launch and notification texts (`subagent/default`) with the task output
/// file, which reloop does not keep, read alike: 2.1.332's lines naming it, or its words for when
/// there is none; the agent's id and its time by shape.
pub fn re_task_output(s: &str) -> String {
    const NAMED: &str =
        "Do not duplicate this agent's work \u{2014} avoid working with the same files or topics it is using.";
    const NAMED_END: &str = "you'll get a completion notification.";
    const NONE: &str = "In your own words, briefly tell the user what you launched \u{2014} do not echo this tool result. Agent results will arrive in a subsequent message. If the user asks for progress, say the agent is still running.";
    const SHAPE: &str = "<what the task output file allows>";
    let s = rewrite_after(&s.replace(NONE, SHAPE), NAMED, |rest| {
        rest.find(NAMED_END).map(|end| (end + NAMED_END.len(), ""))
    })
    .replace(NAMED, SHAPE);
    let s = rewrite_after(&s, "\\n<output-file>", |rest| {
        rest.find("</output-file>").map(|end| (end + "</output-file>".len(), ""))
    })
    .replace("\\n<output-file>", "");
    let s = rewrite_after(&s, "<task-id>", |rest| {
        let id = rest.chars().take_while(char::is_ascii_alphanumeric).count();
        (id == 17).then_some((id, "<agent id>"))
    });
    rewrite_after(&s, "<duration_ms>", |rest| {
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        (digits > 0).then_some((digits, "<ms>"))
    })
}

/// A message's blocks as compared. A string content reads as one text block: where a message's
/// content is a string or a list is the request side's business (tests/conformance*.rs).
fn blocks_view(content: &Value) -> Value {
    let Value::Array(blocks) = content else { return json!([{"text": text_value(content)}]) };
    Value::Array(
        blocks
            .iter()
            .map(|b| match b["type"].as_str().unwrap_or_default() {
                "text" => json!({"text": text_value(&b["text"])}),
                "tool_use" => json!({"tool_use": b["name"], "id": b["id"], "input": b["input"]}),
                "tool_result" => json!({"tool_result": b["tool_use_id"], "content": tool_result_text(&b["content"]),
                    "is_error": b.get("is_error").cloned().unwrap_or(Value::Bool(false))}),
                "thinking" => json!({"thinking": b["thinking"]}),
                other => json!({ "type": other }),
            })
            .collect(),
    )
}

/// The line's keys that say how a run or a message ended, kept with their values (absent keys
/// stay absent, so a missing field differs from a null one).
fn pick(line: &Value, keys: &[&str]) -> Map<String, Value> {
    keys.iter().filter_map(|k| line.get(*k).map(|v| (k.to_string(), v.clone()))).collect()
}

const RESULT_KEYS: &[&str] = &[
    "subtype",
    "is_error",
    "num_turns",
    "result",
    "stop_reason",
    "terminal_reason",
    "api_error_status",
    "api_error_type",
    "api_error",
    "errors",
];

/// One stdout line as compared.
pub fn line_view(line: &Value) -> Option<Value> {
    let kind = line["type"].as_str().unwrap_or_default();
    let view = match kind {
        "stream_event" => return None,
        "system" => {
            let mut l = line.as_object().cloned().unwrap_or_default();
            for k in ["uuid", "session_id", "timestamp"] {
                l.remove(k);
            }
            if let Some(delay) = l.remove("retry_delay_ms") {
                l.insert("retry_delay_ms".into(), delay_view(&delay));
            }
            match l.get("subtype").and_then(Value::as_str) {
                Some("task_started" | "task_progress" | "task_updated" | "task_notification") => task_shapes(&mut l),
                Some("background_tasks_changed") => {
                    if let Some(Value::Array(tasks)) = l.get_mut("tasks") {
                        tasks.iter_mut().filter_map(Value::as_object_mut).for_each(task_shapes);
                    }
                }
                Some("init") => {
                    let keep = ["type", "subtype", "cwd", "model", "permissionMode"];
                    l.retain(|k, _| keep.contains(&k.as_str()));
                }
                Some("compact_boundary") => {
                    // Every key, the time and the uuids by shape (`boundary_links` checks
                    // which lines the uuids name).
                    let mut metadata = l["compact_metadata"].clone();
                    // Token counts are each side's own estimates: by shape, and what was dropped
                    // as what they say.
                    let count = |k: &str| metadata.get(k).and_then(Value::as_u64);
                    if let (Some(pre), Some(post)) = (count("pre_tokens"), count("post_tokens")) {
                        metadata["pre_tokens"] = json!("<tokens>");
                        metadata["post_tokens"] = json!("<tokens>");
                        if let Some(dropped) = metadata.get_mut("cumulative_dropped_tokens") {
                            let first = dropped.as_u64() == Some(pre.saturating_sub(post));
                            *dropped = json!(if first { "pre_tokens − post_tokens" } else { "<other>" });
                        }
                    }
                    if let Some(ms) = metadata.get_mut("duration_ms") {
                        *ms = json!(if ms.is_u64() { "<ms>" } else { "<not a count of ms>" });
                    }
                    l.insert("compact_metadata".into(), uuid_shapes(&metadata));
                    if let Some(parent) = l.get_mut("logical_parent_uuid") {
                        *parent = uuid_shapes(parent);
                    }
                }
                _ => {}
            }
            Value::Object(l)
        }
        "assistant" => {
            let m = &line["message"];
            let mut v = pick(
                line,
                &[
                    "error",
                    "is_api_error_message",
                    "api_error_status",
                    "api_error_type",
                    "api_error",
                    "api_error_params",
                ],
            );
            v.insert("type".into(), json!("assistant"));
            v.insert("model".into(), m["model"].clone());
            v.insert("content".into(), blocks_view(&m["content"]));
            if m["model"] == "<synthetic>" {
                v.insert("stop_reason".into(), m["stop_reason"].clone());
            }
            if line.get("supersedes").is_some() {
                v.insert("supersedes".into(), json!(true));
            }
            Value::Object(v)
        }
        "user" => {
            let mut v = pick(line, &["isSynthetic"]);
            v.insert("type".into(), json!("user"));
            v.insert("content".into(), blocks_view(&line["message"]["content"]));
            if line.get("retracted_message_uuids").is_some() {
                v.insert("retracts".into(), json!(true));
            }
            Value::Object(v)
        }
        "result" => {
            let mut v = pick(line, RESULT_KEYS);
            v.insert("type".into(), json!("result"));
            let denials: Vec<Value> = line["permission_denials"]
                .as_array()
                .map(|d| d.iter().map(|x| json!([x["tool_name"], x["tool_use_id"]])).collect())
                .unwrap_or_default();
            v.insert("permission_denials".into(), Value::Array(denials));
            Value::Object(v)
        }
        _ => line.clone(),
    };
    Some(view)
}

/// Each tool result line's `tool_use_result` (what the call did as data) and 2.1.332's
/// `tool_result_meta` by its call's id, in order; a Glob's search time by shape. Subagents'
/// lines have none.
pub fn tool_use_results(lines: &[Value]) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for line in lines.iter().filter(|l| l["type"] == "user" && l["parent_tool_use_id"].is_null()) {
        let Some(first) = line["message"]["content"].as_array().and_then(|c| c.first()) else { continue };
        if first["type"] != "tool_result" {
            continue;
        }
        let mut result = line.get("tool_use_result").cloned().unwrap_or(json!("<absent>"));
        if let Value::Object(summary) = &mut result {
            task_shapes(summary);
        }
        if let Some(ms) = result.get_mut("durationMs") {
            *ms = json!(if ms.is_u64() { "<ms>" } else { "<not a count of ms>" });
        }
        // Files written in the same instant (the seeds) have no order by time.
        if let Some(Value::Array(files)) = result.get_mut("filenames") {
            files.sort_by_key(Value::to_string);
        }
        // 2.1.332's permission entries alongside.
        let result = match line.get("tool_result_meta") {
            Some(meta) => json!({"tool_use_result": result, "tool_result_meta": meta}),
            None => result,
        };
        out.push((first["tool_use_id"].as_str().unwrap_or_default().to_string(), result));
    }
    out
}

/// `8-4-4-4-12` hex digits.
fn is_uuid(s: &str) -> bool {
    s.len() == 36
        && s.char_indices().all(|(i, c)| if [8, 13, 18, 23].contains(&i) { c == '-' } else { c.is_ascii_hexdigit() })
}

/// `value` with every string that is a uuid replaced by `<uuid>`.
fn uuid_shapes(value: &Value) -> Value {
    match value {
        Value::String(s) if is_uuid(s) => json!("<uuid>"),
        Value::Array(items) => Value::Array(items.iter().map(uuid_shapes).collect()),
        Value::Object(fields) => Value::Object(fields.iter().map(|(k, v)| (k.clone(), uuid_shapes(v))).collect()),
        other => other.clone(),
    }
}

/// Which lines each `compact_boundary` line's uuids name, by their place: the summary line
/// after it anchors the kept messages, which are the last message lines before it, the last
/// of which is its logical parent.
pub fn boundary_links(lines: &[Value]) -> Vec<Value> {
    let lines: Vec<&Value> = lines.iter().filter(|l| l["type"] != "stream_event").collect();
    let place = |uuid: &Value| -> Value {
        lines.iter().position(|l| l["uuid"] == *uuid).map_or(json!("<nowhere>"), |p| json!(p))
    };
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate().filter(|(_, l)| l["subtype"] == "compact_boundary") {
        let relative = |uuid: &Value| match place(uuid) {
            Value::Number(p) => json!(p.as_i64().unwrap_or_default() - i as i64),
            other => other,
        };
        let m = &line["compact_metadata"];
        let uuids: Vec<Value> =
            m["preserved_messages"]["uuids"].as_array().into_iter().flatten().map(relative).collect();
        out.push(json!({
            "anchor": relative(&m["preserved_segment"]["anchor_uuid"]),
            "head": relative(&m["preserved_segment"]["head_uuid"]),
            "tail": relative(&m["preserved_segment"]["tail_uuid"]),
            "uuids": uuids,
            "all_uuids_are_uuids": m["preserved_messages"]["all_uuids"] == m["preserved_messages"]["uuids"],
            "logical_parent": line.get("logical_parent_uuid").map(relative),
        }));
    }
    out
}

/// A retry's delay as compared: its jitter is random on both sides, so what is compared is how it
/// is written (2.1.197's float with its fraction, 2.1.332's whole number) and the backoff step it
/// falls in: ⌊log2(delay / 500 ms)⌋, which is n − 1 for retry n's min(500 ms × 2^(n−1), 32 s)
/// plus up to 25 % (6 from the cap on), and places a `retry-after` of 3 s (× up to 1.25) at 2.
fn delay_view(delay: &Value) -> Value {
    let written = if delay.is_u64() { "whole" } else { "fraction" };
    let step = delay.as_f64().map(|ms| (ms / 500.0).log2().floor().clamp(-1.0, 6.0) as i64);
    json!({ "written": written, "step": step })
}

/// A request's `role: "system"` messages' own `output_config` (null: none), in order, and any
/// other message that carries one (`false`).
pub fn message_output_configs(body: &Value) -> Vec<(bool, Value)> {
    body["messages"]
        .as_array()
        .map(|ms| {
            ms.iter()
                .filter(|m| m["role"] == "system" || m.get("output_config").is_some())
                .map(|m| (m["role"] == "system", m.get("output_config").cloned().unwrap_or(Value::Null)))
                .collect()
        })
        .unwrap_or_default()
}

/// A message of Claude Code's product prompt that reloop does not send (the environment, the
/// date and attribution reminders): docs/profiles.md, "Print mode against the recordings".
fn product_context(text: &str) -> bool {
    [
        "<system-reminder>\nAs you answer the user's questions",
        "<system-reminder>\nAttribution for git commits",
        "# Environment\n",
        "Available agent types for the Agent tool:",
        "<system-reminder>\n# Environment\n",
        "<system-reminder>\nAvailable agent types for the Agent tool:",
        "<system-reminder>\nThe following skills are available",
        "The following skills are available for use with the Skill tool",
        "<system-reminder>\nYou are powered by the model named",
        "<system-reminder>\nThe following deferred tools",
        "The following deferred tools are now available",
        "<system-reminder>\nToday's date is ",
    ]
    .iter()
    .any(|p| text.starts_with(p))
}

pub fn request_view(kind: &str, body: &Value) -> Value {
    let mut messages = Vec::new();
    for m in body["messages"].as_array().cloned().unwrap_or_default() {
        let content = match &m["content"] {
            Value::Array(blocks) => Value::Array(
                blocks
                    .iter()
                    .filter(|b| !(b["type"] == "text" && product_context(&head(&b["text"]))))
                    .cloned()
                    .collect(),
            ),
            other => other.clone(),
        };
        let empty = content.as_array().is_some_and(Vec::is_empty);
        if (m["role"] == "system" && product_context(&head(&m["content"]))) || empty {
            continue;
        }
        let content = if m["role"] == "system" { system_view(&content) } else { blocks_view(&content) };
        messages.push(json!({"role": m["role"], "content": content}));
    }
    json!({"kind": kind, "model": body["model"], "max_tokens": body["max_tokens"], "stream": body.get("stream"),
           "thinking": body.get("thinking"), "messages": messages})
}

/// A `role: "system"` message as compared: each text up to the product texts 2.1.197 appends to
/// the files it gives back after a compaction (agent types), and of a long one its first 300
/// characters (the recorder keeps no more of it).
fn system_view(content: &Value) -> Value {
    let cut = |text: &str| -> Value {
        let text = text.split("\n\nAvailable agent types for the Agent tool:").next().unwrap_or_default();
        Value::String(text.chars().take(300).collect())
    };
    let texts: Vec<Value> = match content {
        Value::String(s) => vec![cut(s)],
        Value::Array(blocks) => blocks.iter().map(|b| cut(&head(&b["text"]))).collect(),
        Value::Object(_) => vec![cut(&head(content))],
        _ => Vec::new(),
    };
    Value::Array(texts.into_iter().map(|t| json!({ "text": t })).collect())
}

fn head(text: &Value) -> String {
    match text {
        Value::String(s) => s.clone(),
        Value::Object(o) => o.get("head").and_then(Value::as_str).unwrap_or_default().to_string(),
        Value::Array(blocks) => blocks.first().map(|b| head(&b["text"])).unwrap_or_default(),
        _ => String::new(),
    }
}

pub fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 400 && std::env::var_os("PRINT_RECORDED_WHOLE").is_none() {
        format!("{}…", s.chars().take(400).collect::<String>())
    } else {
        s
    }
}

/// The lines with a background agent's own (its messages and `task_progress`, `task_started`
/// saying `is_backgrounded`) moved to just before its `task_updated`: Claude Code prints them as
/// they come, between the parent's, in whichever order the two run; reloop prints them when the
/// agent's end is told (docs/profiles.md, "Print mode against the recordings", `subagents`).
/// Lines of foreground agents stay where they are.
pub fn background_lines_at_their_end(lines: &[Value]) -> Vec<Value> {
    let background: Vec<&str> = lines
        .iter()
        .filter(|l| l["subtype"] == "task_started" && l["is_backgrounded"] == true)
        .filter_map(|l| l["tool_use_id"].as_str())
        .collect();
    let ids: Vec<(&str, &str)> = lines
        .iter()
        .filter(|l| l["subtype"] == "task_started")
        .filter_map(|l| Some((l["tool_use_id"].as_str()?, l["task_id"].as_str()?)))
        .collect();
    let owner = |l: &Value| -> Option<&str> {
        let call = l["parent_tool_use_id"]
            .as_str()
            .or_else(|| (l["subtype"] == "task_progress").then(|| l["tool_use_id"].as_str()).flatten())?;
        background.iter().copied().find(|b| *b == call)
    };
    let mut out = Vec::new();
    let mut kept: Vec<(&str, Vec<Value>)> = Vec::new();
    for line in lines {
        if let Some(call) = owner(line) {
            match kept.iter_mut().find(|(c, _)| *c == call) {
                Some((_, held)) => held.push(line.clone()),
                None => kept.push((call, vec![line.clone()])),
            }
            continue;
        }
        if line["subtype"] == "task_updated" {
            let call = ids.iter().find(|(_, task)| line["task_id"] == *task).map(|(call, _)| *call);
            if let Some(at) = kept.iter().position(|(c, _)| Some(*c) == call) {
                out.extend(kept.remove(at).1);
            }
        }
        out.push(line.clone());
    }
    out.extend(kept.into_iter().flat_map(|(_, held)| held));
    out
}
