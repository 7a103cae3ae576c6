//! `reloop replay ID --output-format stream-json` of a session print mode ran: the stream the
//! SDK read, printed again from the journal by the same [`SdkStream`] that printed it live, fed
//! the driver's own step outputs ([`reloop_driver::outputs::step_outputs`]). Each query ends
//! with its `result` line as it did live (a `ClaudeSDKClient` session holds several), a later
//! query opens with `system/init` again, and `set_model` / `set_permission_mode` between queries
//! print their lines. Timings and the live run's partial-message choice are what the header
//! recorded ([`PrintRecord`]).

use reloop_core::profile::notified_run;
use reloop_core::{Event, Fold, State};
use reloop_driver::outputs::{result_of, step_outputs};
use reloop_driver::{RunEvent, SessionJournal};
use reloop_journal::SessionHeader;
use serde_json::Value;

use super::args::PrintArgs;
use super::clear::ClearedFrom;
use super::protocol::Wire;
use super::stream::SdkStream;
use crate::error::CliError;

/// What the header keeps of how print mode shaped its stream (`RunConfig::print`): what the
/// journal's events do not say. The live printer is built from it too ([`PrintRecord::stream`]),
/// so a replay prints with exactly the settings the live run printed with.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct PrintRecord {
    /// `--include-partial-messages`.
    pub include_partial_messages: bool,
    /// The model server's `host:port` its API errors named (none for Anthropic's own).
    pub gateway: Option<String>,
    /// `CLAUDE_CODE_MAX_OUTPUT_TOKENS` as the run read it (`modelUsage`'s `maxOutputTokens`).
    pub max_output_tokens: Option<u32>,
    /// The MCP servers as `system/init` lists them.
    pub mcp_servers: Vec<Value>,
    /// The agents' names as `system/init` lists them.
    pub agents: Vec<String>,
    /// The custom slash commands `system/init` lists.
    pub slash_commands: Vec<String>,
    /// The settings' `outputStyle`.
    pub output_style: String,
    /// `initialize`'s `forwardSubagentText`: a subagent's text and thinking are printed too.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub forward_subagent_text: bool,
    /// `--include-hook-events`: every hook's `hook_started` / `hook_response` lines.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub include_hook_events: bool,
    /// A session a stream-json `/clear` began: the session it cleared and what the `/clear`'s
    /// result line printed. Its replay starts with those lines; the cleared session's ends with
    /// its reset lines (found by [`reloop_journal::JournalBackend::cleared_from`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cleared_from: Option<ClearedFrom>,
}

impl Default for PrintRecord {
    fn default() -> Self {
        PrintRecord {
            include_partial_messages: false,
            gateway: None,
            max_output_tokens: None,
            mcp_servers: Vec::new(),
            agents: Vec::new(),
            slash_commands: Vec::new(),
            output_style: "default".to_string(),
            forward_subagent_text: false,
            include_hook_events: false,
            cleared_from: None,
        }
    }
}

impl PrintRecord {
    /// The record of a print-mode run with these arguments, servers, agents and settings view.
    pub fn of(args: &PrintArgs, mcp_servers: Vec<Value>, agents: Vec<String>, settings: (Vec<String>, String)) -> Self {
        PrintRecord {
            include_partial_messages: args.include_partial_messages,
            gateway: args.gateway(),
            max_output_tokens: crate::launch::new::env_max_output_tokens(),
            mcp_servers,
            agents,
            slash_commands: settings.0,
            output_style: settings.1,
            forward_subagent_text: false,
            include_hook_events: args.include_hook_events,
            cleared_from: None,
        }
    }

    /// The record a session's header holds (`None`: print mode did not run it).
    pub fn of_header(header: &SessionHeader) -> Option<Self> {
        let print = header.run_config.get("print").filter(|p| p.is_object())?;
        serde_json::from_value(print.clone()).ok()
    }

    /// The printer of this run's stream on `wire`, for `model` at `prices`.
    pub fn stream(&self, wire: Wire, model: String, prices: Vec<reloop_core::Price>) -> SdkStream {
        SdkStream::new(wire, model, self.include_partial_messages)
            .with_gateway(self.gateway.clone())
            .with_max_output_tokens(self.max_output_tokens)
            .with_prices(prices)
            .with_mcp_servers(self.mcp_servers.clone())
            .with_agents(self.agents.clone())
            .with_settings_view((self.slash_commands.clone(), self.output_style.clone()))
            .forwarding_subagent_text(self.forward_subagent_text)
            .with_hook_events(self.include_hook_events)
    }
}

/// Prints session `id`'s SDK stream again; `false` (nothing printed) when print mode did not
/// run it.
pub fn replay(journal: &SessionJournal, id: &str, header: &SessionHeader) -> Result<bool, CliError> {
    let Some(fork_seq) = header.parent.as_ref().map(|p| p.1) else {
        return replay_on(journal, id, header, Wire::default(), true, &mut |_| {});
    };
    // A fork's journal starts with its parent's steps, but its live run printed only the
    // queries after them (`--fork-session`, `--resume-session-at`): those are printed again.
    let (wire, lines) = Wire::capturing();
    let mut own_from = None;
    let printed = replay_on(journal, id, header, wire, true, &mut |seq| {
        if seq > fork_seq && own_from.is_none() {
            own_from = Some(lines.lock().map(|l| l.len()).unwrap_or_default());
        }
    })?;
    let lines = lines.lock().map(|l| l.clone()).unwrap_or_default();
    let out = Wire::default();
    for line in lines.iter().skip(own_from.unwrap_or(lines.len())) {
        out.line(line);
    }
    Ok(printed)
}

/// The lines [`replay`] would print, kept rather than printed (`None`: print mode did not run
/// the session). The session-file writer gives its lines the uuids these carry, as Claude Code's
/// file and stream share theirs.
pub fn stream_lines(
    journal: &SessionJournal,
    id: &str,
    header: &SessionHeader,
) -> Result<Option<Vec<Value>>, CliError> {
    let (wire, lines) = Wire::capturing();
    if !replay_on(journal, id, header, wire, false, &mut |_| {})? {
        return Ok(None);
    }
    let lines = lines.lock().map(|l| l.clone()).unwrap_or_default();
    Ok(Some(lines))
}

/// `at_step` hears each step's number before the step's lines are printed. `clears`: the lines
/// a stream-json `/clear` printed for the session are printed too (not for the session file,
/// which holds the queries' lines only).
fn replay_on(
    journal: &SessionJournal,
    id: &str,
    header: &SessionHeader,
    wire: Wire,
    clears: bool,
    at_step: &mut dyn FnMut(u64),
) -> Result<bool, CliError> {
    let Some(print) = PrintRecord::of_header(header) else { return Ok(false) };
    let capturing = wire.is_capturing();
    let model = header.run_config.get("model").and_then(Value::as_str).unwrap_or_default().to_string();
    let mut stream = print.stream(wire, model, header.core_config.prices.clone());
    let (_, started) = reloop_inspect::outputs::OutputReplay::new(header);
    stream.on_event(&started);
    // A session a `/clear` began at once printed the `/clear`'s lines after its SessionStart
    // hooks (flag 38), before anything else it journaled.
    let starts_at_clear = header.core_config.flag(reloop_core::Flag::ClearStartsSession);
    let mut clear_lines_wait = false;
    if let (true, Some(cleared)) = (clears, &print.cleared_from) {
        if starts_at_clear {
            stream.cleared_later(id, cleared);
            clear_lines_wait = true;
        } else {
            stream.cleared_start(id, cleared);
        }
    }
    // Each subagent's messages, printed (marked with its Agent call) where the live run printed
    // them: before the parent's call is answered.
    let mut children = std::collections::HashMap::new();
    for child in journal.subagents_of(id)? {
        let agent_id = reloop_core::profile::agent_id(&child.id);
        children.insert(child.tool_use_id, (agent_id, child_messages(journal, &child.id)?));
    }
    // Background agents' lines, by run, until their end is told.
    let mut background: std::collections::HashMap<String, (String, String, Vec<_>)> = Default::default();
    let mut fold = Fold::new(&header.core_config);
    // When the query in progress started (its first step), for the result's duration.
    let mut first_at: Option<u64> = None;
    let mut was_done = false;
    journal.visit_steps(id, &mut |record| {
        if crate::term::stdout_closed() && !capturing {
            return Ok(false);
        }
        let Some(before) = fold.before() else { return Ok(false) };
        at_step(record.seq);
        let session_start = reloop_core::hook::HookEventName::SessionStart;
        if clear_lines_wait
            && !matches!(&record.event, Event::HookDone { hook_event, .. } if *hook_event == session_start)
        {
            clear_lines_wait = false;
            stream.on_event(&RunEvent::Ready);
        }
        if let Event::UserInput { origin, .. } = &record.event {
            stream.set_origin(origin.clone());
        }
        // A command file's model, for its query or back after it: no line of its own.
        if let Event::SetModel { model, command: Some(_) } = &record.event {
            stream.command_model(model.clone().unwrap_or_else(|| header_model(header)));
        }
        if was_done {
            // Between queries: what the SDK changed, and the next query's `system/init`.
            match &record.event {
                Event::SetModel { model, command: None } => {
                    let shown = model.clone().unwrap_or_else(|| header_model(header));
                    stream.set_model(shown.clone());
                    stream.local_command_output(&format!("Set model to {shown}"));
                }
                Event::SetPermissionMode { mode } => stream.set_permission_mode(mode),
                // A background agent's end told: its lines, then the query (flag 44).
                Event::UserInput { origin, .. } => match notified_run(origin.as_ref()) {
                    Some(run) => {
                        if let Some((tool_use_id, agent_id, messages)) = background.remove(run) {
                            for (message, usage) in messages {
                                let (tool_use_id, agent_id) = (tool_use_id.clone(), agent_id.clone());
                                stream.on_event(&RunEvent::SubagentMessage { tool_use_id, agent_id, message, usage });
                            }
                        }
                        stream.on_event(&RunEvent::Notified { run_id: run.to_string() });
                    }
                    None => stream.next_query(),
                },
                // A compaction by hand's PreCompact runs are journaled before its request.
                Event::CompactRequested
                | Event::HookDone { hook_event: reloop_core::hook::HookEventName::PreCompact, .. } => {
                    stream.compact_by_hand()
                }
                _ => {}
            }
        }
        if let Event::ToolDone(outcome) = &record.event {
            let child = children.remove(&outcome.tool_use_id);
            let launched = outcome.tool_use_result.as_ref().is_some_and(|r| r["status"] == "async_launched");
            if let Some((agent_id, _)) = &child {
                let (tool_use_id, agent_id) = (outcome.tool_use_id.clone(), agent_id.clone());
                stream.on_event(&RunEvent::SubagentStarted { tool_use_id, agent_id, background: launched });
            }
            let (agent_id, mut messages) = child.unwrap_or_default();
            // A background agent's lines wait for its end to be told.
            if launched {
                let kept = (outcome.tool_use_id.clone(), agent_id.clone(), std::mem::take(&mut messages));
                background.insert(reloop_core::profile::run_id(&agent_id), kept);
            }
            for (message, usage) in messages {
                let (tool_use_id, agent_id) = (outcome.tool_use_id.clone(), agent_id.clone());
                stream.on_event(&RunEvent::SubagentMessage { tool_use_id, agent_id, message, usage });
            }
        }
        let (seq, at_ms, event) = (record.seq, record.at_ms, record.event);
        let outputs = fold.push(seq, event.clone(), |step| {
            step_outputs(seq, at_ms, &event, before.messages, &step.state, &step.effects, step.reason.as_ref())
        });
        first_at = first_at.or(Some(at_ms));
        for output in outputs.unwrap_or_default() {
            stream.on_event(&output);
        }
        let done = fold.state().is_some_and(State::is_done);
        // A compaction by hand the core refused (a PreCompact block) still ends its query with
        // a result, as the live run's driver reports one after every request between queries.
        if let (true, true, Event::CompactRequested, Some(state)) = (done, was_done, &event, fold.state()) {
            stream.on_event(&RunEvent::Finished(result_of(id, state, 0)));
        }
        if let (true, false, Some(state)) = (done, was_done, fold.state()) {
            let duration = at_ms.saturating_sub(first_at.unwrap_or(at_ms));
            stream.on_event(&RunEvent::Finished(result_of(id, state, duration)));
            first_at = None;
        }
        was_done = done;
        Ok(true)
    })?;
    if clear_lines_wait {
        stream.on_event(&RunEvent::Ready);
    }
    stream.flush_held();
    // The `/clear` that ended the session: its reset lines after the last step.
    let reader_there = capturing || !crate::term::stdout_closed();
    if clears && reader_there && !journal.cleared_from(id)?.is_empty() {
        stream.reset_lines();
    }
    Ok(true)
}

fn header_model(header: &SessionHeader) -> String {
    header.run_config.get("model").and_then(Value::as_str).unwrap_or_default().to_string()
}

/// A child's messages as its live run handed them on: each assistant message with its
/// response's usage.
fn child_messages(
    journal: &SessionJournal,
    id: &str,
) -> Result<Vec<(reloop_core::Message, Option<reloop_core::Usage>)>, CliError> {
    let header = journal.header(id)?;
    let mut fold = Fold::new(&header.core_config);
    let (mut messages, mut usage) = (Vec::new(), None);
    journal.visit_steps(id, &mut |record| {
        let Some(before) = fold.before() else { return Ok(false) };
        let (seq, at_ms, event) = (record.seq, record.at_ms, record.event);
        let outputs = fold.push(seq, event.clone(), |step| {
            step_outputs(seq, at_ms, &event, before.messages, &step.state, &step.effects, step.reason.as_ref())
        });
        for output in outputs.unwrap_or_default() {
            match output {
                RunEvent::Response { usage: answered, .. } => usage = Some(answered),
                RunEvent::Message(m) => {
                    let usage = if m.role == reloop_core::Role::Assistant { usage.take() } else { None };
                    messages.push((m, usage));
                }
                _ => {}
            }
        }
        Ok(true)
    })?;
    Ok(messages)
}
