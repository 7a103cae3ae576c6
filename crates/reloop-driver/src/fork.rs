//! Forks: a new session that shares its parent's history up to a step, then goes its own way.
//!
//! The fork's journal starts with the parent's events up to the fork point, recomputed through
//! today's core under the fork's own config (so its transitions are what this engine does with
//! those facts), and its header names the parent and the step. From there it is an ordinary
//! session: [`crate::Session::resume`] asks again for whatever was in flight at the fork point.
//!
//! Request numbers are absolute in the core (a fork at request 3 next sends request 4). A fork
//! given a new cassette wants that cassette's first response to answer the fork's first new
//! request; [`OffsetProvider`] subtracts the requests the parent had completed.

use std::sync::Arc;

use futures::stream::BoxStream;
use reloop_core::{Config, Event, State};
use reloop_journal::{JournalBackend, JournalError, StepRecord};
use reloop_model::{ModelProvider, ModelRequest, StreamEvent};

use crate::journal::Fold;

/// Why a fork cannot be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ForkError {
    #[error("--at {at} is outside the session's steps (1..={steps})")]
    OutOfRange { at: u64, steps: u64 },
    /// The parent's steps could not be read.
    #[error(transparent)]
    Journal(#[from] JournalError),
}

/// The fork's first steps and the state they lead to.
#[derive(Debug)]
#[non_exhaustive]
pub struct ForkPrefix {
    pub steps: Vec<StepRecord>,
    pub state: State,
    /// Model requests the parent had completed (answered or failed) at the fork point.
    pub requests_done: u32,
}

/// Recomputes the parent's steps `1..=at` under `core`: same events, same times, today's
/// transitions.
pub fn fork_prefix(parent_steps: &[StepRecord], at: u64, core: &Config) -> Result<ForkPrefix, ForkError> {
    let total = parent_steps.len() as u64;
    if at == 0 || at > total {
        return Err(ForkError::OutOfRange { at, steps: total });
    }
    let mut prefix = Prefix::new(core);
    for r in parent_steps.iter().take_while(|r| r.seq <= at) {
        prefix.push(r.seq, r.at_ms, r.event.clone());
    }
    Ok(prefix.finish())
}

/// [`fork_prefix`] of session `id` read from `journal` a step at a time, up to step `at` (its
/// last step for `None`): the kept steps are all it holds, where the session read whole was
/// held twice, as the parent's steps and as their recomputed copies. Reading stops at the
/// fork point; a point the session never reaches is read to the end, to say how long it is.
pub fn fork_prefix_of(
    journal: &dyn JournalBackend,
    id: &str,
    at: Option<u64>,
    core: &Config,
) -> Result<ForkPrefix, ForkError> {
    let mut prefix = Prefix::new(core);
    let mut total = 0u64;
    journal.visit_steps(id, &mut |record| {
        total += 1;
        if at.is_none_or(|at| record.seq <= at) {
            prefix.push(record.seq, record.at_ms, record.event);
        }
        Ok(at.is_none_or(|at| at == 0 || prefix.fold.last_seq < at))
    })?;
    let at = at.unwrap_or(prefix.fold.last_seq);
    if at == 0 || at > total {
        return Err(ForkError::OutOfRange { at, steps: total });
    }
    Ok(prefix.finish())
}

/// The parent's steps recomputed one at a time, kept.
struct Prefix {
    fold: Fold,
    steps: Vec<StepRecord>,
}

impl Prefix {
    fn new(core: &Config) -> Self {
        Prefix { fold: Fold::new(core), steps: Vec::new() }
    }

    fn push(&mut self, seq: u64, at_ms: u64, event: Event) {
        let steps = &mut self.steps;
        self.fold.push(seq, event.clone(), |from_phase, turn_before, step| {
            steps.push(StepRecord::of(seq, at_ms, event, from_phase, turn_before, step));
        });
    }

    fn finish(self) -> ForkPrefix {
        let state = self.fold.into_state();
        let in_flight = u32::from(matches!(state, State::AwaitingModel(..)));
        let requests_done = state.context().requests().saturating_sub(in_flight);
        ForkPrefix { steps: self.steps, state, requests_done }
    }
}

/// A provider that numbers requests from a fork point: request `n` reaches the inner provider
/// as `n - offset`. Only the scripted provider answers by number; the others ignore it.
pub struct OffsetProvider {
    inner: Arc<dyn ModelProvider>,
    offset: u32,
}

impl OffsetProvider {
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

    #[test]
    fn a_prefix_read_from_the_journal_is_the_prefix_of_the_steps_read_whole() {
        for (_tmp, journal, id) in crate::test_corpus::journals() {
            let header = journal.header(&id).expect("header");
            let steps = journal.steps(&id).expect("steps");
            let total = steps.len() as u64;
            let core = &header.core_config;
            for at in [1, total / 2, total].into_iter().filter(|&at| at > 0) {
                let whole = fork_prefix(&steps, at, core).expect("whole");
                let streamed = fork_prefix_of(&journal, &id, Some(at), core).expect("streamed");
                assert_eq!(streamed.steps, whole.steps, "{id} at {at}");
                assert_eq!(streamed.state.digest(), whole.state.digest(), "{id} at {at}");
                assert_eq!(streamed.requests_done, whole.requests_done, "{id} at {at}");
            }
            let last = fork_prefix_of(&journal, &id, None, core).expect("to the last step");
            assert_eq!(last.steps, fork_prefix(&steps, total, core).expect("whole").steps, "{id}");
            for at in [0, total + 1] {
                let refused = fork_prefix_of(&journal, &id, Some(at), core);
                assert!(
                    matches!(refused, Err(ForkError::OutOfRange { at: a, steps }) if a == at && steps == total),
                    "{id} at {at}: {refused:?}"
                );
            }
        }
    }
}
