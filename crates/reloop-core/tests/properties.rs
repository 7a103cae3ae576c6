//! What must hold for every run, whatever the model does and whenever the user aborts.
//!
//! `PROPTEST_CASES=20000 cargo test -p reloop-core --test properties --release` runs deeper.

use proptest::prelude::*;
use reloop_core::testkit::{HookOutcome, ModelOutcome, Simulation};
use reloop_core::Config;

mod common;

/// 512 cases in CI; `PROPTEST_CASES=N` for a deeper run.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(512)
}

fn config() -> impl Strategy<Value = Config> {
    (
        proptest::option::of(1u32..8),
        any::<bool>(),
        proptest::option::of(Just("fallback".to_string())),
        proptest::option::of(1_000u64..20_000),
        0u32..4,
        any::<u64>(),
        prop_oneof![Just(200_000u64), Just(40_000u64)],
        any::<bool>(),
    )
        .prop_map(|(max_turns, escalate, fallback, budget, retries, seed, window, auto_compact)| {
            Config::default()
                .with_context_window(window)
                .with_auto_compact(auto_compact)
                .with_model("primary")
                .with_max_turns(max_turns)
                .with_escalate_max_tokens(escalate)
                .with_fallback_model(fallback)
                .with_token_budget(budget)
                .with_max_retries(retries)
                .with_retry_seed(seed)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn every_run_keeps_the_invariants(
        script in proptest::collection::vec(common::model_outcome(), 0..16),
        config in config(),
        abort_at in proptest::option::of(0usize..40),
        reverse in any::<bool>(),
        queue_at in proptest::collection::vec(0usize..30, 0..3),
        hooks in proptest::option::of(proptest::collection::vec(
            prop_oneof![4 => Just(HookOutcome::Pass), 5 => Just(HookOutcome::Block), 1 => Just(HookOutcome::Prevent)],
            0..14,
        )),
    ) {
        let mut sim = Simulation::new(config.clone().with_stop_hook_block_cap(3));
        if let Some(hooks) = hooks {
            sim = sim.stop_hooks(hooks);
        }
        let trace = sim
            .queue_at(queue_at)
            .abort_at(abort_at)
            .reverse_tool_order(reverse)
            .run(&script);
        if let Err(v) = trace.check() {
            prop_assert!(false, "{}\nscript {:?} config {:?} abort_at {:?}", v.0, script, config, abort_at);
        }
    }
}

#[test]
fn a_model_that_always_asks_for_tools_is_stopped_by_max_turns() {
    let script = vec![ModelOutcome::Tools(1); 50];
    let trace = Simulation::new(Config::default().with_max_turns(Some(3))).run(&script);
    trace.check().unwrap();
    // Without retries or recoveries, every request is a new turn: at most max_turns of them.
    assert_eq!(trace.model_requests(), 3);
    assert_eq!(trace.terminal().map(|t| t.as_str()), Some("max_turns"));
}

#[test]
fn stop_hooks_that_always_block_are_overridden_at_the_cap() {
    let script = vec![ModelOutcome::Text; 20];
    let trace = Simulation::new(Config::default().with_stop_hook_block_cap(8))
        .stop_hooks(vec![HookOutcome::Block; 20])
        .run(&script);
    trace.check().unwrap();
    assert_eq!(trace.continues(reloop_core::ContinueReason::StopHookBlocking), 8);
    assert_eq!(trace.model_requests(), 9);
    assert_eq!(trace.terminal().map(|t| t.as_str()), Some("completed"));
}

#[test]
fn the_checker_catches_a_run_that_never_stops() {
    let script = vec![ModelOutcome::Tools(1); 50];
    let mut sim = Simulation::new(Config::default());
    sim.max_steps = 20;
    let trace = sim.run(&script);
    assert!(trace.check().is_err(), "a run cut off by the step bound must be reported");
}
