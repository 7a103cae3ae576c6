//! The conversation's lines as what they mean to the loop: prompts, responses, tool results,
//! interrupts, API errors, and the lines that mean nothing to it (commands, meta, progress).

use std::collections::BTreeMap;

use reloop_core::{ContentBlock, ModelError, StopReason, ToolOutcome, ToolResultContent, Usage};
use serde_json::{Map, Value};

use crate::error::ImportError;
use crate::loop_lines::{core_reminder, stop_hook_feedback, StopBlock, StopHookSummary};
use crate::transcript::{Fields, Line};

/// Claude Code's marker after an interrupt while the model streamed.
pub const INTERRUPT_TEXT: &str = "[Request interrupted by user]";
/// Claude Code's marker after an interrupt while tools ran (or a rejected permission prompt).
pub const INTERRUPT_FOR_TOOL_USE_TEXT: &str = "[Request interrupted by user for tool use]";

/// One model response: every line sharing a `message.id`.
#[derive(Debug)]
pub(crate) struct Response {
    pub blocks: Vec<(ContentBlock, Option<u64>)>,
    pub id: Option<String>,
    pub model: Option<String>,
    pub stop_reason: Option<StopReason>,
    pub usage: Usage,
    pub last_at_ms: Option<u64>,
    /// The file line of its last block.
    pub line: usize,
}

/// What a prompt-like user line is, for the summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PromptKind {
    Prompt,
    CompactSummary,
    /// A prompt Claude Code wrote itself (`promptSource: "system"`, e.g. a background agent's
    /// task notification): it starts a query, but nobody typed it.
    FromClaudeCode,
}

#[derive(Debug)]
pub(crate) enum Item {
    Prompt {
        content: Vec<ContentBlock>,
        kind: PromptKind,
        at_ms: Option<u64>,
    },
    /// Sent to the model by Claude Code but not typed by the user (meta lines, slash-command
    /// echoes). Used as the prompt only when a response answers nothing else.
    Hidden {
        content: Vec<ContentBlock>,
        kind: &'static str,
        at_ms: Option<u64>,
    },
    Response(Response),
    ToolResults {
        results: Vec<ToolOutcome>,
        at_ms: Option<u64>,
        line: usize,
    },
    Interrupt {
        for_tool_use: bool,
        at_ms: Option<u64>,
        line: usize,
    },
    ApiError {
        error: ModelError,
        /// The whole text of the line, which may name a limit (`... 64000 output token maximum`).
        text: String,
        at_ms: Option<u64>,
        line: usize,
    },
    CompactBoundary {
        /// `auto` or `manual`, as the boundary says.
        trigger: Option<String>,
        /// Claude Code's count of the history's tokens before it.
        pre_tokens: Option<u64>,
        at_ms: Option<u64>,
        line: usize,
    },
    /// Blocking Stop hooks' feedback (a user line Claude Code writes, not the person).
    StopHookFeedback {
        blocks: Vec<StopBlock>,
        at_ms: Option<u64>,
        line: usize,
    },
    /// The Stop hooks that ran at the end of a turn (`system`/`stop_hook_summary`).
    StopHookSummary {
        summary: StopHookSummary,
        at_ms: Option<u64>,
        line: usize,
    },
    /// A failed request Claude Code retried (`system`/`api_error`, 2.1.332 writes one per retry).
    ApiRetry {
        error: ModelError,
        attempt: u32,
        max_retries: u32,
        at_ms: Option<u64>,
        line: usize,
    },
    /// An answer Claude Code took back and did not keep (2.1.332's malformed-call retry): the
    /// reminder after it says what it was.
    Retracted {
        at_ms: Option<u64>,
        line: usize,
    },
    /// A message the person typed while the loop ran (`queued_command`): it joined the next
    /// request.
    Queued {
        content: Vec<ContentBlock>,
        at_ms: Option<u64>,
    },
    /// Claude Code switched to the fallback model after repeated overloads (`model_fallback`).
    ModelFallback {
        /// The models, when the line names them (the stream's line does; 2.1.332's transcript
        /// line only words them).
        from: Option<String>,
        to: Option<String>,
        at_ms: Option<u64>,
        line: usize,
    },
    /// The `max_turns_reached` attachment: the run stopped at `--max-turns`.
    MaxTurns {
        max_turns: u32,
        at_ms: Option<u64>,
        line: usize,
    },
}

/// Turns the chain's lines (in file order) into items; counts the lines that become none.
pub(crate) fn build(
    lines: &[&Line],
    file: &str,
    skipped: &mut BTreeMap<String, usize>,
) -> Result<Vec<Item>, ImportError> {
    let mut items = Vec::new();
    // Index into `items` of the response each message.id opened, so a response whose blocks
    // are interleaved with its tool results (streaming tool execution) stays one response.
    let mut open: BTreeMap<String, usize> = BTreeMap::new();
    let mut skip = |kind: String| *skipped.entry(kind).or_default() += 1;
    for line in lines {
        let malformed = |detail: String| ImportError::MalformedLine { file: file.to_string(), line: line.no, detail };
        match line.kind.as_str() {
            "assistant" => {
                let fields = line.fields();
                let message = fields.message().ok_or_else(|| malformed("assistant line without a `message`".into()))?;
                let blocks = content(message).map_err(&malformed)?;
                if fields.flag("isApiErrorMessage") {
                    let text: String = blocks
                        .iter()
                        .filter_map(|b| match b {
                            ContentBlock::Text(t) => Some(t.text.as_str()),
                            _ => None,
                        })
                        .collect();
                    // 2.1.332 keeps the API's own error beside Claude Code's words for it.
                    let mut error = match fields.str_field("errorDetails") {
                        Some(details) => parse_api_error(&format!("API Error: {details}")),
                        None => parse_api_error(&text),
                    };
                    // 2.1.332 names the status and type beside the text.
                    if let Some(status) = fields.u64_field("apiErrorStatus").and_then(|s| u16::try_from(s).ok()) {
                        error.status = Some(status);
                    }
                    if let Some(kind) = fields.str_field("apiErrorType") {
                        error.error_type = kind.to_string();
                    }
                    // The API's 400 as Claude Code words it once it gives up on the prompt.
                    if error.status.is_none() && text.trim_start().starts_with("Prompt is too long") {
                        error.status = Some(400);
                        error.error_type = "invalid_request_error".to_string();
                    }
                    items.push(Item::ApiError { error, text, at_ms: line.at_ms, line: line.no });
                    continue;
                }
                let stop_reason = message.get("stop_reason").and_then(Value::as_str).map(StopReason::parse);
                let usage = match message.get("usage") {
                    Some(u) if !u.is_null() => {
                        serde_json::from_value(u.clone()).map_err(|e| malformed(format!("unreadable `usage`: {e}")))?
                    }
                    _ => Usage::default(),
                };
                let model = message.get("model").and_then(Value::as_str).map(str::to_string);
                let id = line.message_id().map(str::to_string);
                let slot = id.as_ref().and_then(|id| open.get(id).copied());
                let response = match slot.and_then(|i| items.get_mut(i)) {
                    Some(Item::Response(r)) => r,
                    _ => {
                        if let Some(id) = &id {
                            open.insert(id.clone(), items.len());
                        }
                        items.push(Item::Response(Response {
                            blocks: Vec::new(),
                            id: id.clone(),
                            model: None,
                            stop_reason: None,
                            usage: Usage::default(),
                            last_at_ms: None,
                            line: line.no,
                        }));
                        match items.last_mut() {
                            Some(Item::Response(r)) => r,
                            _ => continue,
                        }
                    }
                };
                response.blocks.extend(blocks.into_iter().map(|b| (b, line.at_ms)));
                // The last line of a response carries its final stop_reason and usage.
                response.stop_reason = stop_reason;
                response.usage = usage;
                response.model = model.or(response.model.take());
                response.last_at_ms = line.at_ms;
                response.line = line.no;
            }
            "user" => {
                let fields = line.fields();
                let message = fields.message().ok_or_else(|| malformed("user line without a `message`".into()))?;
                let blocks = content(message).map_err(&malformed)?;
                let (results, rest): (Vec<_>, Vec<_>) =
                    blocks.into_iter().partition(|b| matches!(b, ContentBlock::ToolResult(_)));
                if !results.is_empty() {
                    let rejected = rejected_calls(&fields);
                    let results = results
                        .into_iter()
                        .filter_map(|b| match b {
                            ContentBlock::ToolResult(r) => Some(ToolOutcome {
                                denied: r.is_error
                                    && (rejected.contains(&r.tool_use_id) || is_permission_denial(&r.content)),
                                is_error: r.is_error,
                                ..ToolOutcome::new(r.tool_use_id, r.content)
                            }),
                            _ => None,
                        })
                        .collect();
                    items.push(Item::ToolResults { results, at_ms: line.at_ms, line: line.no });
                }
                if rest.is_empty() {
                    continue;
                }
                // 2.1.332 takes back a malformed answer and keeps only its uuid.
                let retracted = fields.array("retractedMessageUuids").map_or(0, Vec::len);
                if retracted > 0
                    && !lines.iter().any(|l| {
                        fields
                            .array("retractedMessageUuids")
                            .is_some_and(|r| r.iter().any(|u| u.as_str() == l.uuid.as_deref()))
                    })
                {
                    items.push(Item::Retracted { at_ms: line.at_ms, line: line.no });
                }
                items.push(classify_user(line, &fields, rest));
            }
            "system" => {
                let fields = line.fields();
                match fields.str_field("subtype") {
                    Some("compact_boundary") => {
                        let meta = fields.object("compactMetadata").or_else(|| fields.object("compact_metadata"));
                        let field = |a: &str, b: &str| meta.and_then(|m| m.get(a).or_else(|| m.get(b))).cloned();
                        items.push(Item::CompactBoundary {
                            trigger: field("trigger", "trigger").and_then(|t| t.as_str().map(str::to_string)),
                            pre_tokens: field("preTokens", "pre_tokens").and_then(|t| t.as_u64()),
                            at_ms: line.at_ms,
                            line: line.no,
                        })
                    }
                    Some("api_error") if fields.u64_field("retryAttempt").is_some() => {
                        let error = fields.object("error");
                        let text = error.and_then(|e| e.get("message")).and_then(Value::as_str).unwrap_or("");
                        let mut parsed = parse_api_error(&format!("API Error: {text}"));
                        if let Some(status) = error.and_then(|e| e.get("status")).and_then(Value::as_u64) {
                            parsed.status = u16::try_from(status).ok();
                        }
                        let number = |k: &str| fields.u64_field(k).and_then(|n| u32::try_from(n).ok()).unwrap_or(0);
                        items.push(Item::ApiRetry {
                            error: parsed,
                            attempt: number("retryAttempt"),
                            max_retries: number("maxRetries"),
                            at_ms: line.at_ms,
                            line: line.no,
                        })
                    }
                    Some("model_fallback") => {
                        let model = |a: &str, b: &str| {
                            fields.str_field(a).or_else(|| fields.str_field(b)).map(|m| {
                                // `[1m]` names the window, not the model.
                                m.trim_end_matches("[1m]").to_string()
                            })
                        };
                        items.push(Item::ModelFallback {
                            from: model("original_model", "originalModel"),
                            to: model("fallback_model", "fallbackModel"),
                            at_ms: line.at_ms,
                            line: line.no,
                        })
                    }
                    Some("stop_hook_summary") => items.push(Item::StopHookSummary {
                        summary: StopHookSummary::read(fields.map()),
                        at_ms: line.at_ms,
                        line: line.no,
                    }),
                    Some(sub) => skip(format!("system:{sub}")),
                    None => skip("system".to_string()),
                }
            }
            "attachment" => {
                let fields = line.fields();
                let attachment = fields.object("attachment");
                let kind = attachment.and_then(|a| a.get("type")).and_then(Value::as_str).unwrap_or("");
                let max = attachment.and_then(|a| a.get("maxTurns")).and_then(Value::as_u64);
                let prompt = attachment.and_then(|a| a.get("prompt")).and_then(Value::as_str);
                match (kind, max.and_then(|m| u32::try_from(m).ok())) {
                    ("max_turns_reached", Some(max_turns)) => {
                        items.push(Item::MaxTurns { max_turns, at_ms: line.at_ms, line: line.no })
                    }
                    ("queued_command", _) if prompt.is_some() => items.push(Item::Queued {
                        content: vec![ContentBlock::text(prompt.unwrap_or_default())],
                        at_ms: line.at_ms,
                    }),
                    _ => skip(format!("attachment:{kind}")),
                }
            }
            other => skip(if other.is_empty() { "untyped".to_string() } else { other.to_string() }),
        }
    }
    Ok(items)
}

fn classify_user(line: &Line, fields: &Fields, content: Vec<ContentBlock>) -> Item {
    let at_ms = line.at_ms;
    let text: String = content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect();
    let trimmed = text.trim();
    let only_text = content.iter().all(|b| matches!(b, ContentBlock::Text(_)));
    if only_text && trimmed == INTERRUPT_TEXT {
        return Item::Interrupt { for_tool_use: false, at_ms, line: line.no };
    }
    if only_text && trimmed == INTERRUPT_FOR_TOOL_USE_TEXT {
        return Item::Interrupt { for_tool_use: true, at_ms, line: line.no };
    }
    // Claude Code writes a blocking Stop hook's feedback as a user line (meta from some
    // version on); it is the hook's outcome, not a prompt.
    if let Some(blocks) = stop_hook_feedback(&text).filter(|_| only_text) {
        return Item::StopHookFeedback { blocks, at_ms, line: line.no };
    }
    // Reminders the core appends by itself (after a cut or a malformed answer).
    if let Some(kind) = core_reminder(&text).filter(|_| only_text) {
        return Item::Hidden { content, kind, at_ms };
    }
    if fields.flag("isCompactSummary") {
        return Item::Prompt { content, kind: PromptKind::CompactSummary, at_ms };
    }
    if fields.flag("isMeta") {
        return Item::Hidden { content, kind: "meta", at_ms };
    }
    let hidden_kind = if trimmed.starts_with("<command-name>") || trimmed.starts_with("<command-message>") {
        Some("command")
    } else if trimmed.starts_with("<local-command-stdout>") || trimmed.starts_with("<local-command-stderr>") {
        Some("local_command_output")
    } else if trimmed.starts_with("<local-command-caveat>") {
        Some("meta")
    } else if trimmed.starts_with("<bash-input>") || trimmed.starts_with("<bash-stdout>") {
        Some("bash_mode")
    } else {
        None
    };
    if let Some(kind) = hidden_kind {
        return Item::Hidden { content, kind, at_ms };
    }
    let kind = if fields.str_field("promptSource") == Some("system") {
        PromptKind::FromClaudeCode
    } else {
        PromptKind::Prompt
    };
    Item::Prompt { content, kind, at_ms }
}

/// A message's `content` as blocks: a string is one text block; a `tool_result` without
/// `content` (the API allows it) gets an empty string.
fn content(message: &Map<String, Value>) -> Result<Vec<ContentBlock>, String> {
    match message.get("content") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(s)) => Ok(vec![ContentBlock::text(s.clone())]),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let mut b = b.clone();
                if let Value::Object(map) = &mut b {
                    if map.get("type").and_then(Value::as_str) == Some("tool_result") && !map.contains_key("content") {
                        map.insert("content".into(), Value::String(String::new()));
                    }
                }
                serde_json::from_value(b).map_err(|e| format!("content block {i} cannot be read: {e}"))
            })
            .collect(),
        Some(other) => Err(format!("`message.content` is neither text nor blocks: {other}")),
    }
}

/// Reads Claude Code's API error text (`API Error: 529 {"type":"error","error":{...}}`, or
/// `API Error: Request timed out.`) into the error the core expects; [`api_error_text`] writes
/// the same shape back, so an export re-imports to the same error.
pub(crate) fn parse_api_error(text: &str) -> ModelError {
    let rest = text.trim().strip_prefix("API Error:").map(str::trim_start);
    let Some(rest) = rest else {
        return ModelError::new(None, "api_error", text.trim());
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let (status, body) = match (digits, rest.get(..digits).and_then(|d| d.parse::<u16>().ok())) {
        (3, Some(code)) => (Some(code), rest[digits..].trim_start()),
        _ => (None, rest),
    };
    if let Ok(Value::Object(json)) = serde_json::from_str::<Value>(body) {
        let err = json.get("error").and_then(Value::as_object);
        let field = |k: &str| err.and_then(|e| e.get(k)).and_then(Value::as_str);
        if let (Some(kind), Some(message)) = (field("type"), field("message")) {
            return ModelError::new(status, kind, message);
        }
    }
    ModelError::new(status, "api_error", body)
}

/// The text of an API error line, in the shape [`parse_api_error`] reads.
pub(crate) fn api_error_text(error: &ModelError) -> String {
    let body = serde_json::json!({"type": "error", "error": {"type": error.error_type, "message": error.message}});
    match error.status {
        Some(status) => format!("API Error: {status} {body}"),
        None => format!("API Error: {body}"),
    }
}

/// The calls a 2.1.332 user line's `tool_result_meta` says permission rules or the user
/// rejected.
fn rejected_calls(fields: &Fields) -> Vec<String> {
    fields
        .array("tool_result_meta")
        .into_iter()
        .flatten()
        .filter(|m| {
            m.get("permission_decision").and_then(|d| d.get("decision")).and_then(Value::as_str) == Some("reject")
        })
        .filter_map(|m| m.get("id").and_then(Value::as_str).map(str::to_string))
        .collect()
}

/// A tool result that is Claude Code's refusal to run the call (a permission rule, the mode,
/// or the person at the prompt), in either version's words; the call did not run.
pub(crate) fn is_permission_denial(content: &ToolResultContent) -> bool {
    let text = match content {
        ToolResultContent::Text(s) => s.clone(),
        other => other.as_text(),
    };
    let text = text.trim();
    text.starts_with("Claude requested permissions to ")
        || text == "This command requires approval"
        || (text.starts_with("Permission to use ") && text.contains(" has been denied"))
        || text.contains("needs approval. The path is inside the working directories for this session")
        || text.contains("was blocked. For security, Claude Code may only")
        || text.starts_with("The user doesn't want to proceed with this tool use")
        || text.starts_with("The user doesn't want to take this action right now")
}

/// A tool result that says the call's input was refused before it ran (schema validation, JSON
/// that could not be parsed).
pub(crate) fn is_input_rejection(content: &ToolResultContent) -> bool {
    let text = match content {
        ToolResultContent::Text(s) => s.clone(),
        other => other.as_text(),
    };
    text.trim_start().starts_with("<tool_use_error>InputValidationError:")
}

/// Tool results Claude Code writes for calls the user cancelled; an interrupt that follows them
/// produced them, so the core's abort writes them (as `Interrupted by user`) instead.
pub(crate) fn is_cancellation(outcome: &ToolOutcome) -> bool {
    let text = match &outcome.content {
        ToolResultContent::Text(s) => s.clone(),
        other => other.as_text(),
    };
    let text = text.trim();
    outcome.is_error
        && (text == reloop_core::INTERRUPTED_TOOL_RESULT
            || text.starts_with("The user doesn't want to proceed with this tool use")
            || text.starts_with("The user doesn't want to take this action right now"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_error_text_round_trips() {
        for e in [
            ModelError::new(Some(529), "overloaded_error", "Overloaded"),
            ModelError::new(None, "api_error", "Request timed out."),
        ] {
            assert_eq!(parse_api_error(&api_error_text(&e)), e);
        }
        let plain = parse_api_error("API Error: Request timed out.");
        assert_eq!(
            (plain.status, plain.error_type.as_str(), plain.message.as_str()),
            (None, "api_error", "Request timed out.")
        );
        let cc = parse_api_error(
            r#"API Error: 500 {"type":"error","error":{"type":"api_error","message":"Internal server error"}}"#,
        );
        assert_eq!((cc.status, cc.message.as_str()), (Some(500), "Internal server error"));
    }
}
