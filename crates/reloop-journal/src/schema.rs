//! The journal's schema and its forward migrations.

use rusqlite::Connection;

use crate::error::JournalError;
use crate::rows::{phase_sql, step_key};

/// `PRAGMA application_id`: "RLOP". A database with another id is not ours.
pub const APPLICATION_ID: i64 = 0x524C_4F50;

/// The schema version this build writes. Each bump adds a migration below; none is ever edited.
pub const SCHEMA_VERSION: i64 = 6;

const V1: &str = "
CREATE TABLE sessions (
    id              TEXT PRIMARY KEY,
    created_at_ms   INTEGER NOT NULL,
    engine_version  TEXT NOT NULL,
    core_config     TEXT NOT NULL,   -- reloop_core::Config as JSON: the rules replay runs under
    run_config      TEXT NOT NULL,   -- provider, model, cwd, prompt...: what the driver needs
    parent_id       TEXT,            -- set on forks
    fork_seq        INTEGER,
    terminal_reason TEXT             -- set when the session ends
);
CREATE TABLE events (
    session_id TEXT NOT NULL REFERENCES sessions(id),
    seq        INTEGER NOT NULL,
    at_ms      INTEGER NOT NULL,     -- wall clock of the driver, for display only
    kind       TEXT NOT NULL,        -- user_input, model_block, tool_done, ...
    payload    TEXT NOT NULL,        -- reloop_core::Event as JSON
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
CREATE TABLE transitions (
    session_id  TEXT NOT NULL REFERENCES sessions(id),
    seq         INTEGER NOT NULL,    -- the event that caused it
    from_phase  TEXT NOT NULL,
    to_phase    TEXT NOT NULL,
    turn_before INTEGER NOT NULL,
    turn_after  INTEGER NOT NULL,
    reason_kind TEXT,                -- continue | terminal | ignored (v3) | NULL
    reason      TEXT,                -- next_turn, completed, ...
    reason_json TEXT,                -- reloop_core::Reason with its evidence
    effects     TEXT NOT NULL,       -- JSON array of reloop_core::Effect
    digest      TEXT NOT NULL,       -- state digest after the step, 16 hex digits
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
";

/// v2: one writer per session. A row names the process writing a session; a row whose process
/// is gone (a crash) is stale and taken over. Forks are listed by parent, so the tree is cheap.
const V2: &str = "
CREATE TABLE session_locks (
    session_id     TEXT PRIMARY KEY,
    pid            INTEGER NOT NULL, -- the writing process
    acquired_at_ms INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX sessions_by_parent ON sessions(parent_id);
";

/// v3: no new table; a step whose event the state did not expect is journaled with
/// `reason_kind = 'ignored'`, its why's name in `reason` and a `reloop_core::Ignored` in
/// `reason_json`. An engine that predates v3 could not read such a row, so the version says so.
const V3: &str = "";

/// v4: one row per step, keyed by a small session number instead of the 36-character id (which
/// the two tables of v1–v3 repeated in every row, a third of a journal's bytes) and appended in
/// key order (SQLite then leaves full pages behind, where the v1–v3 tables kept an eighth of each
/// page empty); phases as small numbers, the digest as an integer and no effects as NULL.
/// `events` and `transitions` stay readable as views with their old columns, so queries written
/// for v1–v3 still work.
const V4: &str = "
CREATE TABLE session_numbers (
    n  INTEGER PRIMARY KEY,          -- an explicit integer key: VACUUM keeps it
    id TEXT NOT NULL UNIQUE REFERENCES sessions(id)
);
CREATE TABLE steps (
    key         INTEGER PRIMARY KEY, -- session number (session_numbers.n) * 2^32 + seq: a session's
                                     -- steps lie together, in order, and each new one is appended
                                     -- at the end of the table, so its pages fill up
    at_ms       INTEGER NOT NULL,    -- driver wall clock, display only
    event       TEXT NOT NULL,       -- reloop_core::Event as JSON (its kind is its \"kind\")
    from_phase  NOT NULL,            -- 0 idle, 1 awaiting_model, 2 running_tools, 3 waiting_retry,
    to_phase    NOT NULL,            -- 4 compacting, 5 running_stop_hooks, 6 done; else the name
    turn_before INTEGER NOT NULL,
    turn_after  INTEGER NOT NULL,
    reason_kind TEXT,                -- continue | terminal | ignored | NULL
    reason      TEXT,                -- next_turn, completed, ...; for ignored: stale_request, ...
    reason_json TEXT,                -- reloop_core::Reason with its evidence, or reloop_core::Ignored
    effects     TEXT,                -- JSON array of reloop_core::Effect; NULL for none
    digest      INTEGER NOT NULL,    -- state digest after the step (the u64's bits)
    session     INTEGER GENERATED ALWAYS AS (key >> 32) VIRTUAL,
    seq         INTEGER GENERATED ALWAYS AS (key & 4294967295) VIRTUAL
);
";

/// After the rows moved: the old tables go, and views of the same name and columns replace them.
const V4_VIEWS: &str = "
DROP TABLE events;
DROP TABLE transitions;
CREATE VIEW events AS
    SELECT n.id AS session_id, s.seq, s.at_ms, json_extract(s.event, '$.kind') AS kind, s.event AS payload
    FROM steps s JOIN session_numbers n ON n.n = s.session;
CREATE VIEW transitions AS
    SELECT n.id AS session_id, s.seq,
           CASE s.from_phase WHEN 0 THEN 'idle' WHEN 1 THEN 'awaiting_model' WHEN 2 THEN 'running_tools'
                WHEN 3 THEN 'waiting_retry' WHEN 4 THEN 'compacting' WHEN 5 THEN 'running_stop_hooks'
                WHEN 6 THEN 'done' ELSE s.from_phase END AS from_phase,
           CASE s.to_phase WHEN 0 THEN 'idle' WHEN 1 THEN 'awaiting_model' WHEN 2 THEN 'running_tools'
                WHEN 3 THEN 'waiting_retry' WHEN 4 THEN 'compacting' WHEN 5 THEN 'running_stop_hooks'
                WHEN 6 THEN 'done' ELSE s.to_phase END AS to_phase,
           s.turn_before, s.turn_after, s.reason_kind, s.reason, s.reason_json,
           coalesce(s.effects, '[]') AS effects, printf('%016x', s.digest) AS digest
    FROM steps s JOIN session_numbers n ON n.n = s.session;
";

/// A row of v4's `steps`, as the move to v4 writes it (later versions add columns).
const INSERT_V4_STEP: &str = "INSERT INTO steps VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12)";

/// Moves v3's rows into v4's `steps`, one session number per session (in creation order). A
/// digest that is not hex is refused, naming its step: read as 0, the step would replay as
/// diverged with nothing to say the journal, not the engine, was at fault.
fn move_rows_to_v4(conn: &Connection) -> Result<(), JournalError> {
    conn.execute_batch(V4)?;
    conn.execute("INSERT INTO session_numbers (id) SELECT id FROM sessions ORDER BY created_at_ms, rowid", [])?;
    let mut read = conn.prepare(
        "SELECT n.n, e.seq, e.at_ms, e.payload, t.from_phase, t.to_phase, t.turn_before, t.turn_after,
                t.reason_kind, t.reason, t.reason_json, t.effects, t.digest, e.session_id
         FROM events e JOIN transitions t ON t.session_id = e.session_id AND t.seq = e.seq
                       JOIN session_numbers n ON n.id = e.session_id
         ORDER BY n.n, e.seq",
    )?;
    let mut write = conn.prepare(INSERT_V4_STEP)?;
    let mut rows = read.query([])?;
    while let Some(r) = rows.next()? {
        let seq = r.get::<_, i64>(1)? as u64;
        let (from, to): (String, String) = (r.get(4)?, r.get(5)?);
        let effects: String = r.get(11)?;
        let digest: String = r.get(12)?;
        let Ok(digest) = u64::from_str_radix(&digest, 16) else {
            return Err(JournalError::BadDigest { session: r.get(13)?, seq, digest });
        };
        write.execute(rusqlite::params![
            step_key(r.get(0)?, seq).ok_or(rusqlite::Error::IntegralValueOutOfRange(1, seq as i64))?,
            r.get::<_, i64>(2)?,
            r.get::<_, String>(3)?,
            phase_sql(&from),
            phase_sql(&to),
            r.get::<_, i64>(6)?,
            r.get::<_, i64>(7)?,
            r.get::<_, Option<String>>(8)?,
            r.get::<_, Option<String>>(9)?,
            r.get::<_, Option<String>>(10)?,
            Some(effects).filter(|e| e != "[]"),
            digest as i64,
        ])?;
    }
    conn.execute_batch(V4_VIEWS)?;
    Ok(())
}

/// v5: when each session was last written, so `last` is the session a person just wrote (run,
/// resumed, imported), not the one newest by its own clock (an import's clock is its
/// transcript's). Triggers keep it, so no writer has to remember: a session's creation, and every
/// time a writer takes it (`resume`, a new query) — not every step, which would cost each step a
/// write. Older rows start at their creation time.
const V5: &str = "
CREATE TABLE session_writes (
    session_id      TEXT PRIMARY KEY,
    last_written_ms INTEGER NOT NULL -- this machine's clock at the session's latest write
) WITHOUT ROWID;
INSERT INTO session_writes (session_id, last_written_ms) SELECT id, created_at_ms FROM sessions;
CREATE TRIGGER session_created AFTER INSERT ON sessions BEGIN
    INSERT OR REPLACE INTO session_writes (session_id, last_written_ms)
        VALUES (NEW.id, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
END;
CREATE TRIGGER session_written AFTER INSERT ON session_locks BEGIN
    INSERT OR REPLACE INTO session_writes (session_id, last_written_ms)
        VALUES (NEW.session_id, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
END;
";

/// v6: the hash of what each step did (`reloop_journal::outcome_hash` of its effects, reason and
/// why it was ignored), written as it is appended, so replay compares one number instead of the
/// step's text. Rows written before have none: replay computes theirs from their text.
const V6: &str = "
ALTER TABLE steps ADD COLUMN outcome INTEGER; -- the hash of what the step did (the u64's bits); NULL before v6
";

/// Brings a fresh or older journal up to [`SCHEMA_VERSION`], one version at a time, so a v1
/// journal takes exactly the steps a v1 journal took when v2 was new.
pub fn migrate(conn: &Connection, from: i64) -> Result<(), JournalError> {
    if from < 1 {
        conn.execute_batch(V1)?;
        conn.pragma_update(None, "application_id", APPLICATION_ID)?;
        conn.pragma_update(None, "user_version", 1)?;
    }
    if from < 2 {
        conn.execute_batch(V2)?;
        conn.pragma_update(None, "user_version", 2)?;
    }
    if from < 3 {
        conn.execute_batch(V3)?;
        conn.pragma_update(None, "user_version", 3)?;
    }
    if from < 4 {
        move_rows_to_v4(conn)?;
        conn.pragma_update(None, "user_version", 4)?;
    }
    if from < 5 {
        conn.execute_batch(V5)?;
        conn.pragma_update(None, "user_version", 5)?;
    }
    if from < 6 {
        conn.execute_batch(V6)?;
        conn.pragma_update(None, "user_version", 6)?;
    }
    Ok(())
}

/// The v1 schema alone, for tests that need a journal as an older reloop wrote it.
#[cfg(test)]
pub(crate) const V1_SCHEMA: &str = V1;
