//! The `reloop` subcommands: one file per command, each its clap `Args` and its `run`, and the
//! helpers they share below them (option groups, journal opening, reading, signals). The
//! commands form layers with no import cycle (tests/layout.rs).

mod check;
mod check_rules;
mod compact;
mod completions;
mod diff;
mod doctor;
mod export;
mod fork;
mod import;
mod junit;
mod man;
mod named_file;
mod prop;
mod prop_hooks;
mod queue;
pub(crate) mod reading;
mod replay;
mod reread;
mod rerun;
mod resume;
pub(crate) mod run;
mod serve;
mod sessions;
mod show;
mod tree;
mod view;
mod what_if;
mod why;
mod worker;

use clap::{Parser, Subcommand};

pub use crate::error::{CliError, Exit};
pub use crate::options::{JournalArg, OutputFormat};
pub use replay::SDK_STREAM;
pub use run::RunArgs;

pub(crate) use crate::launch::current_dir;

#[derive(Parser, Debug)]
#[command(
    name = "reloop",
    version,
    about = "A replayable engine for coding-agent loops",
    after_help = "With no subcommand, reloop is Claude Code's print mode, as the Claude Agent SDKs run it:\n  \
                  reloop -p \"question\" [--output-format text|json|stream-json]   (reloop -p --help: its flags)"
)]
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
    Resume(resume::ResumeArgs),
    /// Start a new session from a step of another: same history up to it, then its own way.
    Fork(fork::ForkArgs),
    /// Run queued sessions (`reloop run --enqueue`) from a shared journal until SIGTERM; several
    /// workers share the queue, one writer per session by lease.
    Worker(worker::WorkerArgs),
    /// List a shared journal's work queue: queued, claimed (by which worker, since when) and
    /// failed sessions (with why).
    Queue(queue::QueueArgs),
    /// Compact a stopped session on demand (trigger manual), as a fork: the original stays as it was.
    Compact(compact::CompactArgs),
    /// List the sessions of a journal: date, source, steps, cost, how each ended, first prompt.
    Sessions(sessions::SessionsArgs),
    /// Show a session: its header and conversation, rebuilt from the journal.
    Show(show::ShowArgs),
    /// Re-run a session's journal through today's engine, with no model and no tools.
    Replay(replay::ReplayArgs),
    /// Turn a recorded transcript into a reloop session (`reloop import claude-code FILE.jsonl`,
    /// or a whole `~/.claude/projects/<project>/` folder). A file imported before is not
    /// imported again.
    Import(import::ImportArgs),
    /// Write a session out as messages, stream-json or Claude Code transcript lines.
    Export(export::ExportArgs),
    /// Write a session as one self-contained HTML page: its timeline, the state path drawn,
    /// every step's event, effects and reason a click away. No network, no external files.
    View(view::ViewArgs),
    /// Serve the journal's sessions as a local web app: a list with filters and full-text
    /// search, each session's page (followed live while it runs), diffs. Read-only.
    Serve(serve::ServeArgs),
    /// Where two sessions part ways: the first step whose event, request or reason differs, side
    /// by side, then what each did after it. Exit 0 when they agree, 1 when they differ.
    Diff(diff::DiffArgs),
    /// Replay every recorded session of a folder or file as a regression test (exit 3 on a
    /// divergence); `--junit FILE` for CI.
    Check(check::CheckArgs),
    /// Rerun a recorded session against today's workspace: recorded model answers, live tools;
    /// the first request that differs stops it (exit 3).
    Rerun(rerun::RerunArgs),
    /// Print a shell completion script (`reloop completions bash > /etc/bash_completion.d/reloop`).
    Completions(completions::CompletionsArgs),
    /// Print reloop's man page (roff) to stdout (`reloop man > reloop.1`).
    Man(man::ManArgs),
    /// Report what containment this machine gives the commands tools run (the sandbox), and
    /// what a confined command costs.
    Doctor(doctor::DoctorArgs),
    /// Explain why each turn of a session continued or stopped.
    Why(why::WhyArgs),
    /// Property-test a loop configuration: generated worlds through the real core, built-in
    /// invariants and your own properties (CEL); a falsified one is shrunk to a counterexample
    /// journaled as a session and written as a cassette. Exit 1 when one is falsified.
    Prop(prop::PropArgs),
}

/// Whether `command` reads a journal and prints what may be long: such output goes through the
/// pager on a terminal. A run, an import or a completion script never does.
fn pages(command: &Command) -> bool {
    matches!(
        command,
        Command::Sessions(_)
            | Command::Show(show::ShowArgs { follow: false, .. })
            | Command::Replay(_)
            | Command::Export(_)
            | Command::Why(_)
            | Command::Man(_)
    )
}

pub async fn dispatch(mut cli: Cli) -> Result<Exit, CliError> {
    // A session named by its file is read into a scratch journal the command then reads.
    let _scratch = read_session_files(&mut cli.command)?;
    if pages(&cli.command) {
        crate::term::pager::start(cli.no_pager);
    }
    match cli.command {
        Command::Run(args) => run::run(args).await,
        Command::Resume(args) => resume::run(args).await,
        Command::Fork(args) => fork::run(args).await,
        Command::Compact(args) => compact::run(args).await,
        Command::Worker(args) => worker::run(args).await,
        Command::Queue(args) => queue::run(args),
        Command::Rerun(args) => rerun::run(args).await,
        Command::Sessions(args) => sessions::run(args),
        Command::Show(args) => show::run(args),
        Command::Replay(args) => replay::run(args),
        Command::Check(args) => check::run(args),
        Command::Import(args) => import::run(args),
        Command::Export(args) => export::run(args),
        Command::Completions(args) => completions::run(args),
        Command::Man(args) => man::run(args),
        Command::Doctor(args) => doctor::run(args),
        Command::View(args) => view::run(args),
        Command::Serve(args) => serve::run(args).await,
        Command::Diff(args) => diff::run(args),
        Command::Why(args) => why::run(args),
        Command::Prop(args) => prop::run(args).await,
    }
}

/// Where a reading command names a session by its file (a dump, a transcript, a journal), the
/// file is read into a scratch journal ([`named_file`]) and the command pointed at it. A
/// command that writes the session on (`resume`, `fork`, `compact`) goes on from it in the
/// working journal, so the file's session is read into that journal first (once: read again, it
/// is found there); `rerun` reads its recording so itself.
fn read_session_files(command: &mut Command) -> Result<Option<named_file::Scratch>, CliError> {
    let (selectors, journal): (Vec<&mut String>, &mut JournalArg) = match command {
        Command::Show(a) => (vec![&mut a.session.session], &mut a.journal),
        Command::Replay(a) => (vec![&mut a.session.session], &mut a.journal),
        Command::Why(a) => (vec![&mut a.session.session], &mut a.journal),
        Command::View(a) => (vec![&mut a.session.session], &mut a.journal),
        Command::Export(a) => (vec![&mut a.session.session], &mut a.journal),
        Command::Diff(a) => (vec![&mut a.a, &mut a.b], &mut a.journal),
        Command::Resume(a) => return adopt_file(&mut a.session.session, &a.journal),
        Command::Fork(a) => return adopt_file(&mut a.session.session, &a.journal),
        Command::Compact(a) => return adopt_file(&mut a.session.session, &a.journal),
        _ => return Ok(None),
    };
    let mut selectors = selectors;
    if !selectors.iter().any(|s| named_file::is_file(s)) {
        return Ok(None);
    }
    if journal.shared_url().is_some() {
        return Err(CliError::Usage("a session file is compared with sessions of a SQLite journal only".into()));
    }
    let working = journal.path(&current_dir()?);
    let scratch = named_file::load(&mut selectors, &working)?;
    if let Some(scratch) = &scratch {
        journal.journal = Some(scratch.journal());
    }
    Ok(scratch)
}

fn adopt_file(selector: &mut String, journal: &JournalArg) -> Result<Option<named_file::Scratch>, CliError> {
    if !named_file::is_file(selector) {
        return Ok(None);
    }
    let file = std::path::PathBuf::from(selector.as_str());
    let base = current_dir()?;
    let mut working = journal.open(&base, crate::launch::journal::Open::Create)?;
    let id = match (file.extension().and_then(|e| e.to_str()), &mut working) {
        (Some("jsonl"), working) => import::adopt(working, &file)?,
        (_, reloop_driver::SessionJournal::Sqlite(working)) => named_file::adopt(working, &file)?,
        (_, reloop_driver::SessionJournal::Shared(_)) => {
            return Err(CliError::Usage("a session dump or journal file is read into a SQLite journal only".into()))
        }
    };
    crate::term::errln!("reloop: {selector} is session {id} of the journal; the new session goes on from it");
    *selector = id;
    Ok(None)
}
