//! A new session, launched from settings every front end reads its flags into: `reloop run`'s
//! and the print mode's ([`NewSession`], as ripgrep's `HiArgs` is built from its `LowArgs`).

use std::path::PathBuf;
use std::sync::Arc;

use reloop_core::{Config, ContentBlock, Price};
use reloop_driver::{RunConfig, Session};
use reloop_hooks::Settings;
use reloop_model::{AnthropicConfig, AnthropicProvider, ModelProvider, OpenAiConfig, OpenAiProvider, Timeouts};
use reloop_tools::ToolRegistry;

use super::journal::Open;
use super::permissions::{self, PermissionFlags};
use super::scripted::{scripted_file, scripted_text};
use crate::error::CliError;
use crate::options::{JournalArg, ProviderKind};

/// Everything a new session is built from, every default decided: the provider and its model,
/// the loop's limits, the hooks, rules and permissions, the journal. A front end fills it from
/// its flags; [`NewSession::launch`] builds the session.
#[derive(Debug)]
pub struct NewSession {
    /// The session's working directory, where the tools work.
    pub cwd: PathBuf,
    /// The journal, and the folder its default path is under.
    pub journal: JournalArg,
    pub journal_base: PathBuf,
    /// Who answers: scripted (the bundled `demo` cassette or `script`), Anthropic or OpenAI.
    pub provider: ProviderKind,
    pub demo: bool,
    /// Only journaled and queued (`run --enqueue`): a worker asks the model, with its own key.
    pub enqueue: bool,
    pub script: Option<PathBuf>,
    pub base_url: Option<String>,
    pub timeouts: Timeouts,
    /// Whose loop rules (`--compat`), and the model with its limits and prompts.
    pub compat: String,
    pub model: Option<String>,
    pub max_output_tokens: Option<u32>,
    pub fallback_model: Option<String>,
    /// An SDK session's agents: `Some` in print mode (holding the app's definitions, from
    /// `--agents` or `initialize`, if it gave any), `None` for `reloop run`.
    pub sdk_agents: Option<Option<serde_json::Value>>,
    /// `--json-schema`: the session answers through the `StructuredOutput` tool.
    pub json_schema: Option<serde_json::Value>,
    pub system_prompt: Option<String>,
    pub append_system_prompt: Option<String>,
    pub thinking: Option<u32>,
    /// The environment's thinking switches (print mode reads Claude Code's variables).
    pub thinking_switches: reloop_core::profile::ThinkingSwitches,
    /// `ENABLE_TOOL_SEARCH` turned tool search off ([`tool_search_off_from_env`]).
    pub tool_search_off: bool,
    /// The loop's limits.
    pub max_turns: Option<u32>,
    pub max_retries: u32,
    pub escalate_max_tokens: bool,
    pub token_budget: Option<u64>,
    pub stop_hook_block_cap: u32,
    pub context_window: Option<u64>,
    pub auto_compact: bool,
    pub max_budget_usd: Option<f64>,
    /// Prices the user gave (`--price`), for models the table does not price or prices otherwise.
    pub prices: Vec<Price>,
    /// Crash tests: abort after journaling this step.
    pub crash_after_step: Option<u64>,
    /// The settings (hooks, rules, `env`, `sandbox`) and the file they came from, if one did.
    pub settings: Settings,
    pub settings_path: Option<PathBuf>,
    pub permissions: PermissionFlags,
}

impl NewSession {
    /// The session these settings ask for, on `tools` and the tools of the started MCP `servers`,
    /// journaled under `journal_base` unless `--journal` says where; `prompt` is the first prompt
    /// (it may ask for a token budget, `+500k`). Also returns the journal's path.
    pub fn launch(
        mut self,
        prompt: &str,
        mut tools: ToolRegistry,
        servers: &reloop_mcp::McpSet,
    ) -> Result<(Session, PathBuf), CliError> {
        let cwd = self.cwd.as_path();
        crate::mcp::register(servers, &mut tools);
        if let Some(schema) = &self.json_schema {
            let tool = crate::structured::tool(schema).map_err(|e| CliError::Usage(format!("--json-schema: {e}")))?;
            tools.register(tool);
        }
        let profile = compat(&self.compat)?;
        let rules = profile.profile();
        // Aliases (`opus`, `sonnet`) become the version's ids before anything is journaled, so
        // the journal holds what was sent and a replay resolves nothing.
        if self.provider != ProviderKind::Openai {
            self.model = self.model.map(|m| crate::models::resolve(profile, &m));
            self.fallback_model = self.fallback_model.map(|m| crate::models::resolve(profile, &m));
        }
        let model = self.model.clone().unwrap_or_else(|| rules.default_model.unwrap_or(DEFAULT_MODEL).to_string());
        let max_tokens = |model: &str| {
            self.max_output_tokens
                .or_else(env_max_output_tokens)
                .unwrap_or_else(|| crate::models::max_tokens(profile, model))
        };
        let max_output_tokens = max_tokens(&model);
        // Claude Code's limit follows the model: after a fallback, the fallback model's.
        let fallback_max_output_tokens =
            self.fallback_model.as_deref().map(max_tokens).filter(|n| *n != max_output_tokens);
        let spec = permissions::spec(&self.permissions, &self.settings)?;
        let permissions = spec.context(cwd).map_err(|e| CliError::Usage(e.to_string()))?;
        // Priced before anything is started or journaled: an unenforceable budget is refused.
        let prices = self.prices(&model)?;
        let sdk = match &self.sdk_agents {
            Some(json) => Some(
                super::agents::SdkAgents::parse(json.as_ref(), profile)
                    .map_err(|e| CliError::Usage(format!("--agents: {e}")))?,
            ),
            None => None,
        };
        let agents = super::agents::for_new_session(
            cwd,
            self.provider == ProviderKind::Scripted,
            permissions.removes("Agent"),
            sdk.as_ref(),
        );
        self.agents_priced(agents.as_ref(), &prices)?;
        let provider = provider(&self)?;
        let journal_path = self.journal.path(&self.journal_base);
        let journal = self.journal.open(&self.journal_base, Open::Create)?;
        super::otel::note_journal(&self.journal, &self.journal_base);

        let system_prompt = match (&self.system_prompt, &self.append_system_prompt) {
            (Some(s), Some(a)) => Some(format!("{s}\n\n{a}")),
            (Some(s), None) => Some(s.clone()),
            (None, Some(a)) => Some(format!("{}\n\n{a}", reloop_driver::DEFAULT_SYSTEM_PROMPT)),
            (None, None) => None,
        };
        let run = RunConfig::new(provider.name().to_string(), model.clone(), cwd.to_path_buf())
            .with_script(self.script.as_ref().map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone())))
            .with_thinking(self.thinking)
            .with_thinking_switches(self.thinking_switches)
            .with_tool_search_off(self.tool_search_off)
            .with_max_output_tokens(max_output_tokens)
            .with_system_prompt(system_prompt)
            .with_base_url(self.base_url.as_deref().map(reloop_model::redact_url))
            .with_settings(self.settings_path.clone())
            .with_mcp_servers(crate::mcp::records(servers))
            .with_permissions(Some(spec))
            .with_sdk_agents(
                sdk.filter(|s| !s.definitions.is_empty()).map(|s| reloop_driver::agents::sdk_json(&s.definitions)),
            );
        let session = Session::new(
            provider,
            tools,
            Some(journal),
            Config::default()
                .with_max_turns(self.max_turns)
                .with_model(model.clone())
                .with_fallback_model(self.fallback_model.clone())
                .with_max_output_tokens(max_output_tokens)
                .with_fallback_max_output_tokens(fallback_max_output_tokens)
                .with_escalate_max_tokens(self.escalate_max_tokens)
                .with_max_retries(self.max_retries)
                .with_retry_seed(reloop_driver::new_seed())
                .with_token_budget(self.token_budget.or_else(|| crate::budget::parse_token_budget(prompt)))
                .with_stop_hook_block_cap(self.stop_hook_block_cap)
                .with_context_window(self.context_window.unwrap_or_else(|| crate::models::context_window(&model)))
                .with_auto_compact_window(env_auto_compact_window())
                .with_auto_compact(self.auto_compact)
                .with_prices(prices)
                .with_max_budget_usd(self.max_budget_usd)
                .with_structured_output(self.json_schema.is_some())
                .with_profile(profile)
                .with_local_model_server(local_server(&self)),
            run,
        )
        .with_hooks(self.settings.hooks.clone())
        .with_agents(agents)
        .with_permissions(Some(permissions))
        .with_crash_after_step(self.crash_after_step);
        Ok((session, journal_path))
    }
}

impl NewSession {
    /// The prices the session records: the model's and the fallback's (`--price`, else
    /// data/models.json), and every other `--price` given (a subagent or `set_model` may ask
    /// those models). A model with neither gets no price, and one warning: its responses count
    /// as costing nothing, and the reading commands show their cost as unknown. With
    /// `--max-budget-usd` such a model is refused (exit 2): the budget could not be enforced
    /// on it, and enforcing it at another model's prices would stop the run at a wrong point.
    fn prices(&self, model: &str) -> Result<Vec<Price>, CliError> {
        let mut prices: Vec<Price> = Vec::new();
        // A model given twice: the last --price wins.
        for given in self.prices.iter().rev() {
            if !prices.iter().any(|p| p.model == given.model) {
                prices.insert(0, given.clone());
            }
        }
        for m in std::iter::once(model).chain(self.fallback_model.as_deref()) {
            if prices.iter().any(|p| p.model == m) {
                continue;
            }
            match crate::models::known_price(m) {
                Some(price) => prices.push(price),
                None => self.unpriced(m)?,
            }
        }
        Ok(prices)
    }

    /// The agents' models must be priced too under a budget: a child spends from it.
    fn agents_priced(&self, agents: Option<&reloop_driver::AgentSetup>, prices: &[Price]) -> Result<(), CliError> {
        let Some(agents) = agents else { return Ok(()) };
        let models: std::collections::BTreeSet<&str> =
            agents.catalog.definitions().iter().filter_map(|d| d.model.as_deref()).collect();
        for m in models {
            if !prices.iter().chain(&agents.prices).any(|p| p.model == m) {
                self.unpriced(m)?;
            }
        }
        Ok(())
    }

    /// A model without a price: refused under a budget, else warned about once.
    fn unpriced(&self, model: &str) -> Result<(), CliError> {
        let unpriced = crate::models::unpriced(model);
        if self.max_budget_usd.is_some() {
            return Err(CliError::Usage(format!(
                "--max-budget-usd cannot be enforced: {unpriced}; give its price with --price \
                 {model}=INPUT,OUTPUT[,CACHE_WRITE,CACHE_READ] (USD per million tokens)"
            )));
        }
        crate::term::errln!(
            "reloop: warning: {unpriced}: its cost is not counted and shows as unknown (give one with --price \
             {model}=INPUT,OUTPUT), its context window is taken as {}",
            crate::models::context_window(model)
        );
        Ok(())
    }
}

/// The model when neither the flags nor the profile name one.
pub(crate) const DEFAULT_MODEL: &str = "claude-sonnet-4-6";

/// `CLAUDE_CODE_MAX_OUTPUT_TOKENS`, Claude Code's override of every request's limit.
pub(crate) fn env_max_output_tokens() -> Option<u32> {
    std::env::var("CLAUDE_CODE_MAX_OUTPUT_TOKENS").ok().and_then(|v| v.trim().parse().ok()).filter(|n| *n > 0)
}

/// `CLAUDE_CODE_AUTO_COMPACT_WINDOW`: Claude Code's cap on the window its auto-compaction
/// threshold comes from (the blocking limit keeps the model's window).
pub(crate) fn env_auto_compact_window() -> Option<u64> {
    std::env::var("CLAUDE_CODE_AUTO_COMPACT_WINDOW").ok().and_then(|v| v.trim().parse().ok()).filter(|n| *n > 0)
}

/// The profile `--compat` names.
pub(crate) fn compat(name: &str) -> Result<reloop_core::profile::ProfileId, CliError> {
    reloop_core::profile::ProfileId::parse(name).ok_or_else(|| {
        let known: Vec<&str> = reloop_core::profile::ProfileId::ALL.iter().map(|p| p.name()).collect();
        CliError::Usage(format!("--compat {name}: unknown profile; known: {}", known.join(", ")))
    })
}

/// The key sent to a model server on this machine when none is set: the Anthropic wire carries
/// a key in every request, and a local server (a proxy, a test double) ignores it.
const LOOPBACK_KEY: &str = "reloop-loopback-no-key";

/// Whether the model server the run talks to is on this machine: a refused connection there
/// fails fast instead of ten backed-off retries.
fn local_server(session: &NewSession) -> bool {
    let env = match session.provider {
        ProviderKind::Scripted => return false,
        ProviderKind::Anthropic => "ANTHROPIC_BASE_URL",
        ProviderKind::Openai => "OPENAI_BASE_URL",
    };
    session.base_url.clone().or_else(|| env_nonempty(env)).is_some_and(|url| reloop_model::is_local_url(&url))
}

/// The model provider the flags ask for. Keys come from the environment and never reach the
/// journal, logs or error messages.
fn provider(session: &NewSession) -> Result<Arc<dyn ModelProvider>, CliError> {
    let cwd = session.cwd.as_path();
    let config_error = |e: reloop_model::ConfigError| CliError::Usage(format!("cannot set up the provider: {e}"));
    match session.provider {
        ProviderKind::Scripted => {
            let provider = if session.demo {
                scripted_text(crate::demo::CASSETTE, cwd)
                    .map_err(|e| CliError::Usage(format!("the bundled cassette: {e}")))?
            } else {
                let Some(script) = &session.script else {
                    return Err(CliError::Usage("--provider scripted needs --script FILE (a cassette)".into()));
                };
                scripted_file(script, cwd, "the script")?
            };
            Ok(Arc::new(provider))
        }
        ProviderKind::Anthropic => {
            let base = session.base_url.clone().or_else(|| env_nonempty("ANTHROPIC_BASE_URL"));
            // A server on this machine speaking the Anthropic wire asks for no key; the wire
            // carries one, so a placeholder is sent in its header.
            let local = base.as_deref().is_some_and(reloop_model::is_local_url);
            // A queued session is only journaled here: the worker that runs it needs the key.
            let placeholder = local || session.enqueue;
            let key = env_nonempty("ANTHROPIC_API_KEY").or_else(|| placeholder.then(|| LOOPBACK_KEY.to_string()));
            let key = key.ok_or_else(|| {
                CliError::Usage(
                    "no model to ask: set ANTHROPIC_API_KEY to use the Anthropic API \
                     (export ANTHROPIC_API_KEY=...), or pass --script FILE to run a cassette, \
                     or --demo for the bundled example"
                        .into(),
                )
            })?;
            let mut config = AnthropicConfig::new(key).with_timeouts(session.timeouts);
            if let Some(base) = base {
                config = config.with_base_url(base);
            }
            Ok(Arc::new(AnthropicProvider::new(config).map_err(config_error)?))
        }
        ProviderKind::Openai => {
            let base = session.base_url.clone().or_else(|| env_nonempty("OPENAI_BASE_URL")).ok_or_else(|| {
                CliError::Usage("--provider openai needs --base-url URL (e.g. http://127.0.0.1:11434)".into())
            })?;
            let config = OpenAiConfig::new(base, env_nonempty("OPENAI_API_KEY")).with_timeouts(session.timeouts);
            Ok(Arc::new(OpenAiProvider::new(config).map_err(config_error)?))
        }
    }
}

fn env_nonempty(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// The text of a message's blocks, for a prompt given on stdin.
pub fn text_of(content: &[ContentBlock]) -> String {
    content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `CLAUDE_CODE_DISABLE_THINKING` and `CLAUDE_CODE_DISABLE_ADAPTIVE_THINKING` as Claude Code reads
/// them in print mode: set to a true value (`1`, `true`, `yes`, `on`, any case).
pub(crate) fn thinking_switches_from_env() -> reloop_core::profile::ThinkingSwitches {
    let set = |name: &str| {
        std::env::var(name).is_ok_and(|v| ["1", "true", "yes", "on"].contains(&v.trim().to_ascii_lowercase().as_str()))
    };
    reloop_core::profile::ThinkingSwitches {
        off: set("CLAUDE_CODE_DISABLE_THINKING"),
        adaptive_off: set("CLAUDE_CODE_DISABLE_ADAPTIVE_THINKING"),
    }
}

/// `ENABLE_TOOL_SEARCH` as 2.1.332 reads it: a false value (`0`, `false`, `no`, `off`, any
/// case) or `auto:100` turns tool search off. reloop defers no tool either way; the request
/// then goes without the `advanced-tool-use` beta, as Claude Code's does.
pub(crate) fn tool_search_off_from_env() -> bool {
    std::env::var("ENABLE_TOOL_SEARCH").is_ok_and(|v| {
        let v = v.trim().to_ascii_lowercase();
        ["0", "false", "no", "off"].contains(&v.as_str()) || v.strip_prefix("auto:").is_some_and(|n| n.trim() == "100")
    })
}
