//! The example of docs/testkit.md, as a user outside the repository writes it: it must compile
//! and pass as shown.

use std::path::Path;
use std::sync::LazyLock;

use proptest::prelude::*;
use reloop_core::Config;
use reloop_prop::{invariants, strategy, Setup, Summary};

// The settings file the agent runs with: its hooks and permission rules are the configuration.
static SETUP: LazyLock<Setup> = LazyLock::new(|| {
    let config = Config::default().with_max_turns(Some(8)).with_stop_hook_block_cap(3);
    let settings = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/settings.json");
    Setup::from_settings_file(config, Path::new(settings), Path::new(".")).expect("the settings file reads")
});

proptest! {
    #[test]
    fn my_configuration_keeps_every_invariant(world in strategy::world(&SETUP)) {
        let trace = world.simulate(&SETUP);
        prop_assert!(invariants::check(&trace).is_ok(), "{:?}", invariants::check(&trace));
        let summary = Summary::of(&trace);
        prop_assert!(summary.turns <= 8);
    }
}
