//! The way to the next model request, which every phase that asks the model again goes through.
//!
//! [`proceed`] is not simply "call the model": before any request it may stop the loop (the cost
//! budget, the blocking limit) or start a compaction first; [`continue_with`] is a continue
//! decision that then proceeds.

use crate::compact::{Compaction, Trigger};
use crate::context::{Iteration, Loop};
use crate::effect::{Command, Effect, ModelCall, Notice};
use crate::reason::{Continue, ContinueReason, Reason, Stop};
use crate::state::{Phase, Streaming, Terminal};
use crate::step::{done, Step};

/// Proceeds to the next request: stops at the cost budget, compacts first at the auto-compact
/// threshold, refuses at the blocking limit, or sends it. `reason` is the continue that led
/// here, if any.
pub(crate) fn proceed(mut ctx: Box<Loop>, mut effects_before: Vec<Effect>, reason: Option<Reason>) -> Step {
    if let Some(budget_usd) = ctx.budget_reached() {
        unstart_turn(&mut ctx, reason.as_ref());
        return budget_stop(ctx, budget_usd, effects_before);
    }
    let just_compacted = std::mem::take(&mut ctx.request.just_compacted);
    let estimate = crate::tokens::estimate(&ctx);
    let limits = crate::tokens::Limits::of(&ctx.config);
    if estimate >= limits.auto_compact_threshold
        && ctx.config.auto_compact
        && !just_compacted
        && ctx.session.compact_failures < crate::compact::MAX_CONSECUTIVE_FAILURES
    {
        if let Some(summarize) = crate::compact::summarizable(&ctx.messages) {
            let compaction = Compaction::new(Trigger::Auto, estimate, summarize);
            return begin_compaction(ctx, compaction, effects_before, reason);
        }
        // Claude Code reports the compaction it could not make, then goes on.
        if ctx.config.flag(crate::flags::Flag::ClaudeCodeCompactionEnds) && ctx.config.compact_rule().report_too_few {
            effects_before.push(Notice::CompactionSkipped { trigger: Trigger::Auto.as_str().to_string() }.into());
        }
    }
    if estimate >= limits.blocking_limit {
        unstart_turn(&mut ctx, reason.as_ref());
        let stop = Stop::BlockingLimit { estimate, limit: limits.blocking_limit };
        let terminal = Terminal::failed(stop, crate::compact::PROMPT_TOO_LONG);
        return done(ctx, terminal, effects_before);
    }
    ctx.session.requests = ctx.session.requests.saturating_add(1);
    // The profile's last try after broken streams asks for the whole answer, its limit capped.
    let whole = ctx.request.whole;
    let cap = ctx.config.rules().whole_answer.and_then(|rule| rule.max_tokens_cap).filter(|_| whole);
    let call = ModelCall {
        turn: ctx.query.turn_count,
        request: ctx.session.requests,
        message_count: ctx.messages.len(),
        model: ctx.current_model().to_string(),
        max_tokens: cap.map_or(ctx.max_tokens(), |cap| ctx.max_tokens().min(cap)),
        stream: !whole,
        shed: ctx.session.shed,
    };
    let mut effects = effects_before;
    effects.push(Command::CallModel(call).into());
    Step::decided(Phase::AwaitingModel(ctx, Streaming::default()), effects, reason)
}

/// The `tool_result` a later prompt gives each call that a budget stop left unanswered:
/// reloop's own words (Claude Code ends the session there, nothing was recorded after it).
pub const UNRUN_TOOL_RESULT: &str = "Not run: the session reached its cost budget (--max-budget-usd).";

/// The loop stops: the session's cost reached `--max-budget-usd`.
pub(crate) fn budget_stop(ctx: Box<Loop>, budget_usd: f64, effects: Vec<Effect>) -> Step {
    let stop = Stop::MaxBudgetUsd { cost_usd: ctx.session.cost_usd, budget_usd };
    let terminal = Terminal::failed(stop, format!("Reached maximum budget (${budget_usd})"));
    done(ctx, terminal, effects)
}

/// The turn a `next_turn` continue was about to start never begins.
fn unstart_turn(ctx: &mut Loop, reason: Option<&Reason>) {
    if let Some(Reason::Continue(Continue::NextTurn { .. })) = reason {
        ctx.query.turn_count = ctx.query.turn_count.saturating_sub(1);
    }
}

/// A continue: a new pass of the loop starts with this reason and asks the model again.
pub(crate) fn continue_with(mut ctx: Box<Loop>, decision: Continue, effects_before: Vec<Effect>) -> Step {
    let reason = decision.reason();
    let escalated =
        ctx.iteration.max_output_tokens_override.filter(|_| reason == ContinueReason::MaxOutputTokensEscalate);
    ctx.iteration = Iteration { transition: Some(reason), max_output_tokens_override: escalated };
    if matches!(
        reason,
        ContinueReason::NextTurn | ContinueReason::StopHookBlocking | ContinueReason::TokenBudgetContinuation
    ) {
        ctx.query.max_output_tokens_recovery_count = 0;
    }
    proceed(ctx, effects_before, Some(Reason::Continue(decision)))
}

/// Starts a compaction: its summary request is a model request of its own.
pub(crate) fn begin_compaction(
    mut ctx: Box<Loop>,
    compaction: Compaction,
    mut effects: Vec<Effect>,
    reason: Option<Reason>,
) -> Step {
    ctx.session.requests = ctx.session.requests.saturating_add(1);
    effects.push(
        Command::Summarize {
            trigger: compaction.trigger.as_str().to_string(),
            request: ctx.session.requests,
            summarize: compaction.summarize,
            pre_tokens: compaction.pre_tokens,
            truncated: compaction.truncated,
            date_last: compaction.shape(&ctx.config) == crate::profile::SummaryShape::HeadCutDateLast,
            attempt: compaction.attempt,
            give_back: to_give_back(&ctx, compaction.summarize).into_iter().map(|(_, input)| input).collect(),
        }
        .into(),
    );
    Step::decided(Phase::Compacting(ctx, compaction), effects, reason)
}

/// A new query: the prompt joins the history, the query's and the turn's guards start afresh,
/// and the loop proceeds to its first request.
pub(crate) fn start_query(ctx: Box<Loop>, mut content: Vec<crate::message::ContentBlock>) -> Step {
    // Calls a budget stop left unanswered (flag 11) are answered first, so the history stays
    // a valid conversation. Nothing else leaves a call unanswered at the end of a query.
    if let Some(last) = ctx.messages.last().filter(|m| m.role == crate::message::Role::Assistant) {
        let unrun = last.tool_uses().map(|t| crate::event::ToolOutcome::error(&t.id, UNRUN_TOOL_RESULT).into_block());
        let unrun: Vec<_> = unrun.collect();
        content.splice(0..0, unrun);
    }
    // The prompt's UserPromptSubmit hooks (flag 10) may refuse it or add context after it.
    let (mut ctx, hook_context) = match crate::prompt_hooks::submit(ctx, &content) {
        crate::prompt_hooks::Submitted::Go(ctx, context) => (ctx, context),
        crate::prompt_hooks::Submitted::Refused(step) => return *step,
    };
    if let Some(total) =
        ctx.config.total_tokens(crate::identity::prompt_model(&ctx)).filter(|_| ctx.messages.is_empty())
    {
        let reminder = crate::message::ContentBlock::text(total.reminder(total.budget));
        if ctx.config.flag(crate::flags::Flag::TotalTokensBeforePrompt) {
            content.insert(0, reminder);
        } else {
            content.push(reminder);
        }
    }
    ctx.messages.push(crate::message::Message::user(content));
    // Claude Code looks for changed files as a prompt reaches the model (flag 45).
    if ctx.config.flag(crate::flags::Flag::GivenBackByChange) {
        ctx.session.reads.looked();
    }
    if let Some(given_back) = ctx.session.given_back.take() {
        ctx.messages.push(given_back);
    }
    if let Some(identity) = crate::identity::prompt_reminder(&mut ctx) {
        ctx.messages.push(identity);
    }
    if let Some(context) = hook_context {
        ctx.messages.push(context);
    }
    // What an earlier query queued was carried or reported dropped when it ended.
    ctx.query = crate::context::Query::default();
    ctx.turn = crate::context::Turn::default();
    ctx.iteration = Iteration::default();
    proceed(ctx, Vec::new(), None)
}

/// The files a compaction that keeps the messages from `summarize` on gives back read again
/// from disk (flag 47), as `(path, Read input)`: the ledger's first five, but for the files the
/// kept messages read themselves. Empty without the flag or where nothing is given back.
pub(crate) fn to_give_back(ctx: &Loop, summarize: usize) -> Vec<(String, String)> {
    let config = &ctx.config;
    if !config.flag(crate::flags::Flag::GivenBackFromDisk)
        || config.compact_rule().reattach == crate::profile::Reattach::None
    {
        return Vec::new();
    }
    let messages = ctx.messages.messages();
    let kept = messages.get(summarize..).unwrap_or_default();
    let read_again = |path: &str| {
        kept.iter()
            .flat_map(|m| m.tool_uses())
            .any(|c| c.name == "Read" && c.input.get("file_path").and_then(|p| p.as_str()) == Some(path))
    };
    ctx.session
        .reads
        .to_read_again()
        .filter(|(path, _)| !read_again(path))
        .take(crate::compact::shape::REATTACH_MAX_FILES)
        .map(|(path, input)| (path.to_string(), input.to_string()))
        .collect()
}
