//! Claude Code's names for a request that failed: the `error` key of the synthetic assistant
//! line a run ends with, and the `error type` a failed subagent's answer quotes
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
