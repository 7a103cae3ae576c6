//! The one fold: a session's events stepped through [`crate::transition()`] in order, as the run
//! loop stepped them, to learn what they lead to.
//!
//! Every reader of a journal that needs the state goes through [`Fold`]: resume and the
//! subagents (the driver's `rebuild`), the inspector's replay, caller's stream, forks, rebuilt
//! requests and rerun recordings, and the importer's checks and exports. One fold means one answer
//! to "what state did step N leave": a fix to how events are read back reaches them all. The live
//! run loop steps the core itself: it decides what happens next.

use crate::{transition, Config, Event, State, Step};

/// A session's events folded through the core one at a time: the state is all it holds, never
/// the steps, so a session of any length costs the memory of its state.
pub struct Fold {
    /// Always set between events; taken for the length of one.
    state: Option<State>,
    core: Config,
    last_seq: u64,
}

/// Where a step starts ([`Fold::before`]): what its record names as the phase and turn it came
/// from, and how long the history was (what is new in the step is what follows).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Before {
    /// The phase the step left.
    pub phase: &'static str,
    /// The turn count before the step.
    pub turn: u32,
    /// How many messages the history held before the step.
    pub messages: usize,
}

impl Fold {
    /// A session that has not started, under `core`.
    pub fn new(core: &Config) -> Self {
        Fold { state: Some(State::new(core.clone())), core: core.clone(), last_seq: 0 }
    }

    /// Where the next step starts (`None` only once a transition panicked midway).
    pub fn before(&self) -> Option<Before> {
        let state = self.state.as_ref()?;
        Some(Before { phase: state.phase(), turn: state.context().turn_count(), messages: state.messages().len() })
    }

    /// Steps the core with step `seq`'s event; `seen` is shown the step, and what it returns is
    /// returned. The step is lent, not kept: the fold goes on from its state, moved once, as the
    /// run loop does. `None` only once a transition panicked midway; the fold is then empty.
    /// Inlined, as replay's hot loop calls it at every step.
    #[inline]
    pub fn push<R>(&mut self, seq: u64, event: Event, seen: impl FnOnce(&Step) -> R) -> Option<R> {
        let step = transition(self.state.take()?, event);
        let seen = seen(&step);
        self.last_seq = seq;
        self.state = Some(step.state);
        Some(seen)
    }

    /// The last step folded (0 before any).
    pub fn last_seq(&self) -> u64 {
        self.last_seq
    }

    /// The state the events folded so far led to.
    pub fn state(&self) -> Option<&State> {
        self.state.as_ref()
    }

    /// The state the events led to (a new session's, should a transition have panicked).
    pub fn into_state(self) -> State {
        let core = self.core;
        self.state.unwrap_or_else(|| State::new(core))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ContentBlock;

    #[test]
    fn a_fold_is_the_core_s_transitions_in_order() {
        let events = [
            Event::user_input(vec![ContentBlock::text("hi")]),
            Event::Abort,
            Event::user_input(vec![ContentBlock::text("again")]),
        ];
        let mut fold = Fold::new(&Config::default());
        let mut state = State::new(Config::default());
        for (seq, event) in (1..).zip(events) {
            let (phase, turn, messages) = (state.phase(), state.context().turn_count(), state.messages().len());
            let expected = transition(state, event.clone());
            assert_eq!(fold.before(), Some(Before { phase, turn, messages }));
            let step = fold
                .push(seq, event, |step| (step.state.digest(), step.effects.clone(), step.reason.clone()))
                .expect("a step");
            assert_eq!(step, (expected.state.digest(), expected.effects, expected.reason));
            assert_eq!(fold.state().map(State::digest), Some(expected.state.digest()));
            assert_eq!(fold.last_seq(), seq);
            state = expected.state;
        }
        assert_eq!(fold.into_state().digest(), state.digest());
    }
}
