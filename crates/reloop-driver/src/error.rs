/// What can stop the driver itself (as opposed to the loop ending with a terminal reason).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DriverError {
    #[error(transparent)]
    Journal(#[from] reloop_journal::JournalError),
    #[error("session {0} has no journaled step (its process stopped before the prompt was written); start a new run")]
    NothingToResume(String),
    #[error("the run's task failed: {0}")]
    Task(String),
}
