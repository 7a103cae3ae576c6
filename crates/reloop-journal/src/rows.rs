//! One step as one row of `steps` (schema v4), written and read back.
//!
//! The hot path of every journal: the driver writes a row per step and replay reads them all, so
//! rows are kept small (a session number, phase numbers, an integer digest, no empty effects)
//! and read without intermediate copies.

use reloop_core::{Effect, Event, Ignored, Reason};
use rusqlite::types::{ToSqlOutput, Value as SqlValue, ValueRef};
use rusqlite::{params, Connection, OptionalExtension};
use serde_json::Value;

use crate::error::JournalError;
use crate::store::{check_row, Journal, StepRecord};

/// The phases a row stores as numbers, by number. A phase not listed is stored by name, so a
/// newer core's phase never makes a row unwritable.
const PHASES: [&str; 7] =
    ["idle", "awaiting_model", "running_tools", "waiting_retry", "compacting", "running_stop_hooks", "done"];

/// The columns in table order (key, at_ms, event, from_phase, to_phase, turn_before, turn_after,
/// reason_kind, reason, reason_json, effects, digest; the generated ones are left out): the
/// statement cache hashes this text on every step, so it is kept short.
pub(crate) const INSERT_STEP: &str = "INSERT INTO steps VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12)";

/// Steps of one session a row key has room for: its low 32 bits hold the step's number.
const SEQ_BITS: u32 = 32;

/// The seq a step's key holds.
fn seq_of(key: i64) -> u64 {
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
    match PHASES.iter().position(|p| *p == name) {
        Some(n) => ToSqlOutput::Owned(SqlValue::Integer(n as i64)),
        None => ToSqlOutput::Borrowed(ValueRef::Text(name.as_bytes())),
    }
}

/// A stored phase's name.
fn phase_name(value: ValueRef<'_>) -> Result<String, rusqlite::Error> {
    match value {
        ValueRef::Integer(n) => Ok(numbered_phase(n).to_string()),
        other => Ok(other.as_str().map_err(rusqlite::Error::from)?.to_string()),
    }
}

/// The phase stored as number `n` (`unknown` for a number no phase has).
fn numbered_phase(n: i64) -> &'static str {
    usize::try_from(n).ok().and_then(|n| PHASES.get(n)).copied().unwrap_or("unknown")
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

/// A step's effects as they are at hand: the core's own (the live driver) or JSON read back
/// (fork, import). Both are written as the same text.
#[derive(Debug, Clone, Copy)]
pub enum EffectsRef<'a> {
    Core(&'a [Effect]),
    Json(&'a Value),
}

impl EffectsRef<'_> {
    fn is_empty(&self) -> bool {
        match self {
            EffectsRef::Core(effects) => effects.is_empty(),
            EffectsRef::Json(value) => value.as_array().is_some_and(Vec::is_empty),
        }
    }

    fn write(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        match self {
            EffectsRef::Core(effects) => serde_json::to_writer(out, effects),
            EffectsRef::Json(value) => serde_json::to_writer(out, value),
        }
    }
}

/// One step to be written, borrowed from wherever it is: the live driver hands the core's
/// [`reloop_core::Step`] as it is ([`NewStep::of`]), so a journaled step costs no copy of its
/// event, no `serde_json::Value` of its effects and no clone of its reason; a
/// [`StepRecord`] converts with `From`.
#[derive(Debug, Clone, Copy)]
pub struct NewStep<'a> {
    pub seq: u64,
    pub at_ms: u64,
    pub event: &'a Event,
    pub from_phase: &'a str,
    pub to_phase: &'a str,
    pub turn_before: u32,
    pub turn_after: u32,
    pub reason: Option<&'a Reason>,
    pub ignored: Option<&'a Ignored>,
    pub effects: EffectsRef<'a>,
    pub digest: u64,
}

impl<'a> NewStep<'a> {
    /// The record of `event` applied to a state that was in `from_phase` at `turn_before`,
    /// giving `step`: the same row [`StepRecord::of`] would write.
    pub fn of(
        seq: u64,
        at_ms: u64,
        event: &'a Event,
        from_phase: &'a str,
        turn_before: u32,
        step: &'a reloop_core::Step,
    ) -> Self {
        NewStep {
            seq,
            at_ms,
            event,
            from_phase,
            to_phase: step.state.phase(),
            turn_before,
            turn_after: step.state.context().turn_count(),
            reason: step.reason.as_ref(),
            ignored: step.ignored.as_ref(),
            effects: EffectsRef::Core(&step.effects),
            digest: step.state.digest(),
        }
    }
}

impl<'a> From<&'a StepRecord> for NewStep<'a> {
    fn from(r: &'a StepRecord) -> Self {
        NewStep {
            seq: r.seq,
            at_ms: r.at_ms,
            event: &r.event,
            from_phase: &r.from_phase,
            to_phase: &r.to_phase,
            turn_before: r.turn_before,
            turn_after: r.turn_after,
            reason: r.reason.as_ref(),
            ignored: r.ignored.as_ref(),
            effects: EffectsRef::Json(&r.effects),
            digest: r.digest,
        }
    }
}

/// A step encoded for its row and owning its text: what [`crate::JournalWriter`] hands to the
/// journal's own thread, so the loop's step can go on while SQLite writes it. The event, the
/// effects and the reason lie one after another in one buffer, reused from step to step.
#[derive(Debug)]
pub struct EncodedStep {
    pub(crate) seq: u64,
    at_ms: u64,
    text: Vec<u8>,
    event_end: usize,
    effects_end: usize,
    from_phase: StoredPhase,
    to_phase: StoredPhase,
    turn_before: u32,
    turn_after: u32,
    reason_kind: Option<&'static str>,
    reason_name: Option<&'static str>,
    terminal: Option<&'static str>,
    digest: u64,
}

/// A phase as a row stores it, owned.
#[derive(Debug)]
enum StoredPhase {
    Number(i64),
    Name(String),
}

impl StoredPhase {
    fn of(name: &str) -> Self {
        match PHASES.iter().position(|p| *p == name) {
            Some(n) => StoredPhase::Number(n as i64),
            None => StoredPhase::Name(name.to_string()),
        }
    }

    fn sql(&self) -> ToSqlOutput<'_> {
        match self {
            StoredPhase::Number(n) => ToSqlOutput::Owned(SqlValue::Integer(*n)),
            StoredPhase::Name(name) => ToSqlOutput::Borrowed(ValueRef::Text(name.as_bytes())),
        }
    }
}

impl EncodedStep {
    /// Encodes `step` into `buf` (cleared first; [`EncodedStep::into_buffer`] gives it back), and
    /// refuses a row over [`crate::MAX_ROW_BYTES`] before anything is written. `session` names
    /// the session in errors.
    pub fn encode(step: &NewStep<'_>, session: &str, mut buf: Vec<u8>) -> Result<Self, JournalError> {
        buf.clear();
        // A rare huge step (a long tool result) does not keep its buffer for the session's life.
        buf.shrink_to(64 * 1024);
        serde_json::to_writer(&mut buf, step.event).map_err(|source| JournalError::Encode { what: "event", source })?;
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
            from_phase: StoredPhase::of(step.from_phase),
            to_phase: StoredPhase::of(step.to_phase),
            turn_before: step.turn_before,
            turn_after: step.turn_after,
            reason_kind,
            reason_name,
            terminal: step.reason.and_then(Reason::terminal_reason).map(|r| r.as_str()),
            digest: step.digest,
        })
    }

    /// The step's number in its session.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// The buffer, for the next step.
    /// The bytes it holds (its event, effects and reason as text).
    pub(crate) fn len(&self) -> usize {
        self.text.len()
    }

    pub fn into_buffer(self) -> Vec<u8> {
        self.text
    }

    /// Writes the row under session number `number` (`session` names it in errors).
    pub(crate) fn insert(&self, conn: &Connection, number: i64, session: &str) -> Result<(), JournalError> {
        let text = &self.text;
        let (event, effects, reason_json) =
            (&text[..self.event_end], &text[self.event_end..self.effects_end], &text[self.effects_end..]);
        let key = step_key(number, self.seq)
            .ok_or_else(|| JournalError::TooManySteps { session: session.to_string(), seq: self.seq })?;
        let mut insert = conn.prepare_cached(INSERT_STEP)?;
        insert.execute(params![
            key,
            self.at_ms as i64,
            ToSqlOutput::Borrowed(ValueRef::Text(event)),
            self.from_phase.sql(),
            self.to_phase.sql(),
            self.turn_before,
            self.turn_after,
            self.reason_kind,
            self.reason_name,
            text_or_null(reason_json),
            text_or_null(effects),
            self.digest as i64,
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
pub struct StepRow<'a> {
    pub seq: u64,
    pub at_ms: u64,
    /// The event as JSON.
    pub event: &'a str,
    pub(crate) from_phase: ValueRef<'a>,
    pub(crate) to_phase: ValueRef<'a>,
    pub turn_before: u32,
    pub turn_after: u32,
    /// `continue`, `terminal` or `ignored`, when the step has a reason or was ignored.
    pub reason_kind: Option<&'a str>,
    /// The reason (or, for an ignored step, the why) as JSON.
    pub reason_json: Option<&'a str>,
    /// The effects as a JSON array.
    pub effects: &'a str,
    pub digest: u64,
}

/// The part of a step's row that replay compares: its event and what it did, without when it
/// was taken or the phase and turns it left ([`Journal::visit_replay_rows`] reads only these
/// columns, which costs a streamed replay a seventh less).
#[derive(Debug, Clone, Copy)]
pub struct ReplayRow<'a> {
    pub seq: u64,
    /// The event as JSON.
    pub event: &'a str,
    pub(crate) to_phase: ValueRef<'a>,
    /// `continue`, `terminal` or `ignored`, when the step has a reason or was ignored.
    pub reason_kind: Option<&'a str>,
    /// The reason (or, for an ignored step, the why) as JSON, as stored: replay compares its
    /// bytes with the engine's (valid UTF-8) text, so only a row that differs is checked to be
    /// text, when it is read as JSON.
    pub reason_json: Option<&'a [u8]>,
    /// The effects as a JSON array, as stored (see `reason_json`).
    pub effects: &'a [u8],
    pub digest: u64,
}

/// What a step did, decoded from its row.
#[derive(Debug, Clone, PartialEq)]
pub struct RowOutcome {
    pub reason: Option<Reason>,
    pub ignored: Option<Ignored>,
    pub effects: Value,
}

impl ReplayRow<'_> {
    /// The phase the step ended in.
    pub fn to_phase(&self) -> Result<String, JournalError> {
        Ok(phase_name(self.to_phase)?)
    }

    /// Whether the step ended in `phase`; no name is built for a numbered phase.
    pub fn ends_in(&self, phase: &str) -> Result<bool, JournalError> {
        match self.to_phase {
            ValueRef::Integer(n) => Ok(numbered_phase(n) == phase),
            _ => Ok(self.to_phase()? == phase),
        }
    }

    /// What the step did: its reason (or why its event was ignored) and its effects, decoded;
    /// `session` names it in errors.
    pub fn outcome(&self, session: &str) -> Result<RowOutcome, JournalError> {
        let seq = self.seq;
        let decode = |what, source| JournalError::Decode { session: session.to_string(), seq, what, source };
        let (reason, ignored) = match (self.reason_kind, self.reason_json) {
            (Some("ignored"), Some(j)) => (None, Some(serde_json::from_slice(j).map_err(|e| decode("ignored", e))?)),
            (_, j) => (j.map(serde_json::from_slice).transpose().map_err(|e| decode("reason", e))?, None),
        };
        let effects = serde_json::from_slice::<Value>(self.effects).map_err(|e| decode("effects", e))?;
        Ok(RowOutcome { reason, ignored, effects })
    }
}

impl<'a> StepRow<'a> {
    /// The columns replay compares.
    pub fn compared(&self) -> ReplayRow<'a> {
        ReplayRow {
            seq: self.seq,
            event: self.event,
            to_phase: self.to_phase,
            reason_kind: self.reason_kind,
            reason_json: self.reason_json.map(str::as_bytes),
            effects: self.effects.as_bytes(),
            digest: self.digest,
        }
    }

    /// The phase the step ended in.
    pub fn to_phase(&self) -> Result<String, JournalError> {
        self.compared().to_phase()
    }

    /// The step decoded; `session` names it in errors.
    pub fn record(&self, session: &str) -> Result<StepRecord, JournalError> {
        let seq = self.seq;
        let event = Event::from_json(self.event).map_err(|source| JournalError::Decode {
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

impl Journal {
    /// Hands the session's steps to `visit` one at a time, in order, holding only one in memory;
    /// `visit` returns `false` to stop early. Returns how many it was handed.
    pub fn visit_steps(&self, id: &str, mut visit: impl FnMut(StepRecord) -> bool) -> Result<usize, JournalError> {
        self.visit_rows(id, |row| Ok(visit(row.record(id)?)))
    }

    /// Like [`Journal::visit_steps`], but each step is handed as its row, undecoded; an error
    /// from `visit` stops the walk and is returned.
    pub fn visit_rows(
        &self,
        id: &str,
        mut visit: impl FnMut(&StepRow<'_>) -> Result<bool, JournalError>,
    ) -> Result<usize, JournalError> {
        let columns = "key, at_ms, event, from_phase, to_phase, turn_before, turn_after,
                       reason_kind, reason_json, effects, digest";
        self.walk_session(id, columns, |r| {
            let text = |i: usize| r.get_ref(i)?.as_str_or_null().map_err(rusqlite::Error::from);
            visit(&StepRow {
                seq: seq_of(r.get(0)?),
                at_ms: r.get::<_, i64>(1)? as u64,
                event: text(2)?.unwrap_or_default(),
                from_phase: r.get_ref(3)?,
                to_phase: r.get_ref(4)?,
                turn_before: r.get(5)?,
                turn_after: r.get(6)?,
                reason_kind: text(7)?,
                reason_json: text(8)?,
                effects: text(9)?.unwrap_or("[]"),
                digest: r.get::<_, i64>(10)? as u64,
            })
        })
    }

    /// Like [`Journal::visit_rows`], reading only the columns replay compares.
    pub fn visit_replay_rows(
        &self,
        id: &str,
        mut visit: impl FnMut(&ReplayRow<'_>) -> Result<bool, JournalError>,
    ) -> Result<usize, JournalError> {
        let columns = "key, event, to_phase, reason_kind, reason_json, effects, digest";
        self.walk_session(id, columns, |r| {
            let text = |i: usize| r.get_ref(i)?.as_str_or_null().map_err(rusqlite::Error::from);
            let bytes = |i: usize| r.get_ref(i)?.as_bytes_or_null().map_err(rusqlite::Error::from);
            visit(&ReplayRow {
                seq: seq_of(r.get(0)?),
                event: text(1)?.unwrap_or_default(),
                to_phase: r.get_ref(2)?,
                reason_kind: text(3)?,
                reason_json: bytes(4)?,
                effects: bytes(5)?.unwrap_or(b"[]"),
                digest: r.get::<_, i64>(6)? as u64,
            })
        })
    }

    /// Hands `each` the session's rows (`columns` of them, the key first) in order, until it
    /// returns `false` or an error; returns how many it was handed.
    fn walk_session(
        &self,
        id: &str,
        columns: &str,
        mut each: impl FnMut(&rusqlite::Row<'_>) -> Result<bool, JournalError>,
    ) -> Result<usize, JournalError> {
        let Some(number) = session_number(&self.conn, id)? else { return Ok(0) };
        let mut stmt = self
            .conn
            .prepare_cached(&format!("SELECT {columns} FROM steps WHERE key >= ?1 AND key < ?2 ORDER BY key"))?;
        let first = step_key(number, 0).unwrap_or(i64::MAX);
        let mut rows = stmt.query([first, first.saturating_add(1 << SEQ_BITS)])?;
        let mut handed = 0;
        while let Some(r) = rows.next()? {
            handed += 1;
            if !each(r)? {
                break;
            }
        }
        Ok(handed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{APPLICATION_ID, V1_SCHEMA};
    use reloop_core::{Command, ContentBlock, Effect, Event};

    /// A journal as reloop wrote it before v4 (the v1 tables hold v3's rows), with one step.
    fn v3_journal(path: &std::path::Path) {
        let conn = Connection::open(path).unwrap();
        conn.execute_batch(V1_SCHEMA).unwrap();
        conn.execute_batch(
            "CREATE TABLE session_locks (session_id TEXT PRIMARY KEY, pid INTEGER NOT NULL,
                                         acquired_at_ms INTEGER NOT NULL) WITHOUT ROWID;
             CREATE INDEX sessions_by_parent ON sessions(parent_id);
             INSERT INTO sessions (id, created_at_ms, engine_version, core_config, run_config)
                 VALUES ('old3', 5, '0.1.0', '{\"model\": \"m\"}', '{}');
             INSERT INTO events VALUES ('old3', 1, 77, 'user_input',
                 '{\"kind\":\"user_input\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}');
             INSERT INTO transitions VALUES ('old3', 1, 'idle', 'awaiting_model', 0, 1, NULL, NULL, NULL,
                 '[{\"effect\":\"cancel_model\"}]', '00000000deadbeef');
             INSERT INTO events VALUES ('old3', 2, 78, 'abort', '{\"kind\":\"abort\"}');
             INSERT INTO transitions VALUES ('old3', 2, 'awaiting_model', 'some_new_phase', 1, 1, NULL, NULL,
                 NULL, '[]', 'ffffffffffffffff');",
        )
        .unwrap();
        conn.pragma_update(None, "application_id", APPLICATION_ID).unwrap();
        conn.pragma_update(None, "user_version", 3).unwrap();
    }

    #[test]
    fn a_v3_journal_moves_to_one_row_per_step_and_reads_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v3.db");
        v3_journal(&path);
        let mut j = Journal::open_for_reading(&path).unwrap();
        let steps = j.steps("old3").unwrap();
        assert_eq!(steps.len(), 2);
        assert_eq!(steps[0].event, Event::UserInput { content: vec![ContentBlock::text("hi")] });
        assert_eq!((steps[0].from_phase.as_str(), steps[0].to_phase.as_str()), ("idle", "awaiting_model"));
        assert_eq!((steps[0].at_ms, steps[0].turn_before, steps[0].turn_after), (77, 0, 1));
        assert_eq!(steps[0].effects, serde_json::to_value(vec![Effect::from(Command::CancelModel)]).unwrap());
        assert_eq!(steps[0].digest, 0xdead_beef);
        assert_eq!(steps[1].to_phase, "some_new_phase", "a phase without a number is kept by name");
        assert_eq!(steps[1].effects, serde_json::json!([]));
        assert_eq!(steps[1].digest, u64::MAX);
        assert_eq!(j.sessions().unwrap()[0].steps, 2);

        // The old tables' queries still work, on views with the old columns.
        let old: (String, String, String, String) = j
            .conn
            .query_row(
                "SELECT e.kind, t.to_phase, t.effects, t.digest FROM events e JOIN transitions t
                     ON t.session_id = e.session_id AND t.seq = e.seq WHERE e.session_id = 'old3' AND e.seq = 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .unwrap();
        assert_eq!(
            old,
            (
                "user_input".into(),
                "awaiting_model".into(),
                "[{\"effect\":\"cancel_model\"}]".into(),
                "00000000deadbeef".into()
            )
        );

        // New steps of the old session follow its old ones.
        j.lock_session("old3").unwrap();
        let mut next = steps[1].clone();
        next.seq = 3;
        next.to_phase = "done".into();
        j.append("old3", &next).unwrap();
        assert_eq!(j.steps("old3").unwrap().iter().map(|s| s.seq).collect::<Vec<_>>(), vec![1, 2, 3]);
    }

    #[test]
    fn a_step_past_the_keys_room_is_refused() {
        assert_eq!(step_key(1, 5), Some((1 << 32) + 5));
        assert_eq!(step_key(1, 1 << 32), None);
    }
}
