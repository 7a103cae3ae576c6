//! The loop's state: one variant per phase, each carrying the loop-wide context and what is
//! in flight in that phase.

use serde::{Deserialize, Serialize};

use crate::context::Loop;
use crate::digest::Digest;
use crate::event::ToolOutcome;
use crate::history::History;
use crate::message::{ContentBlock, ToolUse};
use crate::reason::{Evidence, HookPrevented, Stop, TerminalReason};
use std::sync::Arc;

pub use crate::config::Config;

/// The response in flight: the content blocks completed so far.
#[derive(Debug, Clone, Default)]
pub struct Streaming {
    /// The content blocks completed so far.
    pub(crate) blocks: Vec<ContentBlock>,
    /// Something of this response reached the caller's stream (a delta or a block); a failed
    /// attempt must then be withdrawn.
    pub(crate) streamed: bool,
}

impl Streaming {
    /// The content blocks completed so far.
    pub fn blocks(&self) -> &[ContentBlock] {
        &self.blocks
    }

    /// Mixes the blocks into a digest: typed, or as their JSON array up to version 3.
    fn digest_into(&self, d: &mut Digest) {
        if d.is_typed() {
            d.u64(self.blocks.len() as u64);
            self.blocks.iter().for_each(|block| crate::digest::digest_block(d, block));
        } else {
            d.value(&self.blocks);
        }
    }
}

/// The tool calls of the last assistant message and the outcomes received so far.
#[derive(Debug, Clone)]
pub struct Tools {
    /// The calls, in the order the model asked for them.
    pub(crate) calls: Vec<Arc<ToolUse>>,
    /// Each call's outcome, once it arrived.
    outcomes: Vec<Option<ToolOutcome>>,
    /// PostToolUse feedback for the model, by call index.
    pub(crate) feedback: Vec<(usize, String)>,
    /// What PostToolUse hooks add to the context, by call index ([`crate::Flag::PostToolUseContext`]).
    pub(crate) contexts: Vec<(usize, String)>,
    /// A tool hook said `continue: false`: the loop stops after these tools.
    pub(crate) stopped_by: Option<HookPrevented>,
    /// Calls that may change something and were journaled as started.
    pub(crate) started: Vec<String>,
    /// The calls' indices in the order their outcomes arrived (the journal's order, so a
    /// replay sees the same): Claude Code sends a concurrent batch's results so.
    arrived: Vec<usize>,
}

impl Tools {
    /// The calls of a response, none answered.
    pub(crate) fn new(calls: Vec<Arc<ToolUse>>) -> Self {
        let outcomes = vec![None; calls.len()];
        Tools {
            calls,
            outcomes,
            feedback: Vec::new(),
            contexts: Vec::new(),
            stopped_by: None,
            started: Vec::new(),
            arrived: Vec::new(),
        }
    }

    /// The calls, in the order the model asked for them.
    pub fn calls(&self) -> &[Arc<ToolUse>] {
        &self.calls
    }

    /// Each call's outcome, once it arrived.
    pub fn outcomes(&self) -> &[Option<ToolOutcome>] {
        &self.outcomes
    }

    /// The outcome of call `i` arrived.
    pub(crate) fn answer(&mut self, i: usize, outcome: ToolOutcome) {
        let Some(slot) = self.outcomes.get_mut(i) else { return };
        *slot = Some(outcome);
        self.arrived.push(i);
    }

    /// Takes the outcomes, in the calls' order, leaving none.
    pub(crate) fn take_outcomes(&mut self) -> Vec<Option<ToolOutcome>> {
        self.arrived.clear();
        std::mem::take(&mut self.outcomes)
    }

    /// Takes the outcomes in the order they arrived, leaving none. The driver runs a
    /// concurrent batch only after the batch before it is done, so batches stay in the calls'
    /// order; an outcome filed without arriving (none today) would come last, in call order.
    pub(crate) fn take_outcomes_as_arrived(&mut self) -> Vec<Option<ToolOutcome>> {
        let mut outcomes = std::mem::take(&mut self.outcomes);
        let arrived = std::mem::take(&mut self.arrived);
        let mut out: Vec<Option<ToolOutcome>> =
            arrived.iter().filter_map(|&i| outcomes.get_mut(i).map(Option::take)).collect();
        out.extend(outcomes);
        out
    }

    /// Every call is answered.
    pub fn is_complete(&self) -> bool {
        self.outcomes.iter().all(Option::is_some)
    }

    /// Mixes the calls and their outcomes into a digest.
    fn digest_into(&self, d: &mut Digest) {
        if d.is_typed() {
            d.u64(self.calls.len() as u64);
            self.calls.iter().for_each(|call| crate::digest::digest_tool_use(d, call));
        } else {
            d.value(&self.calls);
        }
        d.value(&self.outcomes);
    }
}

/// How the loop ended. Journaled (and digested) in the flat form `{reason, evidence, error}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "TerminalWire", try_from = "TerminalWire")]
pub struct Terminal {
    /// Why the loop stopped, with its evidence.
    pub stop: Stop,
    /// The error shown to the caller as the final assistant text, when the run failed.
    pub error: Option<String>,
}

impl Terminal {
    /// A stop with no error text.
    pub fn new(stop: Stop) -> Self {
        Terminal { stop, error: None }
    }

    /// A stop whose error text the caller sees as the final assistant text.
    pub fn failed(stop: Stop, error: impl Into<String>) -> Self {
        Terminal { stop, error: Some(error.into()) }
    }

    /// The terminal reason's name.
    pub fn reason(&self) -> TerminalReason {
        self.stop.reason()
    }

    /// The flat evidence.
    pub fn evidence(&self) -> Evidence {
        self.stop.evidence()
    }
}

/// Every phase, in the order of the state's phases: the rows of the transition table.
pub const PHASES: &[&str] = <Phase as strum::VariantNames>::VARIANTS;

/// The loop's state: which phase it is in and what that phase carries. Opaque outside the core:
/// a state is made by [`State::new`] and moved on only by [`crate::transition()`], so no caller can
/// build a mid-run state the machine never reached, or change one behind its back. Callers read it
/// through its queries ([`State::phase`], [`State::context`], [`State::terminal`], ...).
///
/// ```compile_fail
/// # use reloop_core::{Config, State};
/// // The context can be read, never written: only a transition moves the loop on.
/// let state = State::new(Config::default());
/// state.context().query.turn_count = 9;
/// ```
#[derive(Debug, Clone)]
pub struct State(Phase);

/// One variant per phase of the loop, each carrying the loop-wide context and what is in flight.
#[derive(Debug, Clone, strum::IntoStaticStr, strum::VariantNames)]
#[strum(serialize_all = "snake_case")]
pub(crate) enum Phase {
    /// Waiting for the user's first input.
    Idle(Box<Loop>),
    /// A model request is in flight.
    AwaitingModel(Box<Loop>, Streaming),
    /// The tools of the last assistant message are running.
    RunningTools(Box<Loop>, Tools),
    /// A request failed; the driver waits before the loop asks again.
    WaitingRetry(Box<Loop>),
    /// The history is being summarised; the request waits for the summary.
    Compacting(Box<Loop>, crate::compact::Compaction),
    /// The model asked for no tool; the Stop hooks decide whether the turn ends.
    RunningStopHooks(Box<Loop>, Option<crate::event::StopReason>),
    /// The loop has stopped; nothing more happens.
    Done(Box<Loop>, Terminal),
}

/// The loop-wide context every phase carries (`$phase`: a reference to a [`Phase`]): the one
/// list of the phases, for reading the context and for changing it.
macro_rules! context_of {
    ($phase:expr) => {
        match $phase {
            Phase::Idle(c)
            | Phase::AwaitingModel(c, _)
            | Phase::RunningTools(c, _)
            | Phase::WaitingRetry(c)
            | Phase::RunningStopHooks(c, _)
            | Phase::Compacting(c, _)
            | Phase::Done(c, _) => c,
        }
    };
}

impl From<Phase> for State {
    fn from(phase: Phase) -> Self {
        State(phase)
    }
}

impl State {
    /// A session that has not started, under `config`.
    pub fn new(config: Config) -> Self {
        State(Phase::Idle(Box::new(Loop::new(config))))
    }

    /// The phase and what it carries, for the transition to take apart.
    pub(crate) fn into_phase(self) -> Phase {
        self.0
    }

    /// The loop-wide context, whatever the phase.
    pub fn context(&self) -> &Loop {
        context_of!(&self.0)
    }

    /// The context of a loop that has not stopped.
    pub(crate) fn context_mut_if_running(&mut self) -> Option<&mut Loop> {
        if self.is_done() {
            None
        } else {
            Some(self.context_mut())
        }
    }

    pub(crate) fn context_mut(&mut self) -> &mut Loop {
        context_of!(&mut self.0)
    }

    /// The conversation.
    pub fn messages(&self) -> &History {
        &self.context().messages
    }

    /// What every request goes without since refusals ([`crate::profile::RequestGuess`]).
    pub fn shed(&self) -> crate::profile::RequestGuesses {
        self.context().session.shed
    }

    /// The phase's name, as journaled.
    pub fn phase(&self) -> &'static str {
        (&self.0).into()
    }

    /// How the loop ended, once it has.
    pub fn terminal(&self) -> Option<&Terminal> {
        match &self.0 {
            Phase::Done(_, t) => Some(t),
            _ => None,
        }
    }

    /// The loop has stopped.
    pub fn is_done(&self) -> bool {
        matches!(self.0, Phase::Done(..))
    }

    /// The loop waits for the user's first input.
    pub fn is_idle(&self) -> bool {
        matches!(self.0, Phase::Idle(..))
    }

    /// A model request is in flight: the response streamed so far, if so.
    pub fn streaming(&self) -> Option<&Streaming> {
        match &self.0 {
            Phase::AwaitingModel(_, streaming) => Some(streaming),
            _ => None,
        }
    }

    /// Tools are running: their calls and the outcomes received so far, if so.
    pub fn tools(&self) -> Option<&Tools> {
        match &self.0 {
            Phase::RunningTools(_, tools) => Some(tools),
            _ => None,
        }
    }

    /// A digest of everything that decides the loop's future. Replay compares it step by step;
    /// it costs O(1) in the length of the history.
    pub fn digest(&self) -> u64 {
        let mut d = Digest::for_version(self.context().config.digest_version);
        d.bytes(self.phase().as_bytes());
        self.context().digest_into(&mut d);
        match &self.0 {
            Phase::Idle(_) | Phase::WaitingRetry(_) => {}
            Phase::RunningStopHooks(_, stop_reason) => d.value(stop_reason),
            Phase::Compacting(_, compaction) => d.value(compaction),
            Phase::AwaitingModel(_, s) => {
                s.digest_into(&mut d);
                d.u64(u64::from(s.streamed));
            }
            Phase::RunningTools(_, t) => {
                t.digest_into(&mut d);
                d.list(&t.feedback);
                // Added after journals existed: counted only when some hook added context.
                if !t.contexts.is_empty() {
                    d.list(&t.contexts);
                }
                d.option(&t.stopped_by.clone().map(Evidence::HookPrevented));
                // Added after journals existed: digest version 1 counts it only when set.
                if self.context().config.digest_version >= 2 || !t.started.is_empty() {
                    d.list(&t.started);
                }
            }
            Phase::Done(_, t) => d.value(t),
        }
        d.finish()
    }
}

/// The journaled form of a [`crate::Terminal`]: what the digest of a stopped state has always
/// hashed.
#[derive(Serialize, Deserialize)]
pub(crate) struct TerminalWire {
    reason: TerminalReason,
    evidence: Evidence,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

impl From<Terminal> for TerminalWire {
    fn from(t: Terminal) -> Self {
        TerminalWire { reason: t.stop.reason(), evidence: t.stop.evidence(), error: t.error }
    }
}

impl TryFrom<TerminalWire> for Terminal {
    type Error = String;

    fn try_from(w: TerminalWire) -> Result<Self, String> {
        Ok(Terminal { stop: Stop::from_wire(w.reason, w.evidence)?, error: w.error })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Message;
    use proptest::prelude::*;
    use serde_json::Value;

    /// Blocks of every kind, with kept fields, escapes and text beyond ASCII.
    const BLOCKS: [&str; 8] = [
        r#"{"type":"text","text":"Checking \"the\" next file.\n"}"#,
        r#"{"type":"text","text":"é ✓ \u0001","citations":null}"#,
        r#"{"type":"tool_use","id":"toolu_1","name":"Read","input":{"file_path":"/a b/\\c","limit":3}}"#,
        r#"{"type":"tool_use","id":"t","name":"n","input":{},"cache_control":{"type":"ephemeral"}}"#,
        r#"{"type":"thinking","thinking":"Let me think.\n\t\"quoted\"","signature":"c2ln"}"#,
        r#"{"type":"redacted_thinking","data":"abc","z":[1,2]}"#,
        r#"{"type":"server_tool_use","id":"s","name":"web_search","input":{"query":"x"}}"#,
        r#"{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"a"}],"is_error":true}"#,
    ];
    const EXTRA: [(&str, &str); 4] =
        [("id", r#""msg_01""#), ("model", r#""claude \"x\"""#), ("stop_reason", "null"), ("k\n", r#"{"a":[1]}"#)];

    fn digests(version: u32, bytes: impl FnOnce(&mut Digest)) -> u64 {
        let mut d = Digest::for_version(version);
        bytes(&mut d);
        d.finish()
    }

    proptest! {
        /// Up to version 3 the blocks of a response in flight digest as their JSON array, as
        /// serde_json writes it: every journaled digest of those versions depends on it. In
        /// every version, the token estimate counts each message's JSON as serde_json writes it.
        #[test]
        fn blocks_digest_as_their_json_up_to_version_3_and_messages_count_their_json(
            picks in proptest::collection::vec(0..BLOCKS.len(), 0..6),
            extra in proptest::collection::vec(0..EXTRA.len(), 0..4),
            version in 1u32..=4,
        ) {
            let blocks: Vec<ContentBlock> =
                picks.iter().map(|i| serde_json::from_str(BLOCKS[*i]).expect("a block")).collect();
            let mut streaming = Streaming::default();
            for block in blocks.clone() {
                streaming.blocks.push(block);
            }
            if version < crate::digest::TYPED_FROM {
                let mut json = Digest::for_version(version);
                serde_json::to_writer(&mut json, &blocks).expect("writes");
                prop_assert_eq!(digests(version, |d| streaming.digest_into(d)), json.finish());
            }
            let mut message = Message::assistant(streaming.blocks);
            for i in extra {
                let (key, value) = EXTRA[i];
                message.extra.insert(key.to_string(), serde_json::from_str::<Value>(value).expect("a value"));
            }
            let mut history = History::with_digest_version(version);
            history.push(Message::user_text("go"));
            history.push(message.clone());
            let lens = [&message, &Message::user_text("go")].map(|m| serde_json::to_vec(m).expect("json").len() as u64);
            prop_assert_eq!(history.tail_json_lens(5).collect::<Vec<_>>(), lens.to_vec());
        }
    }
}
