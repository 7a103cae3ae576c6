//! A version's rules by model, as its recordings show them (every request of
//! crates/reloop-import/tests/recorded/ and tests/print/recorded/, by model): the `max_tokens` it
//! asks (each version knows each model's own limit, so Opus is no one number: 2.1.197 asks Opus
//! 4.8 for 64,000, Opus 4.5 and the Opus 5.5 it does not know for 32,000, and Sonnet 5 for Opus
//! 4.8's), the effort, and who gets the `<total_tokens>` reminder.

/// 2.1.197's, where they differ from its Opus rule (64,000) and the default (32,000).
pub const OUTPUT_LIMITS_2_1_197: &[(&str, u32)] = &[
    ("claude-opus-4-5", 32_000),
    ("claude-opus-5-5", 32_000),
    ("claude-sonnet-5", 64_000),
    ("claude-sonnet-5-5", 64_000),
];

/// 2.1.332's, where they differ from its Opus rule (128,000) and the default (32,000): the 5.5
/// family's 128,000.
pub const OUTPUT_LIMITS_2_1_332: &[(&str, u32)] =
    &[("claude-opus-4-5", 32_000), ("claude-sonnet-5-5", 128_000), ("claude-haiku-5-5", 128_000)];

/// The effort a version asks: one for every model that takes it, but for the models it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EffortRule {
    /// What most models are asked (both versions: `high`).
    pub effort: &'static str,
    /// Models (by id prefix) asked otherwise (2.1.332: the 5.5 family, `medium`, recorded for
    /// each of them; Opus 4.5 and Sonnet 4.6 are asked `high`).
    pub except: &'static [(&'static str, &'static str)],
}

/// 2.1.332's effort for the 5.5 family (every recorded request to each of them).
pub const EFFORT_MEDIUM_5_5: &[(&str, &str)] =
    &[("claude-opus-5-5", "medium"), ("claude-sonnet-5-5", "medium"), ("claude-haiku-5-5", "medium")];

/// 2.1.332's `<total_tokens>` reminder: Sonnet's and, as recorded, Haiku 4's and Opus 4.5's, never
/// Sonnet 5.5's.
pub const TOTAL_TOKENS_2_1_332: super::TotalTokens = super::TotalTokens {
    budget: 15_000_000,
    models: "sonnet",
    also: "claude-haiku-4",
    older: &["claude-opus-4-5"],
    newer: &["claude-sonnet-5-5"],
};

/// `claude-haiku-4-5-20251001` → `claude-haiku-4-5`; `claude-opus-4-8[1m]` → `claude-opus-4-8`;
/// the dated first Claude 4 models (`claude-sonnet-4-20250514`) → `claude-sonnet-4-0`.
pub fn canonical_model(model: &str) -> String {
    let id = model.strip_suffix("[1m]").unwrap_or(model);
    let id = match id.rsplit_once('-') {
        Some((head, date)) if date.len() == 8 && date.bytes().all(|b| b.is_ascii_digit()) => head,
        _ => id,
    };
    match id {
        "claude-opus-4" | "claude-sonnet-4" => format!("{id}-0"),
        _ => id.to_string(),
    }
}

impl super::Profile {
    /// The `max_tokens` this profile's version sends for `model`.
    pub fn max_tokens_for(&self, model: &str) -> u32 {
        let id = canonical_model(model);
        if let Some((_, limit)) = self.output_limits.iter().find(|(known, _)| *known == id) {
            *limit
        } else if model.contains("opus") {
            self.opus_max_tokens
        } else {
            super::DEFAULT_MAX_TOKENS
        }
    }
}
