//! `why`'s words: one human line per decision, one wording per fact.

use super::{thousands, Completion, Continue, Failure, ModelFailure, Stop, TooLong};

pub(super) fn explain_continue(c: &Continue) -> String {
    match c {
        Continue::NextTurn { tools } => {
            let names: Vec<String> = tools.iter().map(|t| format!("{} ({})", t.name, t.id)).collect();
            format!("the model asked for {}", names.join(", "))
        }
        Continue::MaxOutputTokensEscalate { limit, to, .. } => {
            format!("output cut at {limit} tokens; repeating the request with max_tokens {to}")
        }
        Continue::MaxOutputTokensRecovery { limit, attempt, of } => {
            format!("output cut at {limit} tokens; asked the model to resume (attempt {attempt} of {of})")
        }
        Continue::CutStreamResume { attempt, of } => {
            format!("the stream broke after part of the answer; kept it and asked the model to resume (retry {attempt} of {of})")
        }
        Continue::MalformedToolCallRetry => {
            "stop_reason tool_use without a tool_use block; asked the model to retry (once per turn)".to_string()
        }
        Continue::ReactiveCompactRetry { pre_tokens, post_tokens } => {
            format!("prompt is too long; {}, retrying", compacted_line("reactive", *pre_tokens, *post_tokens))
        }
        Continue::StopHookBlocking { feedback, block, cap } => {
            format!("{} (block {block} of {cap})", feedback.join("; "))
        }
        Continue::TokenBudgetContinuation { pct, turn_tokens, budget } => {
            format!("{pct}% of {} ({} output tokens so far)", thousands(*budget), thousands(*turn_tokens))
        }
        Continue::QueuedInput { ids } => format!("the user queued {} while the model worked", ids.join(", ")),
        Continue::StructuredOutputEnforce => {
            "the model answered without calling StructuredOutput, which this session answers through".to_string()
        }
    }
}

pub(super) fn explain_stop(s: &Stop) -> String {
    match s {
        Stop::Completed(Completion::NoToolRequested { stop_reason: Some(r) }) => {
            format!("the model asked for no tool (stop_reason {})", r.as_str())
        }
        Stop::Completed(Completion::NoToolRequested { stop_reason: None }) => "the model asked for no tool".to_string(),
        Stop::Completed(Completion::StopHookCap { cap }) => crate::hook::stop_hook_cap_warning(*cap),
        Stop::Completed(Completion::TokenBudgetDone { pct, turn_tokens, budget, diminishing }) => {
            let why = if *diminishing { "returns diminished" } else { "target reached" };
            format!("{why} at {pct}% of {} ({} output tokens)", thousands(*budget), thousands(*turn_tokens))
        }
        Stop::Completed(Completion::Compacted { pre_tokens, post_tokens }) => format!(
            "compaction asked for with reloop compact; {}",
            compacted_line("manual", *pre_tokens, *post_tokens)
        ),
        Stop::MaxTurns { max_turns, turn_count } => format!("turn {turn_count} would exceed --max-turns {max_turns}"),
        Stop::AbortedStreaming { tool_use_ids } | Stop::AbortedTools { tool_use_ids } if tool_use_ids.is_empty() => {
            "the caller aborted the run".to_string()
        }
        Stop::AbortedStreaming { tool_use_ids } | Stop::AbortedTools { tool_use_ids } => {
            format!("the caller aborted the run; interrupted {}", tool_use_ids.join(", "))
        }
        Stop::PromptTooLong(TooLong::Refused(f)) | Stop::ModelError(Failure::Request(f)) => explain_failure(f),
        Stop::PromptTooLong(TooLong::CompactionFailed(c)) | Stop::ModelError(Failure::CompactionFailed(c)) => c.line(),
        Stop::BlockingLimit { estimate, limit } => format!(
            "the request would hold about {} tokens, at or above the blocking limit of {}, and nothing can be compacted",
            thousands(*estimate),
            thousands(*limit)
        ),
        Stop::ModelError(Failure::OutputTokensExhausted { limit, attempt, of }) => {
            format!("output cut at {limit} tokens; recovery exhausted ({attempt} of {of})")
        }
        Stop::ModelError(Failure::MalformedToolCall) => {
            "stop_reason tool_use without a tool_use block, again after the retry".to_string()
        }
        Stop::MalformedToolUseExhausted { retries } => {
            format!("stop_reason tool_use without a tool_use block, again after {retries} retries")
        }
        Stop::StopHookPrevented(h) | Stop::HookStopped(h) => {
            let mut line = format!("[{}] said continue: false", h.command);
            if let Some(id) = &h.tool_use_id {
                line.push_str(&format!(" after {id}"));
            }
            if let Some(reason) = &h.stop_reason {
                line.push_str(&format!(": {reason}"));
            }
            line
        }
        Stop::MaxBudgetUsd { cost_usd, budget_usd } => {
            format!("the run has cost ${cost_usd:.4}, reaching the ${budget_usd} budget")
        }
        Stop::Completed(Completion::StructuredOutput { tool_use_id }) => {
            format!("the StructuredOutput call {tool_use_id} passed validation, which ends the turn")
        }
        Stop::StructuredOutputRetryExhausted { attempts, last_error } => {
            format!("{attempts} StructuredOutput calls failed validation, the last with: {last_error}")
        }
        Stop::HookAnswerRejected { command, error } => {
            format!("the hook {command} answered for another event, which ends the session: {error}")
        }
    }
}

fn explain_failure(f: &ModelFailure) -> String {
    let status = f.status.map(|s| format!("{s} ")).unwrap_or_default();
    let mut line = format!("model request failed: {status}{}: {}", f.error_type, f.message);
    match (f.why_final.is_empty(), f.retries) {
        (true, _) => {}
        (false, 0) => line.push_str(&format!(" ({})", f.why_final)),
        (false, n) => line.push_str(&format!(" ({} after {n} retries)", f.why_final)),
    }
    line
}

/// The one wording of a compaction's result, wherever it is shown: `compacted the history
/// (auto): 170,000 → 2,100 tokens`.
pub fn compacted_line(trigger: &str, pre_tokens: u64, post_tokens: u64) -> String {
    format!("compacted the history ({trigger}): {} → {} tokens", thousands(pre_tokens), thousands(post_tokens))
}

/// The one wording of a failed compaction, wherever it is shown (`why`, the stream's warning).
pub fn compaction_failure_line(trigger: &str, failures: u32, breaker_open: bool, message: &str) -> String {
    let breaker = if breaker_open { "; auto-compaction is off for the rest of the run" } else { "" };
    format!("compaction ({trigger}) failed ({failures} in a row{breaker}): {message}")
}
