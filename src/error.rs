//! The binary's error: what went wrong, shown as one line on stderr, and the exit code it ends the
//! process with.

use std::process::ExitCode;

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
    /// Every error is bad input to the command (arguments, a cassette, a journal, the machine):
    /// exit 2. A run that ended in error is no error of the command; its [`Exit`] says so.
    pub fn exit(&self) -> Exit {
        Exit::BadInput
    }
}

/// How a command ended, as the process reports it: each command returns one, an error carries
/// one ([`CliError::exit`]), and [`Exit::code`] is the only place either becomes an exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// 0: the command did what it was asked, and a run it ran ended well.
    Success,
    /// 1: the run ended in error (`is_error`), or the sessions `diff` compares part ways.
    Failed,
    /// 2: bad input: arguments, a cassette, a journal; or nothing could be imported.
    BadInput,
    /// 3: a replay, a check or a rerun diverged from the recording.
    Diverged,
    /// 128 + N: signal N ended the run (SIGPIPE, 141, for a stdout nobody reads any more).
    Signal(i32),
}

impl Exit {
    /// The process's exit status.
    pub fn status(self) -> i32 {
        match self {
            Exit::Success => 0,
            Exit::Failed => 1,
            Exit::BadInput => 2,
            Exit::Diverged => 3,
            Exit::Signal(n) => 128 + n,
        }
    }

    /// The exit code `main` returns.
    pub fn code(self) -> ExitCode {
        ExitCode::from(u8::try_from(self.status()).unwrap_or(u8::MAX))
    }
}
