//! Cases per second of `reloop prop`'s engine on one core: worlds of up to 20 model answers
//! under a configuration with Stop and PreToolUse hooks (simulated), checked against every
//! built-in invariant and one CEL property; then a settings file's configuration, whose rules
//! judge every call. Prints figures; asserts nothing about time.
//!
//! `cargo bench -p reloop-prop --bench cases`

use std::time::Instant;

use reloop_core::Config;
use reloop_prop::{run, Property, RunOptions, Setup};

fn main() {
    let mut setup = Setup::new(
        Config::default().with_max_turns(Some(20)).with_max_budget_usd(Some(5.0)).with_stop_hook_block_cap(4),
    );
    setup.stop_hooks = vec!["./tests-pass.sh".into()];
    setup.tools[1].pre_hooks = vec!["./guard.sh".into()];
    setup.max_responses = 20;
    // A settings file's configuration: two Stop hooks, a PreToolUse hook, rules judged on each
    // call through the permission decision a run makes.
    let settings = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/settings.json");
    let config = setup.config.clone();
    let mut from_file =
        Setup::from_settings_file(config, std::path::Path::new(settings), std::path::Path::new(".")).expect("reads");
    from_file.max_responses = 20;
    let turns = || vec![Property::parse("turns", "turns <= 20").expect("parses")];
    for (label, setup, properties) in [
        ("invariants only", &setup, vec![]),
        ("invariants + 1 CEL property", &setup, turns()),
        ("settings file (hooks, rules judged per call) + 1 CEL property", &from_file, turns()),
    ] {
        let cases = 5_000;
        let started = Instant::now();
        let report = run(setup, &properties, &RunOptions { cases, seed: 1 }, &mut |_| {}).expect("evaluates");
        let seconds = started.elapsed().as_secs_f64();
        let turns: u64 = report.coverage.terminal.values().sum();
        println!(
            "{label}: {} cases in {seconds:.2} s = {:.0} cases/s (falsified: {}; {turns} sessions ended)",
            report.cases,
            report.cases as f64 / seconds,
            report.failure.as_ref().map_or("none".to_string(), |f| f.name.clone()),
        );
    }
}
