//! What one transition produces, and the constructors every phase builds its steps with.
//!
//! A step is one of three things: the event was **applied** (the state moved on, maybe with
//! effects), the loop **decided** (a continue or terminal [`Reason`], with its evidence), or the
//! event was **ignored** ([`Ignored`], typed by why). Nothing falls through silently: an ignored
//! event is journaled with its step, shown by `show --steps` and `why --steps`, and compared by
//! replay like a reason.

use serde::{Deserialize, Serialize};

use crate::context::Loop;
use crate::effect::Effect;
use crate::event::Event;
use crate::hook::HookEventName;
use crate::reason::Reason;
use crate::state::{Phase, State, Terminal};

/// The outcome of one transition. Only the core builds one (`#[non_exhaustive]`), through the
/// constructors below, so a step is never both a decision and ignored.
#[derive(Debug)]
#[non_exhaustive]
pub struct Step {
    /// The next state.
    pub state: State,
    /// What the driver must do now and what the caller must be told, in order.
    pub effects: Vec<Effect>,
    /// Set when this step continues the loop into a new request or stops it.
    pub reason: Option<Reason>,
    /// Set when the state did not expect the event; the state is then unchanged and nothing is
    /// asked for.
    pub ignored: Option<Ignored>,
}

/// An event the state did not expect, and why. The state is left as it was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ignored {
    /// The phase that ignored it.
    pub phase: String,
    /// The event's kind.
    pub event_kind: String,
    /// Why.
    pub why: IgnoreWhy,
}

/// Why an event was ignored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr)]
#[serde(tag = "why", rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum IgnoreWhy {
    /// This phase has nothing in flight that the event could complete or change.
    NotExpected,
    /// The loop has stopped; only a new prompt or `compact_requested` starts anything.
    Finished,
    /// The event completes a request that is no longer in flight.
    StaleRequest {
        /// The request in flight.
        expected: u32,
        /// The request the event names.
        got: u32,
    },
    /// The event ends the wait of another retry.
    StaleAttempt {
        /// The retry being waited for.
        expected: u32,
        /// The retry the event names.
        got: u32,
    },
    /// No call of this turn has that id.
    UnknownToolCall {
        /// The id the event names.
        tool_use_id: String,
    },
    /// Every call with that id is answered already; the first answer stands.
    AlreadyAnswered {
        /// The id the event names.
        tool_use_id: String,
    },
    /// The call was journaled as started already.
    AlreadyStarted {
        /// The id the event names.
        tool_use_id: String,
    },
    /// Stop hooks are awaited; this is another hook event's result.
    NotStopHooks {
        /// The hook event it reports.
        hook_event: HookEventName,
    },
    /// Tool calls are running; a Stop hook result belongs to no call.
    NotToolHooks {
        /// The hook event it reports.
        hook_event: HookEventName,
    },
    /// A compaction was asked for, but the conversation has no exchange before its last one.
    NothingToCompact,
    /// A compaction by hand was asked for, but one of its PreCompact hooks blocked it (flag 10).
    CompactionBlocked,
    /// A restart found nothing in flight to ask for again.
    NothingInFlight,
    /// The caller set a setting to the value it already had.
    AlreadySet,
}

impl Ignored {
    /// One human line, as `why --steps` and `show --steps` print it.
    pub fn explain(&self) -> String {
        let what = match &self.why {
            IgnoreWhy::NotExpected => "nothing in flight in this phase takes it".to_string(),
            IgnoreWhy::Finished => "the loop has stopped".to_string(),
            IgnoreWhy::StaleRequest { expected, got } => {
                format!("it answers request {got}, but request {expected} is the one in flight")
            }
            IgnoreWhy::StaleAttempt { expected, got } => {
                format!("it ends the wait of retry {got}, but retry {expected} is awaited")
            }
            IgnoreWhy::UnknownToolCall { tool_use_id } => format!("no call of this turn is {tool_use_id}"),
            IgnoreWhy::AlreadyAnswered { tool_use_id } => {
                format!("{tool_use_id} is answered already; the first answer stands")
            }
            IgnoreWhy::AlreadyStarted { tool_use_id } => format!("{tool_use_id} was journaled as started already"),
            IgnoreWhy::NotStopHooks { hook_event } => {
                format!("Stop hooks are awaited, not {}", hook_event.as_str())
            }
            IgnoreWhy::NotToolHooks { hook_event } => {
                format!("tools are running; a {} result belongs to no call", hook_event.as_str())
            }
            IgnoreWhy::NothingToCompact => "there is no exchange before the last one to summarise".to_string(),
            IgnoreWhy::CompactionBlocked => "a PreCompact hook blocked the compaction".to_string(),
            IgnoreWhy::NothingInFlight => "nothing was in flight to ask for again".to_string(),
            IgnoreWhy::AlreadySet => "the setting already had that value".to_string(),
        };
        format!("{} ignored in {}: {what}", self.event_kind, self.phase)
    }

    /// The why's name as journaled, e.g. `stale_request`.
    pub fn name(&self) -> &'static str {
        (&self.why).into()
    }
}

impl Step {
    /// The event was applied; the loop goes on in the same phase with nothing to do.
    pub(crate) fn stay(state: impl Into<State>) -> Self {
        Step { state: state.into(), effects: Vec::new(), reason: None, ignored: None }
    }

    /// The event was applied; the driver must carry out `effects`.
    pub(crate) fn with(state: impl Into<State>, effects: Vec<Effect>) -> Self {
        Step { state: state.into(), effects, reason: None, ignored: None }
    }

    /// The event was not for this state; it stays as it was.
    pub(crate) fn ignore(state: impl Into<State>, event: &Event, why: IgnoreWhy) -> Self {
        let state = state.into();
        let ignored = Ignored { phase: state.phase().to_string(), event_kind: event.kind().to_string(), why };
        Step { state, effects: Vec::new(), reason: None, ignored: Some(ignored) }
    }

    /// A decision that sends a request or stops the loop.
    pub(crate) fn decided(state: impl Into<State>, effects: Vec<Effect>, reason: Option<Reason>) -> Self {
        Step { state: state.into(), effects, reason, ignored: None }
    }
}

/// The loop stops with `terminal`.
pub(crate) fn done(ctx: Box<Loop>, terminal: Terminal, effects: Vec<Effect>) -> Step {
    let reason = Reason::Terminal(terminal.stop.clone());
    Step::decided(Phase::Done(ctx, terminal), effects, Some(reason))
}

/// A message the user queued waits for the next turn boundary (any phase but `done`).
pub(crate) fn queue(state: impl Into<State>, id: String, content: Vec<crate::message::ContentBlock>) -> Step {
    let mut state = state.into();
    if let Some(ctx) = state.context_mut_if_running() {
        ctx.query.queued.push(crate::context::QueuedMessage { id, content });
    }
    Step::stay(state)
}

/// A completion event for a request that is not in flight.
pub(crate) fn stale(state: impl Into<State>, event: &Event) -> Step {
    let state = state.into();
    let expected = state.context().requests();
    let got = event.request().unwrap_or_default();
    Step::ignore(state, event, IgnoreWhy::StaleRequest { expected, got })
}
