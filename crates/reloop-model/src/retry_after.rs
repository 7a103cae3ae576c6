//! How long a server asks the loop to wait: `retry-after-ms` (Anthropic's precise form, float
//! milliseconds) or `retry-after` (integer or float seconds, or an HTTP date), capped at
//! [`MAX_RETRY_AFTER_MS`].
//!
//! The header is the server's to set, so it is read as hostile: NaN, a negative number, text and
//! a date that does not parse are ignored (the normal backoff decides), a date in the past means
//! "now", and anything past the cap (a day, `1e300` seconds, an overflow) waits the cap, with
//! what was asked kept beside it so the `api_retry` line can say so.

use std::time::SystemTime;

pub use reloop_core::MAX_RETRY_AFTER_MS;

/// The wait a server asked for, as the loop will take it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Asked {
    /// Milliseconds, at most [`MAX_RETRY_AFTER_MS`].
    pub ms: u64,
    /// What was asked (saturating at `u64::MAX`), when it was more than the cap.
    pub capped_from: Option<u64>,
}

/// The wait asked by a response's `retry-after-ms` or, when that is absent or unreadable, its
/// `retry-after`; `None` when neither says anything usable. `now` places an HTTP date.
pub(crate) fn asked(retry_after_ms: Option<&str>, retry_after: Option<&str>, now: SystemTime) -> Option<Asked> {
    let ms = retry_after_ms
        .and_then(number)
        .or_else(|| retry_after.and_then(|v| number(v).map(|secs| secs * 1000.0).or_else(|| date_ms(v, now))))?;
    Some(cap(ms))
}

/// A non-negative decimal number (`2`, `0.5`, `1e3`); `None` for NaN, `inf`, a sign, text.
/// An overflow to infinity (`1e999`) is kept: it asks for longer than the cap, not nothing.
fn number(text: &str) -> Option<f64> {
    let text = text.trim();
    let starts_as_number = text.starts_with(|c: char| c.is_ascii_digit() || c == '.');
    let digits = text.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'));
    if !starts_as_number || !digits {
        return None;
    }
    text.parse::<f64>().ok().filter(|v| *v >= 0.0 && !v.is_nan())
}

/// Milliseconds from `now` to an HTTP date (`Wed, 21 Oct 2015 07:28:00 GMT`); 0 for one past.
fn date_ms(text: &str, now: SystemTime) -> Option<f64> {
    static PARSER: jiff::fmt::rfc2822::DateTimeParser = jiff::fmt::rfc2822::DateTimeParser::new();
    let at = PARSER.parse_timestamp(text.trim()).ok()?;
    let now = jiff::Timestamp::try_from(now).ok()?;
    let ms = at.as_millisecond().saturating_sub(now.as_millisecond());
    Some(ms.max(0) as f64)
}

/// `ms` rounded, capped at [`MAX_RETRY_AFTER_MS`] (a float `as` cast saturates, never wraps).
fn cap(ms: f64) -> Asked {
    let asked = ms.round() as u64;
    if asked > MAX_RETRY_AFTER_MS {
        Asked { ms: MAX_RETRY_AFTER_MS, capped_from: Some(asked) }
    } else {
        Asked { ms: asked, capped_from: None }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// 2015-10-21 07:28:00 UTC.
    fn now() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_480)
    }

    fn seconds(value: &str) -> Option<Asked> {
        asked(None, Some(value), now())
    }

    fn plain(ms: u64) -> Option<Asked> {
        Some(Asked { ms, capped_from: None })
    }

    #[test]
    fn retry_after_is_integer_or_float_seconds() {
        assert_eq!(seconds("2"), plain(2_000));
        assert_eq!(seconds(" 0.5 "), plain(500));
        assert_eq!(seconds("0"), plain(0));
        assert_eq!(seconds("1e1"), plain(10_000));
    }

    #[test]
    fn retry_after_ms_is_float_milliseconds_and_wins_over_retry_after() {
        assert_eq!(asked(Some("1234.6"), Some("9"), now()), plain(1_235));
        assert_eq!(asked(Some("garbage"), Some("3"), now()), plain(3_000), "an unreadable one gives way");
    }

    #[test]
    fn an_http_date_counts_from_now_and_a_past_one_means_now() {
        assert_eq!(seconds("Wed, 21 Oct 2015 07:28:30 GMT"), plain(30_000));
        assert_eq!(seconds("Wed, 21 Oct 2015 07:00:00 GMT"), plain(0));
        assert_eq!(seconds("Thu, 01 Jan 1970 00:00:00 GMT"), plain(0));
    }

    #[test]
    fn anything_past_six_hours_waits_six_hours_and_keeps_what_was_asked() {
        let capped = |from| Some(Asked { ms: MAX_RETRY_AFTER_MS, capped_from: Some(from) });
        assert_eq!(seconds("86400"), capped(86_400_000));
        assert_eq!(seconds("21600"), plain(MAX_RETRY_AFTER_MS), "exactly the cap is not capped");
        assert_eq!(seconds("1e300"), capped(u64::MAX));
        assert_eq!(seconds("1e999"), capped(u64::MAX), "an overflow to infinity");
        assert_eq!(seconds("99999999999999999999999999"), capped(u64::MAX));
        assert_eq!(asked(Some("1e300"), None, now()), capped(u64::MAX));
        assert_eq!(seconds("Fri, 23 Oct 2015 07:28:00 GMT"), capped(172_800_000), "two days ahead");
    }

    #[test]
    fn nan_negative_and_garbage_are_ignored() {
        for value in
            ["NaN", "nan", "inf", "-1", "-0.5", "+5", "", " ", "soon", "1,5", "0x10", "1e", "..", "Wed, 99 Oct"]
        {
            assert_eq!(seconds(value), None, "{value:?}");
            assert_eq!(asked(Some(value), None, now()), None, "retry-after-ms {value:?}");
        }
    }
}
