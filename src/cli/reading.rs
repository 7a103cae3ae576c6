//! The journal as the reading commands open it, and a session's steps fed to a replayer: `show`,
//! `replay` and `why` (inspect) and `replay --flip/--set` (what_if) share them, so they sit below
//! both.

use reloop_driver::SessionJournal;

use super::{current_dir, CliError, JournalArg};

/// Opens the journal to read it: the commands that call this never write.
pub(crate) fn open(journal: &JournalArg) -> Result<SessionJournal, CliError> {
    journal.open(&current_dir()?, super::journal::Open::Reading)
}

/// Feeds a session's steps to `replayer`: SQLite's rows undecoded (the fast path), any other
/// journal's steps as records.
/// Replays `id` through `replayer`: SQLite's rows are read and decoded on a second thread while
/// this one steps the core; another journal hands its steps decoded.
pub(crate) fn feed(
    journal: &mut SessionJournal,
    id: &str,
    replayer: &mut reloop_inspect::Replayer,
) -> Result<(), CliError> {
    match journal {
        SessionJournal::Sqlite(sqlite) => reloop_inspect::replay_journal(sqlite, id, replayer)?,
        SessionJournal::Shared(shared) => shared.visit_steps(id, &mut |record| Ok(replayer.feed(&record)))?,
    };
    Ok(())
}
