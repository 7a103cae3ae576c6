//! The one row codec: a step turned into the fields of its row (its event, effects and reason as
//! JSON text, its event's kind, its reason's kind and name, its phases) and a row's reason and
//! effects read back. Both backends write and read through here — SQLite (`rows`) binds the
//! fields to its `steps` table, PostgreSQL (`reloop-journal-pg`) to its own — so a step's row
//! is defined once and no backend serialises an event only to parse it back for its kind.
//! No database here.

use reloop_core::{Ignored, Reason};
use serde_json::Value;

use crate::error::JournalError;
use crate::outcome::{outcome_hash, outcome_hash_of_json};
use crate::record::{check_row, EffectsRef, NewStep};

/// The phases a row stores as numbers, by number. A phase not listed is stored by name, so a
/// newer core's phase never makes a row unwritable.
const PHASES: [&str; 7] =
    ["idle", "awaiting_model", "running_tools", "waiting_retry", "compacting", "running_stop_hooks", "done"];

/// The number a row stores `phase` as, if it has one.
pub(crate) fn phase_number(phase: &str) -> Option<i64> {
    PHASES.iter().position(|p| *p == phase).map(|n| n as i64)
}

/// The phase stored as number `n` (`unknown` for a number no phase has).
pub(crate) fn numbered_phase(n: i64) -> &'static str {
    usize::try_from(n).ok().and_then(|n| PHASES.get(n)).copied().unwrap_or("unknown")
}

/// A phase as a row stores it, owned.
#[derive(Debug)]
pub(crate) enum StoredPhase {
    Number(i64),
    Name(String),
}

impl StoredPhase {
    fn of(name: &str) -> Self {
        match phase_number(name) {
            Some(n) => StoredPhase::Number(n),
            None => StoredPhase::Name(name.to_string()),
        }
    }

    /// The phase's name, for a backend that stores names.
    fn name(&self) -> &str {
        match self {
            StoredPhase::Number(n) => numbered_phase(*n),
            StoredPhase::Name(name) => name,
        }
    }
}

/// A step encoded for its row and owning its text: what [`crate::JournalWriter`] hands to the
/// journal's own thread, so the loop's step can go on while SQLite writes it. The event, the
/// effects and the reason lie one after another in one buffer, reused from step to step.
#[derive(Debug)]
pub struct EncodedStep {
    pub(crate) seq: u64,
    pub(crate) at_ms: u64,
    pub(crate) text: Vec<u8>,
    pub(crate) event_end: usize,
    pub(crate) effects_end: usize,
    pub(crate) kind: &'static str,
    pub(crate) from_phase: StoredPhase,
    pub(crate) to_phase: StoredPhase,
    pub(crate) turn_before: u32,
    pub(crate) turn_after: u32,
    pub(crate) reason_kind: Option<&'static str>,
    pub(crate) reason_name: Option<&'static str>,
    pub(crate) terminal: Option<&'static str>,
    pub(crate) digest: u64,
    /// The hash of what the step did ([`crate::outcome_hash`]); `None` for a step that did
    /// nothing, and for effects given as JSON that do not read back as exactly the engine's.
    pub(crate) outcome: Option<u64>,
}

impl EncodedStep {
    /// Encodes `step` into `buf` (cleared first; the journal takes it back to reuse), and
    /// refuses a row over [`crate::MAX_ROW_BYTES`] before anything is written. `session` names
    /// the session in errors.
    pub fn encode(step: &NewStep<'_>, session: &str, mut buf: Vec<u8>) -> Result<Self, JournalError> {
        buf.clear();
        // A rare huge step (a long tool result) does not keep its buffer for the session's life.
        buf.shrink_to(64 * 1024);
        match step.event_json {
            Some(json) => {
                debug_assert!(
                    serde_json::to_vec(step.event).is_ok_and(|own| own == json),
                    "a step's event_json must be its event's own JSON"
                );
                buf.extend_from_slice(json);
            }
            None => serde_json::to_writer(&mut buf, step.event)
                .map_err(|source| JournalError::Encode { what: "event", source })?,
        }
        let event_end = buf.len();
        if !step.effects.is_empty() {
            step.effects.write(&mut buf).map_err(|source| JournalError::Encode { what: "effects", source })?;
        }
        let effects_end = buf.len();
        // An ignored step keeps its why where a reason would be: `reason_kind` 'ignored'.
        match (step.reason, step.ignored) {
            (Some(reason), _) => serde_json::to_writer(&mut buf, reason),
            (None, Some(ignored)) => serde_json::to_writer(&mut buf, ignored),
            (None, None) => Ok(()),
        }
        .map_err(|source| JournalError::Encode { what: "reason", source })?;
        let (reason_kind, reason_name) = match (step.reason, step.ignored) {
            (Some(r), _) => (Some(if r.is_terminal() { "terminal" } else { "continue" }), Some(r.name())),
            (None, Some(i)) => (Some("ignored"), Some(i.name())),
            (None, None) => (None, None),
        };
        // No effects count as the `[]` they read back as.
        let bytes = buf.len() + if effects_end == event_end { 2 } else { 0 };
        check_row(session, step.seq, bytes)?;
        Ok(EncodedStep {
            seq: step.seq,
            at_ms: step.at_ms,
            text: buf,
            event_end,
            effects_end,
            kind: step.event.kind(),
            from_phase: StoredPhase::of(step.from_phase),
            to_phase: StoredPhase::of(step.to_phase),
            turn_before: step.turn_before,
            turn_after: step.turn_after,
            reason_kind,
            reason_name,
            terminal: step.reason.and_then(Reason::terminal_reason).map(|r| r.as_str()),
            digest: step.digest,
            // A step that did nothing (most deltas and blocks) stores no hash: a row with no
            // effects and no reason reads back as the hash of nothing, and the column would cost
            // a tool turn about seventy bytes.
            outcome: match step.effects {
                _ if step.effects.is_empty() && step.reason.is_none() && step.ignored.is_none() => None,
                EffectsRef::Core(effects) => Some(outcome_hash(effects, step.reason, step.ignored)),
                EffectsRef::Json(effects) => outcome_hash_of_json(effects, step.reason, step.ignored),
            },
        })
    }

    /// The step's number in its session.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// The bytes it holds (its event, effects and reason as text).
    pub(crate) fn len(&self) -> usize {
        self.text.len()
    }

    /// The buffer, for the next step.
    pub(crate) fn into_buffer(self) -> Vec<u8> {
        self.text
    }

    /// The event's JSON, its effects' (`None` for none, which reads back as `[]`) and its reason's
    /// or why's (`None` for neither), as bytes: what SQLite binds as it is.
    pub(crate) fn parts(&self) -> (&[u8], &[u8], &[u8]) {
        let text = &self.text;
        (&text[..self.event_end], &text[self.event_end..self.effects_end], &text[self.effects_end..])
    }

    /// The event as JSON.
    pub fn event_json(&self) -> Result<&str, JournalError> {
        as_text("event", self.parts().0)
    }

    /// The effects as a JSON array, `None` for none (a row stores no text for them).
    pub fn effects_json(&self) -> Result<Option<&str>, JournalError> {
        let effects = self.parts().1;
        (!effects.is_empty()).then(|| as_text("effects", effects)).transpose()
    }

    /// The reason (or, for an ignored step, the why) as JSON, `None` for neither.
    pub fn reason_json(&self) -> Result<Option<&str>, JournalError> {
        let reason = self.parts().2;
        (!reason.is_empty()).then(|| as_text("reason", reason)).transpose()
    }

    /// The event's kind (`user_input`, `model_block`, ...), as its JSON's `kind` says.
    pub fn kind(&self) -> &'static str {
        self.kind
    }

    /// `continue`, `terminal` or `ignored`, when the step has a reason or was ignored.
    pub fn reason_kind(&self) -> Option<&'static str> {
        self.reason_kind
    }

    /// The reason's name (`next_turn`, `completed`, ...), or the why's for an ignored step.
    pub fn reason_name(&self) -> Option<&'static str> {
        self.reason_name
    }

    /// The terminal reason the step gives its session, if it ends it.
    pub fn terminal(&self) -> Option<&'static str> {
        self.terminal
    }

    /// When the step's event arrived, by the driver's clock (display only).
    pub fn at_ms(&self) -> u64 {
        self.at_ms
    }

    /// The phase the step started in, by name.
    pub fn from_phase(&self) -> &str {
        self.from_phase.name()
    }

    /// The phase the step ended in, by name.
    pub fn to_phase(&self) -> &str {
        self.to_phase.name()
    }

    /// The turn count before the step.
    pub fn turn_before(&self) -> u32 {
        self.turn_before
    }

    /// The turn count after the step.
    pub fn turn_after(&self) -> u32 {
        self.turn_after
    }

    /// The state's digest after the step, for replay to check.
    pub fn digest(&self) -> u64 {
        self.digest
    }

    /// The hash of what the step did, when it has one: replay compares it.
    pub fn outcome(&self) -> Option<u64> {
        self.outcome
    }
}

/// `bytes` as text. serde_json writes only UTF-8, so this fails only if that ever changes; it is
/// checked rather than assumed because the bytes cross into a backend that takes text.
fn as_text<'a>(what: &'static str, bytes: &'a [u8]) -> Result<&'a str, JournalError> {
    std::str::from_utf8(bytes)
        .map_err(|e| JournalError::Encode { what, source: <serde_json::Error as serde::ser::Error>::custom(e) })
}

/// What a step did, decoded from its row.
#[derive(Debug, Clone, PartialEq)]
pub struct RowOutcome {
    /// Why the state moved on or ended, when the step gave a reason.
    pub reason: Option<Reason>,
    /// Why the state did not expect the event, for an ignored step.
    pub ignored: Option<Ignored>,
    /// The effects as a JSON array (`[]` when the row holds none).
    pub effects: Value,
}

impl RowOutcome {
    /// Decodes a row's reason (or, when `reason_kind` is `ignored`, its why) and effects, as
    /// every backend stores them; `session` and `seq` name the row in errors.
    pub fn decode(
        session: &str,
        seq: u64,
        reason_kind: Option<&str>,
        reason_json: Option<&[u8]>,
        effects: &[u8],
    ) -> Result<Self, JournalError> {
        let decode = |what, source| JournalError::Decode { session: session.to_string(), seq, what, source };
        let (reason, ignored) = match (reason_kind, reason_json) {
            (Some("ignored"), Some(j)) => (None, Some(serde_json::from_slice(j).map_err(|e| decode("ignored", e))?)),
            (_, j) => (j.map(serde_json::from_slice).transpose().map_err(|e| decode("reason", e))?, None),
        };
        let effects = serde_json::from_slice::<Value>(effects).map_err(|e| decode("effects", e))?;
        Ok(RowOutcome { reason, ignored, effects })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::NewStep;
    use reloop_core::{ContentBlock, Event, EVENT_KINDS};

    fn encoded(event: &Event) -> EncodedStep {
        EncodedStep::encode(&new_step(event), "s", Vec::new()).unwrap()
    }

    fn new_step(event: &Event) -> NewStep<'_> {
        NewStep {
            seq: 1,
            at_ms: 2,
            event,
            from_phase: "idle",
            to_phase: "some_new_phase",
            turn_before: 0,
            turn_after: 1,
            reason: None,
            ignored: None,
            effects: EffectsRef::Core(&[]),
            digest: 7,
            event_json: None,
        }
    }

    #[test]
    fn a_step_handed_its_events_json_encodes_the_row_it_would_have_written() {
        let event = Event::user_input(vec![ContentBlock::text("line\none \"quoted\" é")]);
        let own = encoded(&event);
        let json = serde_json::to_vec(&event).unwrap();
        let given = NewStep { event_json: Some(&json), ..new_step(&event) };
        let given = EncodedStep::encode(&given, "s", Vec::new()).unwrap();
        assert_eq!((given.text, given.event_end), (own.text, own.event_end));
    }

    #[test]
    fn the_kind_is_the_one_the_event_s_json_names() {
        for event in
            [Event::user_input(vec![ContentBlock::text("hi")]), Event::Abort, Event::Resumed, Event::CompactRequested]
        {
            let row = encoded(&event);
            let json: Value = serde_json::from_str(row.event_json().unwrap()).unwrap();
            assert_eq!(json["kind"], row.kind());
            assert!(EVENT_KINDS.contains(&row.kind()));
        }
    }

    #[test]
    fn phases_are_numbered_or_named_and_no_effects_are_no_text() {
        let row = encoded(&Event::Abort);
        assert!(matches!(row.from_phase, StoredPhase::Number(0)));
        assert_eq!((row.from_phase(), row.to_phase()), ("idle", "some_new_phase"));
        assert_eq!(row.effects_json().unwrap(), None);
        assert_eq!(row.reason_json().unwrap(), None);
        assert_eq!(numbered_phase(99), "unknown");
    }
}
