//! `reloop fork SESSION --at SEQ`: a new session from a step of another: the same history up to
//! it, then its own way (a new cassette, model or prompt).

use std::path::PathBuf;

use reloop_core::{transition, ContentBlock, Event};
use reloop_journal::StepRecord;

use super::{current_dir, CliError};
use crate::error::Exit;
use crate::launch::drive::drive;
use crate::launch::fork::{fork_header, fork_point, now_ms, write_fork};
use crate::launch::recorded::{provider_for, session_with};
use crate::options::{
    reword, ConnectionArgs, CrashArg, JournalArg, MaxTurnsArg, OutputFormat, OutputFormatArg, SessionArg, SettingsArg,
};
use crate::term::outln;

#[derive(clap::Args, Debug)]
#[command(mut_args(reword(&[
    ("session", "The parent session: an id, a unique id prefix, or `last`"),
    ("base_url", "The provider's base URL, when the parent's was not journaled [env: ANTHROPIC_BASE_URL or OPENAI_BASE_URL]"),
    ("settings", "The settings file (hooks) the fork runs with; hooks are not journaled"),
])))]
pub struct ForkArgs {
    #[command(flatten)]
    pub session: SessionArg,
    /// The parent's last step the fork keeps (see `reloop show SESSION --steps`).
    #[arg(long, value_name = "SEQ")]
    pub at: u64,
    /// A new cassette; its first response answers the fork's first new request.
    #[arg(long, value_name = "FILE")]
    pub script: Option<PathBuf>,
    /// Ask this model from the fork point on.
    #[arg(long)]
    pub model: Option<String>,
    #[command(flatten)]
    pub max_turns: MaxTurnsArg,
    /// A new prompt, for a fork at a step where the parent had stopped.
    #[arg(long)]
    pub prompt: Option<String>,
    #[command(flatten)]
    pub journal: JournalArg,
    #[command(flatten)]
    pub output: OutputFormatArg,
    #[command(flatten)]
    pub connection: ConnectionArgs,
    #[command(flatten)]
    pub settings: SettingsArg,
    #[command(flatten)]
    pub crash: CrashArg,
}

pub async fn run(args: ForkArgs) -> Result<Exit, CliError> {
    let invoked_from = current_dir()?;
    let mut journal = args.journal.open(&invoked_from, crate::launch::journal::Open::Existing)?;
    let parent_id = journal.resolve(&args.session.session)?;
    let parent = journal.header(&parent_id)?;

    let mut core = parent.core_config.clone();
    if let Some(model) = &args.model {
        core = core.with_model(model.clone());
    }
    if args.max_turns.max_turns.is_some() {
        core = core.with_max_turns(args.max_turns.max_turns);
    }
    let prefix = fork_point(&journal, &parent_id, Some(args.at), &core, "fork")?;
    let stopped = prefix.state.is_done() || prefix.state.is_idle();
    match (&args.prompt, stopped) {
        (None, true) => {
            return Err(CliError::Usage(format!(
                "session {parent_id} had stopped at step {} ({}); give the fork a --prompt TEXT to go on with",
                args.at,
                prefix.state.phase()
            )))
        }
        (Some(_), false) => {
            return Err(CliError::Usage(format!(
                "session {parent_id} was still working at step {} ({}); a --prompt fits only where it had stopped",
                args.at,
                prefix.state.phase()
            )))
        }
        _ => {}
    }

    let script = args.script.as_ref().map(|s| invoked_from.join(s));
    let header = fork_header(&parent, args.at, &core, args.model.as_deref(), script, prefix.requests_done)?;
    // The state is folded again as the steps are written: one is held at a time.
    drop(prefix);
    let id = header.id.clone();
    // The provider is checked before anything is written, so a bad cassette leaves no fork.
    let provider = provider_for(&header, args.connection.base_url.as_deref(), args.connection.wire.timeouts())?;
    let state = write_fork(&mut journal, &header, &parent_id, args.at, &core)?;
    if let Some(prompt) = &args.prompt {
        // The new prompt is journaled like any step; the resume below sends its request.
        let (from_phase, turn_before) = (state.phase(), state.context().turn_count());
        let event = Event::user_input(vec![ContentBlock::text(prompt.clone())]);
        let step = transition(state, event.clone());
        let record = StepRecord::of(args.at + 1, now_ms(), event, from_phase, turn_before, &step);
        journal.append(&id, &record)?;
    } else {
        // The resume below rebuilds it from the journal.
        drop(state);
    }
    if args.output.output_format == OutputFormat::Text {
        outln!("forked {parent_id} at step {} as session {id}", args.at);
    }
    let session = session_with(provider, &header, journal, args.settings.settings.as_deref())?
        .with_crash_after_step(args.crash.crash_after_step);
    let handle = session.resume(&id)?;
    drive(handle, args.output.output_format).await
}
