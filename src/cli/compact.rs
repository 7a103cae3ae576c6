//! `reloop compact SESSION`: compact a stopped session on demand, as a fork, so the original
//! stays replayable.

use std::path::PathBuf;

use reloop_core::Event;

use super::{current_dir, CliError, JournalArg, OutputFormat};
use crate::error::Exit;
use crate::launch::drive::drive;
use crate::launch::fork::fork_header;
use crate::launch::recorded::{provider_for, session_with};
use crate::options::{reword, ConnectionArgs, OutputFormatArg, SessionArg};

#[derive(clap::Args, Debug)]
#[command(mut_args(reword(&[("session", "The session to compact: an id, a unique id prefix, or `last`")])))]
pub struct CompactArgs {
    #[command(flatten)]
    pub session: SessionArg,
    /// A cassette whose first response is the summary (for scripted sessions).
    #[arg(long, value_name = "FILE")]
    pub script: Option<PathBuf>,
    #[command(flatten)]
    pub journal: JournalArg,
    #[command(flatten)]
    pub output: OutputFormatArg,
    #[command(flatten)]
    pub connection: ConnectionArgs,
}

pub async fn run(args: CompactArgs) -> Result<Exit, CliError> {
    let invoked_from = current_dir()?;
    let mut journal = args.journal.open(&invoked_from, crate::launch::journal::Open::Existing)?;
    let parent_id = journal.resolve(&args.session.session)?;
    let parent = journal.header(&parent_id)?;
    let core = parent.core_config.clone();
    let prefix = crate::launch::fork::fork_point(&journal, &parent_id, None, &core, "compact")?;
    let at = prefix.at;
    if !prefix.state.is_done() {
        return Err(CliError::Usage(format!(
            "session {parent_id} is still working ({}); resume it first, then compact it",
            prefix.state.phase()
        )));
    }
    if reloop_core::compact::summarizable(prefix.state.messages()).is_none() {
        return Err(CliError::Usage(format!(
            "session {parent_id} has nothing to compact: it needs at least one exchange before the latest"
        )));
    }
    let script = args.script.as_ref().map(|s| invoked_from.join(s));
    let header = fork_header(&parent, at, &core, None, script, prefix.requests_done)?;
    // The state is folded again as the steps are written: one is held at a time.
    drop(prefix);
    let id = header.id.clone();
    let provider = provider_for(&header, args.connection.base_url.as_deref(), args.connection.wire.timeouts())?;
    crate::launch::fork::write_fork(&mut journal, &header, &parent_id, at, &core)?;
    if args.output.output_format == OutputFormat::Text {
        crate::term::outln!("compacting {parent_id} as session {id} (the original is unchanged)");
    }
    let session = session_with(provider, &header, journal, None)?;
    let handle = session.resume_with(&id, Event::CompactRequested)?;
    drive(handle, args.output.output_format).await
}
