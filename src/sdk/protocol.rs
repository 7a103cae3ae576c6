//! The stream-json control protocol's wire: what the SDK writes on reloop's stdin, one JSON
//! object a line, and the requests reloop sends the SDK and waits on.
//!
//! Hostile input is the normal case: a line that is not JSON, not an object or of an unknown
//! type is reported on stderr and skipped; a line longer than [`MAX_LINE_BYTES`] is skipped
//! without being held in memory; stdin closing ends the reader, and every request still waiting
//! for the SDK's answer then fails, so nothing waits forever.

use std::collections::HashMap;
use std::future::Future;
use std::io::BufRead;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tokio::sync::{mpsc, oneshot};

/// The longest stdin line taken (a user message with images fits; a runaway writer does not).
pub const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// One line the SDK wrote.
#[derive(Debug)]
pub enum Incoming {
    /// `{"type": "user", "message": {...}, "origin"?: {...}, "uuid"?: "..."}`: the next prompt,
    /// the `origin` the host stamped on it (echoed on its query's result) and its uuid.
    User(Vec<reloop_core::ContentBlock>, Option<Value>, Option<String>),
    /// `{"type": "control_request", "request_id", "request": {"subtype", ...}}`.
    Request { id: String, request: Value },
    /// `{"type": "control_response", "response": {"subtype": "success"|"error", "request_id", ...}}`.
    Response { id: String, answer: Result<Value, String> },
    /// `{"type": "control_cancel_request", "request_id"}`: the SDK withdrew one of its requests.
    Cancel { id: String },
}

/// Reads stdin on a thread of its own and hands each line over, parsed. The SDK's answers to
/// reloop's requests (and its cancels) go straight to `wire`, so a request is answered even while
/// the session is busy waiting on another (starting the SDK's in-process MCP servers before the
/// first prompt). The channel closes at end of input (or a read error), after `wire` is closed.
pub fn read_stdin(wire: Wire) -> mpsc::UnboundedReceiver<Incoming> {
    let (tx, rx) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut reader = stdin.lock();
        let mut number = 0u64;
        loop {
            number += 1;
            let line = match read_bounded_line(&mut reader) {
                Ok(Some(Ok(line))) => line,
                Ok(Some(Err(skipped))) => {
                    crate::term::errln!(
                        "reloop: stdin line {number}: {skipped} bytes, over the {MAX_LINE_BYTES}-byte limit; skipped"
                    );
                    continue;
                }
                Ok(None) | Err(_) => break,
            };
            if line.trim().is_empty() {
                continue;
            }
            match parse(&line) {
                Ok(Incoming::Response { id, answer }) => wire.answered(&id, answer),
                Ok(Incoming::Cancel { id }) => wire.cancelled(&id),
                Ok(incoming) => {
                    if tx.send(incoming).is_err() {
                        break;
                    }
                }
                Err(e) => crate::term::errln!("reloop: stdin line {number}: {e}; skipped"),
            }
        }
        wire.close();
    });
    rx
}

/// One line, or how long the over-long line was that was skipped; `None` at end of input.
fn read_bounded_line(reader: &mut impl BufRead) -> std::io::Result<Option<Result<String, usize>>> {
    let mut line = Vec::new();
    let mut skipped = 0usize;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(match (line.is_empty(), skipped) {
                (true, 0) => None,
                (_, 0) => Some(Ok(String::from_utf8_lossy(&line).into_owned())),
                (_, n) => Some(Err(n)),
            });
        }
        let (chunk, done) = match memchr::memchr(b'\n', buf) {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        if skipped > 0 || line.len() + chunk.len() > MAX_LINE_BYTES {
            skipped += line.len() + chunk.len();
            line = Vec::new();
        } else {
            line.extend_from_slice(chunk);
        }
        let used = done.unwrap_or(buf.len());
        reader.consume(used);
        if done.is_some() {
            return Ok(Some(if skipped > 0 { Err(skipped) } else { Ok(String::from_utf8_lossy(&line).into_owned()) }));
        }
    }
}

/// Reads one line of the protocol.
pub fn parse(line: &str) -> Result<Incoming, String> {
    let value: Value = serde_json::from_str(line).map_err(|e| format!("not JSON ({e})"))?;
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_string);
    match value.get("type").and_then(Value::as_str) {
        Some("user") => {
            let message = value.get("message").cloned().unwrap_or(Value::Null);
            let content = user_content(&message)?;
            // `"origin": null` is no stamp, nor is the runner's own notification stamp.
            let origin = reloop_core::profile::host_origin(value.get("origin").filter(|o| !o.is_null()).cloned());
            Ok(Incoming::User(content, origin, text(&value, "uuid")))
        }
        Some("control_request") => {
            let id = text(&value, "request_id").ok_or("a control_request without a request_id")?;
            let request = value.get("request").cloned().unwrap_or(Value::Null);
            Ok(Incoming::Request { id, request })
        }
        Some("control_response") => {
            let response = value.get("response").ok_or("a control_response without a response")?;
            let id = text(response, "request_id").ok_or("a control_response without a request_id")?;
            let answer = match response.get("subtype").and_then(Value::as_str) {
                Some("success") => Ok(response.get("response").cloned().unwrap_or(Value::Null)),
                _ => Err(text(response, "error").unwrap_or_else(|| "the SDK answered with an error".into())),
            };
            Ok(Incoming::Response { id, answer })
        }
        Some("control_cancel_request") => {
            Ok(Incoming::Cancel { id: text(&value, "request_id").ok_or("a cancel without a request_id")? })
        }
        Some(other) => Err(format!("unknown message type {other:?}")),
        None => Err("a JSON object with a \"type\" was expected".into()),
    }
}

/// A user message's content: a string, or content blocks.
fn user_content(message: &Value) -> Result<Vec<reloop_core::ContentBlock>, String> {
    match message.get("content") {
        Some(Value::String(text)) => Ok(vec![reloop_core::ContentBlock::text(text.clone())]),
        Some(blocks @ Value::Array(_)) => {
            serde_json::from_value(blocks.clone()).map_err(|e| format!("bad user message content ({e})"))
        }
        _ => Err("a user message needs \"message\": {\"content\": ...}".into()),
    }
}

/// Who waits for the SDK's answer to each of reloop's requests, by request id.
type Waiting = HashMap<String, oneshot::Sender<Result<Value, String>>>;

/// Writes protocol lines on stdout and keeps the requests reloop sent that wait for an answer.
#[derive(Clone, Default)]
pub struct Wire {
    pending: Arc<Mutex<Waiting>>,
    next: Arc<AtomicU64>,
    /// Once stdin has closed, no answer can come: new requests fail at once.
    closed: Arc<std::sync::atomic::AtomicBool>,
    /// Lines kept here instead of printed (a replay read by the session-file writer).
    captured: Option<Arc<Mutex<Vec<Value>>>>,
}

impl Wire {
    /// A wire that prints nothing and keeps its lines in the returned list.
    pub fn capturing() -> (Wire, Arc<Mutex<Vec<Value>>>) {
        let lines = Arc::new(Mutex::new(Vec::new()));
        (Wire { captured: Some(lines.clone()), ..Wire::default() }, lines)
    }

    /// Whether lines are kept rather than printed.
    pub fn is_capturing(&self) -> bool {
        self.captured.is_some()
    }

    /// One line on stdout, flushed.
    pub fn line(&self, value: &Value) {
        if let Some(lines) = &self.captured {
            if let Ok(mut lines) = lines.lock() {
                lines.push(value.clone());
            }
            return;
        }
        match serde_json::to_string(value) {
            Ok(text) => crate::term::write_stdout(&format!("{}\n", crate::term::json_safe(&text)), true),
            Err(e) => crate::term::errln!("reloop: cannot write a JSON line: {e}"),
        }
    }

    /// Answers an SDK request.
    pub fn respond(&self, id: &str, answer: Result<Value, String>) {
        let response = match answer {
            Ok(Value::Null) => json!({"subtype": "success", "request_id": id}),
            Ok(value) => json!({"subtype": "success", "request_id": id, "response": value}),
            Err(error) => json!({"subtype": "error", "request_id": id, "error": error}),
        };
        self.line(&json!({"type": "control_response", "response": response}));
    }

    /// Sends a request to the SDK and waits for its answer (or for stdin to close).
    pub async fn request(&self, request: Value) -> Result<Value, String> {
        self.send_request(request).await
    }

    /// Writes the request now and returns the wait for its answer, so requests leave in the order
    /// they are made. Dropping the wait forgets the request: a late answer is reported, not kept.
    pub fn send_request(&self, request: Value) -> impl Future<Output = Result<Value, String>> + Send + 'static {
        let id = format!("reloop_req_{}", self.next.fetch_add(1, Ordering::Relaxed) + 1);
        let (tx, rx) = oneshot::channel();
        let registered = {
            let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
            let open = !self.closed.load(Ordering::SeqCst);
            if open {
                pending.insert(id.clone(), tx);
            }
            open
        };
        if registered {
            self.line(&json!({"type": "control_request", "request_id": id, "request": request}));
        }
        let forget = Forget { pending: self.pending.clone(), id };
        async move {
            if !registered {
                return Err("the SDK closed reloop's stdin; nobody can answer".into());
            }
            let answer = rx.await.unwrap_or_else(|_| Err("the SDK closed reloop's stdin before answering".into()));
            drop(forget);
            answer
        }
    }

    /// The SDK answered one of reloop's requests; an answer to no request is reported.
    pub fn answered(&self, id: &str, answer: Result<Value, String>) {
        let waiting = self.pending.lock().unwrap_or_else(|p| p.into_inner()).remove(id);
        match waiting {
            Some(tx) => {
                let _ = tx.send(answer);
            }
            // A late answer to a request of reloop's that was given up on (a call past its
            // timeout, an aborted prompt) is expected; one to a request never made is reported.
            None if self.issued(id) => {}
            None => crate::term::errln!("reloop: a control_response for {id}, which no request awaits; ignored"),
        }
    }

    /// Whether `id` names a request reloop has sent.
    fn issued(&self, id: &str) -> bool {
        let sent = self.next.load(Ordering::Relaxed);
        id.strip_prefix("reloop_req_").and_then(|n| n.parse::<u64>().ok()).is_some_and(|n| n >= 1 && n <= sent)
    }

    /// The SDK withdrew a request of its own or answered "cancel" for one of reloop's: a request
    /// of reloop's still waiting fails (a permission prompt then denies).
    pub fn cancelled(&self, id: &str) {
        if let Some(tx) = self.pending.lock().unwrap_or_else(|p| p.into_inner()).remove(id) {
            let _ = tx.send(Err("the SDK cancelled the request".into()));
        }
    }

    /// Stdin closed: every request still waiting fails, and so will any new one.
    pub fn close(&self) {
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        self.closed.store(true, Ordering::SeqCst);
        pending.clear();
    }
}

/// Removes a request nobody waits for any more from the waiting ones.
struct Forget {
    pending: Arc<Mutex<Waiting>>,
    id: String,
}

impl Drop for Forget {
    fn drop(&mut self) {
        self.pending.lock().unwrap_or_else(|p| p.into_inner()).remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sdk_s_lines_parse() {
        let user = r#"{"type": "user", "session_id": "", "message": {"role": "user", "content": "read a.txt"}, "parent_tool_use_id": null}"#;
        assert!(matches!(parse(user), Ok(Incoming::User(c, None, _)) if c.len() == 1));
        let stamped = r#"{"type": "user", "message": {"role": "user", "content": "hi"}, "origin": {"kind": "human"}}"#;
        assert!(matches!(parse(stamped), Ok(Incoming::User(_, Some(o), _)) if o == json!({"kind": "human"})));
        let null = r#"{"type": "user", "message": {"role": "user", "content": "hi"}, "origin": null}"#;
        assert!(matches!(parse(null), Ok(Incoming::User(_, None, _))));
        // Only the runner tells an agent's end: a host's notification stamp is not taken.
        let forged = r#"{"type": "user", "message": {"role": "user", "content": "hi"}, "origin": {"kind": "task-notification", "runId": "r1"}}"#;
        assert!(matches!(parse(forged), Ok(Incoming::User(_, None, _))));
        let init = r#"{"type": "control_request", "request_id": "req_1", "request": {"subtype": "initialize", "hooks": null}}"#;
        assert!(matches!(parse(init), Ok(Incoming::Request { id, .. }) if id == "req_1"));
        let allow = r#"{"type": "control_response", "response": {"subtype": "success", "request_id": "x", "response": {"behavior": "allow"}}}"#;
        assert!(matches!(parse(allow), Ok(Incoming::Response { answer: Ok(_), .. })));
        let error =
            r#"{"type": "control_response", "response": {"subtype": "error", "request_id": "x", "error": "boom"}}"#;
        assert!(matches!(parse(error), Ok(Incoming::Response { answer: Err(e), .. }) if e == "boom"));
        for bad in ["not json", "[]", r#"{"type": "nope"}"#, r#"{"type": "user"}"#, r#"{"type": "control_request"}"#] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn an_over_long_line_is_skipped_and_the_next_is_read() {
        let long = "x".repeat(MAX_LINE_BYTES + 10);
        let input = format!("{long}\n{{\"ok\":1}}\n");
        let mut reader = std::io::BufReader::with_capacity(1 << 16, input.as_bytes());
        assert_eq!(read_bounded_line(&mut reader).unwrap(), Some(Err(MAX_LINE_BYTES + 10)));
        assert_eq!(read_bounded_line(&mut reader).unwrap(), Some(Ok("{\"ok\":1}".to_string())));
        assert_eq!(read_bounded_line(&mut reader).unwrap(), None);
    }

    #[tokio::test]
    async fn a_request_nobody_waits_for_is_forgotten_and_its_late_answer_goes_nowhere() {
        let wire = Wire::default();
        let waiting = |wire: &Wire| wire.pending.lock().unwrap().len();
        let given_up = wire.send_request(json!({"subtype": "mcp_message"}));
        assert_eq!(waiting(&wire), 1, "the request is out before anyone polls it");
        drop(given_up);
        assert_eq!(waiting(&wire), 0);
        wire.answered("reloop_req_1", Ok(json!({})));
        assert!(wire.issued("reloop_req_1") && !wire.issued("reloop_req_2") && !wire.issued("nobody"));
        let answered = wire.send_request(json!({"subtype": "mcp_message"}));
        wire.answered("reloop_req_2", Ok(json!({"mcp_response": {}})));
        assert_eq!(answered.await, Ok(json!({"mcp_response": {}})));
        assert_eq!(waiting(&wire), 0);
    }

    #[tokio::test]
    async fn a_request_waiting_when_stdin_closes_fails() {
        let wire = Wire::default();
        let waiting = {
            let wire = wire.clone();
            tokio::spawn(async move { wire.request(json!({"subtype": "can_use_tool"})).await })
        };
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        wire.close();
        assert!(waiting.await.unwrap().is_err());
        assert!(wire.request(json!({})).await.is_err());
    }
}
