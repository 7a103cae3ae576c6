//! Aborts: whatever phase the loop is in, an abort ends it, and every `tool_use` already in the
//! history gets an answer so the conversation stays valid for a later prompt.

use crate::context::Loop;
use crate::effect::{Command, Effect};
use crate::event::ToolOutcome;
use crate::flags::Flag;
use crate::message::{ContentBlock, Message};
use crate::reason::Stop;
use crate::state::{Terminal, Tools};
use crate::step::{done, Step};

/// Text of the `tool_result` given to every unanswered tool call when the user aborts.
pub const INTERRUPTED_TOOL_RESULT: &str = "Interrupted by user";
/// User text appended when the user aborts while the model streams.
pub const INTERRUPT_MESSAGE: &str = "[Request interrupted by user]";
/// User text appended when the user aborts while tools run.
pub const INTERRUPT_MESSAGE_FOR_TOOL_USE: &str = "[Request interrupted by user for tool use]";

/// Ends the run on an abort outside the tools phase. `ids` are the tool calls of a partial
/// assistant message, each of which gets an "Interrupted by user" result; `cancel` stops what
/// is in flight.
pub(crate) fn streaming(mut ctx: Box<Loop>, ids: Vec<String>, cancel: Option<Command>) -> Step {
    let content: Vec<ContentBlock> =
        ids.iter().map(|id| ToolOutcome::error(id, INTERRUPTED_TOOL_RESULT).into_block()).collect();
    push_interrupt(&mut ctx, content, INTERRUPT_MESSAGE);
    let terminal = Terminal::new(Stop::AbortedStreaming { tool_use_ids: ids });
    let effects: Vec<Effect> = cancel.into_iter().map(Effect::from).collect();
    done(ctx, terminal, effects)
}

/// Ends the run on an abort while tools run: finished calls keep their results, the others are
/// answered as interrupted — in the profile's words under [`Flag::InterruptedCallRejected`].
pub(crate) fn tools(mut ctx: Box<Loop>, mut tools: Tools) -> Step {
    let mut interrupted_ids = Vec::new();
    let mut content = Vec::with_capacity(tools.calls.len() + 1);
    let outcomes = tools.take_outcomes();
    let text = ctx.config.interrupted_call_text().unwrap_or(INTERRUPTED_TOOL_RESULT);
    for (call, outcome) in tools.calls.iter().zip(outcomes) {
        let outcome = outcome.unwrap_or_else(|| {
            interrupted_ids.push(call.id.clone());
            ToolOutcome::error(&call.id, text)
        });
        content.push(outcome.into_block());
    }
    push_interrupt(&mut ctx, content, INTERRUPT_MESSAGE_FOR_TOOL_USE);
    let terminal = Terminal::new(Stop::AbortedTools { tool_use_ids: interrupted_ids });
    done(ctx, terminal, vec![Command::CancelTools.into()])
}

/// Files the interrupted calls' results and the interrupt text: one user message, as Claude
/// Code sends it, or — without [`Flag::InterruptInResultsMessage`] — the results and then the
/// text on its own.
fn push_interrupt(ctx: &mut Loop, mut results: Vec<ContentBlock>, text: &str) {
    if results.is_empty() || ctx.config.flag(Flag::InterruptInResultsMessage) {
        results.push(ContentBlock::text(text));
        ctx.messages.push(Message::user(results));
    } else {
        ctx.messages.push(Message::user(results));
        ctx.messages.push(Message::user_text(text));
    }
}
