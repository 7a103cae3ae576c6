//! A bounded simulation driver for the pure core, and the invariants every run must keep.
//!
//! It plays the part of the driver with scripted outside facts — what the model answers, the
//! order tools finish in, when the user aborts — and gives up after a fixed number of steps, so a
//! loop that would run away is reported instead of hanging. Use it with proptest (or any
//! generator) to check your own configuration:
//!
//! ```
//! use reloop_core::testkit::{ModelOutcome, Simulation};
//! use reloop_core::Config;
//!
//! let script = vec![ModelOutcome::Tools(2), ModelOutcome::Tools(1), ModelOutcome::Text];
//! let trace = Simulation::new(Config::default().with_max_turns(Some(2))).run(&script);
//! trace.check().expect("every invariant holds");
//! assert_eq!(trace.terminal().map(|t| t.as_str()), Some("max_turns"));
//! ```

use serde_json::json;

use crate::effect::Effect;
use crate::event::{Event, ModelError, StopReason, ToolOutcome};
use crate::message::{ContentBlock, Role, ToolResultContent, Usage};
use crate::reason::{ContinueReason, Reason, TerminalReason};
use crate::state::{Config, State};
use crate::transition::transition;

/// What the model does with one request.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelOutcome {
    /// Answers with text only.
    Text,
    /// Asks for this many tools (0 means text with `stop_reason: tool_use`).
    Tools(usize),
    /// The request fails with a server error (retryable).
    Error,
    /// The request fails with 529 Overloaded (retryable; counts toward the fallback).
    Overloaded,
    /// The request fails for good (400).
    Fatal,
    /// Text cut by the output-token limit.
    MaxTokens,
    /// `stop_reason: tool_use` with no `tool_use` block.
    MissingToolCall,
    /// Text with this many output tokens (for token budgets).
    TextTokens(u64),
    /// Tool calls in a response that reports this many input tokens (for compaction).
    Large { input_tokens: u64, tools: usize },
    /// The API says the prompt is too long.
    PromptTooLong,
}

/// What the Stop hooks say, one verdict per time they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookOutcome {
    Pass,
    /// Exit 2 with a message: the turn may not end.
    Block,
    /// `{"continue": false}`: the run ends.
    Prevent,
}

/// A scripted session: the model's outcomes in request order, plus optional disturbances.
#[derive(Debug, Clone)]
pub struct Simulation {
    config: Config,
    /// Abort before the event with this index (0-based over events fed after the user input).
    pub abort_at: Option<usize>,
    /// Tool results arrive in reverse order instead of in order.
    pub reverse_tool_order: bool,
    /// Give up after this many steps.
    pub max_steps: usize,
    /// Stop-hook verdicts in the order the hooks run; `Pass` once they run out.
    pub stop_hooks: Vec<HookOutcome>,
    /// The user queues a message before the events with these indices.
    pub queue_at: Vec<usize>,
}

/// One applied step, as the simulation saw it.
#[derive(Debug, Clone)]
pub struct TraceStep {
    pub event: Event,
    pub effects: Vec<Effect>,
    pub reason: Option<Reason>,
    pub digest: u64,
    pub phase: &'static str,
    pub turn: u32,
}

/// What a simulated run did.
#[derive(Debug)]
pub struct Trace {
    pub steps: Vec<TraceStep>,
    pub final_state: State,
    pub config: Config,
    /// The step bound was hit before the loop stopped.
    pub gave_up: bool,
}

impl Simulation {
    pub fn new(config: Config) -> Self {
        Simulation {
            config,
            abort_at: None,
            reverse_tool_order: false,
            max_steps: 10_000,
            stop_hooks: Vec::new(),
            queue_at: Vec::new(),
        }
    }

    pub fn abort_at(mut self, at: Option<usize>) -> Self {
        self.abort_at = at;
        self
    }

    /// Configures Stop hooks that answer with these verdicts in turn.
    pub fn stop_hooks(mut self, verdicts: Vec<HookOutcome>) -> Self {
        self.config.stop_hooks = true;
        self.stop_hooks = verdicts;
        self
    }

    /// Queues a user message before each of these event indices.
    pub fn queue_at(mut self, at: Vec<usize>) -> Self {
        self.queue_at = at;
        self
    }

    pub fn reverse_tool_order(mut self, reverse: bool) -> Self {
        self.reverse_tool_order = reverse;
        self
    }

    /// Runs the loop against the script. Requests beyond the script fail like an exhausted
    /// cassette.
    pub fn run(&self, script: &[ModelOutcome]) -> Trace {
        let mut state = State::new(self.config.clone());
        let mut queue =
            std::collections::VecDeque::from([Event::UserInput { content: vec![ContentBlock::text("go")] }]);
        let mut steps = Vec::new();
        let mut fed = 0usize;
        let mut hook_runs = 0usize;
        let mut gave_up = false;
        while let Some(mut event) = queue.pop_front() {
            if steps.len() >= self.max_steps {
                gave_up = true;
                break;
            }
            if !matches!(event, Event::UserInput { .. }) {
                if self.queue_at.contains(&fed) && !matches!(event, Event::QueuedInput { .. }) {
                    queue.push_front(event);
                    event =
                        Event::QueuedInput { id: format!("q{fed}"), content: vec![ContentBlock::text("also this")] };
                } else if self.abort_at == Some(fed) {
                    queue.push_front(event);
                    event = Event::Abort;
                    self.abort_seen(&mut queue);
                }
                fed += 1;
            }
            let step = transition(state, event.clone());
            for effect in &step.effects {
                match effect {
                    Effect::CallModel(call) => {
                        let outcome = script.get(call.request as usize - 1).cloned();
                        queue.extend(model_events(call.request, outcome));
                    }
                    Effect::WaitRetry(_) => queue.push_back(Event::RetryReady),
                    Effect::Summarize { request, .. } => {
                        // A summary request fails when the script says the model errs there.
                        let failing = matches!(
                            script.get(*request as usize - 1),
                            Some(ModelOutcome::Error | ModelOutcome::Fatal | ModelOutcome::PromptTooLong)
                        );
                        queue.push_back(if failing {
                            Event::CompactFailed { error: ModelError::new(Some(500), "api_error", "summary failed") }
                        } else {
                            Event::CompactDone {
                                summary: "<summary>what happened</summary>".into(),
                                usage: Usage::default(),
                            }
                        });
                    }
                    Effect::RunStopHooks { .. } => {
                        let verdict = self.stop_hooks.get(hook_runs).copied().unwrap_or(HookOutcome::Pass);
                        hook_runs += 1;
                        queue.push_back(stop_hook_event(verdict));
                    }
                    Effect::RunTools { calls } => {
                        let mut done: Vec<Event> = calls
                            .iter()
                            .map(|c| {
                                Event::ToolDone(ToolOutcome {
                                    tool_use_id: c.id.clone(),
                                    content: ToolResultContent::Text(format!("ran {}", c.name)),
                                    is_error: false,
                                    denied: false,
                                })
                            })
                            .collect();
                        if self.reverse_tool_order {
                            done.reverse();
                        }
                        queue.extend(done);
                    }
                    _ => {}
                }
            }
            steps.push(TraceStep {
                event,
                effects: step.effects,
                reason: step.reason,
                digest: step.state.digest(),
                phase: step.state.phase(),
                turn: step.state.context().turn_count,
            });
            state = step.state;
            if state.is_done() {
                break;
            }
        }
        Trace { steps, final_state: state, config: self.config.clone(), gave_up }
    }

    /// After an abort, outside facts still in flight are dropped: the driver cancels them.
    fn abort_seen(&self, queue: &mut std::collections::VecDeque<Event>) {
        queue.truncate(1);
    }
}

fn stop_hook_event(verdict: HookOutcome) -> Event {
    let (exit_code, stdout, stderr) = match verdict {
        HookOutcome::Pass => (0, String::new(), String::new()),
        HookOutcome::Block => (2, String::new(), "tests failing".to_string()),
        HookOutcome::Prevent => (0, r#"{"continue": false, "stopReason": "enough"}"#.to_string(), String::new()),
    };
    Event::HookDone {
        hook_event: crate::hook::HookEventName::Stop,
        tool_use_id: None,
        runs: vec![crate::hook::HookRun {
            command: "./check.sh".into(),
            exit_code: Some(exit_code),
            stdout,
            stderr,
            timed_out: false,
        }],
    }
}

fn model_events(request: u32, outcome: Option<ModelOutcome>) -> Vec<Event> {
    let done = |stop: StopReason| Event::ModelDone {
        id: Some(format!("msg_{request}")),
        model: None,
        stop_reason: Some(stop),
        usage: Usage { input_tokens: 10, output_tokens: 5, ..Usage::default() },
    };
    match outcome {
        Some(ModelOutcome::Text) => vec![
            Event::TextDelta { index: 0, text: "done".into() },
            Event::ModelBlock { index: 0, block: ContentBlock::text("done") },
            done(StopReason::EndTurn),
        ],
        Some(ModelOutcome::Tools(n)) => {
            let mut events: Vec<Event> = (0..n)
                .map(|i| Event::ModelBlock {
                    index: i,
                    block: ContentBlock::tool_use(format!("toolu_{request}_{i}"), "Read", json!({"file_path": "/x"})),
                })
                .collect();
            events.push(done(StopReason::ToolUse));
            events
        }
        Some(ModelOutcome::Error) => {
            vec![Event::ModelFailed { error: ModelError::new(Some(500), "api_error", "Internal server error") }]
        }
        Some(ModelOutcome::Large { input_tokens, tools }) => {
            let mut events: Vec<Event> = (0..tools)
                .map(|i| Event::ModelBlock {
                    index: i,
                    block: ContentBlock::tool_use(format!("toolu_{request}_{i}"), "Read", json!({"file_path": "/x"})),
                })
                .collect();
            events.push(Event::ModelDone {
                id: Some(format!("msg_{request}")),
                model: None,
                stop_reason: Some(if tools == 0 { StopReason::EndTurn } else { StopReason::ToolUse }),
                usage: Usage { input_tokens, output_tokens: 50, ..Usage::default() },
            });
            if tools == 0 {
                events.insert(0, Event::ModelBlock { index: 0, block: ContentBlock::text("big") });
            }
            events
        }
        Some(ModelOutcome::PromptTooLong) => vec![Event::ModelFailed {
            error: ModelError::new(
                Some(400),
                "invalid_request_error",
                "prompt is too long: 210000 tokens > 200000 maximum",
            ),
        }],
        Some(ModelOutcome::Overloaded) => {
            vec![Event::ModelFailed { error: ModelError::new(Some(529), "overloaded_error", "Overloaded") }]
        }
        Some(ModelOutcome::Fatal) => {
            vec![Event::ModelFailed { error: ModelError::new(Some(400), "invalid_request_error", "bad request") }]
        }
        Some(ModelOutcome::MaxTokens) => vec![
            Event::TextDelta { index: 0, text: "half a thou".into() },
            Event::ModelBlock { index: 0, block: ContentBlock::text("half a thou") },
            done(StopReason::MaxTokens),
        ],
        Some(ModelOutcome::MissingToolCall) => {
            vec![Event::ModelBlock { index: 0, block: ContentBlock::text("let me call") }, done(StopReason::ToolUse)]
        }
        Some(ModelOutcome::TextTokens(n)) => vec![
            Event::ModelBlock { index: 0, block: ContentBlock::text("work") },
            Event::ModelDone {
                id: Some(format!("msg_{request}")),
                model: None,
                stop_reason: Some(StopReason::EndTurn),
                usage: Usage { input_tokens: 10, output_tokens: n, ..Usage::default() },
            },
        ],
        None => vec![Event::ModelFailed {
            error: ModelError::new(None, "script_exhausted", format!("no response for model request {request}")),
        }],
    }
}

/// An invariant that a run broke.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation(pub String);

impl Trace {
    pub fn terminal(&self) -> Option<TerminalReason> {
        self.final_state.terminal().map(|t| t.reason)
    }

    pub fn model_requests(&self) -> usize {
        self.steps.iter().flat_map(|s| &s.effects).filter(|e| matches!(e, Effect::CallModel(_))).count()
    }

    pub fn continues(&self, reason: ContinueReason) -> usize {
        self.steps
            .iter()
            .filter(|s| matches!(&s.reason, Some(Reason::Continue { reason: r, .. }) if *r == reason))
            .count()
    }

    /// Checks every invariant of the loop; the first one broken is returned.
    pub fn check(&self) -> Result<(), Violation> {
        let fail = |msg: String| Err(Violation(msg));
        if self.gave_up {
            return fail(format!("the loop did not stop within {} steps", self.steps.len()));
        }
        if !self.final_state.is_done() {
            return fail(format!("the loop ended in phase {} without a terminal state", self.final_state.phase()));
        }
        if let Some(i) = self.steps.iter().position(|s| s.phase == "done") {
            if self.steps[i + 1..].iter().flat_map(|s| &s.effects).any(|e| matches!(e, Effect::CallModel(_))) {
                return fail("a model request followed the terminal state".into());
            }
        }
        if let Some(max) = self.config.max_turns {
            let next_turns = self.continues(ContinueReason::NextTurn);
            if next_turns >= max as usize {
                return fail(format!("{next_turns} next_turn continues with max_turns {max}"));
            }
            // Retries, recoveries and budget continuations repeat a turn; no request may belong to
            // a turn beyond the limit.
            let beyond = self.steps.iter().flat_map(|s| &s.effects).find_map(|e| match e {
                Effect::CallModel(c) if c.turn > max => Some(c.turn),
                _ => None,
            });
            if let Some(turn) = beyond {
                return fail(format!("a model request for turn {turn} with max_turns {max}"));
            }
        }
        let turn = self.final_state.context().turn_count as usize;
        if turn != 1 + self.continues(ContinueReason::NextTurn) {
            return fail(format!(
                "turn_count {turn} but {} next_turn continues",
                self.continues(ContinueReason::NextTurn)
            ));
        }
        self.check_guards()?;
        self.check_queue()?;
        self.check_tool_pairing()?;
        self.check_replay()
    }

    /// Every queued message is carried by exactly one request, or is still queued when the loop
    /// ends (reported as not consumed); none is lost or carried twice.
    fn check_queue(&self) -> Result<(), Violation> {
        let queued: Vec<&String> = self
            .steps
            .iter()
            .filter_map(|s| match &s.event {
                Event::QueuedInput { id, .. } => Some(id),
                _ => None,
            })
            .collect();
        let consumed: Vec<&String> = self
            .steps
            .iter()
            .flat_map(|s| &s.effects)
            .flat_map(|e| match e {
                Effect::InputConsumed { ids } => ids.iter().collect::<Vec<_>>(),
                _ => Vec::new(),
            })
            .collect();
        let ctx = self.final_state.context();
        for id in &queued {
            let carried = consumed.iter().filter(|c| c == &id).count();
            let waiting = ctx.queued.iter().filter(|q| &&q.id == id).count();
            // A message queued after the end is refused by the core: neither carried nor kept.
            let after_end =
                self.steps.iter().position(|s| matches!(&s.event, Event::QueuedInput { id: i, .. } if i == *id))
                    > self.steps.iter().position(|s| s.phase == "done");
            if !after_end && carried + waiting != 1 {
                return Err(Violation(format!("queued message {id} carried {carried} times, waiting {waiting}")));
            }
        }
        Ok(())
    }

    /// The guards of each continue reason hold.
    fn check_guards(&self) -> Result<(), Violation> {
        let mut recoveries = 0u32;
        let mut malformed_this_turn = 0u32;
        let mut escalations_in_a_row = 0u32;
        let mut stop_blocks = 0u32;
        let mut turn = 1;
        for step in &self.steps {
            if step.turn != turn {
                turn = step.turn;
                malformed_this_turn = 0;
            }
            match &step.reason {
                Some(Reason::Continue { reason: ContinueReason::MaxOutputTokensRecovery, .. }) => recoveries += 1,
                Some(Reason::Continue { reason: ContinueReason::NextTurn, .. })
                | Some(Reason::Continue { reason: ContinueReason::StopHookBlocking, .. })
                | Some(Reason::Continue { reason: ContinueReason::TokenBudgetContinuation, .. }) => recoveries = 0,
                _ => {}
            }
            if let Some(Reason::Continue { reason: ContinueReason::MalformedToolCallRetry, .. }) = &step.reason {
                malformed_this_turn += 1;
            }
            match &step.reason {
                Some(Reason::Continue { reason: ContinueReason::MaxOutputTokensEscalate, .. }) => {
                    escalations_in_a_row += 1
                }
                Some(_) => escalations_in_a_row = 0,
                None => {}
            }
            if matches!(step.event, Event::HookDone { hook_event: crate::hook::HookEventName::Stop, .. }) {
                match &step.reason {
                    Some(Reason::Continue { reason: ContinueReason::StopHookBlocking, .. }) => stop_blocks += 1,
                    _ => stop_blocks = 0,
                }
            }
            if stop_blocks > self.config.stop_hook_block_cap {
                return Err(Violation(format!("{stop_blocks} consecutive stop-hook blocks")));
            }
            if recoveries > crate::config::MAX_OUTPUT_TOKENS_RECOVERY_LIMIT {
                return Err(Violation(format!("{recoveries} consecutive output-token recoveries")));
            }
            if malformed_this_turn > 1 {
                return Err(Violation("the malformed-call retry ran twice in one turn".into()));
            }
            if escalations_in_a_row > 1 {
                return Err(Violation("escalated the same request twice".into()));
            }
        }
        Ok(())
    }

    /// Every `tool_use` is answered by exactly one `tool_result` in the next user message, and
    /// every `tool_result` answers a `tool_use` of the message before it (none is orphaned,
    /// also after a compaction).
    fn check_tool_pairing(&self) -> Result<(), Violation> {
        let messages = self.final_state.messages().messages();
        for (i, message) in messages.iter().enumerate() {
            for block in &message.content {
                if let ContentBlock::ToolResult(r) = block {
                    let asked = i > 0 && messages[i - 1].tool_uses().any(|t| t.id == r.tool_use_id);
                    if !asked {
                        return Err(Violation(format!(
                            "tool_result {} in message {i} answers no tool_use",
                            r.tool_use_id
                        )));
                    }
                }
            }
        }
        for (i, message) in messages.iter().enumerate() {
            if message.role != Role::Assistant {
                continue;
            }
            let Some(next) = messages.get(i + 1).filter(|m| m.role == Role::User) else {
                if message.tool_uses().next().is_some() {
                    return Err(Violation(format!("assistant message {i} has tool_use blocks and no answer")));
                }
                continue;
            };
            for call in message.tool_uses() {
                let answers = next
                    .content
                    .iter()
                    .filter(|b| matches!(b, ContentBlock::ToolResult(r) if r.tool_use_id == call.id))
                    .count();
                if answers != 1 {
                    return Err(Violation(format!("tool_use {} has {answers} tool_result blocks", call.id)));
                }
            }
        }
        Ok(())
    }

    /// Feeding the same events again gives the same effects, reasons and digests.
    fn check_replay(&self) -> Result<(), Violation> {
        let mut state = State::new(self.config.clone());
        for (i, recorded) in self.steps.iter().enumerate() {
            let step = transition(state, recorded.event.clone());
            if step.effects != recorded.effects
                || step.reason != recorded.reason
                || step.state.digest() != recorded.digest
            {
                return Err(Violation(format!("replay diverged at step {i} ({})", recorded.event.kind())));
            }
            state = step.state;
        }
        Ok(())
    }
}
