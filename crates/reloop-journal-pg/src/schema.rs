//! The PostgreSQL schema and its versioned, forward-only migrations.
//!
//! Everything lives in the `reloop` schema so a database shared with other software keeps its
//! own tables apart. `reloop.schema_migrations` records every version applied; a database whose
//! newest version is above [`SCHEMA_VERSION`] was written by a newer reloop and is refused
//! before anything is written. Concurrent workers that start at once migrate one at a time
//! (a transaction-scoped advisory lock, which also works behind transaction-pooling proxies).

use postgres::Client;
use reloop_journal::JournalError;

/// The schema version this build writes. Each bump appends to `MIGRATIONS`; none is edited.
pub const SCHEMA_VERSION: i64 = 3;

/// The advisory lock key migrations serialize on: "RLOP", as SQLite's application id.
const MIGRATION_LOCK: i64 = 0x524C_4F50;

const V1: &str = "
CREATE TABLE reloop.sessions (
    id              text PRIMARY KEY,
    created_order   bigint GENERATED ALWAYS AS IDENTITY UNIQUE, -- insertion order, breaks ties
    created_at_ms   bigint NOT NULL,   -- the session's own clock (an import's is its transcript's)
    engine_version  text NOT NULL,
    core_config     text NOT NULL,     -- reloop_core::Config as JSON: the rules replay runs under
    run_config      text NOT NULL,     -- provider, model, cwd, prompt...: what the driver needs
    parent_id       text REFERENCES reloop.sessions(id), -- set on forks
    fork_seq        bigint,
    base_seq        bigint NOT NULL DEFAULT 0, -- steps 1..=base_seq are the parent's, not copied
    terminal_reason text,              -- set when the session ends
    last_written_at timestamptz NOT NULL DEFAULT now(), -- creation, and every writer's takeover
    CHECK (base_seq = 0 OR parent_id IS NOT NULL)
);
CREATE INDEX sessions_by_parent ON reloop.sessions(parent_id);
CREATE TABLE reloop.blobs (
    hash bytea PRIMARY KEY,            -- sha256 of body's UTF-8 bytes
    body text NOT NULL
);
CREATE TABLE reloop.steps (
    session_id   text NOT NULL REFERENCES reloop.sessions(id),
    seq          bigint NOT NULL CHECK (seq >= 0),
    at_ms        bigint NOT NULL,      -- driver wall clock, display only
    kind         text NOT NULL,        -- the event's kind: user_input, model_block, tool_done, ...
    event        text,                 -- reloop_core::Event as JSON, when small...
    event_hash   bytea REFERENCES reloop.blobs(hash), -- ...else its blob
    from_phase   text NOT NULL,
    to_phase     text NOT NULL,
    turn_before  bigint NOT NULL,
    turn_after   bigint NOT NULL,
    reason_kind  text,                 -- continue | terminal | ignored | NULL
    reason       text,                 -- next_turn, completed, ...; for ignored: stale_request, ...
    reason_json  text,                 -- reloop_core::Reason with its evidence, or reloop_core::Ignored
    effects      text,                 -- JSON array of reloop_core::Effect when small; NULL for none...
    effects_hash bytea REFERENCES reloop.blobs(hash), -- ...or its blob
    digest       bigint NOT NULL,      -- state digest after the step (the u64's bits)
    PRIMARY KEY (session_id, seq),
    CHECK ((event IS NULL) <> (event_hash IS NULL)),
    CHECK (effects IS NULL OR effects_hash IS NULL)
);
CREATE TABLE reloop.leases (
    session_id  text PRIMARY KEY REFERENCES reloop.sessions(id),
    epoch       bigint NOT NULL,       -- the fencing token: +1 at every takeover, never reset
    holder      text NOT NULL,         -- host:pid:n of the writer
    acquired_at timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL   -- the database's clock; renewed by heartbeats and appends
);
CREATE VIEW reloop.step_bodies AS
    SELECT s.session_id, s.seq, s.at_ms, s.kind, coalesce(s.event, e.body) AS event,
           s.from_phase, s.to_phase, s.turn_before, s.turn_after, s.reason_kind, s.reason, s.reason_json,
           coalesce(s.effects, f.body, '[]') AS effects, s.digest
    FROM reloop.steps s
    LEFT JOIN reloop.blobs e ON e.hash = s.event_hash
    LEFT JOIN reloop.blobs f ON f.hash = s.effects_hash;
";

/// The work queue of `reloop run --enqueue` and `reloop worker`.
const V2: &str = "
CREATE TABLE reloop.queue (
    session_id  text PRIMARY KEY REFERENCES reloop.sessions(id),
    enqueued_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    attempts    integer NOT NULL DEFAULT 0,  -- claims so far; a session failing every time stops at 5
    finished_at timestamptz,                 -- set when a worker's run of it ended
    outcome     text                         -- how that run ended: a terminal reason, or the error
);
CREATE INDEX queue_waiting ON reloop.queue(enqueued_at) WHERE finished_at IS NULL;
";

/// The hash of what each step did (`reloop_journal::outcome_hash`), written as it is appended, as
/// SQLite's v6 does: a replay compares it instead of the step's text. Older rows have none.
const V3: &str = "
ALTER TABLE reloop.steps ADD COLUMN outcome bigint; -- the hash of what the step did (the u64's bits)
";

/// Every version's SQL, in order: version n is `MIGRATIONS[n - 1]`.
const MIGRATIONS: [&str; SCHEMA_VERSION as usize] = [V1, V2, V3];

/// Brings the database up to [`SCHEMA_VERSION`], or refuses one a newer reloop wrote. `place`
/// names the database in errors.
pub(crate) fn migrate(client: &mut Client, place: &str) -> Result<(), JournalError> {
    let db = |e: postgres::Error| crate::conn::database_error(place, &e);
    let mut tx = client.transaction().map_err(db)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK]).map_err(db)?;
    tx.batch_execute(
        "CREATE SCHEMA IF NOT EXISTS reloop;
         CREATE TABLE IF NOT EXISTS reloop.schema_migrations (
             version        bigint PRIMARY KEY,
             applied_at     timestamptz NOT NULL DEFAULT now(),
             engine_version text NOT NULL
         );",
    )
    .map_err(db)?;
    let found: i64 =
        tx.query_one("SELECT coalesce(max(version), 0) FROM reloop.schema_migrations", &[]).map_err(db)?.get(0);
    if found > SCHEMA_VERSION {
        return Err(JournalError::SchemaTooNew { place: place.to_string(), found, supported: SCHEMA_VERSION });
    }
    for (version, sql) in (1i64..).zip(MIGRATIONS.iter()).skip(found as usize) {
        tx.batch_execute(sql).map_err(db)?;
        tx.execute(
            "INSERT INTO reloop.schema_migrations (version, engine_version) VALUES ($1, $2)",
            &[&version, &reloop_journal::ENGINE_VERSION],
        )
        .map_err(db)?;
    }
    tx.commit().map_err(db)
}
