//! `waiting_retry`: a request failed and the driver waits before the loop asks again.

use crate::context::Loop;
use crate::effect::Command;
use crate::event::Event;
use crate::request::proceed;
use crate::state::Phase;
use crate::step::{queue, IgnoreWhy, Step};

pub(crate) fn on(ctx: Box<Loop>, event: Event) -> Step {
    match event {
        Event::RetryReady { attempt } if is_awaited(&ctx, attempt) => proceed(ctx, Vec::new(), None),
        Event::RetryReady { attempt } => {
            let expected = ctx.request.retry_attempt;
            Step::ignore(Phase::WaitingRetry(ctx), &event, IgnoreWhy::StaleAttempt { expected, got: attempt })
        }
        // The wait was not journaled as over: the retry goes out now.
        Event::Resumed => proceed(ctx, Vec::new(), None),
        Event::Abort => crate::abort::streaming(ctx, Vec::new(), Some(Command::CancelModel)),
        // The caller changed a setting: recorded, whatever the phase.
        Event::SetModel { model, command } => {
            crate::settings::set_model(Phase::WaitingRetry(ctx), model, command.is_some())
        }
        Event::SetPermissionMode { mode } => crate::settings::set_permission_mode(Phase::WaitingRetry(ctx), mode),
        // A command's allowed-tools: the driver's to enforce, nothing to record.
        Event::CommandTools { .. } => Step::stay(Phase::WaitingRetry(ctx)),
        Event::QueuedInput { id, content } => queue(Phase::WaitingRetry(ctx), id, content),
        other @ (Event::UserInput { .. }
        | Event::TextDelta { .. }
        | Event::ModelStarted { .. }
        | Event::ModelBlock { .. }
        | Event::ModelDone { .. }
        | Event::ModelFailed { .. }
        | Event::ToolStarted { .. }
        | Event::ToolDone(_)
        | Event::HookDone { .. }
        | Event::CompactDone { .. }
        | Event::CompactFailed { .. }
        | Event::CompactRequested) => Step::ignore(Phase::WaitingRetry(ctx), &other, IgnoreWhy::NotExpected),
    }
}

/// The wait of the current retry; `0` is a journal from before correlation ids.
fn is_awaited(ctx: &Loop, attempt: u32) -> bool {
    attempt == ctx.request.retry_attempt || (attempt == 0 && ctx.config.digest_version < 2)
}
