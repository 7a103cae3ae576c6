//! Claude Code's result text for a single exchange too long to compact (both recorded versions,
//! `tests/print/recorded/*/error_endings/prompt_too_long_single`): the request's size and limit
//! as the API's error gives them, and Claude Code's own estimate of the conversation, so the
//! user sees how much of the request is not the conversation.
//!
//! The estimate is the bundles' (`Math.round(text.length / 4)` per block, JavaScript's length
//! in UTF-16 units; 2,000 per image or document), taken over the conversation the session
//! holds. Claude Code holds more than reloop there (its agent and skill listings, and in
//! 2.1.332 its environment and deferred-tool messages, count in its estimate), so the number is
//! the same rule over another conversation, not the recorded number.

use crate::message::{ContentBlock, Message, ToolResultContent};

/// The text every variant opens with.
const HEAD: &str = "Prompt is too long";
/// The conversation is "most of" the request from this share of it on.
const OWN_CONTENT_SHARE: f64 = 0.8;
/// What Claude Code counts for an image or a document block.
const IMAGE_TOKENS: u64 = 2_000;

/// The result text for `api_message`, the API's error (`prompt is too long: 210000 tokens >
/// 200000 maximum`), with `messages` the conversation sent.
pub fn single_exchange_text<'a>(api_message: &str, messages: impl IntoIterator<Item = &'a Message>) -> String {
    let Some((actual, limit)) = reported_sizes(api_message) else {
        return format!(
            "{HEAD} · this conversation is a single exchange and cannot be compacted — the request size comes \
             mostly from system prompt, tool definitions, or attachments."
        );
    };
    let estimate = conversation_estimate(messages);
    if estimate as f64 >= actual as f64 * OWN_CONTENT_SHARE {
        return format!(
            "{HEAD} · the request is ~{actual} tokens (limit {limit}) and this conversation's own content is most \
             of it. A single-exchange conversation cannot be compacted; start with less content (smaller files or \
             pasted text)."
        );
    }
    format!(
        "{HEAD} · the request is ~{actual} tokens (limit {limit}) but this conversation is only ~{estimate} tokens \
         — the rest is system prompt, tool definitions, and attachment content. A single-exchange conversation \
         cannot be compacted; reduce attached files/tools or start with less context."
    )
}

/// The two numbers of `prompt is too long … N tokens > M`, as Claude Code's pattern
/// `/prompt is too long[^0-9]*(\d+)\s*tokens?\s*>\s*(\d+)/i` reads them.
pub fn reported_sizes(message: &str) -> Option<(u64, u64)> {
    let lower = message.to_ascii_lowercase();
    let mark = "prompt is too long";
    let mut from = 0;
    while let Some(at) = lower[from..].find(mark) {
        let start = from + at + mark.len();
        if let Some(sizes) = sizes_after(&lower[start..]) {
            return Some(sizes);
        }
        from = start;
    }
    None
}

/// `[^0-9]*(\d+)\s*tokens?\s*>\s*(\d+)` at the start of `rest`.
fn sizes_after(rest: &str) -> Option<(u64, u64)> {
    let rest = rest.trim_start_matches(|c: char| !c.is_ascii_digit());
    let (actual, rest) = digits(rest)?;
    let rest = rest.trim_start_matches(is_js_space);
    let rest = rest.strip_prefix("token").map_or(rest, |r| r.strip_prefix('s').unwrap_or(r));
    let rest = rest.trim_start_matches(is_js_space).strip_prefix('>')?;
    let (limit, _) = digits(rest.trim_start_matches(is_js_space))?;
    Some((actual, limit))
}

fn digits(text: &str) -> Option<(u64, &str)> {
    let end = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    // JavaScript's parseInt of a longer run is a float; no API reports such a size.
    Some((text[..end].parse().ok()?, &text[end..]))
}

fn is_js_space(c: char) -> bool {
    c.is_whitespace() || c == '\u{feff}'
}

/// Claude Code's estimate of a conversation's tokens.
pub fn conversation_estimate<'a>(messages: impl IntoIterator<Item = &'a Message>) -> u64 {
    messages.into_iter().flat_map(|m| &m.content).map(block_estimate).sum()
}

fn block_estimate(block: &ContentBlock) -> u64 {
    match block {
        ContentBlock::Text(t) => chars_estimate(&t.text),
        ContentBlock::ToolUse(call) => chars_estimate(&format!("{}{}", call.name, call.input)),
        ContentBlock::ToolResult(result) => match &result.content {
            ToolResultContent::Text(text) => chars_estimate(text),
            ToolResultContent::Blocks(blocks) => blocks.iter().map(block_estimate).sum(),
        },
        ContentBlock::Thinking(t) => chars_estimate(&t.thinking),
        ContentBlock::RedactedThinking(t) => chars_estimate(&t.data),
        ContentBlock::Other(map) => match map.get("type").and_then(|t| t.as_str()) {
            Some("image" | "document") => IMAGE_TOKENS,
            _ => chars_estimate(&serde_json::Value::Object(map.clone()).to_string()),
        },
    }
}

/// `Math.round(text.length / 4)`, the length in UTF-16 units as JavaScript counts it.
fn chars_estimate(text: &str) -> u64 {
    let units = text.encode_utf16().count() as u64;
    (units + 2) / 4
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recorded_texts_with_the_estimate_of_the_conversation_held() {
        let prompt = [Message::user_text("检查登录模块")];
        let api = "prompt is too long: 210000 tokens > 200000 maximum";
        assert_eq!(
            single_exchange_text(api, &prompt),
            "Prompt is too long · the request is ~210000 tokens (limit 200000) but this conversation is only ~2 \
             tokens — the rest is system prompt, tool definitions, and attachment content. A single-exchange \
             conversation cannot be compacted; reduce attached files/tools or start with less context."
        );
        let big = [Message::user_text("x".repeat(4 * 170_000))];
        assert!(single_exchange_text(api, &big).contains("this conversation's own content is most of it."));
        assert!(single_exchange_text("prompt is too long", &prompt)
            .starts_with("Prompt is too long · this conversation is a single exchange and cannot be compacted"));
    }

    #[test]
    fn sizes_are_read_as_claude_code_s_pattern_reads_them() {
        assert_eq!(reported_sizes("prompt is too long: 210000 tokens > 200000 maximum"), Some((210_000, 200_000)));
        assert_eq!(reported_sizes("Prompt is too long (1 token>2)"), Some((1, 2)));
        assert_eq!(reported_sizes("PROMPT IS TOO LONG:5 >6"), Some((5, 6)));
        assert_eq!(reported_sizes("prompt is too long: 5 words > 6"), None);
        assert_eq!(reported_sizes("prompt is too long: x; prompt is too long 7 tokens > 8"), Some((7, 8)));
        assert_eq!(reported_sizes("context too large: 5 tokens > 6"), None);
        assert_eq!(reported_sizes("prompt is too long: 99999999999999999999999 tokens > 1"), None);
    }

    #[test]
    fn the_estimate_rounds_each_block_as_math_round_does() {
        // 6 UTF-16 units: 1.5 rounds up; an astral character counts two.
        assert_eq!(chars_estimate("检查登录模块"), 2);
        assert_eq!(chars_estimate("a"), 0);
        assert_eq!(chars_estimate("ab"), 1);
        assert_eq!(chars_estimate("😀"), 1);
        let call = ContentBlock::tool_use("t1", "Read", serde_json::json!({"file_path": "/a"}));
        // `Read{"file_path":"/a"}`: 22 units, 5.5 rounded up.
        assert_eq!(block_estimate(&call), 6);
        let mut image = serde_json::Map::new();
        image.insert("type".into(), "image".into());
        assert_eq!(block_estimate(&ContentBlock::Other(image)), 2_000);
    }
}
