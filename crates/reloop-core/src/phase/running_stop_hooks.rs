//! `running_stop_hooks`: the model asked for no tool; the Stop hooks decide whether the turn
//! ends. A block holds it open (up to the cap), `continue: false` ends the run.

use crate::context::Loop;
use crate::effect::Command;
use crate::event::{Event, StopReason};
use crate::flags::Flag;
use crate::hook::{outcome, stop_hook_feedback, with_raw_stderr, HookEventName, HookRun};
use crate::message::Message;
use crate::reason::{Completion, Continue, HookPrevented, Stop};
use crate::request::continue_with;
use crate::state::{Phase, Terminal};
use crate::step::{done, queue, stale, IgnoreWhy, Step};

pub(crate) fn on(ctx: Box<Loop>, stop_reason: Option<StopReason>, event: Event) -> Step {
    match event {
        // A subagent's loop runs its SubagentStop hooks here, read as Stop hooks (recorded in
        // both versions: `hooks_events/subagent_stop_block`).
        Event::HookDone {
            hook_event: hook_event @ (HookEventName::Stop | HookEventName::SubagentStop),
            runs,
            request,
            ..
        } if ctx.is_current(request) => stop_hooks_done(ctx, stop_reason, hook_event, &runs),
        Event::HookDone { hook_event, request, .. } if ctx.is_current(request) => {
            Step::ignore(Phase::RunningStopHooks(ctx, stop_reason), &event, IgnoreWhy::NotStopHooks { hook_event })
        }
        other @ Event::HookDone { .. } => stale(Phase::RunningStopHooks(ctx, stop_reason), &other),
        Event::Abort => crate::abort::streaming(ctx, Vec::new(), Some(Command::CancelHooks)),
        // The caller changed a setting: recorded, whatever the phase.
        Event::SetModel { model, command } => {
            crate::settings::set_model(Phase::RunningStopHooks(ctx, stop_reason), model, command.is_some())
        }
        Event::SetPermissionMode { mode } => {
            crate::settings::set_permission_mode(Phase::RunningStopHooks(ctx, stop_reason), mode)
        }
        // A command's allowed-tools: the driver's to enforce, nothing to record.
        Event::CommandTools { .. } => Step::stay(Phase::RunningStopHooks(ctx, stop_reason)),
        // Hooks in flight when the process stopped run again.
        Event::Resumed => {
            let last_assistant_message = ctx.messages.last().map(Message::text).unwrap_or_default();
            let stop_hook_active = ctx.turn.stop_hook_active;
            let effects = vec![Command::RunStopHooks { stop_hook_active, last_assistant_message }.into()];
            Step::with(Phase::RunningStopHooks(ctx, stop_reason), effects)
        }
        Event::QueuedInput { id, content } => queue(Phase::RunningStopHooks(ctx, stop_reason), id, content),
        other @ (Event::UserInput { .. }
        | Event::TextDelta { .. }
        | Event::ModelStarted { .. }
        | Event::ModelBlock { .. }
        | Event::ModelDone { .. }
        | Event::ModelFailed { .. }
        | Event::ToolStarted { .. }
        | Event::ToolDone(_)
        | Event::CompactDone { .. }
        | Event::CompactFailed { .. }
        | Event::CompactRequested
        | Event::RetryReady { .. }) => {
            Step::ignore(Phase::RunningStopHooks(ctx, stop_reason), &other, IgnoreWhy::NotExpected)
        }
    }
}

fn stop_hooks_done(
    mut ctx: Box<Loop>,
    stop_reason: Option<StopReason>,
    event: HookEventName,
    runs: &[HookRun],
) -> Step {
    let combined = outcome(event, runs);
    if let Some(prevented) = combined.prevent {
        let prevented =
            HookPrevented { command: prevented.command, stop_reason: prevented.stop_reason, tool_use_id: None };
        return done(ctx, Terminal::new(Stop::StopHookPrevented(prevented)), Vec::new());
    }
    if combined.blocks.is_empty() {
        ctx.query.stop_hook_blocks = 0;
        return crate::end_of_turn::checks(ctx, stop_reason);
    }
    let cap = ctx.config.stop_hook_block_cap;
    if ctx.query.stop_hook_blocks >= cap {
        // The hooks would hold the turn open forever: end it, and say so.
        ctx.query.stop_hook_blocks = 0;
        return done(ctx, Terminal::new(Stop::Completed(Completion::StopHookCap { cap })), Vec::new());
    }
    ctx.query.stop_hook_blocks = ctx.query.stop_hook_blocks.saturating_add(1);
    ctx.turn.stop_hook_active = true;
    let rules = ctx.config.rules();
    let blocks = feedback_blocks(rules, &combined.blocks, runs);
    ctx.messages.push(Message::user_text(rules.stop_hook_feedback(&stop_hook_feedback(&blocks))));
    let json_system = rules.stop_hook_json_system.filter(|_| ctx.config.flag(Flag::JsonStopHookSystemMessage));
    if let Some(template) = json_system {
        for block in blocks.iter().filter(|b| b.from_json) {
            let text = template.replace("{command}", &block.command).replace("{reason}", &block.message);
            ctx.messages.push(Message::system_text(text));
        }
    }
    let decision = Continue::StopHookBlocking {
        feedback: combined.blocks.iter().map(|b| b.line()).collect(),
        block: ctx.query.stop_hook_blocks,
        cap,
    };
    continue_with(ctx, decision, Vec::new())
}

/// The feedback message blocking Stop hooks give the model, as the profile words it; `None` when
/// none blocked. A caller shows the one the block cap kept from the model (Claude Code prints it).
pub fn stop_hook_message(rules: &crate::profile::Profile, runs: &[HookRun]) -> Option<String> {
    let combined = outcome(HookEventName::Stop, runs);
    (!combined.blocks.is_empty())
        .then(|| rules.stop_hook_feedback(&stop_hook_feedback(&feedback_blocks(rules, &combined.blocks, runs))))
}

fn feedback_blocks(
    rules: &crate::profile::Profile,
    blocks: &[crate::hook::Blocked],
    runs: &[HookRun],
) -> Vec<crate::hook::Blocked> {
    if rules.stop_hook_raw_stderr {
        with_raw_stderr(blocks, runs)
    } else {
        blocks.to_vec()
    }
}
