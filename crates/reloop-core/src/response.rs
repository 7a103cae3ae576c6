//! What a completed response means: tools to run, an output-token cut to recover from, a
//! malformed tool call to retry, a token budget to keep spending, or the end of the turn.

use crate::config::{ESCALATED_MAX_TOKENS, MAX_OUTPUT_TOKENS_RECOVERY_LIMIT};
use crate::context::{Loop, Request};
use crate::effect::{Command, Effect, Notice};
use crate::event::StopReason;
use crate::message::{Message, Usage};
use crate::reason::{Continue, Failure, Stop};
use crate::request::continue_with;
use crate::state::{Phase, Streaming, Terminal, Tools};
use crate::step::{done, Step};

/// The error when the malformed-call retry failed too.
pub const MALFORMED_TOOL_CALL_ERROR: &str = "The model's tool call could not be parsed (retry also failed).";
/// What a completed response says about itself.
pub(crate) struct Meta {
    pub id: Option<String>,
    pub model: Option<String>,
    pub stop_reason: Option<StopReason>,
    pub usage: Usage,
}

/// The response in flight is complete.
pub(crate) fn complete(mut ctx: Box<Loop>, streaming: Streaming, meta: Meta) -> Step {
    ctx.account(&meta.usage);
    ctx.query.output_tokens = ctx.query.output_tokens.saturating_add(meta.usage.output_tokens);
    // The request succeeded: its retry chain is over (it cannot follow a compaction any more,
    // the request that did took that mark when it was sent).
    ctx.request = Request { just_compacted: ctx.request.just_compacted, ..Request::default() };
    let streamed = streaming.streamed;
    let blocks = streaming.blocks;
    let mut assistant = Message::assistant(blocks);
    let kept = [("id", meta.id.as_deref()), ("model", meta.model.as_deref())];
    let kept: Vec<(&str, &str)> = kept.into_iter().filter_map(|(k, v)| Some((k, v?))).collect();
    assistant.extra = crate::message::Extra::of_strings(&kept);
    // A follow-up is needed when the message holds tool_use blocks, whatever stop_reason says;
    // a complete tool_use in a response cut by max_tokens is an ordinary tool turn.
    let asks_tools = assistant.tool_uses().next().is_some();
    // The reported usage covers the history up to and including this response (every branch
    // below appends it, but for an escalation or an empty cut response, whose next request is
    // measured afresh); later messages are estimated.
    crate::tokens::note_usage(&mut ctx, &meta.usage);
    if asks_tools {
        // Taken once the message is in the history (which sizes the calls' inputs to fit): the
        // history, the running calls and the effect then share each call.
        ctx.messages.push(assistant);
        // Claude Code checks the budget before it runs the calls of the response that reached
        // it: they stay unanswered (a later query of this session stops at the budget too).
        if let Some(budget_usd) = ctx.budget_reached().filter(|_| ctx.config.budget_before_tools()) {
            return crate::request::budget_stop(ctx, budget_usd, Vec::new());
        }
        let calls: Vec<_> = ctx.messages.last().map(|m| m.tool_uses().cloned().collect()).unwrap_or_default();
        let effects = vec![Command::RunTools { calls: calls.clone() }.into()];
        return Step::with(Phase::RunningTools(ctx, Tools::new(calls)), effects);
    }
    match meta.stop_reason {
        Some(StopReason::MaxTokens) => output_limit(ctx, assistant, streamed),
        Some(StopReason::ToolUse) => malformed_tool_call(ctx, assistant),
        stop_reason => {
            // An answer that reached the budget ends the run at the budget too, once shown, as
            // Claude Code's does (the SDK's max_budget_usd.py example).
            if let Some(budget_usd) = ctx.budget_reached().filter(|_| ctx.config.budget_before_tools()) {
                ctx.messages.push(assistant);
                return crate::request::budget_stop(ctx, budget_usd, Vec::new());
            }
            end_of_turn(ctx, assistant, stop_reason)
        }
    }
}

fn output_limit(mut ctx: Box<Loop>, assistant: Message, streamed: bool) -> Step {
    let limit = ctx.max_tokens();
    if ctx.config.escalate_max_tokens && ctx.iteration.max_output_tokens_override.is_none() {
        // The same request again with a higher limit: the cut response is dropped.
        ctx.iteration.max_output_tokens_override = Some(ESCALATED_MAX_TOKENS);
        let decision = Continue::MaxOutputTokensEscalate { limit, attempt: 1, to: ESCALATED_MAX_TOKENS };
        let effects: Vec<Effect> = if streamed { vec![Notice::Withdraw.into()] } else { Vec::new() };
        return continue_with(ctx, decision, effects);
    }
    if !assistant.content.is_empty() {
        ctx.messages.push(assistant);
    }
    if ctx.query.max_output_tokens_recovery_count < MAX_OUTPUT_TOKENS_RECOVERY_LIMIT {
        ctx.query.max_output_tokens_recovery_count += 1;
        ctx.messages.push(Message::user_text(ctx.config.rules().max_tokens_resume.render()));
        let decision = Continue::MaxOutputTokensRecovery {
            limit,
            attempt: ctx.query.max_output_tokens_recovery_count,
            of: MAX_OUTPUT_TOKENS_RECOVERY_LIMIT,
        };
        return continue_with(ctx, decision, Vec::new());
    }
    let stop = Stop::ModelError(Failure::OutputTokensExhausted {
        limit,
        attempt: MAX_OUTPUT_TOKENS_RECOVERY_LIMIT,
        of: MAX_OUTPUT_TOKENS_RECOVERY_LIMIT,
    });
    let error = format!(
        "API Error: Claude's response exceeded the {limit} output token maximum. \
         To configure this behavior, pass --max-output-tokens."
    );
    done(ctx, Terminal::failed(stop, error), Vec::new())
}

/// The model said `tool_use` and sent no call: retry as the profile says, then give up.
fn malformed_tool_call(mut ctx: Box<Loop>, assistant: Message) -> Step {
    let rule = ctx.config.rules().malformed;
    // 2.1.332 retracts the bad message; older rules keep it (an empty one says nothing).
    if !rule.retract && !assistant.content.is_empty() {
        ctx.messages.push(assistant);
    }
    if ctx.turn.malformed_tool_call_retries < rule.retries {
        ctx.turn.malformed_tool_call_retries += 1;
        let reminder = rule.reminder.render();
        if rule.retract {
            append_to_last_user_message(&mut ctx, reminder);
        } else {
            ctx.messages.push(Message::user_text(reminder));
        }
        return continue_with(ctx, Continue::MalformedToolCallRetry, Vec::new());
    }
    let stop = if rule.own_terminal_reason {
        Stop::MalformedToolUseExhausted { retries: rule.retries }
    } else {
        Stop::ModelError(Failure::MalformedToolCall)
    };
    done(ctx, Terminal::failed(stop, MALFORMED_TOOL_CALL_ERROR), Vec::new())
}

/// Appends `text` as a block of the last user message (which, with the bad answer retracted, is
/// the newest message); the text block that was last gets a newline, as Claude Code joins them.
fn append_to_last_user_message(ctx: &mut Loop, text: String) {
    let Some(mut last) = ctx.messages.pop() else {
        ctx.messages.push(Message::user_text(text));
        return;
    };
    if last.role != crate::message::Role::User {
        ctx.messages.push(last);
        ctx.messages.push(Message::user_text(text));
        return;
    }
    if let Some(crate::message::ContentBlock::Text(t)) = last.content.last_mut() {
        t.text.push('\n');
    }
    last.content.push(crate::message::ContentBlock::text(text));
    ctx.messages.push(last);
}

/// The model asked for no tool: the Stop hooks, then the token budget, decide whether the loop
/// stops.
fn end_of_turn(mut ctx: Box<Loop>, assistant: Message, stop_reason: Option<StopReason>) -> Step {
    let last_assistant_message = assistant.text();
    // An empty message would make the next request (after a hook block, a queued message or a
    // budget continuation) invalid; it says nothing, so it is not kept.
    if !assistant.content.is_empty() {
        ctx.messages.push(assistant);
    }
    if ctx.config.stop_hooks {
        let stop_hook_active = ctx.turn.stop_hook_active;
        let effects = vec![Command::RunStopHooks { stop_hook_active, last_assistant_message }.into()];
        return Step::with(Phase::RunningStopHooks(ctx, stop_reason), effects);
    }
    crate::end_of_turn::checks(ctx, stop_reason)
}
