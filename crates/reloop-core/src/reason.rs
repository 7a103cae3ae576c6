//! Every reason the loop goes on or stops, in one place.
//!
//! A [`Reason`] is attached to each step that ends a phase of the loop: a continue reason when
//! the loop asks the model again, a terminal reason when it stops. Its [`Evidence`] records the
//! facts and guard values that made the decision, so `reloop why` can explain it.

use serde::{Deserialize, Serialize};

use crate::event::StopReason;

/// Why the loop asks the model again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContinueReason {
    /// The model asked for tools; their results go back in the next request.
    NextTurn,
    /// The response hit the output-token limit; the same request is repeated with a higher limit.
    MaxOutputTokensEscalate,
    /// The response hit the output-token limit; the model is asked to resume.
    MaxOutputTokensRecovery,
    /// The model announced a tool call but sent none; it is asked to retry once.
    MalformedToolCallRetry,
    /// The prompt was too long; the history was compacted and the request is retried.
    ReactiveCompactRetry,
    /// A stop hook refused to let the turn end.
    StopHookBlocking,
    /// The token budget is not spent yet.
    TokenBudgetContinuation,
    /// The user queued a message while the loop ran.
    QueuedInput,
}

/// Why the loop stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TerminalReason {
    Completed,
    MaxTurns,
    AbortedStreaming,
    AbortedTools,
    PromptTooLong,
    BlockingLimit,
    ModelError,
    StopHookPrevented,
    HookStopped,
    /// The run cost what `--max-budget-usd` allows.
    MaxBudgetUsd,
}

impl ContinueReason {
    pub fn as_str(self) -> &'static str {
        match self {
            ContinueReason::NextTurn => "next_turn",
            ContinueReason::MaxOutputTokensEscalate => "max_output_tokens_escalate",
            ContinueReason::MaxOutputTokensRecovery => "max_output_tokens_recovery",
            ContinueReason::MalformedToolCallRetry => "malformed_tool_call_retry",
            ContinueReason::ReactiveCompactRetry => "reactive_compact_retry",
            ContinueReason::StopHookBlocking => "stop_hook_blocking",
            ContinueReason::TokenBudgetContinuation => "token_budget_continuation",
            ContinueReason::QueuedInput => "queued_input",
        }
    }
}

impl TerminalReason {
    pub fn as_str(self) -> &'static str {
        match self {
            TerminalReason::Completed => "completed",
            TerminalReason::MaxTurns => "max_turns",
            TerminalReason::AbortedStreaming => "aborted_streaming",
            TerminalReason::AbortedTools => "aborted_tools",
            TerminalReason::PromptTooLong => "prompt_too_long",
            TerminalReason::BlockingLimit => "blocking_limit",
            TerminalReason::ModelError => "model_error",
            TerminalReason::StopHookPrevented => "stop_hook_prevented",
            TerminalReason::HookStopped => "hook_stopped",
            TerminalReason::MaxBudgetUsd => "max_budget_usd",
        }
    }

    /// Whether a run that ends this way is a failure for the caller (result `is_error`, exit 1).
    pub fn is_error(self) -> bool {
        // A hook that ends the run on purpose is not a failure.
        !matches!(self, TerminalReason::Completed | TerminalReason::StopHookPrevented | TerminalReason::HookStopped)
    }
}

/// A tool the model asked for, as evidence names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolRef {
    pub name: String,
    pub id: String,
}

/// The facts behind a decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "evidence", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Evidence {
    /// The response held `tool_use` blocks.
    ToolsRequested { tools: Vec<ToolRef> },
    /// The response asked for no tool and nothing held the turn open.
    NoToolRequested {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stop_reason: Option<StopReason>,
    },
    /// Another turn would exceed `--max-turns`.
    MaxTurns { max_turns: u32, turn_count: u32 },
    /// The caller aborted; these tool calls were answered as interrupted.
    Interrupted { tool_use_ids: Vec<String> },
    /// The model request failed for good.
    ModelFailure {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<u16>,
        error_type: String,
        message: String,
        /// Retries made before giving up.
        #[serde(default)]
        retries: u32,
        /// Why no retry was made: `not retryable`, `x-should-retry: false`, `retries exhausted`.
        #[serde(default)]
        why_final: String,
    },
    /// The response was cut by the output-token limit.
    OutputTruncated {
        /// The limit the cut response had.
        limit: u32,
        /// For a recovery: its number and the cap; for an escalation: the new limit.
        attempt: u32,
        of: u32,
    },
    /// The model announced a tool call and sent none.
    MalformedToolCall { retried: bool },
    /// Stop hooks refused to let the turn end.
    StopHookBlock { feedback: Vec<String>, block: u32, cap: u32 },
    /// Stop hooks blocked `cap` times in a row; the turn ended anyway.
    StopHookCap { cap: u32 },
    /// A hook said `continue: false`.
    HookPrevented {
        command: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stop_reason: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_use_id: Option<String>,
    },
    /// The history was compacted.
    Compacted { trigger: String, pre_tokens: u64, post_tokens: u64 },
    /// A compaction failed.
    CompactionFailed { trigger: String, failures: u32, message: String, breaker_open: bool },
    /// The prompt is at or above the blocking limit and nothing can compact it.
    TooLong { estimate: u64, limit: u64 },
    /// The user queued these messages while the model worked.
    QueuedInput { ids: Vec<String> },
    /// The run's cost reached the budget.
    BudgetReached { cost_usd: f64, budget_usd: f64 },
    /// The token budget's state when the loop decided.
    TokenBudget { pct: u64, turn_tokens: u64, budget: u64 },
    /// The budget says stop: returns diminished or the target was reached.
    TokenBudgetDone { pct: u64, turn_tokens: u64, budget: u64, diminishing: bool },
}

/// A continue or terminal decision with its evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Reason {
    Continue { reason: ContinueReason, evidence: Evidence },
    Terminal { reason: TerminalReason, evidence: Evidence },
}

impl Reason {
    /// `next_turn`, `completed`, ...
    pub fn name(&self) -> &'static str {
        match self {
            Reason::Continue { reason, .. } => reason.as_str(),
            Reason::Terminal { reason, .. } => reason.as_str(),
        }
    }

    pub fn is_terminal(&self) -> bool {
        matches!(self, Reason::Terminal { .. })
    }

    pub fn evidence(&self) -> &Evidence {
        match self {
            Reason::Continue { evidence, .. } | Reason::Terminal { evidence, .. } => evidence,
        }
    }

    /// One human line of evidence, as `reloop why` prints it after the reason's name.
    pub fn explain(&self) -> String {
        match self.evidence() {
            Evidence::ToolsRequested { tools } => {
                let names: Vec<String> = tools.iter().map(|t| format!("{} ({})", t.name, t.id)).collect();
                format!("the model asked for {}", names.join(", "))
            }
            Evidence::NoToolRequested { stop_reason } => match stop_reason {
                Some(r) => format!("the model asked for no tool (stop_reason {})", r.as_str()),
                None => "the model asked for no tool".to_string(),
            },
            Evidence::MaxTurns { max_turns, turn_count } => {
                format!("turn {turn_count} would exceed --max-turns {max_turns}")
            }
            Evidence::Interrupted { tool_use_ids } if tool_use_ids.is_empty() => {
                "the caller aborted the run".to_string()
            }
            Evidence::Interrupted { tool_use_ids } => {
                format!("the caller aborted the run; interrupted {}", tool_use_ids.join(", "))
            }
            Evidence::ModelFailure { status, error_type, message, retries, why_final } => {
                let status = status.map(|s| format!("{s} ")).unwrap_or_default();
                let mut line = format!("model request failed: {status}{error_type}: {message}");
                match (why_final.is_empty(), retries) {
                    (true, _) => {}
                    (false, 0) => line.push_str(&format!(" ({why_final})")),
                    (false, n) => line.push_str(&format!(" ({why_final} after {n} retries)")),
                }
                line
            }
            Evidence::OutputTruncated { limit, attempt, of } => match self {
                Reason::Continue { reason: ContinueReason::MaxOutputTokensEscalate, .. } => {
                    format!("output cut at {limit} tokens; repeating the request with max_tokens {of}")
                }
                Reason::Terminal { .. } => {
                    format!("output cut at {limit} tokens; recovery exhausted ({attempt} of {of})")
                }
                _ => format!("output cut at {limit} tokens; asked the model to resume (attempt {attempt} of {of})"),
            },
            Evidence::MalformedToolCall { retried: false } => {
                "stop_reason tool_use without a tool_use block; asked the model to retry (once per turn)".to_string()
            }
            Evidence::MalformedToolCall { retried: true } => {
                "stop_reason tool_use without a tool_use block, again after the retry".to_string()
            }
            Evidence::StopHookBlock { feedback, block, cap } => {
                format!("{} (block {block} of {cap})", feedback.join("; "))
            }
            Evidence::StopHookCap { cap } => crate::hook::stop_hook_cap_warning(*cap),
            Evidence::HookPrevented { command, stop_reason, tool_use_id } => {
                let mut line = format!("[{command}] said continue: false");
                if let Some(id) = tool_use_id {
                    line.push_str(&format!(" after {id}"));
                }
                if let Some(reason) = stop_reason {
                    line.push_str(&format!(": {reason}"));
                }
                line
            }
            Evidence::Compacted { trigger, pre_tokens, post_tokens } => format!(
                "prompt is too long; compacted the history ({trigger}): {} → {} tokens, retrying",
                thousands(*pre_tokens),
                thousands(*post_tokens)
            ),
            Evidence::CompactionFailed { trigger, failures, message, breaker_open } => {
                let breaker = if *breaker_open { "; auto-compaction stops trying" } else { "" };
                format!("compaction ({trigger}) failed ({failures} in a row{breaker}): {message}")
            }
            Evidence::TooLong { estimate, limit } => format!(
                "the request would hold about {} tokens, at or above the blocking limit of {}, and nothing can be compacted",
                thousands(*estimate),
                thousands(*limit)
            ),
            Evidence::QueuedInput { ids } => format!("the user queued {} while the model worked", ids.join(", ")),
            Evidence::BudgetReached { cost_usd, budget_usd } => {
                format!("the run has cost ${cost_usd:.4}, reaching the ${budget_usd} budget")
            }
            Evidence::TokenBudget { pct, turn_tokens, budget } => {
                format!("{pct}% of {} ({} output tokens so far)", thousands(*budget), thousands(*turn_tokens))
            }
            Evidence::TokenBudgetDone { pct, turn_tokens, budget, diminishing } => {
                let why = if *diminishing { "returns diminished" } else { "target reached" };
                format!("{why} at {pct}% of {} ({} output tokens)", thousands(*budget), thousands(*turn_tokens))
            }
        }
    }
}

/// `1234567` → `1,234,567`, as Claude Code prints token counts.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
