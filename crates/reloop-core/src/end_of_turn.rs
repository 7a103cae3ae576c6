//! The checks after the model asked for no tool and the Stop hooks (if any) let the turn end:
//! queued input starts the next turn, the token budget may keep the model working, or the loop
//! completes.

use crate::context::Loop;
use crate::effect::Notice;
use crate::event::StopReason;
use crate::message::Message;
use crate::reason::{thousands, Completion, Continue, Stop};
use crate::request::continue_with;
use crate::state::Terminal;
use crate::step::{done, Step};

/// Returns under this many tokens per continuation count as diminishing.
pub const DIMINISHING_TOKENS: u64 = 500;

/// Nothing held the turn open so far: queued input or the token budget may still go on.
pub(crate) fn checks(mut ctx: Box<Loop>, stop_reason: Option<StopReason>) -> Step {
    // The model finished while the user queued a message: it starts the next turn.
    if let Some((queued, ids)) = ctx.take_queued() {
        ctx.messages.push(Message::user(queued));
        let consumed = Notice::InputConsumed { ids: ids.clone() }.into();
        return continue_with(ctx, Continue::QueuedInput { ids }, vec![consumed]);
    }
    // A structured-output session is asked once for the call it answers through.
    if ctx.config.structured_output && !ctx.query.structured_enforced {
        ctx.query.structured_enforced = true;
        // Claude Code counts the answer it asks for as a turn of its own.
        ctx.query.turn_count = ctx.query.turn_count.saturating_add(1);
        ctx.messages.push(Message::user_text(crate::structured::ENFORCE_TEXT));
        return continue_with(ctx, Continue::StructuredOutputEnforce, Vec::new());
    }
    if let Some(budget) = ctx.config.token_budget.filter(|b| *b > 0) {
        let q = &mut ctx.query;
        let turn_tokens = q.output_tokens;
        let pct = u64::try_from((u128::from(turn_tokens) * 100 + u128::from(budget) / 2) / u128::from(budget))
            .unwrap_or(u64::MAX);
        let delta = turn_tokens.saturating_sub(q.budget_checked_at);
        let diminishing =
            q.budget_continuations >= 3 && delta < DIMINISHING_TOKENS && q.budget_last_deltas[1] < DIMINISHING_TOKENS;
        if !diminishing && u128::from(turn_tokens) * 10 < u128::from(budget) * 9 {
            q.budget_continuations = q.budget_continuations.saturating_add(1);
            q.budget_last_deltas = [q.budget_last_deltas[1], delta];
            q.budget_checked_at = turn_tokens;
            ctx.messages.push(Message::user_text(format!(
                "Stopped at {pct}% of token target ({} / {}). Keep working — do not summarize.",
                thousands(turn_tokens),
                thousands(budget)
            )));
            return continue_with(ctx, Continue::TokenBudgetContinuation { pct, turn_tokens, budget }, Vec::new());
        }
        if q.budget_continuations > 0 {
            let completion = Completion::TokenBudgetDone { pct, turn_tokens, budget, diminishing };
            return done(ctx, Terminal::new(Stop::Completed(completion)), Vec::new());
        }
    }
    done(ctx, Terminal::new(Stop::Completed(Completion::NoToolRequested { stop_reason })), Vec::new())
}
