//! Which model the conversation is told it is powered by (flag 26, under a profile with
//! [`crate::profile::Profile::model_identities`], 2.1.332). Claude Code names the session's
//! model among the first message's context; a command file's `model` then answers that
//! command's query, and the query's first tool result says `You are powered by the model named
//! …` of the new one (`sdk_wire/command_frontmatter`, `sdk36/queued_command_model`). The first
//! message's reminders are those of the session's own model, not the command's.
//!
//! Not reproduced: the reminder back to the session's model at the next prompt, and 2.1.332's
//! re-rendering of the earlier reminder as a `role: "system"` message once Opus 5.5 is asked
//! again; reloop sends neither (docs/sdk.md).

use crate::context::Loop;
use crate::flags::Flag;
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
