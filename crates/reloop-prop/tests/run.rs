//! The runner as a user meets it: a true property holds over many cases, a false one is
//! falsified and shrunk to a few responses, the same seed finds the same counterexample, and a
//! property that does not parse is named with its position.

use reloop_core::Config;
use reloop_prop::{run, Property, PropertyError, RunOptions, Setup};

fn setup(max_turns: u32) -> Setup {
    let mut setup = Setup::new(Config::default().with_max_turns(Some(max_turns)).with_max_budget_usd(Some(5.0)));
    setup.stop_hooks = vec!["./tests-pass.sh".into()];
    setup.tools[1].pre_hooks = vec!["./guard.sh".into()];
    setup
}

#[test]
fn a_true_property_holds_over_thousands_of_cases_and_every_invariant_with_it() {
    let turns = Property::parse("turns_bounded", "turns <= config.max_turns").unwrap();
    let report = run(&setup(5), &[turns], &RunOptions { cases: 3000, seed: 1 }, &mut |_| {}).unwrap();
    assert!(report.failure.is_none(), "{:?}", report.failure);
    assert_eq!(report.cases, 3000);
    assert!(report.verdicts.iter().all(|v| v.holds));
    let c = &report.coverage;
    // The worlds reach the paths the invariants are about.
    assert!(c.retried > 0 && c.recovered > 0 && c.compacted > 0 && c.stop_hook_blocked > 0 && c.denied > 0, "{c:?}");
    assert!(c.terminal.len() >= 5, "{:?}", c.terminal);
}

#[test]
fn max_turns_does_not_bound_requests_and_the_counterexample_is_a_handful_of_responses() {
    let few = Property::parse("few_requests", "requests <= 3").unwrap();
    let report = run(&setup(3), &[few], &RunOptions { cases: 500, seed: 42 }, &mut |_| {}).unwrap();
    let failure = report.failure.expect("requests <= 3 is false under max_turns 3");
    assert_eq!(failure.name, "few_requests");
    assert_eq!(failure.summary.requests, 4, "{failure:?}");
    assert!(failure.world.script.len() <= 5, "{:?}", failure.world.script);
    let again = run(
        &setup(3),
        &[Property::parse("few_requests", "requests <= 3").unwrap()],
        &RunOptions { cases: 500, seed: 42 },
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(again.failure.map(|f| f.world), Some(failure.world));
    assert_eq!(again.cases, report.cases);
}

#[test]
fn a_property_that_does_not_parse_is_named_with_its_position() {
    let err = Property::parse_line("broken: requests <= ").unwrap_err();
    assert!(matches!(&err, PropertyError::Parse { name, line: 1, .. } if name == "broken"), "{err:?}");
    assert!(matches!(Property::parse_line("no colon here"), Err(PropertyError::Shape { .. })));
    let unknown = Property::parse("typo", "reqests <= 3").unwrap();
    let err = run(&setup(3), &[unknown], &RunOptions { cases: 10, seed: 1 }, &mut |_| {}).unwrap_err();
    assert!(matches!(&err, PropertyError::Eval { name, .. } if name == "typo"), "{err}");
}

#[test]
fn a_tiny_context_window_and_a_long_script_still_draw_worlds() {
    let mut tiny = Setup::new(Config::default().with_context_window(1).with_max_turns(Some(3)));
    tiny.max_responses = 200;
    let report = run(&tiny, &[], &RunOptions { cases: 50, seed: 5 }, &mut |_| {}).unwrap();
    assert_eq!(report.cases, 50, "{:?}", report.failure);
}
