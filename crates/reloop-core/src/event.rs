//! Every outside fact the loop learns arrives as an [`Event`]. The journal stores them in the
//! order they were applied; replaying that order through [`crate::transition()`] rebuilds the run.

use serde::{Deserialize, Serialize};

use crate::message::{ContentBlock, Usage};
pub use crate::model_error::{ModelError, ModelErrorKind};
pub(crate) use crate::tool_outcome::is_legacy;
pub use crate::tool_outcome::ToolOutcome;

/// Why the model stopped, as the API says it. Unknown reasons are kept verbatim.
#[derive(Debug, Clone, PartialEq, Eq, strum::AsRefStr, strum::EnumString)]
#[strum(serialize_all = "snake_case")]
pub enum StopReason {
    /// The model finished its turn.
    EndTurn,
    /// The model asks for tools.
    ToolUse,
    /// The output-token limit cut the response.
    MaxTokens,
    /// A stop sequence ended the response.
    StopSequence,
    /// The server paused a long turn.
    PauseTurn,
    /// The model refused.
    Refusal,
    /// A reason this engine does not know, verbatim.
    #[strum(default, transparent)]
    Other(String),
}

impl StopReason {
    /// The reason as the API spells it.
    pub fn as_str(&self) -> &str {
        self.as_ref()
    }

    /// Reads the API's spelling.
    pub fn parse(s: &str) -> Self {
        s.parse().unwrap_or_else(|_| StopReason::Other(s.to_string()))
    }
}

impl Serialize for StopReason {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for StopReason {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(StopReason::parse(&String::deserialize(d)?))
    }
}

/// An outside fact, fed to [`crate::transition()`].
///
/// Completion events carry the number of what they complete (`request`, `attempt`): the core
/// applies one only when it completes what is in flight, and reports any other as
/// [`crate::Ignored`]. A stale answer can then never be taken for a fresh one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, strum::IntoStaticStr, strum::VariantNames)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Event {
    /// The user's prompt starts the session.
    UserInput {
        /// The prompt.
        content: Vec<ContentBlock>,
        /// Where the host says the message came from (an SDK app's `origin`, e.g.
        /// `{"kind":"human"}`), kept only to be echoed on the query's result: the core decides
        /// nothing by it, and it is journaled only when given, so older journals read and write
        /// back byte for byte.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        origin: Option<serde_json::Value>,
        /// What the local commands typed since the last prompt left in the conversation
        /// (Claude Code's caveat, each command and its output, a line each: `/compact`, `/clear`,
        /// 2.1.197's unknown command), which Claude Code sends the model with this prompt, after
        /// its context ([`crate::local_lines`]). Not the prompt: its hooks never see them.
        /// Journaled only when some were typed.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        local: Vec<crate::local_lines::LocalLine>,
    },
    /// A streamed text delta, for the caller's stream. It changes no state but the `streamed`
    /// mark, and it is journaled so that a replay reproduces the stream.
    TextDelta {
        /// The content block it belongs to.
        index: usize,
        /// The text.
        text: String,
        /// The request it answers.
        #[serde(default, skip_serializing_if = "is_legacy")]
        request: u32,
    },
    /// The response in flight began: its id and the usage it opened with, as the server wrote
    /// it (the Messages API's `message_start`), for the caller's stream. It changes no state;
    /// it is journaled so that a replay shows the response's head as the live run did.
    ModelStarted {
        /// The API's message id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// `message_start`'s `usage`, as sent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<serde_json::Value>,
        /// The request it answers.
        #[serde(default, skip_serializing_if = "is_legacy")]
        request: u32,
    },
    /// One content block of the response in flight is complete.
    ModelBlock {
        /// The block's index in the response.
        index: usize,
        /// The block.
        block: ContentBlock,
        /// The request it answers.
        #[serde(default, skip_serializing_if = "is_legacy")]
        request: u32,
    },
    /// The response in flight is complete.
    ModelDone {
        /// The API's message id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// The model that answered.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        /// Why the model stopped.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stop_reason: Option<StopReason>,
        /// The response's usage.
        #[serde(default)]
        usage: Usage,
        /// The request it answers.
        #[serde(default, skip_serializing_if = "is_legacy")]
        request: u32,
    },
    /// The request in flight failed.
    ModelFailed {
        /// What failed.
        error: ModelError,
        /// The request that failed.
        #[serde(default, skip_serializing_if = "is_legacy")]
        request: u32,
    },
    /// A call that may change something is about to run. Journaled before it runs, so a resume
    /// knows which unanswered calls may have had an effect.
    ToolStarted {
        /// The call.
        tool_use_id: String,
        /// The request whose response asked for it.
        #[serde(default, skip_serializing_if = "is_legacy")]
        request: u32,
    },
    /// A tool call finished (or was refused or cancelled by the driver).
    ToolDone(ToolOutcome),
    /// The hooks of one hook event finished (in parallel; runs in hook order).
    HookDone {
        /// Which hook event ran.
        hook_event: crate::hook::HookEventName,
        /// The tool call, for tool hooks.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_use_id: Option<String>,
        /// Each hook's raw run.
        runs: Vec<crate::hook::HookRun>,
        /// The request whose response the hooks judge.
        #[serde(default, skip_serializing_if = "is_legacy")]
        request: u32,
    },
    /// The summary request of a compaction completed.
    CompactDone {
        /// The model's summary.
        summary: String,
        /// The summary request's usage.
        #[serde(default)]
        usage: Usage,
        /// The summary request's number.
        #[serde(default, skip_serializing_if = "is_legacy")]
        request: u32,
        /// The texts of the files the summary request's `give_back` named, read again, in its
        /// order; `None` for one that could not be read (flag 47).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        given_back: Option<Vec<Option<String>>>,
    },
    /// The summary request of a compaction failed.
    CompactFailed {
        /// What failed.
        error: ModelError,
        /// The summary request's number.
        #[serde(default, skip_serializing_if = "is_legacy")]
        request: u32,
    },
    /// The user queued a message while the loop runs; it joins the next request.
    QueuedInput {
        /// The caller's id for it, reported back when a request carries it.
        id: String,
        /// The message.
        content: Vec<ContentBlock>,
    },
    /// The user asked to compact the conversation now (`reloop compact`).
    CompactRequested,
    /// The wait before a retry is over.
    RetryReady {
        /// The retry it is for ([`crate::RetryWait::attempt`]).
        #[serde(default, skip_serializing_if = "is_legacy")]
        attempt: u32,
    },
    /// The driver restarted on this journal after a crash: work that was in flight when the
    /// process stopped is asked for again.
    Resumed,
    /// The user (Ctrl-C) or the library caller asked the loop to stop.
    Abort,
    /// The caller switched the model for the requests still to come (the Agent SDK's
    /// `set_model`); `None` goes back to the session's configured model. Journaled like any
    /// outside fact, so a replay asks the same models with no caller.
    SetModel {
        /// The model, or `None` for the configured one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        /// The custom slash command (`/fm`) whose file's `model` this switch is for: to it
        /// before that command's query, back after it, as Claude Code asks a command's query;
        /// `None`: the caller's own switch (the SDK's `set_model`, which the stream echoes).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        command: Option<String>,
    },
    /// The caller switched the permission mode (the Agent SDK's `set_permission_mode`). The
    /// driver enforces permissions; the core keeps the mode so a resume and `why` know it.
    SetPermissionMode {
        /// Claude Code's name for the mode (`default`, `acceptEdits`, `plan`, ...).
        mode: String,
    },
    /// A slash command's `allowed-tools`, which the driver allows for its query only (no-op here).
    CommandTools {
        /// The command (`fm` for `/fm`).
        command: String,
        /// Its rules (`Bash(touch:*)`), before its prompt; none once its query is over.
        allow: Vec<String>,
    },
}

/// Every event kind, in declaration order: the columns of the transition table.
pub const EVENT_KINDS: &[&str] = <Event as strum::VariantNames>::VARIANTS;

/// Matches `$event` (an `Event`, or a reference to one) once: `$some` for the events that
/// complete a request, with `$request` bound to the number they carry, `$none` for the others.
/// The one list of where a request number lives, for reading it and for setting it.
macro_rules! on_request {
    ($event:expr, $request:ident => $some:expr, _ => $none:expr) => {
        match $event {
            Event::TextDelta { request: $request, .. }
            | Event::ModelStarted { request: $request, .. }
            | Event::ModelBlock { request: $request, .. }
            | Event::ModelDone { request: $request, .. }
            | Event::ModelFailed { request: $request, .. }
            | Event::ToolStarted { request: $request, .. }
            | Event::ToolDone(ToolOutcome { request: $request, .. })
            | Event::HookDone { request: $request, .. }
            | Event::CompactDone { request: $request, .. }
            | Event::CompactFailed { request: $request, .. } => $some,
            Event::UserInput { .. }
            | Event::QueuedInput { .. }
            | Event::CompactRequested
            | Event::RetryReady { .. }
            | Event::Resumed
            | Event::Abort
            | Event::SetModel { .. }
            | Event::SetPermissionMode { .. }
            | Event::CommandTools { .. } => $none,
        }
    };
}

impl Event {
    /// A user's message with no `origin`: what every caller but an SDK app that stamps one sends.
    pub fn user_input(content: Vec<ContentBlock>) -> Event {
        Event::UserInput { content, origin: None, local: Vec::new() }
    }

    /// The request number a completion event names (`None` for events that complete no
    /// request; `Some(0)` for one journaled before correlation ids).
    pub fn request(&self) -> Option<u32> {
        on_request!(self, request => Some(*request), _ => None)
    }

    /// The same event naming `request` as what it completes (events that complete no request
    /// are returned as they are). The driver tags each outcome with the request it answers.
    pub fn correlated(mut self, number: u32) -> Self {
        on_request!(&mut self, request => *request = number, _ => {});
        self
    }

    /// The event's kind as journaled, e.g. `model_block`.
    pub fn kind(&self) -> &'static str {
        self.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_of_old_journals_load_with_legacy_correlation_and_keep_their_bytes() {
        for old in [
            r#"{"kind":"retry_ready"}"#,
            r#"{"kind":"model_block","index":0,"block":{"type":"text","text":"hi"}}"#,
            r#"{"kind":"tool_done","tool_use_id":"t","content":"ok"}"#,
        ] {
            let event: Event = serde_json::from_str(old).unwrap();
            assert_eq!(serde_json::to_string(&event).unwrap(), old);
        }
        let fresh = Event::RetryReady { attempt: 2 };
        assert_eq!(serde_json::to_string(&fresh).unwrap(), r#"{"kind":"retry_ready","attempt":2}"#);
    }

    #[test]
    fn stop_reasons_read_and_write_the_api_s_spelling_and_keep_unknown_ones() {
        let known = ["end_turn", "tool_use", "max_tokens", "stop_sequence", "pause_turn", "refusal"];
        for name in known {
            let reason = StopReason::parse(name);
            assert!(!matches!(reason, StopReason::Other(_)), "{name}");
            assert_eq!(reason.as_str(), name);
            assert_eq!(serde_json::to_string(&reason).unwrap(), format!("\"{name}\""));
        }
        assert_eq!(StopReason::parse("model_context_window_exceeded").as_str(), "model_context_window_exceeded");
        assert_eq!(StopReason::parse("Tool_Use"), StopReason::Other("Tool_Use".into()));
    }

    #[test]
    fn the_kind_list_names_every_kind_once() {
        let mut kinds = EVENT_KINDS.to_vec();
        kinds.sort_unstable();
        kinds.dedup();
        assert_eq!(kinds.len(), EVENT_KINDS.len());
    }
}
