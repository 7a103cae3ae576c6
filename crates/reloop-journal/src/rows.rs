//! One step as one row of `steps` (schema v4), written and read back.
//!
//! The hot path of every journal: the driver writes a row per step and replay reads them all, so
//! rows are kept small (a session number, phase numbers, an integer digest, no empty effects)
//! and read without intermediate copies.

use reloop_core::{Effect, Ignored, Reason};
use rusqlite::types::{ToSqlOutput, Value as SqlValue, ValueRef};
use rusqlite::{params, Connection, OptionalExtension};

use crate::codec::{numbered_phase, phase_number, EncodedStep, RowOutcome, StoredPhase};
use crate::error::JournalError;
use crate::outcome::outcome_hash;
use crate::record::{NewStep, StepRecord};

/// The columns in table order (key, at_ms, event, from_phase, to_phase, turn_before, turn_after,
/// reason_kind, reason, reason_json, effects, digest, outcome; the generated ones are left out):
/// the statement cache hashes this text on every step, so it is kept short.
pub(crate) const INSERT_STEP: &str = "INSERT INTO steps VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13)";

/// Steps of one session a row key has room for: its low 32 bits hold the step's number.
pub(crate) const SEQ_BITS: u32 = 32;

/// The seq a step's key holds.
pub(crate) fn seq_of(key: i64) -> u64 {
    (key & ((1 << SEQ_BITS) - 1)) as u64
}

/// The row key of step `seq` of session number `number`: the session's steps are adjacent and
/// in order. `None` past 2^32 - 1 steps in one session.
pub(crate) fn step_key(number: i64, seq: u64) -> Option<i64> {
    let seq = i64::try_from(seq).ok().filter(|s| *s < 1 << SEQ_BITS)?;
    number.checked_mul(1 << SEQ_BITS)?.checked_add(seq)
}

/// A phase as stored: its number, or its name when it has none.
pub(crate) fn phase_sql(name: &str) -> ToSqlOutput<'_> {
    match phase_number(name) {
        Some(n) => ToSqlOutput::Owned(SqlValue::Integer(n)),
        None => ToSqlOutput::Borrowed(ValueRef::Text(name.as_bytes())),
    }
}

/// A phase of an encoded step as stored.
fn stored_phase_sql(phase: &StoredPhase) -> ToSqlOutput<'_> {
    match phase {
        StoredPhase::Number(n) => ToSqlOutput::Owned(SqlValue::Integer(*n)),
        StoredPhase::Name(name) => ToSqlOutput::Borrowed(ValueRef::Text(name.as_bytes())),
    }
}

/// A stored phase's name.
fn phase_name(value: ValueRef<'_>) -> Result<String, rusqlite::Error> {
    match value {
        ValueRef::Integer(n) => Ok(numbered_phase(n).to_string()),
        other => Ok(other.as_str().map_err(rusqlite::Error::from)?.to_string()),
    }
}

/// The number a session's steps are stored under, if the session exists.
pub(crate) fn session_number(conn: &Connection, id: &str) -> Result<Option<i64>, JournalError> {
    let mut stmt = conn.prepare_cached("SELECT n FROM session_numbers WHERE id = ?1")?;
    Ok(stmt.query_row([id], |r| r.get(0)).optional()?)
}

/// Text to bind, or NULL for none.
fn text_or_null(bytes: &[u8]) -> Option<ToSqlOutput<'_>> {
    (!bytes.is_empty()).then_some(ToSqlOutput::Borrowed(ValueRef::Text(bytes)))
}

impl EncodedStep {
    /// Writes the row under session number `number` (`session` names it in errors).
    pub(crate) fn insert(&self, conn: &Connection, number: i64, session: &str) -> Result<(), JournalError> {
        let (event, effects, reason_json) = self.parts();
        let key = step_key(number, self.seq)
            .ok_or_else(|| JournalError::TooManySteps { session: session.to_string(), seq: self.seq })?;
        let mut insert = conn.prepare_cached(INSERT_STEP)?;
        insert.execute(params![
            key,
            self.at_ms as i64,
            ToSqlOutput::Borrowed(ValueRef::Text(event)),
            stored_phase_sql(&self.from_phase),
            stored_phase_sql(&self.to_phase),
            self.turn_before,
            self.turn_after,
            self.reason_kind,
            self.reason_name,
            text_or_null(reason_json),
            text_or_null(effects),
            self.digest as i64,
            self.outcome.map(|hash| hash as i64),
        ])?;
        if let Some(reason) = self.terminal {
            let mut end = conn.prepare_cached("UPDATE sessions SET terminal_reason = ?2 WHERE id = ?1")?;
            end.execute(params![session, reason])?;
        }
        Ok(())
    }
}

/// Writes one step's row under session number `number` (`session` names it in errors). The
/// row is encoded into `buf` (kept by the journal, so a step allocates nothing for its text).
pub(crate) fn insert_step(
    conn: &Connection,
    buf: &mut Vec<u8>,
    number: i64,
    session: &str,
    step: &NewStep<'_>,
) -> Result<(), JournalError> {
    let encoded = EncodedStep::encode(step, session, std::mem::take(buf))?;
    let written = encoded.insert(conn, number, session);
    *buf = encoded.into_buffer();
    written
}

/// One step as stored, borrowed from its row: the JSON is left as text, so a reader that only
/// compares (replay) need not build values it would throw away. [`StepRow::record`] decodes it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StepRow<'a> {
    pub(crate) seq: u64,
    pub(crate) at_ms: u64,
    /// The event as JSON.
    pub(crate) event: &'a str,
    pub(crate) from_phase: ValueRef<'a>,
    pub(crate) to_phase: ValueRef<'a>,
    pub(crate) turn_before: u32,
    pub(crate) turn_after: u32,
    /// `continue`, `terminal` or `ignored`, when the step has a reason or was ignored.
    pub(crate) reason_kind: Option<&'a str>,
    /// The reason (or, for an ignored step, the why) as JSON.
    pub(crate) reason_json: Option<&'a str>,
    /// The effects as a JSON array.
    pub(crate) effects: &'a str,
    pub(crate) digest: u64,
    /// The hash of what the step did, written when it was appended (`None` before schema v6).
    pub(crate) outcome: Option<u64>,
}

/// The part of a step's row that replay compares: its event and what it did, without when it
/// was taken or the phase and turns it left ([`crate::Journal::visit_replay_rows`] reads only these
/// columns, which costs a streamed replay a seventh less).
#[derive(Debug, Clone, Copy)]
pub struct ReplayRow<'a> {
    /// The step's place in its session: replay feeds the rows in this order.
    pub seq: u64,
    /// The event as JSON: what replay feeds the core again.
    pub event: &'a str,
    pub(crate) to_phase: ValueRef<'a>,
    /// `continue`, `terminal` or `ignored`, when the step has a reason or was ignored.
    pub(crate) reason_kind: Option<&'a str>,
    /// The reason (or, for an ignored step, the why) as JSON, as stored: replay compares its
    /// bytes with the engine's (valid UTF-8) text, so only a row that differs is checked to be
    /// text, when it is read as JSON.
    pub(crate) reason_json: Option<&'a [u8]>,
    /// The effects as a JSON array, as stored (see `reason_json`).
    pub(crate) effects: &'a [u8],
    /// The state's digest after the step, as recorded: replay's digest must equal it.
    pub digest: u64,
    /// The hash of what the step did, written when it was appended (`None` before schema v6).
    pub(crate) outcome: Option<u64>,
    /// Whether `reason_kind`, `reason_json` and `effects` were read. A streamed replay reads a
    /// row whose hash answers for them without them ([`crate::Journal::visit_hashed_rows`]), and
    /// reads it again whole only if the step differs, to report how.
    pub(crate) with_text: bool,
}

impl ReplayRow<'_> {
    /// The phase the step ended in.
    pub fn to_phase(&self) -> Result<String, JournalError> {
        Ok(phase_name(self.to_phase)?)
    }

    /// Whether the row was read with what its step did (see [`ReplayRow::outcome`]).
    pub fn has_text(&self) -> bool {
        self.with_text
    }

    /// Whether the step ended in `phase`; no name is built for a numbered phase.
    pub fn ends_in(&self, phase: &str) -> Result<bool, JournalError> {
        match self.to_phase {
            ValueRef::Integer(n) => Ok(numbered_phase(n) == phase),
            _ => Ok(self.to_phase()? == phase),
        }
    }

    /// Whether the engine's step did what this row says it did: its effects, its reason and why
    /// its event was ignored, compared by their hash ([`crate::outcome_hash`]). A row written
    /// before the hash was (schema v5 and older) is compared as the text serde_json writes for
    /// the engine's step, byte for byte, as such rows always were: reading their text back to
    /// hash it cost a replay of an old journal 2.5 times the instructions. `false` also when the
    /// text differs only in spelling: the caller then decodes it ([`ReplayRow::outcome`]) to
    /// decide and report.
    pub fn same_outcome(&self, effects: &[Effect], reason: Option<&Reason>, ignored: Option<&Ignored>) -> bool {
        // A row read without its text always has its hash.
        if let Some(stored) = self.outcome {
            return stored == outcome_hash(effects, reason, ignored);
        }
        if self.effects == b"[]" && self.reason_json.is_none() {
            // The row says the step did nothing (most deltas and blocks): nothing to hash.
            return effects.is_empty() && reason.is_none() && ignored.is_none();
        }
        let ignored_row = self.reason_kind == Some("ignored");
        let mut text = Vec::with_capacity(self.effects.len());
        same_text(&mut text, &effects, Some(self.effects))
            && same_text(&mut text, &reason, self.reason_json.filter(|_| !ignored_row))
            && same_text(&mut text, &ignored, self.reason_json.filter(|_| ignored_row))
    }

    /// What the step did: its reason (or why its event was ignored) and its effects, decoded;
    /// `session` names it in errors.
    pub fn outcome(&self, session: &str) -> Result<RowOutcome, JournalError> {
        if !self.with_text {
            return Err(JournalError::Database {
                place: format!("session {session}, step {}", self.seq),
                detail: "the row was read without what the step did; read it whole to decode it".into(),
            });
        }
        RowOutcome::decode(session, self.seq, self.reason_kind, self.reason_json, self.effects)
    }
}

impl<'a> StepRow<'a> {
    /// The columns replay compares.
    pub(crate) fn compared(&self) -> ReplayRow<'a> {
        ReplayRow {
            seq: self.seq,
            event: self.event,
            to_phase: self.to_phase,
            reason_kind: self.reason_kind,
            reason_json: self.reason_json.map(str::as_bytes),
            effects: self.effects.as_bytes(),
            digest: self.digest,
            outcome: self.outcome,
            with_text: true,
        }
    }

    /// The step decoded; `session` names it in errors.
    pub(crate) fn record(&self, session: &str) -> Result<StepRecord, JournalError> {
        let seq = self.seq;
        let event = crate::event_read::read_event(self.event).map_err(|source| JournalError::Decode {
            session: session.to_string(),
            seq,
            what: "event",
            source,
        })?;
        let RowOutcome { reason, ignored, effects } = self.compared().outcome(session)?;
        Ok(StepRecord {
            seq,
            at_ms: self.at_ms,
            event,
            from_phase: phase_name(self.from_phase)?,
            to_phase: phase_name(self.to_phase)?,
            turn_before: self.turn_before,
            turn_after: self.turn_after,
            reason,
            ignored,
            effects,
            digest: self.digest,
        })
    }
}

/// Whether serde_json writes `value` as `stored` (`None`: as nothing, that is `null`). `text` is
/// a buffer reused between the comparisons of one row.
fn same_text<T: serde::Serialize + ?Sized>(text: &mut Vec<u8>, value: &T, stored: Option<&[u8]>) -> bool {
    text.clear();
    if serde_json::to_writer(&mut *text, value).is_err() {
        return false;
    }
    text.as_slice() == stored.unwrap_or(b"null")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_past_the_keys_room_is_refused() {
        assert_eq!(step_key(1, 5), Some((1 << 32) + 5));
        assert_eq!(step_key(1, 1 << 32), None);
    }
}
