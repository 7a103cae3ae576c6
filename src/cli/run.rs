//! `reloop run`: a new session on a prompt, its flags read into a [`NewSession`] and launched.

use std::path::PathBuf;

use reloop_core::ContentBlock;
use reloop_hooks::Settings;
use reloop_tools::ToolRegistry;

use super::{current_dir, CliError, JournalArg};
use crate::demo;
use crate::error::Exit;
use crate::launch::permissions::PermissionFlags;
use crate::launch::NewSession;
use crate::options::{
    reword, ConnectionArgs, CrashArg, InputFormat, MaxTurnsArg, McpArgs, OutputFormatArg, PriceArg, ProviderKind,
    SettingsArg,
};
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
    /// End the run once it has cost this many US dollars (prices from data/models.json or
    /// --price; a model with neither is refused, exit 2).
    #[arg(long, value_name = "USD")]
    pub max_budget_usd: Option<f64>,
    #[command(flatten)]
    pub price: PriceArg,
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
    /// Send the session to an OpenTelemetry receiver as it runs, as a trace (OTLP over
    /// HTTP/protobuf; `/v1/traces` is added to the URL). Without it, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
    /// or OTEL_EXPORTER_OTLP_ENDPOINT turns the export on. A receiver that is down costs a warning
    /// only.
    #[arg(long, value_name = "URL", value_parser = super::export::otlp_url)]
    pub otlp_endpoint: Option<String>,
}

pub async fn run(args: RunArgs) -> Result<Exit, CliError> {
    // Listening starts first, so a signal during setup is acted on once the run exists.
    let signals = crate::launch::signals::Signals::install()?;
    let invoked_from = current_dir()?;
    if let Some(url) = &args.otlp_endpoint {
        crate::launch::otel::set_endpoint(url);
    }
    let kind = args.provider.unwrap_or(if args.script.is_some() || args.demo {
        ProviderKind::Scripted
    } else {
        ProviderKind::Anthropic
    });
    let mut stdin_messages = (args.input_format == InputFormat::StreamJson).then(stdin_user_messages);
    let mut args = args;
    if args.prompt.is_none() {
        if let Some(rx) = stdin_messages.as_mut() {
            args.prompt = rx.recv().await.map(|content| crate::launch::new::text_of(&content));
        }
    }
    let (cwd, prompt) = if args.demo {
        let beside_journal = match args.journal.journal {
            None => Some(crate::launch::journal::reloop_dir(&invoked_from)?.join("demo")),
            Some(_) => None,
        };
        let cwd = demo::workspace(beside_journal.as_deref())
            .map_err(|e| CliError::Io(format!("cannot create the demo workspace: {e}")))?;
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
    let mut tools = ToolRegistry::builtin();
    if let Some(script) = &args.script {
        recorded_tools(script, &mut tools)?;
    }
    let servers = crate::mcp::start(&args.mcp.mcp_config, args.mcp.strict_mcp_config, &cwd, &settings.other).await?;
    let (session, journal_path) =
        args.new_session(kind, cwd.clone(), journal_base, settings, settings_path).launch(&prompt, tools, &servers)?;
    if args.enqueue {
        let id = session.enqueue(vec![ContentBlock::text(prompt)])?;
        crate::term::outln!("{id}");
        return Ok(Exit::Success);
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
    let (result, code) = crate::launch::drive::drive_with(handle, &mut printer, signals).await?;
    if args.demo {
        // Name the journal only when the inspecting commands would not find it by default.
        let named = (args.journal.journal.is_some()).then_some(journal_path.as_path());
        printer.demo_footer(&result.session_id, named);
    }
    Ok(code)
}

impl RunArgs {
    /// The new session these flags ask for, in `cwd`, journaled under `journal_base`.
    fn new_session(
        &self,
        provider: ProviderKind,
        cwd: PathBuf,
        journal_base: PathBuf,
        settings: Settings,
        settings_path: Option<PathBuf>,
    ) -> NewSession {
        NewSession {
            cwd,
            journal: self.journal.clone(),
            journal_base,
            provider,
            demo: self.demo,
            enqueue: self.enqueue,
            script: self.script.clone(),
            base_url: self.connection.base_url.clone(),
            timeouts: self.connection.wire.timeouts(),
            compat: self.compat.clone(),
            model: self.model.clone(),
            max_output_tokens: self.max_output_tokens,
            fallback_model: self.fallback_model.clone(),
            sdk_agents: None,
            json_schema: None,
            system_prompt: self.system_prompt.clone(),
            append_system_prompt: self.append_system_prompt.clone(),
            thinking: self.thinking,
            thinking_switches: Default::default(),
            tool_search_off: false,
            max_turns: self.max_turns.max_turns,
            max_retries: self.max_retries,
            escalate_max_tokens: self.escalate_max_tokens,
            token_budget: self.token_budget,
            stop_hook_block_cap: self.stop_hook_block_cap,
            context_window: self.context_window,
            auto_compact: !self.no_auto_compact,
            max_budget_usd: self.max_budget_usd,
            prices: self.price.prices.clone(),
            crash_after_step: self.crash.crash_after_step,
            settings,
            settings_path,
            permissions: PermissionFlags {
                mode: self.permission_mode.clone(),
                dangerously_allow_root: self.dangerously_allow_root,
                allowed_tools: self.allowed_tools.clone(),
                disallowed_tools: self.disallowed_tools.clone(),
                add_dir: self.add_dir.clone(),
                tool_env_keep: self.tool_env_keep.clone(),
            },
        }
    }
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

/// What a cassette holds for the run besides the model's answers.
#[derive(serde::Deserialize)]
struct CassetteExtras {
    /// Tool name → the results of its calls, in call order: the tool is not run.
    #[serde(default)]
    tool_results: std::collections::BTreeMap<String, Vec<RecordedResult>>,
    /// What a run of the cassette does not reproduce (of the session it was written from).
    #[serde(default)]
    not_reproduced: Vec<String>,
}

#[derive(serde::Deserialize)]
struct RecordedResult {
    content: String,
    #[serde(default)]
    is_error: bool,
}

/// Answers the calls of each tool the cassette has `tool_results` for from them, as `rerun
/// --recorded-tools` does (`reloop prop`'s counterexamples carry the outcomes their worlds drew),
/// and says what the cassette says a run does not reproduce. The responses themselves are
/// skipped here, never held: the provider reads them.
fn recorded_tools(script: &std::path::Path, tools: &mut ToolRegistry) -> Result<(), CliError> {
    // A cassette that cannot be read is the provider's to report, as the script's.
    let Ok(file) = std::fs::File::open(script) else { return Ok(()) };
    let reader = std::io::BufReader::new(std::io::Read::take(file, reloop_model::MAX_CASSETTE_BYTES + 1));
    // Nor one that does not parse: the provider names its line and column.
    let Ok(extras) = serde_json::from_reader::<_, CassetteExtras>(reader) else { return Ok(()) };
    for note in &extras.not_reproduced {
        crate::term::errln!("reloop: the cassette does not reproduce: {note}");
    }
    for (name, results) in extras.tool_results {
        let Some(tool) = tools.get(&name).cloned() else {
            return Err(CliError::Usage(format!(
                "{}: tool_results names {name}, which is not a built-in tool",
                script.display()
            )));
        };
        let results = results.into_iter().map(|r| (r.content, r.is_error)).collect();
        let recorded = reloop_inspect::rerun::RecordedTool::new(tool, results);
        tools.register(std::sync::Arc::new(InOrder(std::sync::Arc::new(recorded))));
    }
    Ok(())
}

/// A tool whose calls run one after another, so recorded results, handed out in order, go to
/// the calls in the order the model made them (concurrent calls would take them in the order
/// their threads come).
struct InOrder(std::sync::Arc<dyn reloop_tools::Tool>);

impl reloop_tools::Tool for InOrder {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn description(&self) -> &str {
        self.0.description()
    }
    fn input_schema(&self) -> serde_json::Value {
        self.0.input_schema()
    }
    fn is_read_only(&self, input: &serde_json::Value) -> bool {
        self.0.is_read_only(input)
    }
    fn is_concurrency_safe(&self, _: &serde_json::Value) -> bool {
        false
    }
    fn call(&self, input: &serde_json::Value, ctx: &reloop_tools::ToolContext) -> reloop_tools::ToolOutput {
        self.0.call(input, ctx)
    }
}
