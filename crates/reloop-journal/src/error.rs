use std::path::PathBuf;

/// Everything that can go wrong with a journal, phrased for the person who has to act on it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JournalError {
    #[error("no journal at {0} (run a session first, or pass --journal PATH)")]
    Missing(PathBuf),
    #[error("{path} is not a reloop journal: {detail}; it was left untouched")]
    Foreign { path: PathBuf, detail: String },
    #[error("{path} was written by a newer reloop (journal schema {found}, this build reads up to {supported})")]
    TooNew { path: PathBuf, found: i64, supported: i64 },
    #[error("no session matches `{0}` (see `reloop sessions`)")]
    NoSuchSession(String),
    #[error("`{selector}` matches {count} sessions; give more of the id")]
    AmbiguousSession { selector: String, count: usize },
    #[error("the journal holds no sessions yet")]
    Empty,
    #[error("session {session}, step {seq}: stored {what} cannot be read: {source}")]
    Decode { session: String, seq: u64, what: &'static str, source: serde_json::Error },
    #[error("cannot encode {what} for the journal: {source}")]
    Encode { what: &'static str, source: serde_json::Error },
    #[error("{path} is damaged ({detail}); it was left untouched — restore it from a copy, or pass --journal PATH for a new one")]
    Corrupt { path: PathBuf, detail: String },
    #[error(
        "session {session} is being written by another reloop process (pid {pid}); wait for it to end or stop it first"
    )]
    Locked { session: String, pid: u32 },
    #[error("session {0} is already in this journal")]
    Duplicate(String),
    #[error("the session dump cannot be read: {0}")]
    Dump(String),
    #[error(
        "session {session}, step {seq}: {bytes} bytes is more than one journal row may hold ({limit} bytes); nothing was written"
    )]
    RowTooLarge { session: String, seq: u64, bytes: usize, limit: usize },
    #[error("session {session}, step {seq}: a session holds at most 4294967295 steps; nothing was written")]
    TooManySteps { session: String, seq: u64 },
    #[error("{place} was written by a newer reloop (journal schema {found}, this build reads up to {supported}); upgrade reloop to use it — it was left untouched")]
    SchemaTooNew { place: String, found: i64, supported: i64 },
    #[error(
        "session {session} is being written by {holder} (its lease runs {expires_in_ms} ms more without a heartbeat); wait for it to end or stop it first"
    )]
    Leased { session: String, holder: String, expires_in_ms: i64 },
    #[error(
        "session {session}: this writer's lease (epoch {epoch}) was taken over by another writer; nothing more was written, and the session continues where the new writer is"
    )]
    LeaseLost { session: String, epoch: i64 },
    #[error("{place}: {what} needs a journal many workers share (--journal postgres://...)")]
    NeedsShared { place: String, what: &'static str },
    #[error("journal database error ({place}): {detail}")]
    Database { place: String, detail: String },
    #[error(
        "session {session}, step {seq}: its state digest `{digest}` is not hex, so the journal cannot move to schema v4; it was left as it was — restore it from a copy"
    )]
    BadDigest { session: String, seq: u64, digest: String },
    #[error("{}", sqlite_message(.0))]
    Sqlite(#[from] rusqlite::Error),
    #[error("cannot create the journal's folder {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
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
