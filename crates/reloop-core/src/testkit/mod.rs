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

mod invariants;
mod script;

use crate::effect::{Command, Effect};
use crate::event::{Event, ModelError};
use crate::hook::HookEventName;
use crate::message::{ContentBlock, Usage};
use crate::reason::Reason;
use crate::state::{Config, State};
use crate::step::Ignored;
use crate::transition::transition;

pub use invariants::Violation;
use script::{hook_event, model_events, tool_events};
pub use script::{hook_run, Outside, Refusal, Scripted};

use crate::event::StopReason;

/// The retry the loop is waiting for: the attempt a `retry_ready` event must name. A test that
/// feeds events by hand needs it; the state keeps it to itself.
pub fn retry_attempt(state: &State) -> u32 {
    state.context().request.retry_attempt
}

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
    Large {
        /// The input tokens the response reports.
        input_tokens: u64,
        /// How many tools it asks for (0: text).
        tools: usize,
    },
    /// The API says the prompt is too long.
    PromptTooLong,
    /// 429 rate limited, with the server's `retry-after` (milliseconds) or none.
    RateLimited {
        /// The `retry-after` the server sent, in milliseconds.
        retry_after_ms: Option<u64>,
    },
    /// The stream breaks in the middle of a text block (no `message_stop`).
    StreamCut,
    /// Text ending with this stop reason (`stop_sequence`, `pause_turn`, `refusal`, ...).
    Stopped(StopReason),
    /// Calls of named tools, each with its input and what happens when it runs, in a response
    /// that reports `input_tokens` (usage near the context window drives compaction).
    Calls {
        /// The calls, in order.
        calls: Vec<Call>,
        /// The input tokens the response reports.
        input_tokens: u64,
    },
}

/// One tool call of a [`ModelOutcome::Calls`] response and the outside facts it meets.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The tool's name.
    pub name: String,
    /// The input the model sends.
    pub input: serde_json::Value,
    /// What running it gives.
    pub result: ToolResult,
    /// The verdict of each PreToolUse hook matching the tool, in hook order (none: no hook
    /// matches, and none runs).
    pub pre_hooks: Vec<HookOutcome>,
    /// The verdict of each PostToolUse hook matching the tool, in hook order.
    pub post_hooks: Vec<HookOutcome>,
}

/// What running a tool call gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolResult {
    /// It succeeds with a short output.
    Success,
    /// It fails (`is_error`).
    Error,
    /// It succeeds with this many bytes of output.
    Large(usize),
    /// The permission rules or the user refuse it.
    Denied,
    /// Its input does not match the tool's schema: the validation error is the result.
    Invalid,
}

/// What one hook says when it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookOutcome {
    /// Exit 0, nothing said: the turn may end.
    Pass,
    /// Exit 2 with a message: the turn may not end.
    Block,
    /// `{"continue": false}`: the run ends.
    Prevent,
    /// Exit 1: a non-blocking error, shown and otherwise ignored.
    Error,
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
    /// The event fed.
    pub event: Event,
    /// What the step asked for.
    pub effects: Vec<Effect>,
    /// The continue or terminal reason, if the step decided one.
    pub reason: Option<Reason>,
    /// Why the event was ignored, if it was.
    pub ignored: Option<Ignored>,
    /// The state digest after the step.
    pub digest: u64,
    /// The phase after the step.
    pub phase: &'static str,
    /// The turn after the step.
    pub turn: u32,
}

/// What a simulated run did.
#[derive(Debug)]
pub struct Trace {
    /// Every step, in order.
    pub steps: Vec<TraceStep>,
    /// The state after the last step.
    pub final_state: State,
    /// The config the run used.
    pub config: Config,
    /// The step bound was hit before the loop stopped.
    pub gave_up: bool,
}

impl Simulation {
    /// A simulation of a session under `config`, undisturbed.
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

    /// Aborts before the event with this index.
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

    /// Tool results arrive last call first.
    pub fn reverse_tool_order(mut self, reverse: bool) -> Self {
        self.reverse_tool_order = reverse;
        self
    }

    /// Runs the loop against the script. Requests beyond the script fail like an exhausted
    /// cassette.
    pub fn run(&self, script: &[ModelOutcome]) -> Trace {
        self.run_with(script, &mut Scripted)
    }

    /// As [`Simulation::run`], asking `outside` for each hook run and each call's permission:
    /// the runs it returns are fed instead of a scripted verdict's (`reloop prop` names the
    /// configured commands, or runs them with `--hooks run`), and its refusals answer calls as
    /// the permission rules would. The core stays pure; whatever `outside` does happens on the
    /// caller's side.
    pub fn run_with(&self, script: &[ModelOutcome], hooks: &mut dyn Outside) -> Trace {
        let mut state = State::new(self.config.clone());
        let mut queue = std::collections::VecDeque::from([Event::user_input(vec![ContentBlock::text("go")])]);
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
            let requests = step.state.context().requests();
            for command in step.effects.iter().filter_map(Effect::command) {
                match command {
                    Command::CallModel(call) => {
                        let outcome = script.get(call.request as usize - 1).cloned();
                        queue.extend(model_events(call.request, outcome, script.len()));
                    }
                    Command::WaitRetry(wait) => queue.push_back(Event::RetryReady { attempt: wait.attempt }),
                    Command::Summarize { request, .. } => {
                        // A summary request fails when the script says the model errs there.
                        let failing = matches!(
                            script.get(*request as usize - 1),
                            Some(
                                ModelOutcome::Error
                                    | ModelOutcome::Fatal
                                    | ModelOutcome::PromptTooLong
                                    | ModelOutcome::RateLimited { .. }
                                    | ModelOutcome::StreamCut
                            )
                        );
                        queue.push_back(if failing {
                            Event::CompactFailed {
                                error: ModelError::new(Some(500), "api_error", "summary failed"),
                                request: *request,
                            }
                        } else {
                            Event::CompactDone {
                                summary: "<summary>what happened</summary>".into(),
                                usage: Usage::default(),
                                request: *request,
                                given_back: None,
                            }
                        });
                    }
                    Command::RunStopHooks { .. } => {
                        let verdict = self.stop_hooks.get(hook_runs).copied().unwrap_or(HookOutcome::Pass);
                        hook_runs += 1;
                        queue.push_back(match hooks.hook_runs(HookEventName::Stop, None, &[verdict]) {
                            Some(runs) => Event::HookDone {
                                hook_event: HookEventName::Stop,
                                tool_use_id: None,
                                runs,
                                request: requests,
                            },
                            None => hook_event(HookEventName::Stop, None, verdict, requests),
                        });
                    }
                    Command::RunTools { calls } => {
                        let asked = script.get(requests as usize - 1);
                        let mut done: Vec<Vec<Event>> =
                            calls.iter().enumerate().map(|(i, c)| tool_events(c, asked, i, requests, hooks)).collect();
                        if self.reverse_tool_order {
                            done.reverse();
                        }
                        queue.extend(done.into_iter().flatten());
                    }
                    // A resume, hook cancellations and the end's cancellations need no answer
                    // in a simulation: nothing runs.
                    Command::ResumeTools { .. }
                    | Command::CancelHooks
                    | Command::CancelModel
                    | Command::CancelTools => {}
                }
            }
            steps.push(TraceStep {
                event,
                effects: step.effects,
                reason: step.reason,
                ignored: step.ignored,
                digest: step.state.digest(),
                phase: step.state.phase(),
                turn: step.state.context().turn_count(),
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
