//! `reloop rerun SESSION`: a recorded session as a regression test of today's workspace. The
//! model's answers come from the recording, request by request; tools, hooks and permissions run
//! live (`--cwd`). The first request that differs from the recorded one stops the rerun with a
//! typed divergence and the difference (exit 3), unless `--then-live` lets the recorded session's
//! model answer from there. The new session names the recording as its parent, so `diff` and
//! `view` show where it parted.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::StreamExt;
use reloop_driver::RunEvent;
use reloop_inspect::rerun::{RecordedProvider, RecordedTool, Recording, RerunDivergence};
use reloop_inspect::rerun_paths::PathMap;
use reloop_journal::{SessionHeader, ENGINE_VERSION};

use super::{current_dir, CliError, JournalArg};
use crate::error::Exit;
use crate::launch::journal::Open;
use crate::options::{reword, ConnectionArgs, OutputFormatArg, SessionArg, SettingsArg};
use crate::term::outln;
use crate::term::output::Printer;

#[derive(clap::Args, Debug)]
#[command(
    mut_args(reword(&[
        ("session", "The recorded session: an id, a unique id prefix, `last`, or its file (a dump, a transcript, a .db journal)"),
        ("settings", "The settings file (hooks) to run with [default: the recorded session's]"),
        ("base_url", "The provider's base URL for `--then-live`, when the session's was not journaled"),
        ("output_format", "How the rerun is shown: streamed text, one JSON result, or stream-json lines"),
    ]))
)]
pub struct RerunArgs {
    #[command(flatten)]
    pub session: SessionArg,
    /// Today's workspace, where the tools run [default: the git checkout you are in when the
    /// recorded directory is outside it, else the recorded working directory when it exists
    /// here, else the current directory]. The recorded one's paths are mapped to it.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Another recorded root to map, as the working directory is: paths under OLD in the
    /// recording (tool calls, tool results, settings) are read as under NEW (repeatable).
    #[arg(long, value_name = "OLD=NEW")]
    pub map_path: Vec<String>,
    /// Tools whose calls get their recorded results instead of running again, so their side
    /// effects are not repeated (comma separated, e.g. `Bash,WebFetch`).
    #[arg(long, value_name = "TOOLS", value_delimiter = ',')]
    pub recorded_tools: Vec<String>,
    /// After a divergence, go on with the recorded session's model, live (its provider; keys
    /// from the environment, as for `reloop resume`).
    #[arg(long)]
    pub then_live: bool,
    #[command(flatten)]
    pub settings: SettingsArg,
    #[command(flatten)]
    pub connection: ConnectionArgs,
    #[command(flatten)]
    pub journal: JournalArg,
    #[command(flatten)]
    pub output: OutputFormatArg,
}

pub async fn run(args: RerunArgs) -> Result<Exit, CliError> {
    let signals = crate::launch::signals::Signals::install()?;
    let invoked_from = current_dir()?;
    // A recording named by its file (a dump kept in the repository) is read from a scratch
    // journal; the rerun itself goes to the working journal, made when there is none (a CI job).
    let mut selector = args.session.session.clone();
    let scratch = super::named_file::load(&mut [&mut selector], &args.journal.path(&invoked_from))?;
    let how = if scratch.is_some() { Open::Create } else { Open::Existing };
    let journal = args.journal.open(&invoked_from, how)?;
    let source = scratch.as_ref().map(|s| reloop_journal::Journal::open_for_reading(&s.journal())).transpose()?;
    let (recorded_id, recorded, mut recording) = match &source {
        Some(source) => {
            let header = source.header(&selector)?;
            let recording = Recording::read(source, &header, &selector)?;
            (selector.clone(), header, recording)
        }
        None => {
            let id = journal.resolve(&selector)?;
            let header = journal.header(&id)?;
            let recording = Recording::read(&*journal, &header, &id)?;
            (id, header, recording)
        }
    };
    drop(source);
    if recording.prompts.is_empty() {
        return Err(CliError::Usage(format!("session {recorded_id} holds no prompt to rerun")));
    }
    let today = workspace(&recorded, args.cwd.as_ref().map(|d| invoked_from.join(d)), &invoked_from)?;
    let map = path_map(&recorded, &today, &args.map_path, &invoked_from)?;
    recording.map_paths(&map);
    let recording = Arc::new(recording);
    let header = rerun_header(&recorded, &today, &map)?;
    let live = if args.then_live {
        Some(crate::launch::recorded::provider_for(
            &recorded,
            args.connection.base_url.as_deref(),
            args.connection.wire.timeouts(),
        )?)
    } else {
        None
    };
    let provider = RecordedProvider::new(recording.clone(), live);
    let (divergence, matched) = (provider.divergence.clone(), provider.matched.clone());
    let mut session =
        crate::launch::recorded::session_with(Arc::new(provider), &header, journal, args.settings.settings.as_deref())?;
    for name in &args.recorded_tools {
        let Some(tool) = session.tools.get(name).cloned() else {
            return Err(CliError::Usage(format!("--recorded-tools {name}: the session offers no such tool")));
        };
        session.tools.register(Arc::new(RecordedTool::new(tool, recording.tool_results(name))));
    }
    let more_queries = recording.prompts.len() > 1;
    let session = session.with_parent(header.parent.clone()).with_keep_alive(more_queries);
    let local = |n: usize| recording.local_lines.get(n).cloned().unwrap_or_default();
    let mut handle = session.start_after(Vec::new(), recording.prompts[0].clone(), None, local(0))?;
    let rerun_id = handle.session_id().to_string();
    let control = handle.abort_handle();
    let on_signal = handle.abort_handle();
    let watch = signals.watch(Arc::new(move || {
        on_signal.abort();
        on_signal.close();
    }));
    let mut printer = Printer::new(args.output.output_format, false);
    let (mut next, mut last) = (1, None);
    // The compactions typed before the next prompt, asked for as each query (or compaction) ends.
    let mut compactions = recording.compactions_before(1);
    while let Some(event) = handle.next().await {
        let event = as_rerun(event, &divergence, args.then_live);
        printer.on_event(&event);
        if let RunEvent::Finished(result) = event {
            last = Some(result);
            let parted = divergence.lock().unwrap_or_else(|p| p.into_inner()).is_some();
            let go_on = !parted || args.then_live;
            if go_on && compactions > 0 {
                compactions -= 1;
                control.compact();
                continue;
            }
            match recording.prompts.get(next).filter(|_| go_on) {
                Some(prompt) => {
                    control.send_after_local(prompt.clone(), None, local(next));
                    next += 1;
                    compactions = recording.compactions_before(next);
                }
                None => control.close(),
            }
        }
    }
    handle.finish().await?;
    if watch.exit_code().is_some() {
        crate::launch::signals::kill_child_groups();
    }
    let matched = matched.load(std::sync::atomic::Ordering::Relaxed);
    let divergence = divergence.lock().unwrap_or_else(|p| p.into_inner()).clone();
    if let Some(code) = watch.exit_code() {
        return Ok(code);
    }
    match divergence {
        Some(d) => {
            outln!(
                "rerun of {recorded_id} as session {rerun_id}: {}: request {} differs from the recording — {}",
                d.code,
                d.request,
                d.summary
            );
            for line in &d.diff {
                outln!("  {line}");
            }
            if args.then_live {
                outln!("  the recorded session's model answered from there (--then-live)");
            }
            Ok(Exit::Diverged)
        }
        None => {
            outln!("rerun of {recorded_id} as session {rerun_id}: {matched} requests as recorded, identical");
            Ok(if last.is_some_and(|r| r.is_error) { Exit::Failed } else { Exit::Success })
        }
    }
}

/// A run stopped at a divergence ended as a failed model request; shown as what it is (the
/// rerun parted from the recording), never as an API error.
fn as_rerun(event: RunEvent, divergence: &std::sync::Mutex<Option<RerunDivergence>>, then_live: bool) -> RunEvent {
    let RunEvent::Finished(mut result) = event else { return event };
    let parted = divergence.lock().unwrap_or_else(|p| p.into_inner()).clone();
    if let (Some(d), false) = (parted, then_live) {
        let said = format!(
            "the rerun stopped: {}: request {} differs from the recording (no recorded answer for it)",
            d.code, d.request
        );
        result.terminal.error = Some(said.clone());
        result.result = said;
    }
    RunEvent::Finished(result)
}

/// The recorded session's working directory, as its run config holds it.
fn recorded_cwd(recorded: &SessionHeader) -> Option<PathBuf> {
    recorded.run_config.get("cwd").and_then(|c| c.as_str()).filter(|c| !c.is_empty()).map(PathBuf::from)
}

/// Where the rerun's tools run: `--cwd`; else, run from inside a git checkout other than the
/// recorded directory's (a second clone on the same machine), that checkout: the recorded
/// directory's place in its own checkout, found again in this one, or this one's top level;
/// else the recorded working directory when this machine has it (a rerun where it was
/// recorded); else the current directory (a clone elsewhere, a CI job's checkout).
fn workspace(recorded: &SessionHeader, given: Option<PathBuf>, invoked_from: &Path) -> Result<PathBuf, CliError> {
    let usable = |dir: &Path| {
        std::fs::canonicalize(dir)
            .map_err(|e| CliError::Usage(format!("the working directory {} cannot be used: {e}", dir.display())))
    };
    if let Some(dir) = given {
        return usable(&dir);
    }
    let here = usable(invoked_from)?;
    let Some(there) = recorded_cwd(recorded).and_then(|d| std::fs::canonicalize(d).ok()).filter(|d| d.is_dir()) else {
        return Ok(here);
    };
    match checkout_of(&here) {
        Some(checkout) if !there.starts_with(&checkout) => {
            let inside = checkout_of(&there)
                .and_then(|top| there.strip_prefix(top).ok().map(Path::to_path_buf))
                .filter(|sub| !sub.as_os_str().is_empty());
            Ok(inside.map(|sub| checkout.join(sub)).filter(|d| d.is_dir()).unwrap_or(checkout))
        }
        _ => Ok(there),
    }
}

/// The top level of the git checkout `dir` is in (the nearest directory holding a `.git`
/// directory or file), if any.
fn checkout_of(dir: &Path) -> Option<PathBuf> {
    dir.ancestors().find(|d| d.join(".git").symlink_metadata().is_ok()).map(Path::to_path_buf)
}

/// The recorded roots and today's: the recorded working directory to `today`, and each
/// `--map-path OLD=NEW` (NEW relative to the current directory).
fn path_map(
    recorded: &SessionHeader,
    today: &Path,
    given: &[String],
    invoked_from: &Path,
) -> Result<PathMap, CliError> {
    let text = |p: &Path| p.to_string_lossy().into_owned();
    let mut pairs: Vec<(String, String)> = Vec::new();
    for pair in given {
        let Some((old, new)) = pair.split_once('=').filter(|(old, new)| !old.is_empty() && !new.is_empty()) else {
            return Err(CliError::Usage(format!("--map-path {pair}: expected OLD=NEW, two paths")));
        };
        pairs.push((old.to_string(), text(&invoked_from.join(new))));
    }
    pairs.extend(recorded_cwd(recorded).map(|cwd| (text(&cwd), text(today))));
    Ok(PathMap::new(pairs))
}

/// The new session's header: the recording's rules and run settings (its paths mapped to
/// today's), its own id, the recording as parent, today's workspace, and no context gathered
/// anew (the recorded prompts carry it).
fn rerun_header(recorded: &SessionHeader, today: &Path, map: &PathMap) -> Result<SessionHeader, CliError> {
    let mut run = recorded.run_config.clone();
    map.json(&mut run);
    let Some(fields) = run.as_object_mut() else {
        return Err(CliError::Usage(format!("session {} has no run config to rerun", recorded.id)));
    };
    fields.insert("cwd".into(), serde_json::json!(today));
    fields.insert("gather_context".into(), serde_json::json!(false));
    fields.insert("provider".into(), serde_json::json!("rerun"));
    Ok(SessionHeader {
        id: reloop_driver::new_session_id(),
        created_at_ms: 0,
        engine_version: ENGINE_VERSION.to_string(),
        core_config: recorded.core_config.clone(),
        run_config: run,
        parent: Some((recorded.id.clone(), 0)),
    })
}
