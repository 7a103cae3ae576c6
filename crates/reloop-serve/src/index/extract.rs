//! What the index keeps of a journaled step: the text a person searches for (prompts, the
//! model's text, tool inputs and results, summaries) and the usage a listing totals. Read from
//! the event's JSON as the journal holds it, so indexing decodes nothing else of a step.

use reloop_core::Usage;
use serde_json::Value;

/// The most of one text the index keeps: a tool result of megabytes is found by its start.
pub const MAX_TEXT: usize = 32 * 1024;

/// One searchable text of a step.
#[derive(Debug, Clone, PartialEq)]
pub struct Text {
    /// `prompt`, `text` (the model's), `tool_input`, `tool_result` or `summary`.
    pub kind: &'static str,
    /// The text, at most [`MAX_TEXT`] bytes.
    pub body: String,
}

/// What one step adds to its session's listing and search.
#[derive(Debug, Default)]
pub struct StepFacts {
    /// Its searchable texts.
    pub texts: Vec<Text>,
    /// A response's model (when it named one) and usage.
    pub response: Option<(Option<String>, Usage)>,
    /// A prompt's text (for the listing's first prompt).
    pub prompt: Option<String>,
}

/// The facts of a step whose event is `event` (its journaled JSON).
pub fn step_facts(event: &Value) -> StepFacts {
    let mut facts = StepFacts::default();
    let kind = event.get("kind").and_then(Value::as_str).unwrap_or_default();
    match kind {
        "user_input" | "queued_input" => {
            let text = content_text(event.get("content"));
            // What a person typed: the prompt without the context reminders a run prepends.
            let typed = event
                .get("content")
                .and_then(|c| serde_json::from_value::<Vec<reloop_core::ContentBlock>>(c.clone()).ok())
                .map(|blocks| reloop_inspect::timeline::text_of(&blocks))
                .filter(|t| !t.trim().is_empty());
            facts.prompt = Some(typed.unwrap_or_else(|| text.clone()));
            push(&mut facts.texts, "prompt", text);
        }
        "model_block" => {
            let block = event.get("block").unwrap_or(&Value::Null);
            match block.get("type").and_then(Value::as_str) {
                Some("text") => push(&mut facts.texts, "text", str_of(block.get("text"))),
                Some("tool_use") => {
                    let name = str_of(block.get("name"));
                    let input = block.get("input").map(Value::to_string).unwrap_or_default();
                    push(&mut facts.texts, "tool_input", format!("{name} {input}"));
                }
                _ => {}
            }
        }
        "tool_done" => push(&mut facts.texts, "tool_result", content_text(event.get("content"))),
        "compact_done" => push(&mut facts.texts, "summary", str_of(event.get("summary"))),
        _ => {}
    }
    if matches!(kind, "model_done" | "compact_done") {
        let model = event.get("model").and_then(Value::as_str).map(str::to_string);
        let usage = event.get("usage").and_then(|u| serde_json::from_value(u.clone()).ok()).unwrap_or_default();
        facts.response = Some((model, usage));
    }
    facts
}

fn str_of(v: Option<&Value>) -> String {
    v.and_then(Value::as_str).unwrap_or_default().to_string()
}

/// The text of message content: a string, or the text of each block (a tool result's nested
/// content included), one per line.
pub fn content_text(content: Option<&Value>) -> String {
    let mut out = String::new();
    fn walk(v: &Value, out: &mut String) {
        match v {
            Value::String(s) => {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(s);
            }
            Value::Array(items) => items.iter().for_each(|i| walk(i, out)),
            Value::Object(o) => {
                if let Some(t) = o.get("text") {
                    walk(t, out);
                } else if let Some(c) = o.get("content") {
                    walk(c, out);
                }
            }
            _ => {}
        }
        if out.len() > MAX_TEXT * 2 {
            out.truncate(floor_char(out, MAX_TEXT * 2));
        }
    }
    if let Some(c) = content {
        walk(c, &mut out);
    }
    out
}

fn push(texts: &mut Vec<Text>, kind: &'static str, mut body: String) {
    if body.trim().is_empty() {
        return;
    }
    body.truncate(floor_char(&body, MAX_TEXT));
    texts.push(Text { kind, body });
}

/// The largest char boundary of `s` at or below `at`.
pub fn floor_char(s: &str, at: usize) -> usize {
    if at >= s.len() {
        return s.len();
    }
    (0..=at).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn prompts_text_tool_calls_and_results_are_searchable() {
        let f = step_facts(&json!({"kind": "user_input", "content": [{"type": "text", "text": "find the bug"}]}));
        assert_eq!(f.prompt.as_deref(), Some("find the bug"));
        assert_eq!(f.texts, vec![Text { kind: "prompt", body: "find the bug".into() }]);
        let f = step_facts(&json!({"kind": "model_block", "index": 0,
            "block": {"type": "tool_use", "id": "t", "name": "Grep", "input": {"pattern": "login"}}}));
        assert_eq!(f.texts[0].body, r#"Grep {"pattern":"login"}"#);
        let f = step_facts(&json!({"kind": "tool_done", "tool_use_id": "t",
            "content": [{"type": "text", "text": "src/a.ts"}]}));
        assert_eq!(f.texts[0].kind, "tool_result");
        let f =
            step_facts(&json!({"kind": "model_done", "model": "m", "usage": {"input_tokens": 3, "output_tokens": 4}}));
        let (model, usage) = f.response.unwrap();
        assert_eq!((model.as_deref(), usage.input_tokens, usage.output_tokens), (Some("m"), 3, 4));
    }

    #[test]
    fn a_huge_text_is_kept_only_up_to_the_bound_on_a_char_boundary() {
        let big = "é".repeat(MAX_TEXT);
        let f = step_facts(&json!({"kind": "tool_done", "tool_use_id": "t", "content": big}));
        assert!(f.texts[0].body.len() <= MAX_TEXT);
        assert!(step_facts(&json!({"kind": "nonsense"})).texts.is_empty());
    }
}
