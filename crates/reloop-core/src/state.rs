//! The loop's state: one variant per phase, each carrying the loop-wide context.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::event::ToolOutcome;
use crate::history::{Digest, History};
use crate::message::{ContentBlock, ToolUse, Usage};
use crate::reason::{ContinueReason, Evidence, TerminalReason};

/// The limits and switches the core obeys. Stored in the session's journal header, so a replay
/// runs under the same rules. New fields must default so that old journals still load.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Config {
    /// Stop before a turn that would exceed this many turns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<u32>,
}

impl Config {
    pub fn with_max_turns(mut self, max_turns: Option<u32>) -> Self {
        self.max_turns = max_turns;
        self
    }
}

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
        }
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
    }
}

/// The response in flight: the content blocks completed so far.
#[derive(Debug, Clone, Default)]
pub struct Streaming {
    pub blocks: Vec<ContentBlock>,
}

/// The tool calls of the last assistant message and the outcomes received so far.
#[derive(Debug, Clone)]
pub struct Tools {
    pub calls: Vec<ToolUse>,
    pub outcomes: Vec<Option<ToolOutcome>>,
}

impl Tools {
    pub fn new(calls: Vec<ToolUse>) -> Self {
        let outcomes = vec![None; calls.len()];
        Tools { calls, outcomes }
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
            State::Idle(c) | State::AwaitingModel(c, _) | State::RunningTools(c, _) | State::Done(c, _) => c,
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
            State::Idle(_) => {}
            State::AwaitingModel(_, s) => d.json(&s.blocks),
            State::RunningTools(_, t) => {
                d.json(&t.calls);
                d.json(&t.outcomes);
            }
            State::Done(_, t) => d.json(t),
        }
        d.finish()
    }
}
