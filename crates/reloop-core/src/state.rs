//! The loop's state: one variant per phase, each carrying the loop-wide context and what is
//! in flight in that phase.

use serde::{Deserialize, Serialize};

use crate::context::Loop;
use crate::event::ToolOutcome;
use crate::history::{Digest, History};
use crate::message::{ContentBlock, ToolUse};
use crate::reason::{Evidence, HookPrevented, Stop, TerminalReason};

pub use crate::config::Config;

/// The response in flight: the content blocks completed so far.
#[derive(Debug, Clone, Default)]
pub struct Streaming {
    /// The content blocks completed so far.
    blocks: Vec<ContentBlock>,
    /// Their JSON, comma-separated: the bytes the state digest hashes of them, written once as
    /// each block completes. Every later step of the response (each text delta) digests them
    /// again, and serializing a long thinking block at every delta made a response of 500 deltas
    /// cost five times its journal-free time.
    blocks_json: Vec<u8>,
    /// Something of this response reached the caller's stream (a delta or a block); a failed
    /// attempt must then be withdrawn.
    pub streamed: bool,
}

impl Streaming {
    /// The content blocks completed so far.
    pub fn blocks(&self) -> &[ContentBlock] {
        &self.blocks
    }

    /// A block completed.
    pub(crate) fn push(&mut self, block: ContentBlock) {
        if self.blocks.is_empty() {
            // Room for a usual response's blocks at once, rather than growing by doubling from
            // eight bytes (they are dropped when the response completes).
            self.blocks_json.reserve(256);
        } else {
            self.blocks_json.push(b',');
        }
        block.write_json(&mut self.blocks_json);
        self.blocks.push(block);
    }

    /// The blocks, and their JSON as a message's `content` array holds it (without the
    /// brackets).
    pub(crate) fn into_blocks(self) -> (Vec<ContentBlock>, Vec<u8>) {
        (self.blocks, self.blocks_json)
    }

    /// Mixes the blocks into a digest, as their JSON array.
    fn digest_into(&self, d: &mut Digest) {
        d.bytes(b"[");
        d.bytes(&self.blocks_json);
        d.bytes(b"]");
    }
}

/// The tool calls of the last assistant message and the outcomes received so far.
#[derive(Debug, Clone)]
pub struct Tools {
    /// The calls, in the order the model asked for them.
    pub calls: Vec<ToolUse>,
    /// Each call's outcome, once it arrived.
    outcomes: Vec<Option<ToolOutcome>>,
    /// Each arrived outcome's JSON, written once as it arrives (empty until one is): every
    /// later step of the batch digests the outcomes again, and a tool's output can be long (a
    /// file read whole).
    outcomes_json: Vec<Option<Vec<u8>>>,
    /// An outcome could not be serialized (none of ours fails): the digest then serializes the
    /// outcomes as it always did.
    unserializable: bool,
    /// PostToolUse feedback for the model, by call index.
    pub feedback: Vec<(usize, String)>,
    /// A tool hook said `continue: false`: the loop stops after these tools.
    pub stopped_by: Option<HookPrevented>,
    /// Calls that may change something and were journaled as started.
    pub started: Vec<String>,
}

impl Tools {
    /// The calls of a response, none answered.
    pub fn new(calls: Vec<ToolUse>) -> Self {
        let outcomes = vec![None; calls.len()];
        Tools {
            calls,
            outcomes,
            outcomes_json: Vec::new(),
            unserializable: false,
            feedback: Vec::new(),
            stopped_by: None,
            started: Vec::new(),
        }
    }

    /// Each call's outcome, once it arrived.
    pub fn outcomes(&self) -> &[Option<ToolOutcome>] {
        &self.outcomes
    }

    /// The outcome of call `i` arrived.
    pub(crate) fn answer(&mut self, i: usize, outcome: ToolOutcome) {
        let Some(slot) = self.outcomes.get_mut(i) else { return };
        *slot = Some(outcome);
        // The last answer usually ends the batch, and a batch of one call (the most common) is
        // never digested with an answer: its JSON is written only if a later step may need it
        // (the digest writes an outcome without it itself).
        if self.is_complete() {
            return;
        }
        let mut json = Vec::new();
        if serde_json::to_writer(&mut json, &self.outcomes[i]).is_err() {
            self.unserializable = true;
        }
        self.outcomes_json.resize(self.outcomes.len(), None);
        self.outcomes_json[i] = Some(json);
    }

    /// Takes the outcomes, in the calls' order, leaving none.
    pub(crate) fn take_outcomes(&mut self) -> Vec<Option<ToolOutcome>> {
        self.outcomes_json.clear();
        std::mem::take(&mut self.outcomes)
    }

    /// Every call is answered.
    pub fn is_complete(&self) -> bool {
        self.outcomes.iter().all(Option::is_some)
    }

    /// Mixes the outcomes into a digest, as their JSON array.
    fn digest_outcomes(&self, d: &mut Digest) {
        if self.unserializable {
            d.json(&self.outcomes);
            return;
        }
        d.bytes(b"[");
        for (i, outcome) in self.outcomes.iter().enumerate() {
            if i > 0 {
                d.bytes(b",");
            }
            match (outcome, self.outcomes_json.get(i).and_then(Option::as_deref)) {
                (Some(_), Some(json)) => d.bytes(json),
                (Some(outcome), None) => d.json(outcome),
                (None, _) => d.bytes(b"null"),
            }
        }
        d.bytes(b"]");
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

/// Every phase, in the order of [`State`]'s variants: the rows of the transition table.
pub const PHASES: &[&str] =
    &["idle", "awaiting_model", "running_tools", "waiting_retry", "compacting", "running_stop_hooks", "done"];

/// One variant per phase of the loop.
#[derive(Debug, Clone)]
pub enum State {
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

impl State {
    /// A session that has not started, under `config`.
    pub fn new(config: Config) -> Self {
        State::Idle(Box::new(Loop::new(config)))
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

    /// The context of a loop that has not stopped.
    pub(crate) fn context_mut_if_running(&mut self) -> Option<&mut Loop> {
        match self {
            State::Done(..) => None,
            state => Some(state.context_mut()),
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

    /// The conversation.
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

    /// How the loop ended, once it has.
    pub fn terminal(&self) -> Option<&Terminal> {
        match self {
            State::Done(_, t) => Some(t),
            _ => None,
        }
    }

    /// The loop has stopped.
    pub fn is_done(&self) -> bool {
        matches!(self, State::Done(..))
    }

    /// A digest of everything that decides the loop's future. Replay compares it step by step;
    /// it costs O(1) in the length of the history.
    pub fn digest(&self) -> u64 {
        let mut d = Digest::for_version(self.context().config.digest_version);
        d.bytes(self.phase().as_bytes());
        self.context().digest_into(&mut d);
        match self {
            State::Idle(_) | State::WaitingRetry(_) => {}
            State::RunningStopHooks(_, stop_reason) => d.json(stop_reason),
            State::Compacting(_, compaction) => d.json(compaction),
            State::AwaitingModel(_, s) => {
                s.digest_into(&mut d);
                d.u64(u64::from(s.streamed));
            }
            State::RunningTools(_, t) => {
                crate::wire::write_tool_uses(&mut d, &t.calls);
                t.digest_outcomes(&mut d);
                d.json_list(&t.feedback);
                d.json_option(&t.stopped_by.as_ref().map(HookPrevented::evidence));
                // Added after journals existed: digest version 1 counts it only when set.
                if self.context().config.digest_version >= 2 || !t.started.is_empty() {
                    d.json_list(&t.started);
                }
            }
            State::Done(_, t) => d.json(t),
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
        /// What the streaming state and the history keep of the blocks' JSON, written as each
        /// completed, digests as the blocks serialized at once did: every journaled digest of
        /// every version depends on it.
        #[test]
        fn the_blocks_json_kept_as_they_complete_digests_as_the_blocks_at_once(
            picks in proptest::collection::vec(0..BLOCKS.len(), 0..6),
            extra in proptest::collection::vec(0..EXTRA.len(), 0..4),
            version in 1u32..=3,
        ) {
            let blocks: Vec<ContentBlock> =
                picks.iter().map(|i| serde_json::from_str(BLOCKS[*i]).expect("a block")).collect();
            let mut streaming = Streaming::default();
            for block in blocks.clone() {
                streaming.push(block);
            }
            prop_assert_eq!(
                digests(version, |d| streaming.digest_into(d)),
                digests(version, |d| d.json(&blocks))
            );

            let (kept, json) = streaming.into_blocks();
            let mut message = Message::assistant(kept);
            for i in extra {
                let (key, value) = EXTRA[i];
                message.extra.insert(key.to_string(), serde_json::from_str::<Value>(value).expect("a value"));
            }
            let mut by_bytes = History::with_digest_version(version);
            by_bytes.push(Message::user_text("go"));
            let mut by_value = by_bytes.clone();
            by_bytes.push_with_content_json(message.clone(), &json);
            // The token estimate counts each message's JSON as its digest wrote it.
            let lens = [&message, &Message::user_text("go")].map(|m| serde_json::to_vec(m).expect("json").len() as u64);
            by_value.push(message);
            prop_assert_eq!(by_bytes.digest(), by_value.digest());
            prop_assert_eq!(by_bytes.tail_json_lens(5).collect::<Vec<_>>(), lens.to_vec());
            prop_assert_eq!(by_value.tail_json_lens(5).collect::<Vec<_>>(), lens.to_vec());
            prop_assert_eq!(by_bytes, by_value);
        }

        /// The same for the outcomes of a batch of tool calls, answered in any order.
        #[test]
        fn the_outcomes_json_kept_as_they_arrive_digests_as_the_outcomes_at_once(
            order in Just((0..5usize).collect::<Vec<_>>()).prop_shuffle(),
            answered in 0..=5usize,
            version in 1u32..=3,
        ) {
            let calls: Vec<ToolUse> = (0..5)
                .map(|i| ToolUse { id: format!("toolu_{i}"), name: "Read".into(), input: Value::Null, extra: Default::default() })
                .collect();
            let mut tools = Tools::new(calls);
            for &i in &order[..answered] {
                let text = format!("{i}\t\"line\"\n é {}", "x".repeat(i * 40));
                let mut outcome = ToolOutcome::error(&format!("toolu_{i}"), &text);
                outcome.is_error = i % 2 == 0;
                outcome.request = 7;
                tools.answer(i, outcome);
            }
            prop_assert_eq!(
                digests(version, |d| tools.digest_outcomes(d)),
                digests(version, |d| d.json(&tools.outcomes()))
            );
            let taken = tools.take_outcomes();
            prop_assert_eq!(taken.iter().flatten().count(), answered);
            prop_assert!(tools.outcomes().is_empty());
            prop_assert_eq!(digests(version, |d| tools.digest_outcomes(d)), digests(version, |d| d.json(&tools.outcomes())));
        }
    }
}
