//! What the loop carries from one step to the next, grouped by how long each thing lives.
//!
//! Each group is reset as a whole when its lifetime ends (`ctx.turn = Turn::default()` for a new
//! turn), so a field cannot be forgotten by a reset: a reader sees at once what survives what.
//!
//! | group | lives for | reset when |
//! |---|---|---|
//! | [`Session`] | the whole session, across queries | never |
//! | [`Query`] | one prompt until the loop stops | a new prompt |
//! | [`Turn`] | one model answer and its tools | a new turn, a new prompt |
//! | [`Iteration`] | one pass of the loop (one decided request, across retries) | every continue |
//! | [`Request`] | one request across its retries | a response arrives, the fallback switch |

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::digest::Digest;
use crate::history::History;
use crate::message::{ContentBlock, Usage};
use crate::reason::ContinueReason;

/// What Claude Code's `queryLoop` carries from one iteration to the next. Opaque outside the
/// core: callers read it through the queries below, and only a transition changes it.
#[derive(Debug, Clone)]
pub struct Loop {
    /// The rules the session runs under.
    pub(crate) config: Arc<Config>,
    /// The conversation.
    pub(crate) messages: History,
    /// What lives as long as the session.
    pub(crate) session: Session,
    /// What lives as long as the query.
    pub(crate) query: Query,
    /// What lives as long as the turn.
    pub(crate) turn: Turn,
    /// What lives as long as one pass of the loop.
    pub(crate) iteration: Iteration,
    /// What lives as long as the request in flight, across its retries.
    pub(crate) request: Request,
}

/// Session-long counters and totals.
#[derive(Debug, Clone, Default)]
pub(crate) struct Session {
    /// Model requests made so far (summary requests included); the number of the last one.
    pub(crate) requests: u32,
    /// Usage summed over every completed response.
    pub(crate) usage: Usage,
    /// The session switched to the fallback model for the rest of the run.
    pub(crate) fallback_active: bool,
    /// Calls a permission rule, mode or hook refused, for the run's result.
    pub(crate) permission_denials: Vec<PermissionDenial>,
    /// Tokens the last response reported (input, cache and output) ...
    pub(crate) usage_tokens: u64,
    /// ... covering this many messages of the history; later ones are estimated.
    pub(crate) messages_at_usage: usize,
    /// Consecutive failed compactions (the circuit breaker opens at three).
    pub(crate) compact_failures: u32,
    /// Compactions so far, for the record.
    pub(crate) compactions: u32,
    /// What the run has cost so far.
    pub(crate) cost_usd: f64,
    /// Usage by model.
    pub(crate) model_usage: BTreeMap<String, Usage>,
    /// The model the caller switched to (`set_model`), over the configured one.
    pub(crate) model: Option<String>,
    /// The model the conversation was last told it is powered by, while a command file's model
    /// answers (flag 26, [`crate::identity`]); `None`: the session's own, the one it asks.
    pub(crate) named_model: Option<String>,
    /// A command file's model answers now: switched to it and not yet back (flag 26).
    pub(crate) in_command: bool,
    /// What every request is sent without since the API refused one (flag 41): the
    /// profile's guesses taken so far, kept for the rest of the conversation.
    pub(crate) shed: crate::profile::RequestGuesses,
    /// The files a compaction by hand gave back, held for after the next prompt (flag 42).
    pub(crate) given_back: Option<crate::message::Message>,
    /// The files read, in the order a compaction gives them back (flag 45).
    pub(crate) reads: crate::compact::ReadLedger,
    /// The permission mode the caller switched to (`set_permission_mode`).
    pub(crate) permission_mode: Option<String>,
    /// The UserPromptSubmit runs of the prompt about to start its query (flag 10): held from
    /// their `hook_done` until the prompt's `user_input`, which they decide.
    pub(crate) prompt_hooks: Option<Vec<crate::hook::HookRun>>,
    /// The PreCompact runs of the compaction by hand about to be asked for (flag 10): held from
    /// their `hook_done` until its `compact_requested`, which a block cancels.
    pub(crate) pre_compact_hooks: Option<Vec<crate::hook::HookRun>>,
}

/// From a prompt until the loop stops.
#[derive(Debug, Clone)]
pub(crate) struct Query {
    /// Starts at 1; only a `next_turn` continue increments it.
    pub(crate) turn_count: u32,
    /// Output-token recoveries in a row (reset by `next_turn`, `stop_hook_blocking` and
    /// `token_budget_continuation`).
    pub(crate) max_output_tokens_recovery_count: u32,
    /// Output tokens of this query, for the token budget.
    pub(crate) output_tokens: u64,
    /// Token-budget continuations in this query.
    pub(crate) budget_continuations: u32,
    /// The tokens each of the last two budget continuations added.
    pub(crate) budget_last_deltas: [u64; 2],
    /// Output tokens at the last budget check.
    pub(crate) budget_checked_at: u64,
    /// Consecutive stop-hook blocks.
    pub(crate) stop_hook_blocks: u32,
    /// Messages the user queued that no request has carried yet.
    pub(crate) queued: Vec<QueuedMessage>,
    /// Ids of queued messages a request carried.
    pub(crate) consumed_inputs: Vec<String>,
    /// Tool turns counted toward the profile's nudge.
    pub(crate) nudge_turns: u32,
    /// `StructuredOutput` calls that failed validation in this query.
    pub(crate) structured_failures: u32,
    /// The model was already asked once to call `StructuredOutput` in this query.
    pub(crate) structured_enforced: bool,
}

impl Default for Query {
    fn default() -> Self {
        Query {
            turn_count: 1,
            max_output_tokens_recovery_count: 0,
            output_tokens: 0,
            budget_continuations: 0,
            budget_last_deltas: [0, 0],
            budget_checked_at: 0,
            stop_hook_blocks: 0,
            queued: Vec::new(),
            consumed_inputs: Vec::new(),
            nudge_turns: 0,
            structured_failures: 0,
            structured_enforced: false,
        }
    }
}

/// One model answer and the tools it asked for.
#[derive(Debug, Clone, Default)]
pub(crate) struct Turn {
    /// Reactive compaction was tried in this turn; it survives stop-hook continues, so
    /// compact → error → hook → compact cannot spiral.
    pub(crate) has_attempted_reactive_compact: bool,
    /// A Stop hook held this turn open.
    pub(crate) stop_hook_active: bool,
    /// Malformed-tool-call retries used in this turn.
    pub(crate) malformed_tool_call_retries: u32,
}

/// One pass of the loop: what the continue that started it decided.
#[derive(Debug, Clone, Default)]
pub(crate) struct Iteration {
    /// The continue reason that started this pass, if any.
    pub(crate) transition: Option<ContinueReason>,
    /// The escalated output-token limit, for the pass an escalation started.
    pub(crate) max_output_tokens_override: Option<u32>,
}

/// The request in flight, across its retries.
#[derive(Debug, Clone, Default)]
pub(crate) struct Request {
    /// Consecutive failures.
    pub(crate) retry_attempt: u32,
    /// Consecutive overload errors (529 or an `overloaded_error` event), for the fallback rule.
    pub(crate) consecutive_overloaded: u32,
    /// It follows a compaction attempt: it must not trigger another.
    pub(crate) just_compacted: bool,
    /// Consecutive overloads reported inside a 200 stream (the profile's non-streaming rule).
    pub(crate) midstream_overloads: u32,
    /// The next attempt asks for the whole answer, not a stream.
    pub(crate) whole: bool,
}

/// A message the user queued while the loop ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueuedMessage {
    /// The caller's id for it.
    pub id: String,
    /// The message.
    pub content: Vec<ContentBlock>,
}

/// A refused tool call, as Claude Code's result lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PermissionDenial {
    /// The tool.
    pub tool_name: String,
    /// The call.
    pub tool_use_id: String,
    /// What the model asked it to do.
    pub tool_input: serde_json::Value,
}

impl Loop {
    /// A fresh session under `config`.
    pub(crate) fn new(config: Config) -> Self {
        Loop {
            messages: History::with_digest_version(config.digest_version),
            config: Arc::new(config),
            session: Session::default(),
            query: Query::default(),
            turn: Turn::default(),
            iteration: Iteration::default(),
            request: Request::default(),
        }
    }

    /// The turn the loop is in (`turn_count`).
    pub fn turn_count(&self) -> u32 {
        self.query.turn_count
    }

    /// The number of the last request made (the one in flight, if any).
    pub fn requests(&self) -> u32 {
        self.session.requests
    }

    /// The rules the session runs under.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The conversation.
    pub fn messages(&self) -> &History {
        &self.messages
    }

    /// Usage summed over every completed response.
    pub fn usage(&self) -> &Usage {
        &self.session.usage
    }

    /// Usage by model.
    pub fn model_usage(&self) -> &BTreeMap<String, Usage> {
        &self.session.model_usage
    }

    /// What the run has cost so far.
    pub fn cost_usd(&self) -> f64 {
        self.session.cost_usd
    }

    /// Tokens the last response reported (input, cache and output): the context's size as the
    /// API last saw it.
    pub fn usage_tokens(&self) -> u64 {
        self.session.usage_tokens
    }

    /// Calls a permission rule, mode or hook refused, for the run's result.
    pub fn permission_denials(&self) -> &[PermissionDenial] {
        &self.session.permission_denials
    }

    /// The permission mode the caller switched to (`set_permission_mode`), if any.
    pub fn permission_mode(&self) -> Option<&str> {
        self.session.permission_mode.as_deref()
    }

    /// Messages the user queued that no request has carried yet.
    pub fn queued(&self) -> &[QueuedMessage] {
        &self.query.queued
    }

    /// Ids of queued messages a request of this query carried.
    pub fn consumed_inputs(&self) -> &[String] {
        &self.query.consumed_inputs
    }

    /// Whether `request` completes the request in flight. `0` is an event journaled before
    /// correlation ids: it is accepted only in a session of digest version 1.
    pub fn is_current(&self, request: u32) -> bool {
        request == self.session.requests || (request == 0 && self.config.digest_version < 2)
    }

    /// Takes the queued messages for the next request: their content and a notice naming them.
    pub(crate) fn take_queued(&mut self) -> Option<(Vec<ContentBlock>, Vec<String>)> {
        if self.query.queued.is_empty() {
            return None;
        }
        let queued = std::mem::take(&mut self.query.queued);
        let ids: Vec<String> = queued.iter().map(|q| q.id.clone()).collect();
        self.query.consumed_inputs.extend(ids.iter().cloned());
        let content = queued.into_iter().flat_map(|q| q.content).collect();
        Some((content, ids))
    }

    /// The `--max-budget-usd` the session's cost has reached, if any.
    pub(crate) fn budget_reached(&self) -> Option<f64> {
        self.config.max_budget_usd.filter(|b| self.session.cost_usd >= *b)
    }

    /// Counts a response's usage toward the totals, the model's share and the cost.
    pub(crate) fn account(&mut self, usage: &Usage) {
        self.session.usage.add(usage);
        let model = self.current_model().to_string();
        self.session.cost_usd += self.config.cost(&model, usage);
        self.session.model_usage.entry(model).or_default().add(usage);
    }

    /// Counts a subagent's spend toward this session's totals: its models' usage and its cost as
    /// the child priced it (the child may run on a model this session has no price for).
    pub(crate) fn account_agent(&mut self, spent: &crate::message::AgentUsage) {
        for (model, usage) in &spent.model_usage {
            self.session.usage.add(usage);
            self.session.model_usage.entry(model.clone()).or_default().add(usage);
        }
        if spent.cost_usd.is_finite() && spent.cost_usd > 0.0 {
            self.session.cost_usd += spent.cost_usd;
        }
    }

    /// The model requests go to now.
    pub fn current_model(&self) -> &str {
        match (&self.config.fallback_model, self.session.fallback_active) {
            (Some(fallback), true) => fallback,
            _ => self.session.model.as_deref().unwrap_or(&self.config.model),
        }
    }

    /// The output-token limit of the next request.
    pub fn max_tokens(&self) -> u32 {
        let base = match (self.session.fallback_active, self.config.fallback_max_output_tokens) {
            (true, Some(fallback)) => fallback,
            _ => self.config.max_output_tokens,
        };
        self.iteration.max_output_tokens_override.unwrap_or(base)
    }

    /// Digests every field, in the order digest version 1 fixed. Version 1 counted the queue
    /// only when it was not empty (it was added after journals existed); version 2 counts
    /// everything always.
    pub(crate) fn digest_into(&self, d: &mut Digest) {
        let (s, q, t, i, r) = (&self.session, &self.query, &self.turn, &self.iteration, &self.request);
        d.u64s([self.messages.digest(), self.messages.len() as u64, u64::from(q.turn_count)]);
        match i.transition {
            Some(reason) if !d.is_typed() => d.name(reason.as_str()),
            transition => d.option(&transition.map(|reason| reason.as_str())),
        }
        d.u64s([u64::from(q.max_output_tokens_recovery_count), u64::from(t.has_attempted_reactive_compact)]);
        d.option(&i.max_output_tokens_override);
        d.u64s([u64::from(t.stop_hook_active), u64::from(s.requests)]);
        usage_into(d, &s.usage);
        d.u64s([
            u64::from(r.retry_attempt),
            u64::from(r.consecutive_overloaded),
            u64::from(s.fallback_active),
            // Once a flag: its count digests as the flag did for the one retry older profiles allow.
            u64::from(t.malformed_tool_call_retries),
            q.output_tokens,
            u64::from(q.budget_continuations),
            q.budget_last_deltas[0],
            q.budget_last_deltas[1],
            q.budget_checked_at,
            u64::from(q.stop_hook_blocks),
        ]);
        d.list(&s.permission_denials);
        d.u64s([
            s.usage_tokens,
            s.messages_at_usage as u64,
            u64::from(s.compact_failures),
            u64::from(s.compactions),
            u64::from(r.just_compacted),
        ]);
        if self.config.digest_version >= 2 || !q.queued.is_empty() || !q.consumed_inputs.is_empty() {
            d.list(&q.queued);
            d.list(&q.consumed_inputs);
        }
        d.u64(s.cost_usd.to_bits());
        if d.takes_numbers() {
            d.u64(s.model_usage.len() as u64);
            for (model, usage) in &s.model_usage {
                d.str(model);
                usage_into(d, usage);
            }
        } else {
            d.value(&s.model_usage);
        }
        // Added after journals existed, and only ever set under profiles that have the rule.
        if q.nudge_turns != 0 {
            d.u64(u64::from(q.nudge_turns));
        }
        if r.midstream_overloads != 0 || r.whole {
            d.u64(u64::from(r.midstream_overloads));
            d.u64(u64::from(r.whole));
        }
        // Added after journals existed, and only ever set by their own events: counted when set.
        if s.model.is_some() || s.permission_mode.is_some() {
            d.value(&s.model);
            d.value(&s.permission_mode);
        }
        if let Some(runs) = &s.prompt_hooks {
            d.value(runs);
        }
        if let Some(runs) = &s.pre_compact_hooks {
            d.value(runs);
        }
    }
}

/// Usage as numbers from digest version 3 (it changes with every response, and its JSON cost
/// more to write than the rest of the digest), as JSON before.
fn usage_into(d: &mut Digest, usage: &Usage) {
    if d.takes_numbers() {
        d.u64s([
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_creation_input_tokens,
            usage.cache_read_input_tokens,
        ]);
    } else {
        d.value(usage);
    }
}
