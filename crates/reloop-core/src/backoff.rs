//! A retry's delay: reloop's backoff, and as a Claude Code version reckons it ([`RetryCurve`],
//! under [`crate::Flag::ClaudeCodeRetryDelays`]).
//!
//! Both bundles draw min(500 ms × 2^(n−1), 32 s) × (1 + U × 25 %) with U from `Math.random()`
//! (2.1.197's `eQ`, 2.1.332's `q$` with its `proportional` jitter of ratio 0.25); 2.1.197 waits
//! and prints the float, 2.1.332 rounds it. The recordings' delays fall inside those bounds
//! (`docs/profiles.md`, "Retries"). U comes from the seed journaled with the session's config,
//! so a replay computes the same delay and waits for none of it.

use crate::profile::RetryCurve;

/// The first retry's delay, before jitter.
pub const BASE_DELAY_MS: u64 = 500;
/// The longest delay, before jitter.
pub const MAX_DELAY_MS: u64 = 32_000;

/// The longest `retry-after` either version waits: a longer one ends the run with the error
/// (2.1.197's `tengu_api_retry_after_too_long` above 60 s, 2.1.332's the same).
pub const CLAUDE_CODE_MAX_RETRY_AFTER_MS: u64 = 60_000;
/// The jitter's share of the backoff (both versions' 0.25).
const JITTER_RATIO: f64 = 0.25;

/// A delay as the driver waits it and as the stream prints it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Delay {
    /// Whole milliseconds to wait.
    pub ms: u64,
    /// The delay as 2.1.197 holds and prints it, with its fraction.
    pub unrounded: Option<f64>,
}

/// min(500 ms × 2^(attempt−1), 32 s) plus up to 25 % jitter; at least a numeric `retry-after`.
pub fn retry_delay_ms(attempt: u32, retry_after_ms: Option<u64>, seed: u64, request: u32) -> u64 {
    let base = BASE_DELAY_MS.saturating_mul(1u64 << attempt.saturating_sub(1).min(16)).min(MAX_DELAY_MS);
    let draw = splitmix64(seed ^ (u64::from(request) << 32) ^ u64::from(attempt));
    let jitter = base * (draw % 2_501) / 10_000;
    let backoff = base + jitter;
    retry_after_ms.map_or(backoff, |after| after.max(backoff))
}

/// A jitter below the attempt's backoff base, from the journaled seed (Claude Code 2.1.332 adds
/// one on top of `retry-after`).
pub(crate) fn jitter_below_base(attempt: u32, seed: u64, request: u32) -> u64 {
    let base = BASE_DELAY_MS.saturating_mul(1u64 << attempt.saturating_sub(1).min(16)).min(MAX_DELAY_MS);
    splitmix64(seed ^ (u64::from(request) << 32) ^ u64::from(attempt) ^ 0x5EED) % base.max(1)
}

/// The delay before retry `attempt` (1-based) of request `request`, with a numeric
/// `retry-after` of `retry_after_ms` if the server sent one.
pub(crate) fn claude_code_delay(
    curve: RetryCurve,
    attempt: u32,
    retry_after_ms: Option<u64>,
    seed: u64,
    request: u32,
) -> Delay {
    let base = BASE_DELAY_MS.saturating_mul(1u64 << attempt.saturating_sub(1).min(16)).min(MAX_DELAY_MS) as f64;
    let backoff = base * (1.0 + uniform(seed, request, attempt, 0) * JITTER_RATIO);
    match curve {
        RetryCurve::Unrounded => {
            let delay = retry_after_ms.map_or(backoff, |after| (after as f64).max(backoff));
            Delay { ms: delay as u64, unrounded: Some(delay) }
        }
        RetryCurve::Rounded => {
            let backoff = backoff.round() as u64;
            let scaled =
                |after: u64| (after as f64 * (1.0 + uniform(seed, request, attempt, 1) * JITTER_RATIO)).round();
            let ms = retry_after_ms.map_or(backoff, |after| (scaled(after) as u64).max(backoff));
            Delay { ms, unrounded: None }
        }
    }
}

/// A number in [0, 1) with the 53 bits of a double, drawn from the journaled seed: what
/// `Math.random()` gives Claude Code, made reproducible.
fn uniform(seed: u64, request: u32, attempt: u32, draw: u64) -> f64 {
    let mixed = splitmix64(seed ^ (u64::from(request) << 32) ^ u64::from(attempt) ^ (draw << 48) ^ 0xC1A0_DE00);
    (mixed >> 11) as f64 / (1u64 << 53) as f64
}

/// A tiny deterministic mixer: the jitter must come from the journaled seed, not a clock.
fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Every delay lies where the bundles' formula puts it, as the recordings' delays do
        /// (2.1.197: 516.67…, 1001.50…, 2009.71…; 2.1.332: 623, 1064, 2453).
        #[test]
        fn delays_lie_within_the_backoff_and_its_quarter(attempt in 1u32..14, seed: u64, request in 1u32..1000) {
            let base = (500u64 << (attempt - 1).min(16)).min(32_000) as f64;
            let d = claude_code_delay(RetryCurve::Unrounded, attempt, None, seed, request);
            let exact = d.unrounded.unwrap();
            prop_assert!(exact >= base && exact < base * 1.25, "{exact} for base {base}");
            prop_assert_eq!(d.ms, exact.floor() as u64);
            let r = claude_code_delay(RetryCurve::Rounded, attempt, None, seed, request);
            prop_assert!(r.unrounded.is_none());
            prop_assert!(r.ms as f64 >= base && r.ms as f64 <= base * 1.25, "{} for base {base}", r.ms);
            // The same facts give the same delay: a replay waits what the live run printed.
            prop_assert_eq!(claude_code_delay(RetryCurve::Rounded, attempt, None, seed, request), r);
        }

        /// `retry-after: 3`: 2.1.197 waits 3000 while the backoff is smaller, 2.1.332 3000 to
        /// 3750 (recorded 3054, 3465, 3626); a larger backoff wins in both.
        #[test]
        fn retry_after_is_a_floor_or_is_scaled(attempt in 1u32..4, seed: u64) {
            let d = claude_code_delay(RetryCurve::Unrounded, attempt, Some(3_000), seed, 1);
            prop_assert_eq!((d.ms, d.unrounded), (3_000, Some(3_000.0)));
            let r = claude_code_delay(RetryCurve::Rounded, attempt, Some(3_000), seed, 1);
            prop_assert!((3_000..=3_750).contains(&r.ms), "{}", r.ms);
            let late = claude_code_delay(RetryCurve::Unrounded, 6, Some(3_000), seed, 1);
            prop_assert!(late.ms >= 16_000);
            let late = claude_code_delay(RetryCurve::Rounded, 6, Some(3_000), seed, 1);
            prop_assert!(late.ms >= 16_000);
        }
    }

    #[test]
    fn delays_double_up_to_the_cap_with_at_most_a_quarter_of_jitter() {
        for attempt in 1..=12 {
            let base = (500u64 << (attempt - 1)).min(32_000);
            let d = retry_delay_ms(attempt, None, 42, 1);
            assert!(d >= base && d <= base + base / 4, "attempt {attempt}: {d}");
        }
        assert_eq!(retry_delay_ms(1, Some(2_000), 42, 1), 2_000);
        assert_eq!(retry_delay_ms(3, None, 7, 2), retry_delay_ms(3, None, 7, 2), "same seed, same delay");
    }

    #[test]
    fn the_draws_are_spread_over_the_whole_quarter() {
        let delays: Vec<f64> =
            (0..2_000u64).map(|s| claude_code_delay(RetryCurve::Unrounded, 1, None, s, 1).unrounded.unwrap()).collect();
        let (low, high) = delays.iter().fold((f64::MAX, 0.0f64), |(l, h), d| (l.min(*d), h.max(*d)));
        assert!(low < 502.0 && high > 623.0, "{low}..{high}");
        assert!(delays.iter().any(|d| d.fract() != 0.0));
    }
}
