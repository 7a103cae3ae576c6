//! What Claude Code was seen to decide, as its transcript shows it, kept apart from the inputs it
//! decided on (the model's answers, the tools' results, the hooks' outcomes, which become the
//! [`reloop_core::Event`]s). A check of a profile's rules feeds the inputs to the engine and
//! compares the engine's decisions with these, one by one.

use serde::Serialize;

/// One decision of Claude Code's loop, where the transcript shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Observation {
    /// The 1-based line of the transcript that shows it.
    pub line: usize,
    /// The import's step (1-based) the engine took its own decision in, if the import fed the
    /// inputs that far: the decision to compare with.
    pub seq: Option<u64>,
    /// What was decided.
    #[serde(flatten)]
    pub decision: Decision,
}

/// Where an interrupt landed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Interrupted {
    /// While the model answered (`[Request interrupted by user]`).
    Streaming,
    /// While tools ran, or at a permission prompt (`... for tool use]`).
    Tools,
}

/// A decision of Claude Code's loop.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Decision {
    /// The tools' results went back to the model: a new turn.
    NextTurn,
    /// A Stop hook blocked the end of the turn and the model was asked again; `block` counts the
    /// consecutive blocks of this turn, as the transcript shows them.
    StopHookBlocked {
        /// 1 for the first block of a turn.
        block: u32,
    },
    /// The Stop hooks let the turn end (`stop_hook_summary`).
    StopHooksPassed,
    /// A Stop hook ended the run (`preventedContinuation`).
    StopHookPrevented {
        /// Its `stopReason`.
        stop_reason: Option<String>,
    },
    /// The answer was cut at the output limit and the model was told to resume.
    MaxTokensResume,
    /// The stream broke after part of the answer; it was kept and the model told to resume.
    CutStreamResume,
    /// The model announced a tool call it did not make, and was told to retry.
    MalformedToolCallRetry,
    /// The history was compacted.
    Compacted {
        /// `auto` or `manual`.
        trigger: Option<String>,
        /// Claude Code's count of the tokens before it.
        pre_tokens: Option<u64>,
    },
    /// A request failed and Claude Code retried it (`system`/`api_error`).
    Retried {
        /// The retry's number, from 1.
        attempt: u32,
        /// The retries allowed.
        max_retries: u32,
        /// The failure's HTTP status.
        status: Option<u16>,
        /// The failure's type.
        error_type: String,
    },
    /// A request failed and Claude Code gave up on it (an API error line).
    ModelError {
        /// The HTTP status, when the text names one.
        status: Option<u16>,
        /// The error's type.
        error_type: String,
    },
    /// The output limit ran out after the resumes (`... exceeded the N output token maximum`).
    OutputTokensExhausted {
        /// The limit the error names.
        limit: u32,
    },
    /// The run ended with an error line of the loop's own (the malformed-call retries ran out).
    EndedWithError {
        /// The engine's terminal reason for the same stop.
        reason: String,
    },
    /// Claude Code switched to its fallback model (`model_fallback`).
    ModelFallback,
    /// The run stopped at `--max-turns` (the `max_turns_reached` attachment).
    MaxTurns {
        /// The limit.
        max_turns: u32,
    },
    /// The person interrupted.
    Interrupted {
        /// Where.
        during: Interrupted,
    },
    /// A call was refused before it ran (permission rules, the mode, or the person).
    PermissionDenied {
        /// The call.
        tool_use_id: String,
    },
    /// A call's input was rejected before it ran (`InputValidationError`, unparsable JSON).
    ToolInputRejected {
        /// The call.
        tool_use_id: String,
    },
    /// The turn ended: a new prompt followed, or the transcript ends there.
    Completed,
}
