//! Which journal a command uses: a SQLite file (the default, `.reloop/journal.db`), or a
//! PostgreSQL database many machines share, named by a `postgres://` (or `postgresql://`)
//! address in `--journal` or `RELOOP_JOURNAL`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use reloop_driver::SessionJournal;
use reloop_journal::Journal;
use reloop_journal_pg::{LeaseTimes, PgJournal};

use crate::error::CliError;
use crate::options::JournalArg;

/// How a command means to use the journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Open {
    /// Write, creating the journal when there is none (`run`, `import`).
    Create,
    /// Write an existing journal (`resume`, `fork`).
    Existing,
    /// Read an existing journal (`show`, `replay`, `why`, ...).
    Reading,
}

/// The environment variable that shortens a lease, for tests and for fleets that want a dead
/// worker's sessions picked up sooner (milliseconds; the default is 30 000).
pub const LEASE_TTL_ENV: &str = "RELOOP_LEASE_TTL_MS";

/// Whether `journal` names a PostgreSQL database rather than a file.
pub fn is_shared(journal: &Path) -> bool {
    journal.to_str().is_some_and(|s| s.starts_with("postgres://") || s.starts_with("postgresql://"))
}

/// The lease times of this process: the default, or a ttl from [`LEASE_TTL_ENV`] with
/// heartbeats three times as often.
pub fn lease_times() -> Result<LeaseTimes, CliError> {
    let Ok(text) = std::env::var(LEASE_TTL_ENV) else { return Ok(LeaseTimes::default()) };
    let ms: u64 =
        text.trim().parse().ok().filter(|ms| (100..=86_400_000).contains(ms)).ok_or_else(|| {
            CliError::Usage(format!("{LEASE_TTL_ENV}={text:?}: give milliseconds, from 100 to 86400000"))
        })?;
    let ttl = Duration::from_millis(ms);
    Ok(LeaseTimes { ttl, heartbeat: Some(ttl / 3) })
}

/// `.reloop/` under `base`, where the default journal lives, created with a `.gitignore` that
/// ignores all of it: a journal (and the demo's workspace) is this machine's, never the
/// repository's, and `git status` should not offer it.
pub fn reloop_dir(base: &Path) -> Result<PathBuf, CliError> {
    let dir = base.join(".reloop");
    let io = |e: std::io::Error| CliError::Io(format!("cannot create {}: {e}", dir.display()));
    std::fs::create_dir_all(&dir).map_err(io)?;
    let ignore = dir.join(".gitignore");
    if !ignore.exists() {
        std::fs::write(&ignore, "# reloop's journal and scratch files, never committed\n*\n").map_err(io)?;
    }
    Ok(dir)
}

/// Connects to the PostgreSQL journal at `url`.
pub fn connect(url: &str) -> Result<PgJournal, CliError> {
    Ok(PgJournal::connect(url, lease_times()?)?)
}

impl JournalArg {
    /// The PostgreSQL address given, if the journal is one.
    pub fn shared_url(&self) -> Option<&str> {
        self.journal.as_deref().filter(|p| is_shared(p)).and_then(Path::to_str)
    }

    /// Opens the journal: a PostgreSQL database, or the file (relative to `base` unless given).
    pub fn open(&self, base: &Path, how: Open) -> Result<SessionJournal, CliError> {
        if let Some(url) = self.shared_url() {
            let journal: Box<dyn reloop_journal::JournalBackend + Send> = Box::new(connect(url)?);
            return Ok(SessionJournal::Shared(journal));
        }
        let path: PathBuf = self.path(base);
        if how == Open::Create && self.journal.is_none() {
            reloop_dir(base)?;
        }
        let journal = match how {
            Open::Create => Journal::create_or_open(&path)?,
            Open::Existing => Journal::open_existing(&path)?,
            Open::Reading => Journal::open_for_reading(&path)?,
        };
        Ok(SessionJournal::Sqlite(journal))
    }
}
