//! Running an `Agent` call: a child session in the same journal.
//!
//! The child is a session like any other: its own header (whose `run_config.agent` names the
//! parent and the call), its own steps, its own system prompt and tools from the agent's
//! definition, the parent's permission mode and rules. The parent's call waits for the child's
//! result and journals it as the call's outcome, with what the child spent, so a replay of the
//! parent needs neither the model nor the child.
//!
//! A call finds its child by (parent, `tool_use_id`) before starting one: after a crash, the
//! resumed parent resumes an unfinished child, and takes a finished child's answer from the
//! journal, so no step and no tool of the child runs twice.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reloop_core::profile::{api_error_kind, terminated_early, ChildApiError, HandBack};
use reloop_core::{AgentUsage, Config, ContentBlock, Event, Role, ToolOutcome, ToolResultContent, ToolUse};
use reloop_hooks::HooksConfig;
use reloop_journal::{Journal, JournalBackend, Reopen};
use reloop_tools::{PermissionContext, ToolRegistry};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::agents::AgentDefinition;
use crate::config::{AgentLink, RunConfig};
use crate::error::DriverError;
use crate::hand_back::{Report, Tally};
use crate::handle::{RunEvent, RunHandle, RunResult};
use crate::journal::SessionJournal;
use crate::order::RequestOrder;
pub use crate::session::AgentSetup;
use crate::session::Session;
use reloop_core::profile::agent_id;

/// How long an aborted child may take to journal its end before the parent stops waiting.
const SETTLE: Duration = Duration::from_secs(5);

/// Runs a child session on the run loop. The loop offers the `Agent` tool whose calls land here,
/// so it sits above this module: it hands itself down as this trait instead of being imported.
pub(crate) trait RunChild: Send + Sync {
    /// Resumes the journaled session `existing`, or starts `child` anew with `prompt`.
    fn run_child(
        &self,
        child: Session,
        existing: Option<&str>,
        prompt: Vec<ContentBlock>,
    ) -> Result<RunHandle, DriverError>;
}

/// A parent session's means to run children; shared by its tool calls.
pub(crate) struct Subagents {
    pub setup: AgentSetup,
    pub order: Arc<RequestOrder>,
    pub journals: ChildJournals,
    pub parent: String,
    /// The parent's tools: each child gets those its definition allows, never `Agent`.
    pub tools: ToolRegistry,
    pub core: Config,
    pub run: RunConfig,
    pub hooks: Arc<HooksConfig>,
    pub can_use_tool: Option<crate::config::CanUseTool>,
    /// The parent's events: each child message goes there too, marked with its call.
    pub events: tokio::sync::mpsc::UnboundedSender<crate::handle::RunEvent>,
    pub prompt: Option<Arc<dyn crate::prompt::PermissionPrompt>>,
    /// What the parent had spent when its tools started: a child may spend what is left.
    pub spent: Mutex<f64>,
    /// New children start one at a time, each until its first request is out: concurrent agents'
    /// first requests take cassette answers in `tool_use` order.
    /// Taken by each `Agent` call before anything else (so in `tool_use` order), see
    /// [`Subagents::turn`].
    pub start_gate: Arc<tokio::sync::Mutex<()>>,
    /// The tasks following live children, so the parent can wait for an aborted child's end.
    pub live: Mutex<Vec<JoinHandle<()>>>,
    /// The run loop, which runs each child.
    pub runner: Arc<dyn RunChild>,
    /// The children running in the background (flag 44).
    pub background: crate::notices::Backgrounded,
}

/// Where children's sessions are journaled: each child writes through a connection of its own.
pub(crate) enum ChildJournals {
    /// The parent journals nothing: neither do its children.
    None,
    /// The SQLite file, opened anew for each child.
    Sqlite(PathBuf),
    /// A shared journal: each child connects anew.
    Shared(Reopen),
}

impl ChildJournals {
    pub(crate) fn of(journal: Option<&SessionJournal>) -> Self {
        match journal {
            None => ChildJournals::None,
            Some(SessionJournal::Sqlite(j)) => ChildJournals::Sqlite(j.path().to_path_buf()),
            Some(shared) => ChildJournals::Shared(shared.reopener()),
        }
    }

    /// A journal for one child, or none when the parent has none.
    pub(crate) fn open(&self) -> Result<Option<SessionJournal>, String> {
        let failed = |e: String| format!("cannot open the journal: {e}");
        match self {
            ChildJournals::None => Ok(None),
            ChildJournals::Sqlite(path) => {
                Journal::open_for_reading(path).map(|j| Some(j.into())).map_err(|e| failed(e.to_string()))
            }
            ChildJournals::Shared(reopen) => {
                reopen().map(|j| Some(SessionJournal::Shared(j))).map_err(|e| failed(e.to_string()))
            }
        }
    }
}

/// Sends the child an abort when the parent's call is dropped (the parent was aborted).
struct AbortOnDrop(Option<crate::AbortHandle>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if let Some(handle) = self.0.take() {
            handle.abort();
        }
    }
}

impl Subagents {
    /// A call's turn to start its child: calls queue for it as they are first polled, which is
    /// `tool_use` order, and a new child keeps it until its first request is out.
    pub(crate) async fn turn(&self) -> tokio::sync::OwnedMutexGuard<()> {
        self.start_gate.clone().lock_owned().await
    }

    /// Answers one `Agent` call, holding its [`Subagents::turn`]. `permissions` is the parent's
    /// at the time of the call (its mode may have been switched).
    pub(crate) async fn answer(
        self: Arc<Self>,
        call: ToolUse,
        permissions: Option<Arc<PermissionContext>>,
        cancel: CancellationToken,
        turn: tokio::sync::OwnedMutexGuard<()>,
    ) -> ToolOutcome {
        let started = Instant::now();
        match self.clone().run_child(&call, permissions, cancel, turn).await {
            Ok(Ended { result, agent_type, model, tally, journaled_ms }) => {
                let ran_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
                self.outcome_of(&call, (&agent_type, &model), &result, &tally, journaled_ms.unwrap_or(ran_ms))
            }
            Err(text) => ToolOutcome::error(&call.id, &format!("<tool_use_error>{text}</tool_use_error>")),
        }
    }

    /// The parent's view of the child's end: its report handed back in the profile's words
    /// (with the child's summary, under [`reloop_core::Flag::ClaudeCodeHandBack`]), or why it
    /// stopped; always what it spent.
    fn outcome_of(
        &self,
        call: &ToolUse,
        (agent_type, model): (&str, &str),
        result: &RunResult,
        tally: &Tally,
        duration_ms: u64,
    ) -> ToolOutcome {
        let spent = AgentUsage { cost_usd: result.total_cost_usd, model_usage: result.model_usage.clone() };
        let handed = |content| ToolOutcome {
            is_error: result.is_error,
            agent_usage: Some(spent.clone()),
            ..ToolOutcome::new(&call.id, content)
        };
        let claude_code = self.core.flag(reloop_core::Flag::ClaudeCodeHandBack);
        let style = if claude_code { self.core.rules().tools.hand_back } else { HandBack::Reloop };
        let api_error = api_failure(result).filter(|_| self.core.flag(reloop_core::Flag::ChildApiErrorHandBack));
        match api_error.map(|failure| (failure, style.on_api_error())) {
            Some((failure, ChildApiError::Terminated)) => {
                let kind = api_error_kind(failure.status, false);
                let sent = reloop_model::api_model_id(model);
                let text = terminated_early(&result.result, kind, failure.status, failure.request_id.as_deref(), sent);
                return handed(ToolResultContent::Text(text));
            }
            // 2.1.197 hands the error text back as the report of a child that completed.
            Some((_, ChildApiError::Reported)) => {}
            _ if result.is_error => return handed(stopped(agent_type, result)),
            _ => {}
        }
        let agent_id = match style {
            HandBack::Reloop => result.session_id.clone(),
            HandBack::Trailer | HandBack::Framed => agent_id(&result.session_id),
        };
        let report = Report { call, agent_type, model, agent_id, text: &result.result, tally, duration_ms };
        let mut outcome = ToolOutcome { is_error: false, ..handed(report.answer(style)) };
        // reloop's own words carry no summary.
        if style != HandBack::Reloop {
            outcome.tool_use_result = Some(report.summary());
        }
        outcome
    }

    async fn run_child(
        self: Arc<Self>,
        call: &ToolUse,
        permissions: Option<Arc<PermissionContext>>,
        cancel: CancellationToken,
        turn: tokio::sync::OwnedMutexGuard<()>,
    ) -> Result<Ended, String> {
        match self.start_child(call, permissions, &cancel, turn).await? {
            Start::Ended(ended) => Ok(ended),
            Start::Running(running) => running.finish(&self, &cancel).await,
        }
    }

    /// Starts (or resumes) the child of `call` and waits until its first request is out (or it
    /// ended before any): a child the journal shows ended is [`Start::Ended`] at once.
    pub(crate) async fn start_child(
        &self,
        call: &ToolUse,
        permissions: Option<Arc<PermissionContext>>,
        cancel: &CancellationToken,
        turn: tokio::sync::OwnedMutexGuard<()>,
    ) -> Result<Start, String> {
        let text = |key: &str| call.input.get(key).and_then(|v| v.as_str()).map(str::to_string);
        let prompt = text("prompt").ok_or("the Agent call has no prompt")?;
        let resolved = self.setup.catalog.resolve(text("subagent_type").as_deref()).cloned();
        let journal = self.journals.open()?;
        let existing = match &journal {
            Some(j) => j.subagent_for(&self.parent, &call.id).map_err(|e| e.to_string())?,
            None => None,
        };
        // A child that exists goes on under its header even if its definition is gone since.
        let definition = match (resolved, &existing) {
            (Ok(definition), _) => definition,
            (Err(_), Some(_)) => AgentDefinition::journaled(text("subagent_type").unwrap_or_default()),
            (Err(unknown), None) => return Err(unknown),
        };
        if let (Some(id), Some(j)) = (&existing, &journal) {
            if let Some(result) = finished_result(j, id)? {
                return self.ended(result, definition, true, Tally::default()).map(Start::Ended);
            }
        }
        // Without a journal, the messages forwarded are all the parent learns of the child.
        let forwarded = journal.is_none().then(|| Arc::new(Mutex::new(Tally::default())));
        let (provider, mut first_request) = self.order.view();
        let background = self.in_background(call);
        let session = self.child_session((&call.id, background), &definition, provider, journal, permissions);
        // A new child holds the turn until its first request is out; a resumed one does not wait.
        let gate = existing.is_none().then_some(turn);
        let handle = self
            .runner
            .run_child(session, existing.as_deref(), vec![ContentBlock::text(prompt)])
            .map_err(|e| format!("the agent could not start: {e}"))?;
        let abort_on_drop = AbortOnDrop(Some(handle.abort_handle()));
        let abort = handle.abort_handle();
        let (done_tx, mut done) = oneshot::channel();
        let (events, tool_use_id) = (self.events.clone(), call.id.clone());
        let (child, tallied) = (agent_id(handle.session_id()), forwarded.clone());
        let launched = child.clone();
        let _ = events.send(RunEvent::SubagentStarted {
            tool_use_id: tool_use_id.clone(),
            agent_id: child.clone(),
            background,
        });
        let follower = tokio::spawn(async move {
            let mut usage = None;
            let forward = move |event| {
                let event = match event {
                    RunEvent::Response { usage: answered, .. } => return usage = Some(answered),
                    RunEvent::Message(message) => {
                        let usage = if message.role == Role::Assistant { usage.take() } else { None };
                        if let Some(tally) = &tallied {
                            tally.lock().unwrap_or_else(|p| p.into_inner()).message(&message, usage.as_ref());
                        }
                        let (tool_use_id, agent_id) = (tool_use_id.clone(), child.clone());
                        RunEvent::SubagentMessage { tool_use_id, agent_id, message, usage }
                    }
                    nested => nested,
                };
                let _ = events.send(event);
            };
            let _ = done_tx.send(handle.finish_forwarding(forward).await);
        });
        // The end of a query waits for its aborted children, not for those in the background.
        let followers = if background { &self.background.followers } else { &self.live };
        followers.lock().unwrap_or_else(|p| p.into_inner()).push(follower);
        // A child that ends before it asks anything (its budget was spent) ends the wait too.
        let mut early = None;
        if let Some(gate) = gate {
            tokio::select! {
                _ = first_request.wait_for(|asked| *asked) => {}
                finished = &mut done => early = Some(finished),
                _ = cancel.cancelled() => {}
            }
            drop(gate);
        }
        Ok(Start::Running(Running {
            done,
            early,
            abort,
            _abort_on_drop: abort_on_drop,
            definition,
            resumed: existing.is_some(),
            forwarded,
            agent_id: launched,
        }))
    }

    /// The child's end as its call answers it: what it did is read from its journal when there
    /// is one (a resumed child's calls before the crash too; `resumed`: its time is the
    /// journal's), else the messages it forwarded.
    fn ended(
        &self,
        result: RunResult,
        definition: AgentDefinition,
        resumed: bool,
        forwarded: Tally,
    ) -> Result<Ended, String> {
        let (tally, journaled_ms) = match self.journals.open()? {
            Some(j) => {
                let (tally, ms) = Tally::journaled(&*j, &result.session_id).map_err(|e| e.to_string())?;
                (tally, resumed.then_some(ms))
            }
            None => (forwarded, None),
        };
        let model = self.child_model(&definition);
        Ok(Ended { result, agent_type: definition.name, model, tally, journaled_ms })
    }

    /// The child's session: the definition's prompt, tools and model under the parent's rules.
    fn child_session(
        &self,
        (tool_use_id, background): (&str, bool),
        definition: &AgentDefinition,
        provider: Arc<dyn reloop_model::ModelProvider>,
        journal: Option<SessionJournal>,
        permissions: Option<Arc<PermissionContext>>,
    ) -> Session {
        let mut tools = self.tools.clone();
        // A child answers its parent in text: structured output is the parent's alone.
        tools.retain(|name| definition.allows(name) && name != reloop_core::structured::TOOL);
        let model = self.child_model(definition);
        let spent = *self.spent.lock().unwrap_or_else(|p| p.into_inner());
        let mut prices = self.core.prices.clone();
        for price in &self.setup.prices {
            if !prices.iter().any(|q| q.model == price.model) {
                prices.push(price.clone());
            }
        }
        let core = self
            .core
            .clone()
            .with_model(model.clone())
            .with_max_turns(definition.max_turns.or(self.core.max_turns))
            .with_max_budget_usd(self.core.max_budget_usd.map(|limit| (limit - spent).max(0.0)))
            .with_token_budget(None)
            // The child's Stop hooks are the session's SubagentStop hooks (flag 10).
            .with_stop_hooks(subagent_stop_hooks(&self.core, &self.hooks, &definition.name))
            .with_structured_output(false)
            .with_retry_seed(crate::new_seed())
            .with_prices(prices);
        let mut run = self.run.clone();
        run.model = model;
        run.system_prompt = Some(definition.prompt.clone());
        run.system_context = None;
        run.tools = Vec::new();
        run.agent = Some(AgentLink {
            parent: self.parent.clone(),
            tool_use_id: tool_use_id.to_string(),
            agent_type: definition.name.clone(),
            background,
        });
        let mut child =
            Session::new(provider, tools, journal, core, run).with_crash_after_step(self.setup.crash_after_step);
        child.hooks = self.hooks.clone();
        child.permissions = permissions;
        child.can_use_tool = self.can_use_tool.clone();
        child.prompt = self.prompt.clone();
        child
    }

    /// The model a child of `definition` asks: its own, or the parent's.
    fn child_model(&self, definition: &AgentDefinition) -> String {
        definition.model.clone().unwrap_or_else(|| self.core.model.clone())
    }

    /// Waits (a bounded while) for children that are still journaling their end; `background`:
    /// those in the background too.
    pub(crate) async fn settle(&self, background: bool) {
        let mut live: Vec<_> = std::mem::take(&mut *self.live.lock().unwrap_or_else(|p| p.into_inner()));
        if background {
            live.append(&mut self.background.followers.lock().unwrap_or_else(|p| p.into_inner()));
        }
        let _ = tokio::time::timeout(SETTLE, futures::future::join_all(live)).await;
    }
}

/// The result of a child that already ended, rebuilt from its journaled steps.
fn finished_result(journal: &SessionJournal, id: &str) -> Result<Option<RunResult>, String> {
    let header = journal.header(id).map_err(|e| e.to_string())?;
    let state = crate::rebuild(&**journal, id, &header.core_config).map_err(|e| e.to_string())?.state;
    Ok(state.is_done().then(|| crate::outputs::result_of(id, &state, 0)))
}

/// A child's end, as its call answers it.
pub(crate) struct Ended {
    pub result: RunResult,
    pub agent_type: String,
    /// The model it was set to ask.
    pub model: String,
    /// What it did.
    pub tally: Tally,
    /// How long it ran by its journal, when it ran (or began) before a crash.
    pub journaled_ms: Option<u64>,
}

/// A child [`Subagents::start_child`] started.
pub(crate) enum Start {
    /// The journal shows it ended already (a resumed parent's call).
    Ended(Ended),
    /// It runs: its first request is out.
    Running(Running),
}

/// A running child, until its end.
pub(crate) struct Running {
    done: oneshot::Receiver<Result<RunResult, DriverError>>,
    /// It ended while its call waited for its first request.
    early: Option<Result<Result<RunResult, DriverError>, oneshot::error::RecvError>>,
    abort: crate::AbortHandle,
    _abort_on_drop: AbortOnDrop,
    definition: AgentDefinition,
    resumed: bool,
    forwarded: Option<Arc<Mutex<Tally>>>,
    /// Claude Code's id of the agent.
    pub agent_id: String,
}

impl Running {
    /// The model the child was set to ask.
    pub(crate) fn model(&self, agents: &Subagents) -> String {
        agents.child_model(&self.definition)
    }

    /// Waits for the child's end; `cancel` stops it (a bounded while is given to journal it).
    pub(crate) async fn finish(mut self, agents: &Subagents, cancel: &CancellationToken) -> Result<Ended, String> {
        let finished = match self.early.take() {
            Some(finished) => finished,
            None => tokio::select! {
                finished = &mut self.done => finished,
                _ = cancel.cancelled() => {
                    self.abort.abort();
                    tokio::time::timeout(SETTLE, &mut self.done).await.map_err(|_| "the agent did not stop in time")?
                }
            },
        };
        let result = finished.map_err(|_| "the agent's task ended without a result".to_string())?;
        let result = result.map_err(|e| format!("the agent failed: {e}"))?;
        let forwarded = self.forwarded.map(|t| t.lock().unwrap_or_else(|p| p.into_inner()).clone()).unwrap_or_default();
        agents.ended(result, self.definition, self.resumed, forwarded)
    }
}

/// The failed request a child ended on, when that is how it ended.
fn api_failure(result: &RunResult) -> Option<&reloop_core::ModelFailure> {
    match &result.terminal.stop {
        reloop_core::Stop::ModelError(reloop_core::Failure::Request(failure)) if result.is_error => Some(failure),
        _ => None,
    }
}

/// The answer of a child that stopped before it finished: why.
fn stopped(agent_type: &str, result: &RunResult) -> ToolResultContent {
    let reason = result.terminal.reason();
    let why = match &result.terminal.stop {
        reloop_core::Stop::MaxTurns { max_turns, .. } => {
            format!("it reached its maximum number of turns ({max_turns})")
        }
        _ if result.result.trim().is_empty() => reason.as_str().to_string(),
        _ => result.result.clone(),
    };
    ToolResultContent::Text(format!(
        "<tool_use_error>Agent '{agent_type}' stopped before it finished ({}): {why}</tool_use_error>",
        reason.as_str()
    ))
}

/// Model requests the tree of `session` (from its root down) has completed, by its journal:
/// where a resumed tree's request count goes on.
pub fn tree_requests_completed(
    journal: &dyn JournalBackend,
    session: &str,
) -> Result<u32, reloop_journal::JournalError> {
    let mut root = session.to_string();
    for _ in 0..64 {
        let header = journal.header(&root)?;
        match header.run_config.get("agent").and_then(|a| a.get("parent")).and_then(|p| p.as_str()) {
            Some(parent) => root = parent.to_string(),
            None => break,
        }
    }
    let (mut pending, mut total, mut seen) = (vec![root], 0u32, 0usize);
    while let Some(id) = pending.pop() {
        seen += 1;
        if seen > 10_000 {
            break;
        }
        let mut completed = 0usize;
        journal.visit_steps(&id, &mut |s| {
            let answered = matches!(
                s.event,
                Event::ModelDone { .. }
                    | Event::ModelFailed { .. }
                    | Event::CompactDone { .. }
                    | Event::CompactFailed { .. }
            );
            completed += usize::from(answered && s.ignored.is_none());
            Ok(true)
        })?;
        total = total.saturating_add(u32::try_from(completed).unwrap_or(u32::MAX));
        pending.extend(journal.subagents_of(&id)?.into_iter().map(|s| s.id));
    }
    Ok(total)
}

/// Whether a subagent of `agent_type` runs Stop hooks: the session's SubagentStop hooks, under
/// flag 10 (recorded: a SubagentStop block is fed back to the subagent as a Stop block is).
fn subagent_stop_hooks(core: &reloop_core::Config, hooks: &HooksConfig, agent_type: &str) -> bool {
    core.flag(reloop_core::Flag::SessionEventHooks)
        && !hooks.matching(reloop_core::hook::HookEventName::SubagentStop, Some(agent_type)).is_empty()
}
