//! The state machine's dispatcher: `transition(state, event) -> Step`.
//!
//! It only picks the phase; each phase's module (`phase`) matches every event kind
//! exhaustively and decides what it does there: apply it, continue or stop with a reason, or
//! ignore it with a typed [`crate::Ignored`]. `docs/architecture.md` lists the whole table,
//! generated from the code by the `transition_table` test.

use crate::event::Event;
use crate::phase;
use crate::state::{Phase, State};
use crate::step::Step;

/// Applies one event to the state.
pub fn transition(state: State, event: Event) -> Step {
    match state.into_phase() {
        Phase::Idle(ctx) => phase::idle::on(ctx, event),
        Phase::AwaitingModel(ctx, streaming) => phase::awaiting_model::on(ctx, streaming, event),
        Phase::RunningTools(ctx, tools) => phase::running_tools::on(ctx, tools, event),
        Phase::WaitingRetry(ctx) => phase::waiting_retry::on(ctx, event),
        Phase::Compacting(ctx, compaction) => phase::compacting::on(ctx, compaction, event),
        Phase::RunningStopHooks(ctx, stop_reason) => phase::running_stop_hooks::on(ctx, stop_reason, event),
        Phase::Done(ctx, terminal) => phase::done::on(ctx, terminal, event),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::effect::{Command, Effect};
    use crate::event::{StopReason, ToolOutcome};
    use crate::message::{ContentBlock, Usage};
    use crate::reason::Reason;
    use crate::state::Config;
    use crate::step::IgnoreWhy;

    fn started_with(config: Config) -> State {
        transition(State::new(config), Event::user_input(vec![ContentBlock::text("go")])).state
    }

    fn started() -> State {
        started_with(Config::default())
    }

    /// The model's answer to the request in flight.
    fn respond(state: State, blocks: Vec<ContentBlock>, stop: StopReason) -> Step {
        let request = state.context().requests();
        let mut state = state;
        for block in blocks {
            state = transition(state, Event::ModelBlock { index: 0, block, request }).state;
        }
        let done =
            Event::ModelDone { id: None, model: None, stop_reason: Some(stop), usage: Usage::default(), request };
        transition(state, done)
    }

    fn result(state: &State, id: &str) -> Event {
        let mut outcome = ToolOutcome::error(id, "ok");
        outcome.is_error = false;
        outcome.request = state.context().requests();
        Event::ToolDone(outcome)
    }

    fn why(step: &Step) -> Option<&IgnoreWhy> {
        step.ignored.as_ref().map(|i| &i.why)
    }

    #[test]
    fn a_new_prompt_after_the_end_starts_a_new_query() {
        let state = respond(started(), vec![ContentBlock::text("one")], StopReason::EndTurn).state;
        assert!(state.is_done());
        let step = transition(state, Event::user_input(vec![ContentBlock::text("b")]));
        assert_eq!(step.state.phase(), "awaiting_model");
        assert_eq!(step.state.context().turn_count(), 1);
        assert!(matches!(&step.effects[..],
            [Effect::Command(Command::CallModel(c))] if c.message_count == 3 && c.request == 2));
    }

    #[test]
    fn the_malformed_call_retry_is_granted_again_in_a_new_turn() {
        let step = respond(started(), vec![ContentBlock::text("calling")], StopReason::ToolUse);
        assert_eq!(step.reason.as_ref().map(Reason::name), Some("malformed_tool_call_retry"));
        let call = ContentBlock::tool_use("toolu_1", "Read", serde_json::json!({}));
        let step = respond(step.state, vec![call], StopReason::ToolUse);
        let done = result(&step.state, "toolu_1");
        let step = transition(step.state, done);
        assert_eq!(step.reason.as_ref().map(Reason::name), Some("next_turn"));
        let step = respond(step.state, vec![ContentBlock::text("calling again")], StopReason::ToolUse);
        assert_eq!(
            step.reason.as_ref().map(Reason::name),
            Some("malformed_tool_call_retry"),
            "a new turn, a new retry"
        );
    }

    #[test]
    fn a_repeated_tool_use_id_still_gets_a_result_per_call() {
        let call = || ContentBlock::tool_use("call_0", "Read", serde_json::json!({}));
        let step = respond(started(), vec![call(), call()], StopReason::ToolUse);
        let done = result(&step.state, "call_0");
        let step = transition(step.state, done.clone());
        assert_eq!(step.state.phase(), "running_tools");
        let step = transition(step.state, done.clone());
        assert_eq!(step.reason.as_ref().map(Reason::name), Some("next_turn"), "the loop must not hang");
    }

    #[test]
    fn an_empty_response_is_not_kept_in_the_history() {
        let step =
            respond(started_with(Config::default().with_token_budget(Some(10_000))), vec![], StopReason::EndTurn);
        assert_eq!(step.reason.as_ref().map(Reason::name), Some("token_budget_continuation"));
        assert!(step.state.messages().messages().iter().all(|m| !m.content.is_empty()));
    }

    #[test]
    fn a_huge_token_budget_does_not_overflow() {
        let state = started_with(Config::default().with_token_budget(Some(u64::MAX)));
        let step = respond(state, vec![ContentBlock::text("x")], StopReason::EndTurn);
        assert_eq!(step.reason.as_ref().map(Reason::name), Some("token_budget_continuation"));
    }

    #[test]
    fn provider_token_counts_saturate_instead_of_overflowing() {
        let huge = Usage {
            input_tokens: u64::MAX,
            output_tokens: u64::MAX,
            cache_creation_input_tokens: u64::MAX,
            cache_read_input_tokens: u64::MAX,
        };
        let mut state = started_with(Config::default().with_token_budget(Some(1)));
        for _ in 0..2 {
            let request = state.context().requests();
            let done = Event::ModelDone {
                id: None,
                model: None,
                stop_reason: Some(StopReason::EndTurn),
                usage: huge.clone(),
                request,
            };
            let step = transition(
                transition(state, Event::ModelBlock { index: 0, block: ContentBlock::text("x"), request }).state,
                done,
            );
            state = step.state;
            if state.is_done() {
                break;
            }
        }
        assert_eq!(state.context().session.usage.input_tokens, u64::MAX);
        assert_eq!(state.context().query.output_tokens, u64::MAX);
    }

    #[test]
    fn a_new_query_does_not_carry_what_an_earlier_one_dropped() {
        let state =
            transition(started(), Event::QueuedInput { id: "q1".into(), content: vec![ContentBlock::text("later")] })
                .state;
        let state = transition(state, Event::Abort).state;
        assert_eq!(state.context().query.queued.len(), 1, "reported dropped at the end");
        let step = transition(state, Event::user_input(vec![ContentBlock::text("again")]));
        assert!(step.state.context().query.queued.is_empty());
    }

    #[test]
    fn a_block_of_an_earlier_request_is_ignored_not_applied() {
        let state = started();
        let before = state.digest();
        let stale = Event::ModelBlock { index: 0, block: ContentBlock::text("late"), request: 7 };
        let step = transition(state, stale);
        assert_eq!(why(&step), Some(&IgnoreWhy::StaleRequest { expected: 1, got: 7 }));
        assert_eq!(step.state.digest(), before);
        assert!(step.effects.is_empty() && step.reason.is_none());
    }

    #[test]
    fn a_retry_ready_while_awaiting_the_model_is_not_expected() {
        let step = transition(started(), Event::RetryReady { attempt: 1 });
        assert_eq!(why(&step), Some(&IgnoreWhy::NotExpected));
        assert_eq!(step.state.phase(), "awaiting_model");
    }

    #[test]
    fn a_tool_result_with_an_unknown_id_or_twice_is_ignored_with_its_reason() {
        let calls = vec![
            ContentBlock::tool_use("a", "Read", serde_json::json!({})),
            ContentBlock::tool_use("b", "Read", serde_json::json!({})),
        ];
        let step = respond(started(), calls, StopReason::ToolUse);
        let unknown = result(&step.state, "zzz");
        let step = transition(step.state, unknown);
        assert_eq!(why(&step), Some(&IgnoreWhy::UnknownToolCall { tool_use_id: "zzz".into() }));
        let a = result(&step.state, "a");
        let step = transition(step.state, a.clone());
        assert!(step.ignored.is_none());
        let step = transition(step.state, a);
        assert_eq!(why(&step), Some(&IgnoreWhy::AlreadyAnswered { tool_use_id: "a".into() }));
    }

    #[test]
    fn a_retry_ready_of_another_attempt_is_stale() {
        let error = crate::ModelError::new(Some(529), "overloaded_error", "Overloaded");
        let step = transition(started(), Event::ModelFailed { error, request: 1 });
        assert_eq!(step.state.phase(), "waiting_retry");
        let step = transition(step.state, Event::RetryReady { attempt: 5 });
        assert_eq!(why(&step), Some(&IgnoreWhy::StaleAttempt { expected: 1, got: 5 }));
        let step = transition(step.state, Event::RetryReady { attempt: 1 });
        assert_eq!(step.state.phase(), "awaiting_model");
    }

    #[test]
    fn a_journal_from_before_correlation_ids_still_applies_its_events() {
        let state = started_with(Config::default().with_digest_version(1));
        let step = transition(state, Event::ModelBlock { index: 0, block: ContentBlock::text("old"), request: 0 });
        assert!(step.ignored.is_none());
        let fresh = transition(started(), Event::ModelBlock { index: 0, block: ContentBlock::text("new"), request: 0 });
        assert_eq!(why(&fresh), Some(&IgnoreWhy::StaleRequest { expected: 1, got: 0 }));
    }

    #[test]
    fn after_the_end_everything_but_a_prompt_or_a_compaction_is_finished() {
        let state = respond(started(), vec![ContentBlock::text("one")], StopReason::EndTurn).state;
        let step = transition(state, Event::Abort);
        assert_eq!(why(&step), Some(&IgnoreWhy::Finished));
        let aborted = transition(started(), Event::Abort).state;
        let step = transition(aborted, Event::CompactRequested);
        assert_eq!(why(&step), Some(&IgnoreWhy::NothingToCompact), "a prompt alone cannot be compacted");
    }

    #[test]
    fn under_2_1_197_a_single_exchange_is_not_compacted_by_hand() {
        let compact = |config: Config| {
            let state = respond(started_with(config), vec![ContentBlock::text("one")], StopReason::EndTurn).state;
            transition(state, Event::CompactRequested)
        };
        let old = Config { profile: crate::profile::ProfileId::ClaudeCode2_1_197, ..Config::default() };
        let step = compact(old.clone());
        assert_eq!((step.state.phase(), step.ignored.is_none()), ("done", true));
        let skipped = crate::effect::Notice::CompactionSkipped { trigger: "manual".into() };
        assert_eq!(step.effects, vec![Effect::from(skipped)]);
        let mut flags = old.flags.clone();
        flags.flip(crate::Flag::SingleExchangeNotCompacted.number());
        assert_eq!(compact(old.with_flags(flags)).state.phase(), "compacting", "a journal without flag 22");
        let latest = Config { profile: crate::profile::ProfileId::ClaudeCode2_1_332, ..Config::default() };
        assert_eq!(compact(latest).state.phase(), "compacting", "2.1.332 compacts it");
    }
}
