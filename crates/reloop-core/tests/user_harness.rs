//! The example of docs/testkit.md, compiled and run: a user's own limits under the harness.

use proptest::prelude::*;
use reloop_core::testkit::{HookOutcome, ModelOutcome, Simulation};
use reloop_core::{Config, ContinueReason};

fn outcome() -> impl Strategy<Value = ModelOutcome> {
    prop_oneof![
        Just(ModelOutcome::Text),
        (0usize..4).prop_map(ModelOutcome::Tools),
        Just(ModelOutcome::MaxTokens),
        Just(ModelOutcome::Overloaded),
        Just(ModelOutcome::MissingToolCall),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn my_limits_always_stop(script in proptest::collection::vec(outcome(), 0..30),
                             hooks in proptest::collection::vec(Just(HookOutcome::Block), 0..20),
                             abort_at in proptest::option::of(0usize..60)) {
        let config = Config::default()
            .with_max_turns(Some(12))
            .with_stop_hook_block_cap(4)
            .with_token_budget(Some(50_000));
        let trace = Simulation::new(config).stop_hooks(hooks).abort_at(abort_at).run(&script);
        prop_assert!(trace.check().is_ok(), "{:?}", trace.check());
        prop_assert!(trace.continues(ContinueReason::StopHookBlocking) <= 4 * 12);
    }
}
