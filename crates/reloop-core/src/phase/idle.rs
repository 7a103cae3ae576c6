//! `idle`: nothing has happened yet; the first prompt starts the query.

use crate::context::Loop;
use crate::event::Event;
use crate::request::start_query;
use crate::state::Phase;
use crate::step::{queue, IgnoreWhy, Step};

pub(crate) fn on(ctx: Box<Loop>, event: Event) -> Step {
    match event {
        Event::UserInput { content, local, .. } => start_query(ctx, crate::local_lines::with_lines(content, local)),
        // Session-event hooks (flag 10): recorded; a prompt's UserPromptSubmit runs wait for it.
        Event::HookDone { hook_event, runs, .. } if crate::prompt_hooks::between_queries(hook_event) => {
            Step::stay(Phase::Idle(crate::prompt_hooks::hold(ctx, hook_event, runs)))
        }
        Event::Abort => crate::abort::streaming(ctx, Vec::new(), None),
        // The caller changed a setting: recorded, whatever the phase.
        Event::SetModel { model, command } => crate::settings::set_model(Phase::Idle(ctx), model, command.is_some()),
        Event::SetPermissionMode { mode } => crate::settings::set_permission_mode(Phase::Idle(ctx), mode),
        // A command's allowed-tools: the driver's to enforce, nothing to record.
        Event::CommandTools { .. } => Step::stay(Phase::Idle(ctx)),
        Event::QueuedInput { id, content } => queue(Phase::Idle(ctx), id, content),
        Event::Resumed => Step::ignore(Phase::Idle(ctx), &event, IgnoreWhy::NothingInFlight),
        other @ (Event::TextDelta { .. }
        | Event::ModelStarted { .. }
        | Event::ModelBlock { .. }
        | Event::ModelDone { .. }
        | Event::ModelFailed { .. }
        | Event::ToolStarted { .. }
        | Event::ToolDone(_)
        | Event::HookDone { .. }
        | Event::CompactDone { .. }
        | Event::CompactFailed { .. }
        | Event::CompactRequested
        | Event::RetryReady { .. }) => Step::ignore(Phase::Idle(ctx), &other, IgnoreWhy::NotExpected),
    }
}
