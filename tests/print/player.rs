//! The recorder's fake Anthropic server, in Rust: it answers each request with the next step of
//! its kind from a recording's `scenario.json` (`steps`, then `defaults`), exactly as
//! `scripts/record-claude-code/record.py` answered the real Claude Code, and logs what it got.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Map, Value};

/// One request the server received.
#[derive(Debug, Clone)]
pub struct Got {
    pub kind: String,
    pub body: Value,
    /// The request's `anthropic-beta` header, if it had one.
    pub beta: Option<String>,
}

struct State {
    steps: Vec<Value>,
    defaults: Map<String, Value>,
    log: Vec<Got>,
    tool_seq: u32,
}

pub struct Player {
    pub url: String,
    state: Arc<Mutex<State>>,
}

impl Player {
    pub fn start(scenario: &Value) -> Player {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(Mutex::new(State {
            steps: scenario["steps"].as_array().cloned().unwrap_or_default(),
            defaults: scenario["defaults"].as_object().cloned().unwrap_or_default(),
            log: Vec::new(),
            tool_seq: 0,
        }));
        let shared = state.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let state = shared.clone();
                std::thread::spawn(move || serve(stream, &state));
            }
        });
        Player { url, state }
    }

    pub fn requests(&self) -> Vec<Got> {
        self.state.lock().unwrap().log.clone()
    }
}

/// The plain text of a message content, tool results' included (the recorder's `text_of`).
fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| match b["type"].as_str() {
                Some("text") => Some(b["text"].as_str().unwrap_or_default().to_string()),
                Some("tool_result") => Some(text_of(&b["content"])),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Which steps answer a request: the recorder's `classify`.
pub fn classify(body: &Value) -> &'static str {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let users: Vec<&Value> = messages.iter().filter(|m| m["role"] == "user").collect();
    if users.last().is_some_and(|u| text_of(&u["content"]).contains("CRITICAL: Respond with TEXT ONLY")) {
        return "compact";
    }
    if users.first().is_some_and(|u| text_of(&u["content"]).contains("SUBAGENT-TASK")) {
        return "sub";
    }
    if body["tools"].as_array().is_none_or(|t| t.is_empty()) {
        return "side";
    }
    "main"
}

fn read_request(stream: &TcpStream) -> Option<(String, Value, Option<String>)> {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let path = line.split_whitespace().nth(1)?.to_string();
    let mut length = 0usize;
    let mut beta = None;
    loop {
        let mut h = String::new();
        reader.read_line(&mut h).ok()?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (k, v) = h.split_once(':')?;
        if k.trim().eq_ignore_ascii_case("content-length") {
            length = v.trim().parse().ok()?;
        }
        if k.trim().eq_ignore_ascii_case("anthropic-beta") {
            beta = Some(v.trim().to_string());
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).ok()?;
    Some((path, serde_json::from_slice(&body).unwrap_or(Value::Null), beta))
}

fn serve(stream: TcpStream, state: &Mutex<State>) {
    let Some((path, body, beta)) = read_request(&stream) else { return };
    if !path.starts_with("/v1/messages") || path.starts_with("/v1/messages/count_tokens") {
        let found = path.contains("count_tokens");
        let answer = if found { json!({"input_tokens": 1000}) } else { json!({"type": "error"}) };
        respond(&stream, if found { 200 } else { 404 }, &[], "application/json", answer.to_string().as_bytes());
        return;
    }
    let kind = classify(&body);
    let (step, seq, message) = {
        let mut s = state.lock().unwrap();
        let step = match s.steps.iter().position(|st| st["kind"].as_str().unwrap_or("main") == kind) {
            Some(i) => s.steps.remove(i),
            None => s.defaults.get(kind).cloned().unwrap_or_else(|| json!({"text": "OK (no scripted answer left)"})),
        };
        s.log.push(Got { kind: kind.to_string(), body: body.clone(), beta });
        let seq = s.log.len();
        let message = message(&mut s, &body, &step, seq);
        (step, seq, message)
    };
    if let Some(delay) = step["delay"].as_f64() {
        std::thread::sleep(Duration::from_secs_f64(delay));
    }
    let request_id = ("request-id".to_string(), format!("req_fake_{seq}"));
    if let Some(status) = step["status"].as_u64() {
        let error = json!({"type": "error", "error": {
            "type": step["error_type"].as_str().unwrap_or("api_error"),
            "message": step["message"].as_str().unwrap_or("error")}});
        let mut headers = vec![request_id];
        for (k, v) in step["headers"].as_object().cloned().unwrap_or_default() {
            headers.push((k, v.as_str().unwrap_or_default().to_string()));
        }
        respond(&stream, status as u16, &headers, "application/json", python_json(&error).as_bytes());
        return;
    }
    if body["stream"] == true {
        respond(&stream, 200, &[request_id], "text/event-stream", sse(&message, &step).as_bytes());
    } else {
        respond(&stream, 200, &[request_id], "application/json", python_json(&message).as_bytes());
    }
}

fn message(state: &mut State, body: &Value, step: &Value, seq: usize) -> Value {
    let blocks = step["blocks"]
        .as_array()
        .cloned()
        .unwrap_or_else(|| vec![json!({"type": "text", "text": step["text"].as_str().unwrap_or_default()})]);
    let mut content = Vec::new();
    for mut b in blocks {
        if b["type"] == "tool_use" {
            if b.get("id").is_none() {
                state.tool_seq += 1;
                b["id"] = json!(format!(
                    "toolu_{:02}_{}",
                    state.tool_seq,
                    b["name"].as_str().unwrap_or_default().to_uppercase()
                ));
            }
            if let Some(o) = b.as_object_mut() {
                o.remove("raw_input");
                o.entry("input").or_insert(json!({}));
            }
        }
        content.push(b);
    }
    let stop = step["stop"].as_str().map(str::to_string).unwrap_or_else(|| {
        if content.iter().any(|b| b["type"] == "tool_use") {
            "tool_use".into()
        } else {
            "end_turn".into()
        }
    });
    let mut usage = json!({"input_tokens": 120, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 25});
    for (k, v) in step["usage"].as_object().cloned().unwrap_or_default() {
        usage[k] = v;
    }
    json!({"id": format!("msg_fake_{seq:03}"), "type": "message", "role": "assistant",
           "model": body.get("model").cloned().unwrap_or(json!("claude")), "content": content,
           "stop_reason": stop, "stop_sequence": null, "usage": usage})
}

/// The SSE stream the recorder sent for `message`: 40-character text chunks, the tool input as
/// Python's `json.dumps` wrote it (or the step's `raw_input`) in 30-character pieces.
fn sse(message: &Value, step: &Value) -> String {
    let mut out = String::new();
    let mut ev = |name: &str, data: Value| out.push_str(&format!("event: {name}\ndata: {}\n\n", python_json(&data)));
    let mut start = message.clone();
    start["content"] = json!([]);
    start["stop_reason"] = Value::Null;
    start["usage"]["output_tokens"] = json!(1);
    ev("message_start", json!({"type": "message_start", "message": start}));
    let overloaded = json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
    if step["sse_error"] == "start" {
        ev("error", overloaded);
        return out;
    }
    let raw: HashMap<usize, String> = step["blocks"]
        .as_array()
        .map(|bs| {
            bs.iter().enumerate().filter_map(|(i, b)| b["raw_input"].as_str().map(|r| (i, r.to_string()))).collect()
        })
        .unwrap_or_default();
    for (i, b) in message["content"].as_array().unwrap().iter().enumerate() {
        match b["type"].as_str().unwrap_or_default() {
            "text" => {
                ev(
                    "content_block_start",
                    json!({"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}}),
                );
                let chars: Vec<char> = b["text"].as_str().unwrap_or_default().chars().collect();
                let chunks: Vec<String> = if chars.is_empty() {
                    vec![String::new()]
                } else {
                    chars.chunks(40).map(|c| c.iter().collect()).collect()
                };
                for c in chunks {
                    ev(
                        "content_block_delta",
                        json!({"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": c}}),
                    );
                }
            }
            "thinking" => {
                ev(
                    "content_block_start",
                    json!({"type": "content_block_start", "index": i, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
                );
                ev(
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": i, "delta": {"type": "thinking_delta", "thinking": b["thinking"]}}),
                );
                ev(
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": i, "delta": {"type": "signature_delta", "signature": b["signature"]}}),
                );
            }
            "redacted_thinking" => {
                ev("content_block_start", json!({"type": "content_block_start", "index": i, "content_block": b}));
            }
            "tool_use" => {
                let mut skeleton = b.clone();
                skeleton["input"] = json!({});
                ev(
                    "content_block_start",
                    json!({"type": "content_block_start", "index": i, "content_block": skeleton}),
                );
                let js = raw.get(&i).cloned().unwrap_or_else(|| python_json(&b["input"]));
                let chars: Vec<char> = js.chars().collect();
                for piece in chars.chunks(30) {
                    let piece: String = piece.iter().collect();
                    ev(
                        "content_block_delta",
                        json!({"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": piece}}),
                    );
                }
            }
            _ => {}
        }
        ev("content_block_stop", json!({"type": "content_block_stop", "index": i}));
    }
    if step.get("sse_error").is_some_and(|e| e != &Value::Bool(false) && !e.is_null()) {
        ev("error", overloaded);
        return out;
    }
    ev(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": message["stop_reason"], "stop_sequence": null},
        "usage": {"output_tokens": message["usage"]["output_tokens"]}}),
    );
    ev("message_stop", json!({"type": "message_stop"}));
    out
}

/// JSON as Python's `json.dumps` writes it by default: `", "` and `": "` separators, non-ASCII
/// escaped, keys in insertion order. The recorder's bytes, so tool inputs arrive as they did.
pub fn python_json(value: &Value) -> String {
    let mut out = String::new();
    write_py(value, &mut out);
    out
}

fn write_py(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => {
            out.push('"');
            for c in s.chars() {
                match c {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\t' => out.push_str("\\t"),
                    '\u{8}' => out.push_str("\\b"),
                    '\u{c}' => out.push_str("\\f"),
                    c if (c as u32) < 0x20 || (c as u32) > 0x7e => {
                        let mut buf = [0u16; 2];
                        for unit in c.encode_utf16(&mut buf) {
                            out.push_str(&format!("\\u{unit:04x}"));
                        }
                    }
                    c => out.push(c),
                }
            }
            out.push('"');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_py(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_py(&Value::String(k.clone()), out);
                out.push_str(": ");
                write_py(v, out);
            }
            out.push('}');
        }
    }
}

fn respond(stream: &TcpStream, status: u16, headers: &[(String, String)], kind: &str, body: &[u8]) {
    let mut s = stream;
    let mut head = format!("HTTP/1.1 {status} X\r\ncontent-type: {kind}\r\ncontent-length: {}\r\n", body.len());
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("connection: close\r\n\r\n");
    let _ = s.write_all(head.as_bytes());
    let _ = s.write_all(body);
    let _ = s.flush();
}
