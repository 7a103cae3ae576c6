//! Somebody to ask: when the permission rules would ask about a call, a session may have a
//! [`PermissionPrompt`] (the Agent SDK's `can_use_tool` over `--permission-prompt-tool stdio`).
//!
//! The answer is an outside fact: it is journaled verbatim as the one run of a
//! `PermissionRequest` hook event beside the call, before the call runs or is refused, so a
//! replay needs no caller and `why` can say who decided. The answer's format is the SDK's:
//! `{"behavior": "allow", "updatedInput": {...}}` or `{"behavior": "deny", "message": "..."}`.

use std::sync::Arc;

use futures::future::BoxFuture;
use reloop_core::hook::HookRun;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// What the prompt is asked about one call.
#[derive(Debug, Clone)]
pub struct PromptRequest {
    /// The tool.
    pub tool_name: String,
    /// The input the call would run with (after any PreToolUse hook's update).
    pub input: Value,
    /// The call.
    pub tool_use_id: String,
    /// What Claude Code's prompt would show; a headless session denies with it.
    pub message: String,
}

/// Asks whether a call may run. The answer is the reply JSON, or an error text (the caller is
/// gone, the reply was malformed): an error denies the call with the headless text.
pub trait PermissionPrompt: Send + Sync {
    /// Asks; the future must end (the driver also ends it on abort).
    fn ask(&self, request: PromptRequest) -> BoxFuture<'static, Result<Value, String>>;
}

/// The name the journal gives the prompt's run.
pub const PROMPT_RUN_NAME: &str = "can_use_tool";

/// What an answer decides.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Answer {
    /// Run, with this input.
    Allow(Value),
    /// Do not run; the model is told `message`.
    Deny(String),
}

/// Asks `prompt` about a call and returns the run to journal and what it decided.
pub(crate) async fn ask(
    prompt: &Arc<dyn PermissionPrompt>,
    request: PromptRequest,
    cancel: &CancellationToken,
) -> (HookRun, Answer) {
    let (input, message) = (request.input.clone(), request.message.clone());
    let mut run = HookRun {
        command: PROMPT_RUN_NAME.to_string(),
        exit_code: None,
        stdout: String::new(),
        stderr: String::new(),
        timed_out: false,
    };
    let reply = tokio::select! {
        reply = prompt.ask(request) => reply,
        () = cancel.cancelled() => Err(reloop_hooks::CANCELLED_NOTE.to_string()),
    };
    match reply {
        Ok(value) => {
            run.exit_code = Some(0);
            run.stdout = value.to_string();
            let answer = decide(&value, input, &message);
            (run, answer)
        }
        Err(error) => {
            run.stderr = error;
            (run, Answer::Deny(message))
        }
    }
}

/// Reads a reply: `allow` runs the call (with `updatedInput` when it is an object), `deny`
/// refuses it with the reply's message; anything else refuses it with the headless text.
pub(crate) fn decide(reply: &Value, input: Value, headless: &str) -> Answer {
    match reply.get("behavior").and_then(Value::as_str) {
        Some("allow") => match reply.get("updatedInput") {
            Some(updated @ Value::Object(_)) => Answer::Allow(updated.clone()),
            _ => Answer::Allow(input),
        },
        Some("deny") => {
            let message = reply.get("message").and_then(Value::as_str).filter(|m| !m.is_empty());
            Answer::Deny(message.unwrap_or(headless).to_string())
        }
        _ => Answer::Deny(headless.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_allow_runs_the_updated_input_and_a_deny_its_message() {
        let input = json!({"file_path": "a"});
        let allow = json!({"behavior": "allow", "updatedInput": {"file_path": "b"}});
        assert_eq!(decide(&allow, input.clone(), "h"), Answer::Allow(json!({"file_path": "b"})));
        assert_eq!(decide(&json!({"behavior": "allow"}), input.clone(), "h"), Answer::Allow(input.clone()));
        let deny = json!({"behavior": "deny", "message": "nope-from-sdk"});
        assert_eq!(decide(&deny, input.clone(), "h"), Answer::Deny("nope-from-sdk".into()));
        assert_eq!(decide(&json!({"behavior": "deny"}), input.clone(), "h"), Answer::Deny("h".into()));
        assert_eq!(decide(&json!("garbage"), input, "h"), Answer::Deny("h".into()));
    }
}
