//! `awaiting_model`: one model request is in flight; its completed blocks accumulate until the
//! response ends ([`crate::response`]) or fails ([`crate::retry`]).

use crate::compact::{Compaction, Trigger};
use crate::context::Loop;
use crate::effect::{Command, Effect, Notice};
use crate::event::Event;
use crate::flags::Flag;
use crate::message::Message;
use crate::request::{begin_compaction, proceed};
use crate::response::Meta;
use crate::state::{Phase, Streaming};
use crate::step::{queue, stale, IgnoreWhy, Step};

pub(crate) fn on(ctx: Box<Loop>, mut streaming: Streaming, event: Event) -> Step {
    match event {
        Event::TextDelta { request, .. } if ctx.is_current(request) => {
            streaming.streamed = true;
            Step::stay(Phase::AwaitingModel(ctx, streaming))
        }
        // The response's head: for the caller's stream only.
        Event::ModelStarted { request, .. } if ctx.is_current(request) => {
            Step::stay(Phase::AwaitingModel(ctx, streaming))
        }
        Event::ModelBlock { block, request, .. } if ctx.is_current(request) => {
            streaming.blocks.push(block);
            streaming.streamed = true;
            Step::stay(Phase::AwaitingModel(ctx, streaming))
        }
        Event::ModelDone { id, model, stop_reason, usage, request } if ctx.is_current(request) => {
            crate::response::complete(ctx, streaming, Meta { id, model, stop_reason, usage })
        }
        Event::ModelFailed { error, request } if ctx.is_current(request) => crate::retry::failed(ctx, streaming, error),
        other @ (Event::TextDelta { .. }
        | Event::ModelStarted { .. }
        | Event::ModelBlock { .. }
        | Event::ModelDone { .. }
        | Event::ModelFailed { .. }) => stale(Phase::AwaitingModel(ctx, streaming), &other),
        Event::Abort => {
            let mut ctx = ctx;
            let mut answered = Vec::new();
            if !streaming.blocks().is_empty() {
                let assistant = Message::assistant(streaming.blocks);
                answered = assistant.tool_uses().map(|t| t.id.clone()).collect();
                ctx.messages.push(assistant);
            }
            crate::abort::streaming(ctx, answered, Some(Command::CancelModel))
        }
        // The request in flight when the process stopped is sent again, under the same number,
        // so a scripted provider answers it with the same response.
        Event::Resumed => {
            let mut ctx = ctx;
            let effects: Vec<Effect> = if streaming.streamed { vec![Notice::Withdraw.into()] } else { Vec::new() };
            ctx.session.requests = ctx.session.requests.saturating_sub(1);
            proceed(ctx, effects, None)
        }
        Event::QueuedInput { id, content } => queue(Phase::AwaitingModel(ctx, streaming), id, content),
        Event::CompactRequested if ctx.config.flag(Flag::CompactBeforeRequest) && !streaming.streamed => {
            compact_first(ctx, streaming, event)
        }
        // The caller changed a setting: recorded, whatever the phase.
        Event::SetModel { model, command } => {
            crate::settings::set_model(Phase::AwaitingModel(ctx, streaming), model, command.is_some())
        }
        Event::SetPermissionMode { mode } => {
            crate::settings::set_permission_mode(Phase::AwaitingModel(ctx, streaming), mode)
        }
        // A command's allowed-tools: the driver's to enforce, nothing to record.
        Event::CommandTools { .. } => Step::stay(Phase::AwaitingModel(ctx, streaming)),
        other @ (Event::UserInput { .. }
        | Event::ToolStarted { .. }
        | Event::ToolDone(_)
        | Event::HookDone { .. }
        | Event::CompactDone { .. }
        | Event::CompactFailed { .. }
        | Event::CompactRequested
        | Event::RetryReady { .. }) => {
            Step::ignore(Phase::AwaitingModel(ctx, streaming), &other, IgnoreWhy::NotExpected)
        }
    }
}

/// The request in flight, of which nothing has arrived, is withdrawn (its number is used again,
/// as a resume does) and the history is compacted first; the request goes after the summary, as
/// an auto-compaction's does.
fn compact_first(mut ctx: Box<Loop>, streaming: Streaming, event: Event) -> Step {
    let Some(summarize) = crate::compact::summarizable(&ctx.messages) else {
        return Step::ignore(Phase::AwaitingModel(ctx, streaming), &event, IgnoreWhy::NothingToCompact);
    };
    ctx.session.requests = ctx.session.requests.saturating_sub(1);
    let pre_tokens = crate::tokens::estimate(&ctx);
    let compaction = Compaction::new(Trigger::Auto, pre_tokens, summarize);
    begin_compaction(ctx, compaction, vec![Command::CancelModel.into()], None)
}
