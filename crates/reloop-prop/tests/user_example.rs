//! The example of docs/testkit.md, as a user outside the repository writes it: it must compile
//! and pass as shown.

use proptest::prelude::*;
use reloop_core::Config;
use reloop_prop::{invariants, strategy, Setup, Summary};

fn setup() -> Setup {
    let mut setup = Setup::new(Config::default().with_max_turns(Some(8)).with_stop_hook_block_cap(3));
    setup.stop_hooks = true; // each end of a turn draws the Stop hooks' verdict
    setup.tools[1].pre_hooks = true; // each Bash call draws a PreToolUse verdict
    setup
}

proptest! {
    #[test]
    fn my_configuration_keeps_every_invariant(world in strategy::world(&setup())) {
        let trace = world.simulate(&setup());
        prop_assert!(invariants::check(&trace).is_ok(), "{:?}", invariants::check(&trace));
        let summary = Summary::of(&trace);
        prop_assert!(summary.turns <= 8);
    }
}
