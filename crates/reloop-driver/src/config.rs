//! What the driver needs besides the core's rules, journaled in the session header.

use std::path::PathBuf;

use reloop_core::SourcedRule;
use reloop_tools::PermissionContext;
use serde::{Deserialize, Serialize};

/// A library caller's own permission callback (Claude Code's `canUseTool`): it sees each call
/// after the hooks and before the rules. `Some(Allow)` lets the call run, `Some(Deny)` refuses it
/// with the message, `None` leaves it to the rules. Its refusals are journaled in the call's
/// outcome, so a replay never asks it again. It lives with the run's config, below the tool
/// scheduler and the subagents that both hold it.
pub type CanUseTool = std::sync::Arc<dyn Fn(&str, &serde_json::Value) -> Option<reloop_tools::Decision> + Send + Sync>;

/// reloop's own system prompt, used unless the caller replaces it.
pub const DEFAULT_SYSTEM_PROMPT: &str = "You are reloop, a coding agent working in the user's repository. \
Use the tools to look before you answer; prefer small, verifiable steps; \
say plainly what you changed and what you did not.";

/// What the driver needs besides the core's rules. Journaled in the session header.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RunConfig {
    /// `scripted`, `anthropic` or `openai`.
    pub provider: String,
    /// The model requests go to unless a `set_model` or a fallback switched it.
    pub model: String,
    /// The cap on each response's output tokens (the request's `max_tokens`).
    pub max_output_tokens: u32,
    /// The directory tools work in and context is gathered from.
    pub cwd: PathBuf,
    /// The caller's system prompt; `None`: [`DEFAULT_SYSTEM_PROMPT`].
    #[serde(default)]
    pub system_prompt: Option<String>,
    /// The cassette, for the scripted provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script: Option<PathBuf>,
    /// Extended thinking's budget, when asked for; 0 turns thinking off (a Claude Code profile
    /// then sends `{"type": "disabled"}`, [`reloop_core::profile::ThinkingRule`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<u32>,
    /// The environment's thinking switches (`CLAUDE_CODE_DISABLE_THINKING`,
    /// `CLAUDE_CODE_DISABLE_ADAPTIVE_THINKING`), kept so a replay shows the requests sent.
    #[serde(default, skip_serializing_if = "reloop_core::profile::ThinkingSwitches::is_default")]
    pub thinking_switches: reloop_core::profile::ThinkingSwitches,
    /// `ENABLE_TOOL_SEARCH` turned tool search off (2.1.332 then sends no `advanced-tool-use`
    /// beta), kept so a replay shows the requests sent.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tool_search_off: bool,
    /// Gather the user and system context at start (instruction files, date, git status).
    #[serde(default = "yes")]
    pub gather_context: bool,
    /// The tools the model was offered.
    #[serde(default)]
    pub tools: Vec<String>,
    /// The provider's base URL, when one was given (never a key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// The settings file the hooks came from, read again on resume and fork.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<PathBuf>,
    /// The permission mode and rules, so a resumed or forked session is held to the same ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permissions: Option<PermissionSpec>,
    /// The system context gathered at start, appended to the system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_context: Option<String>,
    /// Set on a subagent's session: the session and the `Agent` call it answers. The relation
    /// lives in the header, so a child is never journaled without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentLink>,
    /// The definitions of the offered tools that are not built in (MCP servers' tools), so a
    /// rebuilt request and a resumed session offer them as they were, with no server running.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_specs: Vec<reloop_core::ToolSpec>,
    /// The MCP servers' starts (name, transport, connected or failed and why, tools), as the
    /// caller that started them recorded them: the driver keeps them, it does not read them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mcp_servers: Vec<serde_json::Value>,
    /// Set on a session Claude Code's print mode ran (the Agent SDKs' CLI): how its stream was
    /// shaped (partial messages, the gateway its error texts name), so `reloop replay
    /// --output-format stream-json` prints that stream again. The driver keeps it, never reads it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub print: Option<serde_json::Value>,
    /// The agents an SDK defined (`--agents`, `initialize`), as its JSON with models resolved:
    /// a resumed or replayed session and its children rebuild the `Agent` tool from them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sdk_agents: Option<serde_json::Value>,
}

/// Which call of which session a subagent's session answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentLink {
    /// The calling session.
    pub parent: String,
    /// The `Agent` call's `tool_use` id.
    pub tool_use_id: String,
    /// The agent definition it ran under (`general-purpose`, a `.claude/agents` name).
    pub agent_type: String,
    /// It runs in the background (flag 44): 2.1.332 asks for such an agent's thinking as for
    /// the session's own, displayed (`subagent/default`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub background: bool,
}

fn yes() -> bool {
    true
}

impl RunConfig {
    /// A config with reloop's defaults (32,000 output tokens, context gathered, no tools yet).
    pub fn new(provider: impl Into<String>, model: impl Into<String>, cwd: PathBuf) -> Self {
        RunConfig {
            provider: provider.into(),
            model: model.into(),
            max_output_tokens: 32_000,
            cwd,
            system_prompt: None,
            script: None,
            thinking: None,
            thinking_switches: Default::default(),
            tool_search_off: false,
            gather_context: true,
            tools: Vec::new(),
            base_url: None,
            settings: None,
            permissions: None,
            system_context: None,
            agent: None,
            tool_specs: Vec::new(),
            mcp_servers: Vec::new(),
            print: None,
            sdk_agents: None,
        }
    }

    /// The system blocks of every request: the prompt and the gathered context; none at all
    /// when both are empty (`--system-prompt ""`), as the API refuses an empty text block.
    pub fn system_blocks(&self) -> Vec<reloop_model::SystemBlock> {
        let mut system = self.system_prompt.clone().unwrap_or_else(|| DEFAULT_SYSTEM_PROMPT.to_string());
        if let Some(context) = self.system_context.as_ref().filter(|c| !c.is_empty()) {
            if !system.is_empty() {
                system.push_str("\n\n");
            }
            system.push_str(context);
        }
        if system.is_empty() {
            Vec::new()
        } else {
            vec![reloop_model::SystemBlock::cached(system)]
        }
    }

    /// The agents an SDK defined, to journal.
    pub fn with_sdk_agents(mut self, agents: Option<serde_json::Value>) -> Self {
        self.sdk_agents = agents;
        self
    }

    /// Records the MCP servers' starts in the header.
    pub fn with_mcp_servers(mut self, records: Vec<serde_json::Value>) -> Self {
        self.mcp_servers = records;
        self
    }

    /// Records the provider's base URL (a proxy, a compatible server) so resume reaches it.
    pub fn with_base_url(mut self, url: Option<String>) -> Self {
        self.base_url = url;
        self
    }

    /// Records the settings file, so resume and fork read the same hooks.
    pub fn with_settings(mut self, path: Option<PathBuf>) -> Self {
        self.settings = path;
        self
    }

    /// Records the permission flags, so resume and fork are held to the same rules.
    pub fn with_permissions(mut self, spec: Option<PermissionSpec>) -> Self {
        self.permissions = spec;
        self
    }

    /// Turns gathering the instruction files, date and git status at start on or off.
    pub fn with_gather_context(mut self, on: bool) -> Self {
        self.gather_context = on;
        self
    }

    /// Asks for extended thinking with this token budget (`None`: none).
    pub fn with_thinking(mut self, budget_tokens: Option<u32>) -> Self {
        self.thinking = budget_tokens;
        self
    }

    /// The environment's thinking switches ([`reloop_core::profile::ThinkingSwitches`]).
    pub fn with_thinking_switches(mut self, switches: reloop_core::profile::ThinkingSwitches) -> Self {
        self.thinking_switches = switches;
        self
    }

    /// See [`RunConfig::tool_search_off`].
    pub fn with_tool_search_off(mut self, off: bool) -> Self {
        self.tool_search_off = off;
        self
    }

    /// The cassette the scripted provider plays.
    pub fn with_script(mut self, script: Option<PathBuf>) -> Self {
        self.script = script;
        self
    }

    /// Caps each response's output tokens.
    pub fn with_max_output_tokens(mut self, n: u32) -> Self {
        self.max_output_tokens = n;
        self
    }

    /// Replaces reloop's system prompt (`Some("")`: none at all).
    pub fn with_system_prompt(mut self, prompt: Option<String>) -> Self {
        self.system_prompt = prompt;
        self
    }
}

/// The permission flags a session ran with, as given (rules unparsed, paths as typed).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PermissionSpec {
    /// The permission mode (`default`, `acceptEdits`, `plan`, `bypassPermissions`, ...).
    pub mode: String,
    /// Rules whose calls run without asking (`--allowedTools`, the settings' `allow`), each with
    /// its origin where known (a header from before origins holds the bare texts).
    #[serde(default)]
    pub allow: Vec<SourcedRule>,
    /// Rules whose calls are refused.
    #[serde(default)]
    pub deny: Vec<SourcedRule>,
    /// Rules whose calls are always asked about.
    #[serde(default)]
    pub ask: Vec<SourcedRule>,
    /// Tools removed from the model's offer (`--disallowedTools`).
    #[serde(default)]
    pub disallowed: Vec<String>,
    /// Directories tools may touch besides the working directory (`--add-dir`).
    #[serde(default)]
    pub add_dirs: Vec<PathBuf>,
    /// Variables removed from tool processes besides reloop's own credentials (left out of the
    /// journal when empty, so headers of older sessions read back identical).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_env_remove: Vec<String>,
    /// Credentials the user lets tool processes keep (`--tool-env-keep`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_env_keep: Vec<String>,
    /// Whether sandboxed tool processes share the machine's network (settings
    /// `sandbox.network.allowedDomains` holding `"*"`); left out of the journal when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sandbox_network: bool,
}

impl PermissionSpec {
    /// The flags of a session run in `mode`, with no rules.
    pub fn new(mode: impl Into<String>) -> Self {
        PermissionSpec { mode: mode.into(), ..Default::default() }
    }

    /// The allow, deny and ask rules, as typed, with their origins.
    pub fn with_rules(mut self, allow: Vec<SourcedRule>, deny: Vec<SourcedRule>, ask: Vec<SourcedRule>) -> Self {
        (self.allow, self.deny, self.ask) = (allow, deny, ask);
        self
    }

    /// The tools removed from the offer.
    pub fn with_disallowed(mut self, disallowed: Vec<String>) -> Self {
        self.disallowed = disallowed;
        self
    }

    /// The extra directories tools may touch.
    pub fn with_add_dirs(mut self, dirs: Vec<PathBuf>) -> Self {
        self.add_dirs = dirs;
        self
    }

    /// Which variables tool processes lose (`remove`) or keep although reloop would remove them.
    pub fn with_tool_env(mut self, remove: Vec<String>, keep: Vec<String>) -> Self {
        (self.tool_env_remove, self.tool_env_keep) = (remove, keep);
        self
    }

    /// Whether sandboxed tool processes may use the network.
    pub fn with_sandbox_network(mut self, network: bool) -> Self {
        self.sandbox_network = network;
        self
    }

    /// The permission context these flags mean for a working directory, contained by this
    /// machine's sandbox when it has one.
    pub fn context(&self, cwd: &std::path::Path) -> Result<PermissionContext, reloop_tools::PermissionError> {
        let mode = self.mode.parse()?;
        let rules = reloop_tools::PermissionRules::parse_sourced(&self.allow, &self.deny, &self.ask)?;
        let workspace = reloop_tools::Workspace::new(cwd, &self.add_dirs)?;
        Ok(PermissionContext::new(mode, rules, workspace, self.disallowed.clone())?
            .with_tool_env(reloop_tools::ToolEnvPolicy::new(&self.tool_env_remove, &self.tool_env_keep))
            .with_sandbox(sandbox(), self.sandbox_network))
    }
}

/// This machine's sandbox, probed once per process (`None`: there is none).
fn sandbox() -> Option<reloop_tools::sandbox::Sandbox> {
    match reloop_tools::sandbox::Sandbox::probe() {
        reloop_tools::sandbox::Availability::Available(sandbox) => Some(sandbox.clone()),
        reloop_tools::sandbox::Availability::Unavailable(_) => None,
    }
}

/// The `thinking` a request to `model` asks for, `tokens` being the budget given (0: off), under
/// the environment's `switches`: the profile's rule (its subagents' when `child`), else reloop's
/// (a budget when one was given; none when thinking is switched off).
pub fn thinking(
    rules: &reloop_core::profile::Profile,
    model: &str,
    max_tokens: u32,
    tokens: Option<u32>,
    switches: reloop_core::profile::ThinkingSwitches,
    child: bool,
) -> Option<serde_json::Value> {
    let asked = reloop_core::profile::ThinkingAsked::from_tokens(tokens);
    match rules.thinking {
        Some(rule) if child => rule.child_request(model, max_tokens, asked, switches),
        Some(rule) => rule.request_switched(model, max_tokens, asked, switches),
        None if switches.off => None,
        None => reloop_core::profile::reloop_thinking(asked),
    }
}

/// The request details the session's profile words its own way.
pub fn wire_style(rules: &reloop_core::profile::Profile, model: &str, stream: bool) -> reloop_model::WireStyle {
    let wire = rules.wire;
    reloop_model::WireStyle {
        stream_key: wire.whole_stream_key,
        effort: wire.effort_for(model),
        timeout_header: wire.stainless_timeout.map(|(streamed, whole)| if stream { streamed } else { whole }),
        system_as_string: wire.system_as_string,
        summary_as_string: wire.summary_as_string,
        output_config_on_first_system: wire.output_config_on_first_system,
        betas: wire.betas,
        merge_user_messages: wire.merge_user_messages,
    }
}
