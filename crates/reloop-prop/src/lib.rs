//! Property tests of a loop configuration: the machinery behind `reloop prop`.
//!
//! A *world* is everything outside the loop that one case decides: what the model answers to
//! each request (text, calls of the offered tools with valid or invalid input, every stop
//! reason, request failures, usage near the context window), what each tool call gives, what
//! each configured hook says, when the user queues a message or aborts. A world is played
//! through the real pure core by [`reloop_core::testkit::Simulation`], so a case costs
//! microseconds; its [`Summary`] is checked against the built-in [`invariants`] and the user's
//! [`Property`]s (CEL expressions). A falsified case is shrunk by proptest to a small
//! counterexample, which [`record`] journals as a session and [`cassette`] writes as a cassette
//! for `reloop run --script`.
//!
//! ```
//! use reloop_prop::{run, Property, RunOptions, Setup};
//! use reloop_core::Config;
//!
//! let setup = Setup::new(Config::default().with_max_turns(Some(3)));
//! let properties = vec![Property::parse("few", "requests <= 3").unwrap()];
//! let report = run(&setup, &properties, &RunOptions { cases: 200, seed: 7 }, &mut |_| {}).unwrap();
//! // Output-token recoveries and retries repeat a turn: `max_turns` does not bound requests.
//! assert!(report.failure.is_some());
//! ```

#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod cassette;
pub mod invariants;
mod play;
mod property;
pub mod record;
mod runner;
mod setup;
pub mod strategy;
mod summary;

pub use property::{Property, PropertyError};
pub use runner::{run, run_with_hooks, Coverage, Failure, Report, RunOptions, Verdict};
pub use setup::{OfferedTool, Permissions, Setup, SetupError};
pub use summary::Summary;

pub use reloop_core::testkit::{Call, HookOutcome, ModelOutcome, ToolResult};
/// The settings file and the permission modes a [`Setup`] is built from, so a test needs no
/// other reloop crate to name them.
pub use reloop_hooks::Settings;
pub use reloop_tools::PermissionMode;

/// The prompt every simulated session starts from (and a counterexample's cassette is run on).
pub const PROMPT: &str = "go";

/// Runs a configuration's real hooks for a case, instead of drawing their verdicts. The caller
/// decides where and how they run (`reloop prop --hooks run`: in a scratch workspace).
pub trait HookRunner {
    /// The runs of the hooks of `event` (for `call`, a tool hook), or `None` to draw the verdict.
    fn runs(
        &self,
        event: reloop_core::hook::HookEventName,
        call: Option<&reloop_core::ToolUse>,
    ) -> Option<Vec<reloop_core::hook::HookRun>>;
}

/// Every hook's verdict drawn: no command runs.
pub struct Simulated;

impl HookRunner for Simulated {
    fn runs(
        &self,
        _: reloop_core::hook::HookEventName,
        _: Option<&reloop_core::ToolUse>,
    ) -> Option<Vec<reloop_core::hook::HookRun>> {
        None
    }
}

/// One generated case: the outside facts a session meets.
#[derive(Debug, Clone, PartialEq)]
pub struct World {
    /// The model's answer to each request, in request order (summary requests included).
    pub script: Vec<ModelOutcome>,
    /// The Stop hooks' verdicts, one per configured Stop hook per time they run, in order
    /// (`Pass` once they run out).
    pub stop_hooks: Vec<HookOutcome>,
    /// The user queues a message before the events with these indices.
    pub queue_at: Vec<usize>,
    /// The user aborts before the event with this index.
    pub abort_at: Option<usize>,
}

impl World {
    /// Plays the world through the core under `setup`.
    pub fn simulate(&self, setup: &Setup) -> reloop_core::testkit::Trace {
        self.simulate_with(setup, &Simulated)
    }

    /// As [`World::simulate`], the hooks' runs asked of `hooks` first.
    pub fn simulate_with(&self, setup: &Setup, hooks: &dyn HookRunner) -> reloop_core::testkit::Trace {
        self.play(setup, hooks).trace
    }

    /// As [`World::simulate_with`], also telling which calls ran.
    pub fn play(&self, setup: &Setup, hooks: &dyn HookRunner) -> Played {
        let mut sim = reloop_core::testkit::Simulation::new(setup.config.clone())
            .abort_at(self.abort_at)
            .queue_at(self.queue_at.clone());
        if !setup.stop_hooks.is_empty() {
            sim = sim.stop_hooks(self.stop_hooks.clone());
        }
        sim.max_steps = setup.step_bound(self.script.len());
        let mut play = play::Play { setup, hooks, stop: &self.stop_hooks, stop_runs: 0, ran: Vec::new() };
        let trace = sim.run_with(&self.script, &mut play);
        Played { trace, ran: play.ran }
    }
}

/// A world played under a setup.
#[derive(Debug)]
pub struct Played {
    /// What the session did.
    pub trace: reloop_core::testkit::Trace,
    /// The `tool_use` ids of the calls that ran (neither hooks nor rules refused them), in
    /// the order they were decided.
    pub ran: Vec<String>,
}
