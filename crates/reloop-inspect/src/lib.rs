//! # reloop-inspect: what a journal says, read back with no model and no tools
//!
//! The contract: everything here reads a session's journal and runs nothing live.
//! [`replay()`] re-runs a journal through today's core and names the first step where it
//! diverges; `why` explains a step ([`explain`]); [`outputs`] rebuilds the stream a run showed;
//! [`timeline`] gathers the page's facts; [`diff`] compares two sessions; [`fork_point_of`] and
//! [`fork_steps`] say where a fork starts and recompute its first steps; [`rerun`] reads what a
//! recorded session holds (and answers a rerun from it, which the binary runs); [`request_at`]
//! rebuilds the exact request a session sent; [`spend`] says what requests used and cost;
//! [`models`] tells the model a session asked for from the one that answered.
//!
//! Every state it needs comes from the one fold of a session's events, [`reloop_core::Fold`],
//! the one resume uses. It depends on the core, the journal, the model and tool traits and the
//! driver (for that fold and the run's config); nothing that runs a session depends on it.
//!
//! The public surface: replay ([`replay()`], [`Replayer`], [`replay_journal`], [`replay_rows`]
//! and the [`ReplayReport`] they give), forks ([`fork_point_of`], [`fork_steps`],
//! [`OffsetProvider`]), rebuilt requests ([`request_at`], [`RequestFinder`]) at the root, and
//! one module per reading the binary presents ([`diff`], [`explain`], [`outputs`], [`rerun`],
//! [`timeline`]). Helpers shared between those readings stay inside the crate.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod diff;
pub mod explain;
mod fork;
pub mod models;
pub mod outputs;
pub mod replay;
mod replay_stream;
mod request;
pub mod rerun;
pub mod rerun_paths;
pub mod spend;
#[cfg(test)]
mod test_corpus;
pub mod timeline;

pub use fork::{fork_point_of, fork_steps, ForkError, ForkPoint, OffsetProvider};
pub use replay::{replay, replay_with_flips, Divergence, ReplayReport, Replayer};
pub use replay_stream::{replay_journal, replay_rows};
pub use request::{request_at, RebuiltRequest, RequestAt, RequestFinder};

#[cfg(test)]
mod tests {
    use reloop_core::{transition, Config, State};
    use reloop_driver::rebuild;

    #[test]
    fn a_rebuilt_state_is_the_fold_of_the_sessions_steps() {
        for (_tmp, journal, id) in crate::test_corpus::journals() {
            let header = journal.header(&id).expect("header");
            let steps = journal.steps(&id).expect("steps");
            let folded =
                steps.iter().fold(State::new(header.core_config.clone()), |s, r| transition(s, r.event.clone()).state);
            let rebuilt = rebuild(&journal, &id, &header.core_config).expect("rebuilt");
            assert_eq!(rebuilt.state.digest(), folded.digest(), "{id}");
            assert_eq!(rebuilt.steps, steps.len(), "{id}");
            assert_eq!(rebuilt.last_seq, steps.last().map_or(0, |s| s.seq), "{id}");
        }
        let (_tmp, journal, _) = crate::test_corpus::journals().into_iter().next().expect("a session");
        let none = rebuild(&journal, "no-such-session", &Config::default()).expect("nothing to fold");
        assert!(none.state.is_idle() && none.steps == 0 && none.last_seq == 0);
    }
}
