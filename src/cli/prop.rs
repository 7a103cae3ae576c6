//! `reloop prop`: property tests of a loop configuration from the command line. The
//! configuration is read as `reloop run` reads it (or from a recorded session's header), the
//! worlds are drawn and checked by `reloop-prop`, and a falsified property's shrunk
//! counterexample is journaled as a session and written as a cassette.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use reloop_core::Config;
use reloop_hooks::Settings;
use reloop_prop::{OfferedTool, Property, Report, RunOptions, Setup};
use reloop_tools::ToolRegistry;
use serde_json::{json, Value};

use super::reading::open;
use super::{current_dir, CliError, JournalArg};
use crate::error::Exit;
use crate::options::{JsonArg, MaxTurnsArg, McpArgs, SettingsArg};
use crate::term::outln;

/// Whether hooks are simulated (a verdict drawn per run) or the settings' commands run.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum HooksMode {
    Simulate,
    Run,
}

#[derive(clap::Args, Debug)]
pub struct PropArgs {
    /// A property every case must keep, `NAME: EXPR`, EXPR a CEL expression over the case's
    /// summary (requests, turns, terminal_reason, cost_usd, input_tokens, output_tokens,
    /// stop_hook_blocks, retries, compactions, recoveries, tool_calls, denials, tool_errors, steps,
    /// config.*)
    /// (repeatable).
    #[arg(long, value_name = "NAME: EXPR")]
    pub property: Vec<String>,
    /// A file of properties, one `NAME: EXPR` a line (`#` comments).
    #[arg(long, value_name = "FILE")]
    pub properties: Option<PathBuf>,
    /// Cases to draw.
    #[arg(long, value_name = "N", default_value_t = 512)]
    pub cases: u32,
    /// The seed the cases are drawn from [default: a new one, printed].
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// The most model responses one case draws (1 to 1000).
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = clap::value_parser!(u16).range(1..=1000))]
    pub max_responses: u16,
    /// Take the configuration (limits, budgets, profile, tools, settings) from this recorded
    /// session's header; the other configuration flags are then not read.
    #[arg(long, value_name = "SESSION")]
    pub from: Option<String>,
    /// `simulate`: each hook run's verdict is drawn (pass, block, prevent, error). `run`: the
    /// settings file's hook commands run, contained as tools are, in a scratch copy of --workspace.
    #[arg(long, value_enum, default_value = "simulate")]
    pub hooks: HooksMode,
    /// With --hooks run: the workspace the hooks run in (copied to a scratch folder first)
    /// [default: the current directory].
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// The tools offered, by name (comma separated) [default: every built-in tool and the MCP
    /// servers' tools].
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    pub tools: Vec<String>,
    #[command(flatten)]
    pub settings: SettingsArg,
    /// The permission mode each call is judged in, with the settings file's rules, as a
    /// non-interactive `reloop run` judges it (an ask is refused): default, acceptEdits, plan,
    /// bypassPermissions or dontAsk.
    #[arg(long, value_name = "MODE", default_value = "default")]
    pub permission_mode: String,
    #[command(flatten)]
    pub mcp: McpArgs,
    /// Whose loop rules to follow: claude-code-2.1.332, claude-code-2.1.197, or reloop.
    #[arg(long, env = "RELOOP_COMPAT", value_name = "PROFILE", default_value = "claude-code-2.1.332")]
    pub compat: String,
    /// The model whose limits and prices apply [default: the profile's].
    #[arg(long)]
    pub model: Option<String>,
    #[command(flatten)]
    pub max_turns: MaxTurnsArg,
    /// Retries of one failed request.
    #[arg(long, default_value_t = 10)]
    pub max_retries: u32,
    /// Keep the model working until it has produced N output tokens.
    #[arg(long, value_name = "N")]
    pub token_budget: Option<u64>,
    /// End a run once it has cost this many US dollars.
    #[arg(long, value_name = "USD")]
    pub max_budget_usd: Option<f64>,
    /// Consecutive stop-hook blocks after which the turn ends anyway.
    #[arg(long, default_value_t = 8)]
    pub stop_hook_block_cap: u32,
    /// The model's context window in tokens (compaction's threshold follows it) [default: from
    /// data/models.json, else 200000].
    #[arg(long)]
    pub context_window: Option<u64>,
    /// Never compact before a request.
    #[arg(long)]
    pub no_auto_compact: bool,
    /// Where a counterexample's cassette is written [default: .reloop/prop under the current
    /// directory].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Also write a JUnit XML report here, one test case per property and invariant.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    #[command(flatten)]
    pub journal: JournalArg,
    #[command(flatten)]
    pub json: JsonArg,
}

pub async fn run(args: PropArgs) -> Result<Exit, CliError> {
    let started = jiff::Timestamp::now();
    let mut properties = Vec::new();
    for text in &args.property {
        properties.push(Property::parse_line(text).map_err(|e| CliError::Usage(e.to_string()))?);
    }
    if let Some(file) = &args.properties {
        let text = std::fs::read_to_string(file)
            .map_err(|e| CliError::Usage(format!("cannot read {}: {e}", file.display())))?;
        let parsed = Property::parse_file(&text).map_err(|e| CliError::Usage(format!("{}: {e}", file.display())))?;
        properties.extend(parsed);
    }
    let seed = args.seed.unwrap_or_else(fresh_seed);
    let (setup, settings) = match &args.from {
        Some(session) => setup_from_session(&args, session)?,
        None => setup_from_flags(&args, seed).await?,
    };
    let hooks = match args.hooks {
        HooksMode::Simulate => None,
        HooksMode::Run => {
            Some(super::prop_hooks::RealHooks::new(&settings, &args.workspace.clone().map_or_else(current_dir, Ok)?)?)
        }
    };
    let mut bar = Progress::new(args.cases, !args.json.json);
    let options = RunOptions { cases: args.cases, seed };
    let report = match &hooks {
        None => reloop_prop::run(&setup, &properties, &options, &mut |n| bar.tick(n)),
        // The hooks' processes are awaited on the runtime from this thread, which may block.
        Some(real) => tokio::task::block_in_place(|| {
            reloop_prop::run_with_hooks(&setup, &properties, &options, real, &mut |n| bar.tick(n))
        }),
    }
    .map_err(|e| CliError::Usage(e.to_string()))?;
    bar.finish();
    let runner: &dyn reloop_prop::HookRunner = match &hooks {
        Some(real) => real,
        None => &reloop_prop::Simulated,
    };
    let written = match &report.failure {
        // With real hooks the session is played again with them, on a thread that may block.
        Some(failure) => {
            Some(tokio::task::block_in_place(|| write_counterexample(&args, &setup, &report, failure, runner))?)
        }
        None => None,
    };
    if let Some(junit) = &args.junit {
        super::junit::write(junit, &junit_xml(&report, started))?;
    }
    if args.json.json {
        outln!("{}", report_json(&report, written.as_ref()));
    } else {
        print_report(&report, written.as_ref(), &args);
    }
    Ok(if report.failure.is_some() { Exit::Failed } else { Exit::Success })
}

/// A seed when none is given: the clock's nanoseconds, printed so the run can be repeated.
fn fresh_seed() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

/// The configuration `reloop run` would build from the same flags.
async fn setup_from_flags(args: &PropArgs, seed: u64) -> Result<(Setup, Settings), CliError> {
    let profile = crate::launch::new::compat(&args.compat)?;
    let rules = profile.profile();
    let model = args
        .model
        .clone()
        .unwrap_or_else(|| rules.default_model.unwrap_or(crate::launch::new::DEFAULT_MODEL).to_string());
    let price = crate::models::known_price(&model);
    if price.is_none() && args.max_budget_usd.is_some() {
        // The budget invariant would hold vacuously: an unpriced model's responses cost nothing.
        return Err(CliError::Usage(format!(
            "--max-budget-usd cannot be checked: {}",
            crate::models::unpriced(&model)
        )));
    }
    let config = Config::default()
        .with_max_turns(args.max_turns.max_turns)
        .with_model(model.clone())
        .with_max_output_tokens(rules.max_tokens_for(&model))
        .with_max_retries(args.max_retries)
        .with_retry_seed(seed)
        .with_token_budget(args.token_budget)
        .with_stop_hook_block_cap(args.stop_hook_block_cap)
        .with_context_window(args.context_window.unwrap_or_else(|| crate::models::context_window(&model)))
        .with_auto_compact(!args.no_auto_compact)
        .with_prices(price.into_iter().collect())
        .with_max_budget_usd(args.max_budget_usd)
        .with_profile(profile);
    let settings = match &args.settings.settings {
        Some(path) => Settings::from_file(path).map_err(|e| CliError::Usage(e.to_string()))?,
        None => Settings::empty(),
    };
    // MCP servers are asked for their tools once, then stopped: the cases need only the lists.
    let cwd = current_dir()?;
    let mut registry = ToolRegistry::builtin();
    if !args.mcp.mcp_config.is_empty() {
        let servers =
            crate::mcp::start(&args.mcp.mcp_config, args.mcp.strict_mcp_config, &cwd, &settings.other).await?;
        crate::mcp::register(&servers, &mut registry);
    }
    let specs: Vec<(String, Value)> = registry.specs().into_iter().map(|s| (s.name, s.input_schema)).collect();
    let mut setup = Setup::new(config);
    setup.tools = offered(&specs, &args.tools)?;
    let mode =
        args.permission_mode.parse().map_err(|e: reloop_tools::PermissionError| CliError::Usage(e.to_string()))?;
    let mut setup = setup.with_settings(&settings, mode, &cwd).map_err(|e| CliError::Usage(e.to_string()))?;
    if let Some(permissions) = &mut setup.permissions {
        // The MCP servers' tools are judged as a run judges them (never read-only).
        permissions.registry = registry;
    }
    setup.max_responses = usize::from(args.max_responses);
    setup.extra.insert("compat".into(), json!(args.compat));
    Ok((setup, settings))
}

/// The tools named (all when none are), each with its schema.
fn offered(specs: &[(String, Value)], names: &[String]) -> Result<Vec<OfferedTool>, CliError> {
    let wanted: Vec<&str> = names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()).collect();
    if let Some(unknown) = wanted.iter().find(|n| !specs.iter().any(|(name, _)| name == *n)) {
        let known: Vec<&str> = specs.iter().map(|(n, _)| n.as_str()).collect();
        return Err(CliError::Usage(format!("--tools {unknown}: no such tool; known: {}", known.join(", "))));
    }
    Ok(specs
        .iter()
        .filter(|(name, _)| wanted.is_empty() || wanted.contains(&name.as_str()))
        .map(|(name, schema)| OfferedTool::new(name.clone(), schema.clone()))
        .collect())
}

/// The configuration a recorded session ran under: its core rules as journaled, its tools and
/// its settings file (when it still exists).
fn setup_from_session(args: &PropArgs, selector: &str) -> Result<(Setup, Settings), CliError> {
    let opened = open(&args.journal)?;
    let header = opened.header(&opened.resolve(selector)?)?;
    let (settings, settings_found) = match header.run_config.get("settings").and_then(Value::as_str) {
        Some(path) if Path::new(path).exists() => {
            (Settings::from_file(Path::new(path)).map_err(|e| CliError::Usage(e.to_string()))?, true)
        }
        _ => (Settings::empty(), false),
    };
    let builtin: Vec<(String, Value)> =
        ToolRegistry::builtin().specs().into_iter().map(|s| (s.name, s.input_schema)).collect();
    let mut setup = Setup::from_header(&header, &builtin);
    let specs: Vec<(String, Value)> = setup.tools.iter().map(|t| (t.name.clone(), t.schema.clone())).collect();
    setup.tools = offered(&specs, &args.tools)?;
    // The header holds the permissions the session ran with (its settings' rules merged in);
    // the settings file still gives the hooks, when it exists.
    if settings_found {
        setup = setup.with_hooks(&settings);
    }
    setup.max_responses = usize::from(args.max_responses);
    Ok((setup, settings))
}

/// Where a counterexample went.
struct Written {
    session: String,
    cassette: PathBuf,
    run_command: String,
    /// What a run of the cassette does not reproduce, as the cassette says.
    not_reproduced: Vec<String>,
}

/// Journals the counterexample as a session (source `prop`) and writes its cassette.
fn write_counterexample(
    args: &PropArgs,
    setup: &Setup,
    report: &Report,
    failure: &reloop_prop::Failure,
    hooks: &dyn reloop_prop::HookRunner,
) -> Result<Written, CliError> {
    let cwd = current_dir()?;
    let id = reloop_driver::new_session_id();
    let dir = args.out.clone().unwrap_or_else(|| cwd.join(".reloop").join("prop"));
    std::fs::create_dir_all(&dir).map_err(|e| CliError::Io(format!("cannot create {}: {e}", dir.display())))?;
    let cassette_path = dir.join(format!("{id}.json"));
    let cassette = reloop_prop::cassette::cassette(&failure.world, setup, hooks);
    let not_reproduced: Vec<String> = cassette
        .get("not_reproduced")
        .and_then(Value::as_array)
        .map(|notes| notes.iter().filter_map(|n| n.as_str().map(str::to_string)).collect())
        .unwrap_or_default();
    let text = serde_json::to_string_pretty(&cassette).map_err(|e| CliError::Io(e.to_string()))?;
    std::fs::write(&cassette_path, text + "\n")
        .map_err(|e| CliError::Io(format!("cannot write {}: {e}", cassette_path.display())))?;
    let run_command = run_command(args, setup, &cassette_path);
    let run_config = json!({
        "provider": "prop",
        "source": "prop",
        "model": setup.config.model,
        "max_output_tokens": setup.config.max_output_tokens,
        "cwd": cwd,
        "prompt": reloop_prop::PROMPT,
        "tools": setup.tools.iter().map(|t| t.name.clone()).collect::<Vec<_>>(),
        "settings": args.settings.settings.as_ref().map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone())),
        "property": failure.name,
        "property_kind": failure.kind,
        "detail": failure.detail,
        "seed": report.seed,
        "hooks": if args.hooks == HooksMode::Run { "run" } else { "simulate" },
        "cassette": cassette_path,
        "run_command": run_command,
    });
    let trace = failure.world.simulate_with(setup, hooks);
    let mut journal = args.journal.open(&cwd, crate::launch::journal::Open::Create)?;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    reloop_prop::record::journal_trace(&mut *journal, &trace, &id, now, run_config)?;
    Ok(Written { session: id, cassette: cassette_path, run_command, not_reproduced })
}

/// The `reloop run` line that plays the cassette under the same limits.
fn run_command(args: &PropArgs, setup: &Setup, cassette: &Path) -> String {
    let c = &setup.config;
    let mut line = format!("reloop run --script {} --compat {}", cassette.display(), c.profile.name());
    // The rules judge paths against the workspace the cases were judged in.
    if let Ok(cwd) = current_dir() {
        line += &format!(" --cwd {}", cwd.display());
    }
    line += &format!(" --model {} --max-retries {}", c.model, c.max_retries);
    if let Some(n) = c.max_turns {
        line += &format!(" --max-turns {n}");
    }
    if let Some(n) = c.token_budget {
        line += &format!(" --token-budget {n}");
    }
    if let Some(usd) = c.max_budget_usd {
        line += &format!(" --max-budget-usd {usd}");
    }
    line += &format!(" --stop-hook-block-cap {} --context-window {}", c.stop_hook_block_cap, c.context_window);
    if !c.auto_compact {
        line += " --no-auto-compact";
    }
    if let Some(settings) = &args.settings.settings {
        line += &format!(" --settings {}", settings.display());
    }
    if args.permission_mode != "default" {
        line += &format!(" --permission-mode {}", args.permission_mode);
    }
    line + " " + reloop_prop::PROMPT
}

/// A progress bar on a terminal's stderr; nothing anywhere else.
struct Progress(Option<indicatif::ProgressBar>);

impl Progress {
    fn new(cases: u32, wanted: bool) -> Self {
        if !wanted || !std::io::stderr().is_terminal() {
            return Progress(None);
        }
        let bar = indicatif::ProgressBar::new(u64::from(cases));
        if let Ok(style) = indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} cases {per_sec}") {
            bar.set_style(style);
        }
        Progress(Some(bar))
    }

    fn tick(&mut self, done: u64) {
        if let Some(bar) = &self.0 {
            if done.is_multiple_of(64) {
                bar.set_position(done);
            }
        }
    }

    fn finish(&mut self) {
        if let Some(bar) = self.0.take() {
            bar.finish_and_clear();
        }
    }
}

fn print_report(report: &Report, written: Option<&Written>, args: &PropArgs) {
    outln!(
        "{} cases in {:.2} s ({:.0} cases/s), seed {}",
        report.cases,
        report.seconds,
        report.cases_per_second(),
        report.seed
    );
    for v in &report.verdicts {
        let what = v.expr.as_ref().map_or(String::new(), |e| format!(": {e}"));
        outln!("  {}  {} {}{what}", if v.holds { "ok    " } else { "FAILED" }, v.kind, v.name);
    }
    let c = &report.coverage;
    let ends: Vec<String> = c.terminal.iter().map(|(k, n)| format!("{k} {n}")).collect();
    outln!("ended: {}", ends.join(", "));
    outln!(
        "exercised: retried {}, recovered {}, compacted {}, stop hook blocked {}, hit hook cap {}, denied {}, called tools {}",
        c.retried,
        c.recovered,
        c.compacted,
        c.stop_hook_blocked,
        c.hit_hook_cap,
        c.denied,
        c.called_tools
    );
    if let (Some(f), Some(w)) = (&report.failure, written) {
        outln!("");
        outln!("falsified: {} {} (seed {})", f.kind, f.name, report.seed);
        outln!("  {}", f.detail);
        outln!("  counterexample: {}", describe_world(&f.world));
        outln!("  session:  {}   (reloop why {})", w.session, w.session);
        outln!("  cassette: {}", w.cassette.display());
        outln!("  replay it: {}", w.run_command);
        for note in &w.not_reproduced {
            outln!("  not reproduced by the cassette: {note}");
        }
        let again = if args.seed.is_some() { String::new() } else { format!(" (add --seed {})", report.seed) };
        outln!("  the same seed finds it again{again}");
    }
}

/// The world's answers in a line: `max_tokens, tool_use(Bash), 500`.
fn describe_world(world: &reloop_prop::World) -> String {
    use reloop_prop::ModelOutcome as M;
    let answers: Vec<String> = world
        .script
        .iter()
        .map(|o| match o {
            M::Text => "text".into(),
            M::Tools(n) => format!("{n} Read calls"),
            M::Error => "500".into(),
            M::Overloaded => "529 overloaded".into(),
            M::Fatal => "400".into(),
            M::MaxTokens => "max_tokens".into(),
            M::MissingToolCall => "tool_use without a call".into(),
            M::TextTokens(n) => format!("text of {n} output tokens"),
            M::Large { input_tokens, .. } => format!("{input_tokens} input tokens"),
            M::PromptTooLong => "prompt too long".into(),
            M::RateLimited { retry_after_ms } => format!("429 (retry-after {retry_after_ms:?} ms)"),
            M::StreamCut => "stream cut".into(),
            M::Stopped(s) => s.as_str().to_string(),
            M::Calls { calls, .. } => {
                let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
                format!("tool_use({})", names.join(", "))
            }
        })
        .collect();
    let mut out = format!("{} responses: {}", answers.len(), answers.join(", "));
    if world.abort_at.is_some() {
        out += "; an abort";
    }
    if !world.queue_at.is_empty() {
        out += "; queued input";
    }
    out
}

fn report_json(report: &Report, written: Option<&Written>) -> Value {
    json!({
        "seed": report.seed,
        "cases": report.cases,
        "seconds": report.seconds,
        "cases_per_second": report.cases_per_second(),
        "verdicts": report.verdicts,
        "coverage": report.coverage,
        "failure": report.failure.as_ref().map(|f| json!({
            "name": f.name,
            "kind": f.kind,
            "detail": f.detail,
            "summary": f.summary,
            "responses": f.world.script.len(),
            "counterexample": describe_world(&f.world),
            "session": written.map(|w| w.session.clone()),
            "cassette": written.map(|w| w.cassette.clone()),
            "run_command": written.map(|w| w.run_command.clone()),
            "not_reproduced": written.map(|w| w.not_reproduced.clone()),
        })),
    })
}

/// The JUnit report: one case per property and built-in invariant, a falsified one a
/// `<failure>` with its counterexample's seed. Every case checks them all at once, so each
/// shares the run's time evenly.
fn junit_xml(report: &Report, started: jiff::Timestamp) -> String {
    use super::junit::{Outcome, TestCase};
    let share = report.seconds / report.verdicts.len().max(1) as f64;
    let cases: Vec<TestCase> = report
        .verdicts
        .iter()
        .map(|v| TestCase {
            classname: "reloop.prop",
            name: format!("{} {}", v.kind, v.name),
            time: std::time::Duration::from_secs_f64(share.max(0.0)),
            outcome: match (&report.failure, v.holds) {
                (Some(f), false) => {
                    let message = format!("{} (seed {})", f.detail, report.seed);
                    Outcome::Failure { body: message.clone(), message, kind: v.kind.to_string() }
                }
                _ => Outcome::Passed,
            },
        })
        .collect();
    super::junit::document("reloop prop", started, &cases)
}
