//! The typed reasons: each continue and stop variant with its own evidence, and the mapping to
//! and from the flat [`Evidence`] the journal keeps.

use serde::{Deserialize, Serialize};

use super::{mismatch, ContinueReason, Evidence, TerminalReason, ToolRef};
use crate::event::StopReason;

/// Why the loop asks the model again, with the evidence of that reason alone.
#[derive(Debug, Clone, PartialEq)]
pub enum Continue {
    /// The model asked for these tools; their results go back in the next request.
    NextTurn {
        /// The calls.
        tools: Vec<ToolRef>,
    },
    /// Cut by `max_tokens`: the same request again with a higher limit.
    MaxOutputTokensEscalate {
        /// The limit the cut response had.
        limit: u32,
        /// Always 1: a request is escalated once.
        attempt: u32,
        /// The new limit.
        to: u32,
    },
    /// Cut by `max_tokens`: the model is asked to resume.
    MaxOutputTokensRecovery {
        /// The limit the cut response had.
        limit: u32,
        /// This recovery's number ...
        attempt: u32,
        /// ... of at most this many in a row.
        of: u32,
    },
    /// `stop_reason: tool_use` without a `tool_use` block: the model is asked to retry.
    MalformedToolCallRetry,
    /// The stream broke after part of the answer arrived: it is kept and the model is asked to
    /// resume from it (2.1.332).
    CutStreamResume {
        /// This resume's number (a retry of the request) ...
        attempt: u32,
        /// ... of at most this many.
        of: u32,
    },
    /// "Prompt is too long": the history was compacted and the request is retried.
    ReactiveCompactRetry {
        /// Tokens before.
        pre_tokens: u64,
        /// Tokens after.
        post_tokens: u64,
    },
    /// A Stop hook refused to let the turn end.
    StopHookBlocking {
        /// Each blocking hook's feedback line.
        feedback: Vec<String>,
        /// This block's number in a row ...
        block: u32,
        /// ... of at most this many.
        cap: u32,
    },
    /// The token budget is not spent yet.
    TokenBudgetContinuation {
        /// Percent of the budget spent.
        pct: u64,
        /// Output tokens of the query so far.
        turn_tokens: u64,
        /// The budget.
        budget: u64,
    },
    /// The model answered without the `StructuredOutput` call the session needs.
    StructuredOutputEnforce,
    /// The model finished while the user had queued these messages.
    QueuedInput {
        /// The queued messages' ids.
        ids: Vec<String>,
    },
}

/// Why the loop stopped, with the evidence of that reason alone.
#[derive(Debug, Clone, PartialEq)]
pub enum Stop {
    /// Nothing held the turn open.
    Completed(Completion),
    /// Another turn would exceed `--max-turns`.
    MaxTurns {
        /// The limit.
        max_turns: u32,
        /// The turn that would have started.
        turn_count: u32,
    },
    /// The caller aborted while the model streamed, a retry waited or hooks ran.
    AbortedStreaming {
        /// Calls of the partial response, answered as interrupted.
        tool_use_ids: Vec<String>,
    },
    /// The caller aborted while tools ran.
    AbortedTools {
        /// Calls answered as interrupted.
        tool_use_ids: Vec<String>,
    },
    /// The prompt cannot be made to fit.
    PromptTooLong(TooLong),
    /// The estimate is at the blocking limit and nothing can compact.
    BlockingLimit {
        /// The request's estimated tokens.
        estimate: u64,
        /// The blocking limit.
        limit: u64,
    },
    /// The model could not give a usable answer.
    ModelError(Failure),
    /// A Stop hook said `continue: false`.
    StopHookPrevented(HookPrevented),
    /// A tool hook said `continue: false`; the turn's tools still ran.
    HookStopped(HookPrevented),
    /// The run cost what `--max-budget-usd` allows.
    MaxBudgetUsd {
        /// What it cost.
        cost_usd: f64,
        /// The budget.
        budget_usd: f64,
    },
    /// The model's tool calls stayed malformed after the profile's retries (Claude Code 2.1.332
    /// ends so; older profiles end as [`Failure::MalformedToolCall`]).
    MalformedToolUseExhausted {
        /// Retries made.
        retries: u32,
    },
    /// Every `StructuredOutput` call allowed failed validation.
    StructuredOutputRetryExhausted {
        /// Calls made.
        attempts: u32,
        /// The last call's validation error, as the model saw it.
        last_error: String,
    },
    /// A callback hook (the Agent SDK's) answered with a `hookSpecificOutput` naming another
    /// event than the one it ran for; Claude Code throws on it and the session ends
    /// ([`crate::Flag::CallbackEventNameChecked`]).
    HookAnswerRejected {
        /// The hook (`callback:<id>`).
        command: String,
        /// Claude Code's error text, which the result's `errors` carry.
        error: String,
    },
}

/// How a loop completed.
#[derive(Debug, Clone, PartialEq)]
pub enum Completion {
    /// The model asked for no tool and nothing held the turn open.
    NoToolRequested {
        /// The API's `stop_reason`.
        stop_reason: Option<StopReason>,
    },
    /// Stop hooks blocked `cap` times in a row; the turn ended anyway.
    StopHookCap {
        /// The cap.
        cap: u32,
    },
    /// The token budget says stop.
    TokenBudgetDone {
        /// Percent of the budget spent.
        pct: u64,
        /// Output tokens of the query.
        turn_tokens: u64,
        /// The budget.
        budget: u64,
        /// Returns diminished (else the target was reached).
        diminishing: bool,
    },
    /// A `StructuredOutput` call passed validation, which ends the turn.
    StructuredOutput {
        /// The call, whose input is the answer.
        tool_use_id: String,
    },
    /// A manual compaction (`reloop compact`) of a stopped conversation finished.
    Compacted {
        /// Tokens before.
        pre_tokens: u64,
        /// Tokens after.
        post_tokens: u64,
    },
}

/// Why a prompt cannot be made to fit.
#[derive(Debug, Clone, PartialEq)]
pub enum TooLong {
    /// The API refused it and compaction could not help.
    Refused(ModelFailure),
    /// The compaction the retry needed failed.
    CompactionFailed(CompactionFailure),
}

/// Why the model gave no usable answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// The request failed for good.
    Request(ModelFailure),
    /// Output-token recovery is exhausted.
    OutputTokensExhausted {
        /// The limit the cut response had.
        limit: u32,
        /// Recoveries made ...
        attempt: u32,
        /// ... of at most this many.
        of: u32,
    },
    /// A malformed tool call again after the retry.
    MalformedToolCall,
    /// A manual compaction failed.
    CompactionFailed(CompactionFailure),
}

/// A model request that failed for good (journaled as the `model_failure` evidence).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelFailure {
    /// The HTTP status, if the server answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// The error's type.
    pub error_type: String,
    /// The error's message.
    pub message: String,
    /// Retries made before giving up.
    #[serde(default)]
    pub retries: u32,
    /// Why no retry was made: `not retryable`, `x-should-retry: false`, `retries exhausted`, ...
    #[serde(default)]
    pub why_final: String,
    /// The server's `request-id` of the failed request, when it sent one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// A failed compaction (journaled as the `compaction_failed` evidence).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompactionFailure {
    /// `auto`, `reactive` or `manual`.
    pub trigger: String,
    /// Failures in a row.
    pub failures: u32,
    /// The summary request's error.
    pub message: String,
    /// Auto-compaction stops trying.
    pub breaker_open: bool,
}

/// A hook that said `continue: false` (journaled as the `hook_prevented` evidence).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookPrevented {
    /// The hook's command.
    pub command: String,
    /// Its `stopReason`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// The call, for a tool hook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
}

impl CompactionFailure {
    /// The one wording of a failed compaction, wherever it is shown.
    pub fn line(&self) -> String {
        super::compaction_failure_line(&self.trigger, self.failures, self.breaker_open, &self.message)
    }
}

/// Generates a typed enum's `reason`, `evidence` and `from_wire` from one table: each row pairs
/// a variant with its reason's name and its flat evidence, written as patterns that read both
/// ways (`where` names an evidence field that holds a fixed text). The three mappings are then
/// one list, and cannot disagree.
macro_rules! wire_table {
    ($typed:ident, $name:ident: $([$($t:tt)*] => $reason:ident, [$($e:tt)*] $(where $var:ident = $lit:literal)?;)*) => {
        impl $typed {
            /// The reason's name.
            #[allow(unused_variables)] // a row's fields are named for the other two mappings
            pub fn reason(&self) -> $name {
                match self {
                    $($($t)* => $name::$reason,)*
                }
            }

            /// The flat evidence, as journaled.
            pub fn evidence(&self) -> Evidence {
                match self.clone() {
                    $($($t)* => {
                        $(let $var = String::from($lit);)?
                        $($e)*
                    })*
                }
            }

            /// The typed form of a journaled reason and evidence, or why they cannot pair.
            pub(crate) fn from_wire(reason: $name, evidence: Evidence) -> Result<Self, String> {
                Ok(match (reason, evidence) {
                    $(($name::$reason, $($e)*) $(if $var == $lit)? => $($t)*,)*
                    (reason, evidence) => return Err(mismatch(reason.as_str(), &evidence)),
                })
            }
        }
    };
}

wire_table! { Continue, ContinueReason:
    [Continue::NextTurn { tools }] => NextTurn, [Evidence::ToolsRequested { tools }];
    [Continue::MaxOutputTokensEscalate { limit, attempt, to }] => MaxOutputTokensEscalate,
        [Evidence::OutputTruncated { limit, attempt, of: to }];
    [Continue::MaxOutputTokensRecovery { limit, attempt, of }] => MaxOutputTokensRecovery,
        [Evidence::OutputTruncated { limit, attempt, of }];
    [Continue::MalformedToolCallRetry] => MalformedToolCallRetry, [Evidence::MalformedToolCall { retried: false }];
    [Continue::ReactiveCompactRetry { pre_tokens, post_tokens }] => ReactiveCompactRetry,
        [Evidence::Compacted { trigger, pre_tokens, post_tokens }] where trigger = "reactive";
    [Continue::StopHookBlocking { feedback, block, cap }] => StopHookBlocking,
        [Evidence::StopHookBlock { feedback, block, cap }];
    [Continue::TokenBudgetContinuation { pct, turn_tokens, budget }] => TokenBudgetContinuation,
        [Evidence::TokenBudget { pct, turn_tokens, budget }];
    [Continue::QueuedInput { ids }] => QueuedInput, [Evidence::QueuedInput { ids }];
    [Continue::CutStreamResume { attempt, of }] => CutStreamResume, [Evidence::StreamCut { attempt, of }];
    [Continue::StructuredOutputEnforce] => StructuredOutputEnforce, [Evidence::StructuredOutputMissing];
}

wire_table! { Stop, TerminalReason:
    [Stop::Completed(Completion::NoToolRequested { stop_reason })] => Completed,
        [Evidence::NoToolRequested { stop_reason }];
    [Stop::Completed(Completion::StopHookCap { cap })] => Completed, [Evidence::StopHookCap { cap }];
    [Stop::Completed(Completion::TokenBudgetDone { pct, turn_tokens, budget, diminishing })] => Completed,
        [Evidence::TokenBudgetDone { pct, turn_tokens, budget, diminishing }];
    [Stop::Completed(Completion::Compacted { pre_tokens, post_tokens })] => Completed,
        [Evidence::Compacted { trigger, pre_tokens, post_tokens }] where trigger = "manual";
    [Stop::MaxTurns { max_turns, turn_count }] => MaxTurns, [Evidence::MaxTurns { max_turns, turn_count }];
    [Stop::AbortedStreaming { tool_use_ids }] => AbortedStreaming, [Evidence::Interrupted { tool_use_ids }];
    [Stop::AbortedTools { tool_use_ids }] => AbortedTools, [Evidence::Interrupted { tool_use_ids }];
    [Stop::PromptTooLong(TooLong::Refused(f))] => PromptTooLong, [Evidence::ModelFailure(f)];
    [Stop::PromptTooLong(TooLong::CompactionFailed(c))] => PromptTooLong, [Evidence::CompactionFailed(c)];
    [Stop::BlockingLimit { estimate, limit }] => BlockingLimit, [Evidence::TooLong { estimate, limit }];
    [Stop::ModelError(Failure::Request(f))] => ModelError, [Evidence::ModelFailure(f)];
    [Stop::ModelError(Failure::OutputTokensExhausted { limit, attempt, of })] => ModelError,
        [Evidence::OutputTruncated { limit, attempt, of }];
    [Stop::ModelError(Failure::MalformedToolCall)] => ModelError, [Evidence::MalformedToolCall { retried: true }];
    [Stop::ModelError(Failure::CompactionFailed(c))] => ModelError, [Evidence::CompactionFailed(c)];
    [Stop::StopHookPrevented(h)] => StopHookPrevented, [Evidence::HookPrevented(h)];
    [Stop::HookStopped(h)] => HookStopped, [Evidence::HookPrevented(h)];
    [Stop::MaxBudgetUsd { cost_usd, budget_usd }] => MaxBudgetUsd, [Evidence::BudgetReached { cost_usd, budget_usd }];
    [Stop::MalformedToolUseExhausted { retries }] => MalformedToolUseExhausted,
        [Evidence::MalformedToolCallExhausted { retries }];
    [Stop::Completed(Completion::StructuredOutput { tool_use_id })] => Completed,
        [Evidence::StructuredOutput { tool_use_id }];
    [Stop::StructuredOutputRetryExhausted { attempts, last_error }] => StructuredOutputRetryExhausted,
        [Evidence::StructuredOutputInvalid { attempts, last_error }];
    [Stop::HookAnswerRejected { command, error }] => HookAnswerRejected,
        [Evidence::HookAnswerRejected { command, error }];
}
