//! The rules the core obeys, stored in each session's journal header so that a replay runs under
//! the same rules. Every field defaults, so journals written before a field existed still load.

use serde::{Deserialize, Serialize};

/// Claude Code's cap on consecutive output-token recoveries.
pub const MAX_OUTPUT_TOKENS_RECOVERY_LIMIT: u32 = 3;
/// The limit an escalated request asks for.
pub const ESCALATED_MAX_TOKENS: u32 = 64_000;

/// The session's rules, as the core reads them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct Config {
    /// Stop before a turn that would exceed this many turns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<u32>,
    /// The model the session starts with.
    pub model: String,
    /// The model to switch to after repeated overload or a server error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback_model: Option<String>,
    /// The output-token limit of the fallback model's requests (Claude Code's follows the
    /// model); `None`: the same as [`Config::max_output_tokens`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback_max_output_tokens: Option<u32>,
    /// The output-token limit of each response (before any escalation).
    pub max_output_tokens: u32,
    /// On a `max_tokens` cut, first repeat the request with a 64,000-token limit (`ESCALATED_MAX_TOKENS`).
    pub escalate_max_tokens: bool,
    /// Retries of one failed request before the loop gives up.
    pub max_retries: u32,
    /// Seed of the retry jitter: the same journal gives the same delays.
    pub retry_seed: u64,
    /// Keep the model working until it has produced this many output tokens in a query.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_budget: Option<u64>,
    /// Consecutive stop-hook blocks after which the turn ends anyway.
    pub stop_hook_block_cap: u32,
    /// The behaviours this session runs with ([`crate::Flags`]); journals written before flags
    /// existed get the baseline set.
    #[serde(default = "crate::flags::Flags::baseline")]
    pub flags: crate::flags::Flags,
    /// Stop hooks are configured: the end of a turn waits for their verdicts.
    pub stop_hooks: bool,
    /// The session answers through the `StructuredOutput` tool (`--json-schema`): a valid
    /// call ends the turn, an answer without one is asked for it once, and
    /// [`crate::structured::MAX_ATTEMPTS`] invalid calls end the run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub structured_output: bool,
    /// The model's context window, in tokens.
    pub context_window: u64,
    /// Summarise the history before a request that would reach the auto-compact threshold.
    pub auto_compact: bool,
    /// A smaller window the auto-compact threshold comes from (Claude Code's
    /// `CLAUDE_CODE_AUTO_COMPACT_WINDOW`); the blocking limit keeps `context_window`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_compact_window: Option<u64>,
    /// On "prompt is too long", compact once and retry.
    pub reactive_compact: bool,
    /// The session's transcript file, which a Claude Code profile's summary message names
    /// (flag 18); journaled, so a replay words the summary message the same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<crate::compact::Transcript>,
    /// USD per million tokens, by model; a model not listed costs nothing.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub prices: Vec<Price>,
    /// Stop before the request that would follow once the run has cost this much.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_budget_usd: Option<f64>,
    /// How the state digest and the step record are computed ([`DIGEST_VERSION`]); journals
    /// written before it was recorded are version 1 and replay under version 1's rules.
    #[serde(default = "legacy_digest_version")]
    pub digest_version: u32,
    /// The model server is on this machine (a loopback base URL). With
    /// [`crate::flags::Flag::LocalConnectionFailsFast`], a connection error there is final after
    /// a couple of retries: a server that is not running will not start by itself.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub local_model_server: bool,
    /// Which Claude Code version's rules the session follows ([`crate::profile`]); journals
    /// written before profiles run under `reloop`'s own.
    #[serde(skip_serializing_if = "is_reloop_profile")]
    pub profile: crate::profile::ProfileId,
}

fn is_reloop_profile(profile: &crate::profile::ProfileId) -> bool {
    *profile == crate::profile::ProfileId::Reloop
}

/// The digest version new sessions get.
///
/// * 1: fields added after journals existed are digested only when they leave their default;
///   events carry no correlation ids; an ignored event is not recorded.
/// * 2: every field is digested always; completion events carry the number of what they
///   complete and a stale one is [`crate::Ignored`]; ignored events are journaled and compared.
/// * 3: the same fields, FNV-1a's fold taken over 64-bit words instead of bytes (with a
///   finalizer), usage as numbers instead of JSON ([`crate::Digest`]): a fifth of a
///   replay's time was FNV taking one byte at a time.
/// * 4: the same fields and fold, each value mixed in as typed fields (numbers as numbers,
///   strings after their length) rather than as its JSON text: no JSON is written to digest a
///   state, so the state keeps no JSON of its blocks or outcomes.
pub const DIGEST_VERSION: u32 = 4;

fn legacy_digest_version() -> u32 {
    1
}

/// A model's prices, in USD per million tokens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Price {
    /// The model these prices are for.
    pub model: String,
    /// Input tokens.
    pub input: f64,
    /// Output tokens.
    pub output: f64,
    /// Tokens written to the prompt cache.
    #[serde(default)]
    pub cache_write: f64,
    /// Tokens read from the prompt cache.
    #[serde(default)]
    pub cache_read: f64,
}

impl Price {
    /// What a response's usage cost.
    pub fn cost(&self, usage: &crate::message::Usage) -> f64 {
        (usage.input_tokens as f64 * self.input
            + usage.output_tokens as f64 * self.output
            + usage.cache_creation_input_tokens as f64 * self.cache_write
            + usage.cache_read_input_tokens as f64 * self.cache_read)
            / 1_000_000.0
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_turns: None,
            model: String::new(),
            fallback_model: None,
            fallback_max_output_tokens: None,
            max_output_tokens: 32_000,
            escalate_max_tokens: false,
            max_retries: 10,
            retry_seed: 0,
            token_budget: None,
            stop_hook_block_cap: 8,
            flags: crate::flags::Flags::current(),
            stop_hooks: false,
            structured_output: false,
            context_window: 200_000,
            auto_compact: true,
            auto_compact_window: None,
            reactive_compact: true,
            transcript: None,
            prices: Vec::new(),
            max_budget_usd: None,
            digest_version: DIGEST_VERSION,
            profile: crate::profile::ProfileId::Reloop,
            local_model_server: false,
        }
    }
}

impl Config {
    /// The rules of the session's profile.
    pub fn rules(&self) -> &'static crate::profile::Profile {
        self.profile.profile()
    }

    /// Whether an `Agent` call runs its agent in the background unless it asks otherwise: under
    /// [`crate::Flag::BackgroundAgents`] and a profile whose hand-back does (2.1.332).
    pub fn background_agents(&self) -> bool {
        use crate::flags::Flag;
        self.flag(Flag::BackgroundAgents)
            && self.flag(Flag::ClaudeCodeHandBack)
            && self.rules().tools.hand_back.in_background()
    }

    /// The `<total_tokens>` reminder, when this session's profile, model and flags call for it.
    pub fn total_tokens(&self, model: &str) -> Option<crate::profile::TotalTokens> {
        self.rules().total_tokens.filter(|t| {
            if !self.flag(crate::flags::Flag::TotalTokensReminder) {
                return false;
            }
            let also = self.flag(crate::flags::Flag::ModelIdentityReminder) && model.contains(t.also);
            let named = model.contains(t.models) || also;
            if !self.flag(crate::flags::Flag::TotalTokensByModel) {
                return named;
            }
            let id = crate::profile::canonical_model(model);
            (named || t.older.contains(&id.as_str())) && !t.newer.contains(&id.as_str())
        })
    }

    /// How this session compacts: its profile's rule, or reloop's own for a session recorded
    /// before [`crate::flags::Flag::ClaudeCodeCompaction`].
    pub fn compact_rule(&self) -> crate::profile::CompactRule {
        if self.flag(crate::flags::Flag::ClaudeCodeCompaction) {
            self.rules().compact
        } else {
            crate::profile::RELOOP.compact
        }
    }

    /// The transcript path the summary message names: under flag 18, as the profile's rule says.
    pub fn transcript_note(&self) -> Option<&str> {
        let transcript =
            self.transcript.as_ref().filter(|_| self.flag(crate::flags::Flag::ClaudeCodeCompactionEnds))?;
        match self.compact_rule().transcript {
            crate::profile::TranscriptNote::Never => None,
            crate::profile::TranscriptNote::Always => Some(&transcript.path),
            crate::profile::TranscriptNote::WhenWritten => transcript.written.then_some(transcript.path.as_str()),
        }
    }

    /// The same config with `model` set.
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = model.into();
        self
    }

    /// What `usage` cost on `model`.
    pub fn cost(&self, model: &str, usage: &crate::message::Usage) -> f64 {
        self.prices.iter().find(|p| p.model == model).map_or(0.0, |p| p.cost(usage))
    }

    /// Whether the session runs with behaviour `flag` (see [`crate::Flag`]).
    pub fn flag(&self, flag: crate::flags::Flag) -> bool {
        self.flags.has(flag.number())
    }

    /// The answer to a call an interrupt stopped while it ran, when this session gives the
    /// profile's rejection text (under [`crate::flags::Flag::InterruptedCallRejected`]): the
    /// callers then also report the call as rejected by the user. `None`: `Interrupted by user`.
    pub fn interrupted_call_text(&self) -> Option<&'static str> {
        self.rules().tools.interrupted.filter(|_| self.flag(crate::flags::Flag::InterruptedCallRejected))
    }

    /// An error inside a 200 stream after part of the answer arrived ends the run here (the
    /// profile's rule, under its flag): an importer asks, so that it marks no such give-up as
    /// one the transcript leaves unexplained.
    pub fn streamed_error_final(&self) -> bool {
        self.rules().streamed_error_final && self.flag(crate::flags::Flag::StreamedErrorFinal)
    }

    /// The response that reached `--max-budget-usd` ends the run before its tool calls run (the
    /// profile's rule, under [`crate::Flag::BudgetBeforeTools`]).
    pub fn budget_before_tools(&self) -> bool {
        self.rules().budget_before_tools && self.flag(crate::flags::Flag::BudgetBeforeTools)
    }
}

/// The `with_*` setters: each gives back the same config with one field set (the config is
/// `#[non_exhaustive]`, so callers outside the core build one from [`Config::default`]).
macro_rules! setters {
    ($($(#[$doc:meta])* $name:ident => $field:ident: $ty:ty;)*) => {
        impl Config {
            $($(#[$doc])* pub fn $name(mut self, $field: $ty) -> Self {
                self.$field = $field;
                self
            })*
        }
    };
}

setters! {
    /// The same config under another profile's rules.
    with_profile => profile: crate::profile::ProfileId;
    /// The same config with `max_turns` set.
    with_max_turns => max_turns: Option<u32>;
    /// The same config with `fallback_model` set.
    with_fallback_model => fallback_model: Option<String>;
    /// The same config with `fallback_max_output_tokens` set.
    with_fallback_max_output_tokens => fallback_max_output_tokens: Option<u32>;
    /// The same config with `max_output_tokens` set.
    with_max_output_tokens => max_output_tokens: u32;
    /// The same config with `escalate_max_tokens` set.
    with_escalate_max_tokens => escalate_max_tokens: bool;
    /// The same config with `max_retries` set.
    with_max_retries => max_retries: u32;
    /// The same config with `retry_seed` set.
    with_retry_seed => retry_seed: u64;
    /// The same config with `token_budget` set.
    with_token_budget => token_budget: Option<u64>;
    /// The same config with `context_window` set.
    with_context_window => context_window: u64;
    /// The same config with `auto_compact` set.
    with_auto_compact => auto_compact: bool;
    /// The same config with `auto_compact_window` set.
    with_auto_compact_window => auto_compact_window: Option<u64>;
    /// The same config with `prices` set.
    with_prices => prices: Vec<Price>;
    /// The same config with `max_budget_usd` set.
    with_max_budget_usd => max_budget_usd: Option<f64>;
    /// The same config with `stop_hooks` set.
    with_stop_hooks => stop_hooks: bool;
    /// The same config with `structured_output` set.
    with_structured_output => structured_output: bool;
    /// The same config with `stop_hook_block_cap` set.
    with_stop_hook_block_cap => stop_hook_block_cap: u32;
    /// The same config with `flags` set.
    with_flags => flags: crate::flags::Flags;
    /// The same config with `local_model_server` set.
    with_local_model_server => local_model_server: bool;
    /// The same config with `digest_version` set.
    with_digest_version => digest_version: u32;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flags::{Flag, Flags};
    use crate::profile::ProfileId;

    fn without(flag: Flag) -> Flags {
        let mut flags = Flags::current();
        flags.flip(flag.number());
        flags
    }

    /// Who gets 2.1.332's `<total_tokens>` reminder: under flag 32 the models the recordings
    /// show it reminding (Opus 4.5 too, never Sonnet 5.5); before it, by name; and nobody when
    /// the reminder itself is off (an imported session, whose transcript holds it as text).
    #[test]
    fn the_total_tokens_reminder_goes_where_the_sessions_flags_say() {
        let config = Config::default().with_profile(ProfileId::ClaudeCode2_1_332);
        let reminded = |c: &Config, model: &str| c.total_tokens(model).is_some();
        assert!(reminded(&config, "claude-sonnet-4-6") && reminded(&config, "claude-opus-4-5"));
        assert!(!reminded(&config, "claude-sonnet-5-5") && !reminded(&config, "claude-opus-5-5"));
        let by_name = config.clone().with_flags(without(Flag::TotalTokensByModel));
        assert!(reminded(&by_name, "claude-sonnet-5-5") && !reminded(&by_name, "claude-opus-4-5"));
        let off = config.clone().with_flags(without(Flag::TotalTokensReminder));
        assert!(!reminded(&off, "claude-opus-4-5") && !reminded(&off, "claude-sonnet-4-6"));
    }
}
