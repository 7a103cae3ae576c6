//! The journal a session writes: SQLite on this machine, or a journal many machines share.
//!
//! Every journal the loop is given (run, resume, subagents) is a [`SessionJournal`], so the loop
//! does not care which it writes. The live run writes the SQLite arm on the journal's own writer
//! thread, each step encoded straight from the core's [`reloop_core::Step`] ([`NewStep`]) with
//! no [`StepRecord`] copy; a shared journal (`reloop-journal-pg`) is reached through
//! [`JournalBackend`] and takes records ([`record_of`]).

use std::ops::{Deref, DerefMut};

use reloop_journal::{EffectsRef, Journal, JournalBackend, JournalError, NewStep, SessionHeader, StepRecord};

/// A session's journal.
// One per session, never in a collection: boxing SQLite's would put a pointer in its hot path.
#[allow(clippy::large_enum_variant)]
pub enum SessionJournal {
    /// The embedded SQLite journal.
    Sqlite(Journal),
    /// Any other backend (PostgreSQL), behind the trait.
    Shared(Box<dyn JournalBackend + Send>),
}

impl std::fmt::Debug for SessionJournal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("SessionJournal").field(&self.location()).finish()
    }
}

impl From<Journal> for SessionJournal {
    fn from(journal: Journal) -> Self {
        SessionJournal::Sqlite(journal)
    }
}

impl From<Box<dyn JournalBackend + Send>> for SessionJournal {
    fn from(journal: Box<dyn JournalBackend + Send>) -> Self {
        SessionJournal::Shared(journal)
    }
}

impl Deref for SessionJournal {
    type Target = dyn JournalBackend + Send;

    fn deref(&self) -> &Self::Target {
        match self {
            SessionJournal::Sqlite(j) => j,
            SessionJournal::Shared(j) => j.as_ref(),
        }
    }
}

impl DerefMut for SessionJournal {
    fn deref_mut(&mut self) -> &mut Self::Target {
        match self {
            SessionJournal::Sqlite(j) => j,
            SessionJournal::Shared(j) => j.as_mut(),
        }
    }
}

/// A step as a record, for a backend that takes records: the one copy SQLite's path avoids.
pub(crate) fn record_of(step: &NewStep<'_>) -> Result<StepRecord, JournalError> {
    let effects = match step.effects {
        EffectsRef::Core(effects) => {
            serde_json::to_value(effects).map_err(|source| JournalError::Encode { what: "effects", source })?
        }
        EffectsRef::Json(value) => value.clone(),
    };
    Ok(StepRecord {
        seq: step.seq,
        at_ms: step.at_ms,
        event: step.event.clone(),
        from_phase: step.from_phase.to_string(),
        to_phase: step.to_phase.to_string(),
        turn_before: step.turn_before,
        turn_after: step.turn_after,
        reason: step.reason.cloned(),
        ignored: step.ignored.cloned(),
        effects,
        digest: step.digest,
    })
}

impl SessionJournal {
    /// Another connection to the same journal, for a child session that writes while its parent
    /// does.
    pub fn open_again(&self) -> Result<SessionJournal, JournalError> {
        match self {
            SessionJournal::Sqlite(j) => Ok(SessionJournal::Sqlite(Journal::open_for_reading(j.path())?)),
            SessionJournal::Shared(j) => Ok(SessionJournal::Shared((j.reopener())()?)),
        }
    }

    /// Journals a new session's header with its first steps; this journal becomes its writer.
    pub fn create_session_with_steps(
        &mut self,
        header: &SessionHeader,
        steps: &[StepRecord],
    ) -> Result<(), JournalError> {
        match self {
            SessionJournal::Sqlite(j) => j.create_session_with_steps(header, steps),
            SessionJournal::Shared(j) => j.create_session(header, steps),
        }
    }

    /// The session that answers `parent`'s call `tool_use_id`, if one was started.
    pub fn subagent_for(&self, parent: &str, tool_use_id: &str) -> Result<Option<String>, JournalError> {
        Ok(self.subagents_of(parent)?.into_iter().find(|s| s.tool_use_id == tool_use_id).map(|s| s.id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reloop_core::{transition, Config, ContentBlock, Event, State};

    #[test]
    fn a_record_made_for_a_shared_journal_is_the_one_sqlite_stores() {
        let event = Event::user_input(vec![ContentBlock::text("hi")]);
        let step = transition(State::new(Config::default()), event.clone());
        let new = NewStep::of(1, 7, &event, "idle", 0, &step);
        let mut sqlite = Journal::in_memory().unwrap();
        let header = SessionHeader {
            id: "s".into(),
            created_at_ms: 1,
            engine_version: reloop_journal::ENGINE_VERSION.into(),
            core_config: Config::default(),
            run_config: serde_json::json!({}),
            parent: None,
        };
        sqlite.create_session_with_steps(&header, &[]).unwrap();
        sqlite.append("s", new).unwrap();
        assert_eq!(sqlite.steps("s").unwrap(), vec![record_of(&new).unwrap()]);
        assert_eq!(record_of(&new).unwrap(), StepRecord::of(1, 7, event, "idle", 0, &step));
    }
}
