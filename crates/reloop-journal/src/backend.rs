//! What any journal does, whatever stores it: the operations the driver, replay, `why`, `show`,
//! `diff`, import and export need, as one object-safe trait.
//!
//! [`Journal`] (SQLite, embedded, one machine) implements it by delegating to its own methods;
//! `reloop-journal-pg` implements it on a PostgreSQL database many machines share. The contract
//! is the same for both: an append returns only once its step is committed; deferred steps are
//! committed together by the next durable append, [`JournalBackend::commit`] or drop; one writer
//! per session at a time. Calls are synchronous, as the driver makes them today.

use std::sync::Arc;

use serde_json::Value;

use crate::agents::Subagent;
use crate::dump::SessionDump;
use crate::error::JournalError;
use crate::listing::SessionOverview;
use crate::lock::take_lock_on;
use crate::record::{SessionHeader, SessionSummary, StepRecord};
use crate::rows::{insert_step, session_number};
use crate::store::{insert_header, Journal};

/// Opens another connection to a journal: see [`JournalBackend::reopener`].
pub type Reopen = Arc<dyn Fn() -> Result<Box<dyn JournalBackend + Send>, JournalError> + Send + Sync>;

/// Whether a session written whole makes the journal that wrote it its writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writer {
    /// This journal goes on writing it (a fork, a compaction, a new session).
    Take,
    /// Written and left (an import): any journal may take it up later.
    Leave,
}

/// Takes a new session's steps one at a time, in order, and writes each.
pub type StepSink<'a> = dyn FnMut(&StepRecord) -> Result<(), JournalError> + 'a;

/// Hands a new session's steps, in order, to the sink it is given; an error stops it, and is
/// returned (see [`JournalBackend::create_session_from`]).
pub type Fill<'a> = dyn FnMut(&mut StepSink<'_>) -> Result<(), JournalError> + 'a;

/// A session journal: SQLite or a shared database.
pub trait JournalBackend {
    /// How to open more connections to the same journal, each for a session of its own (a
    /// subagent's child writes while its parent does; one writer per session, not per journal).
    /// Nothing is opened until it is called.
    fn reopener(&self) -> Reopen;

    /// The SQLite journal behind this one, for its faster paths (rows read undecoded).
    fn as_sqlite(&self) -> Option<&Journal> {
        None
    }

    /// Where the journal is, for messages: a path, or a database address without its password.
    fn location(&self) -> String;

    /// Journals a new session's header and its first steps (none, or a prompt's) in one
    /// transaction; this journal becomes the session's one writer.
    fn create_session(&mut self, header: &SessionHeader, steps: &[StepRecord]) -> Result<(), JournalError> {
        self.create_session_from(header, Writer::Take, &mut |sink| steps.iter().try_for_each(sink))
    }

    /// Journals a new session's header and the steps `fill` hands over (a fork's recomputed
    /// prefix, an import's steps) in one transaction: the session is there whole or not at all,
    /// and an error from `fill` writes nothing. A backend that can keep its transaction open
    /// while `fill` runs writes each step as it is handed over, holding none (SQLite); one that
    /// cannot gathers them first (PostgreSQL, whose connection runs on a thread of its own).
    /// A journal that already holds the id is left unchanged ([`JournalError::Duplicate`]).
    fn create_session_from(
        &mut self,
        header: &SessionHeader,
        writer: Writer,
        fill: &mut Fill<'_>,
    ) -> Result<(), JournalError>;

    /// Writes a dumped session verbatim, without becoming its writer. A journal that already
    /// holds its id is left unchanged ([`JournalError::Duplicate`]). (`reloop import journal`
    /// reads a dump a step at a time instead: [`crate::load_dump`].)
    fn import_session(&mut self, dump: &SessionDump) -> Result<String, JournalError> {
        let (header, steps) = dump.records()?;
        self.create_session_from(&header, Writer::Leave, &mut |sink| steps.iter().try_for_each(sink))?;
        Ok(header.id)
    }

    /// Writes one step, committed (with the deferred steps before it) when this returns.
    fn append(&mut self, session: &str, step: &StepRecord) -> Result<(), JournalError>;

    /// Writes one step without committing it yet: a crash may lose it, so only for steps whose
    /// effects nothing outside the process has seen.
    fn append_deferred(&mut self, session: &str, step: &StepRecord) -> Result<(), JournalError>;

    /// Like [`JournalBackend::append`], and durable against a power loss too: for the step that
    /// guards a side effect (a write tool's start), so no resume runs it twice.
    fn append_synced(&mut self, session: &str, step: &StepRecord) -> Result<(), JournalError>;

    /// Steps deferred and not committed yet.
    fn deferred(&self) -> usize;

    /// Commits the deferred steps, if any.
    fn commit(&mut self) -> Result<(), JournalError>;

    /// Makes this journal the session's one writer (`resume`), or says who already is.
    fn lock_session(&mut self, session: &str) -> Result<(), JournalError>;

    /// Stops being the session's writer, committing what was deferred first.
    fn release_session(&mut self, session: &str) -> Result<(), JournalError>;

    /// Who writes the session now, if anyone does (a pid, or a lease holder), for listings.
    fn live_writer(&self, session: &str) -> Result<Option<String>, JournalError>;

    /// What the session was started with.
    fn header(&self, id: &str) -> Result<SessionHeader, JournalError>;

    /// A full id, a unique id prefix, or `last` (the session written last), as an id.
    fn resolve(&self, selector: &str) -> Result<String, JournalError>;

    /// Every session, oldest first.
    fn sessions(&self) -> Result<Vec<SessionSummary>, JournalError>;

    /// Sessions imported from `file` with their run configs, oldest first.
    fn imports_of(&self, file: &str) -> Result<Vec<(String, Value)>, JournalError>;

    /// Every session with what a listing shows of it, oldest written first.
    fn overview(&self) -> Result<Vec<SessionOverview>, JournalError>;

    /// The subagents `parent` started, in creation order.
    fn subagents_of(&self, parent: &str) -> Result<Vec<Subagent>, JournalError>;

    /// The sessions a `/clear` started from `session` (their headers' `run_config.print.cleared_from.session`),
    /// in creation order: its replay ends with the lines the `/clear` printed.
    fn cleared_from(&self, session: &str) -> Result<Vec<String>, JournalError>;

    /// Puts a session this journal created (and writes) in the work queue, and gives it up:
    /// a worker ([`JournalBackend::claim`]) runs it from there.
    fn enqueue(&mut self, _session: &str) -> Result<(), JournalError> {
        Err(JournalError::NeedsShared { place: self.location(), what: "a queue of sessions" })
    }

    /// Takes the oldest queued session nobody writes (never claimed, or whose writer's lease
    /// expired) and becomes its writer; `None` when there is none.
    fn claim(&mut self) -> Result<Option<String>, JournalError> {
        Err(JournalError::NeedsShared { place: self.location(), what: "a worker" })
    }

    /// Gives a session [`JournalBackend::claim`] just took back to the queue unrun, the claim
    /// not counted against it: a worker told to stop while its claim was on the way.
    fn unclaim(&mut self, _session: &str) -> Result<(), JournalError> {
        Err(JournalError::NeedsShared { place: self.location(), what: "a worker" })
    }

    /// Marks a queued session as done with (`outcome`: how its run ended), so no worker claims
    /// it again.
    fn finish_queued(&mut self, _session: &str, _outcome: &str) -> Result<(), JournalError> {
        Err(JournalError::NeedsShared { place: self.location(), what: "a queue of sessions" })
    }

    /// Hands the session's steps to `visit` in order, holding a bounded number in memory;
    /// `visit` returns `false` to stop, or an error that stops the walk and is returned.
    /// Returns how many steps it was handed.
    fn visit_steps(
        &self,
        id: &str,
        visit: &mut dyn FnMut(StepRecord) -> Result<bool, JournalError>,
    ) -> Result<usize, JournalError> {
        self.visit_steps_from(id, 0, visit)
    }

    /// Like [`JournalBackend::visit_steps`], from step `from` on: a reader that follows a
    /// running session (`show --follow`, the live OpenTelemetry export) asks only for the steps
    /// it has not seen, instead of walking the session from its start each time; each journal
    /// seeks there. Returns how many steps it handed over.
    fn visit_steps_from(
        &self,
        id: &str,
        from: u64,
        visit: &mut dyn FnMut(StepRecord) -> Result<bool, JournalError>,
    ) -> Result<usize, JournalError>;

    /// Every step of a session, in order.
    fn steps(&self, id: &str) -> Result<Vec<StepRecord>, JournalError> {
        let mut out = Vec::new();
        self.visit_steps(id, &mut |step| {
            out.push(step);
            Ok(true)
        })?;
        Ok(out)
    }

    /// The session as a dump (`reloop export --format journal`).
    fn dump_session(&self, id: &str) -> Result<SessionDump, JournalError> {
        SessionDump::of(self.header(id)?, self.steps(id)?)
    }
}

impl Journal {
    /// Writes a dumped session into this journal, verbatim, in one transaction. Its header keeps
    /// its id; a journal that already holds that id is left unchanged.
    pub fn load_session(&mut self, dump: &SessionDump) -> Result<String, JournalError> {
        JournalBackend::import_session(self, dump)
    }

    /// Journals a header and steps computed elsewhere (a fork's copied prefix) in one
    /// transaction, and makes this journal the session's writer.
    pub fn create_session_with_steps(
        &mut self,
        header: &SessionHeader,
        steps: &[StepRecord],
    ) -> Result<(), JournalError> {
        self.create_session_from(header, Writer::Take, &mut |sink| steps.iter().try_for_each(sink))
    }

    /// Journals a new session's header and the steps `fill` hands to its sink, in order, in one
    /// transaction: each step is written as it is handed over and none is held. Nothing is
    /// written unless all is: an error from `fill` (or from writing a step) rolls it all back.
    pub fn create_session_from(
        &mut self,
        header: &SessionHeader,
        writer: Writer,
        fill: &mut Fill<'_>,
    ) -> Result<(), JournalError> {
        self.commit()?;
        // Immediate: the header's check reads before it writes, and a deferred transaction
        // could not then take the write lock from another writer of the journal (a subagent's).
        let tx = self.conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        insert_header(&tx, header)?;
        let number = session_number(&tx, &header.id)?.unwrap_or_default();
        {
            let mut buf = self.buf.borrow_mut();
            fill(&mut |step| insert_step(&tx, &mut buf, number, &header.id, &step.into()))?;
        }
        if writer == Writer::Take {
            take_lock_on(&tx, &header.id)?;
        }
        tx.commit()?;
        if writer == Writer::Take {
            self.locked.borrow_mut().push(header.id.clone());
        }
        Ok(())
    }
}

impl JournalBackend for Journal {
    fn reopener(&self) -> Reopen {
        let path = self.path().to_path_buf();
        Arc::new(move || Ok(Box::new(Journal::open_for_reading(&path)?) as Box<dyn JournalBackend + Send>))
    }

    fn as_sqlite(&self) -> Option<&Journal> {
        Some(self)
    }

    fn location(&self) -> String {
        self.path().display().to_string()
    }

    fn create_session_from(
        &mut self,
        header: &SessionHeader,
        writer: Writer,
        fill: &mut Fill<'_>,
    ) -> Result<(), JournalError> {
        Journal::create_session_from(self, header, writer, fill)
    }

    fn append(&mut self, session: &str, step: &StepRecord) -> Result<(), JournalError> {
        Journal::append(self, session, step)
    }

    fn append_deferred(&mut self, session: &str, step: &StepRecord) -> Result<(), JournalError> {
        Journal::append_deferred(self, session, step)
    }

    fn append_synced(&mut self, session: &str, step: &StepRecord) -> Result<(), JournalError> {
        Journal::append_synced(self, session, step)
    }

    fn deferred(&self) -> usize {
        Journal::deferred(self)
    }

    fn commit(&mut self) -> Result<(), JournalError> {
        Journal::commit(self)
    }

    fn lock_session(&mut self, session: &str) -> Result<(), JournalError> {
        Journal::lock_session(self, session)
    }

    fn release_session(&mut self, session: &str) -> Result<(), JournalError> {
        self.unlock_session(session)
    }

    fn live_writer(&self, session: &str) -> Result<Option<String>, JournalError> {
        Ok(self.writer(session)?.map(|pid| format!("pid {pid}")))
    }

    fn header(&self, id: &str) -> Result<SessionHeader, JournalError> {
        Journal::header(self, id)
    }

    fn resolve(&self, selector: &str) -> Result<String, JournalError> {
        Journal::resolve(self, selector)
    }

    fn sessions(&self) -> Result<Vec<SessionSummary>, JournalError> {
        Journal::sessions(self)
    }

    fn imports_of(&self, file: &str) -> Result<Vec<(String, Value)>, JournalError> {
        Journal::imports_of(self, file)
    }

    fn overview(&self) -> Result<Vec<SessionOverview>, JournalError> {
        Journal::overview(self)
    }

    fn subagents_of(&self, parent: &str) -> Result<Vec<Subagent>, JournalError> {
        Journal::subagents_of(self, parent)
    }

    fn cleared_from(&self, session: &str) -> Result<Vec<String>, JournalError> {
        Journal::cleared_from(self, session)
    }

    fn visit_steps_from(
        &self,
        id: &str,
        from: u64,
        visit: &mut dyn FnMut(StepRecord) -> Result<bool, JournalError>,
    ) -> Result<usize, JournalError> {
        self.visit_rows(id, from, |row| visit(row.record(id)?))
    }

    fn steps(&self, id: &str) -> Result<Vec<StepRecord>, JournalError> {
        Journal::steps(self, id)
    }

    fn dump_session(&self, id: &str) -> Result<SessionDump, JournalError> {
        Journal::dump_session(self, id)
    }
}
