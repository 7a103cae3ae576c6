//! Token accounting, from journaled facts only, so a replay computes the same numbers.
//!
//! The size of the next request is the last response's reported usage (input, cache and output
//! tokens: everything the model saw and said) plus an estimate for the messages added since.
//! The estimate is [`CHARS_PER_TOKEN`] characters of serialized JSON per token, rounded up: crude,
//! but conservative for English and code, and identical on every machine.

use crate::config::Config;
use crate::context::Loop;

/// Characters of serialized message JSON per estimated token.
pub const CHARS_PER_TOKEN: u64 = 4;
/// What the effective window keeps free for the response, at most.
pub const MAX_OUTPUT_RESERVE: u64 = 20_000;
/// The auto-compact threshold sits this far below the effective window.
pub const AUTO_COMPACT_MARGIN: u64 = 13_000;
/// The blocking limit sits this far below the effective window.
pub const BLOCKING_MARGIN: u64 = 3_000;

/// The thresholds of a configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The window less the response's reserve.
    pub effective_window: u64,
    /// A request estimated at this many tokens is compacted first.
    pub auto_compact_threshold: u64,
    /// A request estimated at this many tokens is refused when nothing can compact.
    pub blocking_limit: u64,
}

impl Limits {
    /// effective = window − min(max output, 20,000); compact at effective − 13,000; block at
    /// effective − 3,000. For 200k and 32k: 180k, 167k, 177k. The compaction threshold's
    /// window is capped by `auto_compact_window` when one is set.
    pub fn of(config: &Config) -> Self {
        let reserve = u64::from(config.max_output_tokens).min(MAX_OUTPUT_RESERVE);
        let effective = config.context_window.saturating_sub(reserve);
        let compact_window = config.auto_compact_window.map_or(config.context_window, |w| w.min(config.context_window));
        Limits {
            effective_window: effective,
            auto_compact_threshold: compact_window.saturating_sub(reserve).saturating_sub(AUTO_COMPACT_MARGIN),
            blocking_limit: effective.saturating_sub(BLOCKING_MARGIN),
        }
    }
}

/// Estimated tokens of one message: what `estimate` counts for each message, checked by a test.
#[cfg(test)]
fn estimate_message(message: &crate::message::Message) -> u64 {
    crate::wire::json_len(message).div_ceil(CHARS_PER_TOKEN)
}

/// Estimated tokens of the next request.
pub fn estimate(ctx: &Loop) -> u64 {
    let len = ctx.messages.len();
    let since = ctx.session.messages_at_usage.min(len);
    // Each message's JSON length was counted as it was appended: what `estimate_message` counts.
    let added =
        ctx.messages.tail_json_lens(len - since).map(|n| n.div_ceil(CHARS_PER_TOKEN)).fold(0u64, u64::saturating_add);
    ctx.session.usage_tokens.saturating_add(added)
}

/// Records a response's usage as the size of the history up to and including the response,
/// which its caller is about to append.
pub(crate) fn note_usage(ctx: &mut Loop, usage: &crate::message::Usage) {
    // Provider counts are outside facts: saturate, so a hostile `u64::MAX` gives the same state
    // in debug and release builds instead of a panic in one and a wrap in the other.
    ctx.session.usage_tokens = usage
        .input_tokens
        .saturating_add(usage.cache_creation_input_tokens)
        .saturating_add(usage.cache_read_input_tokens)
        .saturating_add(usage.output_tokens);
    ctx.session.messages_at_usage = ctx.messages.len() + 1;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Message;

    #[test]
    fn the_issue_s_example() {
        let limits = Limits::of(&Config::default().with_max_output_tokens(32_000));
        assert_eq!(
            limits,
            Limits { effective_window: 180_000, auto_compact_threshold: 167_000, blocking_limit: 177_000 }
        );
        let small = Limits::of(&Config::default().with_max_output_tokens(8_000));
        assert_eq!(small.effective_window, 192_000);
    }

    #[test]
    fn a_message_is_a_quarter_of_its_json() {
        let m = Message::user_text("x".repeat(400));
        let json = serde_json::to_string(&m).unwrap().len() as u64;
        assert_eq!(estimate_message(&m), json.div_ceil(4));
    }
}
