/// What can stop the driver itself (as opposed to the loop ending with a terminal reason).
///
/// Each variant names one cause, so a caller can tell its own mistake (`NeedsJournal`) from the
/// run's task dying (`TaskStopped`) and from a bug in the loop (`StateLost`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DriverError {
    /// The journal could not be read or written; the session stops rather than run unrecorded.
    #[error(transparent)]
    Journal(#[from] reloop_journal::JournalError),
    #[error("session {0} has no journaled step (its process stopped before the prompt was written); start a new run")]
    /// The session (its id) has no journaled step, so there is nothing to resume from.
    NothingToResume(String),
    /// A resumed session's background agents could not be found again in its journal.
    #[error("the background agents could not be resumed: {0}")]
    Background(String),
    /// The caller asked for something only a journaled session can do (resume it, queue it) of
    /// a session given no journal.
    #[error("{action} needs its journal, and this session was given none")]
    NeedsJournal {
        /// What was asked, e.g. "resuming a session".
        action: &'static str,
    },
    /// The run's task panicked or was cancelled, so it returned no result; what it journaled
    /// before that stays in the journal.
    #[error("the run's task stopped without a result: {0}")]
    TaskStopped(#[source] tokio::task::JoinError),
    /// The loop found its state missing mid-run: a bug in the driver, reported rather than
    /// panicking so the journal's committed steps are kept.
    #[error("the loop lost its state (a bug in reloop); the journal keeps the steps before it")]
    StateLost,
}
