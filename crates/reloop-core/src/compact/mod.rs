//! Compaction: the older part of the history is replaced by a model-written summary, before a
//! request would reach the auto-compact threshold (`auto`), once after the API says the prompt
//! is too long (`reactive`), or on demand (`manual`).
//!
//! The request carries only what follows the last compaction; everything before it stays in the
//! journal. The most recent complete exchange — an assistant `tool_use` with its user
//! `tool_result`, never one without the other — is kept verbatim after the summary.

use serde::{Deserialize, Serialize};

use crate::history::History;
use crate::message::{ContentBlock, Message, Role};
use crate::profile::SummaryShape;

pub(crate) mod ledger;
pub mod shape;

pub(crate) use ledger::ReadLedger;

/// After this many consecutive failed compactions, auto-compaction stops trying.
pub(crate) const MAX_CONSECUTIVE_FAILURES: u32 = 3;

/// The first words of the summary message (Claude Code's text).
pub const SUMMARY_PREAMBLE: &str = "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.";
/// The last words of the summary message (Claude Code's text).
pub(crate) const SUMMARY_CONTINUE: &str = "Continue the conversation from where it left off without asking the user any further questions. Resume directly — do not acknowledge the summary, do not recap what was happening, do not preface with \"I'll continue\" or similar. Pick up the last task as if the break never happened.";
/// The error of a prompt that cannot be made to fit.
pub(crate) const PROMPT_TOO_LONG: &str = "Prompt is too long";

/// What started a compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Trigger {
    /// The next request would reach the auto-compact threshold.
    Auto,
    /// The API said the prompt is too long.
    Reactive,
    /// The user asked (`reloop compact`).
    Manual,
}

impl Trigger {
    /// `auto`, `reactive` or `manual`.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// A compaction in flight.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Compaction {
    /// What started it.
    pub trigger: Trigger,
    /// Estimated tokens of the history before compaction.
    pub pre_tokens: u64,
    /// How many leading messages the summary replaces; the rest are kept.
    pub summarize: usize,
    /// This is the retry of a summary request that was itself too long: its head is cut.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// Summary requests sent before this one for the same compaction (flag 18).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub attempt: u32,
}

pub(crate) fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Compaction {
    /// A compaction's first summary request.
    pub(crate) fn new(trigger: Trigger, pre_tokens: u64, summarize: usize) -> Self {
        Compaction { trigger, pre_tokens, summarize, truncated: false, attempt: 0 }
    }

    /// The shape of this attempt's summary request.
    pub(crate) fn shape(&self, config: &crate::Config) -> SummaryShape {
        let shapes = config.compact_rule().too_long_shapes;
        match shapes.get(self.attempt as usize) {
            Some(shape) if config.flag(crate::flags::Flag::ClaudeCodeCompactionEnds) => *shape,
            _ if self.truncated => SummaryShape::HeadCut,
            _ => SummaryShape::Full,
        }
    }

    /// The next attempt after this one's request was itself too long, if the session's rules
    /// send another.
    pub(crate) fn retry(&self, config: &crate::Config) -> Option<Compaction> {
        if config.flag(crate::flags::Flag::ClaudeCodeCompactionEnds) {
            let attempt = self.attempt.saturating_add(1);
            let shape = config.compact_rule().too_long_shapes.get(attempt as usize)?;
            return Some(Compaction { attempt, truncated: *shape != SummaryShape::Full, ..self.clone() });
        }
        (config.compact_rule().truncated_retry && !self.truncated)
            .then(|| Compaction { truncated: true, ..self.clone() })
    }
}

/// The transcript file a session writes (or would write): the summary message points a
/// reader there for the details it left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Transcript {
    /// Its path.
    pub path: String,
    /// Whether the session writes it (`--no-session-persistence` does not).
    pub written: bool,
}

/// The paragraph of the summary message naming the transcript (Claude Code's text).
pub(crate) const TRANSCRIPT_NOTE: &str = "If you need specific details from before compaction (like exact code snippets, error messages, or content you generated), read the full transcript at: ";

/// The summary message that opens the compacted history.
#[cfg(test)]
pub(crate) fn summary_message(summary: &str) -> String {
    format!("{SUMMARY_PREAMBLE}\n\nSummary:\n{}\n{SUMMARY_CONTINUE}", extract_summary(summary))
}

/// The text inside `<summary>` tags when the model used them (its `<analysis>` is dropped).
pub(crate) fn extract_summary(text: &str) -> &str {
    match (text.find("<summary>"), text.rfind("</summary>")) {
        (Some(start), Some(end)) if start + 9 <= end => text[start + 9..end].trim(),
        _ => text.trim(),
    }
}

/// Whether a `/compact` leaves this conversation as it is: a single exchange, under a profile
/// that does not compact one by hand (flag 22, [`crate::profile::CompactRule::by_hand_too_few`]).
pub(crate) fn single_exchange_kept(ctx: &crate::context::Loop) -> bool {
    ctx.config.flag(crate::flags::Flag::SingleExchangeNotCompacted)
        && ctx.config.compact_rule().by_hand_too_few.is_some()
        && matches!(ctx.messages.tail(3).as_slice(), [u, a] if u.role == Role::User && a.role == Role::Assistant)
}

/// How many leading messages a compaction by hand summarises: as [`summarizable`], but under a
/// Claude Code profile (flag 27) a conversation that ends with an answer keeps that answer after
/// the summary when what comes before it is enough to summarise (`sdk_wire/stream_compact`).
pub(crate) fn by_hand(ctx: &crate::context::Loop) -> Option<usize> {
    let all = summarizable(&ctx.messages)?;
    let keeps = ctx.config.flag(crate::flags::Flag::ByHandCompactionKeepsAnswer)
        && ctx.config.rules().claude_code_version.is_some();
    let ends_with_answer = ctx.messages.tail(1).first().is_some_and(|m| m.role == Role::Assistant);
    match all.checked_sub(1) {
        Some(before) if keeps && ends_with_answer && all == ctx.messages.len() && before >= 2 => Some(before),
        _ => Some(all),
    }
}

/// How many leading messages a compaction would summarise, or `None` when there is not at
/// least one exchange before the kept tail: such a conversation cannot be compacted.
pub fn summarizable(history: &History) -> Option<usize> {
    let tail = history.tail(2);
    let len = history.len();
    let is_results = |m: &Message| m.content.iter().any(|b| matches!(b, ContentBlock::ToolResult(_)));
    let keep = match tail.as_slice() {
        [a, u] if a.role == Role::Assistant && u.role == Role::User && is_results(u) => 2,
        [.., u] if u.role == Role::User => 1,
        _ => 0,
    };
    let summarize = len - keep;
    (summarize >= 2).then_some(summarize)
}
