//! Claude Code's names for a request that failed: the `error` key (and the usage) of the
//! synthetic assistant line a run ends with, and the `error type` a failed subagent's answer quotes
//! (`error_endings/`, `subagent/failed`; both versions' classifier, 2.1.332's `irs`).

/// Claude Code's kind of a failed request: `rate_limit` for a 429, `server_error` for a 5xx
/// (an overload included), `invalid_request` for a prompt too long, and `unknown` for any other
/// answer of the API (a 400 it has no words of its own for) or an error inside a 200 stream.
pub fn api_error_kind(status: Option<u16>, prompt_too_long: bool) -> &'static str {
    match status {
        _ if prompt_too_long => "invalid_request",
        Some(429) => "rate_limit",
        Some(500..=599) => "server_error",
        _ => "unknown",
    }
}

/// 2.1.332's answer to an `Agent` call whose subagent ended on a failed request (its `Kc`):
/// the child's error text, then what is known of the request in parentheses, the model named
/// when the server answered at all.
pub fn terminated_early(text: &str, kind: &str, status: Option<u16>, request_id: Option<&str>, model: &str) -> String {
    let mut known = vec![format!("error type {kind}")];
    if let Some(status) = status {
        known.push(format!("HTTP {status}"));
    }
    if let Some(id) = request_id.filter(|id| !id.is_empty()) {
        known.push(format!("request id {id}"));
    }
    if status.is_some() || request_id.is_some_and(|id| !id.is_empty()) {
        known.push(format!("model sent to the API: {model}"));
    }
    format!("Agent terminated early due to an API error: {text} ({})", known.join(", "))
}

/// The usage on the message Claude Code makes of a failed request (the `<synthetic>` line a run
/// ends with; what a subagent that had no response is summed up with): all zero, in each
/// version's keys (`newer`: 2.1.332's `output_tokens_details` and `fallback_credit` too).
pub fn error_message_usage(newer: bool) -> serde_json::Value {
    let mut usage = serde_json::Map::new();
    if newer {
        usage.insert("output_tokens_details".into(), serde_json::Value::Null);
    }
    let zero = serde_json::json!({"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0, "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
        "service_tier": null, "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0},
        "inference_geo": null, "iterations": null, "speed": null});
    usage.extend(zero.as_object().cloned().unwrap_or_default());
    if newer {
        usage.insert("fallback_credit".into(), serde_json::Value::Null);
    }
    serde_json::Value::Object(usage)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `subagent/failed` and `error_endings/invalid_request`, both versions: a 400 Claude Code
    /// has no words for is `unknown`; a prompt too long is `invalid_request`.
    #[test]
    fn a_400_is_unknown_unless_the_prompt_was_too_long() {
        assert_eq!(api_error_kind(Some(400), false), "unknown");
        assert_eq!(api_error_kind(Some(400), true), "invalid_request");
        assert_eq!(api_error_kind(Some(429), false), "rate_limit");
        assert_eq!(api_error_kind(Some(529), false), "server_error");
        assert_eq!(api_error_kind(None, false), "unknown");
    }

    /// 2.1.332 `subagent/failed`, as the model read it.
    #[test]
    fn a_child_s_api_error_is_answered_in_2_1_332_s_words() {
        assert_eq!(
            terminated_early(
                "API Error: 400 SUBAGENT-REFUSED: the request is invalid",
                "unknown",
                Some(400),
                Some("req_fake_7"),
                "claude-opus-5-5"
            ),
            "Agent terminated early due to an API error: API Error: 400 SUBAGENT-REFUSED: the request is invalid \
             (error type unknown, HTTP 400, request id req_fake_7, model sent to the API: claude-opus-5-5)"
        );
        assert_eq!(
            terminated_early("API Error: Connection error.", "unknown", None, None, "m"),
            "Agent terminated early due to an API error: API Error: Connection error. (error type unknown)"
        );
    }
}
