//! `reloop run`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use futures::StreamExt;
use reloop_core::{Config, ContentBlock};
use reloop_driver::{RunConfig, RunEvent, Session};
use reloop_journal::Journal;
use reloop_model::{ModelProvider, ScriptedProvider};
use reloop_tools::ToolRegistry;

use super::{current_dir, CliError, JournalArg, OutputFormat};
use crate::demo;
use crate::output::Printer;

#[derive(clap::Args, Debug)]
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
    /// Stop before a turn that would exceed N turns.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_turns: Option<u32>,
    #[command(flatten)]
    pub journal: JournalArg,
    #[arg(long, value_enum, default_value = "text")]
    pub output_format: OutputFormat,
    /// The model to ask.
    #[arg(long, env = "ANTHROPIC_MODEL", default_value = "claude-sonnet-4-6")]
    pub model: String,
    /// The output-token limit of each response.
    #[arg(long, default_value_t = 32_000)]
    pub max_output_tokens: u32,
    /// Replace reloop's system prompt.
    #[arg(long)]
    pub system_prompt: Option<String>,
    /// Add to reloop's system prompt.
    #[arg(long)]
    pub append_system_prompt: Option<String>,
}

pub async fn run(args: RunArgs) -> Result<ExitCode, CliError> {
    let invoked_from = current_dir()?;
    let (cwd, prompt, cassette, script_path) = if args.demo {
        let cwd = demo::workspace().map_err(|e| CliError::Io(format!("cannot create the demo workspace: {e}")))?;
        let prompt = args.prompt.clone().unwrap_or_else(|| demo::PROMPT.to_string());
        (cwd, prompt, demo::CASSETTE.to_string(), None)
    } else {
        let cwd = resolve_cwd(args.cwd.as_ref(), &invoked_from)?;
        let prompt = args
            .prompt
            .clone()
            .ok_or_else(|| CliError::Usage("reloop run needs a PROMPT (or --demo for the bundled example)".into()))?;
        let Some(script) = &args.script else {
            return Err(CliError::Usage(
                "no model to ask: pass --script FILE to run a cassette, or --demo for the bundled example".into(),
            ));
        };
        let text = std::fs::read_to_string(script)
            .map_err(|e| CliError::Usage(format!("cannot read the script {}: {e}", script.display())))?;
        (cwd, prompt, text, Some(script.clone()))
    };

    let cassette = substitute_cwd(&cassette, &cwd);
    let provider: Arc<dyn ModelProvider> = Arc::new(ScriptedProvider::from_json(&cassette).map_err(|e| {
        let name = script_path.as_ref().map_or("the bundled cassette".to_string(), |p| p.display().to_string());
        CliError::Usage(format!("{name}: {e}"))
    })?);

    // The demo's workspace is temporary; its journal lives where the user ran the command.
    let journal_base = if args.demo { &invoked_from } else { &cwd };
    let journal_path = args.journal.path(journal_base);
    let journal = Journal::create_or_open(&journal_path)?;

    let system_prompt = match (&args.system_prompt, &args.append_system_prompt) {
        (Some(s), Some(a)) => Some(format!("{s}\n\n{a}")),
        (Some(s), None) => Some(s.clone()),
        (None, Some(a)) => Some(format!("{}\n\n{a}", reloop_driver::DEFAULT_SYSTEM_PROMPT)),
        (None, None) => None,
    };
    let run = RunConfig::new("scripted", args.model.clone(), cwd.clone())
        .with_script(script_path)
        .with_max_output_tokens(args.max_output_tokens)
        .with_system_prompt(system_prompt);
    let session = Session {
        provider,
        tools: ToolRegistry::builtin(),
        journal: Some(journal),
        core: Config::default().with_max_turns(args.max_turns),
        run,
    };
    let mut handle = session.start(vec![ContentBlock::text(prompt.clone())])?;
    let abort = handle.abort_handle();
    let ctrl_c = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            abort.abort();
        }
    });

    let mut printer = Printer::new(args.output_format, args.demo);
    if args.demo {
        printer.banner(&cwd, &prompt);
    }
    let mut result = None;
    while let Some(event) = handle.next().await {
        printer.on_event(&event);
        if let RunEvent::Finished(r) = event {
            result = Some(r);
        }
    }
    ctrl_c.abort();
    handle.finish().await?;
    let Some(result) = result else {
        return Err(CliError::Io("the run ended without a result".into()));
    };
    if args.demo {
        // Name the journal only when the inspecting commands would not find it by default.
        let named = (args.journal.journal.is_some()).then_some(journal_path.as_path());
        printer.demo_footer(&result.session_id, named);
    }
    Ok(if result.is_error { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

fn resolve_cwd(given: Option<&PathBuf>, invoked_from: &std::path::Path) -> Result<PathBuf, CliError> {
    let dir = given.map_or_else(|| invoked_from.to_path_buf(), |d| invoked_from.join(d));
    std::fs::canonicalize(&dir)
        .map_err(|e| CliError::Usage(format!("the working directory {} cannot be used: {e}", dir.display())))
}

/// Cassettes name files by absolute path; `{{cwd}}` lets one cassette serve any workspace.
fn substitute_cwd(cassette: &str, cwd: &std::path::Path) -> String {
    let quoted = serde_json::to_string(&cwd.display().to_string()).unwrap_or_default();
    let inner = quoted.trim_matches('"');
    cassette.replace("{{cwd}}", inner)
}
