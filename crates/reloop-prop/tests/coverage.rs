//! The strategies draw every outcome kind the testkit knows, and keep doing so: each match
//! below is exhaustive (a new variant does not compile until it is counted here), and every
//! counted kind must be drawn in a few thousand worlds.

use std::collections::BTreeMap;

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;
use reloop_core::testkit::{HookOutcome, ModelOutcome, ToolResult};
use reloop_core::{Config, StopReason};
use reloop_prop::{strategy, Setup, World};

fn model_kind(outcome: &ModelOutcome) -> &'static str {
    match outcome {
        ModelOutcome::Text => "text",
        ModelOutcome::Tools(0) => "tool_use stop without a block",
        ModelOutcome::Tools(_) => "reads",
        ModelOutcome::Error => "500",
        ModelOutcome::Overloaded => "529",
        ModelOutcome::Fatal => "400",
        ModelOutcome::MaxTokens => "max_tokens",
        ModelOutcome::MissingToolCall => "missing tool call",
        ModelOutcome::TextTokens(_) => "text tokens",
        ModelOutcome::Large { tools: 0, .. } => "large text",
        ModelOutcome::Large { .. } => "large calls",
        ModelOutcome::PromptTooLong => "prompt too long",
        ModelOutcome::RateLimited { retry_after_ms: Some(_) } => "429 with retry-after",
        ModelOutcome::RateLimited { retry_after_ms: None } => "429 without retry-after",
        ModelOutcome::StreamCut => "stream cut",
        ModelOutcome::Stopped(stop) => match stop {
            StopReason::StopSequence => "stop_sequence",
            StopReason::PauseTurn => "pause_turn",
            StopReason::Refusal => "refusal",
            StopReason::Other(_) => "an unknown stop reason",
            // Given by the kinds above (text, calls, max_tokens): not drawn as `Stopped`.
            StopReason::EndTurn | StopReason::ToolUse | StopReason::MaxTokens => "stopped otherwise",
        },
        ModelOutcome::Calls { .. } => "calls",
    }
}

const MODEL_KINDS: &[&str] = &[
    "text",
    "tool_use stop without a block",
    "reads",
    "500",
    "529",
    "400",
    "max_tokens",
    "missing tool call",
    "text tokens",
    "large text",
    "large calls",
    "prompt too long",
    "429 with retry-after",
    "429 without retry-after",
    "stream cut",
    "stop_sequence",
    "pause_turn",
    "refusal",
    "an unknown stop reason",
    "calls",
];

fn tool_kind(result: &ToolResult) -> &'static str {
    match result {
        ToolResult::Success => "success",
        ToolResult::Error => "error",
        ToolResult::Large(_) => "large",
        ToolResult::Denied => "denied",
        ToolResult::Invalid => "invalid",
    }
}

fn hook_kind(outcome: &HookOutcome) -> &'static str {
    match outcome {
        HookOutcome::Pass => "pass",
        HookOutcome::Block => "block",
        HookOutcome::Prevent => "prevent",
        HookOutcome::Error => "error",
    }
}

fn hooked() -> Setup {
    let mut setup = Setup::new(Config::default().with_max_turns(Some(10)));
    setup.stop_hooks = vec!["./stop.sh".into()];
    for tool in &mut setup.tools {
        tool.pre_hooks = vec!["./pre.sh".into()];
        tool.post_hooks = vec!["./post.sh".into()];
    }
    setup
}

#[derive(Default)]
struct Counts {
    model: BTreeMap<&'static str, u64>,
    tools: BTreeMap<&'static str, u64>,
    pre: BTreeMap<&'static str, u64>,
    post: BTreeMap<&'static str, u64>,
    stop: BTreeMap<&'static str, u64>,
    queued: u64,
    aborted: u64,
}

fn count(setup: &Setup, n: usize) -> Counts {
    let mut runner = TestRunner::deterministic();
    let strategy = strategy::world(setup);
    let mut c = Counts::default();
    for _ in 0..n {
        let world: World = strategy.new_tree(&mut runner).unwrap().current();
        for outcome in &world.script {
            *c.model.entry(model_kind(outcome)).or_default() += 1;
            if let ModelOutcome::Calls { calls, .. } = outcome {
                for call in calls {
                    *c.tools.entry(tool_kind(&call.result)).or_default() += 1;
                    call.pre_hooks.iter().for_each(|h| *c.pre.entry(hook_kind(h)).or_default() += 1);
                    call.post_hooks.iter().for_each(|h| *c.post.entry(hook_kind(h)).or_default() += 1);
                }
            }
        }
        world.stop_hooks.iter().for_each(|h| *c.stop.entry(hook_kind(h)).or_default() += 1);
        c.queued += u64::from(!world.queue_at.is_empty());
        c.aborted += u64::from(world.abort_at.is_some());
    }
    c
}

fn missing(counted: &BTreeMap<&'static str, u64>, kinds: &[&str]) -> Vec<String> {
    kinds.iter().filter(|k| !counted.contains_key(*k)).map(|k| k.to_string()).collect()
}

#[test]
fn every_outcome_kind_is_drawn() {
    let c = count(&hooked(), 3000);
    assert_eq!(missing(&c.model, MODEL_KINDS), Vec::<String>::new(), "model outcomes never drawn");
    let tools = ["success", "error", "large", "denied", "invalid"];
    assert_eq!(missing(&c.tools, &tools), Vec::<String>::new(), "tool results never drawn");
    let hooks = ["pass", "block", "prevent", "error"];
    for (event, counted) in [("PreToolUse", &c.pre), ("PostToolUse", &c.post), ("Stop", &c.stop)] {
        assert_eq!(missing(counted, &hooks), Vec::<String>::new(), "{event} verdicts never drawn");
    }
    assert!(c.queued > 0 && c.aborted > 0, "queued input {} aborts {}", c.queued, c.aborted);
}

#[test]
fn under_permission_rules_a_denial_is_the_rules_to_give_never_drawn() {
    let setup = hooked()
        .with_rules(reloop_tools::PermissionMode::Default, &[], &[], &[], &[], std::path::Path::new("."))
        .unwrap();
    let c = count(&setup, 1000);
    assert_eq!(c.tools.get("denied"), None);
    assert_eq!(missing(&c.tools, &["success", "error", "large", "invalid"]), Vec::<String>::new());
}
