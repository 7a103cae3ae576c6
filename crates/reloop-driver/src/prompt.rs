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
use reloop_tools::PromptReply;
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

/// Asks `prompt` about a call and returns the run to journal and the reply, which
/// [`reloop_tools::decide()`] reads.
pub(crate) async fn ask(
    prompt: &Arc<dyn PermissionPrompt>,
    request: PromptRequest,
    cancel: &CancellationToken,
) -> (HookRun, PromptReply) {
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
            (run, PromptReply::Replied(value))
        }
        Err(error) => {
            run.stderr = error;
            (run, PromptReply::Failed)
        }
    }
}
