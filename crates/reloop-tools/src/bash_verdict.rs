//! Why a command is not read-only: the one reason type every part of the Bash classifier
//! returns. It sits below them all so that option parsing and the special commands can refuse a
//! command without importing the module that judges the whole line.

/// Why a command is not read-only, for tests and for the reader of a denial.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NotReadOnly {
    /// The text holds a construct whose effect the words do not show.
    Opaque,
    /// No command at all.
    Empty,
    /// The command is not in the table.
    UnknownCommand(String),
    /// An option the command's row does not list, or an ambiguous abbreviation.
    UnknownOption { command: String, option: String },
    /// An option or operand that writes, runs programs, sets the clock or reads the environment.
    Capability { command: String, what: String },
    /// Too many places the command may run in after `cd` to check them all.
    TooManyDirectories,
}
