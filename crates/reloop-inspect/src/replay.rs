//! Replay: today's core over yesterday's journal, with no model and no tools.
//!
//! Each journaled event is fed to [`reloop_core::transition()`] in order; the effects, the reason
//! and the state digest of every step are compared with what the journal recorded. The first
//! mismatch is a [`Divergence`], named by a stable code:
//!
//! | code | meaning |
//! |---|---|
//! | `RELOOP-D001` | the step's effects differ (a different request, tool run, wait, ...) |
//! | `RELOOP-D002` | same effects, but the continue/terminal reason differs, or whether (and why) the event was ignored |
//! | `RELOOP-D003` | same effects and reason, but the phase or the state digest differs |
//! | `RELOOP-D004` | the journal was recorded with behaviour flags this engine does not know |
//!
//! Codes are stable: a new kind of divergence gets a new number, an old one is never reused.

use reloop_core::Fold;
use reloop_core::{Event, Flags, Ignored, Reason};
use std::borrow::Cow;

use reloop_journal::{JournalError, ReplayRow, RowOutcome, SessionHeader, StepRecord};
use serde::Serialize;
use serde_json::Value;

/// What a step produced, as compared by replay.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepView {
    /// The phase the step left the state in.
    pub to_phase: String,
    /// The reason the step decided, if any.
    pub reason: Option<Reason>,
    /// Why the event was ignored; compared from digest version 2 on (journals before it did not
    /// record ignored events).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ignored: Option<Ignored>,
    /// The step's effects, as journaled (or as today's core writes them).
    pub effects: Value,
    /// The resulting state's digest, under the session's digest version.
    pub digest: String,
}

/// The first step where today's engine does not do what the journal says it did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Divergence {
    /// `RELOOP-D001` .. `RELOOP-D004`, see the module docs. Codes are stable.
    pub code: &'static str,
    /// The step (0 for `RELOOP-D004`, found before any step runs).
    pub seq: u64,
    /// The kind of the event the step applied (`user_input`, `model_block`, ...).
    pub event_kind: String,
    /// What differs, in a sentence.
    pub reason: String,
    /// What the journal says the step did.
    pub expected: StepView,
    /// What today's core does with the same event.
    pub actual: StepView,
    /// A short diff: `-` what the journal holds, `+` what the engine produced, by JSON path.
    pub diff: Vec<String>,
}

impl Divergence {
    /// What differs, in a sentence.
    pub fn summary(&self) -> String {
        self.reason.clone()
    }
}

/// The outcome of replaying one session: how far it got and where (if anywhere) it diverged.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReplayReport {
    /// The session replayed.
    pub session_id: String,
    /// Steps that replayed identical (the diverging one is not counted).
    pub steps: usize,
    /// The behaviour flags the replay ran under.
    pub flags: Vec<u32>,
    /// The first step that diverged; `None`: the journal replays identical.
    pub divergence: Option<Divergence>,
}

/// Replays a session's journal through today's core under the session's own config.
pub fn replay(header: &SessionHeader, steps: &[StepRecord]) -> ReplayReport {
    replay_with_flips(header, steps, &[])
}

/// Replays with some behaviour flags flipped: what the session would have done had the engine
/// behaved otherwise. `reloop replay --flip-flag N` uses it to show where a behaviour bites.
pub fn replay_with_flips(header: &SessionHeader, steps: &[StepRecord], flips: &[u32]) -> ReplayReport {
    let mut replayer = Replayer::new(header, flips);
    for record in steps {
        if !replayer.feed(record) {
            break;
        }
    }
    replayer.finish()
}

/// A replay fed one journaled step at a time, so a journal of any length replays in the memory
/// of one step (plus the state): `reloop replay` streams the steps from SQLite through it.
pub struct Replayer {
    session_id: String,
    flags: Vec<u32>,
    compare_ignored: bool,
    /// Dropped at a divergence: the replay goes no further. Boxed, as it is taken out and put
    /// back at every step.
    fold: Option<Box<Fold>>,
    steps: usize,
    divergence: Option<Divergence>,
    /// A step that differed from a row read without its text, waiting for the row read whole
    /// ([`Replayer::text_needed`], [`Replayer::resolve`]).
    pending: Option<Pending>,
    /// What the step being compared did, when its row lacked the text to say how it differs.
    differed: Option<Differed>,
}

/// A step the engine took that differed from a row read without its text.
struct Differed {
    seq: u64,
    event_kind: &'static str,
    actual: Actual,
}

/// A [`Differed`] step and the fold after it: the replay goes on from it if the row, read whole,
/// says the same after all.
struct Pending {
    fold: Box<Fold>,
    differed: Differed,
}

/// What the engine's step did, as replay compares it.
struct Actual {
    to_phase: &'static str,
    reason: Option<Reason>,
    ignored: Option<Ignored>,
    effects: Value,
    digest: u64,
}

impl Actual {
    /// `step`, its effects given as the JSON compared.
    fn of(step: &reloop_core::Step, effects: Value) -> Self {
        Actual {
            to_phase: step.state.phase(),
            reason: step.reason.clone(),
            ignored: step.ignored.clone(),
            effects,
            digest: step.state.digest(),
        }
    }
}

impl Replayer {
    /// A replay of the session `header` describes, with `flips` flipped.
    pub fn new(header: &SessionHeader, flips: &[u32]) -> Self {
        let mut config = header.core_config.clone();
        for flag in flips {
            config.flags.flip(*flag);
        }
        let mut replayer = Replayer {
            session_id: header.id.clone(),
            flags: config.flags.numbers().collect(),
            // Digest version 1 journaled no ignored events: there is nothing to compare them with.
            compare_ignored: config.digest_version >= 2,
            fold: None,
            steps: 0,
            divergence: None,
            pending: None,
            differed: None,
        };
        let unknown = header.core_config.flags.unknown();
        if unknown.is_empty() {
            replayer.fold = Some(Box::new(Fold::new(&config)));
        } else {
            replayer.divergence = Some(unknown_flags(header, &unknown));
        }
        replayer
    }

    /// Replays one step; `false` once the replay has diverged (feeding more does nothing).
    pub fn feed(&mut self, record: &StepRecord) -> bool {
        let Some(mut fold) = self.fold.take() else { return false };
        let kept = fold.push(record.seq, record.event.clone(), |step| {
            let journaled = Journaled {
                seq: record.seq,
                event_kind: record.event.kind(),
                to_phase: Cow::Borrowed(&record.to_phase),
                reason: Cow::Borrowed(&record.reason),
                ignored: Cow::Borrowed(&record.ignored),
                effects: Cow::Borrowed(&record.effects),
                digest: record.digest,
            };
            self.check(step, journaled)
        });
        self.keep(fold, kept == Some(true))
    }

    /// Replays one step read as its row (`reloop replay` streams them): what the step did is
    /// compared by the hash the row holds of it ([`ReplayRow::same_outcome`]), so the common case
    /// decodes only the event and writes no text. A difference is then decided on the decoded
    /// step, as [`Replayer::feed`] does, and rendered to report it. `session` names the session
    /// in errors.
    pub fn feed_row(&mut self, row: &ReplayRow<'_>, session: &str) -> Result<bool, JournalError> {
        self.feed_decoded(row, reloop_journal::read_event(row.event), session)
    }

    /// Like [`Replayer::feed_row`], with the row's event already decoded (on another thread, by
    /// [`crate::replay_stream::replay_rows`]).
    pub fn feed_decoded(
        &mut self,
        row: &ReplayRow<'_>,
        event: Result<Event, serde_json::Error>,
        session: &str,
    ) -> Result<bool, JournalError> {
        let Some(mut fold) = self.fold.take() else { return Ok(false) };
        let decode = |what, source| JournalError::Decode { session: session.to_string(), seq: row.seq, what, source };
        let event = event.map_err(|e| decode("event", e))?;
        let event_kind = event.kind();
        let kept = fold.push(row.seq, event, |step| self.compare_row(step, row, event_kind, session));
        let kept = kept.transpose()? == Some(true);
        if let Some(differed) = self.differed.take() {
            self.pending = Some(Pending { fold, differed });
            return Ok(false);
        }
        Ok(self.keep(fold, kept))
    }

    /// The step whose row must be read whole to decide how it differs: a row read without its
    /// text ([`reloop_journal::Journal::visit_hashed_rows`]) did not match the engine's step.
    /// The replay stopped there; [`Replayer::resolve`] goes on.
    pub fn text_needed(&self) -> Option<u64> {
        self.pending.as_ref().map(|p| p.differed.seq)
    }

    /// Decides the step [`Replayer::text_needed`] names with its row read whole: reports the
    /// divergence, or, when the row says the same after all, goes on after it (returns `true`).
    /// `session` names the session in errors.
    pub fn resolve(&mut self, row: &ReplayRow<'_>, session: &str) -> Result<bool, JournalError> {
        let Some(Pending { fold, differed }) = self.pending.take_if(|p| p.differed.seq == row.seq) else {
            return Ok(false);
        };
        let journaled = Journaled::of_row(row, differed.event_kind, session)?;
        let kept = self.check_actual(differed.actual, journaled);
        Ok(self.keep(fold, kept))
    }

    /// Whether the step the engine took is the one `row` journaled, compared as
    /// [`Replayer::feed_row`] says.
    fn compare_row(
        &mut self,
        step: &reloop_core::Step,
        row: &ReplayRow<'_>,
        event_kind: &'static str,
        session: &str,
    ) -> Result<bool, JournalError> {
        let ignored = step.ignored.as_ref().filter(|_| self.compare_ignored);
        let same = step.state.digest() == row.digest
            && row.same_outcome(&step.effects, step.reason.as_ref(), ignored)
            && row.ends_in(step.state.phase())?;
        if same {
            self.steps += 1;
            return Ok(true);
        }
        if !row.has_text() {
            let effects = serde_json::to_value(&step.effects).unwrap_or_default();
            self.differed = Some(Differed { seq: row.seq, event_kind, actual: Actual::of(step, effects) });
            return Ok(false);
        }
        let journaled = Journaled::of_row(row, event_kind, session)?;
        Ok(self.check(step, journaled))
    }

    /// Goes on from `fold` if the step it took was the journal's (`kept`).
    fn keep(&mut self, fold: Box<Fold>, kept: bool) -> bool {
        if kept {
            self.fold = Some(fold);
        }
        kept
    }

    /// Compares a step the engine took with the journaled one.
    fn check(&mut self, step: &reloop_core::Step, journaled: Journaled<'_>) -> bool {
        let effects = serde_json::to_value(&step.effects).unwrap_or_default();
        // The common case, compared without building the views a divergence report needs.
        if self.same(&effects, &step.reason, &step.ignored, step.state.digest(), step.state.phase(), &journaled) {
            self.steps += 1;
            return true;
        }
        self.check_actual(Actual::of(step, effects), journaled)
    }

    fn same(
        &self,
        effects: &Value,
        reason: &Option<Reason>,
        ignored: &Option<Ignored>,
        digest: u64,
        to_phase: &str,
        journaled: &Journaled<'_>,
    ) -> bool {
        *effects == *journaled.effects
            && *reason == *journaled.reason
            && (!self.compare_ignored || *ignored == *journaled.ignored)
            && digest == journaled.digest
            && to_phase == journaled.to_phase
    }

    /// [`Replayer::check`] of what the step did.
    fn check_actual(&mut self, step: Actual, journaled: Journaled<'_>) -> bool {
        let compare_ignored = self.compare_ignored;
        if !self.same(&step.effects, &step.reason, &step.ignored, step.digest, step.to_phase, &journaled) {
            let actual = StepView {
                to_phase: step.to_phase.to_string(),
                reason: step.reason,
                ignored: step.ignored.filter(|_| compare_ignored),
                effects: step.effects,
                digest: format!("{:016x}", step.digest),
            };
            let expected = StepView {
                to_phase: journaled.to_phase.into_owned(),
                reason: journaled.reason.into_owned(),
                ignored: journaled.ignored.into_owned().filter(|_| compare_ignored),
                effects: journaled.effects.into_owned(),
                digest: format!("{:016x}", journaled.digest),
            };
            if let Some(divergence) = compare(journaled.seq, journaled.event_kind, expected, actual) {
                self.divergence = Some(divergence);
                return false;
            }
        }
        self.steps += 1;
        true
    }

    /// The report: how many steps replayed identical, and the first divergence if any.
    pub fn finish(mut self) -> ReplayReport {
        if let Some(Pending { differed, .. }) = self.pending.take() {
            // Nobody read the row whole: the step differs from a row not read back.
            let unread = Journaled {
                seq: differed.seq,
                event_kind: differed.event_kind,
                to_phase: Cow::Borrowed(""),
                reason: Cow::Owned(None),
                ignored: Cow::Owned(None),
                effects: Cow::Owned(Value::Null),
                digest: 0,
            };
            self.check_actual(differed.actual, unread);
        }
        ReplayReport { session_id: self.session_id, steps: self.steps, flags: self.flags, divergence: self.divergence }
    }
}

fn unknown_flags(header: &SessionHeader, unknown: &[u32]) -> Divergence {
    let empty =
        StepView { to_phase: String::new(), reason: None, ignored: None, effects: Value::Null, digest: String::new() };
    let known: Vec<u32> = Flags::known().numbers().collect();
    Divergence {
        code: "RELOOP-D004",
        seq: 0,
        event_kind: String::new(),
        reason: format!(
            "the journal was recorded with behaviour flags {unknown:?}, unknown to this engine \
             (engine {}, which knows {known:?}); replay it with the engine that wrote it ({})",
            reloop_core::ENGINE_VERSION,
            header.engine_version
        ),
        expected: empty.clone(),
        actual: empty,
        diff: Vec::new(),
    }
}

/// What the journal says a step did, borrowed from a step in memory or decoded from its row.
struct Journaled<'r> {
    seq: u64,
    event_kind: &'static str,
    to_phase: Cow<'r, str>,
    reason: Cow<'r, Option<Reason>>,
    ignored: Cow<'r, Option<Ignored>>,
    effects: Cow<'r, Value>,
    digest: u64,
}

impl Journaled<'static> {
    /// What `row` says its step did, decoded; `session` names it in errors.
    fn of_row(row: &ReplayRow<'_>, event_kind: &'static str, session: &str) -> Result<Self, JournalError> {
        let RowOutcome { reason, ignored, effects } = row.outcome(session)?;
        Ok(Journaled {
            seq: row.seq,
            event_kind,
            to_phase: Cow::Owned(row.to_phase()?),
            reason: Cow::Owned(reason),
            ignored: Cow::Owned(ignored),
            effects: Cow::Owned(effects),
            digest: row.digest,
        })
    }
}

fn compare(seq: u64, event_kind: &str, expected: StepView, actual: StepView) -> Option<Divergence> {
    let name = |r: &Option<Reason>| r.as_ref().map_or("none", Reason::name);
    let (code, reason, mut diff) = if actual.effects != expected.effects {
        ("RELOOP-D001", "the effects differ".to_string(), Vec::new())
    } else if actual.reason != expected.reason {
        let text = match (name(&expected.reason), name(&actual.reason)) {
            (a, b) if a == b => format!("the evidence of {a} differs"),
            (a, b) => format!("the reason differs: journal {a}, engine {b}"),
        };
        ("RELOOP-D002", text, Vec::new())
    } else if actual.ignored != expected.ignored {
        let said =
            |i: &Option<Ignored>| i.as_ref().map_or("applied".to_string(), |i| format!("ignored ({})", i.name()));
        let text = format!("the journal says {}, the engine {}", said(&expected.ignored), said(&actual.ignored));
        ("RELOOP-D002", text, Vec::new())
    } else if actual.digest != expected.digest || actual.to_phase != expected.to_phase {
        let text = format!(
            "the state differs: journal {} (digest {}), engine {} (digest {})",
            expected.to_phase, expected.digest, actual.to_phase, actual.digest
        );
        ("RELOOP-D003", text, Vec::new())
    } else {
        return None;
    };
    json_diff("effects", &expected.effects, &actual.effects, &mut diff);
    let as_json = |r: &Option<Reason>| serde_json::to_value(r).unwrap_or_default();
    json_diff("reason", &as_json(&expected.reason), &as_json(&actual.reason), &mut diff);
    let ignored_json = |i: &Option<Ignored>| serde_json::to_value(i).unwrap_or_default();
    json_diff("ignored", &ignored_json(&expected.ignored), &ignored_json(&actual.ignored), &mut diff);
    if expected.to_phase != actual.to_phase {
        diff.push(format!("- phase: {}", expected.to_phase));
        diff.push(format!("+ phase: {}", actual.to_phase));
    }
    if expected.digest != actual.digest {
        diff.push(format!("- digest: {}", expected.digest));
        diff.push(format!("+ digest: {}", actual.digest));
    }
    diff.truncate(MAX_DIFF_LINES);
    Some(Divergence { code, seq, event_kind: event_kind.to_string(), reason, expected, actual, diff })
}

const MAX_DIFF_LINES: usize = 16;

/// Appends `- path: old` / `+ path: new` for every leaf where two JSON values differ.
fn json_diff(path: &str, a: &Value, b: &Value, out: &mut Vec<String>) {
    if a == b || out.len() >= MAX_DIFF_LINES {
        return;
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let (va, vb) = (x.get(k).unwrap_or(&Value::Null), y.get(k).unwrap_or(&Value::Null));
                json_diff(&format!("{path}.{k}"), va, vb, out);
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            for i in 0..x.len().max(y.len()) {
                let (va, vb) = (x.get(i).unwrap_or(&Value::Null), y.get(i).unwrap_or(&Value::Null));
                json_diff(&format!("{path}[{i}]"), va, vb, out);
            }
        }
        _ => {
            if !a.is_null() {
                out.push(format!("- {path}: {a}"));
            }
            if !b.is_null() {
                out.push(format!("+ {path}: {b}"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_diff_names_each_changed_leaf_by_path() {
        let mut out = Vec::new();
        let a = json!([{"effect": "wait_retry", "delay_ms": 1000, "attempt": 1}]);
        let b = json!([{"effect": "wait_retry", "delay_ms": 540, "attempt": 1}, {"effect": "withdraw"}]);
        json_diff("effects", &a, &b, &mut out);
        assert_eq!(
            out,
            vec![
                "- effects[0].delay_ms: 1000",
                "+ effects[0].delay_ms: 540",
                "+ effects[1]: {\"effect\":\"withdraw\"}"
            ]
        );
    }
}
