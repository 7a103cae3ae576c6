//! Command-line parsing and dispatch.

mod agents;
mod check;
mod compact;
mod doctor;
mod help;
mod inspect;
pub(crate) mod journal;
mod listing;
pub(crate) mod options;
mod reading;
mod reread;
mod rerun;
pub(crate) mod run;
mod scripted;
pub(crate) mod session;
pub(crate) mod signals;
mod tree;
mod view;
mod what_if;
mod worker;

pub use signals::ending;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

pub use options::{JournalArg, OutputFormat};
pub use run::RunArgs;

#[derive(Parser, Debug)]
#[command(name = "reloop", version, about = "A replayable engine for coding-agent loops")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Never send output through a pager (also: RELOOP_PAGER= or PAGER= empty).
    #[arg(long, global = true)]
    pub no_pager: bool,
}

#[derive(Subcommand, Debug)]
#[allow(clippy::large_enum_variant)] // parsed once per process
pub enum Command {
    /// Run the agent loop on a prompt (with a cassette, or the bundled --demo).
    Run(RunArgs),
    /// Continue a session whose process stopped (a crash, a kill): ask again for what was in flight.
    Resume(session::ResumeArgs),
    /// Start a new session from a step of another: same history up to it, then its own way.
    Fork(session::ForkArgs),
    /// Run queued sessions (`reloop run --enqueue`) from a shared journal until SIGTERM; several
    /// workers share the queue, one writer per session by lease.
    Worker(worker::WorkerArgs),
    /// Compact a stopped session on demand (trigger manual), as a fork: the original stays as it was.
    Compact(compact::CompactArgs),
    /// List the sessions of a journal: date, source, steps, cost, how each ended, first prompt.
    Sessions {
        #[command(flatten)]
        journal: JournalArg,
        /// Print JSON, for tools, instead of text.
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
        /// Show the exact request sent at turn N (its first request), rebuilt from the journal.
        #[arg(long, value_name = "N", conflicts_with = "steps")]
        turn: Option<u32>,
        /// Show the exact request with this number (retries included), rebuilt from the journal.
        #[arg(long, value_name = "R", conflicts_with_all = ["steps", "turn"])]
        request: Option<u32>,
        #[command(flatten)]
        journal: JournalArg,
        /// Print JSON, for tools, instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Re-run a session's journal through today's engine, with no model and no tools.
    Replay {
        /// A session id, a unique id prefix, or `last`.
        session: String,
        #[command(flatten)]
        journal: JournalArg,
        /// Print JSON, for tools, instead of text.
        #[arg(long)]
        json: bool,
        /// Print the stream the live run showed, rebuilt from the journal (timings aside).
        #[arg(long, value_enum)]
        output_format: Option<OutputFormat>,
        /// Debugging: replay with behaviour flag N flipped, to see where that behaviour bites.
        #[arg(long, value_name = "N", hide = true)]
        flip_flag: Vec<u32>,
        /// What-if: replay under a changed setting and show where the session would have gone
        /// otherwise. Keys: `compat=PROFILE` (another profile's rules).
        #[arg(long, value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
    /// Turn a recorded transcript into a reloop session (`reloop import claude-code FILE.jsonl`,
    /// or a whole `~/.claude/projects/<project>/` folder). A file imported before is not
    /// imported again.
    Import {
        /// The transcript's format: `claude-code`.
        #[arg(value_enum)]
        format: ImportFormat,
        /// The transcript (`~/.claude/projects/<project>/<session>.jsonl`), (claude-code) a folder of them,
        /// or a session dump.
        file: PathBuf,
        /// Import the conversation that ends at this line's uuid instead of the latest one.
        #[arg(long)]
        leaf: Option<String>,
        #[command(flatten)]
        journal: JournalArg,
        /// Print JSON, for tools, instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Write a session out as messages, stream-json or Claude Code transcript lines.
    Export {
        /// A session id, a unique id prefix, or `last`.
        session: String,
        /// What to write: the messages array, the stream-json lines, Claude Code transcript
        /// lines, or a session dump.
        #[arg(long, value_enum, default_value = "messages")]
        format: ExportKind,
        #[command(flatten)]
        journal: JournalArg,
    },
    /// Write a session as one self-contained HTML page: its timeline, the state path drawn,
    /// every step's event, effects and reason a click away. No network, no external files.
    View {
        /// A session id, a unique id prefix, or `last`.
        session: String,
        /// Where to write the page [default: reloop-ID.html, ID the start of the session id].
        #[arg(short, long, value_name = "FILE.html")]
        output: Option<PathBuf>,
        #[command(flatten)]
        journal: JournalArg,
    },
    /// Where two sessions part ways: the first step whose event, request or reason differs, side
    /// by side, then what each did after it. Exit 0 when they agree, 1 when they differ.
    Diff {
        /// The first session (id, unique prefix, or `last`).
        a: String,
        /// The second session; a fork and its parent are compared from the fork point.
        b: String,
        #[command(flatten)]
        journal: JournalArg,
        /// The difference as JSON, for tools.
        #[arg(long)]
        json: bool,
    },
    /// Replay every recorded session of a folder or file as a regression test (exit 3 on a
    /// divergence); `--junit FILE` for CI.
    Check(check::CheckArgs),
    /// Rerun a recorded session against today's workspace: recorded model answers, live tools;
    /// the first request that differs stops it (exit 3).
    Rerun(rerun::RerunArgs),
    /// Print a shell completion script (`reloop completions bash > /etc/bash_completion.d/reloop`).
    Completions {
        /// The shell to complete in.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print reloop's man page (roff) to stdout (`reloop man > reloop.1`).
    Man,
    /// Report what containment this machine gives the commands tools run (the sandbox), and
    /// what a confined command costs.
    Doctor {
        /// Print JSON, for tools, instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Explain why each turn of a session continued or stopped.
    Why {
        /// A session id, a unique id prefix, or `last`.
        session: String,
        /// Only the decisions taken in this turn (of every prompt, unless --prompt says which).
        #[arg(long)]
        turn: Option<u32>,
        /// Only the decisions of this prompt (1 is the session's first).
        #[arg(long, value_name = "P")]
        prompt: Option<u32>,
        /// Only decisions with this reason or kind: next_turn, completed, retry, fallback, hook...
        #[arg(long, value_name = "NAME")]
        reason: Option<String>,
        /// Write the path of states and reasons as a Graphviz graph.
        #[arg(long, conflicts_with = "json")]
        dot: bool,
        /// Also list every event a state did not expect, with why it was ignored.
        #[arg(long)]
        steps: bool,
        #[command(flatten)]
        journal: JournalArg,
        /// Print JSON, for tools, instead of text.
        #[arg(long)]
        json: bool,
    },
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportFormat {
    ClaudeCode,
    /// A session dump written by `reloop export --format journal`.
    Journal,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportKind {
    Messages,
    StreamJson,
    ClaudeJsonl,
    /// The session's header and steps, verbatim (`reloop import journal` reads it back).
    Journal,
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

/// Whether `command` reads a journal and prints what may be long: such output goes through the
/// pager on a terminal. A run, an import or a completion script never does.
fn pages(command: &Command) -> bool {
    matches!(
        command,
        Command::Sessions { .. }
            | Command::Show { .. }
            | Command::Replay { .. }
            | Command::Export { .. }
            | Command::Why { .. }
            | Command::Man
    )
}

pub async fn dispatch(cli: Cli) -> Result<ExitCode, CliError> {
    if pages(&cli.command) {
        crate::term::pager::start(cli.no_pager);
    }
    match cli.command {
        Command::Run(args) => run::run(args).await,
        Command::Resume(args) => session::resume(args).await,
        Command::Fork(args) => session::fork(args).await,
        Command::Compact(args) => compact::compact(args).await,
        Command::Worker(args) => worker::worker(args).await,
        Command::Sessions { journal, json } => listing::sessions(&journal, json),
        Command::Show { session, steps, journal, json, .. } if steps => inspect::trace(&journal, &session, json),
        Command::Show { session, turn: Some(n), journal, .. } => {
            inspect::request(&journal, &session, reloop_driver::RequestAt::Turn(n))
        }
        Command::Show { session, request: Some(n), journal, .. } => {
            inspect::request(&journal, &session, reloop_driver::RequestAt::Number(n))
        }
        Command::Show { session, journal, json, .. } => inspect::show(&journal, &session, json),
        Command::Replay { session, journal, json, output_format, flip_flag, set } => {
            inspect::replay(&journal, &session, json, output_format, &flip_flag, &set)
        }
        Command::Check(args) => check::check(&args),
        Command::Rerun(args) => rerun::rerun(args).await,
        Command::Import { format: ImportFormat::ClaudeCode, file, leaf, journal, json } => {
            listing::import(&journal, &file, leaf, json)
        }
        Command::Import { format: ImportFormat::Journal, file, journal, json, .. } => {
            inspect::import_dump(&journal, &file, json)
        }
        Command::Export { session, format, journal } => inspect::export(&journal, &session, format),
        Command::Completions { shell } => help::completions(shell),
        Command::Man => help::man(),
        Command::Doctor { json } => doctor::doctor(json),
        Command::View { session, output, journal } => view::view(&journal, &session, output),
        Command::Diff { a, b, journal, json } => inspect::diff(&journal, &a, &b, json),
        Command::Why { session, turn, prompt, reason, journal, json, dot, steps } => {
            let filter = reloop_driver::explain::WhyFilter { turn, prompt, reason, ignored: steps };
            inspect::why(&journal, &session, filter, json, dot)
        }
    }
}

pub(crate) fn current_dir() -> Result<PathBuf, CliError> {
    std::env::current_dir().map_err(|e| CliError::Io(format!("cannot read the current directory: {e}")))
}
