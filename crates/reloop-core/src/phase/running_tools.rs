//! `running_tools`: the calls of the last assistant message run; each outcome is filed under
//! its call, tool hooks' verdicts beside it, and when every call is answered the turn ends.

use crate::context::{Loop, PermissionDenial, Turn};
use crate::effect::{Command, Notice};
use crate::event::{Event, ToolOutcome};
use crate::flags::Flag;
use crate::hook::{outcome, post_tool_use_feedback, HookEventName, HookRun};
use crate::message::{ContentBlock, Message, ToolResult, ToolResultContent};
use crate::profile::ToolContextPlacement;
use crate::reason::{Completion, Continue, HookPrevented, Stop, ToolRef};
use crate::request::continue_with;
use crate::state::{Phase, Terminal, Tools};
use crate::step::{done, queue, stale, IgnoreWhy, Step};

pub(crate) fn on(ctx: Box<Loop>, mut tools: Tools, event: Event) -> Step {
    match event {
        Event::ToolStarted { ref tool_use_id, request } if ctx.is_current(request) => {
            let why = if !tools.calls.iter().any(|c| c.id == *tool_use_id) {
                IgnoreWhy::UnknownToolCall { tool_use_id: tool_use_id.clone() }
            } else if tools.started.contains(tool_use_id) {
                IgnoreWhy::AlreadyStarted { tool_use_id: tool_use_id.clone() }
            } else {
                tools.started.push(tool_use_id.clone());
                return Step::stay(Phase::RunningTools(ctx, tools));
            };
            Step::ignore(Phase::RunningTools(ctx, tools), &event, why)
        }
        Event::ToolDone(outcome) if ctx.is_current(outcome.request) => tool_done(ctx, tools, outcome),
        Event::HookDone { hook_event: hook_event @ HookEventName::Stop, request, .. } if ctx.is_current(request) => {
            Step::ignore(Phase::RunningTools(ctx, tools), &event, IgnoreWhy::NotToolHooks { hook_event })
        }
        Event::HookDone { hook_event, ref tool_use_id, ref runs, request } if ctx.is_current(request) => {
            match tool_use_id.as_deref().and_then(|id| tools.calls.iter().position(|c| c.id == id)) {
                Some(index) => {
                    let contexts = ctx.config.flag(Flag::PostToolUseContext);
                    tool_hooks_done(&mut tools, index, hook_event, runs, contexts);
                    Step::stay(Phase::RunningTools(ctx, tools))
                }
                None => {
                    let tool_use_id = tool_use_id.clone().unwrap_or_default();
                    Step::ignore(Phase::RunningTools(ctx, tools), &event, IgnoreWhy::UnknownToolCall { tool_use_id })
                }
            }
        }
        other @ (Event::ToolStarted { .. } | Event::ToolDone(_) | Event::HookDone { .. }) => {
            stale(Phase::RunningTools(ctx, tools), &other)
        }
        // Calls that were unanswered when the process stopped are asked for again.
        Event::Resumed => {
            let pending: Vec<_> =
                tools.calls.iter().zip(tools.outcomes()).filter(|(_, o)| o.is_none()).map(|(c, _)| c.clone()).collect();
            let started = pending.iter().filter(|c| tools.started.contains(&c.id)).map(|c| c.id.clone()).collect();
            let effects = vec![Command::ResumeTools { calls: pending, started }.into()];
            Step::with(Phase::RunningTools(ctx, tools), effects)
        }
        Event::Abort => crate::abort::tools(ctx, tools),
        // The caller changed a setting: recorded, whatever the phase.
        Event::SetModel { model, command } => {
            crate::settings::set_model(Phase::RunningTools(ctx, tools), model, command.is_some())
        }
        Event::SetPermissionMode { mode } => {
            crate::settings::set_permission_mode(Phase::RunningTools(ctx, tools), mode)
        }
        // A command's allowed-tools: the driver's to enforce, nothing to record.
        Event::CommandTools { .. } => Step::stay(Phase::RunningTools(ctx, tools)),
        Event::QueuedInput { id, content } => queue(Phase::RunningTools(ctx, tools), id, content),
        other @ (Event::UserInput { .. }
        | Event::TextDelta { .. }
        | Event::ModelStarted { .. }
        | Event::ModelBlock { .. }
        | Event::ModelDone { .. }
        | Event::ModelFailed { .. }
        | Event::CompactDone { .. }
        | Event::CompactFailed { .. }
        | Event::CompactRequested
        | Event::RetryReady { .. }) => Step::ignore(Phase::RunningTools(ctx, tools), &other, IgnoreWhy::NotExpected),
    }
}

/// Files an outcome under the first unanswered call with its id: a response may repeat an id,
/// and each of its calls still needs its own result or the loop would wait forever.
fn tool_done(mut ctx: Box<Loop>, mut tools: Tools, outcome: ToolOutcome) -> Step {
    let slot = tools.calls.iter().zip(tools.outcomes()).position(|(c, o)| c.id == outcome.tool_use_id && o.is_none());
    let Some(i) = slot else {
        let tool_use_id = outcome.tool_use_id.clone();
        let why = if tools.calls.iter().any(|c| c.id == tool_use_id) {
            IgnoreWhy::AlreadyAnswered { tool_use_id }
        } else {
            IgnoreWhy::UnknownToolCall { tool_use_id }
        };
        return Step::ignore(Phase::RunningTools(ctx, tools), &Event::ToolDone(outcome), why);
    };
    if outcome.denied {
        let call = &tools.calls[i];
        ctx.session.permission_denials.push(PermissionDenial {
            tool_name: call.name.clone(),
            tool_use_id: call.id.clone(),
            tool_input: call.input.clone(),
        });
    }
    if let Some(spent) = &outcome.agent_usage {
        ctx.account_agent(spent);
    }
    if let Some(changed) = outcome.file_changed_ms.filter(|_| !outcome.is_error) {
        if let Some((path, input)) = crate::compact::ledger::noted(&ctx.config, &tools.calls[i]) {
            ctx.session.reads.read(path, changed, input);
        }
    }
    tools.answer(i, outcome);
    if tools.is_complete() {
        tools_done(ctx, tools)
    } else {
        Step::stay(Phase::RunningTools(ctx, tools))
    }
}

/// Files a tool hook's verdict with its call; the loop acts on it when all tools are done.
fn tool_hooks_done(tools: &mut Tools, index: usize, event: HookEventName, runs: &[HookRun], contexts: bool) {
    let combined = outcome(event, runs);
    if event == HookEventName::PostToolUse && !combined.blocks.is_empty() {
        // A call re-run after a resume replaces its earlier feedback rather than repeating it.
        tools.feedback.retain(|(i, _)| *i != index);
        tools.feedback.push((index, post_tool_use_feedback(&tools.calls[index].name, &combined.blocks)));
    }
    if event == HookEventName::PostToolUse && contexts {
        let said = crate::hook::session::tool_contexts(&tools.calls[index].name, runs);
        tools.contexts.retain(|(i, _)| *i != index);
        tools.contexts.extend(said.into_iter().map(|text| (index, text)));
    }
    if let (Some(prevented), None) = (combined.prevent, &tools.stopped_by) {
        tools.stopped_by = Some(HookPrevented {
            command: prevented.command,
            stop_reason: prevented.stop_reason,
            tool_use_id: Some(tools.calls[index].id.clone()),
        });
    }
}

/// Every call is answered: the results go back to the model in the next turn, unless a hook
/// stopped the loop or the next turn would exceed `--max-turns`.
fn tools_done(mut ctx: Box<Loop>, mut tools: Tools) -> Step {
    // The calls are done with: their names and ids move into the evidence.
    let calls = std::mem::take(&mut tools.calls);
    let called = !calls.is_empty();
    // Judged in the calls' order (each call beside its own outcome), before the results may be
    // put in the order they arrived.
    let structured = match ctx.config.structured_output {
        true => crate::structured::verdict(&calls, tools.outcomes()),
        false => crate::structured::Verdict::None,
    };
    let requested: Vec<ToolRef> = calls.iter().map(|c| ToolRef { name: c.name.clone(), id: c.id.clone() }).collect();
    let as_arrived = ctx.config.rules().wire.results_as_completed && ctx.config.flag(Flag::ResultsAsCompleted);
    let outcomes = if as_arrived { tools.take_outcomes_as_arrived() } else { tools.take_outcomes() };
    let mut content: Vec<ContentBlock> = outcomes.into_iter().flatten().map(ToolOutcome::into_block).collect();
    let last_text = content.iter_mut().rev().find_map(|block| match block {
        ContentBlock::ToolResult(ToolResult { content: ToolResultContent::Text(text), .. }) => Some(text),
        _ => None,
    });
    if let Some(text) = last_text {
        if let Some(reminder) = crate::identity::tool_result_reminder(&mut ctx) {
            text.truncate(text.trim_end().len());
            text.push_str("\n\n");
            text.push_str(&reminder);
        }
    }
    if let Some(total) = ctx.config.total_tokens(ctx.current_model()) {
        let reminder = total.reminder(total.budget.saturating_sub(ctx.session.usage_tokens));
        for block in &mut content {
            if let ContentBlock::ToolResult(ToolResult { content: ToolResultContent::Text(text), .. }) = block {
                text.truncate(text.trim_end().len());
                text.push_str("\n\n");
                text.push_str(&reminder);
            }
        }
    }
    let mut feedback = tools.feedback;
    feedback.sort_by_key(|(index, _)| *index);
    content.extend(feedback.into_iter().map(|(_, text)| ContentBlock::text(text)));
    let mut said = std::mem::take(&mut tools.contexts);
    said.sort_by_key(|(index, _)| *index);
    let said: Vec<String> = said.into_iter().map(|(_, text)| text).collect();
    let placement = ctx.config.profile.tool_context_placement();
    if placement == ToolContextPlacement::Reminder {
        content.extend(
            said.iter().map(|text| ContentBlock::text(format!("<system-reminder>\n{text}\n</system-reminder>"))),
        );
    }
    // Messages the user queued while the tools ran join the results, before the next request.
    let mut effects = Vec::new();
    if let Some((queued, ids)) = ctx.take_queued() {
        content.extend(queued);
        effects.push(Notice::InputConsumed { ids }.into());
    }
    ctx.messages.push(Message::user(content));
    // Claude Code looks for changed files after each round of results (flag 45).
    if ctx.config.flag(Flag::GivenBackByChange) {
        ctx.session.reads.looked();
    }
    if placement == ToolContextPlacement::SystemMessage && !said.is_empty() {
        ctx.messages.push(Message::system_text(said.join("\n\n")));
    }
    nudge(&mut ctx, called);
    if let Some(prevented) = tools.stopped_by {
        return done(ctx, Terminal::new(Stop::HookStopped(prevented)), effects);
    }
    match structured {
        crate::structured::Verdict::Valid(tool_use_id) => {
            let stop = Stop::Completed(Completion::StructuredOutput { tool_use_id });
            return done(ctx, Terminal::new(stop), effects);
        }
        crate::structured::Verdict::Invalid(last_error) => {
            ctx.query.structured_failures = ctx.query.structured_failures.saturating_add(1);
            let attempts = ctx.query.structured_failures;
            if attempts >= crate::structured::MAX_ATTEMPTS {
                let text = format!(
                    "Failed to provide valid structured output after {attempts} attempts — last StructuredOutput error: {last_error}"
                );
                let stop = Stop::StructuredOutputRetryExhausted { attempts, last_error };
                return done(ctx, Terminal::failed(stop, text), effects);
            }
        }
        crate::structured::Verdict::None => {}
    }
    let next = ctx.query.turn_count.saturating_add(1);
    if let Some(max_turns) = ctx.config.max_turns.filter(|max| next > *max) {
        return done(ctx, Terminal::new(Stop::MaxTurns { max_turns, turn_count: next }), effects);
    }
    ctx.query.turn_count = next;
    ctx.turn = Turn::default();
    continue_with(ctx, Continue::NextTurn { tools: requested }, effects)
}

/// The profile's reminder after a run of tool turns, right after this turn's results.
fn nudge(ctx: &mut Loop, called: bool) {
    let Some(rule) = ctx.config.rules().nudge else { return };
    if rule.models.is_some_and(|m| !ctx.current_model().contains(m)) || !called {
        return;
    }
    // The assistant message the results answer, two back: did it say anything to the user?
    let spoke = ctx
        .messages
        .tail(2)
        .first()
        .is_some_and(|m| m.content.iter().any(|b| matches!(b, ContentBlock::Text(t) if !t.text.trim().is_empty())));
    if rule.silent_only && spoke {
        ctx.query.nudge_turns = 0;
        return;
    }
    ctx.query.nudge_turns = ctx.query.nudge_turns.saturating_add(1);
    if ctx.query.nudge_turns.is_multiple_of(rule.every.max(1)) {
        ctx.messages.push(Message::system_text(rule.text));
    }
}
