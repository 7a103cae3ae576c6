//! Claude Code's print-mode command line (`claude -p ...`), as the Agent SDKs write it.
//!
//! `reloop` with no subcommand reads these flags. Every flag either SDK may pass is accepted:
//! the ones reloop honours are mapped onto `reloop run`'s settings; the ones it cannot honour
//! yet each produce one warning on stderr naming the flag ([`PrintArgs::unhonoured`]), never
//! silence. `docs/sdk.md` lists every flag with its status, and a test checks that table
//! against `FLAGS`.

use std::path::PathBuf;

use clap::Parser;

use crate::options::{
    reword, value_names, ConnectionArgs, InputFormat, JournalArg, MaxTurnsArg, McpArgs, OutputFormatArg, PriceArg,
    ProviderKind,
};
use reloop_hooks::Settings;

use crate::launch::permissions::PermissionFlags;
use crate::launch::NewSession;

/// The Claude Code version whose wire reloop speaks: what `system/init` reports as
/// `claude_code_version` and `-v` prints, so an SDK's version checks pass.
pub const CLAUDE_CODE_VERSION: &str = "2.1.197";

#[derive(Parser, Debug)]
#[command(
    name = "reloop",
    about = "Claude Code's print mode, journaled: reloop [-p] [PROMPT] --output-format stream-json ...",
    disable_version_flag = true,
    // Claude Code takes a flag given twice, the last one winning (`subagent/default_text` gives
    // `--output-format` twice); repeatable flags still gather every value.
    args_override_self = true,
    mut_args(reword(&[
        ("output_format", "text (the answer), json (the result line) or stream-json (every line, as the SDKs read)"),
        ("base_url", "The provider's base URL [env: ANTHROPIC_BASE_URL or OPENAI_BASE_URL]"),
        ("mcp_config", "MCP servers: a file or inline JSON `{\"mcpServers\": {...}}` (repeatable)"),
        ("strict_mcp_config", "Use only --mcp-config servers: the project's `.mcp.json` is not read"),
    ])),
    mut_args(value_names(&[("max_turns", "MAX_TURNS"), ("mcp_config", "MCP_CONFIG")]))
)]
pub struct PrintArgs {
    /// The prompt (with `--input-format text`); read from stdin when absent.
    pub prompt: Option<String>,
    /// Print the answer and exit (the only mode reloop has; accepted for Claude Code's spelling).
    #[arg(short = 'p', long = "print")]
    pub print: bool,
    /// Print the version, as Claude Code's `-v` does.
    #[arg(short = 'v', long = "version")]
    pub version: bool,
    #[command(flatten)]
    pub output: OutputFormatArg,
    /// text (the PROMPT, or all of stdin) or stream-json (the SDKs' protocol on stdin).
    #[arg(long, value_enum, default_value = "text")]
    pub input_format: InputFormat,
    /// Claude Code prints every message in stream-json only with it; reloop always does.
    #[arg(long)]
    pub verbose: bool,
    /// Also print `stream_event` lines as the model streams.
    #[arg(long)]
    pub include_partial_messages: bool,
    /// The model [env: ANTHROPIC_MODEL; default: the profile's, claude-opus-5-5 under
    /// claude-code-2.1.332].
    #[arg(long)]
    pub model: Option<String>,
    /// Switch to this model after repeated overloads or a server error.
    #[arg(long)]
    pub fallback_model: Option<String>,
    /// Replace the system prompt (an empty string sends none).
    #[arg(long)]
    pub system_prompt: Option<String>,
    /// Replace the system prompt with a file's text.
    #[arg(long, value_name = "FILE", conflicts_with = "system_prompt")]
    pub system_prompt_file: Option<PathBuf>,
    /// Add to the system prompt.
    #[arg(long)]
    pub append_system_prompt: Option<String>,
    /// The tools offered to the model: names separated by commas, `""` for none, `default` for all.
    #[arg(long)]
    pub tools: Option<String>,
    /// Rules that allow calls, e.g. `Bash(git diff:*)` `Edit` (comma separated).
    #[arg(long = "allowedTools", alias = "allowed-tools", num_args = 1.., value_delimiter = ',')]
    pub allowed_tools: Vec<String>,
    /// Rules or tool names that deny calls; a bare name also removes the tool from the request.
    #[arg(long = "disallowedTools", alias = "disallowed-tools", num_args = 1.., value_delimiter = ',')]
    pub disallowed_tools: Vec<String>,
    /// default, acceptEdits, plan, bypassPermissions or dontAsk [default: default].
    #[arg(long)]
    pub permission_mode: Option<String>,
    /// `stdio`: ask the SDK (`can_use_tool` control requests) where the rules would ask.
    #[arg(long)]
    pub permission_prompt_tool: Option<String>,
    #[command(flatten)]
    pub max_turns: MaxTurnsArg,
    /// End the run once it has cost this many US dollars (a model with no known price is
    /// refused: give one with --price).
    #[arg(long)]
    pub max_budget_usd: Option<f64>,
    /// Extended thinking with this many budget tokens.
    #[arg(long)]
    pub max_thinking_tokens: Option<u32>,
    /// A settings file, or the settings as an inline JSON object.
    #[arg(long)]
    pub settings: Option<String>,
    /// Which settings files are read (`user,project,local`; all when not given, none when
    /// empty); `--settings` is read whatever this says.
    #[arg(long)]
    pub setting_sources: Option<String>,
    /// More folders the tools may use besides the working directory.
    #[arg(long, num_args = 1..)]
    pub add_dir: Vec<PathBuf>,
    /// Resume this session (an id or a unique prefix) with the new prompt.
    #[arg(long, short = 'r', value_name = "ID")]
    pub resume: Option<String>,
    /// Resume the journal's most recent session.
    #[arg(long, short = 'c')]
    pub r#continue: bool,
    /// The id a new session takes (a UUID).
    #[arg(long, value_name = "UUID")]
    pub session_id: Option<String>,
    /// With --resume or --continue: go on in a new session forked at the last step.
    #[arg(long)]
    pub fork_session: bool,
    /// With --resume: go on from this message of the session (a line `uuid`).
    #[arg(long, value_name = "UUID")]
    pub resume_session_at: Option<String>,
    /// bypassPermissions (refused as root without --dangerously-allow-root).
    #[arg(long)]
    pub dangerously_skip_permissions: bool,
    /// Allow bypassPermissions when running as root.
    #[arg(long)]
    pub dangerously_allow_root: bool,

    // reloop's own
    #[command(flatten)]
    pub journal: JournalArg,
    /// A cassette of scripted model responses instead of a live model.
    #[arg(long, value_name = "FILE")]
    pub script: Option<PathBuf>,
    /// scripted, anthropic or openai [default: scripted with --script, else anthropic].
    #[arg(long, value_enum)]
    pub provider: Option<ProviderKind>,
    #[command(flatten)]
    pub connection: ConnectionArgs,
    /// Claude Code's interactive, cloud and UI flags: accepted, warned about.
    #[command(flatten)]
    pub accepted: super::accepted::Accepted,
    /// Retries of one failed request (Claude Code's `CLAUDE_CODE_MAX_RETRIES`, else 10).
    #[arg(long, env = "CLAUDE_CODE_MAX_RETRIES", default_value_t = 10)]
    pub max_retries: u32,
    /// Whose loop rules to follow (see `reloop run --help`).
    #[arg(long, env = "RELOOP_COMPAT", value_name = "PROFILE", default_value = "claude-code-2.1.332")]
    pub compat: String,
    #[command(flatten)]
    pub price: PriceArg,

    #[command(flatten)]
    pub mcp: McpArgs,

    // Accepted, not honoured yet: each one given is named in a warning.
    /// A JSON schema for structured output: the model answers through the `StructuredOutput`
    /// tool and the result carries `structured_output`.
    #[arg(long)]
    pub json_schema: Option<String>,
    /// Beta headers to send (not sent: warned).
    #[arg(long, num_args = 1.., value_delimiter = ',')]
    pub betas: Vec<String>,
    /// Effort level (not sent: warned).
    #[arg(long)]
    pub effort: Option<String>,
    /// adaptive or disabled thinking (adaptive is not requested: warned).
    #[arg(long)]
    pub thinking: Option<String>,
    /// How thinking is shown (warned).
    #[arg(long)]
    pub thinking_display: Option<String>,
    /// A task budget (not enforced: warned; see --max-budget-usd).
    #[arg(long)]
    pub task_budget: Option<String>,
    /// A plugin folder (not loaded: warned).
    #[arg(long)]
    pub plugin_dir: Vec<String>,
    /// A plugin folder without its MCP servers (not loaded: warned).
    #[arg(long)]
    pub plugin_dir_no_mcp: Vec<String>,
    /// The main thread's agent (subagents are not supported yet: warned).
    #[arg(long)]
    pub agent: Option<String>,
    /// Agent definitions as JSON, name to `{description, prompt, tools, model}`: the `Agent`
    /// tool offers them besides the project's.
    #[arg(long)]
    pub agents: Option<String>,
    /// A truncating resume's guard: the uuid of the one turn's prompt `--resume-session-at`
    /// may discard (see `sdk::drop_guard`).
    #[arg(long)]
    pub resume_drops_turn: Option<String>,
    /// Print hook events (not printed: warned).
    #[arg(long)]
    pub include_hook_events: bool,
    /// Send the session files' new entries to the SDK as `transcript_mirror` frames (`sdk::mirror`).
    #[arg(long)]
    pub session_mirror: bool,
    /// Debug logging, optionally filtered (warned).
    #[arg(long, num_args = 0..=1, default_missing_value = "")]
    pub debug: Option<String>,
    /// Debug log file (warned).
    #[arg(long)]
    pub debug_file: Option<String>,
    /// Debug logging to stderr (warned).
    #[arg(long)]
    pub debug_to_stderr: bool,
    /// Channels (not supported: warned).
    #[arg(long)]
    pub channels: Vec<String>,
    /// Permission prompt settings (warned; only --permission-prompt-tool stdio asks).
    #[arg(long)]
    pub permission_prompts: Option<String>,
    /// Fields the SDK sends in initialize instead of flags (warned).
    #[arg(long)]
    pub initialize_fields: Option<String>,
    /// Wait for initialize before starting (reloop always does; warned).
    #[arg(long)]
    pub await_initialize: bool,
    /// Managed settings (not loaded: warned).
    #[arg(long)]
    pub managed_settings: Option<String>,
    /// Managed settings sent in initialize (not loaded: warned).
    #[arg(long)]
    pub managed_settings_in_initialize: bool,
    /// Where project configuration lives (not loaded: warned).
    #[arg(long)]
    pub project_config_root: Option<String>,
    /// Write no session file under ~/.claude/projects/ (the session is journaled all the same).
    #[arg(long)]
    pub no_session_persistence: bool,
    /// Echo user messages back (warned).
    #[arg(long)]
    pub replay_user_messages: bool,
    /// Allow switching to bypassPermissions later (warned).
    #[arg(long)]
    pub allow_dangerously_skip_permissions: bool,
    /// Fail hard on internal errors (warned).
    #[arg(long)]
    pub hard_fail: bool,
}

/// How reloop treats a flag: the rows of `docs/sdk.md`'s flag table (checked by a test).
#[cfg(test)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Does what Claude Code's flag does.
    Supported,
    /// Accepted; one warning on stderr says it is not honoured.
    Warned,
}

#[cfg(test)]
impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Supported => "supported",
            Status::Warned => "accepted with a warning",
        }
    }
}

/// Every Claude Code flag the print mode accepts, with its status.
#[cfg(test)]
pub const FLAGS: &[(&str, Status)] = &[
    ("-p, --print", Status::Supported),
    ("-v, --version", Status::Supported),
    ("--output-format", Status::Supported),
    ("--input-format", Status::Supported),
    ("--verbose", Status::Supported),
    ("--include-partial-messages", Status::Supported),
    ("--model", Status::Supported),
    ("--fallback-model", Status::Supported),
    ("--system-prompt", Status::Supported),
    ("--system-prompt-file", Status::Supported),
    ("--append-system-prompt", Status::Supported),
    ("--tools", Status::Supported),
    ("--allowedTools, --allowed-tools", Status::Supported),
    ("--disallowedTools, --disallowed-tools", Status::Supported),
    ("--permission-mode", Status::Supported),
    ("--permission-prompt-tool", Status::Supported),
    ("--max-turns", Status::Supported),
    ("--max-budget-usd", Status::Supported),
    ("--max-thinking-tokens", Status::Supported),
    ("--settings", Status::Supported),
    ("--setting-sources", Status::Supported),
    ("--add-dir", Status::Supported),
    ("-r, --resume", Status::Supported),
    ("-c, --continue", Status::Supported),
    ("--session-id", Status::Supported),
    ("--fork-session", Status::Supported),
    ("--resume-session-at", Status::Supported),
    ("--dangerously-skip-permissions", Status::Supported),
    ("--mcp-config", Status::Supported),
    ("--strict-mcp-config", Status::Supported),
    ("--json-schema", Status::Supported),
    ("--betas", Status::Warned),
    ("--effort", Status::Warned),
    ("--thinking", Status::Warned),
    ("--thinking-display", Status::Warned),
    ("--task-budget", Status::Warned),
    ("--plugin-dir", Status::Warned),
    ("--plugin-dir-no-mcp", Status::Warned),
    ("--agent", Status::Warned),
    ("--agents", Status::Supported),
    ("--resume-drops-turn", Status::Supported),
    ("--include-hook-events", Status::Supported),
    ("--session-mirror", Status::Supported),
    ("--debug", Status::Warned),
    ("--debug-file", Status::Warned),
    ("--debug-to-stderr", Status::Warned),
    ("--channels", Status::Warned),
    ("--permission-prompts", Status::Warned),
    ("--initialize-fields", Status::Warned),
    ("--await-initialize", Status::Warned),
    ("--managed-settings", Status::Warned),
    ("--managed-settings-in-initialize", Status::Warned),
    ("--project-config-root", Status::Warned),
    ("--no-session-persistence", Status::Supported),
    ("--replay-user-messages", Status::Warned),
    ("--allow-dangerously-skip-permissions", Status::Warned),
    ("--hard-fail", Status::Warned),
];

impl PrintArgs {
    /// The flags given that reloop does not honour, each with what is not done.
    pub fn unhonoured(&self) -> Vec<(&'static str, &'static str)> {
        let mut out = Vec::new();
        let mut warn = |given: bool, flag: &'static str, why: &'static str| {
            if given {
                out.push((flag, why));
            }
        };
        warn(!self.betas.is_empty(), "--betas", "beta headers are not sent");
        warn(self.effort.is_some(), "--effort", "the effort setting is not sent");
        warn(
            self.thinking.as_deref().is_some_and(|t| t != "disabled"),
            "--thinking",
            "adaptive thinking is not requested (use --max-thinking-tokens)",
        );
        warn(self.thinking_display.is_some(), "--thinking-display", "thinking display is not configurable");
        warn(self.task_budget.is_some(), "--task-budget", "task budgets are not enforced (use --max-budget-usd)");
        warn(!self.plugin_dir.is_empty(), "--plugin-dir", "plugins are not loaded");
        warn(!self.plugin_dir_no_mcp.is_empty(), "--plugin-dir-no-mcp", "plugins are not loaded");
        warn(self.agent.is_some(), "--agent", "subagents are not supported yet");
        warn(self.debug.is_some(), "--debug", "there is no debug log");
        warn(self.debug_file.is_some(), "--debug-file", "there is no debug log");
        warn(self.debug_to_stderr, "--debug-to-stderr", "there is no debug log");
        warn(!self.channels.is_empty(), "--channels", "channels are not supported");
        warn(self.permission_prompts.is_some(), "--permission-prompts", "only --permission-prompt-tool stdio asks");
        warn(self.initialize_fields.is_some(), "--initialize-fields", "settings are read from flags, not initialize");
        warn(self.await_initialize, "--await-initialize", "reloop always reads initialize before the first prompt");
        warn(self.managed_settings.is_some(), "--managed-settings", "managed settings are not loaded");
        warn(
            self.managed_settings_in_initialize,
            "--managed-settings-in-initialize",
            "managed settings are not loaded",
        );
        warn(self.project_config_root.is_some(), "--project-config-root", "project configuration is not loaded");
        warn(self.replay_user_messages, "--replay-user-messages", "user messages are not echoed");
        warn(
            self.allow_dangerously_skip_permissions,
            "--allow-dangerously-skip-permissions",
            "modes switch only by flag or set_permission_mode",
        );
        warn(self.hard_fail, "--hard-fail", "there is no debug log");
        out.extend(self.accepted.unhonoured());
        out
    }

    /// The model the session asks: `--model`, `ANTHROPIC_MODEL`, else the profile's default.
    pub fn model_name(&self) -> String {
        let rules = reloop_core::profile::ProfileId::parse(&self.compat).map(|p| p.profile());
        self.model_flag().unwrap_or_else(|| {
            rules.and_then(|r| r.default_model).unwrap_or(crate::launch::new::DEFAULT_MODEL).to_string()
        })
    }

    /// The permission mode the flags ask for.
    pub fn permission_mode(&self) -> String {
        if self.dangerously_skip_permissions {
            "bypassPermissions".to_string()
        } else {
            self.permission_mode.clone().unwrap_or_else(|| "default".to_string())
        }
    }

    /// The new session these flags ask for, in `cwd` (its journal there too). The system prompt,
    /// the settings and the tools are the caller's to apply (they may come from a file or
    /// `initialize`).
    pub fn new_session(&self, cwd: PathBuf, settings: Settings, settings_path: Option<PathBuf>) -> NewSession {
        NewSession {
            journal: self.journal.clone(),
            journal_base: cwd.clone(),
            cwd,
            provider: self.provider.unwrap_or(if self.script.is_some() {
                ProviderKind::Scripted
            } else {
                ProviderKind::Anthropic
            }),
            demo: false,
            enqueue: false,
            script: self.script.clone(),
            base_url: self.connection.base_url.clone(),
            timeouts: self.connection.wire.timeouts(),
            compat: self.compat.clone(),
            model: self.model_flag(),
            max_output_tokens: None,
            fallback_model: self.fallback_model.clone(),
            sdk_agents: Some(None),
            json_schema: None,
            system_prompt: None,
            append_system_prompt: self.append_system_prompt.clone(),
            thinking: self.thinking_budget(),
            thinking_switches: crate::launch::new::thinking_switches_from_env(),
            tool_search_off: crate::launch::new::tool_search_off_from_env(),
            max_turns: self.max_turns.max_turns,
            max_retries: self.max_retries,
            escalate_max_tokens: false,
            token_budget: None,
            stop_hook_block_cap: 8,
            context_window: None,
            auto_compact: true,
            max_budget_usd: self.max_budget_usd,
            prices: self.price.prices.clone(),
            crash_after_step: None,
            settings,
            settings_path,
            permissions: PermissionFlags {
                mode: self.permission_mode(),
                dangerously_allow_root: self.dangerously_allow_root,
                allowed_tools: self.allowed_tools.clone(),
                disallowed_tools: self.disallowed_tools.clone(),
                add_dir: self.add_dir.clone(),
                tool_env_keep: Vec::new(),
            },
        }
    }

    /// The extended-thinking budget: `--max-thinking-tokens`, else `MAX_THINKING_TOKENS` from
    /// the environment as Claude Code reads it (an app sets it instead of the flag); 0 turns
    /// thinking off (none is sent under reloop's rules, `disabled` under Claude Code's).
    fn thinking_budget(&self) -> Option<u32> {
        let env = || std::env::var("MAX_THINKING_TOKENS").ok().and_then(|v| v.trim().parse().ok());
        self.max_thinking_tokens.or_else(env)
    }

    /// `--model`, else `ANTHROPIC_MODEL`, an alias resolved as the profile's version does.
    pub(crate) fn model_flag(&self) -> Option<String> {
        let given = self.model.clone().or_else(|| std::env::var("ANTHROPIC_MODEL").ok().filter(|m| !m.is_empty()))?;
        Some(self.resolve_model(&given))
    }

    /// The id a model name stands for under this session's profile (`opus` → the version's
    /// Opus id); names for an OpenAI-compatible server are kept.
    pub fn resolve_model(&self, name: &str) -> String {
        match reloop_core::profile::ProfileId::parse(&self.compat) {
            Some(profile) if self.provider != Some(ProviderKind::Openai) => crate::models::resolve(profile, name),
            _ => name.to_string(),
        }
    }

    /// The tool names `--tools` keeps (`None`: all), and the bare names `--disallowedTools`
    /// removes: a tool in neither is offered to the model.
    pub fn offered(&self, name: &str) -> bool {
        let removed = self.disallowed_tools.iter().any(|entry| entry.trim() == name);
        let listed = match self.tools.as_deref().map(str::trim) {
            None | Some("default") => true,
            Some(list) => list.split(',').any(|t| t.trim() == name),
        };
        listed && !removed
    }
}

/// Whether an argument list is Claude Code's print mode rather than a reloop subcommand: the
/// first argument names no subcommand (and is not a help or version request of reloop's own).
pub fn is_print_mode(args: &[std::ffi::OsString], subcommands: &[&str]) -> bool {
    let Some(first) = args.get(1).and_then(|a| a.to_str()) else { return false };
    if subcommands.contains(&first) || matches!(first, "-h" | "--help" | "-V" | "help") {
        return false;
    }
    // `reloop --version` alone is reloop's own; anything else with flags is print mode.
    !(first == "--version" && args.len() == 2)
}

impl PrintArgs {
    /// The model server's `host:port` when a base URL names one other than Anthropic's
    /// (`--base-url`, else `ANTHROPIC_BASE_URL`), credentials left out.
    pub fn gateway(&self) -> Option<String> {
        let url = self.connection.base_url.clone().or_else(|| std::env::var("ANTHROPIC_BASE_URL").ok())?;
        let rest = url.split_once("://").map_or(url.as_str(), |(_, rest)| rest);
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        let host = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
        (!host.is_empty() && host != "api.anthropic.com").then(|| host.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::OutputFormat;

    fn parse(args: &[&str]) -> PrintArgs {
        PrintArgs::try_parse_from(std::iter::once("reloop").chain(args.iter().copied())).unwrap()
    }

    /// A flag given twice takes its last value, as Claude Code's does (`subagent/default_text`
    /// passes `--output-format` twice); a repeatable one keeps every value.
    #[test]
    fn a_flag_given_twice_takes_its_last_value_and_repeatable_ones_keep_all() {
        let args = parse(&["-p", "hi", "--output-format", "stream-json", "--verbose", "--output-format", "text"]);
        assert_eq!(args.output.output_format, OutputFormat::Text);
        let args = parse(&[
            "-p",
            "hi",
            "--mcp-config",
            "a.json",
            "--mcp-config",
            "b.json",
            "--max-turns",
            "2",
            "--max-turns",
            "5",
        ]);
        assert_eq!(args.mcp.mcp_config, ["a.json", "b.json"]);
        assert_eq!(args.max_turns.max_turns, Some(5));
    }

    #[test]
    fn the_python_sdk_s_command_line_parses() {
        let args = parse(&[
            "--output-format",
            "stream-json",
            "--verbose",
            "--system-prompt",
            "",
            "--allowedTools",
            "Read",
            "--max-turns",
            "3",
            "--disallowedTools",
            "Bash",
            "--model",
            "claude-haiku-4-5",
            "--permission-mode",
            "acceptEdits",
            "--resume=abc",
            "--setting-sources=",
            "--add-dir",
            "/a",
            "--add-dir",
            "/b",
            "--input-format",
            "stream-json",
        ]);
        assert_eq!(args.output.output_format, OutputFormat::StreamJson);
        assert_eq!(args.system_prompt.as_deref(), Some(""));
        assert_eq!(args.allowed_tools, vec!["Read"]);
        assert_eq!(args.max_turns.max_turns, Some(3));
        assert_eq!(args.resume.as_deref(), Some("abc"));
        assert_eq!(args.add_dir, vec![PathBuf::from("/a"), PathBuf::from("/b")]);
        assert!(args.unhonoured().is_empty(), "{:?}", args.unhonoured());
        assert!(!args.offered("Bash") && args.offered("Read"));
    }

    #[test]
    fn every_unhonoured_flag_given_is_named_once() {
        let args =
            parse(&["--betas", "x", "--mcp-config", "{}", "--setting-sources=user,project", "--json-schema", "{}"]);
        let named: Vec<_> = args.unhonoured().into_iter().map(|(flag, _)| flag).collect();
        // --setting-sources is honoured (crate::settings), so it is not named.
        assert_eq!(named, vec!["--betas"]);
        for flag in named {
            assert!(FLAGS.iter().any(|(f, s)| f.contains(flag) && *s == Status::Warned));
        }
    }

    #[test]
    fn tools_lists_what_is_offered() {
        assert!(!parse(&["--tools", ""]).offered("Read"));
        assert!(parse(&["--tools", "Read,Grep"]).offered("Grep"));
        assert!(!parse(&["--tools", "Read,Grep"]).offered("Bash"));
        assert!(parse(&["--tools", "default"]).offered("Bash"));
    }

    /// reloop's own flags, which `docs/sdk.md` lists apart from Claude Code's.
    const RELOOP_OWN: &[&str] = &[
        "journal",
        "script",
        "provider",
        "base-url",
        "api-timeout-ms",
        "stream-idle-timeout-ms",
        "max-retries",
        "dangerously-allow-root",
        "compat",
        "price",
    ];

    #[test]
    fn the_documented_flag_table_is_the_code_s() {
        let doc = include_str!("../../docs/sdk.md");
        let rows: Vec<(String, String)> = doc
            .lines()
            .filter(|l| l.starts_with("| `-"))
            .filter_map(|l| {
                let cells: Vec<&str> = l.split('|').map(str::trim).collect();
                Some((cells.get(1)?.trim_matches('`').to_string(), cells.get(2)?.to_string()))
            })
            .collect();
        for (flag, status) in FLAGS {
            let row = rows.iter().find(|(f, _)| f == flag);
            assert_eq!(row.map(|(_, s)| s.as_str()), Some(status.as_str()), "docs/sdk.md row for {flag}");
        }
        assert_eq!(rows.len(), FLAGS.len(), "docs/sdk.md lists flags the code does not: {rows:?}");
        // Every Claude Code flag the parser takes is in the table.
        let command = <PrintArgs as clap::CommandFactory>::command();
        for arg in command.get_arguments() {
            let Some(long) = arg.get_long() else { continue };
            // Hidden: the Claude Code flags accepted and only warned about (`accepted.rs`; their
            // list is held to each version's `--help` by tests/print_recorded.rs).
            if RELOOP_OWN.contains(&long) || long == "help" || arg.is_hide_set() {
                continue;
            }
            assert!(
                FLAGS.iter().any(|(f, _)| f.split(", ").any(|n| n == format!("--{long}"))),
                "--{long} is not in FLAGS"
            );
        }
    }

    #[test]
    fn every_print_mode_flag_has_help_text() {
        let command = <PrintArgs as clap::CommandFactory>::command();
        for arg in command.get_arguments() {
            let id = arg.get_id().as_str();
            // A hidden flag is one `accepted.rs` takes only to warn about; it has no help to show.
            assert!(arg.get_help().is_some() || id == "help" || arg.is_hide_set(), "--{id} has no help text");
        }
    }

    #[test]
    fn subcommands_stay_reloop_s() {
        let os = |v: &[&str]| v.iter().map(std::ffi::OsString::from).collect::<Vec<_>>();
        let subs = ["run", "replay"];
        assert!(!is_print_mode(&os(&["reloop", "run", "x"]), &subs));
        assert!(!is_print_mode(&os(&["reloop"]), &subs));
        assert!(!is_print_mode(&os(&["reloop", "--help"]), &subs));
        assert!(is_print_mode(&os(&["reloop", "--output-format", "stream-json"]), &subs));
        assert!(is_print_mode(&os(&["reloop", "-p", "hello"]), &subs));
        assert!(is_print_mode(&os(&["reloop", "-v"]), &subs));
    }
}
