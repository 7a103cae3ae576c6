//! Sessions the testkit's own driver plays (`reloop_core::testkit::Simulation`, as
//! `tests/properties.rs` runs it) under scripts drawn at random from a fixed seed: the table's
//! paths must take every edge these sessions take, so a combination no path plays (a Stop-hook
//! block that meets the auto-compact threshold, a budget continuation at the blocking limit
//! ...) is found here rather than left out of the table.

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use reloop_core::testkit::{HookOutcome, ModelOutcome, Simulation};
use reloop_core::Config;

use crate::session::{Edge, Outcome};

/// How many sessions are simulated.
const RUNS: usize = 4096;

fn config() -> impl Strategy<Value = Config> {
    (
        proptest::option::of(1u32..8),
        any::<bool>(),
        proptest::option::of(Just("fallback".to_string())),
        proptest::option::of(1_000u64..20_000),
        0u32..4,
        prop_oneof![Just(200_000u64), Just(40_000u64)],
        any::<bool>(),
    )
        .prop_map(|(max_turns, escalate, fallback, budget, retries, window, auto_compact)| {
            Config::default()
                .with_context_window(window)
                .with_auto_compact(auto_compact)
                .with_model("primary")
                .with_max_turns(max_turns)
                .with_escalate_max_tokens(escalate)
                .with_fallback_model(fallback)
                .with_token_budget(budget)
                .with_max_retries(retries)
                .with_stop_hook_block_cap(3)
        })
}

fn simulation() -> impl Strategy<Value = (Simulation, Vec<ModelOutcome>)> {
    let verdict =
        prop_oneof![4 => Just(HookOutcome::Pass), 5 => Just(HookOutcome::Block), 1 => Just(HookOutcome::Prevent)];
    (
        config(),
        proptest::collection::vec(crate::common::model_outcome(), 0..16),
        proptest::option::of(0usize..40),
        any::<bool>(),
        proptest::collection::vec(0usize..30, 0..3),
        proptest::option::of(proptest::collection::vec(verdict, 0..14)),
    )
        .prop_map(|(config, script, abort_at, reverse, queue_at, hooks)| {
            let mut sim = Simulation::new(config);
            if let Some(hooks) = hooks {
                sim = sim.stop_hooks(hooks);
            }
            (sim.queue_at(queue_at).abort_at(abort_at).reverse_tool_order(reverse), script)
        })
}

/// Every step of every simulated session, as an edge.
pub fn edges() -> Vec<Edge> {
    let mut runner = TestRunner::deterministic();
    let strategy = simulation();
    let mut edges = Vec::new();
    for _ in 0..RUNS {
        let (sim, script) = strategy.new_tree(&mut runner).expect("a simulation").current();
        let mut from = "idle";
        for step in &sim.run(&script).steps {
            edges.push(Edge { from, kind: step.event.kind(), outcome: Outcome::of_trace(step) });
            from = step.phase;
        }
    }
    edges
}
