//! Every reason the loop goes on or stops, in one place.
//!
//! A [`Reason`] is attached to each step that ends a phase of the loop: a [`Continue`] when the
//! loop asks the model again, a [`Stop`] when it stops. Each variant carries its own evidence —
//! the facts and guard values that made the decision — so an impossible pairing (a manual
//! compaction explained as a retry, a `next_turn` with an abort's evidence) cannot be built.
//!
//! The journal keeps the flat form it always had (`{"kind", "reason", "evidence": {...}}`, with
//! [`Evidence`] as the tagged evidence); reading it back checks the pairing, so a journal that
//! holds an impossible one is refused with the reason, not replayed into a wrong explanation.

use serde::{Deserialize, Serialize};

use crate::event::StopReason;

/// Why the loop asks the model again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, strum::IntoStaticStr)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
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
    /// The stream broke after part of the answer arrived; the model is asked to resume from it.
    CutStreamResume,
    /// The model answered without the `StructuredOutput` call the session needs; it is asked
    /// for it.
    StructuredOutputEnforce,
}

/// Why the loop stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, strum::IntoStaticStr)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum TerminalReason {
    /// Nothing held the turn open.
    Completed,
    /// Another turn would exceed `--max-turns`.
    MaxTurns,
    /// The caller aborted while the model streamed (or a retry waited, or hooks ran).
    AbortedStreaming,
    /// The caller aborted while tools ran.
    AbortedTools,
    /// The prompt cannot be made to fit.
    PromptTooLong,
    /// The estimate is at the blocking limit and nothing can compact.
    BlockingLimit,
    /// The model could not give a usable answer.
    ModelError,
    /// A Stop hook said `continue: false`.
    StopHookPrevented,
    /// A tool hook said `continue: false`.
    HookStopped,
    /// The run cost what `--max-budget-usd` allows.
    MaxBudgetUsd,
    /// The model's tool calls stayed malformed after every retry the profile allows.
    MalformedToolUseExhausted,
    /// The model's `StructuredOutput` calls stayed invalid after every attempt allowed.
    StructuredOutputRetryExhausted,
    /// A callback hook's answer named another event: the session ends, as Claude Code's crashes.
    HookAnswerRejected,
}

impl ContinueReason {
    /// The reason as journaled.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

impl TerminalReason {
    /// The reason as journaled.
    pub fn as_str(self) -> &'static str {
        self.into()
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
    /// The tool.
    pub name: String,
    /// The call.
    pub id: String,
}

/// The facts behind a decision, in the flat form the journal and `why --json` show.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "evidence", rename_all = "snake_case")]
#[allow(missing_docs)] // the fields are documented on the typed variants of `Continue` and `Stop`
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
    ModelFailure(ModelFailure),
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
    /// The stream broke after part of the answer arrived: resume `attempt` of at most `of`.
    StreamCut { attempt: u32, of: u32 },
    /// The model's tool calls stayed malformed after this many retries.
    MalformedToolCallExhausted { retries: u32 },
    /// Stop hooks refused to let the turn end.
    StopHookBlock { feedback: Vec<String>, block: u32, cap: u32 },
    /// Stop hooks blocked `cap` times in a row; the turn ended anyway.
    StopHookCap { cap: u32 },
    /// A hook said `continue: false`.
    HookPrevented(HookPrevented),
    /// The history was compacted.
    Compacted { trigger: String, pre_tokens: u64, post_tokens: u64 },
    /// A compaction failed.
    CompactionFailed(CompactionFailure),
    /// A summary request was too long and went again with its head cut.
    CompactionRetried { trigger: String, message: String },
    /// The prompt is at or above the blocking limit and nothing can compact it.
    TooLong { estimate: u64, limit: u64 },
    /// The user queued these messages while the model worked.
    QueuedInput { ids: Vec<String> },
    /// The run's cost reached the budget.
    BudgetReached { cost_usd: f64, budget_usd: f64 },
    /// A `StructuredOutput` call passed validation: the answer is its input.
    StructuredOutput { tool_use_id: String },
    /// The model answered without calling `StructuredOutput`.
    StructuredOutputMissing,
    /// `StructuredOutput` calls failed validation `attempts` times; the last error.
    StructuredOutputInvalid { attempts: u32, last_error: String },
    /// A callback hook answered for another event; Claude Code's error text.
    HookAnswerRejected { command: String, error: String },
    /// The token budget's state when the loop decided.
    TokenBudget { pct: u64, turn_tokens: u64, budget: u64 },
    /// The budget says stop: returns diminished or the target was reached.
    TokenBudgetDone { pct: u64, turn_tokens: u64, budget: u64, diminishing: bool },
}

mod explain;
mod typed;

pub use explain::{compacted_line, compaction_failure_line};
pub use typed::{CompactionFailure, Completion, Continue, Failure, HookPrevented, ModelFailure, Stop, TooLong};

fn mismatch(reason: &str, evidence: &Evidence) -> String {
    let tag = serde_json::to_value(evidence)
        .ok()
        .and_then(|v| v.get("evidence").and_then(|e| e.as_str()).map(str::to_string))
        .unwrap_or_default();
    format!("the reason {reason} cannot carry {tag} evidence")
}

/// A continue or terminal decision with its evidence.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "ReasonWire")]
pub enum Reason {
    /// The loop asks the model again.
    Continue(Continue),
    /// The loop stops.
    Terminal(Stop),
}

/// The journaled form of a [`Reason`].
#[derive(Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum ReasonWire {
    Continue { reason: ContinueReason, evidence: Evidence },
    Terminal { reason: TerminalReason, evidence: Evidence },
}

/// Written as its `ReasonWire`, built from a borrow: serde's `into` would clone the whole
/// reason first, and replay serializes a reason at every decision to compare it.
impl Serialize for Reason {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // A turn's tools, the reason of nearly every step that has one, are written from a
        // borrow: the wire form would copy each tool's name and id to write them once.
        if let Reason::Continue(Continue::NextTurn { tools }) = self {
            return NextTurnWire::Continue {
                reason: ContinueReason::NextTurn,
                evidence: ToolsRequested::ToolsRequested { tools },
            }
            .serialize(serializer);
        }
        self.wire().serialize(serializer)
    }
}

/// `ReasonWire` of a `next_turn`, borrowing its tools: the same fields, so the same JSON and
/// the same digest input.
#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum NextTurnWire<'a> {
    Continue { reason: ContinueReason, evidence: ToolsRequested<'a> },
}

/// `Evidence::ToolsRequested`, borrowed.
#[derive(Serialize)]
#[serde(tag = "evidence", rename_all = "snake_case")]
enum ToolsRequested<'a> {
    ToolsRequested { tools: &'a [ToolRef] },
}

impl Reason {
    fn wire(&self) -> ReasonWire {
        match self {
            Reason::Continue(c) => ReasonWire::Continue { reason: c.reason(), evidence: c.evidence() },
            Reason::Terminal(s) => ReasonWire::Terminal { reason: s.reason(), evidence: s.evidence() },
        }
    }
}

impl TryFrom<ReasonWire> for Reason {
    type Error = String;

    fn try_from(wire: ReasonWire) -> Result<Self, String> {
        match wire {
            ReasonWire::Continue { reason, evidence } => Continue::from_wire(reason, evidence).map(Reason::Continue),
            ReasonWire::Terminal { reason, evidence } => Stop::from_wire(reason, evidence).map(Reason::Terminal),
        }
    }
}

impl Reason {
    /// `next_turn`, `completed`, ...
    pub fn name(&self) -> &'static str {
        match self {
            Reason::Continue(c) => c.reason().as_str(),
            Reason::Terminal(s) => s.reason().as_str(),
        }
    }

    /// The loop stops.
    pub fn is_terminal(&self) -> bool {
        matches!(self, Reason::Terminal(_))
    }

    /// The continue reason's name, for a continue.
    pub fn continue_reason(&self) -> Option<ContinueReason> {
        match self {
            Reason::Continue(c) => Some(c.reason()),
            Reason::Terminal(_) => None,
        }
    }

    /// The terminal reason's name, for a stop.
    pub fn terminal_reason(&self) -> Option<TerminalReason> {
        match self {
            Reason::Continue(_) => None,
            Reason::Terminal(s) => Some(s.reason()),
        }
    }

    /// The flat evidence, as journaled and as `why --json` shows it.
    pub fn evidence(&self) -> Evidence {
        match self {
            Reason::Continue(c) => c.evidence(),
            Reason::Terminal(s) => s.evidence(),
        }
    }

    /// One human line of evidence, as `reloop why` prints it after the reason's name: one
    /// wording per fact.
    pub fn explain(&self) -> String {
        match self {
            Reason::Continue(c) => explain::explain_continue(c),
            Reason::Terminal(s) => explain::explain_stop(s),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_next_turn_written_from_a_borrow_is_its_wire_form_in_json_and_in_the_digest() {
        for n in [0, 1, 3] {
            let tools = (0..n).map(|i| ToolRef { name: format!("Tool{i}"), id: format!("toolu_{i}\"") }).collect();
            let reason = Reason::Continue(Continue::NextTurn { tools });
            assert_eq!(serde_json::to_string(&reason).unwrap(), serde_json::to_string(&reason.wire()).unwrap());
            for version in [1, crate::digest::WORDS_FROM, crate::digest::TYPED_FROM] {
                let digest = |value: &dyn Fn(&mut crate::Digest)| {
                    let mut d = crate::Digest::for_version(version);
                    value(&mut d);
                    d.finish()
                };
                assert_eq!(
                    digest(&|d| d.value(&reason)),
                    digest(&|d| d.value(&reason.wire())),
                    "{n} tools, v{version}"
                );
            }
        }
    }

    #[test]
    fn a_continue_reasons_name_is_its_json_string() {
        // The digest writes the name between quotes instead of serializing the reason.
        use ContinueReason::*;
        let all = [
            NextTurn,
            MaxOutputTokensEscalate,
            MaxOutputTokensRecovery,
            MalformedToolCallRetry,
            ReactiveCompactRetry,
            StopHookBlocking,
            TokenBudgetContinuation,
            QueuedInput,
            CutStreamResume,
            StructuredOutputEnforce,
        ];
        for reason in all {
            // A new reason must be added above: this match has no arm for it.
            match reason {
                NextTurn
                | MaxOutputTokensEscalate
                | MaxOutputTokensRecovery
                | MalformedToolCallRetry
                | ReactiveCompactRetry
                | StopHookBlocking
                | TokenBudgetContinuation
                | QueuedInput
                | CutStreamResume
                | StructuredOutputEnforce => {}
            }
            assert_eq!(serde_json::to_string(&reason).unwrap(), format!("\"{}\"", reason.as_str()));
        }
    }

    #[test]
    fn the_journaled_form_is_the_flat_one_and_reads_back_typed() {
        let reason =
            Reason::Continue(Continue::NextTurn { tools: vec![ToolRef { name: "Read".into(), id: "t1".into() }] });
        let json = serde_json::to_string(&reason).unwrap();
        assert_eq!(
            json,
            r#"{"kind":"continue","reason":"next_turn","evidence":{"evidence":"tools_requested","tools":[{"name":"Read","id":"t1"}]}}"#
        );
        assert_eq!(serde_json::from_str::<Reason>(&json).unwrap(), reason);
    }

    #[test]
    fn evidence_held_as_a_typed_struct_journals_flat_and_reads_old_rows() {
        for json in [
            r#"{"kind":"terminal","reason":"model_error","evidence":{"evidence":"model_failure","status":529,"error_type":"overloaded_error","message":"m","retries":2,"why_final":"retries exhausted"}}"#,
            r#"{"kind":"terminal","reason":"prompt_too_long","evidence":{"evidence":"compaction_failed","trigger":"reactive","failures":1,"message":"m","breaker_open":false}}"#,
            r#"{"kind":"terminal","reason":"hook_stopped","evidence":{"evidence":"hook_prevented","command":"c","stop_reason":"s","tool_use_id":"t"}}"#,
            r#"{"kind":"terminal","reason":"stop_hook_prevented","evidence":{"evidence":"hook_prevented","command":"c"}}"#,
        ] {
            let reason: Reason = serde_json::from_str(json).unwrap();
            assert_eq!(serde_json::to_string(&reason).unwrap(), json);
        }
        // Rows written before `retries` and `why_final` existed read with their defaults.
        let old = r#"{"kind":"terminal","reason":"model_error","evidence":{"evidence":"model_failure","error_type":"api_error","message":"m"}}"#;
        let Reason::Terminal(Stop::ModelError(Failure::Request(failure))) = serde_json::from_str(old).unwrap() else {
            panic!("a model failure")
        };
        assert_eq!((failure.status, failure.retries, failure.why_final.as_str()), (None, 0, ""));
    }

    #[test]
    fn every_typed_reason_journals_under_its_name_and_reads_back_the_same() {
        let failure = ModelFailure {
            status: Some(400),
            error_type: "invalid_request_error".into(),
            message: "m".into(),
            retries: 1,
            why_final: "not retryable".into(),
            request_id: Some("req_1".into()),
        };
        let compaction =
            CompactionFailure { trigger: "auto".into(), failures: 3, message: "m".into(), breaker_open: true };
        let hook = HookPrevented { command: "c".into(), stop_reason: Some("s".into()), tool_use_id: None };
        let continues = [
            (Continue::NextTurn { tools: vec![ToolRef { name: "Read".into(), id: "t".into() }] }, "next_turn"),
            (Continue::MaxOutputTokensEscalate { limit: 1, attempt: 1, to: 2 }, "max_output_tokens_escalate"),
            (Continue::MaxOutputTokensRecovery { limit: 1, attempt: 2, of: 3 }, "max_output_tokens_recovery"),
            (Continue::MalformedToolCallRetry, "malformed_tool_call_retry"),
            (Continue::ReactiveCompactRetry { pre_tokens: 2, post_tokens: 1 }, "reactive_compact_retry"),
            (Continue::StopHookBlocking { feedback: vec!["f".into()], block: 1, cap: 8 }, "stop_hook_blocking"),
            (Continue::TokenBudgetContinuation { pct: 1, turn_tokens: 2, budget: 3 }, "token_budget_continuation"),
            (Continue::QueuedInput { ids: vec!["q".into()] }, "queued_input"),
            (Continue::StructuredOutputEnforce, "structured_output_enforce"),
        ];
        let stops = [
            (Stop::Completed(Completion::NoToolRequested { stop_reason: Some(StopReason::EndTurn) }), "completed"),
            (Stop::Completed(Completion::StopHookCap { cap: 8 }), "completed"),
            (
                Stop::Completed(Completion::TokenBudgetDone { pct: 1, turn_tokens: 2, budget: 3, diminishing: true }),
                "completed",
            ),
            (Stop::Completed(Completion::Compacted { pre_tokens: 2, post_tokens: 1 }), "completed"),
            (Stop::MaxTurns { max_turns: 1, turn_count: 2 }, "max_turns"),
            (Stop::AbortedStreaming { tool_use_ids: vec!["t".into()] }, "aborted_streaming"),
            (Stop::AbortedTools { tool_use_ids: vec![] }, "aborted_tools"),
            (Stop::PromptTooLong(TooLong::Refused(failure.clone())), "prompt_too_long"),
            (Stop::PromptTooLong(TooLong::CompactionFailed(compaction.clone())), "prompt_too_long"),
            (Stop::BlockingLimit { estimate: 2, limit: 1 }, "blocking_limit"),
            (Stop::ModelError(Failure::Request(failure)), "model_error"),
            (Stop::ModelError(Failure::OutputTokensExhausted { limit: 1, attempt: 3, of: 3 }), "model_error"),
            (Stop::ModelError(Failure::MalformedToolCall), "model_error"),
            (Stop::ModelError(Failure::CompactionFailed(compaction)), "model_error"),
            (Stop::StopHookPrevented(hook.clone()), "stop_hook_prevented"),
            (Stop::HookStopped(hook), "hook_stopped"),
            (Stop::MaxBudgetUsd { cost_usd: 1.5, budget_usd: 1.0 }, "max_budget_usd"),
            (Stop::MalformedToolUseExhausted { retries: 2 }, "malformed_tool_use_exhausted"),
            (Stop::Completed(Completion::StructuredOutput { tool_use_id: "t".into() }), "completed"),
            (
                Stop::StructuredOutputRetryExhausted { attempts: 5, last_error: "e".into() },
                "structured_output_retry_exhausted",
            ),
        ];
        let reasons = continues
            .into_iter()
            .map(|(c, name)| (Reason::Continue(c), name))
            .chain(stops.into_iter().map(|(s, name)| (Reason::Terminal(s), name)));
        for (reason, name) in reasons {
            assert_eq!(reason.name(), name);
            let json = serde_json::to_string(&reason).unwrap();
            assert_eq!(serde_json::from_str::<Reason>(&json).unwrap(), reason, "{json}");
        }
    }

    #[test]
    fn an_impossible_pairing_in_a_journal_is_refused() {
        let json =
            r#"{"kind":"continue","reason":"next_turn","evidence":{"evidence":"interrupted","tool_use_ids":[]}}"#;
        let error = serde_json::from_str::<Reason>(json).unwrap_err().to_string();
        assert!(error.contains("the reason next_turn cannot carry interrupted evidence"), "{error}");
        let manual_as_retry = r#"{"kind":"continue","reason":"reactive_compact_retry","evidence":{"evidence":"compacted","trigger":"manual","pre_tokens":1,"post_tokens":1}}"#;
        assert!(serde_json::from_str::<Reason>(manual_as_retry).is_err());
    }

    #[test]
    fn a_manual_compaction_is_not_explained_as_a_retry() {
        let reason = Reason::Terminal(Stop::Completed(Completion::Compacted { pre_tokens: 12_000, post_tokens: 800 }));
        let line = reason.explain();
        assert!(!line.contains("too long") && !line.contains("retrying"), "{line}");
        assert!(line.contains("reloop compact") && line.contains("12,000 → 800 tokens"), "{line}");
    }
}
