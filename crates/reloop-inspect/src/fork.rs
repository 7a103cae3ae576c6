//! Forks: a new session that shares its parent's history up to a step, then goes its own way.
//!
//! The fork's journal starts with the parent's events up to the fork point, recomputed through
//! today's core under the fork's own config (so its transitions are what this engine does with
//! those facts), and its header names the parent and the step. From there it is an ordinary
//! session: [`reloop_driver::Session::resume`] asks again for whatever was in flight at the fork point.
//!
//! Request numbers are absolute in the core (a fork at request 3 next sends request 4). A fork
//! given a new cassette wants that cassette's first response to answer the fork's first new
//! request; [`OffsetProvider`] subtracts the requests the parent had completed.

use std::sync::Arc;

use futures::stream::BoxStream;
use reloop_core::{Config, State};
use reloop_journal::{JournalBackend, JournalError, StepRecord, StepSink};
use reloop_model::{ModelProvider, ModelRequest, StreamEvent};

use reloop_core::Fold;

/// Why a fork cannot be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ForkError {
    /// The step asked for is not one of the parent's.
    #[error("--at {at} is outside the session's steps (1..={steps})")]
    OutOfRange {
        /// The step asked for.
        at: u64,
        /// How many steps the parent has.
        steps: u64,
    },
    /// The parent's steps could not be read.
    #[error(transparent)]
    Journal(#[from] JournalError),
}

/// Where a fork of session `id` at step `at` (its last step for `None`) starts, and what it starts
/// from.
#[derive(Debug)]
#[non_exhaustive]
pub struct ForkPoint {
    /// The parent's last step the fork keeps.
    pub at: u64,
    /// The state the kept steps lead to under the fork's config.
    pub state: State,
    /// Model requests the parent had completed (answered or failed) at the fork point.
    pub requests_done: u32,
}

/// The [`ForkPoint`] of a fork of session `id` at step `at` (its last step for `None`) under
/// `core`: the parent's steps folded as the journal hands them over, none kept. Reading stops
/// at the fork point; a point the session never reaches is read to the end, to say how long it
/// is. [`fork_steps`] then writes the kept steps.
pub fn fork_point_of(
    journal: &dyn JournalBackend,
    id: &str,
    at: Option<u64>,
    core: &Config,
) -> Result<ForkPoint, ForkError> {
    let mut fold = Fold::new(core);
    let mut total = 0u64;
    journal.visit_steps(id, &mut |record| {
        total += 1;
        if at.is_none_or(|at| record.seq <= at) {
            fold.push(record.seq, record.event, |_| ());
        }
        Ok(at.is_none_or(|at| at == 0 || fold.last_seq() < at))
    })?;
    let at = at.unwrap_or(fold.last_seq());
    if at == 0 || at > total {
        return Err(ForkError::OutOfRange { at, steps: total });
    }
    let state = fold.into_state();
    let requests_done = requests_done(&state);
    Ok(ForkPoint { at, state, requests_done })
}

/// The fork's first steps, handed to `sink` one at a time as the journal hands the parent's
/// steps over: the parent's steps `1..=at` recomputed under `core` (same events, same times,
/// today's transitions), none held. Returns the state they lead to ([`ForkPoint`]'s, which a caller can drop before this
/// folds its own). An error from `sink` stops the reading and is returned.
pub fn fork_steps(
    journal: &dyn JournalBackend,
    id: &str,
    at: u64,
    core: &Config,
    sink: &mut StepSink<'_>,
) -> Result<State, JournalError> {
    let mut fold = Fold::new(core);
    journal.visit_steps(id, &mut |record| {
        if record.seq > at {
            return Ok(false);
        }
        let (seq, at_ms) = (record.seq, record.at_ms);
        let Some(before) = fold.before() else { return Ok(false) };
        let written = fold.push(seq, record.event.clone(), |step| {
            sink(&StepRecord::of(seq, at_ms, record.event, before.phase, before.turn, step))
        });
        written.transpose()?;
        Ok(fold.last_seq() < at)
    })?;
    Ok(fold.into_state())
}

/// Requests the parent had completed in `state`: one in flight is not.
fn requests_done(state: &State) -> u32 {
    let in_flight = u32::from(state.streaming().is_some());
    state.context().requests().saturating_sub(in_flight)
}

/// A provider that numbers requests from a fork point: request `n` reaches the inner provider
/// as `n - offset`. Only the scripted provider answers by number; the others ignore it.
pub struct OffsetProvider {
    inner: Arc<dyn ModelProvider>,
    offset: u32,
}

impl OffsetProvider {
    /// Wraps `inner` for a fork whose parent had completed `offset` requests at the fork point,
    /// so the fork's request `n` reaches it as `n - offset`.
    pub fn new(inner: Arc<dyn ModelProvider>, offset: u32) -> Self {
        OffsetProvider { inner, offset }
    }
}

impl ModelProvider for OffsetProvider {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn in_process(&self) -> bool {
        self.inner.in_process()
    }

    fn stream(&self, mut request: ModelRequest) -> BoxStream<'static, StreamEvent> {
        request.request_number = request.request_number.saturating_sub(self.offset);
        self.inner.stream(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reloop_journal::Journal;

    /// The reference: the parent's steps `1..=at` read whole and recomputed through the core.
    struct Whole {
        steps: Vec<StepRecord>,
        state: State,
        requests_done: u32,
    }

    fn fork_prefix(parent_steps: &[StepRecord], at: u64, core: &Config) -> Whole {
        let mut state = State::new(core.clone());
        let mut steps = Vec::new();
        for r in parent_steps.iter().take_while(|r| r.seq <= at) {
            let (from_phase, turn_before) = (state.phase(), state.context().turn_count());
            let step = reloop_core::transition(state, r.event.clone());
            steps.push(StepRecord::of(r.seq, r.at_ms, r.event.clone(), from_phase, turn_before, &step));
            state = step.state;
        }
        let requests_done = requests_done(&state);
        Whole { steps, state, requests_done }
    }

    #[test]
    fn a_fork_read_from_the_journal_is_the_prefix_of_the_steps_read_whole() {
        let streamed = |journal: &Journal, id: &str, at: u64, core: &Config| {
            let mut steps = Vec::new();
            let state = fork_steps(journal, id, at, core, &mut |s| {
                steps.push(s.clone());
                Ok(())
            })
            .expect("steps");
            (steps, state.digest())
        };
        for (_tmp, journal, id) in crate::test_corpus::journals() {
            let header = journal.header(&id).expect("header");
            let steps = journal.steps(&id).expect("steps");
            let total = steps.len() as u64;
            let core = &header.core_config;
            for at in [1, total / 2, total].into_iter().filter(|&at| at > 0) {
                let whole = fork_prefix(&steps, at, core);
                let point = fork_point_of(&journal, &id, Some(at), core).expect("point");
                assert_eq!(point.at, at);
                assert_eq!(point.state.digest(), whole.state.digest(), "{id} at {at}");
                assert_eq!(point.requests_done, whole.requests_done, "{id} at {at}");
                assert_eq!(streamed(&journal, &id, at, core), (whole.steps, whole.state.digest()), "{id} at {at}");
            }
            let last = fork_point_of(&journal, &id, None, core).expect("to the last step");
            assert_eq!(last.at, total, "{id}");
            for at in [0, total + 1] {
                let refused = fork_point_of(&journal, &id, Some(at), core);
                assert!(
                    matches!(refused, Err(ForkError::OutOfRange { at: a, steps }) if a == at && steps == total),
                    "{id} at {at}: {refused:?}"
                );
            }
        }
    }

    #[test]
    fn a_failing_sink_stops_the_fork_and_its_error_is_returned() {
        let (_tmp, journal, id) = crate::test_corpus::journals().into_iter().next().expect("a session");
        let header = journal.header(&id).expect("header");
        let mut handed = 0;
        let failed = fork_steps(&journal, &id, 3, &header.core_config, &mut |_| {
            handed += 1;
            Err(JournalError::Empty)
        });
        assert!(matches!(failed, Err(JournalError::Empty)), "{failed:?}");
        assert_eq!(handed, 1, "the first failure stops the reading");
    }
}
