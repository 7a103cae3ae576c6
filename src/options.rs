//! The option groups more than one command takes, each defined once (its name, type, parser,
//! default and environment variable) and flattened into every command that takes it: the
//! `reloop` subcommands' and the print mode's.
//!
//! A command whose option means something narrower words its help for itself with
//! [`reword`] (in `mut_args`), so `--help` says what the option does there while the option
//! itself stays one definition.

use std::path::{Path, PathBuf};
use std::time::Duration;

use reloop_model::limits::{DEFAULT_API_TIMEOUT_MS, DEFAULT_STREAM_IDLE_TIMEOUT_MS};
use reloop_model::Timeouts;

pub use crate::term::output::OutputFormat;

/// Rewords flattened options' help for one command: `#[command(mut_args(reword(&[("settings",
/// "...")])))]`, each text as clap shows a one-paragraph doc comment (no final period). In place:
/// `Command::mut_arg` would move the option to the end, reordering the shell completions.
pub fn reword(texts: &'static [(&'static str, &'static str)]) -> impl FnMut(clap::Arg) -> clap::Arg {
    move |arg| match texts.iter().find(|(id, _)| arg.get_id() == *id) {
        Some((_, text)) => arg.help(*text),
        None => arg,
    }
}

/// Renames the values of flattened options for one command, in place (see [`reword`]).
pub fn value_names(names: &'static [(&'static str, &'static str)]) -> impl FnMut(clap::Arg) -> clap::Arg {
    move |arg| match names.iter().find(|(id, _)| arg.get_id() == *id) {
        Some((_, name)) => arg.value_name(*name),
        None => arg,
    }
}

/// `--journal`: which journal the command reads or writes.
#[derive(clap::Args, Debug, Clone)]
pub struct JournalArg {
    /// The journal: a SQLite file [default: .reloop/journal.db under the working directory], or
    /// a PostgreSQL database many machines share (postgres://user@host/db).
    #[arg(long, env = "RELOOP_JOURNAL")]
    pub journal: Option<PathBuf>,
}

impl JournalArg {
    /// The journal path, relative to `base` unless given.
    pub fn path(&self, base: &Path) -> PathBuf {
        self.journal.clone().unwrap_or_else(|| base.join(".reloop").join("journal.db"))
    }
}

/// The session a command reads or continues.
#[derive(clap::Args, Debug, Clone)]
pub struct SessionArg {
    /// A session id, a unique id prefix, `last`, or a session file (a dump, a transcript, a .db journal).
    pub session: String,
}

/// `--json`: JSON for tools instead of text.
#[derive(clap::Args, Debug, Clone, Copy)]
pub struct JsonArg {
    /// Print JSON, for tools, instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `--output-format` of a command that shows a live run.
#[derive(clap::Args, Debug, Clone, Copy)]
pub struct OutputFormatArg {
    /// How the run is shown: streamed text, one JSON result, or Claude Code's stream-json lines.
    #[arg(long, value_enum, default_value = "text")]
    pub output_format: OutputFormat,
}

/// Where the model lives and how long to wait for it: `--base-url` and the wire's timeouts.
#[derive(clap::Args, Debug, Clone)]
pub struct ConnectionArgs {
    /// The provider's base URL, when the session's was not journaled [env: ANTHROPIC_BASE_URL
    /// or OPENAI_BASE_URL].
    #[arg(long)]
    pub base_url: Option<String>,
    #[command(flatten)]
    pub wire: WireArgs,
}

/// The model wire's timeouts, as flags with Claude Code's environment variable names.
#[derive(clap::Args, Debug, Clone)]
pub struct WireArgs {
    /// How long to wait for a response's headers (and an error's body) before giving up on the
    /// request and retrying it.
    #[arg(long, env = "API_TIMEOUT_MS", value_name = "MS", default_value_t = DEFAULT_API_TIMEOUT_MS,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub api_timeout_ms: u64,
    /// How long a streaming response may go without an event that brings content (pings do
    /// not count) before it is abandoned and retried.
    #[arg(long, env = "CLAUDE_STREAM_IDLE_TIMEOUT_MS", value_name = "MS",
          default_value_t = DEFAULT_STREAM_IDLE_TIMEOUT_MS, value_parser = clap::value_parser!(u64).range(1..))]
    pub stream_idle_timeout_ms: u64,
}

impl WireArgs {
    pub fn timeouts(&self) -> Timeouts {
        Timeouts::new(Duration::from_millis(self.api_timeout_ms), Duration::from_millis(self.stream_idle_timeout_ms))
    }
}

/// `--settings FILE`: a Claude Code settings file.
#[derive(clap::Args, Debug, Clone)]
pub struct SettingsArg {
    /// A Claude Code settings file: hooks (Stop, PreToolUse, PostToolUse) and permission rules.
    #[arg(long, value_name = "FILE")]
    pub settings: Option<PathBuf>,
}

/// The MCP servers to start: `--mcp-config` and `--strict-mcp-config`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct McpArgs {
    /// MCP servers: a file or inline JSON `{"mcpServers": {...}}`, as Claude Code reads it
    /// (repeatable); the project's `.mcp.json` is read too unless --strict-mcp-config.
    #[arg(long, value_name = "FILE|JSON", num_args = 1..)]
    pub mcp_config: Vec<String>,
    /// Use only the --mcp-config servers: the project's `.mcp.json` is not read.
    #[arg(long)]
    pub strict_mcp_config: bool,
}

/// `--max-turns N`.
#[derive(clap::Args, Debug, Clone, Copy)]
pub struct MaxTurnsArg {
    /// Stop before a turn that would exceed N turns.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_turns: Option<u32>,
}

/// `--price MODEL=INPUT,OUTPUT[,CACHE_WRITE,CACHE_READ]`: a model's prices where
/// `data/models.json` has none (a local model, a model newer than the table), so its cost is
/// counted and `--max-budget-usd` can be enforced on it.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct PriceArg {
    /// A model's prices in USD per million tokens (repeatable); cache writes default to 1.25
    /// times INPUT and cache reads to a tenth of it. Wins over data/models.json.
    #[arg(long = "price", value_name = "MODEL=INPUT,OUTPUT[,CACHE_WRITE,CACHE_READ]",
          value_parser = crate::models::parse_price)]
    pub prices: Vec<reloop_core::Price>,
}

/// `--crash-after-step N`, hidden: crash tests of the commands that write a session.
#[derive(clap::Args, Debug, Clone, Copy)]
pub struct CrashArg {
    /// Crash tests: abort the process right after journaling step N (as `kill -9` would).
    #[arg(long, value_name = "N", hide = true)]
    pub crash_after_step: Option<u64>,
}

/// How `reloop run` and the print mode read their prompt.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputFormat {
    Text,
    StreamJson,
}

/// Who answers a new session's requests.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderKind {
    Scripted,
    Anthropic,
    Openai,
}
