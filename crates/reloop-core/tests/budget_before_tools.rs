//! The budget stop under a Claude Code profile (flag 11): the response whose cost reached
//! `--max-budget-usd` ends the run before its tool calls run, as both recorded versions do
//! (`tests/recorded_sdk/*/budget/max_budget_usd`); a later prompt answers the calls it left.

use reloop_core::profile::ProfileId;
use reloop_core::{
    transition, Command, Config, ContentBlock, Effect, Event, Flag, Flags, Price, State, StopReason, ToolUse, Usage,
    UNRUN_TOOL_RESULT,
};

fn config(profile: ProfileId, flags: Flags) -> Config {
    let price = Price { model: "m".into(), input: 3.0, output: 15.0, cache_write: 0.0, cache_read: 0.0 };
    Config::default()
        .with_model("m")
        .with_prices(vec![price])
        .with_max_budget_usd(Some(0.001))
        .with_profile(profile)
        .with_flags(flags)
}

/// Feeds a prompt and one response asking for a Read that costs past the budget; returns the
/// state and whether the last step asked for the tools to run.
fn over_budget(config: Config) -> (State, bool) {
    let call = ToolUse {
        id: "t1".into(),
        name: "Read".into(),
        input: serde_json::json!({"file_path": "a"}),
        extra: Default::default(),
    };
    let usage = Usage { input_tokens: 1_000, output_tokens: 20, ..Usage::default() };
    let events = [
        Event::user_input(vec![ContentBlock::text("go")]),
        Event::ModelBlock { index: 0, block: ContentBlock::ToolUse(call.into()), request: 1 },
        Event::ModelDone { id: None, model: None, stop_reason: Some(StopReason::ToolUse), usage, request: 1 },
    ];
    let mut state = State::new(config);
    let mut runs_tools = false;
    for event in events {
        let step = transition(state, event);
        runs_tools = step.effects.iter().any(|e| matches!(e, Effect::Command(Command::RunTools { .. })));
        state = step.state;
    }
    (state, runs_tools)
}

#[test]
fn under_claude_code_the_calls_of_the_response_that_reached_the_budget_never_run() {
    for profile in [ProfileId::ClaudeCode2_1_197, ProfileId::ClaudeCode2_1_332] {
        let (state, runs_tools) = over_budget(config(profile, Flags::current()));
        assert!(!runs_tools, "{profile:?}");
        assert_eq!(
            state.terminal().map(|t| matches!(t.stop, reloop_core::Stop::MaxBudgetUsd { .. })),
            Some(true),
            "{profile:?}"
        );
        // The response is kept, its call unanswered, as Claude Code's transcript ends.
        assert_eq!(state.messages().len(), 2);
    }
}

#[test]
fn with_the_flag_off_or_under_reloop_s_profile_the_calls_run_first() {
    let mut off = Flags::current();
    off.flip(Flag::BudgetBeforeTools.number());
    let (state, runs_tools) = over_budget(config(ProfileId::ClaudeCode2_1_332, off));
    assert!(runs_tools && !state.is_done());
    let (state, runs_tools) = over_budget(config(ProfileId::Reloop, Flags::current()));
    assert!(runs_tools && !state.is_done());
}

#[test]
fn a_later_prompt_answers_the_unrun_calls_before_its_text_and_stops_at_the_budget_again() {
    let (state, _) = over_budget(config(ProfileId::ClaudeCode2_1_332, Flags::current()));
    let step = transition(state, Event::user_input(vec![ContentBlock::text("more")]));
    let messages = step.state.messages().messages();
    let last = messages.last().unwrap();
    let json = serde_json::to_value(&last.content).unwrap();
    assert_eq!(json[0]["type"], "tool_result");
    assert_eq!(json[0]["tool_use_id"], "t1");
    assert_eq!(json[0]["content"], UNRUN_TOOL_RESULT);
    assert_eq!(json[1]["text"], "more");
    assert_eq!(step.state.terminal().map(|t| matches!(t.stop, reloop_core::Stop::MaxBudgetUsd { .. })), Some(true));
}

#[test]
fn an_answer_that_reached_the_budget_ends_the_run_at_the_budget_once_shown() {
    let answer = |config: Config| {
        let usage = Usage { input_tokens: 1_000, output_tokens: 20, ..Usage::default() };
        let events = [
            Event::user_input(vec![ContentBlock::text("go")]),
            Event::ModelBlock { index: 0, block: ContentBlock::text("done"), request: 1 },
            Event::ModelDone { id: None, model: None, stop_reason: Some(StopReason::EndTurn), usage, request: 1 },
        ];
        events.into_iter().fold(State::new(config), |state, event| transition(state, event).state)
    };
    let state = answer(config(ProfileId::ClaudeCode2_1_332, Flags::current()));
    assert!(matches!(state.terminal().map(|t| &t.stop), Some(reloop_core::Stop::MaxBudgetUsd { .. })));
    // The answer is in the history, as shown.
    assert_eq!(state.messages().len(), 2);
    let mut off = Flags::current();
    off.flip(Flag::BudgetBeforeTools.number());
    let state = answer(config(ProfileId::ClaudeCode2_1_332, off));
    assert!(matches!(state.terminal().map(|t| &t.stop), Some(reloop_core::Stop::Completed(_))));
}
