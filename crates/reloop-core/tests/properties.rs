//! What must hold for every run, whatever the model does and whenever the user aborts.
//!
//! `PROPTEST_CASES=20000 cargo test -p reloop-core --test properties --release` runs deeper.

use proptest::prelude::*;
use reloop_core::testkit::{ModelOutcome, Simulation};
use reloop_core::Config;

fn outcome() -> impl Strategy<Value = ModelOutcome> {
    prop_oneof![
        3 => Just(ModelOutcome::Text),
        6 => (0usize..5).prop_map(ModelOutcome::Tools),
        1 => Just(ModelOutcome::Error),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn every_run_keeps_the_invariants(
        script in proptest::collection::vec(outcome(), 0..12),
        max_turns in proptest::option::of(1u32..8),
        abort_at in proptest::option::of(0usize..40),
        reverse in any::<bool>(),
    ) {
        let trace = Simulation::new(Config::default().with_max_turns(max_turns))
            .abort_at(abort_at)
            .reverse_tool_order(reverse)
            .run(&script);
        if let Err(v) = trace.check() {
            prop_assert!(false, "{}\nscript {:?} max_turns {:?} abort_at {:?}", v.0, script, max_turns, abort_at);
        }
    }
}

#[test]
fn a_model_that_always_asks_for_tools_is_stopped_by_max_turns() {
    let script = vec![ModelOutcome::Tools(1); 50];
    let trace = Simulation::new(Config::default().with_max_turns(Some(3))).run(&script);
    trace.check().unwrap();
    assert_eq!(trace.model_requests(), 3);
    assert_eq!(trace.terminal().map(|t| t.as_str()), Some("max_turns"));
}

#[test]
fn the_checker_catches_a_run_that_never_stops() {
    let script = vec![ModelOutcome::Tools(1); 50];
    let mut sim = Simulation::new(Config::default());
    sim.max_steps = 20;
    let trace = sim.run(&script);
    assert!(trace.check().is_err(), "a run cut off by the step bound must be reported");
}
