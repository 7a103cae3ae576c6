//! `--resume-drops-turn`, Claude Code's guard on a truncating resume: `--resume-session-at`
//! discards every session-file entry after the line it names, and the guard refuses unless what
//! it discards is one turn, the one whose prompt has the declared uuid. An SDK (the Python SDK's
//! `resume_drops_turn`) passes it so that a resume at a stale point fails loudly instead of
//! silently dropping more than the caller meant.
//!
//! The rules and texts are 2.1.332's, as its bundle words them; the refusal reaches the caller
//! as Claude Code's does (recorded against the fake model of tests/sdk/examples.py): the text on
//! stderr, then an `error_during_execution` result carrying it in `errors`, exit 1, nothing
//! forked or appended.

use serde_json::{json, Value};

/// The refusal's opening words, which callers match.
pub const REFUSED: &str = "Resume rejected by --resume-drops-turn:";

/// Why discarding `discarded` (the session file's entries after the resume point, in order)
/// is not dropping exactly the turn whose prompt is `turn`; `None` when it is.
pub fn check(discarded: &[Value], turn: &str) -> Option<String> {
    if !reloop_driver::is_uuid(turn) {
        return Some(format!("declared turn id is not a UUID: {turn}"));
    }
    // Entries that belong to no turn (a system line, a snapshot) may come first; nothing but
    // them is nothing to refuse.
    let first = discarded.iter().position(|e| !is_furniture(e))?;
    let prompt = &discarded[first];
    if !(kind(prompt) == "user" && uuid(prompt) == turn) {
        return Some(format!(
            "range does not start with the declared turn prompt; first discarded {}",
            entry(prompt, first)
        ));
    }
    if flag(prompt, "isMeta") || flag(prompt, "isCompactSummary") || is_tool_result(prompt) {
        return Some(format!("declared turn id names a non-prompt user entry; {}", entry(prompt, first)));
    }
    for (i, e) in discarded.iter().enumerate().skip(first + 1) {
        match kind(e) {
            "assistant" | "progress" | "system" | "attachment" => continue,
            "user" if uuid(e) == turn => continue,
            "user" if flag(e, "isCompactSummary") => {
                return Some(format!("range contains a compaction summary; {}", entry(e, i)))
            }
            "user" if is_tool_result(e) || flag(e, "isMeta") => continue,
            "user" => {
                return Some(format!(
                    "range contains a user entry not attributable to the declared turn; {}",
                    entry(e, i)
                ))
            }
            _ if is_furniture(e) => continue,
            _ => return Some(format!("range contains an unrecognized entry; {}", entry(e, i))),
        }
    }
    None
}

/// The whole refusal, as Claude Code words it.
pub fn refusal(resume_at: &str, turn: &str, reason: &str) -> String {
    format!("{REFUSED} resuming at {resume_at} would discard entries not attributable to turn {turn}: {reason}")
}

/// The `result` line of a refused resume (2.1.332's keys, in its order: nothing ran).
pub fn result_line(session_id: &str, uuid: &str, text: &str) -> Value {
    json!({
        "type": "result", "subtype": "error_during_execution", "duration_ms": 0, "duration_api_ms": 0,
        "is_error": true, "num_turns": 0, "stop_reason": null, "session_id": session_id, "total_cost_usd": 0,
        "usage": {"output_tokens_details": {"thinking_tokens": 0}, "input_tokens": 0, "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0, "output_tokens": 0,
            "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0}, "service_tier": "standard",
            "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0}, "inference_geo": "",
            "iterations": [], "speed": "standard", "fallback_credit": null},
        "modelUsage": {}, "permission_denials": [], "uuid": uuid, "errors": [text], "result_index": 0
    })
}

/// The entries after the one whose `uuid` is `at`, or `None` when no entry has it.
pub fn after<'a>(entries: &'a [Value], at: &str) -> Option<&'a [Value]> {
    let i = entries.iter().position(|e| uuid(e) == at)?;
    Some(&entries[i + 1..])
}

fn kind(e: &Value) -> &str {
    e.get("type").and_then(Value::as_str).unwrap_or("")
}

fn uuid(e: &Value) -> &str {
    e.get("uuid").and_then(Value::as_str).unwrap_or("")
}

fn flag(e: &Value, key: &str) -> bool {
    e.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// A line of no turn: one without a message (a snapshot, a summary, a title), or a system line.
fn is_furniture(e: &Value) -> bool {
    !matches!(kind(e), "user" | "assistant") && (kind(e) == "system" || e.get("message").is_none())
}

/// A user line that answers tool calls rather than asks.
fn is_tool_result(e: &Value) -> bool {
    e.pointer("/message/content")
        .and_then(Value::as_array)
        .is_some_and(|blocks| blocks.iter().any(|b| b.get("type").and_then(Value::as_str) == Some("tool_result")))
}

/// `entry N [type=T, uuid=U]`, as Claude Code names an entry it refuses.
fn entry(e: &Value, i: usize) -> String {
    let attachment = e
        .pointer("/attachment/type")
        .and_then(Value::as_str)
        .filter(|_| kind(e) == "attachment")
        .map(|t| format!(" ({t})"))
        .unwrap_or_default();
    format!("entry {i} [type={}{attachment}, uuid={}]", kind(e), uuid(e))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TURN: &str = "0b5c8f1e-2d3a-4c5b-8e6f-7a8b9c0d1e2f";

    fn line(kind: &str, uuid: &str, content: Value) -> Value {
        json!({"type": kind, "uuid": uuid, "message": {"role": kind, "content": content}})
    }

    #[test]
    fn dropping_exactly_the_declared_turn_passes_and_anything_else_is_refused_with_claude_codes_words() {
        let prompt = line("user", TURN, json!("Reply with exactly: two"));
        let answer = line("assistant", "a2", json!([{"type": "text", "text": "two"}]));
        let result = line("user", "r2", json!([{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]));
        let system = json!({"type": "system", "uuid": "s1", "subtype": "turn_duration"});
        let next = line("user", "p3", json!("Reply with exactly: three"));
        assert_eq!(check(&[], TURN), None);
        assert_eq!(
            check(&[system.clone(), prompt.clone(), answer.clone(), result.clone(), answer.clone()], TURN),
            None
        );
        assert_eq!(
            check(std::slice::from_ref(&prompt), "not-a-uuid").as_deref(),
            Some("declared turn id is not a UUID: not-a-uuid")
        );
        let other = "9e1d2c3b-4a5f-4e6d-8c7b-6a5f4e3d2c1b";
        assert_eq!(
            check(&[system, prompt.clone(), answer.clone()], other).as_deref(),
            Some(&*format!(
                "range does not start with the declared turn prompt; first discarded entry 1 [type=user, uuid={TURN}]"
            ))
        );
        assert_eq!(
            check(&[prompt, answer, next], TURN).as_deref(),
            Some("range contains a user entry not attributable to the declared turn; entry 2 [type=user, uuid=p3]")
        );
        assert_eq!(
            refusal("k1", TURN, "why"),
            format!("Resume rejected by --resume-drops-turn: resuming at k1 would discard entries not attributable to turn {TURN}: why")
        );
    }
}
