//! A configuration from a settings file is simulated as a run would meet it: each configured
//! hook draws its own verdict and is named in the session by its own command, and each call is
//! judged by the file's permission rules as `reloop run` judges it (an `ask` with nobody to ask
//! refuses with the prompt's text).

use std::collections::BTreeSet;
use std::path::Path;

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;
use reloop_core::hook::HookEventName;
use reloop_core::testkit::{Call, ModelOutcome, ToolResult, Trace};
use reloop_core::{Config, Event, ToolOutcome};
use reloop_prop::{strategy, Setup, World};
use serde_json::json;

fn settings_setup(cwd: &Path) -> Setup {
    let settings = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/settings.json");
    Setup::from_settings_file(Config::default().with_max_turns(Some(6)), Path::new(settings), cwd).unwrap()
}

fn worlds(setup: &Setup, n: usize) -> Vec<World> {
    let mut runner = TestRunner::deterministic();
    let strategy = strategy::world(setup);
    (0..n).map(|_| strategy.new_tree(&mut runner).unwrap().current()).collect()
}

/// One time an event's hooks ran: each hook's command and exit code.
type Round = (HookEventName, Vec<(String, Option<i32>)>);

/// Every time hooks ran in the trace.
fn hook_rounds(trace: &Trace) -> Vec<Round> {
    trace
        .steps
        .iter()
        .filter_map(|s| match &s.event {
            Event::HookDone { hook_event, runs, .. } => {
                Some((*hook_event, runs.iter().map(|r| (r.command.clone(), r.exit_code)).collect()))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn each_configured_hook_draws_its_own_verdict_under_its_own_name() {
    let mut setup = settings_setup(Path::new("."));
    // The rules aside (the next test is about them): headless default mode would refuse every
    // Edit, and its PostToolUse hook would never run.
    setup.permissions = None;
    assert_eq!(setup.stop_hooks, ["./tests-pass.sh", "./lint.sh"]);
    assert_eq!(setup.tool("Bash").unwrap().pre_hooks, ["./guard.sh"]);
    assert_eq!(setup.tool("Edit").unwrap().post_hooks, ["cargo fmt"]);
    assert!(setup.tool("Read").unwrap().pre_hooks.is_empty());
    let mut mixed_stop_rounds = 0;
    let mut names = BTreeSet::new();
    for world in worlds(&setup, 400) {
        for (event, runs) in hook_rounds(&world.simulate(&setup)) {
            let commands: Vec<&str> = runs.iter().map(|(c, _)| c.as_str()).collect();
            match event {
                HookEventName::Stop => assert_eq!(commands, ["./tests-pass.sh", "./lint.sh"]),
                HookEventName::PreToolUse => assert_eq!(commands, ["./guard.sh"]),
                HookEventName::PostToolUse => assert_eq!(commands, ["cargo fmt"]),
                other => panic!("no {other:?} hook is configured"),
            }
            // The two Stop hooks are drawn apart: one blocks while the other passes.
            if event == HookEventName::Stop && runs[0].1 != runs[1].1 {
                mixed_stop_rounds += 1;
            }
            names.extend(commands.iter().map(|c| c.to_string()));
        }
    }
    assert!(mixed_stop_rounds > 0);
    let expected: BTreeSet<String> =
        ["./tests-pass.sh", "./lint.sh", "./guard.sh", "cargo fmt"].iter().map(|s| s.to_string()).collect();
    assert_eq!(names, expected, "no run is named ./check.sh: every name is the settings file's");
}

/// The outcome the simulation gives a single call of `name` with `input` under `setup`.
fn outcome_of(setup: &Setup, name: &str, input: serde_json::Value) -> ToolOutcome {
    let call = Call { name: name.into(), input, result: ToolResult::Success, pre_hooks: vec![], post_hooks: vec![] };
    let world = World {
        script: vec![ModelOutcome::Calls { calls: vec![call], input_tokens: 100 }, ModelOutcome::Text],
        stop_hooks: vec![],
        queue_at: vec![],
        abort_at: None,
    };
    let mut setup = setup.clone();
    setup.stop_hooks.clear();
    setup.tools.iter_mut().for_each(|t| t.pre_hooks.clear());
    let trace = world.simulate(&setup);
    trace
        .steps
        .iter()
        .find_map(|s| match &s.event {
            Event::ToolDone(outcome) => Some(outcome.clone()),
            _ => None,
        })
        .expect("the call is answered")
}

#[test]
fn the_settings_file_s_rules_decide_each_call_on_its_input_as_a_run_does() {
    let cwd = tempfile::tempdir().unwrap();
    let setup = settings_setup(cwd.path());
    // A deny rule on an input: `rm` is refused, as a permission denial.
    let rm = outcome_of(&setup, "Bash", json!({"command": "rm -rf build"}));
    assert!(rm.denied && rm.is_error, "{rm:?}");
    assert_eq!(rm.content.as_text(), "Permission to use Bash has been denied.");
    // An allow rule on an input: `cargo test` runs (the script's result).
    let test = outcome_of(&setup, "Bash", json!({"command": "cargo test --all"}));
    assert!(!test.denied && !test.is_error, "{test:?}");
    // An ask rule on a path, with nobody to ask: refused with the prompt's text.
    let secret = cwd.path().join("secrets/key.txt");
    let asked = outcome_of(&setup, "Read", json!({"file_path": secret}));
    assert!(asked.denied, "{asked:?}");
    assert!(asked.content.as_text().contains("requested permissions"), "{}", asked.content.as_text());
    // A read inside the workspace, no rule naming it: the mode lets it run.
    let read = outcome_of(&setup, "Read", json!({"file_path": cwd.path().join("README.md")}));
    assert!(!read.denied, "{read:?}");
    // Each agrees with the rules' own headless decision.
    let p = setup.permissions.as_ref().unwrap();
    for (tool, input, outcome) in [
        ("Bash", json!({"command": "rm -rf build"}), &rm),
        ("Bash", json!({"command": "cargo test --all"}), &test),
        ("Read", json!({"file_path": secret}), &asked),
    ] {
        let decision = p.context.check(&p.registry, tool, &input);
        assert_eq!(decision.message(), outcome.denied.then(|| outcome.content.as_text()).as_deref(), "{tool} {input}");
    }
}

#[test]
fn a_blocking_pre_tool_use_hook_refuses_as_a_permission_denial_naming_the_hook() {
    let cwd = tempfile::tempdir().unwrap();
    let setup = settings_setup(cwd.path());
    let call = Call {
        name: "Bash".into(),
        input: json!({"command": "cargo test"}),
        result: ToolResult::Success,
        pre_hooks: vec![reloop_core::testkit::HookOutcome::Block],
        post_hooks: vec![],
    };
    let world = World {
        script: vec![ModelOutcome::Calls { calls: vec![call], input_tokens: 100 }, ModelOutcome::Text],
        stop_hooks: vec![],
        queue_at: vec![],
        abort_at: None,
    };
    let trace = world.simulate(&setup);
    let refused = trace
        .steps
        .iter()
        .find_map(|s| match &s.event {
            Event::ToolDone(outcome) => Some(outcome.clone()),
            _ => None,
        })
        .unwrap();
    assert!(refused.denied, "{refused:?}");
    assert_eq!(refused.content.as_text(), "PreToolUse:Bash hook error: [./guard.sh]: tests failing");
}
