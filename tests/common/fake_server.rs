//! A fake Anthropic / OpenAI server on 127.0.0.1 that speaks the real wire format: it answers
//! each request with the next canned response and records what it was sent.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// One canned answer.
#[derive(Clone)]
pub enum Canned {
    /// 200 with an SSE body.
    Sse(String),
    /// A status with headers and a JSON body.
    Error { status: u16, headers: Vec<(String, String)>, body: Value },
    /// 200, send `head` of an SSE body, then stall until the client goes away.
    Stall(String),
    /// An SSE body sent after a wait, so messages the client gets meanwhile queue.
    Delayed(Duration, String),
}

#[derive(Debug, Clone)]
pub struct Recorded {
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
    pub at: Instant,
}

pub struct FakeServer {
    pub url: String,
    pub requests: Arc<Mutex<Vec<Recorded>>>,
    /// When a stalled connection was seen closed by the client.
    pub closed_at: Arc<Mutex<Option<Instant>>>,
}

impl FakeServer {
    pub fn start(responses: Vec<Canned>) -> Self {
        Self::start_split(responses, Vec::new(), |_| false)
    }

    /// As [`Self::start`], with the requests `other_asks` picks (by body) answered from
    /// `others` in their own order: a background agent's requests race its parent's, so one
    /// queue for both would hand each the other's answers whenever they arrive swapped.
    pub fn start_split(responses: Vec<Canned>, others: Vec<Canned>, other_asks: fn(&Value) -> bool) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let closed_at = Arc::new(Mutex::new(None));
        let (reqs, closed) = (requests.clone(), closed_at.clone());
        std::thread::spawn(move || {
            let (mut queue, mut other_queue) = (responses.into_iter(), others.into_iter());
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let Some(recorded) = read_request(&stream) else { continue };
                let other = other_asks(&recorded.body);
                reqs.lock().unwrap().push(recorded);
                let next = if other { other_queue.next() } else { queue.next() };
                let Some(answer) = next else {
                    respond(&stream, 500, &[], "text/plain", b"fake server: no more responses");
                    continue;
                };
                match answer {
                    Canned::Sse(body) => respond(&stream, 200, &[], "text/event-stream", body.as_bytes()),
                    Canned::Delayed(wait, body) => {
                        std::thread::sleep(wait);
                        respond(&stream, 200, &[], "text/event-stream", body.as_bytes())
                    }
                    Canned::Error { status, headers, body } => {
                        respond(&stream, status, &headers, "application/json", body.to_string().as_bytes())
                    }
                    Canned::Stall(head) => {
                        let mut s = &stream;
                        let _ = write!(
                            s,
                            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n{head}\r\n",
                            head.len()
                        );
                        let _ = s.flush();
                        let mut buf = [0u8; 64];
                        let mut reader = &stream;
                        let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
                        // The client closing the connection ends the read with 0 bytes or an error.
                        while let Ok(n) = reader.read(&mut buf) {
                            if n == 0 {
                                break;
                            }
                        }
                        *closed.lock().unwrap() = Some(Instant::now());
                    }
                }
            }
        });
        FakeServer { url, requests, closed_at }
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }
}

fn read_request(stream: &TcpStream) -> Option<Recorded> {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let path = line.split_whitespace().nth(1)?.to_string();
    let mut headers = Vec::new();
    let mut length = 0usize;
    loop {
        let mut h = String::new();
        reader.read_line(&mut h).ok()?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (k, v) = h.split_once(':')?;
        let (k, v) = (k.trim().to_ascii_lowercase(), v.trim().to_string());
        if k == "content-length" {
            length = v.parse().ok()?;
        }
        headers.push((k, v));
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).ok()?;
    Some(Recorded { path, headers, body: serde_json::from_slice(&body).unwrap_or(Value::Null), at: Instant::now() })
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

/// The Anthropic SSE stream that delivers `message` (a Messages API response object).
pub fn sse_from_message(message: &Value) -> String {
    let mut out = String::new();
    let mut event = |name: &str, data: Value| out.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    let mut start = message.clone();
    start["content"] = json!([]);
    start["stop_reason"] = Value::Null;
    event("message_start", json!({"type": "message_start", "message": start}));
    for (i, block) in message["content"].as_array().unwrap().iter().enumerate() {
        match block["type"].as_str().unwrap() {
            "text" => {
                event(
                    "content_block_start",
                    json!({"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}}),
                );
                event("ping", json!({"type": "ping"}));
                event(
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": block["text"]}}),
                );
            }
            "tool_use" => {
                let skeleton = json!({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}});
                event(
                    "content_block_start",
                    json!({"type": "content_block_start", "index": i, "content_block": skeleton}),
                );
                event(
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": ""}}),
                );
                let input = block["input"].to_string();
                let (a, b) = input.split_at(input.len() / 2);
                for part in [a, b] {
                    event(
                        "content_block_delta",
                        json!({"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": part}}),
                    );
                }
            }
            "thinking" => {
                let skeleton = json!({"type": "thinking", "thinking": "", "signature": ""});
                event(
                    "content_block_start",
                    json!({"type": "content_block_start", "index": i, "content_block": skeleton}),
                );
                let thinking = json!({"type": "thinking_delta", "thinking": block["thinking"]});
                event("content_block_delta", json!({"type": "content_block_delta", "index": i, "delta": thinking}));
                let signature = json!({"type": "signature_delta", "signature": block["signature"]});
                event("content_block_delta", json!({"type": "content_block_delta", "index": i, "delta": signature}));
            }
            other => panic!("sse_from_message: no support for {other} blocks"),
        }
        event("content_block_stop", json!({"type": "content_block_stop", "index": i}));
    }
    event(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": message["stop_reason"], "stop_sequence": null}, "usage": message["usage"]}),
    );
    event("message_stop", json!({"type": "message_stop"}));
    out
}

pub fn overloaded(headers: &[(&str, &str)]) -> Canned {
    Canned::Error {
        status: 529,
        headers: headers.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        body: json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    }
}
