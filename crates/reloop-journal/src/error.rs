use std::path::PathBuf;

/// Everything that can go wrong with a journal, phrased for the person who has to act on it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JournalError {
    /// A reader was pointed at a journal file that does not exist; readers never create one.
    #[error("no journal at {0} (run a session first, or pass --journal PATH)")]
    Missing(PathBuf),
    /// The file is a database but not a reloop journal, so it is never written to.
    #[error("{path} is not a reloop journal: {detail}; it was left untouched")]
    Foreign {
        /// The journal file concerned.
        path: PathBuf,
        /// What the check or the database reported.
        detail: String,
    },
    /// The SQLite journal's schema is newer than this build reads; opening it would risk misreading.
    #[error("{path} was written by a newer reloop (journal schema {found}, this build reads up to {supported})")]
    TooNew {
        /// The journal file concerned.
        path: PathBuf,
        /// The schema version the journal records.
        found: i64,
        /// The newest schema version this build reads.
        supported: i64,
    },
    /// A session selector (id or prefix) matched no session.
    #[error("no session matches `{0}` (see `reloop sessions`)")]
    NoSuchSession(String),
    /// A session id prefix matched more than one session, so none is picked silently.
    #[error("`{selector}` matches {count} sessions; give more of the id")]
    AmbiguousSession {
        /// The id prefix as given.
        selector: String,
        /// How many sessions it matched.
        count: usize,
    },
    /// A command needing "the latest session" found none in the journal (or dump).
    #[error("the journal holds no sessions yet")]
    Empty,
    /// A stored row no longer parses: the journal was edited or written by an incompatible build.
    #[error("session {session}, step {seq}: stored {what} cannot be read: {source}")]
    Decode {
        /// The session concerned.
        session: String,
        /// The step's sequence number within the session.
        seq: u64,
        /// Which part of the row (or which operation) is concerned.
        what: &'static str,
        /// The JSON error underneath.
        source: serde_json::Error,
    },
    /// A value could not be turned into JSON for a row; nothing was written.
    #[error("cannot encode {what} for the journal: {source}")]
    Encode {
        /// Which part of the row (or which operation) is concerned.
        what: &'static str,
        /// The JSON error underneath.
        source: serde_json::Error,
    },
    /// SQLite's integrity check failed on open; the file is left as it was.
    #[error("{path} is damaged ({detail}); it was left untouched — restore it from a copy, or pass --journal PATH for a new one")]
    Corrupt {
        /// The journal file concerned.
        path: PathBuf,
        /// What the check or the database reported.
        detail: String,
    },
    /// Another live process holds this session's SQLite lock row: one writer per session.
    #[error(
        "session {session} is being written by another reloop process (pid {pid}); wait for it to end or stop it first"
    )]
    Locked {
        /// The session concerned.
        session: String,
        /// The process id of the writer holding the lock.
        pid: u32,
    },
    /// An import or fork would create a session id the journal already holds.
    #[error("session {0} is already in this journal")]
    Duplicate(String),
    /// A session dump (the JSON-lines export format) is malformed or truncated.
    #[error("the session dump cannot be read: {0}")]
    Dump(String),
    /// A step or header exceeds [`crate::MAX_ROW_BYTES`]; refused before any write.
    #[error(
        "session {session}, step {seq}: {bytes} bytes is more than one journal row may hold ({limit} bytes); nothing was written"
    )]
    RowTooLarge {
        /// The session concerned.
        session: String,
        /// The step's sequence number within the session.
        seq: u64,
        /// The encoded size of the row.
        bytes: usize,
        /// The most a row may hold.
        limit: usize,
    },
    /// A step's sequence number does not fit the row's 32-bit column; refused before any write.
    #[error("session {session}, step {seq}: a session holds at most 4294967295 steps; nothing was written")]
    TooManySteps {
        /// The session concerned.
        session: String,
        /// The step's sequence number within the session.
        seq: u64,
    },
    /// The shared (PostgreSQL) journal's schema is newer than this build reads.
    #[error("{place} was written by a newer reloop (journal schema {found}, this build reads up to {supported}); upgrade reloop to use it — it was left untouched")]
    SchemaTooNew {
        /// The journal (or the operation on it) concerned.
        place: String,
        /// The schema version the journal records.
        found: i64,
        /// The newest schema version this build reads.
        supported: i64,
    },
    /// Another writer holds an unexpired lease on this session in the shared journal.
    #[error(
        "session {session} is being written by {holder} (its lease runs {expires_in_ms} ms more without a heartbeat); wait for it to end or stop it first"
    )]
    Leased {
        /// The session concerned.
        session: String,
        /// Who holds the lease (its writer's identity).
        holder: String,
        /// How long the lease still runs without a heartbeat.
        expires_in_ms: i64,
    },
    /// This writer's lease was taken over (its epoch is stale): fenced off, it writes nothing more.
    #[error(
        "session {session}: this writer's lease (epoch {epoch}) was taken over by another writer; nothing more was written, and the session continues where the new writer is"
    )]
    LeaseLost {
        /// The session concerned.
        session: String,
        /// The fencing epoch this writer held.
        epoch: i64,
    },
    /// An operation (such as a worker queue) needs a shared journal, and this one is local SQLite.
    #[error("{place}: {what} needs a journal many workers share (--journal postgres://...)")]
    NeedsShared {
        /// The journal (or the operation on it) concerned.
        place: String,
        /// Which part of the row (or which operation) is concerned.
        what: &'static str,
    },
    /// A database failure other than SQLite's own (PostgreSQL, or a journal thread gone), phrased.
    #[error("journal database error ({place}): {detail}")]
    Database {
        /// The journal (or the operation on it) concerned.
        place: String,
        /// What the check or the database reported.
        detail: String,
    },
    /// The v4 migration met a state digest that is not hex; it stops rather than store a wrong value.
    #[error(
        "session {session}, step {seq}: its state digest `{digest}` is not hex, so the journal cannot move to schema v4; it was left as it was — restore it from a copy"
    )]
    BadDigest {
        /// The session concerned.
        session: String,
        /// The step's sequence number within the session.
        seq: u64,
        /// The stored digest text as found.
        digest: String,
    },
    /// An error from SQLite itself; a damaged file is phrased as [`JournalError::Corrupt`] is.
    #[error("{}", sqlite_message(.0))]
    Sqlite(#[from] rusqlite::Error),
    /// The folder for a new journal could not be created.
    #[error("cannot create the journal's folder {path}: {source}")]
    Io {
        /// The journal file concerned.
        path: PathBuf,
        /// The filesystem error underneath.
        source: std::io::Error,
    },
}

/// A database error, phrased: a damaged file met while reading (readers skip the whole-file
/// check, so this is where they learn of it) says what to do, as [`JournalError::Corrupt`] does.
fn sqlite_message(error: &rusqlite::Error) -> String {
    match error.sqlite_error_code() {
        Some(rusqlite::ErrorCode::DatabaseCorrupt) => format!(
            "the journal is damaged ({error}); it was left untouched — restore it from a copy, or pass --journal PATH for a new one"
        ),
        _ => format!("journal database error: {error}"),
    }
}
