//! What the core asks the driver to do. Effects are data: the driver executes them and feeds
//! their outcomes back as events; replay compares them with the journal instead.

use serde::{Deserialize, Serialize};

use crate::message::ToolUse;
use std::sync::Arc;

/// One model request. The messages themselves are the state's history; the journal records only
/// their count so that journal bytes per turn stay flat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelCall {
    /// The turn this request belongs to (`turn_count`).
    pub turn: u32,
    /// 1-based request number in the session, retries included.
    pub request: u32,
    /// How many messages the request carries.
    pub message_count: usize,
    /// The model to ask (the fallback model once the session switched).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub model: String,
    /// The output-token limit of this request.
    #[serde(default)]
    pub max_tokens: u32,
    /// `false`: ask for the whole answer at once rather than streamed (Claude Code's last try
    /// after streams that broke off with an overload). Journaled only when `false`.
    #[serde(default = "streamed", skip_serializing_if = "is_streamed")]
    pub stream: bool,
    /// What the request is sent without, its profile's guesses after earlier refusals
    /// ([`crate::profile::RequestGuess`], flag 41); journaled only when some were taken.
    #[serde(default, skip_serializing_if = "crate::profile::RequestGuesses::is_empty")]
    pub shed: crate::profile::RequestGuesses,
}

fn streamed() -> bool {
    true
}

fn is_streamed(stream: &bool) -> bool {
    *stream
}

/// Wait before asking again; the driver then feeds `retry_ready`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RetryWait {
    /// 1-based retry number.
    pub attempt: u32,
    /// The most retries the session makes.
    pub max_retries: u32,
    /// How long to wait.
    pub delay_ms: u64,
    /// The failed attempt's HTTP status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_status: Option<u16>,
    /// `overloaded`, `rate_limit`, `server_error`, `connection_error`, ...
    pub error: String,
    /// What the server's `retry-after` asked for, in milliseconds, when it was over
    /// [`crate::MAX_RETRY_AFTER_MS`] and `delay_ms` is the cap instead; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_capped_from_ms: Option<u64>,
    /// The delay with its fraction, as Claude Code 2.1.197 waits and prints it
    /// ([`crate::profile::RetryCurve::Unrounded`]); `delay_ms` is its whole milliseconds.
    /// Absent otherwise (and in every journal from before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unrounded_delay_ms: Option<f64>,
}

/// What a step asks for: a [`Command`] the driver must carry out, or a [`Notice`] the caller's
/// stream must show. A step's effects are one ordered list (journaled as such, so a replay
/// compares their order too); each is one or the other.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Effect {
    /// Work for the driver.
    Command(Command),
    /// News for the caller.
    Notice(Notice),
}

/// Work the driver must carry out. Not `#[non_exhaustive]`: a new command must break the
/// build of every driver until it is handled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, strum::IntoStaticStr)]
#[serde(tag = "effect", rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Command {
    /// Send the history to the model and stream its answer back as events.
    CallModel(ModelCall),
    /// Run these tool calls (the driver schedules them) and report each as `tool_done`.
    RunTools {
        /// The calls, in the order the model asked for them.
        calls: Vec<Arc<ToolUse>>,
    },
    /// After a crash: tool calls that started and were never answered. The driver re-runs the
    /// read-only ones and answers the others as possibly run, never re-running a write silently.
    ResumeTools {
        /// The unanswered calls.
        calls: Vec<Arc<ToolUse>>,
        /// The ids among them that had started (a `tool_started` is journaled).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        started: Vec<String>,
    },
    /// Ask the model for a summary of the first `summarize` messages of the history, shaped as
    /// the profile says (`compact::shape::summary_request`); report `compact_done`.
    Summarize {
        /// `auto`, `reactive` or `manual`.
        trigger: String,
        /// The summary request's number.
        request: u32,
        /// How many leading messages to summarise.
        summarize: usize,
        /// Estimated tokens before compaction.
        pre_tokens: u64,
        /// The summary request was itself too long: send it with its head cut (2.1.332).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        truncated: bool,
        /// With its head cut, the date message goes last (2.1.332's third shape, flag 18).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        date_last: bool,
        /// Summary requests this compaction sent before (flag 18 sends a shape twice).
        #[serde(default, skip_serializing_if = "crate::compact::is_zero")]
        attempt: u32,
        /// The files to read again once the summary is in, each a Read's input, in the order
        /// they are given back (flag 47); their texts come back with `compact_done`.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        give_back: Vec<String>,
    },
    /// Run the Stop hooks (in parallel) and report them as one `hook_done`.
    RunStopHooks {
        /// A Stop hook already held this turn open.
        stop_hook_active: bool,
        /// The text of the response the hooks judge.
        last_assistant_message: String,
    },
    /// Kill the hooks in flight.
    CancelHooks,
    /// Stop the model request in flight.
    CancelModel,
    /// Stop the tool calls in flight.
    CancelTools,
    /// Sleep, then feed `retry_ready`.
    WaitRetry(RetryWait),
}

/// News for the caller's stream; the driver does nothing else with it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, strum::IntoStaticStr)]
#[serde(tag = "effect", rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Notice {
    /// The history was compacted: the caller's stream shows a compact boundary.
    CompactBoundary {
        /// `auto`, `reactive` or `manual`.
        trigger: String,
        /// Estimated tokens before.
        pre_tokens: u64,
        /// Estimated tokens after.
        post_tokens: u64,
        /// How many messages of the history before it the compaction kept after the summary
        /// (flag 27); `None`: not said, the driver counts the messages after the summary.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        kept: Option<usize>,
    },
    /// A compaction failed and the request goes ahead without it; after three in a row the
    /// circuit breaker stops auto-compaction trying (`breaker_open`).
    CompactionFailed {
        /// `auto`, `reactive` or `manual`.
        trigger: String,
        /// Consecutive failures.
        failures: u32,
        /// Auto-compaction stops trying.
        breaker_open: bool,
        /// The summary request's error.
        message: String,
    },
    /// An auto-compaction found too little to summarise (Claude Code's `too_few_groups`) and the
    /// request goes ahead without it (flag 18).
    CompactionSkipped {
        /// `auto`.
        trigger: String,
    },
    /// A summary request was itself too long and is sent again with its head cut (2.1.332).
    CompactionRetried {
        /// `auto`, `reactive` or `manual`.
        trigger: String,
        /// The summary request's error.
        message: String,
    },
    /// Queued messages joined the next request.
    InputConsumed {
        /// Their ids.
        ids: Vec<String>,
    },
    /// The caller's stream must drop what it showed of the failed attempt.
    Withdraw,
    /// The session now asks another model, for the rest of the run.
    SwitchModel {
        /// `overloaded` or `server_error`.
        trigger: String,
        /// The model given up.
        from: String,
        /// The fallback model.
        to: String,
    },
}

impl From<Command> for Effect {
    fn from(command: Command) -> Self {
        Effect::Command(command)
    }
}

impl From<Notice> for Effect {
    fn from(notice: Notice) -> Self {
        Effect::Notice(notice)
    }
}

impl Effect {
    /// The effect's name as journaled, e.g. `call_model`.
    pub fn name(&self) -> &'static str {
        match self {
            Effect::Command(c) => c.name(),
            Effect::Notice(n) => n.name(),
        }
    }

    /// The command, if it is one.
    pub fn command(&self) -> Option<&Command> {
        match self {
            Effect::Command(c) => Some(c),
            Effect::Notice(_) => None,
        }
    }

    /// The notice, if it is one.
    pub fn notice(&self) -> Option<&Notice> {
        match self {
            Effect::Command(_) => None,
            Effect::Notice(n) => Some(n),
        }
    }
}

impl Command {
    /// The command's name as journaled.
    pub fn name(&self) -> &'static str {
        self.into()
    }
}

impl Notice {
    /// The notice's name as journaled.
    pub fn name(&self) -> &'static str {
        self.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_and_notices_journal_as_one_tagged_list() {
        let effects: Vec<Effect> = vec![Notice::Withdraw.into(), Command::CancelModel.into()];
        let json = serde_json::to_string(&effects).unwrap();
        assert_eq!(json, r#"[{"effect":"withdraw"},{"effect":"cancel_model"}]"#);
        let back: Vec<Effect> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, effects);
        for effect in &effects {
            assert!(json.contains(effect.name()));
        }
    }
}
