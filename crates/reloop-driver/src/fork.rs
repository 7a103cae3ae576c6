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
use reloop_core::{transition, Config, State};
use reloop_journal::StepRecord;
use reloop_model::{ModelProvider, ModelRequest, StreamEvent};

/// Why a fork cannot be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ForkError {
    #[error("--at {at} is outside the session's steps (1..={steps})")]
    OutOfRange { at: u64, steps: u64 },
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
    let mut state = State::new(core.clone());
    let mut steps = Vec::with_capacity(at as usize);
    for record in parent_steps.iter().take_while(|r| r.seq <= at) {
        let (from_phase, turn_before) = (state.phase(), state.context().turn_count());
        let step = transition(state, record.event.clone());
        steps.push(StepRecord::of(record.seq, record.at_ms, record.event.clone(), from_phase, turn_before, &step));
        state = step.state;
    }
    let in_flight = u32::from(matches!(state, State::AwaitingModel(..)));
    let requests_done = state.context().requests().saturating_sub(in_flight);
    Ok(ForkPrefix { steps, state, requests_done })
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
