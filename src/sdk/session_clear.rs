//! The sessions a `/clear` begins and ends (`tests/print/recorded/*/settings_slash/clear`,
//! `stream_clear`, both versions): Claude Code asks no model. A new session begins at the
//! `/clear`, before any message (flag 38): it runs its SessionStart hooks (`source` `clear`)
//! then, and the `/clear`'s `system/init` and `result` follow their lines
//! ([`crate::sdk::stream::SdkStream::clear_to`]); its first message starts its first query.
//! A first prompt's `/clear` ends the session the process began, started as well without a
//! prompt (SessionStart `startup`, SessionEnd `clear`; it prints no `system/init`: 2.1.332 its
//! `conversation_reset` and `background_tasks_changed`, 2.1.197 nothing), or the one
//! `--resume` / `--continue` named, left as journaled.
//!
//! Journaled as any session ([`reloop_driver::Session::start_unprompted`]): the header with the
//! first step, or alone when the session ended having journaled none; the new one's header
//! records `run_config.print.cleared_from`.

use futures::StreamExt;
use reloop_core::ContentBlock;
use reloop_driver::{RunEvent, RunHandle, Session};
use serde_json::Value;

use super::Setup;
use crate::error::CliError;
use crate::sdk::clear::ClearedFrom;
use crate::sdk::protocol::Wire;
use crate::sdk::stream::SdkStream;

impl Setup {
    /// Whether the first prompt is `/clear`, which no model is asked: it ends the conversation
    /// the process began, or the one `--resume` / `--continue` named, unanswered.
    pub(super) fn clears_first(&self, content: &[reloop_core::ContentBlock]) -> bool {
        crate::sdk::clear::is_command(content, "/clear")
    }

    /// A first prompt's `/clear`: the session it ends (a new one, `--session-id`'s id else a
    /// new id, started without a prompt so its SessionStart `startup` and SessionEnd `clear`
    /// hooks run, as Claude Code runs them; or the resumed one, journaled already and left as it
    /// was), its reset lines, and the session it begins, started at once (flag 38).
    pub(super) async fn clear_first(&self, wire: &Wire, stream: &mut SdkStream) -> Result<RunHandle, CliError> {
        let mut session = self.session(wire, "", true)?;
        let resumed = match (&self.args.resume, self.args.r#continue) {
            (Some(id), _) => Some(id.clone()),
            (None, true) => Some("last".to_string()),
            (None, false) => None,
        };
        match (&resumed, session.journal.as_mut()) {
            (Some(target), Some(journal)) => {
                let id = journal.resolve(target)?;
                // As its replay meets it: the header's `system/init` is held, then dropped by the reset.
                stream.on_event(&session.started_event(&id));
            }
            (Some(_), None) => return Err(CliError::Usage("resuming needs the journal".into())),
            (None, _) => {
                let id = session.chosen_id().map(str::to_string).unwrap_or_else(reloop_driver::new_session_id);
                let first = session.with_session_id(Some(id)).start_unprompted();
                until_ended(first, stream, reloop_driver::AbortHandle::clear).await?;
            }
        }
        let new = reloop_driver::new_session_id();
        let cleared = stream.clear_to(&new, None);
        self.start_cleared(wire, new, cleared)
    }

    /// `-p /clear`: the sessions it ends and begins, and nothing follows.
    pub(super) async fn clear_only(&self, wire: &Wire, stream: &mut SdkStream) -> Result<(), CliError> {
        let begun = self.clear_first(wire, stream).await?;
        until_ended(begun, stream, reloop_driver::AbortHandle::close).await
    }

    /// The session a `/clear` begins (`id`, its header naming what it cleared), started at
    /// once: its SessionStart `clear` hooks run now, and its first message starts its first
    /// query.
    pub(super) fn start_cleared(&self, wire: &Wire, id: String, cleared: ClearedFrom) -> Result<RunHandle, CliError> {
        Ok(self.cleared_session(wire, "", id, Some(cleared))?.start_unprompted())
    }

    /// Starts the first query of session `id` after its first prompt was answered locally,
    /// whatever the flags resumed; `local`: what those answers left for the model.
    pub(super) fn start_fresh(
        &self,
        wire: &Wire,
        (content, origin): (Vec<ContentBlock>, Option<Value>),
        id: String,
        local: Vec<reloop_core::local_lines::LocalLine>,
    ) -> Result<RunHandle, CliError> {
        let prompt_text = crate::launch::new::text_of(&content);
        let before = self.switch_for(&prompt_text)?;
        let content = self.commands(content)?;
        let session = self.cleared_session(wire, &prompt_text, id, None)?;
        Ok(session.start_after(before, content, origin, local)?)
    }

    /// The session a `/clear` began, its header naming the session it cleared.
    fn cleared_session(
        &self,
        wire: &Wire,
        prompt_text: &str,
        id: String,
        cleared: Option<ClearedFrom>,
    ) -> Result<Session, CliError> {
        let mut session = self.session(wire, prompt_text, true)?.with_session_id(Some(id));
        if let Some(cleared) = cleared {
            session = session.with_cleared(true);
            let mut record = self.print_record()?;
            record.cleared_from = Some(cleared);
            session.run.print = Some(serde_json::to_value(record).map_err(|e| CliError::Io(e.to_string()))?);
        }
        Ok(session)
    }
}

/// Prints an unprompted session's lines until it ends, telling it `then` (clear, close) once it
/// has started.
async fn until_ended(
    mut handle: RunHandle,
    stream: &mut SdkStream,
    then: fn(&reloop_driver::AbortHandle),
) -> Result<(), CliError> {
    let mut told = false;
    while let Some(event) = handle.next().await {
        stream.on_event(&event);
        if matches!(event, RunEvent::Ready) && !std::mem::replace(&mut told, true) {
            then(&handle.abort_handle());
        }
    }
    handle.finish().await?;
    Ok(())
}
