//! Which model the conversation is told it is powered by (flag 26, under a profile with
//! [`crate::profile::Profile::model_identities`], 2.1.332). Claude Code names the session's
//! model among the first message's context; a command file's `model` then answers that
//! command's query, and the query's first tool result says `You are powered by the model named
//! …` of the new one (`sdk_wire/command_frontmatter`, `sdk36/queued_command_model`). The first
//! message's reminders are those of the session's own model, not the command's.
//!
//! Back on the session's model, the next prompt names it again (to a model that takes
//! `role: "system"` messages; the others' wording is not recorded), and a request to such a
//! model sends the reminders that ended a tool result as a `role: "system"` message after it.

use crate::context::Loop;
use crate::flags::Flag;
use crate::message::{ContentBlock, ToolResult, ToolResultContent};
use crate::profile::{identity_of, system_reminder};

/// The model the first message's reminders are worded for: the one the conversation is told
/// of, which a command's switch does not change.
pub(crate) fn prompt_model(ctx: &Loop) -> &str {
    match &ctx.session.named_model {
        Some(named) if ctx.config.flag(Flag::ModelIdentityReminder) => named,
        _ => ctx.current_model(),
    }
}

/// The reminder a tool result of this turn carries, when the model asked is not the one the
/// conversation was last told of; from then on it has been told.
pub(crate) fn tool_result_reminder(ctx: &mut Loop) -> Option<String> {
    if !ctx.config.flag(Flag::ModelIdentityReminder) {
        return None;
    }
    let named = ctx.session.named_model.as_deref()?;
    let current = ctx.current_model();
    if named == current {
        return None;
    }
    let identity = identity_of(ctx.config.rules().model_identities, current)?;
    ctx.session.named_model = Some(current.to_string());
    Some(system_reminder(&identity.text()))
}

/// The models 2.1.332 sends its reminders to as `role: "system"` messages (every recorded
/// request to a 5.5 model has them; 4.x and 3.7 requests have none, their reminders are text).
const SYSTEM_MESSAGE_MODELS: &[&str] = &["claude-opus-5", "claude-haiku-5", "claude-sonnet-5"];

/// Whether a request to `model` takes its reminders as `role: "system"` messages.
fn takes_system_messages(ctx: &Loop, model: &str) -> bool {
    !ctx.config.rules().model_identities.is_empty() && SYSTEM_MESSAGE_MODELS.iter().any(|p| model.starts_with(p))
}

/// The reminder back to the session's own model at a prompt after a command's query whose
/// model was named on its tool result: `Some` (the message to send after the prompt) when the
/// model asked now takes `role: "system"` messages, as 2.1.332 sends it to Opus 5.5
/// (`sdk_wire/command_frontmatter`); the conversation then names the session's model again.
pub(crate) fn prompt_reminder(ctx: &mut Loop) -> Option<crate::message::Message> {
    if !ctx.config.flag(Flag::ModelIdentityReminder) || ctx.session.in_command {
        return None;
    }
    let named = ctx.session.named_model.take()?;
    let current = ctx.current_model();
    if named == current || !takes_system_messages(ctx, current) {
        return None;
    }
    let identity = identity_of(ctx.config.rules().model_identities, current)?;
    Some(crate::message::Message::system_text(identity.text()))
}

/// The reminders reloop puts at the end of a tool result's text (this module's and the
/// `<total_tokens>` one).
fn own_reminder(text: &str) -> bool {
    text.starts_with("You are powered by the model named ") || text.starts_with("<total_tokens>")
}

/// The history as a request to `model` sends it: to a model that takes `role: "system"`
/// messages (flag 26), the reminders a tool result's text ends with go as one such message
/// after its own, unwrapped and joined by blank lines, as 2.1.332 sends Opus 5.5 the Haiku
/// query's result (`sdk_wire/command_frontmatter`). Otherwise the history as it is.
pub fn sent_messages(state: &crate::State, model: &str) -> crate::History {
    let ctx = state.context();
    let history = &ctx.messages;
    if !ctx.config.flag(Flag::ModelIdentityReminder) || !takes_system_messages(ctx, model) {
        return history.clone();
    }
    let split = |text: &str| -> Option<(String, Vec<String>)> {
        let mut body = text;
        let mut found = Vec::new();
        while let Some(at) = body.rfind("\n\n<system-reminder>\n") {
            let inner = body[at + "\n\n<system-reminder>\n".len()..].strip_suffix("\n</system-reminder>")?;
            if !own_reminder(inner) {
                break;
            }
            found.insert(0, inner.to_string());
            body = &body[..at];
        }
        (!found.is_empty()).then(|| (body.to_string(), found))
    };
    let has_any = history.messages().iter().any(|m| {
        m.content.iter().any(|b| matches!(b, ContentBlock::ToolResult(ToolResult { content: ToolResultContent::Text(t), .. }) if split(t).is_some()))
    });
    if !has_any {
        return history.clone();
    }
    let mut out = Vec::with_capacity(history.len() + 1);
    for message in history.messages() {
        let mut message = message.clone();
        let mut moved = Vec::new();
        for block in &mut message.content {
            if let ContentBlock::ToolResult(ToolResult { content: ToolResultContent::Text(text), .. }) = block {
                if let Some((body, reminders)) = split(text) {
                    *text = body;
                    moved.extend(reminders);
                }
            }
        }
        out.push(message);
        if !moved.is_empty() {
            out.push(crate::message::Message::system_text(moved.join("\n\n")));
        }
    }
    history.empty_like().extended(out)
}
