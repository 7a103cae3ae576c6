//! What the caller sees of each step. Live runs and replays derive it with the same functions
//! from the same journaled facts, so `reloop replay --output-format stream-json` prints what the
//! live run printed (timings aside).

use reloop_core::hook::{outcome, HookEventName};
use reloop_core::{Command, Effect, Event, Evidence, Message, Notice, Reason, Role, State, Terminal};

use crate::handle::{CompactStatus, RunEvent, RunResult};

/// A run's `systemMessage`: JSON stdout of a hook that exited 0, as Claude Code reads it.
fn system_message(run: &reloop_core::hook::HookRun) -> Option<String> {
    if run.exit_code != Some(0) || !run.stdout.trim_start().starts_with('{') {
        return None;
    }
    let value: serde_json::Value = serde_json::from_str(run.stdout.trim()).ok()?;
    value.get("systemMessage")?.as_str().filter(|m| !m.is_empty()).map(str::to_string)
}

/// The summary message's summary block alone (a 2.1.197 summary message opens with the context
/// reminder given back); the message unchanged when no block is the summary.
fn summary_only(mut message: Message) -> Message {
    let is_summary = |b: &reloop_core::ContentBlock| matches!(b, reloop_core::ContentBlock::Text(t) if t.text.starts_with(reloop_core::compact::SUMMARY_PREAMBLE));
    if message.content.iter().any(is_summary) {
        message.content.retain(is_summary);
    }
    message
}

/// A prompt its UserPromptSubmit hooks refused ends its query at once, with the hook's stop
/// (no tool call) and the refusal's text as the terminal's.
fn prompt_refused(len_before: usize, after: &State, reason: Option<&Reason>) -> Option<RunEvent> {
    let Some(Reason::Terminal(reloop_core::Stop::HookStopped(hook))) = reason else { return None };
    let terminal = after.terminal().filter(|_| hook.tool_use_id.is_none())?;
    let prompt_kept = after.messages().len() > len_before;
    Some(RunEvent::PromptRefused {
        content: terminal.error.clone().unwrap_or_default(),
        kind: if prompt_kept { "stopped_by_hook" } else { "blocked_by_hook" },
        prompt_kept,
        reason: hook.stop_reason.clone().unwrap_or_default(),
    })
}

/// The calls an abort stopped while they ran, when the session answers them in its profile's
/// words (flag 28).
fn rejected(after: &State, reason: Option<&Reason>) -> Option<RunEvent> {
    let Some(Reason::Terminal(reloop_core::Stop::AbortedTools { tool_use_ids })) = reason else { return None };
    let on = after.context().config().interrupted_call_text().is_some();
    (on && !tool_use_ids.is_empty()).then(|| RunEvent::CallsRejected { tool_use_ids: tool_use_ids.clone() })
}

/// The caller-visible events of one step (journaled at `at_ms`), in the order they are shown.
pub fn step_outputs(
    seq: u64,
    at_ms: u64,
    event: &Event,
    len_before: usize,
    after: &State,
    effects: &[Effect],
    reason: Option<&Reason>,
) -> Vec<RunEvent> {
    let mut out = Vec::new();
    match event {
        Event::TextDelta { index, text, .. } => out.push(RunEvent::TextDelta { index: *index, text: text.clone() }),
        // A head or a block that came after its request was given up answers nothing.
        Event::ModelStarted { id, usage, request }
            if after.streaming().is_some() && after.context().is_current(*request) =>
        {
            out.push(RunEvent::ResponseStarted { id: id.clone(), usage: usage.clone() })
        }
        Event::ModelBlock { index, block: block @ reloop_core::ContentBlock::Thinking(_), request }
            if after.streaming().is_some() && after.context().is_current(*request) =>
        {
            out.push(RunEvent::ThinkingDone { index: *index, block: block.clone() })
        }
        Event::ToolDone(outcome) => out.push(RunEvent::ToolFinished(outcome.clone())),
        Event::QueuedInput { id, .. } if !after.is_done() => {
            out.push(RunEvent::Input { id: id.clone(), status: "queued" })
        }
        Event::HookDone { hook_event, runs, tool_use_id, .. } => {
            // Read as the decision read them (`reloop_core::hook::outcome`), so the notices shown
            // are those of the verdicts the call was decided by.
            for notice in outcome(*hook_event, runs).user_messages {
                out.push(RunEvent::HookNotice { command: notice.command, message: notice.message });
            }
            // SessionStart's hooks show as their own lines; SessionEnd's output is ignored.
            let session = matches!(hook_event, HookEventName::SessionStart | HookEventName::SessionEnd);
            // PreCompact's runs word a compaction by hand's note; every run may show as lines
            // of its own (SessionStart's always, the others' with `--include-hook-events`). A
            // `PermissionRequest` run is the caller's answer to a permission prompt, no hook.
            if *hook_event != HookEventName::PermissionRequest {
                out.extend(runs.iter().map(|run| RunEvent::HookRan {
                    hook_event: *hook_event,
                    tool_use_id: tool_use_id.clone(),
                    run: run.clone(),
                }));
            }
            if after.context().config().flag(reloop_core::Flag::HookSystemMessage) && !session {
                for message in runs.iter().filter_map(system_message) {
                    out.push(RunEvent::HookSystemMessage {
                        hook_event: *hook_event,
                        tool_use_id: tool_use_id.clone(),
                        message,
                    });
                }
            }
        }
        Event::UserInput { .. } => out.extend(prompt_refused(len_before, after, reason)),
        _ => {}
    }
    if effects.iter().any(|e| matches!(e, Effect::Notice(Notice::Withdraw))) {
        out.push(RunEvent::Withdrawn);
    }
    // The user's own input is not echoed, as in Claude Code's stream-json.
    let history = after.messages();
    let compaction_ends = after.context().config().flag(reloop_core::Flag::ClaudeCodeCompactionEnds);
    if let Event::ModelDone { usage, stop_reason, .. } = event {
        // Applied (not a stale answer): the response joined the history or was decided on.
        if history.len() > len_before || reason.is_some() {
            let stop_reason = stop_reason.as_ref().map(|r| r.as_str().to_string());
            out.push(RunEvent::Response { usage: usage.clone(), stop_reason });
        }
    }
    if let Some(Notice::CompactBoundary { trigger, pre_tokens, post_tokens, kept }) =
        effects.iter().filter_map(Effect::notice).find(|n| matches!(n, Notice::CompactBoundary { .. }))
    {
        // The history was replaced: the boundary, then the summary that opens it; Claude Code
        // says the compaction succeeded before both (flag 18).
        let (pre_tokens, post_tokens) = (*pre_tokens, *post_tokens);
        if compaction_ends {
            out.push(RunEvent::CompactStatus(CompactStatus::Succeeded));
        }
        // What the summary opens: the messages kept after it (what is given back aside).
        let details = after.context().config().flag(reloop_core::Flag::StreamDetails);
        let counted = history.messages().iter().skip(1).filter(|m| m.role != Role::System).count();
        // The core says how many it kept (flag 27); before, they were counted here, the files
        // given back among them.
        let kept = details.then_some(kept.unwrap_or(counted));
        out.push(RunEvent::CompactBoundary { trigger: trigger.clone(), pre_tokens, post_tokens, kept });
        let summary = history.messages().first().map(|m| (*m).clone());
        // Claude Code shows the summary's own text, not the context given back with it.
        out.extend(summary.map(|m| RunEvent::Message(if compaction_ends { summary_only(m) } else { m })));
        if !compaction_ends {
            out.push(RunEvent::CompactStatus(CompactStatus::Succeeded));
        }
    } else if !matches!(event, Event::UserInput { .. }) && history.len() > len_before {
        out.extend(rejected(after, reason));
        out.extend(history.tail(history.len() - len_before).into_iter().cloned().map(RunEvent::Message));
    }
    for effect in effects {
        match effect {
            Effect::Notice(Notice::SwitchModel { trigger, from, to }) => {
                out.push(RunEvent::ModelFallback { trigger: trigger.clone(), from: from.clone(), to: to.clone() })
            }
            Effect::Notice(Notice::InputConsumed { ids }) => {
                out.extend(ids.iter().map(|id| RunEvent::Input { id: id.clone(), status: "consumed" }))
            }
            Effect::Notice(Notice::CompactionFailed { trigger, failures, breaker_open, message }) => {
                let line = reloop_core::compaction_failure_line(trigger, *failures, *breaker_open, message);
                out.push(RunEvent::Warning(line));
                if let (Event::CompactFailed { error, .. }, true) = (event, compaction_ends) {
                    out.push(RunEvent::CompactStatus(CompactStatus::FailedOn(error.clone())));
                }
            }
            Effect::Notice(Notice::CompactionSkipped { .. }) => {
                out.push(RunEvent::CompactStatus(CompactStatus::Compacting));
                out.push(RunEvent::CompactStatus(CompactStatus::TooFewGroups));
            }
            // Still the same compaction: its status line stays open.
            Effect::Notice(Notice::CompactionRetried { .. }) => {}
            Effect::Command(Command::Summarize { truncated: false, attempt: 0, .. }) => {
                out.push(RunEvent::CompactStatus(CompactStatus::Compacting))
            }
            // Shown above, in their place in the stream.
            Effect::Notice(Notice::Withdraw | Notice::CompactBoundary { .. }) => {}
            // The one command the caller sees: Claude Code's `api_retry` message.
            Effect::Command(Command::WaitRetry(wait)) => out.push(RunEvent::Retry(wait.clone())),
            Effect::Command(
                Command::CallModel(_)
                | Command::RunTools { .. }
                | Command::ResumeTools { .. }
                | Command::Summarize { .. }
                | Command::RunStopHooks { .. }
                | Command::CancelHooks
                | Command::CancelModel
                | Command::CancelTools,
            ) => {}
        }
    }
    // A summary request's failure that was acted on (not a stale answer) and not retried.
    let retried = || {
        effects.iter().any(|e| {
            matches!(e, Effect::Notice(Notice::CompactionRetried { .. }))
                || compaction_ends && matches!(e, Effect::Notice(Notice::CompactionFailed { .. }))
        })
    };
    if matches!(event, Event::CompactFailed { .. }) && (reason.is_some() || !effects.is_empty()) && !retried() {
        out.push(RunEvent::CompactStatus(CompactStatus::Failed));
    }
    if let (Some(Reason::Terminal(_)), ctx) = (reason, after.context()) {
        out.extend(ctx.consumed_inputs().iter().map(|id| RunEvent::Input { id: id.clone(), status: "completed" }));
        out.extend(ctx.queued().iter().map(|q| RunEvent::Input { id: q.id.clone(), status: "dropped" }));
    }
    if let Some(reason) = reason {
        if let Evidence::StopHookCap { .. } = reason.evidence() {
            // The feedback of the block past the cap, which Claude Code prints but never sends.
            let config = after.context().config();
            if let (Event::HookDone { runs, .. }, true) = (event, config.flag(reloop_core::Flag::ClaudeCodeEndings)) {
                let text = reloop_core::stop_hook_message(config.rules(), runs);
                out.extend(text.map(|t| RunEvent::Message(Message::user_text(t))));
            }
            out.push(RunEvent::Warning(reason.explain()));
        }
        out.push(RunEvent::Transition { seq, turn: after.context().turn_count(), reason: reason.clone() });
    }
    if !out.is_empty() {
        out.insert(0, RunEvent::Step { seq, at_ms });
    }
    out
}

/// The outcome of a run in the given state.
pub fn result_of(session_id: &str, state: &State, duration_ms: u64) -> RunResult {
    let ctx = state.context();
    let terminal = state.terminal().cloned().unwrap_or_else(|| {
        let message = format!("the loop ended in phase {} without a terminal state", state.phase());
        let failure = reloop_core::ModelFailure {
            status: None,
            error_type: "incomplete".into(),
            message: message.clone(),
            retries: 0,
            why_final: String::new(),
            request_id: None,
        };
        Terminal::failed(reloop_core::Stop::ModelError(reloop_core::Failure::Request(failure)), message)
    });
    let result = match &terminal.error {
        Some(error) => error.clone(),
        None => ctx
            .messages()
            .messages()
            .into_iter()
            .rev()
            .find(|m| m.role == Role::Assistant)
            .map(Message::text)
            .unwrap_or_default(),
    };
    RunResult {
        session_id: session_id.to_string(),
        is_error: terminal.reason().is_error(),
        terminal,
        num_turns: ctx.turn_count(),
        model_requests: ctx.requests(),
        duration_ms,
        result,
        usage: ctx.usage().clone(),
        permission_denials: ctx.permission_denials().to_vec(),
        total_cost_usd: ctx.cost_usd(),
        model_usage: ctx.model_usage().clone(),
        profile: ctx.config().profile,
        duration_api_ms: 0,
        context_tokens: ctx.usage_tokens(),
    }
}
