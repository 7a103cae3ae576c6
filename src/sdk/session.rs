//! One print-mode process: the session's set-up from the flags (and the SDK's `initialize`),
//! its first query, and with stream-json input the queries after it until stdin closes.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;

use futures::StreamExt;
use reloop_core::{ContentBlock, Event};
use reloop_driver::{RunEvent, RunHandle, RunResult, Session};
use reloop_hooks::Settings;
use reloop_tools::{PermissionMode, ToolRegistry};
use serde_json::{json, Value};

use super::args::PrintArgs;
use super::control::{self, Initialize, SdkMcp, SdkPrompt};
use super::protocol::{self, Incoming, Wire};
use super::stream::SdkStream;
use crate::error::{CliError, Exit};
use crate::options::InputFormat;
use crate::options::OutputFormat;
use crate::term::{errln, outln};

/// The most a prompt read from stdin may hold (`--input-format text`).
const MAX_PROMPT_BYTES: u64 = 64 * 1024 * 1024;

#[path = "session_clear.rs"]
mod clear_first;
#[path = "session_command.rs"]
mod command;
#[path = "session_local.rs"]
mod local;
#[path = "session_queued.rs"]
mod queued;

/// Runs print mode, its lines on `wire`.
pub async fn run(mut args: PrintArgs, wire: Wire) -> Result<Exit, CliError> {
    check(&args)?;
    for (flag, why) in args.unhonoured() {
        errln!("reloop: warning: {flag} is accepted but not honoured: {why}");
    }
    let signals = crate::launch::signals::Signals::install()?;
    let here = crate::launch::current_dir()?;
    let cwd = std::fs::canonicalize(&here)
        .map_err(|e| CliError::Usage(format!("the working directory {} cannot be used: {e}", here.display())))?;
    apply_settings(&mut args, &cwd)?;
    match args.input_format {
        InputFormat::Text => {
            let prompt = match args.prompt.take() {
                Some(prompt) => prompt,
                None => read_prompt()?,
            };
            let project = settings(&args, &cwd)?.0.other;
            let servers = crate::mcp::start(&args.mcp.mcp_config, args.mcp.strict_mcp_config, &cwd, &project).await?;
            let setup = Setup { args, cwd, init: Initialize::default(), servers };
            let typed = vec![ContentBlock::text(prompt.clone())];
            let model = setup.args.model_name();
            let mut printer = setup
                .print_record()?
                .stream(wire.clone(), model, setup.args.price.prices.clone())
                .with_output(setup.args.output.output_format);
            if setup.clears_first(&typed) {
                setup.clear_only(&wire, &mut printer).await?;
                return Ok(Exit::Success);
            }
            // Only a new session: a resumed one has messages, and its id is its own.
            if let Some(answer) = setup.local(&typed, true)?.filter(|_| setup.starts_empty()) {
                setup.answer_first(&wire, &answer, &mut printer)?;
                return Ok(Exit::Success);
            }
            if let Some(command) = setup.command_query(&prompt)? {
                command.show(&mut printer);
            }
            let content = setup.commands(typed)?;
            if let Some(text) = setup.drop_guard()? {
                return Ok(setup.refuse(&text));
            }
            let handle = setup.start(&wire, content, None, &prompt, false)?;
            let mut persist = setup.persist(&wire);
            let mut shown = super::transcript::Persisting { persist: &mut persist, printer: &mut printer };
            let (_, code) = crate::launch::drive::drive_with(handle, &mut shown, signals).await?;
            Ok(code)
        }
        InputFormat::StreamJson => stream_session(args, cwd, wire, signals).await,
    }
}

/// Flag combinations Claude Code refuses, refused the same way (exit 2).
fn check(args: &PrintArgs) -> Result<(), CliError> {
    if args.input_format == InputFormat::StreamJson && args.output.output_format != OutputFormat::StreamJson {
        return Err(CliError::Usage("--input-format=stream-json requires --output-format=stream-json".into()));
    }
    if let Some(tool) = args.permission_prompt_tool.as_deref().filter(|t| *t != "stdio") {
        return Err(CliError::Usage(format!(
            "--permission-prompt-tool {tool}: reloop asks only over stdio (--permission-prompt-tool stdio); MCP prompt tools are not supported"
        )));
    }
    if let Some(id) = args.session_id.as_deref().filter(|id| !reloop_driver::is_uuid(id)) {
        return Err(CliError::Usage(format!("--session-id {id:?} is not a valid UUID")));
    }
    if args.fork_session && args.resume.is_none() && !args.r#continue {
        return Err(CliError::Usage("--fork-session goes with --resume or --continue".into()));
    }
    if args.resume_session_at.is_some() && args.resume.is_none() {
        return Err(CliError::Usage("--resume-session-at goes with --resume".into()));
    }
    if args.session_id.is_some() && (args.resume.is_some() || args.r#continue) && !args.fork_session {
        return Err(CliError::Usage("--session-id with --resume or --continue also needs --fork-session".into()));
    }
    Ok(())
}

/// The prompt of `--input-format text` without a PROMPT argument: all of stdin.
fn read_prompt() -> Result<String, CliError> {
    use std::io::Read;
    let mut text = String::new();
    std::io::stdin()
        .take(MAX_PROMPT_BYTES)
        .read_to_string(&mut text)
        .map_err(|e| CliError::Usage(format!("cannot read the prompt from stdin: {e}")))?;
    if text.trim().is_empty() {
        return Err(CliError::Usage(
            "Input must be provided either through stdin or as a prompt argument when using --print".into(),
        ));
    }
    Ok(text)
}

/// What the session is built from.
struct Setup {
    args: PrintArgs,
    cwd: PathBuf,
    init: Initialize,
    /// The MCP servers, started before the session.
    servers: reloop_mcp::McpSet,
}

impl Setup {
    /// The session file's keeper (`--no-session-persistence`: none written).
    fn persist(&self, wire: &Wire) -> super::transcript::Persist {
        super::transcript::Persist::new(self.args.no_session_persistence, self.args.journal.clone(), self.cwd.clone())
            .mirroring(self.args.session_mirror.then(|| wire.clone()))
    }

    fn session(&self, wire: &Wire, prompt_text: &str, keep_alive: bool) -> Result<Session, CliError> {
        let (mut settings, settings_path) = settings(&self.args, &self.cwd)?;
        self.init.register(&mut settings.hooks, wire).map_err(CliError::Usage)?;
        let mut spec = self.args.new_session(self.cwd.clone(), settings, settings_path);
        spec.sdk_agents = Some(self.sdk_agents()?);
        spec.json_schema = match (&self.args.json_schema, &self.init.json_schema) {
            (Some(text), _) => Some(crate::structured::parse_schema(text).map_err(CliError::Usage)?),
            (None, schema) => schema.clone(),
        };
        spec.system_prompt = match (&self.args.system_prompt, &self.args.system_prompt_file) {
            (Some(text), _) => Some(text.clone()),
            (None, Some(file)) => Some(std::fs::read_to_string(file).map_err(|e| {
                CliError::Usage(format!("--system-prompt-file {}: cannot read it: {e}", file.display()))
            })?),
            (None, None) => self.init.system_prompt.clone(),
        };
        if spec.append_system_prompt.is_none() {
            spec.append_system_prompt = self.init.append_system_prompt.clone();
        }
        let mut tools = ToolRegistry::builtin();
        tools.retain(|name| self.args.offered(name));
        let (mut session, _) = spec.launch(prompt_text, tools, &self.servers)?;
        session.run.print = Some(serde_json::to_value(self.print_record()?).map_err(|e| CliError::Io(e.to_string()))?);
        // The id is chosen here so the summary message of a compaction can name the session's file.
        let id = self.args.session_id.clone().unwrap_or_else(reloop_driver::new_session_id);
        let transcript = super::transcript::transcript_of(&self.cwd, &id, !self.args.no_session_persistence);
        session = session.with_keep_alive(keep_alive).with_session_id(Some(id)).with_transcript(transcript);
        // `--tools` without Agent leaves the project's agents out, like any tool it does not list.
        if !self.args.offered(reloop_driver::agents::AGENT_TOOL) {
            session = session.with_agents(None);
        }
        if self.args.permission_prompt_tool.as_deref() == Some("stdio") {
            session = session.with_prompt(Arc::new(SdkPrompt(wire.clone())));
        }
        Ok(session)
    }

    /// How this run's stream is shaped, as the header records it and the printer is built.
    fn print_record(&self) -> Result<super::replay::PrintRecord, CliError> {
        let (agents, view) = (self.agent_names(), self.settings_view()?);
        let mut record = super::replay::PrintRecord::of(&self.args, crate::mcp::status(&self.servers), agents, view);
        record.forward_subagent_text = self.init.forward_subagent_text;
        Ok(record)
    }

    /// What `init` reports of the settings: the custom slash commands found and `outputStyle`.
    fn settings_view(&self) -> Result<(Vec<String>, String), CliError> {
        let sources = crate::settings::Sources::parse(self.args.setting_sources.as_deref())?;
        let commands = crate::slash::list(&self.cwd, crate::settings::user_dir().as_deref(), &sources);
        let (settings, _) = settings(&self.args, &self.cwd)?;
        let style = settings.other.get("outputStyle").and_then(Value::as_str).unwrap_or("default").to_string();
        Ok((commands, style))
    }

    /// The app's agents, from `--agents` and `initialize`.
    fn sdk_agents(&self) -> Result<Option<Value>, CliError> {
        control::sdk_agents(self.args.agents.as_deref(), self.init.agents.as_ref()).map_err(CliError::Usage)
    }

    /// The agents' names as `system/init` lists them.
    fn agent_names(&self) -> Vec<String> {
        let sdk = self.sdk_agents().ok().flatten();
        control::agent_catalog(&self.cwd, sdk.as_ref()).into_iter().map(|d| d.name).collect()
    }

    /// Why `--resume-drops-turn` refuses this resume, worded as Claude Code words it; `None`
    /// when it lets it go on (or is not given, or `--resume-session-at` names no line: that is
    /// the resume's own error).
    fn drop_guard(&self) -> Result<Option<String>, CliError> {
        let (Some(turn), Some(at), Some(target)) =
            (&self.args.resume_drops_turn, &self.args.resume_session_at, &self.args.resume)
        else {
            return Ok(None);
        };
        let journal = self.args.journal.open(&self.cwd, crate::launch::journal::Open::Reading)?;
        let id = journal.resolve(target)?;
        let entries = super::transcript::session_entries(&journal, &id)?;
        let Some(discarded) = super::drop_guard::after(&entries, at) else { return Ok(None) };
        Ok(super::drop_guard::check(discarded, turn).map(|reason| super::drop_guard::refusal(at, turn, &reason)))
    }

    /// A refused resume ends as Claude Code's does: its text on stderr, an error result, exit 1.
    fn refuse(&self, text: &str) -> Exit {
        errln!("{text}");
        if self.args.output.output_format == OutputFormat::StreamJson {
            let id = self.args.session_id.clone().unwrap_or_else(reloop_driver::new_session_id);
            let line = super::drop_guard::result_line(&id, &reloop_driver::new_session_id(), text);
            outln!("{line}");
        }
        Exit::Failed
    }

    /// Starts the first query: a new session, or `--resume` / `--continue` of a finished one.
    fn start(
        &self,
        wire: &Wire,
        content: Vec<ContentBlock>,
        origin: Option<Value>,
        prompt_text: &str,
        keep_alive: bool,
    ) -> Result<RunHandle, CliError> {
        let mut session = self.session(wire, prompt_text, keep_alive)?;
        let target = match (&self.args.resume, self.args.r#continue) {
            (Some(id), _) => id.clone(),
            (None, true) => "last".to_string(),
            (None, false) => {
                return Ok(session.start_after(self.switch_for(prompt_text)?, content, origin, Vec::new())?)
            }
        };
        let Some(journal) = session.journal.as_mut() else {
            return Err(CliError::Usage("resuming needs the journal".into()));
        };
        let id = journal.resolve(&target)?;
        let header = journal.header(&id)?;
        // The session is walked, never held: to find the line's step, then to fold it there.
        let (at, last) = match &self.args.resume_session_at {
            Some(line) => {
                let (found, last) = step_of_line(journal, &id, line)?;
                // Not a stream line: a line of the session file (`get_session_messages`' uuids).
                let found = match found {
                    Some(found) => Some(found),
                    None => super::transcript::step_of_transcript_line(journal, &id, line)?,
                };
                let found = found.ok_or_else(|| {
                    CliError::Usage(format!("--resume-session-at {line}: no line of session {id} has that uuid"))
                })?;
                (Some(found), last)
            }
            None => (None, 0),
        };
        let prefix = crate::launch::fork::fork_point(journal, &id, at, &header.core_config, "resume")?;
        // With no line given, the fork point is the session's last step.
        let last = if at.is_some() { last } else { prefix.at };
        let at = prefix.at;
        if !prefix.state.is_done() {
            return Err(CliError::Usage(format!(
                "session {id} was still working at step {at} ({}): only a finished query takes a new prompt; \
                 `reloop resume {id}` continues it",
                prefix.state.phase()
            )));
        }
        let (id, state) = if self.args.fork_session || at != last {
            let mut fork =
                crate::launch::fork::fork_header(&header, at, &header.core_config, None, None, prefix.requests_done)?;
            if let Some(given) = &self.args.session_id {
                fork.id = given.clone();
            }
            // The state is folded again as the steps are written: one is held at a time.
            drop(prefix);
            let state = crate::launch::fork::write_fork(journal, &fork, &id, at, &header.core_config)?;
            (fork.id, state)
        } else {
            (id, prefix.state)
        };
        let mut first = Vec::new();
        let ctx = state.context();
        let asked = self.args.model.as_deref().map(|m| self.args.resolve_model(m));
        if let Some(model) = asked.filter(|m| m.as_str() != ctx.current_model()) {
            first.push(Event::SetModel { model: Some(model), command: None });
        }
        if let Some(mode) = &self.args.permission_mode {
            let journaled = ctx.permission_mode().map(str::to_string).or_else(|| header_mode(&header));
            if journaled.as_deref() != Some(mode.as_str()) {
                first.push(Event::SetPermissionMode { mode: mode.clone() });
            }
        }
        first.extend(self.switch_for(prompt_text)?);
        first.push(Event::UserInput { content, origin, local: Vec::new() });
        Ok(session.resume_with_all(&id, first)?)
    }
}

/// The permission mode a session's header recorded.
fn header_mode(header: &reloop_journal::SessionHeader) -> Option<String> {
    header.run_config.pointer("/permissions/mode").and_then(Value::as_str).map(str::to_string)
}

/// The step whose output carried the line `uuid` (line uuids are derived from the step), and
/// the session's last step.
fn step_of_line(
    journal: &reloop_driver::SessionJournal,
    session: &str,
    uuid: &str,
) -> Result<(Option<u64>, u64), CliError> {
    let (mut found, mut last) = (None, 0);
    journal.visit_steps(session, &mut |step| {
        if found.is_none() && (0..64).any(|n| reloop_driver::line_uuid(session, step.seq, n) == uuid) {
            found = Some(step.seq);
        }
        last = step.seq;
        Ok(true)
    })?;
    Ok((found, last))
}

/// The session's settings: the user, project and local files `--setting-sources` lets in, then
/// `--settings` (a file, or an inline JSON object; only a file is re-read on `reloop resume`).
fn settings(args: &PrintArgs, cwd: &std::path::Path) -> Result<(Settings, Option<PathBuf>), CliError> {
    let loaded = load_settings(args, cwd)?;
    Ok((loaded.settings, loaded.flag_path))
}

fn load_settings(args: &PrintArgs, cwd: &std::path::Path) -> Result<crate::settings::Loaded, CliError> {
    let sources = crate::settings::Sources::parse(args.setting_sources.as_deref())?;
    let (user, config) = (crate::settings::user_dir(), crate::settings::global_config());
    crate::settings::load(args.settings.as_deref(), &sources, cwd, user.as_deref(), config.as_deref())
}

/// What the settings change before anything starts: their `env` goes into the environment (tools
/// and hooks inherit it), and their `model` is used when neither `--model` nor `ANTHROPIC_MODEL`
/// names one (Claude Code's order).
fn apply_settings(args: &mut PrintArgs, cwd: &std::path::Path) -> Result<(), CliError> {
    let loaded = load_settings(args, cwd)?;
    crate::settings::apply_env(&loaded.settings);
    if args.model_flag().is_none() {
        args.model = loaded.model;
    }
    Ok(())
}

/// Settings the SDK changed before the first prompt: they shape the session's header.
#[derive(Default)]
struct Early {
    model: Option<Option<String>>,
    mode: Option<String>,
}

/// `--input-format stream-json`: the long-lived session the Agent SDKs drive.
async fn stream_session(
    args: PrintArgs,
    cwd: PathBuf,
    wire: Wire,
    signals: crate::launch::signals::Signals,
) -> Result<Exit, CliError> {
    // The servers start before the SDK's first request, so `mcp_status` can answer for them; the
    // SDK's in-process ones need its control channel, so they start once `initialize` has named
    // them all (the Python SDK in `--mcp-config`, the TypeScript SDK in `initialize`), or at the
    // first prompt if no `initialize` comes.
    let project = settings(&args, &cwd)?.0.other;
    let (mut servers, flagged) =
        crate::mcp::start_deferring_sdk(&args.mcp.mcp_config, args.mcp.strict_mcp_config, &cwd, &project, true).await?;
    let mut sdk_servers = Some(flagged);
    let mut incoming = protocol::read_stdin(wire.clone());
    let mut init = Initialize::default();
    let mut early = Early::default();
    let model_name = args.model_name();
    let (first, origin, stamp) = loop {
        match incoming.recv().await {
            Some(Incoming::User(content, origin, stamp)) => {
                if let Some(names) = sdk_servers.take() {
                    servers.extend(crate::mcp::start_sdk(&names, &[], Arc::new(SdkMcp(wire.clone()))).await);
                }
                break (content, origin, stamp);
            }
            Some(Incoming::Request { id, request }) => match subtype(&request) {
                "initialize" => match Initialize::parse(&request) {
                    Ok(parsed) => {
                        for what in &parsed.unhonoured {
                            errln!("reloop: warning: {what} is accepted but not honoured");
                        }
                        let sdk = control::sdk_agents(args.agents.as_deref(), parsed.agents.as_ref()).ok().flatten();
                        let agents = control::agent_catalog(&cwd, sdk.as_ref());
                        let sources = crate::settings::Sources::parse(args.setting_sources.as_deref())?;
                        let commands = crate::slash::described(&cwd, crate::settings::user_dir().as_deref(), &sources);
                        wire.respond(&id, Ok(control::initialize_response(&model_name, &agents, commands)));
                        if let Some(mut names) = sdk_servers.take() {
                            for name in &parsed.sdk_mcp_servers {
                                if !names.contains(name) {
                                    names.push(name.clone());
                                }
                            }
                            // The SDK answers these while this waits: its answers reach the wire
                            // from the stdin reader.
                            let channel = Arc::new(SdkMcp(wire.clone()));
                            servers.extend(crate::mcp::start_sdk(&names, &parsed.sdk_mcp_timeouts, channel).await);
                        }
                        init = parsed;
                    }
                    Err(e) => wire.respond(&id, Err(e)),
                },
                "set_model" => match requested_model(&request) {
                    Ok(model) => {
                        early.model = Some(model);
                        wire.respond(&id, Ok(Value::Null));
                    }
                    Err(e) => wire.respond(&id, Err(e)),
                },
                "set_permission_mode" => match requested_mode(&request, &args) {
                    Ok(mode) => {
                        wire.respond(&id, Ok(json!({"mode": mode.as_str()})));
                        early.mode = Some(mode.as_str().to_string());
                    }
                    Err(e) => wire.respond(&id, Err(e)),
                },
                "interrupt" => wire.respond(&id, Ok(queued::interrupt_receipt(&args.compat, &VecDeque::new(), None))),
                other => {
                    wire.respond(&id, common_request(other, &request, &model_name, None, &crate::mcp::status(&servers)))
                }
            },
            // The stdin reader hands these to the wire itself.
            Some(Incoming::Response { .. } | Incoming::Cancel { .. }) => {}
            None => {
                return Err(CliError::Usage(
                    "Input must be provided either through stdin or as a prompt argument when using --print".into(),
                ))
            }
        }
    };
    let mut args = args;
    if let Some(model) = early.model {
        args.model = model;
    }
    if let Some(mode) = early.mode {
        args.permission_mode = Some(mode);
    }
    let prompt_text = crate::launch::new::text_of(&first);
    let setup = Setup { args, cwd, init, servers };
    let model = setup.args.model.as_deref().map(|m| setup.args.resolve_model(m)).unwrap_or(model_name);
    let mut stream = setup.print_record()?.stream(wire.clone(), model, setup.args.price.prices.clone());
    if setup.clears_first(&first) {
        let begun = setup.clear_first(&wire, &mut stream).await?;
        let opening = Opening { cleared: None, unprompted: true, command: None, stamp: None };
        return serve(Some(begun), opening, &mut stream, &mut incoming, &wire, &setup, signals).await;
    }
    // Only a new session: a resumed one has messages, and a later run would not resume it.
    if let Some(answer) = setup.local(&first, true)?.filter(|_| setup.starts_empty()) {
        // Claude Code answered it itself: the session's first run starts with the next message.
        let id = setup.answer_first(&wire, &answer, &mut stream)?;
        let opening = Opening { cleared: Some(id), unprompted: false, command: None, stamp: None };
        return serve(None, opening, &mut stream, &mut incoming, &wire, &setup, signals).await;
    }
    let command = setup.command_query(&prompt_text)?;
    if let Some(command) = &command {
        command.show(&mut stream);
    }
    let first = setup.commands(first)?;
    if let Some(text) = setup.drop_guard()? {
        return Ok(setup.refuse(&text));
    }
    let handle = setup.start(&wire, first, origin.clone(), &prompt_text, true)?;
    stream.set_origin(origin);
    serve(
        Some(handle),
        Opening { cleared: None, unprompted: false, command, stamp },
        &mut stream,
        &mut incoming,
        &wire,
        &setup,
        signals,
    )
    .await
}

/// How [`serve`] finds the session: the id a first prompt answered locally gave it (its first
/// run then starts with the next message), whether the session started without a prompt (a
/// first `/clear` began it), the command whose model the running query has, and the uuid the
/// host stamped its message with.
struct Opening {
    cleared: Option<String>,
    unprompted: bool,
    command: Option<command::CommandQuery>,
    stamp: Option<String>,
}

/// The queries of a kept-alive session, until stdin closes and the last one is over; exits as
/// the last query ended (see [`crate::launch::drive::live_exit_code`]).
async fn serve(
    handle: Option<RunHandle>,
    opening: Opening,
    stream: &mut SdkStream,
    incoming: &mut tokio::sync::mpsc::UnboundedReceiver<Incoming>,
    wire: &Wire,
    setup: &Setup,
    signals: crate::launch::signals::Signals,
) -> Result<Exit, CliError> {
    // No handle yet: the first prompt was answered locally, and `cleared` names the session.
    let mut control = handle.as_ref().map_or_else(reloop_driver::AbortHandle::detached, RunHandle::abort_handle);
    // After a `/clear` the session the signal stops is the new one.
    let on_signal = Arc::new(std::sync::Mutex::new(control.clone()));
    let signalled = on_signal.clone();
    let mut handle = handle;
    // A first prompt answered locally (or a first `/clear`) already ended well.
    let answered_first = opening.cleared.is_some() || opening.unprompted;
    // The id a first prompt answered locally gave the session its next message starts.
    let mut cleared = opening.cleared;
    // The session started without a prompt (a `/clear` began it): its first message starts its
    // first query, whose `system/init` its start holds.
    let mut unprompted = opening.unprompted;
    // The command whose file's model the running query is asked with: the session goes back
    // to `chosen` (the SDK's last `set_model`, `None` the configured model) when it ends.
    let mut command = opening.command;
    let mut chosen: Option<String> = None;
    let mut persist = setup.persist(wire);
    let watch = signals.watch(Arc::new(move || {
        if let Ok(session) = signalled.lock() {
            session.abort();
            session.close();
        }
    }));
    let (mut running, mut stdin_open, mut closed, mut reader_gone) =
        (handle.is_some() && !unprompted, true, false, false);
    let mut waiting: VecDeque<super::batch::Queued> = VecDeque::new();
    let mut lifecycle = super::lifecycle::Lifecycle::new(wire.clone(), &setup.args.compat);
    if let Some(handle) = &handle {
        lifecycle.started(handle.session_id(), opening.stamp.into_iter().collect(), false);
    }
    let mut last: Option<RunResult> = None;
    // A prompt was answered locally: a session of only those ended well.
    let mut answered = answered_first;
    loop {
        tokio::select! {
            event = super::clear::next_event(&mut handle), if handle.is_some() => {
                let Some(event) = event else { break };
                persist.on_event(&event);
                stream.on_event(&event);
                if let RunEvent::Finished(result) = event {
                    // Claude Code's session crashes on a callback's answer for another event.
                    let crashed = matches!(result.terminal.stop, reloop_core::Stop::HookAnswerRejected { .. });
                    last = Some(result);
                    running = false;
                    lifecycle.ended(session_of(&handle));
                    if let Some(ran) = command.take() {
                        ran.end(&control, stream, chosen.clone(), chosen.clone().unwrap_or_else(|| setup.args.model_name()));
                    }
                    if crashed {
                        (stdin_open, closed) = (false, true);
                        control.close();
                    } else if let Some(stamp) = super::batch::compact_next(&mut waiting) {
                        lifecycle.started(session_of(&handle), stamp.into_iter().collect(), true);
                        // A `/compact` that queued runs when the query ends, as Claude Code runs
                        // it (`sdk36/queued_compact`); what queued after it waits for its end.
                        stream.compact_by_hand();
                        control.compact();
                        running = true;
                    } else if let Some((next, origin, ran, stamps)) = setup.next_queued(&mut waiting)? {
                        lifecycle.started(session_of(&handle), stamps, true);
                        if let Some(ran) = &ran {
                            ran.begin(&control, stream);
                        }
                        command = ran;
                        stream.next_query();
                        stream.set_origin(origin.clone());
                        control.send_after_local(next, origin, stream.take_local_lines());
                        running = true;
                    } else if !stdin_open && !closed {
                        control.close();
                        closed = true;
                    }
                }
                if crate::term::stdout_closed() && !reader_gone {
                    // Nobody reads the session any more: stop it, as a closed pipe stops Claude Code.
                    reader_gone = true;
                    crate::launch::signals::mark_ending();
                    control.abort();
                    control.close();
                    closed = true;
                }
            }
            line = incoming.recv(), if stdin_open => match line {
                Some(Incoming::User(content, origin, uuid)) if running => {
                    lifecycle.queued(session_of(&handle), uuid.as_deref());
                    waiting.push_back((setup.queued(content)?, origin, uuid))
                }
                Some(Incoming::User(content, ..)) if super::clear::is_command(&content, "/clear") && !closed => {
                    if let Some(mut old) = handle.take() {
                        control.clear();
                        while let Some(event) = old.next().await {
                            persist.on_event(&event);
                            stream.on_event(&event);
                        }
                        old.finish().await?;
                    }
                    // The session it begins starts now, its SessionStart hooks with it (flag 38).
                    let id = reloop_driver::new_session_id();
                    let begun = setup.start_cleared(wire, id.clone(), stream.clear_to(&id, last.as_ref()))?;
                    control = begun.abort_handle();
                    if let Ok(mut session) = on_signal.lock() {
                        *session = begun.abort_handle();
                    }
                    (handle, unprompted, cleared) = (Some(begun), true, None);
                }
                Some(Incoming::User(content, ..)) if super::clear::is_command(&content, "/compact") && handle.is_some() && !closed => {
                    stream.compact_by_hand();
                    control.compact();
                    running = true;
                }
                Some(Incoming::User(content, ..))
                    if !closed && matches!(setup.local(&content, handle.is_none()), Ok(Some(_))) =>
                {
                    if let Ok(Some(answer)) = setup.local(&content, handle.is_none()) {
                        stream.answer_locally(&answer, last.as_ref(), None);
                        answered = true;
                    }
                }
                Some(Incoming::User(content, origin, stamp)) if handle.is_none() => {
                    let id = cleared.take().unwrap_or_else(reloop_driver::new_session_id);
                    command = setup.command_query(&crate::launch::new::text_of(&content))?;
                    if let Some(ran) = &command {
                        ran.show(stream);
                    }
                    stream.set_origin(origin.clone());
                    let started = setup.start_fresh(wire, (content, origin), id, stream.take_local_lines())?;
                    control = started.abort_handle();
                    if let Ok(mut session) = on_signal.lock() {
                        *session = started.abort_handle();
                    }
                    lifecycle.started(started.session_id(), stamp.into_iter().collect(), false);
                    handle = Some(started);
                    running = true;
                }
                Some(Incoming::User(content, origin, stamp)) => {
                    lifecycle.started(session_of(&handle), stamp.into_iter().collect(), false);
                    command = setup.command_query(&crate::launch::new::text_of(&content))?;
                    if let Some(ran) = &command {
                        ran.begin(&control, stream);
                    }
                    let content = setup.commands(content)?;
                    // An unprompted start's `system/init` is held for its first query already.
                    if !std::mem::take(&mut unprompted) {
                        stream.next_query();
                    }
                    stream.set_origin(origin.clone());
                    control.send_after_local(content, origin, stream.take_local_lines());
                    running = true;
                }
                Some(Incoming::Request { id, request }) => {
                    let answer = match subtype(&request) {
                        "interrupt" => {
                            if running {
                                control.abort();
                                lifecycle.interrupted();
                            }
                            let cancelled = queued::cancel_queued(&setup.args.compat, &request, &mut waiting);
                            if let Some(uuids) = &cancelled {
                                lifecycle.cancelled(session_of(&handle), uuids);
                            }
                            Ok(queued::interrupt_receipt(&setup.args.compat, &waiting, cancelled))
                        }
                        "set_model" => requested_model(&request).map(|model| {
                            let model = model.map(|m| setup.args.resolve_model(&m));
                            chosen = model.clone();
                            let shown = model.clone().unwrap_or_else(|| setup.args.model_name());
                            control.set_model(model);
                            stream.set_model(shown.clone());
                            stream.local_command_output(&format!("Set model to {shown}"));
                            Value::Null
                        }),
                        "set_permission_mode" => requested_mode(&request, &setup.args).map(|mode| {
                            control.set_permission_mode(mode);
                            stream.set_permission_mode(mode.as_str());
                            json!({"mode": mode.as_str()})
                        }),
                        "initialize" => Err("initialize: the session is already initialized".into()),
                        other => common_request(
                            other,
                            &request,
                            stream.model(),
                            Some(stream),
                            &crate::mcp::status(&setup.servers),
                        ),
                    };
                    wire.respond(&id, answer);
                }
                // The stdin reader hands these to the wire itself.
                Some(Incoming::Response { .. } | Incoming::Cancel { .. }) => {}
                None => {
                    stdin_open = false;
                    wire.close();
                    if !running && waiting.is_empty() && !closed {
                        control.close();
                        closed = true;
                    }
                }
            },
            // Stdin closed after a first prompt answered locally, before any message started
            // the session.
            else => break,
        }
    }
    if let Some(handle) = handle {
        handle.finish().await?;
    }
    stream.flush_held();
    let is_error = match (last, answered) {
        (Some(last), _) => last.is_error,
        (None, true) => false,
        (None, false) => return Err(CliError::Io("the session ended without a result".into())),
    };
    Ok(crate::launch::drive::live_exit_code(&watch, reader_gone, is_error))
}

fn subtype(request: &Value) -> &str {
    request.get("subtype").and_then(Value::as_str).unwrap_or("")
}

/// `set_model`'s model: a name, or `null` for the default.
fn requested_model(request: &Value) -> Result<Option<String>, String> {
    match request.get("model") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(model)) if model == "default" => Ok(None),
        Some(Value::String(model)) => control::check_model_name(model).map(|()| Some(model.clone())),
        Some(_) => Err("set_model: model must be a string or null".into()),
    }
}

/// `set_permission_mode`'s mode, refused as the flag would be (bypass as root needs consent).
fn requested_mode(request: &Value, args: &PrintArgs) -> Result<PermissionMode, String> {
    let text = request.get("mode").and_then(Value::as_str).ok_or("set_permission_mode: mode must be a string")?;
    let mode: PermissionMode = text.parse().map_err(|e: reloop_tools::PermissionError| e.to_string())?;
    if mode == PermissionMode::BypassPermissions
        && crate::launch::permissions::running_as_root()
        && !args.dangerously_allow_root
    {
        return Err("set_permission_mode: bypassPermissions is refused when running as root (start reloop with --dangerously-allow-root if you mean it)".into());
    }
    Ok(mode)
}

/// Requests answered the same before and during the session.
fn common_request(
    subtype: &str,
    request: &Value,
    model: &str,
    stream: Option<&SdkStream>,
    mcp: &[Value],
) -> Result<Value, String> {
    match subtype {
        "mcp_status" => Ok(json!({"mcpServers": mcp})),
        "get_context_usage" => {
            let window = crate::models::context_window(model);
            let used = stream.map_or(0, SdkStream::context_tokens);
            let percentage = if window == 0 { 0.0 } else { used as f64 * 100.0 / window as f64 };
            Ok(json!({
                "totalTokens": used, "maxTokens": window, "rawMaxTokens": window,
                "percentage": percentage, "model": model, "categories": [],
            }))
        }
        "mcp_message" => control::mcp_message_from_sdk(request),
        "" => Err("a control_request without a subtype".into()),
        other => Err(format!("Unsupported control request subtype: {other}")),
    }
}

/// The running session's id, for the lifecycle lines (none before the first message started one).
fn session_of(handle: &Option<RunHandle>) -> &str {
    handle.as_ref().map_or("", RunHandle::session_id)
}
