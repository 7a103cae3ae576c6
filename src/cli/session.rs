//! What `resume`, `fork`, `compact`, `rerun` and `worker` share: a journaled session continues
//! in a new process.
//!
//! They rebuild the model provider from the session header's `run_config` (provider, cassette,
//! model, cwd, the request offset of a fork), so nothing but the journal is needed to go on.
//! Keys still come from the environment only, never from the journal.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use futures::StreamExt;
use reloop_core::State;
use reloop_driver::PermissionSpec;
use reloop_driver::SessionJournal;
use reloop_driver::{OffsetProvider, RunConfig, RunEvent, RunHandle, RunResult, Session};
use reloop_hooks::Settings;
use reloop_journal::{SessionHeader, ENGINE_VERSION};
use reloop_model::{AnthropicConfig, AnthropicProvider, ModelProvider, OpenAiConfig, OpenAiProvider};
use reloop_tools::ToolRegistry;
use serde_json::{json, Value};

use super::{CliError, OutputFormat};
use crate::term::output::Printer;

/// Where a fork of `parent_id` at `at` (its last step for `None`) starts, read from the journal
/// a step at a time. A fork point outside the session is bad input; a journal that cannot be
/// read is the journal's error. `what` names the command in the message.
pub(crate) fn fork_point(
    journal: &SessionJournal,
    parent_id: &str,
    at: Option<u64>,
    core: &reloop_core::Config,
    what: &str,
) -> Result<reloop_driver::ForkPoint, CliError> {
    reloop_driver::fork_point_of(&**journal, parent_id, at, core).map_err(|e| match e {
        reloop_driver::ForkError::Journal(e) => CliError::from(e),
        e => CliError::Usage(format!("cannot {what} {parent_id}: {e}")),
    })
}

/// Journals the fork `header` of `parent_id` with its first steps, the parent's up to `at`
/// recomputed under `core`: they are read through a second connection while this one writes
/// them, a step at a time, in one transaction, so a fork of any length holds none of them.
/// Returns the state they lead to.
pub(crate) fn write_fork(
    journal: &mut SessionJournal,
    header: &SessionHeader,
    parent_id: &str,
    at: u64,
    core: &reloop_core::Config,
) -> Result<State, CliError> {
    let parent = journal.open_again()?;
    let mut state = None;
    journal.create_session_from(header, reloop_journal::Writer::Take, &mut |sink| {
        state = Some(reloop_driver::fork_steps(&*parent, parent_id, at, core, sink)?);
        Ok(())
    })?;
    state.ok_or_else(|| CliError::Usage(format!("the fork of {parent_id} wrote no step")))
}

/// The session to resume for `id`: a subagent's unfinished parent (and its parent, up the tree)
/// goes on instead, and resumes the child itself, so the whole tree completes.
pub(crate) fn unfinished_root(journal: &SessionJournal, id: &str) -> Result<String, CliError> {
    let mut id = id.to_string();
    for _ in 0..64 {
        let header = journal.header(&id)?;
        let Some(parent) = header.run_config.get("agent").and_then(|a| a.get("parent")).and_then(Value::as_str) else {
            break;
        };
        let parent_header = journal.header(parent)?;
        if reloop_driver::rebuild(&**journal, parent, &parent_header.core_config)?.state.is_done() {
            break;
        }
        id = parent.to_string();
    }
    Ok(id)
}

pub(crate) fn session_for(
    header: &SessionHeader,
    journal: SessionJournal,
    base_url: Option<&str>,
    timeouts: reloop_model::Timeouts,
    settings: Option<&Path>,
) -> Result<Session, CliError> {
    let provider = provider_for(header, base_url, timeouts)?;
    session_with(provider, header, journal, settings)
}

/// The header of a new session branching from `parent` after step `at`: the parent's run
/// config, with a new model or a new cassette (answering from the fork's first new request).
pub(crate) fn fork_header(
    parent: &SessionHeader,
    at: u64,
    core: &reloop_core::Config,
    model: Option<&str>,
    script: Option<PathBuf>,
    requests_done: u32,
) -> Result<SessionHeader, CliError> {
    let mut run = parent.run_config.clone();
    let Some(fields) = run.as_object_mut() else {
        return Err(CliError::Usage(format!("session {} has no run config to fork from", parent.id)));
    };
    fields.entry("max_output_tokens").or_insert(json!(core.max_output_tokens));
    fields.entry("model").or_insert(json!(core.model));
    if let Some(model) = model {
        fields.insert("model".into(), json!(model));
    }
    // A fork of a subagent is a session of its own: it answers no call of the parent.
    fields.remove("agent");
    if let Some(script) = script {
        fields.insert("provider".into(), json!("scripted"));
        fields.insert("script".into(), json!(script));
        fields.insert("request_offset".into(), json!(requests_done));
    }
    Ok(SessionHeader {
        id: reloop_driver::new_session_id(),
        created_at_ms: now_ms(),
        engine_version: ENGINE_VERSION.to_string(),
        core_config: core.clone(),
        run_config: run,
        parent: Some((parent.id.clone(), at)),
    })
}

pub(crate) fn session_with(
    provider: Arc<dyn ModelProvider>,
    header: &SessionHeader,
    journal: SessionJournal,
    settings: Option<&Path>,
) -> Result<Session, CliError> {
    let run: RunConfig = serde_json::from_value(header.run_config.clone())
        .map_err(|e| CliError::Usage(format!("session {}: its run config cannot be read: {e}", header.id)))?;
    // The session is held to the permissions it ran with; a session recorded without them
    // (imported, or older) gets headless default mode, never "allow everything".
    let spec = run.permissions.clone().unwrap_or_else(|| PermissionSpec::new("default"));
    let permissions = spec.context(&run.cwd).map_err(|e| CliError::Usage(format!("session {}: {e}", header.id)))?;
    let settings_path = settings.map(Path::to_path_buf).or_else(|| run.settings.clone());
    let mut tools = ToolRegistry::builtin();
    // MCP tools are offered as recorded; their servers are not started again.
    crate::mcp::register_recorded(&run.mcp_servers, &mut tools);
    let mut session = Session::new(provider, tools, Some(journal), header.core_config.clone(), run)
        .with_permissions(Some(permissions))
        .with_agents(super::agents::for_journaled(&header.run_config));
    if let Some(path) = settings_path {
        let settings = Settings::from_file(&path).map_err(|e| CliError::Usage(e.to_string()))?;
        session = session.with_hooks(settings.hooks);
    }
    Ok(session)
}

/// The provider a session was run with, from its header. A fork's `request_offset` makes its
/// cassette answer from the fork point.
pub(crate) fn provider_for(
    header: &SessionHeader,
    base_url: Option<&str>,
    timeouts: reloop_model::Timeouts,
) -> Result<Arc<dyn ModelProvider>, CliError> {
    let run = &header.run_config;
    let text = |key: &str| run.get(key).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string);
    let cwd = PathBuf::from(text("cwd").unwrap_or_default());
    let config_error = |e: reloop_model::ConfigError| CliError::Usage(format!("cannot set up the provider: {e}"));
    let base = |env: &str| -> Result<Option<String>, CliError> {
        let given = base_url.map(str::to_string).or_else(|| env_nonempty(env));
        match text("base_url") {
            // The journal keeps no credentials: without them this URL would not authenticate.
            Some(journaled) if given.is_none() && reloop_model::is_redacted_url(&journaled) => Err(CliError::Usage(
                format!("the session's base URL ({journaled}) held credentials, which are never journaled: pass --base-url again"),
            )),
            journaled => {
                let usable = journaled.filter(|url| !reloop_model::is_redacted_url(url));
                Ok(base_url.map(str::to_string).or(usable).or(given))
            }
        }
    };
    let inner: Arc<dyn ModelProvider> = match text("provider").as_deref() {
        Some("scripted") => {
            let provider = match text("script") {
                Some(path) => super::scripted::scripted_file(Path::new(&path), &cwd, "the session's script")?,
                None => super::scripted::scripted_text(crate::demo::CASSETTE, &cwd)
                    .map_err(|e| CliError::Usage(format!("the bundled cassette: {e}")))?,
            };
            Arc::new(provider)
        }
        Some("anthropic") => {
            let key = env_nonempty("ANTHROPIC_API_KEY").ok_or_else(|| {
                CliError::Usage("the session asks the Anthropic API: set ANTHROPIC_API_KEY to go on".into())
            })?;
            let mut config = AnthropicConfig::new(key).with_timeouts(timeouts);
            if let Some(base) = base("ANTHROPIC_BASE_URL")? {
                config = config.with_base_url(base);
            }
            Arc::new(AnthropicProvider::new(config).map_err(config_error)?)
        }
        Some("openai") => {
            let base = base("OPENAI_BASE_URL")?.ok_or_else(|| {
                CliError::Usage("the session asks an OpenAI-compatible server: pass --base-url".into())
            })?;
            Arc::new(
                OpenAiProvider::new(OpenAiConfig::new(base, env_nonempty("OPENAI_API_KEY")).with_timeouts(timeouts))
                    .map_err(config_error)?,
            )
        }
        Some("import") => {
            return Err(CliError::Usage(format!(
                "session {} was imported from a transcript and has no model to go on with; \
                 fork it with --script FILE instead",
                header.id
            )))
        }
        other => {
            return Err(CliError::Usage(format!(
                "session {}: unknown provider {:?} in its header",
                header.id,
                other.unwrap_or("")
            )))
        }
    };
    let offset = run.get("request_offset").and_then(Value::as_u64).unwrap_or(0) as u32;
    Ok(if offset > 0 { Arc::new(OffsetProvider::new(inner, offset)) } else { inner })
}

/// Prints the run as it goes and returns its exit code; SIGINT, SIGTERM and SIGHUP abort it.
pub(crate) async fn drive(handle: RunHandle, format: OutputFormat) -> Result<ExitCode, CliError> {
    let signals = super::signals::Signals::install()?;
    let (_, code) = drive_with(handle, &mut Printer::new(format, false).live(), signals).await?;
    Ok(code)
}

/// What shows a live run's events: reloop's own [`Printer`], or the print mode's Claude Code
/// lines.
pub(crate) trait ShowEvents {
    fn on_event(&mut self, event: &RunEvent);
}

impl ShowEvents for Printer {
    fn on_event(&mut self, event: &RunEvent) {
        Printer::on_event(self, event)
    }
}

/// Runs `handle` to its end, showing its events. A signal aborts the run, and so does a stdout
/// nobody reads any more (as SIGPIPE would end a program that cannot write); see
/// [`live_exit_code`].
pub(crate) async fn drive_with(
    mut handle: RunHandle,
    printer: &mut impl ShowEvents,
    signals: super::signals::Signals,
) -> Result<(RunResult, ExitCode), CliError> {
    let abort = handle.abort_handle();
    let on_signal = handle.abort_handle();
    let watch = signals.watch(Arc::new(move || on_signal.abort()));
    let mut result: Option<RunResult> = None;
    let mut reader_gone = false;
    while let Some(event) = handle.next().await {
        printer.on_event(&event);
        if let RunEvent::Finished(r) = event {
            result = Some(r);
        }
        if !reader_gone && crate::term::stdout_closed() {
            reader_gone = true;
            super::signals::mark_ending();
            abort.abort();
        }
    }
    handle.finish().await?;
    let result = result.ok_or_else(|| CliError::Io("the run ended without a result".into()))?;
    let code = live_exit_code(&watch, reader_gone, result.is_error);
    Ok((result, code))
}

/// How a live run ends: 128 + the number of the signal that stopped it, 141 when its stdout was
/// closed, else 1 for a run that ended in error and 0 otherwise. After a signal or a closed
/// stdout, whatever the tools left alive is killed.
pub(crate) fn live_exit_code(watch: &super::signals::Watch, reader_gone: bool, is_error: bool) -> ExitCode {
    match (watch.exit_code(), reader_gone) {
        (Some(code), _) => {
            // The tools were told to stop; anything of theirs still alive goes now.
            super::signals::kill_child_groups();
            code
        }
        (None, true) => {
            super::signals::kill_child_groups();
            ExitCode::from(128 + libc::SIGPIPE as u8)
        }
        (None, false) if is_error => ExitCode::from(1),
        (None, false) => ExitCode::SUCCESS,
    }
}

fn env_nonempty(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}
