//! The loop's state: one variant per phase, each carrying the loop-wide context.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::event::ToolOutcome;
use crate::history::{Digest, History};
use crate::message::{ContentBlock, ToolUse, Usage};
use crate::reason::{ContinueReason, Evidence, TerminalReason};

pub use crate::config::Config;

/// What Claude Code's `queryLoop` carries from one iteration to the next.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Loop {
    pub config: Arc<Config>,
    pub messages: History,
    /// Starts at 1; only a `next_turn` continue increments it.
    pub turn_count: u32,
    /// The continue reason that started the current iteration, if any.
    pub transition: Option<ContinueReason>,
    pub max_output_tokens_recovery_count: u32,
    pub has_attempted_reactive_compact: bool,
    pub max_output_tokens_override: Option<u32>,
    pub stop_hook_active: bool,
    /// Model requests made so far in this session.
    pub requests: u32,
    /// Usage summed over every completed response.
    pub usage: Usage,
    /// Consecutive failures of the request in flight.
    pub retry_attempt: u32,
    /// Consecutive overload errors (529 or an `overloaded_error` event), for the fallback rule.
    pub consecutive_overloaded: u32,
    /// The session switched to the fallback model for the rest of the run.
    pub fallback_active: bool,
    /// The malformed-tool-call retry was used in this turn.
    pub malformed_tool_call_retried: bool,
    /// Output tokens of the current query, for the token budget.
    pub query_output_tokens: u64,
    /// Token-budget continuations in this query, and the tokens each of the last two added.
    pub budget_continuations: u32,
    pub budget_last_deltas: [u64; 2],
    /// Output tokens at the last budget check.
    pub budget_checked_at: u64,
    /// Consecutive stop-hook blocks.
    pub stop_hook_blocks: u32,
    /// Calls a permission rule, mode or hook refused, for the run's result.
    pub permission_denials: Vec<PermissionDenial>,
    /// Tokens the last response reported (input, cache and output) ...
    pub usage_tokens: u64,
    /// ... covering this many messages of the history; later ones are estimated.
    pub messages_at_usage: usize,
    /// Consecutive failed compactions (the circuit breaker opens at three).
    pub compact_failures: u32,
    /// Compactions so far, for the record.
    pub compactions: u32,
    /// The next request follows a compaction attempt: it must not trigger another.
    pub just_compacted: bool,
    /// Messages the user queued that no request has carried yet.
    pub queued: Vec<QueuedMessage>,
    /// Ids of queued messages a request carried.
    pub consumed_inputs: Vec<String>,
    /// What the run has cost so far, and the usage by model.
    pub cost_usd: f64,
    pub model_usage: std::collections::BTreeMap<String, Usage>,
}

/// A message the user queued while the loop ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueuedMessage {
    pub id: String,
    pub content: Vec<ContentBlock>,
}

impl Loop {
    /// Takes the queued messages for the next request: their content and an effect naming them.
    pub(crate) fn take_queued(&mut self) -> Option<(Vec<ContentBlock>, crate::effect::Effect)> {
        if self.queued.is_empty() {
            return None;
        }
        let queued = std::mem::take(&mut self.queued);
        let ids: Vec<String> = queued.iter().map(|q| q.id.clone()).collect();
        self.consumed_inputs.extend(ids.iter().cloned());
        let content = queued.into_iter().flat_map(|q| q.content).collect();
        Some((content, crate::effect::Effect::InputConsumed { ids }))
    }
}

/// A refused tool call, as Claude Code's result lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PermissionDenial {
    pub tool_name: String,
    pub tool_use_id: String,
    pub tool_input: serde_json::Value,
}

impl Loop {
    pub fn new(config: Config) -> Self {
        Loop {
            config: Arc::new(config),
            messages: History::new(),
            turn_count: 1,
            transition: None,
            max_output_tokens_recovery_count: 0,
            has_attempted_reactive_compact: false,
            max_output_tokens_override: None,
            stop_hook_active: false,
            requests: 0,
            usage: Usage::default(),
            retry_attempt: 0,
            consecutive_overloaded: 0,
            fallback_active: false,
            malformed_tool_call_retried: false,
            query_output_tokens: 0,
            budget_continuations: 0,
            budget_last_deltas: [0, 0],
            budget_checked_at: 0,
            stop_hook_blocks: 0,
            permission_denials: Vec::new(),
            usage_tokens: 0,
            messages_at_usage: 0,
            compact_failures: 0,
            compactions: 0,
            just_compacted: false,
            queued: Vec::new(),
            consumed_inputs: Vec::new(),
            cost_usd: 0.0,
            model_usage: std::collections::BTreeMap::new(),
        }
    }

    /// Counts a response's usage toward the totals, the model's share and the cost.
    pub(crate) fn account(&mut self, usage: &Usage) {
        self.usage.add(usage);
        let model = self.current_model().to_string();
        self.cost_usd += self.config.cost(&model, usage);
        self.model_usage.entry(model).or_default().add(usage);
    }

    /// The model requests go to now.
    pub fn current_model(&self) -> &str {
        match (&self.config.fallback_model, self.fallback_active) {
            (Some(fallback), true) => fallback,
            _ => &self.config.model,
        }
    }

    /// The output-token limit of the next request.
    pub fn max_tokens(&self) -> u32 {
        self.max_output_tokens_override.unwrap_or(self.config.max_output_tokens)
    }

    fn digest_into(&self, d: &mut Digest) {
        d.u64(self.messages.digest());
        d.u64(self.messages.len() as u64);
        d.u64(u64::from(self.turn_count));
        d.json(&self.transition);
        d.u64(u64::from(self.max_output_tokens_recovery_count));
        d.u64(u64::from(self.has_attempted_reactive_compact));
        d.json(&self.max_output_tokens_override);
        d.u64(u64::from(self.stop_hook_active));
        d.u64(u64::from(self.requests));
        d.json(&self.usage);
        d.u64(u64::from(self.retry_attempt));
        d.u64(u64::from(self.consecutive_overloaded));
        d.u64(u64::from(self.fallback_active));
        d.u64(u64::from(self.malformed_tool_call_retried));
        d.u64(self.query_output_tokens);
        d.u64(u64::from(self.budget_continuations));
        d.u64(self.budget_last_deltas[0]);
        d.u64(self.budget_last_deltas[1]);
        d.u64(self.budget_checked_at);
        d.u64(u64::from(self.stop_hook_blocks));
        d.json(&self.permission_denials);
        d.u64(self.usage_tokens);
        d.u64(self.messages_at_usage as u64);
        d.u64(u64::from(self.compact_failures));
        d.u64(u64::from(self.compactions));
        d.u64(u64::from(self.just_compacted));
        // Fields added after journals exist enter the digest only when they leave their default,
        // so a journal recorded before them still replays identical.
        if !self.queued.is_empty() || !self.consumed_inputs.is_empty() {
            d.json(&self.queued);
            d.json(&self.consumed_inputs);
        }
        d.u64(self.cost_usd.to_bits());
        d.json(&self.model_usage);
    }
}

/// The response in flight: the content blocks completed so far.
#[derive(Debug, Clone, Default)]
pub struct Streaming {
    pub blocks: Vec<ContentBlock>,
    /// Something of this response reached the caller's stream (a delta or a block); a failed
    /// attempt must then be withdrawn.
    pub streamed: bool,
}

/// The tool calls of the last assistant message and the outcomes received so far.
#[derive(Debug, Clone)]
pub struct Tools {
    pub calls: Vec<ToolUse>,
    pub outcomes: Vec<Option<ToolOutcome>>,
    /// PostToolUse feedback for the model, by call index.
    pub feedback: Vec<(usize, String)>,
    /// A tool hook said `continue: false`: the loop stops after these tools.
    pub stopped_by: Option<crate::reason::Evidence>,
    /// Calls that may change something and were journaled as started.
    pub started: Vec<String>,
}

impl Tools {
    pub fn new(calls: Vec<ToolUse>) -> Self {
        let outcomes = vec![None; calls.len()];
        Tools { calls, outcomes, feedback: Vec::new(), stopped_by: None, started: Vec::new() }
    }

    pub fn is_complete(&self) -> bool {
        self.outcomes.iter().all(Option::is_some)
    }
}

/// How the loop ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Terminal {
    pub reason: TerminalReason,
    pub evidence: Evidence,
    /// The error shown to the caller as the final assistant text, when the run failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One variant per phase of the loop.
#[derive(Debug, Clone)]
pub enum State {
    /// Waiting for the user's first input.
    Idle(Loop),
    /// A model request is in flight.
    AwaitingModel(Loop, Streaming),
    /// The tools of the last assistant message are running.
    RunningTools(Loop, Tools),
    /// A request failed; the driver waits before the loop asks again.
    WaitingRetry(Loop),
    /// The history is being summarised; the request waits for the summary.
    Compacting(Loop, crate::compact::Compaction),
    /// The model asked for no tool; the Stop hooks decide whether the turn ends.
    RunningStopHooks(Loop, Option<crate::event::StopReason>),
    /// The loop has stopped; nothing more happens.
    Done(Loop, Terminal),
}

impl State {
    pub fn new(config: Config) -> Self {
        State::Idle(Loop::new(config))
    }

    /// The loop-wide context, whatever the phase.
    pub fn context(&self) -> &Loop {
        match self {
            State::Idle(c)
            | State::AwaitingModel(c, _)
            | State::RunningTools(c, _)
            | State::WaitingRetry(c)
            | State::RunningStopHooks(c, _)
            | State::Compacting(c, _)
            | State::Done(c, _) => c,
        }
    }

    pub(crate) fn context_mut(&mut self) -> &mut Loop {
        match self {
            State::Idle(c)
            | State::AwaitingModel(c, _)
            | State::RunningTools(c, _)
            | State::WaitingRetry(c)
            | State::RunningStopHooks(c, _)
            | State::Compacting(c, _)
            | State::Done(c, _) => c,
        }
    }

    pub fn messages(&self) -> &History {
        &self.context().messages
    }

    /// The phase's name, as journaled.
    pub fn phase(&self) -> &'static str {
        match self {
            State::Idle(_) => "idle",
            State::AwaitingModel(..) => "awaiting_model",
            State::RunningTools(..) => "running_tools",
            State::WaitingRetry(_) => "waiting_retry",
            State::RunningStopHooks(..) => "running_stop_hooks",
            State::Compacting(..) => "compacting",
            State::Done(..) => "done",
        }
    }

    pub fn terminal(&self) -> Option<&Terminal> {
        match self {
            State::Done(_, t) => Some(t),
            _ => None,
        }
    }

    pub fn is_done(&self) -> bool {
        matches!(self, State::Done(..))
    }

    /// A digest of everything that decides the loop's future. Replay compares it step by step;
    /// it costs O(1) in the length of the history.
    pub fn digest(&self) -> u64 {
        let mut d = Digest::default();
        d.bytes(self.phase().as_bytes());
        self.context().digest_into(&mut d);
        match self {
            State::Idle(_) | State::WaitingRetry(_) => {}
            State::RunningStopHooks(_, stop_reason) => d.json(stop_reason),
            State::Compacting(_, compaction) => d.json(compaction),
            State::AwaitingModel(_, s) => {
                d.json(&s.blocks);
                d.u64(u64::from(s.streamed));
            }
            State::RunningTools(_, t) => {
                d.json(&t.calls);
                d.json(&t.outcomes);
                d.json(&t.feedback);
                d.json(&t.stopped_by);
                // Added after journals existed: counted only when set.
                if !t.started.is_empty() {
                    d.json(&t.started);
                }
            }
            State::Done(_, t) => d.json(t),
        }
        d.finish()
    }
}
