//! The binary's error: what went wrong, shown as one line on stderr, and the exit code it ends the
//! process with.

/// Errors the binary turns into a message and an exit code.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Journal(#[from] reloop_journal::JournalError),
    #[error(transparent)]
    Driver(#[from] reloop_driver::DriverError),
    #[error("{0}")]
    Io(String),
}

impl CliError {
    pub fn exit_code(&self) -> u8 {
        2
    }
}
