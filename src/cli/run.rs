//! `reloop run`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use reloop_core::{Config, ContentBlock};
use reloop_driver::{PermissionSpec, RunConfig, Session};
use reloop_hooks::Settings;
use reloop_model::{AnthropicConfig, AnthropicProvider, ModelProvider, OpenAiConfig, OpenAiProvider};
use reloop_tools::{PermissionError, PermissionMode, ToolRegistry};

use super::options::{reword, ConnectionArgs, CrashArg, MaxTurnsArg, McpArgs, OutputFormatArg, SettingsArg};
use super::scripted::{scripted_file, scripted_text};
use super::{current_dir, CliError, JournalArg};
use crate::demo;
use crate::term::output::Printer;

#[derive(clap::Args, Debug)]
#[command(
    mut_args(reword(&[
        ("base_url", "The provider's base URL [env: ANTHROPIC_BASE_URL or OPENAI_BASE_URL]. A password in it is used, never journaled or shown"),
    ]))
)]
pub struct RunArgs {
    /// The user's prompt.
    pub prompt: Option<String>,
    /// A cassette of scripted model responses (`{"responses": [...]}`); `{{cwd}}` in it is
    /// replaced by the working directory.
    #[arg(long, value_name = "FILE")]
    pub script: Option<PathBuf>,
    /// Run the bundled demo: "检查登录模块" in a fresh workspace, with a bundled cassette.
    #[arg(long, conflicts_with = "script")]
    pub demo: bool,
    /// The session's working directory [default: the current directory].
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    #[command(flatten)]
    pub max_turns: MaxTurnsArg,
    #[command(flatten)]
    pub journal: JournalArg,
    #[command(flatten)]
    pub output: OutputFormatArg,
    /// The model to ask [default: the profile's (claude-opus-5-5 under claude-code-2.1.332), or
    /// claude-sonnet-4-6 under reloop's own rules].
    #[arg(long, env = "ANTHROPIC_MODEL")]
    pub model: Option<String>,
    /// The output-token limit of each response [env: CLAUDE_CODE_MAX_OUTPUT_TOKENS; default: the
    /// profile's for the model (Opus 128000 under claude-code-2.1.332, others 32000)].
    #[arg(long)]
    pub max_output_tokens: Option<u32>,
    /// Replace reloop's system prompt.
    #[arg(long)]
    pub system_prompt: Option<String>,
    /// Add to reloop's system prompt.
    #[arg(long)]
    pub append_system_prompt: Option<String>,
    /// Where the model lives [default: scripted with --script or --demo, else anthropic].
    #[arg(long, value_enum)]
    pub provider: Option<ProviderKind>,
    #[command(flatten)]
    pub connection: ConnectionArgs,
    /// Switch to this model after 3 consecutive overloads or a server error.
    #[arg(long)]
    pub fallback_model: Option<String>,
    /// Retries of one failed request.
    #[arg(long, default_value_t = 10)]
    pub max_retries: u32,
    /// On an output-token cut, first repeat the request with max_tokens 64000.
    #[arg(long)]
    pub escalate_max_tokens: bool,
    /// Keep the model working until it has produced N output tokens (also `+500k` in the prompt).
    #[arg(long, value_name = "N")]
    pub token_budget: Option<u64>,
    /// Ask for extended thinking with this many budget tokens.
    #[arg(long, value_name = "TOKENS")]
    pub thinking: Option<u32>,
    #[command(flatten)]
    pub settings: SettingsArg,
    /// default, acceptEdits, plan, bypassPermissions or dontAsk.
    #[arg(long, default_value = "default")]
    pub permission_mode: String,
    /// Rules that allow calls, e.g. `Bash(git diff:*)` `Edit(./src/**)` (comma or space separated).
    #[arg(long, value_name = "RULES", num_args = 1.., value_delimiter = ',')]
    pub allowed_tools: Vec<String>,
    /// Rules or tool names that deny calls.
    #[arg(long, value_name = "RULES", num_args = 1.., value_delimiter = ',')]
    pub disallowed_tools: Vec<String>,
    /// More folders the tools may use besides the working directory.
    #[arg(long, value_name = "DIR")]
    pub add_dir: Vec<PathBuf>,
    /// Let tool processes (Bash) keep this credential, which reloop removes by default
    /// (ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, OPENAI_API_KEY, secret-looking settings `env` names).
    #[arg(long, value_name = "NAME")]
    pub tool_env_keep: Vec<String>,
    /// Allow bypassPermissions when running as root.
    #[arg(long)]
    pub dangerously_allow_root: bool,
    /// Consecutive stop-hook blocks after which the turn ends anyway.
    #[arg(long, default_value_t = 8)]
    pub stop_hook_block_cap: u32,
    /// `stream-json`: read user messages from stdin, one JSON object a line
    /// (`{"type":"user","message":{"role":"user","content":...}}`); the first is the prompt when
    /// no PROMPT is given, later ones are queued into the running loop.
    #[arg(long, value_enum, default_value = "text")]
    pub input_format: InputFormat,
    /// The model's context window in tokens [default: from data/models.json, else 200000].
    #[arg(long)]
    pub context_window: Option<u64>,
    /// Never compact before a request (reactive compaction on "prompt is too long" stays on).
    #[arg(long)]
    pub no_auto_compact: bool,
    /// End the run once it has cost this many US dollars (prices from data/models.json).
    #[arg(long, value_name = "USD")]
    pub max_budget_usd: Option<f64>,
    #[command(flatten)]
    pub crash: CrashArg,
    #[command(flatten)]
    pub mcp: McpArgs,
    /// Whose loop rules to follow: claude-code-2.1.332, claude-code-2.1.197, or reloop (reloop's
    /// rules before profiles). Recorded in the journal; replay and resume use the recorded one.
    #[arg(long, env = "RELOOP_COMPAT", value_name = "PROFILE", default_value = "claude-code-2.1.332")]
    pub compat: String,
    /// Journal the session with its prompt as queued, print its id and return: a `reloop
    /// worker` on the same shared journal (--journal postgres://...) runs it.
    #[arg(long, conflicts_with_all = ["demo", "input_format"])]
    pub enqueue: bool,
}

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputFormat {
    Text,
    StreamJson,
}

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderKind {
    Scripted,
    Anthropic,
    Openai,
}

pub async fn run(args: RunArgs) -> Result<ExitCode, CliError> {
    // Listening starts first, so a signal during setup is acted on once the run exists.
    let signals = super::signals::Signals::install()?;
    let invoked_from = current_dir()?;
    let kind = args.provider.unwrap_or(if args.script.is_some() || args.demo {
        ProviderKind::Scripted
    } else {
        ProviderKind::Anthropic
    });
    let mut stdin_messages = (args.input_format == InputFormat::StreamJson).then(stdin_user_messages);
    let mut args = args;
    if args.prompt.is_none() {
        if let Some(rx) = stdin_messages.as_mut() {
            args.prompt = rx.recv().await.map(|content| crate::cli::run::text_of(&content));
        }
    }
    let (cwd, prompt) = if args.demo {
        let cwd = demo::workspace().map_err(|e| CliError::Io(format!("cannot create the demo workspace: {e}")))?;
        (cwd, args.prompt.clone().unwrap_or_else(|| demo::PROMPT.to_string()))
    } else {
        let cwd = resolve_cwd(args.cwd.as_ref(), &invoked_from)?;
        let prompt = args
            .prompt
            .clone()
            .ok_or_else(|| CliError::Usage("reloop run needs a PROMPT (or --demo for the bundled example)".into()))?;
        (cwd, prompt)
    };
    // The demo's workspace is temporary; its journal lives where the user ran the command.
    let journal_base = if args.demo { invoked_from.clone() } else { cwd.clone() };
    let settings = match &args.settings.settings {
        Some(path) => Settings::from_file(path).map_err(|e| CliError::Usage(e.to_string()))?,
        None => Settings::empty(),
    };
    let settings_path = args.settings.settings.as_ref().map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()));
    if args.enqueue && args.journal.shared_url().is_none() {
        return Err(CliError::Usage(
            "--enqueue puts the session in a shared journal's queue: --journal postgres://...".into(),
        ));
    }
    let servers = crate::mcp::start(&args.mcp.mcp_config, args.mcp.strict_mcp_config, &cwd, &settings.other).await?;
    let mut tools = ToolRegistry::builtin();
    crate::mcp::register(&servers, &mut tools);
    let (mut session, journal_path) =
        build_session(&args, kind, &cwd, &journal_base, &prompt, settings, settings_path, tools)?;
    session.run = session.run.with_mcp_servers(crate::mcp::records(&servers));
    if args.enqueue {
        let id = session.enqueue(vec![ContentBlock::text(prompt)])?;
        crate::term::outln!("{id}");
        return Ok(ExitCode::SUCCESS);
    }
    let handle = session.start(vec![ContentBlock::text(prompt.clone())])?;
    if let Some(mut rx) = stdin_messages {
        let sender = handle.abort_handle();
        tokio::spawn(async move {
            while let Some(content) = rx.recv().await {
                sender.send(content);
            }
        });
    }

    let mut printer =
        Printer::new(args.output.output_format, args.demo).live().with_mcp_servers(crate::mcp::status(&servers));
    if args.demo {
        printer.banner(&cwd, &prompt);
    }
    let (result, code) = super::session::drive_with(handle, &mut printer, signals).await?;
    if args.demo {
        // Name the journal only when the inspecting commands would not find it by default.
        let named = (args.journal.journal.is_some()).then_some(journal_path.as_path());
        printer.demo_footer(&result.session_id, named);
    }
    Ok(code)
}

/// The session `args` ask for, on `tools`, journaled under `journal_base` unless `--journal`
/// says where; also returns the journal's path. Shared by `reloop run` and the print mode.
#[allow(clippy::too_many_arguments)]
pub(crate) fn build_session(
    args: &RunArgs,
    kind: ProviderKind,
    cwd: &Path,
    journal_base: &Path,
    prompt: &str,
    settings: Settings,
    settings_path: Option<PathBuf>,
    tools: ToolRegistry,
) -> Result<(Session, PathBuf), CliError> {
    let profile = compat(&args.compat)?;
    let rules = profile.profile();
    let model = args.model.clone().unwrap_or_else(|| rules.default_model.unwrap_or(DEFAULT_MODEL).to_string());
    let max_tokens = |model: &str| {
        args.max_output_tokens.or_else(env_max_output_tokens).unwrap_or_else(|| rules.max_tokens_for(model))
    };
    let max_output_tokens = max_tokens(&model);
    // Claude Code's limit follows the model: after a fallback, the fallback model's.
    let fallback_max_output_tokens = args.fallback_model.as_deref().map(max_tokens).filter(|n| *n != max_output_tokens);
    let provider = provider(args, kind, cwd)?;
    let journal_path = args.journal.path(journal_base);
    let journal = args.journal.open(journal_base, super::journal::Open::Create)?;

    let system_prompt = match (&args.system_prompt, &args.append_system_prompt) {
        (Some(s), Some(a)) => Some(format!("{s}\n\n{a}")),
        (Some(s), None) => Some(s.clone()),
        (None, Some(a)) => Some(format!("{}\n\n{a}", reloop_driver::DEFAULT_SYSTEM_PROMPT)),
        (None, None) => None,
    };
    let spec = permissions(args, &settings)?;
    let permissions = spec.context(cwd).map_err(|e| CliError::Usage(e.to_string()))?;
    let run = RunConfig::new(provider.name().to_string(), model.clone(), cwd.to_path_buf())
        .with_script(args.script.as_ref().map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone())))
        .with_thinking(args.thinking)
        .with_max_output_tokens(max_output_tokens)
        .with_system_prompt(system_prompt)
        .with_base_url(args.connection.base_url.as_deref().map(reloop_model::redact_url))
        .with_settings(settings_path)
        .with_permissions(Some(spec));
    let session = Session::new(
        provider,
        tools,
        Some(journal),
        Config::default()
            .with_max_turns(args.max_turns.max_turns)
            .with_model(model.clone())
            .with_fallback_model(args.fallback_model.clone())
            .with_max_output_tokens(max_output_tokens)
            .with_fallback_max_output_tokens(fallback_max_output_tokens)
            .with_escalate_max_tokens(args.escalate_max_tokens)
            .with_max_retries(args.max_retries)
            .with_retry_seed(reloop_driver::new_seed())
            .with_token_budget(args.token_budget.or_else(|| crate::budget::parse_token_budget(prompt)))
            .with_stop_hook_block_cap(args.stop_hook_block_cap)
            .with_context_window(args.context_window.unwrap_or_else(|| crate::models::context_window(&model)))
            .with_auto_compact(!args.no_auto_compact)
            .with_prices(
                std::iter::once(&model)
                    .chain(args.fallback_model.as_ref())
                    .filter_map(|m| crate::models::price_or_warn(m))
                    .collect(),
            )
            .with_max_budget_usd(args.max_budget_usd)
            .with_profile(profile)
            .with_local_model_server(local_server(args, kind)),
        run,
    )
    .with_hooks(settings.hooks.clone())
    .with_agents(super::agents::for_new_session(cwd, kind == ProviderKind::Scripted, permissions.removes("Agent")))
    .with_permissions(Some(permissions))
    .with_crash_after_step(args.crash.crash_after_step);
    Ok((session, journal_path))
}

/// The model when neither the flags nor the profile name one.
pub(crate) const DEFAULT_MODEL: &str = "claude-sonnet-4-6";

/// `CLAUDE_CODE_MAX_OUTPUT_TOKENS`, Claude Code's override of every request's limit.
pub(crate) fn env_max_output_tokens() -> Option<u32> {
    std::env::var("CLAUDE_CODE_MAX_OUTPUT_TOKENS").ok().and_then(|v| v.trim().parse().ok()).filter(|n| *n > 0)
}

/// The profile `--compat` names.
pub(crate) fn compat(name: &str) -> Result<reloop_core::profile::ProfileId, CliError> {
    reloop_core::profile::ProfileId::parse(name).ok_or_else(|| {
        let known: Vec<&str> = reloop_core::profile::ProfileId::ALL.iter().map(|p| p.name()).collect();
        CliError::Usage(format!("--compat {name}: unknown profile; known: {}", known.join(", ")))
    })
}

/// Whether the model server the run talks to is on this machine: a refused connection there
/// fails fast instead of ten backed-off retries.
fn local_server(args: &RunArgs, kind: ProviderKind) -> bool {
    let env = match kind {
        ProviderKind::Scripted => return false,
        ProviderKind::Anthropic => "ANTHROPIC_BASE_URL",
        ProviderKind::Openai => "OPENAI_BASE_URL",
    };
    args.connection.base_url.clone().or_else(|| env_nonempty(env)).is_some_and(|url| reloop_model::is_local_url(&url))
}

/// The model provider the flags ask for. Keys come from the environment and never reach the
/// journal, logs or error messages.
fn provider(args: &RunArgs, kind: ProviderKind, cwd: &Path) -> Result<Arc<dyn ModelProvider>, CliError> {
    let config_error = |e: reloop_model::ConfigError| CliError::Usage(format!("cannot set up the provider: {e}"));
    match kind {
        ProviderKind::Scripted => {
            let provider = if args.demo {
                scripted_text(demo::CASSETTE, cwd).map_err(|e| CliError::Usage(format!("the bundled cassette: {e}")))?
            } else {
                let Some(script) = &args.script else {
                    return Err(CliError::Usage("--provider scripted needs --script FILE (a cassette)".into()));
                };
                scripted_file(script, cwd, "the script")?
            };
            Ok(Arc::new(provider))
        }
        ProviderKind::Anthropic => {
            let key = std::env::var("ANTHROPIC_API_KEY").ok().filter(|k| !k.is_empty()).ok_or_else(|| {
                CliError::Usage(
                    "no model to ask: set ANTHROPIC_API_KEY to use the Anthropic API \
                     (export ANTHROPIC_API_KEY=...), or pass --script FILE to run a cassette, \
                     or --demo for the bundled example"
                        .into(),
                )
            })?;
            let mut config = AnthropicConfig::new(key).with_timeouts(args.connection.wire.timeouts());
            if let Some(base) = args.connection.base_url.clone().or_else(|| env_nonempty("ANTHROPIC_BASE_URL")) {
                config = config.with_base_url(base);
            }
            Ok(Arc::new(AnthropicProvider::new(config).map_err(config_error)?))
        }
        ProviderKind::Openai => {
            let base =
                args.connection.base_url.clone().or_else(|| env_nonempty("OPENAI_BASE_URL")).ok_or_else(|| {
                    CliError::Usage("--provider openai needs --base-url URL (e.g. http://127.0.0.1:11434)".into())
                })?;
            let config =
                OpenAiConfig::new(base, env_nonempty("OPENAI_API_KEY")).with_timeouts(args.connection.wire.timeouts());
            Ok(Arc::new(OpenAiProvider::new(config).map_err(config_error)?))
        }
    }
}

/// The permission mode and rules from the flags and the settings file. Deny wins over allow.
fn permissions(args: &RunArgs, settings: &Settings) -> Result<PermissionSpec, CliError> {
    let mode: PermissionMode =
        args.permission_mode.parse().map_err(|e: PermissionError| CliError::Usage(e.to_string()))?;
    if mode == PermissionMode::BypassPermissions && running_as_root() && !args.dangerously_allow_root {
        return Err(CliError::Usage(
            "--permission-mode bypassPermissions is refused when running as root: every tool could touch \
             anything on this machine. Run as another user, or pass --dangerously-allow-root if you mean it."
                .into(),
        ));
    }
    if let reloop_tools::sandbox::Availability::Unavailable(why) = reloop_tools::sandbox::Sandbox::probe() {
        crate::term::styled_errln(
            crate::term::style::WARN,
            &format!("reloop: no sandbox on this machine ({why}): every Bash command needs approval"),
        );
    }
    let mut allow = settings.permissions.allow.clone();
    allow.extend(args.allowed_tools.iter().flat_map(|r| split_rules(r)));
    let deny = settings.permissions.deny.clone();
    let ask = settings.permissions.ask.clone();
    let disallowed: Vec<String> = args.disallowed_tools.iter().flat_map(|r| split_rules(r)).collect();
    Ok(PermissionSpec::new(mode.as_str())
        .with_rules(allow, deny, ask)
        .with_disallowed(disallowed)
        .with_add_dirs(args.add_dir.clone())
        .with_tool_env(secret_env_names(settings), args.tool_env_keep.clone())
        .with_sandbox_network(sandbox_network(settings)))
}

/// Whether the settings let sandboxed commands use the network: `sandbox.network.allowedDomains`
/// holding `"*"`. reloop cannot yet filter by domain, so a list of domains leaves the network
/// off, with a warning, rather than open it to every host.
fn sandbox_network(settings: &Settings) -> bool {
    let domains = settings
        .other
        .get("sandbox")
        .and_then(|s| s.get("network"))
        .and_then(|n| n.get("allowedDomains"))
        .and_then(serde_json::Value::as_array);
    let Some(domains) = domains else { return false };
    let all = domains.iter().any(|d| d.as_str() == Some("*"));
    if !all && !domains.is_empty() {
        crate::term::styled_errln(
            crate::term::style::WARN,
            "reloop: sandbox.network.allowedDomains lists domains, but reloop can only allow the network whole \
             (\"*\"): sandboxed commands have no network",
        );
    }
    all
}

/// Names in the settings `env` object that look like credentials (`*KEY*`, `*TOKEN*`,
/// `*SECRET*`, `*PASSWORD*`, `*CREDENTIAL*`): tool processes run without them.
fn secret_env_names(settings: &Settings) -> Vec<String> {
    const MARKS: &[&str] = &["KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL"];
    let Some(serde_json::Value::Object(env)) = settings.other.get("env") else { return Vec::new() };
    env.keys().filter(|name| MARKS.iter().any(|mark| name.to_ascii_uppercase().contains(mark))).cloned().collect()
}

/// Rules may be given space separated in one argument (`"Bash(git diff:*) Edit"`); spaces
/// inside parentheses belong to the rule.
fn split_rules(text: &str) -> Vec<String> {
    let mut rules = Vec::new();
    let (mut current, mut depth) = (String::new(), 0usize);
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            c if c.is_whitespace() && depth == 0 => {
                if !current.is_empty() {
                    rules.push(std::mem::take(&mut current));
                }
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    if !current.is_empty() {
        rules.push(current);
    }
    rules
}

pub(crate) fn running_as_root() -> bool {
    std::fs::metadata("/proc/self").map(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0).unwrap_or(false)
}

fn env_nonempty(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

fn resolve_cwd(given: Option<&PathBuf>, invoked_from: &std::path::Path) -> Result<PathBuf, CliError> {
    let dir = given.map_or_else(|| invoked_from.to_path_buf(), |d| invoked_from.join(d));
    std::fs::canonicalize(&dir)
        .map_err(|e| CliError::Usage(format!("the working directory {} cannot be used: {e}", dir.display())))
}

/// User messages read from stdin, one stream-json object a line, in order. A line that is not a
/// user message is reported on stderr and skipped; nothing else is lost.
fn stdin_user_messages() -> tokio::sync::mpsc::UnboundedReceiver<Vec<ContentBlock>> {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for (n, line) in std::io::stdin().lock().lines().enumerate() {
            let Ok(line) = line else { break };
            if line.trim().is_empty() {
                continue;
            }
            match parse_user_line(&line) {
                Ok(content) => {
                    if tx.send(content).is_err() {
                        break;
                    }
                }
                Err(e) => crate::term::errln!("reloop: stdin line {}: {e}; skipped", n + 1),
            }
        }
    });
    rx
}

fn parse_user_line(line: &str) -> Result<Vec<ContentBlock>, String> {
    let value: serde_json::Value = serde_json::from_str(line).map_err(|e| format!("not JSON ({e})"))?;
    if value.get("type").and_then(|t| t.as_str()) != Some("user") {
        return Err("expected {\"type\":\"user\",\"message\":{...}}".into());
    }
    let message: reloop_core::Message = serde_json::from_value(value.get("message").cloned().unwrap_or_default())
        .map_err(|e| format!("bad message ({e})"))?;
    Ok(message.content)
}

/// The text of a message's blocks, for a prompt given on stdin.
pub(crate) fn text_of(content: &[ContentBlock]) -> String {
    content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}
