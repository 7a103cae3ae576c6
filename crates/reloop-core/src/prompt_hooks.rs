//! Session-event hooks between queries (flag 10): the driver runs them and journals each event's
//! runs as a `hook_done`; the core records SessionStart, SessionEnd and (a subagent's first step)
//! SubagentStart runs and a compaction by hand's PreCompact runs (their effects are outside the conversation) and holds a prompt's UserPromptSubmit runs for the `user_input`
//! that follows, which they decide ([`crate::hook::session::prompt_verdict`]): the prompt is
//! blocked (no message, no request), stopped (the message kept, no request), or goes on with the
//! hooks' added context as a `role: "system"` message after it, as both recorded versions send
//! the context after the prompt.

use crate::context::{Iteration, Loop, Query, Turn};
use crate::hook::session::{prompt_text, prompt_verdict, PromptVerdict};
use crate::hook::{HookEventName, HookRun};
use crate::message::{ContentBlock, Message};
use crate::reason::{HookPrevented, Stop};
use crate::state::Terminal;
use crate::step::{done, Step};

/// Whether a `hook_done` of this event belongs between queries (idle or done).
pub(crate) fn between_queries(event: HookEventName) -> bool {
    matches!(
        event,
        HookEventName::SessionStart
            | HookEventName::UserPromptSubmit
            | HookEventName::SessionEnd
            | HookEventName::SubagentStart
            | HookEventName::PreCompact
    )
}

/// Records a between-queries event's runs; a prompt's UserPromptSubmit runs wait for it, a
/// compaction by hand's PreCompact runs for its `compact_requested` (under
/// the flag: with it flipped off, a replay shows the prompt the runs refused going on).
pub(crate) fn hold(mut ctx: Box<Loop>, event: HookEventName, runs: Vec<HookRun>) -> Box<Loop> {
    if !ctx.config.flag(crate::flags::Flag::SessionEventHooks) {
        return ctx;
    }
    match event {
        HookEventName::UserPromptSubmit => ctx.session.prompt_hooks = Some(runs),
        HookEventName::PreCompact => ctx.session.pre_compact_hooks = Some(runs),
        _ => {}
    }
    ctx
}

/// What a new prompt meets.
pub(crate) enum Submitted {
    /// It goes on, with the context to send after it (none when no hook added any).
    Go(Box<Loop>, Option<Message>),
    /// Held UserPromptSubmit runs refused it: the step that ends its query.
    Refused(Box<Step>),
}

/// Reads the prompt's held UserPromptSubmit runs, if any.
pub(crate) fn submit(mut ctx: Box<Loop>, content: &[ContentBlock]) -> Submitted {
    let Some(runs) = ctx.session.prompt_hooks.take() else {
        return Submitted::Go(ctx, None);
    };
    let flags =
        (ctx.config.flag(crate::Flag::HookEventNameChecked), ctx.config.flag(crate::Flag::CallbackEventNameChecked));
    let verdict = prompt_verdict(&runs, flags.0, flags.1);
    let (command, reason, keep) = match &verdict {
        PromptVerdict::Pass { contexts } if contexts.is_empty() => return Submitted::Go(ctx, None),
        PromptVerdict::Pass { contexts } => {
            return Submitted::Go(ctx, Some(Message::system_text(contexts.join("\n\n"))))
        }
        PromptVerdict::Blocked { command, reason, .. } => (command.clone(), reason.clone(), false),
        PromptVerdict::Stopped { command, reason } => (command.clone(), reason.clone(), true),
        PromptVerdict::Rejected { command, error } => {
            let stop = Stop::HookAnswerRejected { command: command.clone(), error: error.clone() };
            return Submitted::Refused(Box::new(done(
                unstarted(ctx),
                Terminal::failed(stop, error.clone()),
                Vec::new(),
            )));
        }
    };
    let text = verdict.text(&prompt_text(content)).unwrap_or_default();
    if keep {
        ctx.messages.push(Message::user(content.to_vec()));
    }
    let ctx = unstarted(ctx);
    let stop = Stop::HookStopped(HookPrevented { command, stop_reason: Some(reason), tool_use_id: None });
    Submitted::Refused(Box::new(done(ctx, Terminal::failed(stop, text), Vec::new())))
}

/// The query that never started counts no turn and no request of its own.
fn unstarted(mut ctx: Box<Loop>) -> Box<Loop> {
    ctx.query = Query::default();
    ctx.turn = Turn::default();
    ctx.iteration = Iteration::default();
    ctx
}

/// Whether the held PreCompact runs of a compaction by hand cancel it: a hook blocked, as
/// 2.1.332 cancels one (`settings_slash/stream_compact_hooks`: no summary request is made).
pub(crate) fn compaction_blocked(ctx: &mut Loop) -> bool {
    ctx.session.pre_compact_hooks.take().is_some_and(|runs| crate::hook::session::pre_compact_block(&runs).is_some())
}
