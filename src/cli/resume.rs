//! `reloop resume SESSION`: a session whose process stopped (a crash, a kill) goes on: whatever
//! was in flight is asked again. The provider is rebuilt from the session's header, so nothing
//! but the journal (and keys from the environment) is needed.

use reloop_driver::RunEvent;

use super::{current_dir, CliError};
use crate::error::Exit;
use crate::launch::drive::drive;
use crate::launch::recorded::{restart_mcp, session_for, unfinished_root};
use crate::options::{
    reword, ConnectionArgs, CrashArg, JournalArg, McpArgs, OutputFormat, OutputFormatArg, SessionArg, SettingsArg,
};
use crate::term::outln;
use crate::term::output::Printer;

#[derive(clap::Args, Debug)]
#[command(
    mut_args(reword(&[
        ("settings", "The settings file (hooks) the session ran with; hooks are not journaled"),
        ("mcp_config", "The MCP servers to start again for a session that had some (as `reloop run` reads it); the session's \
         `.mcp.json` is read too unless --strict-mcp-config. Their configuration is not journaled; without them \
         the recorded tools answer that their server is not connected"),
        ("strict_mcp_config", "Use only the --mcp-config servers"),
    ]))
)]
pub struct ResumeArgs {
    #[command(flatten)]
    pub session: SessionArg,
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
    #[command(flatten)]
    pub mcp: McpArgs,
}

pub async fn run(args: ResumeArgs) -> Result<Exit, CliError> {
    let mut journal = args.journal.open(&current_dir()?, crate::launch::journal::Open::Existing)?;
    let id = unfinished_root(&journal, &journal.resolve(&args.session.session)?)?;
    let header = journal.header(&id)?;
    // Folded a step at a time: resuming a long session holds its state, not its steps.
    let reloop_driver::Rebuilt { state, steps, .. } = reloop_driver::rebuild(&*journal, &id, &header.core_config)?;
    if steps == 0 {
        return Err(CliError::Usage(format!("session {id} stopped before its first step; there is nothing to resume")));
    }
    // A session that ended still owes what its background agents did, if a crash kept it from
    // telling it (flag 44): it is resumed for that.
    let owes = !reloop_driver::untold_background(&*journal, &id)?.is_empty();
    if let Some(terminal) = state.terminal().filter(|_| !owes) {
        let result = reloop_driver::outputs::result_of(&id, &state, 0);
        match args.output.output_format {
            OutputFormat::Text => outln!("session {id} already finished: {}", terminal.reason().as_str()),
            format => Printer::new(format, false).on_event(&RunEvent::Finished(result)),
        }
        return Ok(Exit::Success);
    }
    // `Session::resume` takes the session's lock itself; it is taken here too (a no-op there)
    // so a session another process writes is refused before any MCP server is started for it.
    journal.lock_session(&id)?;
    let mut session = session_for(
        &header,
        journal,
        args.connection.base_url.as_deref(),
        args.connection.wire.timeouts(),
        args.settings.settings.as_deref(),
    )?
    .with_crash_after_step(args.crash.crash_after_step);
    restart_mcp(&mut session, &args.mcp, args.settings.settings.as_deref()).await?;
    let handle = session.resume(&id)?;
    drive(handle, args.output.output_format).await
}
