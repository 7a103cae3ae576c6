//! The journal's schema and its forward migrations.

use rusqlite::Connection;

/// `PRAGMA application_id`: "RLOP". A database with another id is not ours.
pub const APPLICATION_ID: i64 = 0x524C_4F50;

/// The schema version this build writes. Each bump adds a migration below; none is ever edited.
pub const SCHEMA_VERSION: i64 = 4;

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

/// v4: when each session was last written, so `last` is the session a person just wrote (run,
/// resumed, imported), not the one newest by its own clock (an import's clock is its
/// transcript's). A trigger keeps it, so no writer has to remember; older rows start at their
/// creation time.
const V4: &str = "
CREATE TABLE session_writes (
    session_id      TEXT PRIMARY KEY,
    last_written_ms INTEGER NOT NULL -- this machine's clock at the session's latest write
) WITHOUT ROWID;
INSERT INTO session_writes (session_id, last_written_ms) SELECT id, created_at_ms FROM sessions;
CREATE TRIGGER session_created AFTER INSERT ON sessions BEGIN
    INSERT OR REPLACE INTO session_writes (session_id, last_written_ms)
        VALUES (NEW.id, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
END;
CREATE TRIGGER session_written AFTER INSERT ON events BEGIN
    INSERT OR REPLACE INTO session_writes (session_id, last_written_ms)
        VALUES (NEW.session_id, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
END;
";

/// Brings a fresh or older journal up to [`SCHEMA_VERSION`], one version at a time, so a v1
/// journal takes exactly the steps a v1 journal took when v2 was new.
pub fn migrate(conn: &Connection, from: i64) -> rusqlite::Result<()> {
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
        conn.execute_batch(V4)?;
        conn.pragma_update(None, "user_version", 4)?;
    }
    Ok(())
}

/// The v1 schema alone, for tests that need a journal as an older reloop wrote it.
#[doc(hidden)]
pub const V1_SCHEMA: &str = V1;
