//! The state machine: `transition(state, event) -> Step`.
//!
//! Each arm consumes the state it was given and returns the next one. An event that does not
//! belong to the current phase (a tool result after an abort, an abort after the end) is a race
//! the driver cannot always avoid; it leaves the state unchanged and asks for nothing.

use crate::compact::Compaction;
use crate::effect::{Effect, ModelCall};
use crate::event::{Event, ToolOutcome};
use crate::hook::HookEventName;
use crate::message::{ContentBlock, Message, ToolResult, ToolResultContent};
use crate::reason::{ContinueReason, Evidence, Reason, TerminalReason, ToolRef};
use crate::state::{Loop, PermissionDenial, State, Streaming, Terminal, Tools};
use crate::{hook_flow, response, retry};

/// Text of the `tool_result` given to every unanswered tool call when the user aborts.
pub const INTERRUPTED_TOOL_RESULT: &str = "Interrupted by user";
/// User text appended when the user aborts while the model streams.
pub const INTERRUPT_MESSAGE: &str = "[Request interrupted by user]";
/// User text appended when the user aborts while tools run.
pub const INTERRUPT_MESSAGE_FOR_TOOL_USE: &str = "[Request interrupted by user for tool use]";

/// The outcome of one transition.
#[derive(Debug)]
pub struct Step {
    pub state: State,
    /// What the driver must do now, in order.
    pub effects: Vec<Effect>,
    /// Set when this step continues the loop into a new request or stops it.
    pub reason: Option<Reason>,
}

impl Step {
    fn stay(state: State) -> Self {
        Step { state, effects: Vec::new(), reason: None }
    }
}

/// Applies one event to the state.
pub fn transition(state: State, event: Event) -> Step {
    match (state, event) {
        (State::Idle(mut ctx), Event::UserInput { content }) => {
            ctx.messages.push(Message::user(content));
            start_query(ctx)
        }
        (State::Idle(ctx), Event::Abort) => abort(ctx, Vec::new(), TerminalReason::AbortedStreaming),
        // A new prompt after the loop stopped starts a new query on the same conversation, as a
        // second `query()` call does in Claude Code: turns count from 1 again.
        (State::Done(mut ctx, _), Event::UserInput { content }) => {
            ctx.messages.push(Message::user(content));
            start_query(ctx)
        }

        (State::AwaitingModel(ctx, mut streaming), Event::TextDelta { .. }) => {
            streaming.streamed = true;
            Step::stay(State::AwaitingModel(ctx, streaming))
        }
        (State::AwaitingModel(ctx, mut streaming), Event::ModelBlock { block, .. }) => {
            streaming.blocks.push(block);
            streaming.streamed = true;
            Step::stay(State::AwaitingModel(ctx, streaming))
        }
        (State::AwaitingModel(ctx, streaming), Event::ModelDone { id, model, stop_reason, usage }) => {
            response::model_done(ctx, streaming, response::Meta { id, model, stop_reason, usage })
        }
        (State::AwaitingModel(ctx, streaming), Event::ModelFailed { error }) => {
            retry::model_failed(ctx, streaming, error)
        }
        (State::AwaitingModel(mut ctx, streaming), Event::Abort) => {
            let mut answered = Vec::new();
            if !streaming.blocks.is_empty() {
                let assistant = Message::assistant(streaming.blocks);
                answered = assistant.tool_uses().map(|t| t.id.clone()).collect();
                ctx.messages.push(assistant);
            }
            let mut step = abort(ctx, answered, TerminalReason::AbortedStreaming);
            step.effects.insert(0, Effect::CancelModel);
            step
        }

        (State::WaitingRetry(ctx), Event::RetryReady | Event::Resumed) => call_model(ctx, Vec::new(), None),

        // Manual compaction of a stopped conversation; one with nothing to summarise stays as it is.
        (State::Done(ctx, terminal), Event::CompactRequested) => match crate::compact::summarizable(&ctx.messages) {
            Some(summarize) => {
                let pre_tokens = crate::tokens::estimate(&ctx);
                crate::compact::start(ctx, crate::compact::Trigger::Manual, pre_tokens, summarize, Vec::new(), None)
            }
            None => Step::stay(State::Done(ctx, terminal)),
        },
        (State::Compacting(ctx, compaction), Event::CompactDone { summary, usage }) => {
            crate::compact::done_with(ctx, compaction, &summary, &usage)
        }
        (State::Compacting(ctx, compaction), Event::CompactFailed { error }) => {
            crate::compact::failed(ctx, compaction, error)
        }
        (State::Compacting(mut ctx, compaction), Event::Resumed) => {
            // The summary request in flight is sent again under the same number.
            ctx.requests = ctx.requests.saturating_sub(1);
            let Compaction { trigger, pre_tokens, summarize } = compaction;
            crate::compact::start(ctx, trigger, pre_tokens, summarize, Vec::new(), None)
        }
        (State::Compacting(ctx, _), Event::Abort) => {
            let mut step = abort(ctx, Vec::new(), TerminalReason::AbortedStreaming);
            step.effects.insert(0, Effect::CancelModel);
            step
        }
        // The request in flight when the process stopped is sent again, under the same number,
        // so a scripted provider answers it with the same response.
        (State::AwaitingModel(mut ctx, streaming), Event::Resumed) => {
            let effects = if streaming.streamed { vec![Effect::Withdraw] } else { Vec::new() };
            ctx.requests = ctx.requests.saturating_sub(1);
            call_model(ctx, effects, None)
        }
        (State::RunningTools(ctx, tools), Event::Resumed) => {
            let pending: Vec<_> =
                tools.calls.iter().zip(&tools.outcomes).filter(|(_, o)| o.is_none()).map(|(c, _)| c.clone()).collect();
            let started = pending.iter().filter(|c| tools.started.contains(&c.id)).map(|c| c.id.clone()).collect();
            let effects = vec![Effect::ResumeTools { calls: pending, started }];
            Step { state: State::RunningTools(ctx, tools), effects, reason: None }
        }
        (State::RunningTools(ctx, mut tools), Event::ToolStarted { tool_use_id }) => {
            if tools.calls.iter().any(|c| c.id == tool_use_id) && !tools.started.contains(&tool_use_id) {
                tools.started.push(tool_use_id);
            }
            Step::stay(State::RunningTools(ctx, tools))
        }
        (State::WaitingRetry(ctx), Event::Abort) => {
            let mut step = abort(ctx, Vec::new(), TerminalReason::AbortedStreaming);
            step.effects.insert(0, Effect::CancelModel);
            step
        }

        (State::RunningTools(mut ctx, mut tools), Event::ToolDone(outcome)) => {
            // The first unanswered call with that id: a response may repeat an id, and each of its
            // calls still needs its own result or the loop would wait forever.
            let slot =
                tools.calls.iter().zip(&tools.outcomes).position(|(c, o)| c.id == outcome.tool_use_id && o.is_none());
            match slot {
                Some(i) => {
                    if outcome.denied {
                        let call = &tools.calls[i];
                        ctx.permission_denials.push(PermissionDenial {
                            tool_name: call.name.clone(),
                            tool_use_id: call.id.clone(),
                            tool_input: call.input.clone(),
                        });
                    }
                    tools.outcomes[i] = Some(outcome)
                }
                // Unknown or duplicate results are races or driver bugs; the first answer stands.
                _ => return Step::stay(State::RunningTools(ctx, tools)),
            }
            if tools.is_complete() {
                tools_done(ctx, tools)
            } else {
                Step::stay(State::RunningTools(ctx, tools))
            }
        }
        (State::RunningTools(ctx, tools), Event::Abort) => abort_tools(ctx, tools),
        (State::RunningTools(ctx, tools), Event::HookDone { hook_event, tool_use_id, runs }) => {
            hook_flow::tool_hooks_done(ctx, tools, hook_event, tool_use_id.as_deref(), &runs)
        }

        (State::RunningStopHooks(ctx, stop_reason), Event::HookDone { hook_event: HookEventName::Stop, runs, .. }) => {
            hook_flow::stop_hooks_done(ctx, stop_reason, &runs)
        }
        (State::RunningStopHooks(ctx, _), Event::Abort) => {
            let mut step = abort(ctx, Vec::new(), TerminalReason::AbortedStreaming);
            step.effects.insert(0, Effect::CancelHooks);
            step
        }
        // Hooks in flight when the process stopped run again.
        (State::RunningStopHooks(ctx, stop_reason), Event::Resumed) => {
            let last_assistant_message = ctx.messages.last().map(Message::text).unwrap_or_default();
            let effects = vec![Effect::RunStopHooks { stop_hook_active: ctx.stop_hook_active, last_assistant_message }];
            Step { state: State::RunningStopHooks(ctx, stop_reason), effects, reason: None }
        }

        // A queued message waits for the next turn boundary; after the end it is not carried.
        (state, Event::QueuedInput { id, content }) if !state.is_done() => {
            let mut state = state;
            state.context_mut().queued.push(crate::state::QueuedMessage { id, content });
            Step::stay(state)
        }

        (state, _) => Step::stay(state),
    }
}

/// A new query: the prompt is in the history; per-query guards start afresh.
fn start_query(mut ctx: Loop) -> Step {
    ctx.turn_count = 1;
    ctx.transition = None;
    ctx.max_output_tokens_recovery_count = 0;
    ctx.max_output_tokens_override = None;
    ctx.has_attempted_reactive_compact = false;
    ctx.stop_hook_active = false;
    ctx.malformed_tool_call_retried = false;
    ctx.query_output_tokens = 0;
    ctx.budget_continuations = 0;
    ctx.budget_last_deltas = [0, 0];
    ctx.budget_checked_at = 0;
    ctx.stop_hook_blocks = 0;
    // What an earlier query queued was carried or reported dropped when it ended.
    ctx.queued.clear();
    ctx.consumed_inputs.clear();
    call_model(ctx, Vec::new(), None)
}

pub(crate) fn call_model(mut ctx: Loop, effects_before: Vec<Effect>, reason: Option<Reason>) -> Step {
    if let Some(budget_usd) = ctx.config.max_budget_usd.filter(|b| ctx.cost_usd >= *b) {
        let terminal = Terminal {
            reason: TerminalReason::MaxBudgetUsd,
            evidence: Evidence::BudgetReached { cost_usd: ctx.cost_usd, budget_usd },
            error: Some(format!("Reached maximum budget (${budget_usd})")),
        };
        if let Some(Reason::Continue { reason: ContinueReason::NextTurn, .. }) = reason {
            ctx.turn_count -= 1;
        }
        return done(ctx, terminal, effects_before);
    }
    // Before any request: compact when it would reach the threshold; refuse when it would reach
    // the blocking limit and nothing can compact.
    let just_compacted = std::mem::take(&mut ctx.just_compacted);
    let estimate = crate::tokens::estimate(&ctx);
    let limits = crate::tokens::Limits::of(&ctx.config);
    if estimate >= limits.auto_compact_threshold
        && ctx.config.auto_compact
        && !just_compacted
        && ctx.compact_failures < crate::compact::MAX_CONSECUTIVE_FAILURES
    {
        if let Some(summarize) = crate::compact::summarizable(&ctx.messages) {
            return crate::compact::start(
                ctx,
                crate::compact::Trigger::Auto,
                estimate,
                summarize,
                effects_before,
                reason,
            );
        }
    }
    if estimate >= limits.blocking_limit {
        // The turn a next_turn continue was about to start never begins.
        if let Some(Reason::Continue { reason: ContinueReason::NextTurn, .. }) = reason {
            ctx.turn_count -= 1;
        }
        let terminal = Terminal {
            reason: TerminalReason::BlockingLimit,
            evidence: Evidence::TooLong { estimate, limit: limits.blocking_limit },
            error: Some(crate::compact::PROMPT_TOO_LONG.to_string()),
        };
        return done(ctx, terminal, effects_before);
    }
    ctx.requests += 1;
    let call = ModelCall {
        turn: ctx.turn_count,
        request: ctx.requests,
        message_count: ctx.messages.len(),
        model: ctx.current_model().to_string(),
        max_tokens: ctx.max_tokens(),
    };
    let mut effects = effects_before;
    effects.push(Effect::CallModel(call));
    Step { state: State::AwaitingModel(ctx, Streaming::default()), effects, reason }
}

/// A continue: sets the iteration's reason and asks the model again.
pub(crate) fn continue_with(
    mut ctx: Loop,
    reason: ContinueReason,
    evidence: Evidence,
    effects_before: Vec<Effect>,
) -> Step {
    ctx.transition = Some(reason);
    if reason != ContinueReason::MaxOutputTokensEscalate {
        ctx.max_output_tokens_override = None;
    }
    if matches!(
        reason,
        ContinueReason::NextTurn | ContinueReason::StopHookBlocking | ContinueReason::TokenBudgetContinuation
    ) {
        ctx.max_output_tokens_recovery_count = 0;
    }
    call_model(ctx, effects_before, Some(Reason::Continue { reason, evidence }))
}

fn tools_done(mut ctx: Loop, tools: Tools) -> Step {
    let requested: Vec<ToolRef> =
        tools.calls.iter().map(|c| ToolRef { name: c.name.clone(), id: c.id.clone() }).collect();
    let mut content: Vec<ContentBlock> = tools.outcomes.into_iter().flatten().map(result_block).collect();
    let mut feedback = tools.feedback;
    feedback.sort_by_key(|(index, _)| *index);
    content.extend(feedback.into_iter().map(|(_, text)| ContentBlock::text(text)));
    // Messages the user queued while the tools ran join the results, before the next request.
    let mut effects = Vec::new();
    if let Some((queued, consumed)) = ctx.take_queued() {
        content.extend(queued);
        effects.push(consumed);
    }
    ctx.messages.push(Message::user(content));
    if let Some(evidence) = tools.stopped_by {
        let terminal = Terminal { reason: TerminalReason::HookStopped, evidence, error: None };
        return done(ctx, terminal, effects);
    }

    let next = ctx.turn_count + 1;
    if let Some(max_turns) = ctx.config.max_turns {
        if next > max_turns {
            let terminal = Terminal {
                reason: TerminalReason::MaxTurns,
                evidence: Evidence::MaxTurns { max_turns, turn_count: next },
                error: None,
            };
            return done(ctx, terminal, effects);
        }
    }
    ctx.turn_count = next;
    ctx.has_attempted_reactive_compact = false;
    ctx.stop_hook_active = false;
    ctx.malformed_tool_call_retried = false;
    continue_with(ctx, ContinueReason::NextTurn, Evidence::ToolsRequested { tools: requested }, effects)
}

pub(crate) fn result_block(outcome: ToolOutcome) -> ContentBlock {
    ContentBlock::ToolResult(ToolResult {
        tool_use_id: outcome.tool_use_id,
        content: outcome.content,
        is_error: outcome.is_error,
        extra: Default::default(),
    })
}

fn interrupted(id: &str) -> ToolOutcome {
    ToolOutcome {
        tool_use_id: id.to_string(),
        content: ToolResultContent::Text(INTERRUPTED_TOOL_RESULT.to_string()),
        is_error: true,
        denied: false,
    }
}

/// Ends the run on an abort while the model streamed. `unanswered` are the tool calls of the
/// partial assistant message, each of which gets an "Interrupted by user" result.
fn abort(mut ctx: Loop, ids: Vec<String>, reason: TerminalReason) -> Step {
    let content: Vec<ContentBlock> = ids.iter().map(|id| result_block(interrupted(id))).collect();
    push_interrupt(&mut ctx, content, INTERRUPT_MESSAGE);
    let terminal = Terminal { reason, evidence: Evidence::Interrupted { tool_use_ids: ids }, error: None };
    done(ctx, terminal, Vec::new())
}

fn abort_tools(mut ctx: Loop, tools: Tools) -> Step {
    let mut interrupted_ids = Vec::new();
    let mut content = Vec::with_capacity(tools.calls.len() + 1);
    for (call, outcome) in tools.calls.iter().zip(tools.outcomes) {
        let outcome = outcome.unwrap_or_else(|| {
            interrupted_ids.push(call.id.clone());
            interrupted(&call.id)
        });
        content.push(result_block(outcome));
    }
    push_interrupt(&mut ctx, content, INTERRUPT_MESSAGE_FOR_TOOL_USE);
    let terminal = Terminal {
        reason: TerminalReason::AbortedTools,
        evidence: Evidence::Interrupted { tool_use_ids: interrupted_ids },
        error: None,
    };
    done(ctx, terminal, vec![Effect::CancelTools])
}

/// Files the interrupted calls' results and the interrupt text: one user message, as Claude
/// Code sends it, or — without behaviour flag 1 — the results and then the text on its own.
fn push_interrupt(ctx: &mut Loop, mut results: Vec<ContentBlock>, text: &str) {
    if results.is_empty() || ctx.config.flag(crate::flags::INTERRUPT_IN_RESULTS_MESSAGE) {
        results.push(ContentBlock::text(text));
        ctx.messages.push(Message::user(results));
    } else {
        ctx.messages.push(Message::user(results));
        ctx.messages.push(Message::user_text(text));
    }
}

pub(crate) fn done(ctx: Loop, terminal: Terminal, effects: Vec<Effect>) -> Step {
    let reason = Reason::Terminal { reason: terminal.reason, evidence: terminal.evidence.clone() };
    Step { state: State::Done(ctx, terminal), effects, reason: Some(reason) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::StopReason;
    use crate::message::Usage;
    use crate::state::Config;

    fn text_response(state: State, text: &str) -> State {
        let state = transition(state, Event::ModelBlock { index: 0, block: ContentBlock::text(text) }).state;
        transition(
            state,
            Event::ModelDone { id: None, model: None, stop_reason: Some(StopReason::EndTurn), usage: Usage::default() },
        )
        .state
    }

    #[test]
    fn a_new_prompt_after_the_end_starts_a_new_query() {
        let state =
            transition(State::new(Config::default()), Event::UserInput { content: vec![ContentBlock::text("a")] })
                .state;
        let state = text_response(state, "one");
        assert!(state.is_done());
        let step = transition(state, Event::UserInput { content: vec![ContentBlock::text("b")] });
        assert_eq!(step.state.phase(), "awaiting_model");
        assert_eq!(step.state.context().turn_count, 1);
        assert!(matches!(&step.effects[..], [Effect::CallModel(c)] if c.message_count == 3 && c.request == 2));
    }
}

#[cfg(test)]
mod guard_tests {
    use super::*;
    use crate::event::StopReason;
    use crate::message::Usage;
    use crate::state::Config;

    fn respond(state: State, blocks: Vec<ContentBlock>, stop: StopReason) -> Step {
        let mut state = state;
        for block in blocks {
            state = transition(state, Event::ModelBlock { index: 0, block }).state;
        }
        transition(state, Event::ModelDone { id: None, model: None, stop_reason: Some(stop), usage: Usage::default() })
    }

    #[test]
    fn the_malformed_call_retry_is_granted_again_in_a_new_turn() {
        let state =
            transition(State::new(Config::default()), Event::UserInput { content: vec![ContentBlock::text("go")] })
                .state;
        let step = respond(state, vec![ContentBlock::text("calling")], StopReason::ToolUse);
        assert_eq!(step.reason.as_ref().map(Reason::name), Some("malformed_tool_call_retry"));
        let call = ContentBlock::tool_use("toolu_1", "Read", serde_json::json!({}));
        let step = respond(step.state, vec![call], StopReason::ToolUse);
        let outcome = ToolOutcome {
            tool_use_id: "toolu_1".into(),
            content: ToolResultContent::Text("ok".into()),
            is_error: false,
            denied: false,
        };
        let step = transition(step.state, Event::ToolDone(outcome));
        assert_eq!(step.reason.as_ref().map(Reason::name), Some("next_turn"));
        let step = respond(step.state, vec![ContentBlock::text("calling again")], StopReason::ToolUse);
        assert_eq!(
            step.reason.as_ref().map(Reason::name),
            Some("malformed_tool_call_retry"),
            "a new turn, a new retry"
        );
    }

    fn result(id: &str) -> Event {
        Event::ToolDone(ToolOutcome {
            tool_use_id: id.into(),
            content: ToolResultContent::Text("ok".into()),
            is_error: false,
            denied: false,
        })
    }

    fn started() -> State {
        transition(State::new(Config::default()), Event::UserInput { content: vec![ContentBlock::text("go")] }).state
    }

    #[test]
    fn a_repeated_tool_use_id_still_gets_a_result_per_call() {
        let call = || ContentBlock::tool_use("call_0", "Read", serde_json::json!({}));
        let step = respond(started(), vec![call(), call()], StopReason::ToolUse);
        let step = transition(step.state, result("call_0"));
        assert_eq!(step.state.phase(), "running_tools");
        let step = transition(step.state, result("call_0"));
        assert_eq!(step.reason.as_ref().map(Reason::name), Some("next_turn"), "the loop must not hang");
    }

    #[test]
    fn an_empty_response_is_not_kept_in_the_history() {
        let config = Config::default().with_token_budget(Some(10_000));
        let state = transition(State::new(config), Event::UserInput { content: vec![ContentBlock::text("go")] }).state;
        let step = respond(state, vec![], StopReason::EndTurn);
        assert_eq!(step.reason.as_ref().map(Reason::name), Some("token_budget_continuation"));
        assert!(step.state.messages().messages().iter().all(|m| !m.content.is_empty()));
    }

    #[test]
    fn a_huge_token_budget_does_not_overflow() {
        let config = Config::default().with_token_budget(Some(u64::MAX));
        let state = transition(State::new(config), Event::UserInput { content: vec![ContentBlock::text("go")] }).state;
        let step = respond(state, vec![ContentBlock::text("x")], StopReason::EndTurn);
        assert_eq!(step.reason.as_ref().map(Reason::name), Some("token_budget_continuation"));
    }

    #[test]
    fn a_new_query_does_not_carry_what_an_earlier_one_dropped() {
        let state = started();
        let state =
            transition(state, Event::QueuedInput { id: "q1".into(), content: vec![ContentBlock::text("later")] }).state;
        let state = transition(state, Event::Abort).state;
        assert_eq!(state.context().queued.len(), 1, "reported dropped at the end");
        let step = transition(state, Event::UserInput { content: vec![ContentBlock::text("again")] });
        assert!(step.state.context().queued.is_empty());
    }
}
