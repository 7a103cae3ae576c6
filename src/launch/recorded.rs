//! A journaled session rebuilt to go on in a new process: `resume`, `fork`, `compact`, `rerun`
//! and `worker`.
//!
//! They rebuild the model provider from the session header's `run_config` (provider, cassette,
//! model, cwd, the request offset of a fork), so nothing but the journal is needed to go on.
//! Keys still come from the environment only, never from the journal.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use reloop_driver::PermissionSpec;
use reloop_driver::SessionJournal;
use reloop_driver::{RunConfig, Session};
use reloop_hooks::Settings;
use reloop_inspect::OffsetProvider;
use reloop_journal::SessionHeader;
use reloop_model::{AnthropicConfig, AnthropicProvider, ModelProvider, OpenAiConfig, OpenAiProvider};
use reloop_tools::ToolRegistry;
use serde_json::Value;

use crate::error::CliError;
use crate::options::McpArgs;

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
        // A parent that ended is not resumed, unless it owes a background agent's end.
        let done = reloop_driver::rebuild(&**journal, parent, &parent_header.core_config)?.state.is_done();
        if done && reloop_driver::untold_background(&**journal, parent)?.is_empty() {
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

/// Starts again the MCP servers of a journaled session that had some (`mcp`, and the `.mcp.json`
/// of its working directory unless `--strict-mcp-config`): their live tools take the places of
/// the recorded ones of the same name. Their configuration is not journaled, so it comes from
/// the flags; `settings` is the settings file given now, else the session's.
pub(crate) async fn restart_mcp(session: &mut Session, mcp: &McpArgs, settings: Option<&Path>) -> Result<(), CliError> {
    if session.run.mcp_servers.is_empty() {
        return Ok(());
    }
    let cwd = session.run.cwd.clone();
    let settings = match settings.map(Path::to_path_buf).or_else(|| session.run.settings.clone()) {
        Some(path) => Settings::from_file(&path).map_err(|e| CliError::Usage(e.to_string()))?.other,
        None => serde_json::Map::new(),
    };
    let servers = crate::mcp::start(&mcp.mcp_config, mcp.strict_mcp_config, &cwd, &settings).await?;
    crate::mcp::register(&servers, &mut session.tools);
    Ok(())
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

fn env_nonempty(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}
