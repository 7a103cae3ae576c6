//! `done`: the loop has stopped. A new prompt starts a new query on the same conversation (as
//! a second `query()` call does in Claude Code); `compact_requested` compacts it by hand.

use crate::compact::{Compaction, Trigger};
use crate::context::Loop;
use crate::event::Event;
use crate::request::{begin_compaction, start_query};
use crate::state::{Phase, Terminal};
use crate::step::{IgnoreWhy, Step};

pub(crate) fn on(mut ctx: Box<Loop>, terminal: Terminal, event: Event) -> Step {
    match event {
        Event::UserInput { content, local, .. } => start_query(ctx, crate::local_lines::with_lines(content, local)),
        // Session-event hooks (flag 10): recorded; a prompt's UserPromptSubmit runs wait for it.
        Event::HookDone { hook_event, runs, .. } if crate::prompt_hooks::between_queries(hook_event) => {
            Step::stay(Phase::Done(crate::prompt_hooks::hold(ctx, hook_event, runs), terminal))
        }
        // The caller changed a setting: recorded, whatever the phase.
        Event::SetModel { model, command } => {
            crate::settings::set_model(Phase::Done(ctx, terminal), model, command.is_some())
        }
        Event::SetPermissionMode { mode } => crate::settings::set_permission_mode(Phase::Done(ctx, terminal), mode),
        // A command's allowed-tools: the driver's to enforce, nothing to record.
        Event::CommandTools { .. } => Step::stay(Phase::Done(ctx, terminal)),
        Event::CompactRequested if crate::prompt_hooks::compaction_blocked(&mut ctx) => {
            Step::ignore(Phase::Done(ctx, terminal), &event, IgnoreWhy::CompactionBlocked)
        }
        // 2.1.197 does not compact a single exchange by hand, and says so (flag 22).
        Event::CompactRequested if crate::compact::single_exchange_kept(&ctx) => {
            let skipped = crate::effect::Notice::CompactionSkipped { trigger: Trigger::Manual.as_str().to_string() };
            Step::with(Phase::Done(ctx, terminal), vec![skipped.into()])
        }
        Event::CompactRequested => match crate::compact::by_hand(&ctx) {
            Some(summarize) => {
                let pre_tokens = crate::tokens::estimate(&ctx);
                let compaction = Compaction::new(Trigger::Manual, pre_tokens, summarize);
                begin_compaction(ctx, compaction, Vec::new(), None)
            }
            None => Step::ignore(Phase::Done(ctx, terminal), &event, IgnoreWhy::NothingToCompact),
        },
        // Late outcomes of what the end cancelled, a queued message that came too late, a
        // second abort: none of them changes a stopped loop.
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
        | Event::QueuedInput { .. }
        | Event::RetryReady { .. }
        | Event::Resumed
        | Event::Abort) => Step::ignore(Phase::Done(ctx, terminal), &other, IgnoreWhy::Finished),
    }
}
