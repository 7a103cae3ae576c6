//! `reloop compact SESSION`: compact a stopped session on demand, as a fork, so the original
//! stays replayable.

use std::path::PathBuf;
use std::process::ExitCode;

use reloop_core::{Event, State};
use reloop_journal::{Journal, SessionHeader, ENGINE_VERSION};
use serde_json::json;

use super::session::{drive, provider_for, session_with};
use super::{current_dir, CliError, JournalArg, OutputFormat};

#[derive(clap::Args, Debug)]
pub struct CompactArgs {
    /// The session to compact: an id, a unique id prefix, or `last`.
    pub session: String,
    /// A cassette whose first response is the summary (for scripted sessions).
    #[arg(long, value_name = "FILE")]
    pub script: Option<PathBuf>,
    #[command(flatten)]
    pub journal: JournalArg,
    #[arg(long, value_enum, default_value = "text")]
    pub output_format: OutputFormat,
    #[arg(long)]
    pub base_url: Option<String>,
}

pub async fn compact(args: CompactArgs) -> Result<ExitCode, CliError> {
    let invoked_from = current_dir()?;
    let mut journal = Journal::open_existing(&args.journal.path(&invoked_from))?;
    let parent_id = journal.resolve(&args.session)?;
    let parent = journal.header(&parent_id)?;
    let steps = journal.steps(&parent_id)?;
    let at = steps.last().map_or(0, |s| s.seq);
    let core = parent.core_config.clone();
    let prefix = reloop_driver::fork_prefix(&steps, at, &core)
        .map_err(|e| CliError::Usage(format!("cannot compact {parent_id}: {e}")))?;
    if !matches!(prefix.state, State::Done(..)) {
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
    let mut run = parent.run_config.clone();
    let Some(fields) = run.as_object_mut() else {
        return Err(CliError::Usage(format!("session {parent_id} has no run config")));
    };
    if let Some(script) = &args.script {
        fields.insert("provider".into(), json!("scripted"));
        fields.insert("script".into(), json!(invoked_from.join(script)));
        fields.insert("request_offset".into(), json!(prefix.requests_done));
    }
    let id = reloop_driver::new_session_id();
    let header = SessionHeader {
        id: id.clone(),
        created_at_ms: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0),
        engine_version: ENGINE_VERSION.to_string(),
        core_config: core,
        run_config: run,
        parent: Some((parent_id.clone(), at)),
    };
    let provider = provider_for(&header, args.base_url.as_deref())?;
    journal.create_session_with_steps(&header, &prefix.steps)?;
    if args.output_format == OutputFormat::Text {
        println!("compacting {parent_id} as session {id} (the original is unchanged)");
    }
    let session = session_with(provider, &header, journal, None)?;
    let handle = session.resume_with(&id, Event::CompactRequested)?;
    drive(handle, args.output_format).await
}
