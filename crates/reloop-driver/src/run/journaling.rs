//! How the live run journals its steps: on the journal's own thread ([`JournalWriter`]), with
//! the write-ahead rule kept where effects leave the process.
//!
//! Each step is handed to the writer and the loop goes on. It waits for the step's commit only
//! when the step's effects can be seen outside the process (a request to a model server, a tool
//! that may change something or asks a hook or the caller, a hook, the end of the run) or when
//! the step sets nothing in motion here. A committed step's outputs (the lines the caller
//! prints) are held until the writer has committed it, so the caller never sees a step a crash
//! could still lose; streamed text is shown at once, as before, since a resume asks for it again.
//!
//! A shared journal (PostgreSQL) keeps its own connection thread and is written synchronously,
//! as before: a step is committed when its write returns, deferred ones with the next one.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

use reloop_core::{Command, Effect, Event, Step, ToolUse};
use reloop_journal::{
    Durability, JournalBackend, JournalWriter, NewStep, SessionHeader, StepRecord, GROUP_COMMIT_INTERVAL,
};
use tokio::sync::{mpsc, Notify};

use crate::error::DriverError;
use crate::journal::record_of;
use crate::{RunEvent, SessionJournal};

/// The session's journal writer and the outputs waiting for its commits.
pub(super) struct Journaling {
    writer: Writer,
    /// Outputs of steps not committed yet, in order, each with its step.
    held: VecDeque<(u64, RunEvent)>,
    /// Woken after each commit, so held outputs go out while the loop waits for events.
    pub(super) committed: Arc<Notify>,
}

/// Where the steps go.
enum Writer {
    /// SQLite, on a thread of its own.
    Thread(JournalWriter),
    /// A shared journal, written here.
    Direct(Direct),
}

/// A shared journal written on the loop: its backend has a connection thread of its own.
struct Direct {
    journal: Box<dyn JournalBackend + Send>,
    session: String,
    /// The last step written, and the last committed.
    written: u64,
    committed: u64,
    /// When the open group of deferred steps began.
    deferred_since: Option<Instant>,
}

/// How a step is journaled: its durability, and whether the loop waits for its commit before
/// carrying out its effects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Plan {
    pub durability: Durability,
    pub wait: bool,
}

impl Journaling {
    /// Moves a SQLite `journal` to a writer thread for `session`; a shared one stays here.
    pub(super) fn start(journal: SessionJournal, session: &str) -> Result<Self, DriverError> {
        let committed = Arc::new(Notify::new());
        let wake = committed.clone();
        let writer = match journal {
            SessionJournal::Sqlite(journal) => {
                Writer::Thread(JournalWriter::spawn(journal, session, move || wake.notify_one())?)
            }
            SessionJournal::Shared(journal) => Writer::Direct(Direct {
                journal,
                session: session.to_string(),
                written: 0,
                committed: 0,
                deferred_since: None,
            }),
        };
        Ok(Journaling { writer, held: VecDeque::new(), committed })
    }

    /// Whether a step's [`NewStep::event_json`] reaches its row: the writer thread encodes the
    /// new step; a shared journal writes the record it converts to.
    pub(super) fn takes_event_json(&self) -> bool {
        matches!(self.writer, Writer::Thread(_))
    }

    /// Journals a step as `plan` says; a new session's `header` goes with its first step.
    pub(super) fn write(
        &mut self,
        header: Option<SessionHeader>,
        step: &NewStep<'_>,
        first: impl FnOnce() -> StepRecord,
        plan: Plan,
    ) -> Result<(), DriverError> {
        let writer = match &mut self.writer {
            Writer::Thread(writer) => writer,
            Writer::Direct(direct) => return direct.write(header, step, first, plan),
        };
        match header {
            // Nothing is asked before the session exists in the journal.
            Some(header) => {
                writer.create(header, first())?;
                writer.wait_committed(step.seq)?;
            }
            None => {
                writer.append(step, plan.durability)?;
                if plan.wait {
                    writer.wait_committed(step.seq)?;
                }
            }
        }
        Ok(())
    }

    /// Journals a session that ends having journaled no step: its header alone.
    pub(super) fn create_without_steps(&mut self, header: &SessionHeader) -> Result<(), DriverError> {
        match &mut self.writer {
            Writer::Thread(writer) => writer.create_bare(header.clone())?,
            Writer::Direct(direct) => direct.journal.create_session(header, &[])?,
        }
        Ok(())
    }

    /// Before the loop waits for its next event: steps to be committed go to the writer now
    /// (one wake-up for all the steps since the last wait).
    pub(super) fn before_idle(&mut self) -> Result<(), DriverError> {
        if let Writer::Thread(writer) = &mut self.writer {
            writer.flush_before_idle()?;
        }
        Ok(())
    }

    /// When the oldest deferred step not handed to the writer yet was written.
    pub(super) fn group_since(&self) -> Option<Instant> {
        match &self.writer {
            Writer::Thread(writer) => writer.group_since(),
            Writer::Direct(direct) => direct.deferred_since,
        }
    }

    /// The open group's time is up: its steps are committed now.
    pub(super) fn commit_group(&mut self) -> Result<(), DriverError> {
        match &mut self.writer {
            Writer::Thread(writer) => writer.flush(true)?,
            Writer::Direct(direct) => {
                if direct.deferred_since.take().is_some() {
                    direct.journal.commit()?;
                    direct.committed = direct.written;
                }
            }
        }
        Ok(())
    }

    /// The last step committed.
    fn committed(&self) -> u64 {
        match &self.writer {
            Writer::Thread(writer) => writer.committed(),
            Writer::Direct(direct) => direct.committed,
        }
    }

    /// Shows step `seq`'s outputs: at once when the step is committed (the loop waited) or is
    /// streamed text with nothing held before it; else once the writer has committed it.
    pub(super) fn show(
        &mut self,
        seq: u64,
        plan: Plan,
        outputs: impl IntoIterator<Item = RunEvent>,
        out: &mpsc::UnboundedSender<RunEvent>,
    ) {
        // One reading of the writer's progress for both: read twice, a commit in between could
        // let this step's lines overtake held ones.
        let committed = self.committed();
        self.release_to(committed, out);
        let at_once = self.held.is_empty() && (committed >= seq || plan.durability == Durability::Deferred);
        for output in outputs {
            if at_once {
                let _ = out.send(output);
            } else {
                self.held.push_back((seq, output));
            }
        }
    }

    /// Sends the held outputs of every step committed by now.
    pub(super) fn release(&mut self, out: &mpsc::UnboundedSender<RunEvent>) {
        if !self.held.is_empty() {
            self.release_to(self.committed(), out);
        }
    }

    /// Sends the held outputs of steps up to `committed`, in order.
    fn release_to(&mut self, committed: u64, out: &mpsc::UnboundedSender<RunEvent>) {
        while let Some((seq, _)) = self.held.front() {
            if *seq > committed {
                break;
            }
            if let Some((_, output)) = self.held.pop_front() {
                let _ = out.send(output);
            }
        }
    }

    /// Whether outputs wait for a commit.
    pub(super) fn holds(&self) -> bool {
        !self.held.is_empty()
    }
}

impl Direct {
    /// Writes a step, committed when this returns (a deferred one joins the open group,
    /// committed with the next step or once the group is [`GROUP_COMMIT_INTERVAL`] old).
    fn write(
        &mut self,
        header: Option<SessionHeader>,
        step: &NewStep<'_>,
        first: impl FnOnce() -> StepRecord,
        plan: Plan,
    ) -> Result<(), DriverError> {
        self.written = step.seq;
        let due = self.deferred_since.is_some_and(|since| since.elapsed() >= GROUP_COMMIT_INTERVAL);
        let (journal, session) = (&mut self.journal, self.session.as_str());
        match (header, plan.durability) {
            (Some(header), _) => journal.create_session(&header, std::slice::from_ref(&first()))?,
            (None, Durability::Deferred) if !due => {
                self.deferred_since.get_or_insert_with(Instant::now);
                return Ok(journal.append_deferred(session, &record_of(step)?)?);
            }
            (None, Durability::Deferred | Durability::Committed) => journal.append(session, &record_of(step)?)?,
            (None, Durability::Synced) => journal.append_synced(session, &record_of(step)?)?,
        }
        self.deferred_since = None;
        self.committed = step.seq;
        Ok(())
    }
}

/// How a step is journaled, by what its effects can show outside the process. `quiet(calls)`
/// says whether running those calls shows nothing outside (read-only, no hooks, no caller
/// callback); `model_in_process` whether the model is this process's own (a script).
pub(super) fn plan(
    event: &Event,
    step: &Step,
    quiet: impl Fn(&[Arc<ToolUse>]) -> bool,
    model_in_process: bool,
) -> Plan {
    // A write tool's start: synced, so not even a power loss can lose it and let a resume run
    // the write twice.
    if matches!(event, Event::ToolStarted { .. }) {
        return Plan { durability: Durability::Synced, wait: true };
    }
    let (mut outward, mut inward) = (false, false);
    for command in step.effects.iter().filter_map(Effect::command) {
        let seen_outside = match command {
            Command::RunTools { calls } => !quiet(calls),
            Command::CallModel(_) | Command::Summarize { .. } => !model_in_process,
            Command::ResumeTools { .. }
            | Command::RunStopHooks { .. }
            | Command::CancelHooks
            | Command::CancelModel
            | Command::CancelTools
            | Command::WaitRetry(_) => true,
        };
        outward |= seen_outside;
        inward |= !seen_outside;
    }
    let done = step.state.is_done();
    // The end of the run and every decision are committed: the caller acts on them.
    let durability = if outward || step.reason.is_some() || done {
        Durability::Committed
    } else {
        match event {
            Event::TextDelta { .. }
            | Event::ModelStarted { .. }
            | Event::ModelBlock { .. }
            | Event::ModelDone { .. } => Durability::Deferred,
            _ => Durability::Committed,
        }
    };
    // Without an effect here to bring the next event, the loop would sit on a step not yet
    // committed: it waits instead (a queued input, a setting, the end of a query).
    let wait = durability != Durability::Deferred && (outward || done || !inward);
    Plan { durability, wait }
}

#[cfg(test)]
mod tests {
    use reloop_core::{transition, Config, ContentBlock, State};

    use super::*;

    fn asked() -> (Event, Step) {
        let event = Event::user_input(vec![ContentBlock::text("hi")]);
        let step = transition(State::new(Config::default()), event.clone());
        assert!(step.effects.iter().filter_map(Effect::command).any(|c| matches!(c, Command::CallModel(_))));
        (event, step)
    }

    #[test]
    fn a_request_to_a_model_server_waits_for_its_commit_and_one_to_the_script_does_not() {
        let (event, step) = asked();
        let remote = plan(&event, &step, |_| true, false);
        assert_eq!(remote, Plan { durability: Durability::Committed, wait: true });
        let scripted = plan(&event, &step, |_| true, true);
        assert_eq!(scripted, Plan { durability: Durability::Committed, wait: false });
    }

    #[test]
    fn the_end_of_the_run_and_a_write_tools_start_always_wait() {
        let (_, step) = asked();
        let ended = transition(step.state, Event::Abort);
        assert!(ended.state.is_done());
        assert!(plan(&Event::Abort, &ended, |_| true, true).wait);
        let start = Event::ToolStarted { tool_use_id: "t".into(), request: 1 };
        assert_eq!(plan(&start, &ended, |_| true, true), Plan { durability: Durability::Synced, wait: true });
    }
}
