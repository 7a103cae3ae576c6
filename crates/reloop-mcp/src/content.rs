//! A `tools/call` result as the model sees it: MCP content blocks mapped to Anthropic
//! `tool_result` blocks the way Claude Code maps them, capped like Claude Code caps MCP output.
//!
//! What Claude Code (2.1.197 and 2.1.332 alike, tests/print/recorded/*/sdk_wire/mcp_*) gives the
//! model and the app: a result with `structuredContent` as one string, that object's compact
//! JSON (the `content` beside it unused); any other as the list of blocks, even one text block.

use serde_json::{json, Value};

/// Claude Code's default cap on one MCP result (`MAX_MCP_OUTPUT_TOKENS`), the same as Read's.
pub const MAX_OUTPUT_TOKENS: usize = 25_000;
/// The environment variable that changes the cap, Claude Code's name.
pub(crate) const MAX_OUTPUT_TOKENS_ENV: &str = "MAX_MCP_OUTPUT_TOKENS";
/// Characters per token in Claude Code's estimate.
const CHARS_PER_TOKEN: usize = 4;
/// The image types the Messages API takes; another image is described, not sent.
const IMAGE_TYPES: &[&str] = &["image/jpeg", "image/png", "image/gif", "image/webp"];

/// What a call answers: Anthropic content blocks (`text`, `image`) and whether it failed.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CallOutput {
    /// The `tool_result` content the model is given.
    pub blocks: Vec<Value>,
    /// The result is an error (`is_error` on the `tool_result`): the tool's own or the server's.
    pub is_error: bool,
    /// The server itself failed (no answer in time, connection lost, garbage, not connected),
    /// as opposed to a tool that answered with an error: the user is told too.
    pub server_failed: bool,
    /// The result travels as a plain string, not a list of blocks: reloop's own failures, and a
    /// `structuredContent` answer, which Claude Code sends as its JSON text.
    pub plain: bool,
    /// The answer's `structuredContent`, kept beside its text for the caller's stream (Claude
    /// Code's `tool_use_result` carries it).
    pub structured_content: Option<Value>,
    /// The answer's `resource_link` items as Claude Code 2.1.332 lists them in its
    /// `tool_use_result` (`uri`, `name`, `description`).
    pub resource_links: Vec<Value>,
    /// The server's `serverInfo` from `initialize` (`name`, `version`), which 2.1.332's
    /// `tool_use_result` names under `_meta`.
    pub server_info: Option<Value>,
}

impl CallOutput {
    /// A failure told to the model as one text block.
    pub fn error(text: impl Into<String>) -> Self {
        CallOutput {
            blocks: vec![json!({"type": "text", "text": text.into()})],
            is_error: true,
            plain: true,
            ..CallOutput::default()
        }
    }

    /// The server failed the call; the model and the user are told `text`.
    pub fn server_failure(text: impl Into<String>) -> Self {
        CallOutput { server_failed: true, ..CallOutput::error(text) }
    }

    /// The text blocks joined by newlines (images left out).
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self.blocks.iter().filter_map(|b| b.get("text").and_then(Value::as_str)).collect();
        texts.join("\n")
    }

    /// Whether every block is text: the result can travel as a plain string.
    pub fn is_text_only(&self) -> bool {
        self.blocks.iter().all(|b| b.get("type").and_then(Value::as_str) == Some("text"))
    }
}

/// The cap in tokens: [`MAX_OUTPUT_TOKENS_ENV`] when it holds a positive number, else the default.
pub(crate) fn max_output_tokens() -> usize {
    std::env::var(MAX_OUTPUT_TOKENS_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|n| *n > 0)
        .unwrap_or(MAX_OUTPUT_TOKENS)
}

/// Maps a `CallToolResult` (as JSON on the wire) from `server`. A result that is not an object
/// with a `content` list or `structuredContent` is garbage and becomes an error for the model.
pub(crate) fn map_result(server: &str, result: &Value, max_tokens: usize) -> CallOutput {
    let is_error = result.get("isError").and_then(Value::as_bool).unwrap_or(false);
    if let Some(structured) = result.get("structuredContent").filter(|v| !v.is_null()) {
        let blocks = cap(vec![text_block(structured.to_string())], max_tokens);
        return CallOutput {
            blocks,
            is_error,
            plain: true,
            structured_content: Some(structured.clone()),
            ..CallOutput::default()
        };
    }
    let content = result.get("content").and_then(Value::as_array);
    let blocks: Vec<Value> = content.into_iter().flatten().flat_map(|item| map_block(server, item)).collect();
    if blocks.is_empty() && !result.is_object() {
        return CallOutput::server_failure(format!(
            "MCP server {server:?} answered with something that is not a tool result"
        ));
    }
    // An error's text stays a string, as reloop has sent it: no recording shows Claude Code's.
    let resource_links = content.into_iter().flatten().filter_map(resource_link).collect();
    CallOutput { blocks: cap(blocks, max_tokens), is_error, plain: is_error, resource_links, ..CallOutput::default() }
}

/// A `resource_link` item as 2.1.332 lists it (sdk_wire/mcp_result): `uri`, `name`, then
/// `description` when the server gave one.
fn resource_link(item: &Value) -> Option<Value> {
    if str_of(item, "type") != "resource_link" {
        return None;
    }
    let mut link = serde_json::Map::new();
    for key in ["uri", "name", "description"] {
        if let Some(v) = item.get(key).filter(|v| !v.is_null()) {
            link.insert(key.to_string(), v.clone());
        }
    }
    Some(Value::Object(link))
}

fn text_block(text: String) -> Value {
    json!({"type": "text", "text": text})
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn image_block(data: &str, mime: &str) -> Value {
    json!({"type": "image", "source": {"type": "base64", "media_type": mime, "data": data}})
}

fn map_block(server: &str, item: &Value) -> Vec<Value> {
    match str_of(item, "type") {
        "text" => vec![text_block(str_of(item, "text").to_string())],
        "image" if IMAGE_TYPES.contains(&str_of(item, "mimeType")) => {
            vec![image_block(str_of(item, "data"), str_of(item, "mimeType"))]
        }
        "image" => vec![text_block(format!(
            "[Image of type {} left out: the model takes only JPEG, PNG, GIF and WebP]",
            str_of(item, "mimeType")
        ))],
        "audio" => vec![text_block(format!(
            "[Audio ({}) left out: reloop does not pass audio to the model]",
            str_of(item, "mimeType")
        ))],
        "resource" => {
            let resource = item.get("resource").cloned().unwrap_or(Value::Null);
            let prefix = format!("[Resource from {server} at {}] ", str_of(&resource, "uri"));
            if let Some(text) = resource.get("text").and_then(Value::as_str) {
                vec![text_block(format!("{prefix}{text}"))]
            } else if resource.get("blob").is_some() && IMAGE_TYPES.contains(&str_of(&resource, "mimeType")) {
                vec![text_block(prefix), image_block(str_of(&resource, "blob"), str_of(&resource, "mimeType"))]
            } else {
                vec![text_block(format!(
                    "{prefix}(binary content of type {}, not shown)",
                    str_of(&resource, "mimeType")
                ))]
            }
        }
        "resource_link" => {
            let mut text = format!("[Resource link: {}] {}", str_of(item, "name"), str_of(item, "uri"));
            if let Some(description) = item.get("description").and_then(Value::as_str) {
                text.push_str(&format!(" ({description})"));
            }
            vec![text_block(text)]
        }
        other => vec![text_block(format!("[Content of unknown type {other:?} left out]"))],
    }
}

/// Claude Code's note after a cut MCP result.
pub(crate) fn truncated_note(max_tokens: usize) -> String {
    format!(
        "\n\n[OUTPUT TRUNCATED - exceeded {max_tokens} token limit]\n\nThe tool output was truncated. If this MCP \
         server provides pagination or filtering tools, use them to retrieve specific portions of the data. If \
         pagination is not available, inform the user that you are returning truncated data."
    )
}

/// Keeps the text within `max_tokens` (estimated at 4 characters a token): the first blocks whole,
/// the one that crosses the line cut at a character boundary with [`truncated_note`], the rest
/// dropped. Images are kept (the journal's bounds cut one too large to carry).
fn cap(blocks: Vec<Value>, max_tokens: usize) -> Vec<Value> {
    let mut left = max_tokens.saturating_mul(CHARS_PER_TOKEN);
    let mut out = Vec::with_capacity(blocks.len());
    for mut block in blocks {
        let Some(text) = block.get("text").and_then(Value::as_str) else {
            out.push(block);
            continue;
        };
        let chars = text.chars().count();
        if chars <= left {
            left -= chars;
            out.push(block);
            continue;
        }
        let cut: String = text.chars().take(left).collect();
        block["text"] = Value::String(format!("{cut}{}", truncated_note(max_tokens)));
        out.push(block);
        return out;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_image_and_links_map_as_claude_code_maps_them() {
        let result = json!({"content": [
            {"type": "text", "text": "hello"},
            {"type": "image", "data": "iVBO", "mimeType": "image/png"},
            {"type": "resource_link", "uri": "file:///a.txt", "name": "a.txt", "description": "the file"},
            {"type": "resource", "resource": {"uri": "mem://x", "text": "inside"}},
        ]});
        let out = map_result("srv", &result, MAX_OUTPUT_TOKENS);
        assert!(!out.is_error);
        assert_eq!(
            out.blocks,
            vec![
                json!({"type": "text", "text": "hello"}),
                json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"}}),
                json!({"type": "text", "text": "[Resource link: a.txt] file:///a.txt (the file)"}),
                json!({"type": "text", "text": "[Resource from srv at mem://x] inside"}),
            ]
        );
        assert!(!out.is_text_only());
        assert_eq!(
            out.resource_links,
            vec![json!({"uri": "file:///a.txt", "name": "a.txt", "description": "the file"})],
            "kept for 2.1.332's tool_use_result"
        );
        assert_eq!(out.structured_content, None);
    }

    #[test]
    fn an_error_result_keeps_its_text_and_the_flag() {
        let out = map_result("s", &json!({"content": [{"type": "text", "text": "boom"}], "isError": true}), 10);
        assert_eq!(out, CallOutput::error("boom"));
    }

    #[test]
    fn structured_content_alone_becomes_its_json_text() {
        let out = map_result("s", &json!({"content": [], "structuredContent": {"n": 1}}), 10);
        assert_eq!(out.text(), r#"{"n":1}"#);
        assert!(out.plain);
        assert_eq!(out.structured_content, Some(json!({"n": 1})), "kept for the tool_use_result");
    }

    /// tests/print/recorded/*/sdk_wire/mcp_result: `echo` answered `content` "hi hi" and
    /// `structuredContent` {"result": "hi hi"}; both versions sent `{"result":"hi hi"}`.
    #[test]
    fn structured_content_wins_over_the_content_beside_it_as_claude_code_sends_it() {
        let result = json!({"content": [{"type": "text", "text": "hi hi"}], "structuredContent": {"result": "hi hi"}});
        let out = map_result("fixture", &result, MAX_OUTPUT_TOKENS);
        assert_eq!(out.blocks, vec![json!({"type": "text", "text": r#"{"result":"hi hi"}"#})]);
        assert!(out.plain && !out.is_error);
    }

    /// tests/print/recorded/*/sdk_wire/mcp_text: text content alone stays a list of blocks.
    #[test]
    fn text_content_alone_stays_blocks() {
        let result = json!({"content": [{"type": "text", "text": "ONLY-WORD"}]});
        let out = map_result("plain", &result, MAX_OUTPUT_TOKENS);
        assert_eq!(out.blocks, vec![json!({"type": "text", "text": "ONLY-WORD"})]);
        assert!(!out.plain);
    }

    #[test]
    fn garbage_is_an_error_for_the_model() {
        let out = map_result("s", &json!("nonsense"), 10);
        assert!(out.is_error);
        assert!(out.text().contains("not a tool result"), "{}", out.text());
    }

    #[test]
    fn long_text_is_cut_at_the_token_cap_with_claude_codes_note() {
        let result = json!({"content": [
            {"type": "text", "text": "a".repeat(30)},
            {"type": "text", "text": "é".repeat(30)},
            {"type": "text", "text": "never shown"},
        ]});
        let out = map_result("s", &result, 10);
        assert_eq!(out.blocks.len(), 2);
        assert_eq!(out.blocks[1]["text"], Value::String(format!("{}{}", "é".repeat(10), truncated_note(10))));
    }
}
