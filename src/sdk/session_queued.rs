//! Messages sent while a query runs, as they wait and as they go (`crate::sdk::batch`): a
//! custom command whose file sets a model or allowed tools runs as a query of its own, with them,
//! as both versions run it when it queued (`sdk36/queued_command_model`: its `system/init` and
//! every request of it name the command's model, then the session goes back). It waits as it
//! was typed, so its model is known when it goes; other messages wait expanded.

use std::collections::VecDeque;

use reloop_core::profile::ProfileId;
use reloop_core::ContentBlock;
use serde_json::{json, Value};

use super::command::CommandQuery;
use super::Setup;
use crate::error::CliError;
use crate::sdk::batch::Queued;

/// The next query of what waits: its message, the host's `origin` for it, the command whose
/// model it is asked with, and the uuids its messages were stamped with.
pub(super) type NextQuery = (Vec<ContentBlock>, Option<Value>, Option<CommandQuery>, Vec<String>);

impl Setup {
    /// A message as it waits: a command that sets something for its query as typed, any other
    /// expanded.
    pub(super) fn queued(&self, content: Vec<ContentBlock>) -> Result<Vec<ContentBlock>, CliError> {
        if self.command_query(&crate::launch::new::text_of(&content))?.is_some() {
            return Ok(content);
        }
        self.commands(content)
    }

    /// The next query of what waits (`None`: nothing waits).
    pub(super) fn next_queued(&self, waiting: &mut VecDeque<Queued>) -> Result<Option<NextQuery>, CliError> {
        let alone =
            |content: &[ContentBlock]| matches!(self.command_query(&crate::launch::new::text_of(content)), Ok(Some(_)));
        let Some((content, origin, stamps)) = crate::sdk::batch::take(waiting, alone) else { return Ok(None) };
        let command = self.command_query(&crate::launch::new::text_of(&content))?;
        let content = if command.is_some() { self.commands(content)? } else { content };
        Ok(Some((content, origin, command, stamps)))
    }
}

/// The answer to an `interrupt`: 2.1.332's receipt lists the uuids of the messages that wait, as
/// they still run after it (`interrupt/*` records `{"still_queued": []}`, and its init
/// advertises `interrupt_receipt_v1`), and those its `cancel_queued` removed
/// (`interrupt/cancel_queued`: `{"still_queued": [], "cancelled": [...]}`); 2.1.197 answers with
/// nothing, and so does reloop's own profile.
pub(super) fn interrupt_receipt(compat: &str, waiting: &VecDeque<Queued>, cancelled: Option<Vec<String>>) -> Value {
    match ProfileId::parse(compat) {
        Some(ProfileId::ClaudeCode2_1_332) => {
            let mut receipt = json!({"still_queued": crate::sdk::batch::stamped(waiting)});
            if let Some(cancelled) = cancelled {
                receipt["cancelled"] = json!(cancelled);
            }
            receipt
        }
        _ => Value::Null,
    }
}

/// An interrupt's `cancel_queued: true` (`interrupt_cancel_queued_v1`): every waiting message the
/// host stamped with a uuid is removed, and their uuids returned; unstamped ones stay, as the
/// SDK's reference says. `None` when the request does not ask it or the profile is 2.1.197's,
/// which predates it.
pub(super) fn cancel_queued(compat: &str, request: &Value, waiting: &mut VecDeque<Queued>) -> Option<Vec<String>> {
    let asked = request.get("cancel_queued").and_then(Value::as_bool) == Some(true);
    if !asked || ProfileId::parse(compat) == Some(ProfileId::ClaudeCode2_1_197) {
        return None;
    }
    let cancelled = crate::sdk::batch::stamped(waiting);
    waiting.retain(|(_, _, stamp)| stamp.is_none());
    Some(cancelled)
}
