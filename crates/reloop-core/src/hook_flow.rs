//! What hook verdicts do to the loop: Stop hooks may hold the turn open or end the run; tool
//! hooks may add feedback next to a tool result or stop the loop after the tools.
//!
//! The driver runs the hooks and journals their raw runs; the meaning is decided here, with
//! [`crate::hook::interpret`] and [`crate::hook::combine`], so replay re-decides it.

use crate::event::StopReason;
use crate::hook::{
    combine, interpret, post_tool_use_feedback, stop_hook_feedback, HookEventName, HookRun, HookVerdict,
};
use crate::message::Message;
use crate::reason::{ContinueReason, Evidence, TerminalReason};
use crate::response::after_stop_hooks;
use crate::state::{Loop, State, Terminal, Tools};
use crate::transition::{continue_with, done, Step};

fn verdicts(event: HookEventName, runs: &[HookRun]) -> Vec<(String, HookVerdict)> {
    runs.iter().map(|r| (r.command.clone(), interpret(event, r))).collect()
}

pub(crate) fn stop_hooks_done(mut ctx: Loop, stop_reason: Option<StopReason>, runs: &[HookRun]) -> Step {
    let combined = combine(&verdicts(HookEventName::Stop, runs));
    if let Some(prevented) = combined.prevent {
        let terminal = Terminal {
            reason: TerminalReason::StopHookPrevented,
            evidence: Evidence::HookPrevented {
                command: prevented.command,
                stop_reason: prevented.stop_reason,
                tool_use_id: None,
            },
            error: None,
        };
        return done(ctx, terminal, Vec::new());
    }
    if combined.blocks.is_empty() {
        ctx.stop_hook_blocks = 0;
        return after_stop_hooks(ctx, stop_reason);
    }
    let cap = ctx.config.stop_hook_block_cap;
    if ctx.stop_hook_blocks >= cap {
        // The hooks would hold the turn open forever: end it, and say so.
        ctx.stop_hook_blocks = 0;
        let terminal =
            Terminal { reason: TerminalReason::Completed, evidence: Evidence::StopHookCap { cap }, error: None };
        return done(ctx, terminal, Vec::new());
    }
    ctx.stop_hook_blocks += 1;
    ctx.stop_hook_active = true;
    ctx.messages.push(Message::user_text(stop_hook_feedback(&combined.blocks)));
    let evidence = Evidence::StopHookBlock {
        feedback: combined.blocks.iter().map(|b| b.line()).collect(),
        block: ctx.stop_hook_blocks,
        cap,
    };
    continue_with(ctx, ContinueReason::StopHookBlocking, evidence, Vec::new())
}

/// Files a tool hook's verdict with its call; the loop acts on it when all tools are done.
pub(crate) fn tool_hooks_done(
    ctx: Loop,
    mut tools: Tools,
    event: HookEventName,
    tool_use_id: Option<&str>,
    runs: &[HookRun],
) -> Step {
    let Some(index) = tool_use_id.and_then(|id| tools.calls.iter().position(|c| c.id == id)) else {
        return Step { state: State::RunningTools(ctx, tools), effects: Vec::new(), reason: None };
    };
    let combined = combine(&verdicts(event, runs));
    if event == HookEventName::PostToolUse && !combined.blocks.is_empty() {
        // A call re-run after a resume replaces its earlier feedback rather than repeating it.
        tools.feedback.retain(|(i, _)| *i != index);
        tools.feedback.push((index, post_tool_use_feedback(&tools.calls[index].name, &combined.blocks)));
    }
    if let (Some(prevented), None) = (combined.prevent, &tools.stopped_by) {
        tools.stopped_by = Some(Evidence::HookPrevented {
            command: prevented.command,
            stop_reason: prevented.stop_reason,
            tool_use_id: Some(tools.calls[index].id.clone()),
        });
    }
    Step { state: State::RunningTools(ctx, tools), effects: Vec::new(), reason: None }
}
