//! `compacting`: the summary request of a compaction is in flight. Its summary replaces the
//! older part of the history; the request that needed it (if any) then goes ahead.

use crate::compact::{Compaction, Trigger, MAX_CONSECUTIVE_FAILURES, PROMPT_TOO_LONG};
use crate::context::Loop;
use crate::effect::{Command, Notice};
use crate::event::{Event, ModelError};
use crate::hook::HookEventName;
use crate::message::Usage;
use crate::reason::{CompactionFailure, Completion, Continue, Failure, Stop, TooLong};
use crate::request::{begin_compaction, continue_with, proceed};
use crate::state::{Phase, Terminal};
use crate::step::{done, queue, stale, IgnoreWhy, Step};

pub(crate) fn on(ctx: Box<Loop>, compaction: Compaction, event: Event) -> Step {
    match event {
        Event::CompactDone { summary, usage, request, given_back } if ctx.is_current(request) => {
            summarized(ctx, compaction, &summary, &usage, given_back.as_deref())
        }
        Event::CompactFailed { error, request } if ctx.is_current(request) => failed(ctx, compaction, error),
        other @ (Event::CompactDone { .. } | Event::CompactFailed { .. }) => {
            stale(Phase::Compacting(ctx, compaction), &other)
        }
        // The summary request in flight is sent again under the same number.
        Event::Resumed => {
            let mut ctx = ctx;
            ctx.session.requests = ctx.session.requests.saturating_sub(1);
            begin_compaction(ctx, compaction, Vec::new(), None)
        }
        Event::Abort => crate::abort::streaming(ctx, Vec::new(), Some(Command::CancelModel)),
        // The caller changed a setting: recorded, whatever the phase.
        Event::SetModel { model, command } => {
            crate::settings::set_model(Phase::Compacting(ctx, compaction), model, command.is_some())
        }
        Event::SetPermissionMode { mode } => {
            crate::settings::set_permission_mode(Phase::Compacting(ctx, compaction), mode)
        }
        // A command's allowed-tools: the driver's to enforce, nothing to record.
        Event::CommandTools { .. } => Step::stay(Phase::Compacting(ctx, compaction)),
        Event::QueuedInput { id, content } => queue(Phase::Compacting(ctx, compaction), id, content),
        // The hooks around the compaction (flag 21): recorded; the compaction goes on.
        Event::HookDone { hook_event: HookEventName::PreCompact | HookEventName::SessionStart, .. }
            if ctx.config.flag(crate::flags::Flag::CompactionHooks) =>
        {
            Step::stay(Phase::Compacting(ctx, compaction))
        }
        other @ (Event::UserInput { .. }
        | Event::TextDelta { .. }
        | Event::ModelStarted { .. }
        | Event::ModelBlock { .. }
        | Event::ModelDone { .. }
        | Event::ModelFailed { .. }
        | Event::ToolStarted { .. }
        | Event::ToolDone(_)
        | Event::HookDone { .. }
        | Event::CompactRequested
        | Event::RetryReady { .. }) => Step::ignore(Phase::Compacting(ctx, compaction), &other, IgnoreWhy::NotExpected),
    }
}

/// `given_back`: the texts of the files read again (flag 47), in the order
/// [`crate::request::to_give_back`] named them.
fn summarized(
    mut ctx: Box<Loop>,
    compaction: Compaction,
    summary: &str,
    usage: &Usage,
    given_back: Option<&[Option<String>]>,
) -> Step {
    ctx.account(usage);
    let mut rule = ctx.config.compact_rule();
    // 2.1.332 gives no date back after a compaction by hand between queries (flag 43).
    if compaction.trigger == Trigger::Manual
        && rule.date == crate::profile::RestoredDate::SystemMessage
        && ctx.config.flag(crate::flags::Flag::ByHandCompactionUndated)
    {
        rule.date = crate::profile::RestoredDate::None;
    }
    let transcript = ctx.config.transcript_note().map(str::to_string);
    let joined = ctx.config.flag(crate::flags::Flag::ClaudeCodeCompactionEnds);
    let kept = ctx
        .config
        .flag(crate::flags::Flag::ByHandCompactionKeepsAnswer)
        .then(|| ctx.messages.len().saturating_sub(compaction.summarize.min(ctx.messages.len())));
    let order = ctx.config.flag(crate::flags::Flag::GivenBackByChange).then(|| ctx.session.reads.given_back_order());
    // 2.1.332 sends the first file a compaction by hand gave back on its own (flag 46).
    let first_call_alone = compaction.trigger == Trigger::Manual
        && rule.reattach == crate::profile::Reattach::ReminderBlocks
        && ctx.config.flag(crate::flags::Flag::FirstGivenBackAlone);
    let read_again: Option<Vec<(String, String)>> = given_back.map(|texts| {
        let files = crate::request::to_give_back(&ctx, compaction.summarize);
        files.into_iter().zip(texts).filter_map(|((_, input), text)| Some((input, text.clone()?))).collect()
    });
    let how = crate::compact::shape::Shaping {
        transcript: transcript.as_deref(),
        joined,
        order: order.as_deref(),
        first_call_alone,
        read_again: read_again.as_deref(),
    };
    ctx.messages = crate::compact::shape::compacted(&ctx.messages, compaction.summarize, summary, &rule, &how);
    // 2.1.197 sends what a compaction by hand gave back after the next prompt (flag 42).
    let hold = compaction.trigger == Trigger::Manual
        && rule.reattach == crate::profile::Reattach::SystemMessage
        && ctx.config.flag(crate::flags::Flag::GivenBackAfterPrompt);
    if hold && ctx.messages.last().is_some_and(|m| m.role == crate::message::Role::System) {
        ctx.session.given_back = ctx.messages.pop();
    }
    ctx.session.usage_tokens = 0;
    ctx.session.messages_at_usage = 0;
    ctx.session.compact_failures = 0;
    ctx.session.compactions = ctx.session.compactions.saturating_add(1);
    ctx.request.just_compacted = true;
    let post_tokens = crate::tokens::estimate(&ctx);
    let (trigger, pre_tokens) = (compaction.trigger.as_str().to_string(), compaction.pre_tokens);
    let effects = vec![Notice::CompactBoundary { trigger, pre_tokens, post_tokens, kept }.into()];
    match compaction.trigger {
        Trigger::Reactive => continue_with(ctx, Continue::ReactiveCompactRetry { pre_tokens, post_tokens }, effects),
        Trigger::Auto => proceed(ctx, effects, None),
        // A manual compaction of a stopped conversation asks nothing more.
        Trigger::Manual => {
            ctx.request.just_compacted = false;
            let terminal = Terminal::new(Stop::Completed(Completion::Compacted { pre_tokens, post_tokens }));
            done(ctx, terminal, effects)
        }
    }
}

fn failed(mut ctx: Box<Loop>, compaction: Compaction, error: ModelError) -> Step {
    // The summary request was itself too long: the profile may send it once more, head cut.
    if let Some(retry) = compaction.retry(&ctx.config).filter(|_| error.is_prompt_too_long()) {
        let notice = Notice::CompactionRetried { trigger: retry.trigger.as_str().to_string(), message: error.message };
        return begin_compaction(ctx, retry, vec![notice.into()], None);
    }
    ctx.session.compact_failures = ctx.session.compact_failures.saturating_add(1);
    let failures = ctx.session.compact_failures;
    let breaker_open = failures >= MAX_CONSECUTIVE_FAILURES;
    let trigger = compaction.trigger.as_str().to_string();
    match compaction.trigger {
        // The retry needed the compaction: the prompt cannot be made to fit.
        Trigger::Reactive => {
            let failure = CompactionFailure { trigger, failures, message: error.message, breaker_open };
            let terminal = Terminal::failed(Stop::PromptTooLong(TooLong::CompactionFailed(failure)), PROMPT_TOO_LONG);
            done(ctx, terminal, Vec::new())
        }
        Trigger::Manual => {
            let error_text = format!("Compaction failed: {}", error.message);
            let failure = CompactionFailure { trigger, failures, message: error.message, breaker_open };
            let terminal = Terminal::failed(Stop::ModelError(Failure::CompactionFailed(failure)), error_text);
            done(ctx, terminal, Vec::new())
        }
        // Go on without it; the blocking limit still guards the request.
        Trigger::Auto => {
            ctx.request.just_compacted = true;
            let notice = Notice::CompactionFailed { trigger, failures, breaker_open, message: error.message };
            proceed(ctx, vec![notice.into()], None)
        }
    }
}
