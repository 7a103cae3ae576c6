//! The sessions a stream-json `/clear` begins (first or between queries: [`Setup::start_fresh`],
//! [`Setup::journal_cleared`]), and `/clear` as a session's first prompt, new or resumed
//! (`tests/print/recorded/*/settings_slash/clear`, both versions): Claude Code asks no model. The session it started ends there without printing its
//! `system/init` (2.1.332 prints its `conversation_reset` and `background_tasks_changed`,
//! 2.1.197 nothing), and a new session prints the `/clear`'s lines, as a `/clear` between queries
//! does ([`crate::sdk::stream::SdkStream::conversation_reset`]).
//!
//! Journaled as that `/clear` is: the ended session with a header and no steps (its replay
//! prints its reset lines, since the next session's header names it), and the new one with
//! `run_config.print.cleared_from`, started by the next message or, when none comes, journaled
//! with no steps.

use reloop_core::ContentBlock;
use reloop_driver::{RunHandle, Session};
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

    /// Prints the `/clear`'s lines for the session it ended: a new one (`--session-id`'s id,
    /// else a new one), journaled with no steps, or the resumed one, journaled already and left
    /// as it was. Returns the next session's id and what its header is to record.
    pub(super) fn clear_first(&self, wire: &Wire, stream: &mut SdkStream) -> Result<(String, ClearedFrom), CliError> {
        let mut session = self.session(wire, "", false)?;
        let resumed = match (&self.args.resume, self.args.r#continue) {
            (Some(id), _) => Some(id.clone()),
            (None, true) => Some("last".to_string()),
            (None, false) => None,
        };
        let id = match (&resumed, session.journal.as_mut()) {
            (Some(target), Some(journal)) => journal.resolve(target)?,
            (Some(_), None) => return Err(CliError::Usage("resuming needs the journal".into())),
            (None, _) => session.chosen_id().map(str::to_string).unwrap_or_else(reloop_driver::new_session_id),
        };
        // As its replay meets it: the header's `system/init` is held, then dropped by the reset.
        stream.on_event(&session.started_event(&id));
        if session.journal.is_some() && resumed.is_none() {
            session.with_session_id(Some(id)).journal_without_steps()?;
        }
        let new = reloop_driver::new_session_id();
        let cleared = stream.conversation_reset(&new, None);
        Ok((new, cleared))
    }

    /// `-p /clear`: nothing follows, so the session it began is journaled with no steps.
    pub(super) fn clear_only(&self, wire: &Wire, stream: &mut SdkStream) -> Result<(), CliError> {
        let (new, cleared) = self.clear_first(wire, stream)?;
        self.journal_cleared(wire, new, cleared)
    }

    /// Starts the first query after a `/clear`: a new session `id`, whatever the flags resumed,
    /// whose header records the `/clear` (`None`: a first prompt answered locally named it).
    pub(super) fn start_fresh(
        &self,
        wire: &Wire,
        content: Vec<ContentBlock>,
        origin: Option<Value>,
        id: String,
        cleared: Option<ClearedFrom>,
    ) -> Result<RunHandle, CliError> {
        let prompt_text = crate::launch::new::text_of(&content);
        let before = self.switch_for(&prompt_text)?;
        let content = self.commands(content)?;
        Ok(self.cleared_session(wire, &prompt_text, id, cleared)?.start_after(before, content, origin)?)
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

    /// A `/clear` no query followed (stdin closed, or another `/clear` came): its session is
    /// journaled with no steps, so its replay prints what the `/clear` printed for it.
    pub(super) fn journal_cleared(&self, wire: &Wire, id: String, cleared: ClearedFrom) -> Result<(), CliError> {
        let session = self.cleared_session(wire, "", id, Some(cleared))?;
        if session.journal.is_some() {
            session.journal_without_steps()?;
        }
        Ok(())
    }
}
