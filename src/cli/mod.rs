//! Command-line parsing and dispatch.

mod inspect;
mod run;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

pub use run::RunArgs;

#[derive(Parser, Debug)]
#[command(name = "reloop", version, about = "A replayable engine for coding-agent loops")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run the agent loop on a prompt (with a cassette, or the bundled --demo).
    Run(RunArgs),
    /// List the sessions of a journal.
    Sessions {
        #[command(flatten)]
        journal: JournalArg,
        #[arg(long)]
        json: bool,
    },
    /// Show a session: its header and conversation, rebuilt from the journal.
    Show {
        /// A session id, a unique id prefix, or `last`.
        session: String,
        /// Show the transition trace (one line per journaled step) instead of the conversation.
        #[arg(long)]
        steps: bool,
        #[command(flatten)]
        journal: JournalArg,
        #[arg(long)]
        json: bool,
    },
    /// Re-run a session's journal through today's engine, with no model and no tools.
    Replay {
        session: String,
        #[command(flatten)]
        journal: JournalArg,
        #[arg(long)]
        json: bool,
        /// Print the stream the live run showed, rebuilt from the journal (timings aside).
        #[arg(long, value_enum)]
        output_format: Option<OutputFormat>,
    },
    /// Turn a recorded transcript into a reloop session (`reloop import claude-code FILE.jsonl`).
    Import {
        /// The transcript's format: `claude-code`.
        #[arg(value_enum)]
        format: ImportFormat,
        file: PathBuf,
        /// Import the conversation that ends at this line's uuid instead of the latest one.
        #[arg(long)]
        leaf: Option<String>,
        #[command(flatten)]
        journal: JournalArg,
        #[arg(long)]
        json: bool,
    },
    /// Write a session out as messages, stream-json or Claude Code transcript lines.
    Export {
        session: String,
        #[arg(long, value_enum, default_value = "messages")]
        format: ExportKind,
        #[command(flatten)]
        journal: JournalArg,
    },
    /// Explain why each turn of a session continued or stopped.
    Why {
        session: String,
        /// Only the decisions taken in this turn.
        #[arg(long)]
        turn: Option<u32>,
        #[command(flatten)]
        journal: JournalArg,
        #[arg(long)]
        json: bool,
    },
}

#[derive(clap::Args, Debug, Clone)]
pub struct JournalArg {
    /// The journal database [default: .reloop/journal.db under the working directory].
    #[arg(long, env = "RELOOP_JOURNAL")]
    pub journal: Option<PathBuf>,
}

impl JournalArg {
    /// The journal path, relative to `base` unless given.
    pub fn path(&self, base: &Path) -> PathBuf {
        self.journal.clone().unwrap_or_else(|| base.join(".reloop").join("journal.db"))
    }
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportFormat {
    ClaudeCode,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportKind {
    Messages,
    StreamJson,
    ClaudeJsonl,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    Text,
    Json,
    StreamJson,
}

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

pub async fn dispatch(cli: Cli) -> Result<ExitCode, CliError> {
    match cli.command {
        Command::Run(args) => run::run(args).await,
        Command::Sessions { journal, json } => inspect::sessions(&journal, json),
        Command::Show { session, steps, journal, json } if steps => inspect::trace(&journal, &session, json),
        Command::Show { session, journal, json, .. } => inspect::show(&journal, &session, json),
        Command::Replay { session, journal, json, output_format } => {
            inspect::replay(&journal, &session, json, output_format)
        }
        Command::Import { format: ImportFormat::ClaudeCode, file, leaf, journal, json } => {
            inspect::import(&journal, &file, leaf, json)
        }
        Command::Export { session, format, journal } => inspect::export(&journal, &session, format),
        Command::Why { session, turn, journal, json } => inspect::why(&journal, &session, turn, json),
    }
}

pub(crate) fn current_dir() -> Result<PathBuf, CliError> {
    std::env::current_dir().map_err(|e| CliError::Io(format!("cannot read the current directory: {e}")))
}
