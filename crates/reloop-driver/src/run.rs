//! The live run: one task that owns the state, the journal and the in-flight work.

use std::sync::Arc;
use std::time::Instant;

use reloop_core::{transition, Command, Config, ContentBlock, Effect, Event, State, ToolOutcome};
use reloop_hooks::{run_all, HookCommon, HooksConfig};
use reloop_journal::{NewStep, SessionHeader, StepRecord, ENGINE_VERSION};

use self::journaling::Journaling;
use reloop_model::ModelProvider;
use reloop_tools::{PermissionContext, ToolContext, ToolRegistry};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub use crate::config::{PermissionSpec, RunConfig, DEFAULT_SYSTEM_PROMPT};
use crate::error::DriverError;
use crate::handle::Control;
pub use crate::handle::{RunEvent, RunHandle, RunResult};
use crate::ids::{new_session_id, now_ms};
use crate::outputs::{result_of, step_outputs};
pub use crate::session::Session;
use crate::tools::{ToolEnv, ToolScheduler};

mod children;
mod compact_hooks;
mod journaling;
mod model;
mod session_hooks;
mod told;
mod unprompted;

impl Session {
    /// Offers the `Agent` tool, whose calls run these agents as child sessions.
    pub fn with_agents(mut self, agents: Option<crate::session::AgentSetup>) -> Self {
        self.agents = agents;
        self
    }

    /// Lowers (or raises) the most one event may hold; tests use a small share.
    pub fn with_max_event_bytes(mut self, bytes: usize) -> Self {
        self.max_event_bytes = bytes;
        self
    }

    /// Plugs in a permission callback (Claude Code's `canUseTool`).
    pub fn with_can_use_tool(mut self, callback: crate::config::CanUseTool) -> Self {
        self.can_use_tool = Some(callback);
        self
    }

    /// Plugs in somebody to ask when the rules would ask.
    pub fn with_prompt(mut self, prompt: Arc<dyn crate::prompt::PermissionPrompt>) -> Self {
        self.prompt = Some(prompt);
        self
    }

    /// Keeps the session open when a query ends: the next [`RunHandle::send`] starts the next
    /// query of the same conversation (Claude Code's stream-json input); [`RunHandle::close`]
    /// ends it. Each query ends with its own [`RunEvent::Finished`].
    pub fn with_keep_alive(mut self, keep_alive: bool) -> Self {
        self.keep_alive = keep_alive;
        self
    }

    /// A stream-json `/clear` began the session: its SessionStart hooks run with `source:
    /// "clear"`, as Claude Code runs them (`settings_slash/stream_clear`).
    pub fn with_cleared(mut self, cleared: bool) -> Self {
        self.cleared = cleared;
        self
    }

    /// The session a new one comes from.
    pub fn with_parent(mut self, parent: Option<(String, u64)>) -> Self {
        self.parent = parent;
        self
    }

    /// The id a new session takes.
    pub fn with_session_id(mut self, id: Option<String>) -> Self {
        self.session_id = id;
        self
    }

    /// The transcript file a new session writes, which a compaction's summary message may name
    /// (journaled with the core's config).
    pub fn with_transcript(mut self, transcript: Option<reloop_core::compact::Transcript>) -> Self {
        self.core.transcript = transcript;
        self
    }

    /// Plugs in the settings' hooks; Stop hooks also tell the core to wait for them.
    pub fn with_hooks(mut self, hooks: HooksConfig) -> Self {
        self.core.stop_hooks = !hooks.matching(reloop_core::hook::HookEventName::Stop, None).is_empty();
        self.hooks = Arc::new(hooks);
        self
    }

    /// The permission mode and rules calls are judged by (`None`: every call runs).
    pub fn with_permissions(mut self, permissions: Option<PermissionContext>) -> Self {
        self.permissions = permissions.map(Arc::new);
        self
    }

    /// For crash tests: abort the process right after journaling this step.
    pub fn with_crash_after_step(mut self, step: Option<u64>) -> Self {
        self.crash_after_step = step;
        self
    }
}

impl Session {
    /// Starts the loop on the current tokio runtime. The session's header is journaled together
    /// with its first step, in one transaction: a session never exists without its prompt.
    pub fn start(self, prompt: Vec<ContentBlock>) -> Result<RunHandle, DriverError> {
        self.start_from(prompt, None)
    }

    /// As [`Session::start`], the prompt stamped with the host's `origin` (journaled with it, to
    /// be echoed on the query's result).
    pub fn start_from(
        self,
        prompt: Vec<ContentBlock>,
        origin: Option<serde_json::Value>,
    ) -> Result<RunHandle, DriverError> {
        self.start_after(Vec::new(), prompt, origin, Vec::new())
    }

    /// As [`Session::start_from`], with `before` applied ahead of the prompt (a custom slash
    /// command's model switch for its query), and the prompt after `local`, the lines of the
    /// local commands typed before it ([`Event::UserInput`]'s `local`).
    pub fn start_after(
        mut self,
        before: Vec<Event>,
        prompt: Vec<ContentBlock>,
        origin: Option<serde_json::Value>,
        local: Vec<reloop_core::local_lines::LocalLine>,
    ) -> Result<RunHandle, DriverError> {
        let (session_id, content, header) = self.prepare(prompt);
        let state = State::new(self.core.clone());
        let mut first = before;
        first.push(Event::UserInput { content, origin, local });
        Ok(self.launch(session_id, state, 0, first, header))
    }

    /// The new session's id, its first prompt and its header (when it is journaled).
    pub(crate) fn prepare(&mut self, prompt: Vec<ContentBlock>) -> (String, Vec<ContentBlock>, Option<SessionHeader>) {
        let session_id = self.session_id.take().unwrap_or_else(new_session_id);
        let mut content = Vec::with_capacity(prompt.len() + 1);
        if self.run.gather_context {
            self.run.system_context = Some(crate::context::system_context(&self.run.cwd));
            content.push(ContentBlock::text(crate::context::user_context(&self.run.cwd, &crate::context::today())));
        }
        content.extend(prompt);
        if let Some(agents) = &self.agents {
            self.tools.register(agents.catalog.tool(self.core.background_agents()));
        }
        self.run.tools = self.tools.specs().into_iter().map(|s| s.name).collect();
        let builtin = ToolRegistry::builtin();
        self.run.tool_specs = self.tools.specs().into_iter().filter(|s| builtin.get(&s.name).is_none()).collect();
        let header = self.journal.is_some().then(|| SessionHeader {
            id: session_id.clone(),
            created_at_ms: now_ms(),
            engine_version: ENGINE_VERSION.to_string(),
            core_config: self.core.clone(),
            run_config: serde_json::to_value(&self.run).unwrap_or_default(),
            parent: self.parent.take(),
        });
        (session_id, content, header)
    }

    /// Continues a journaled session after its process stopped: the state is rebuilt from the
    /// journal's events under the session's own config, and a `resumed` event asks again for
    /// whatever was in flight. Nothing journaled is lost or repeated.
    ///
    /// The journal is made the session's one writer first, so no caller can forget to: a
    /// session another live process writes is refused with [`reloop_journal::JournalError::Locked`]
    /// (or `Leased`, for a shared journal) before anything is read or run.
    pub fn resume(self, session_id: &str) -> Result<RunHandle, DriverError> {
        self.resume_with(session_id, Event::Resumed)
    }

    /// Like [`Session::resume`], but the first new event is `first` (e.g. `compact_requested`).
    pub fn resume_with(self, session_id: &str, first: Event) -> Result<RunHandle, DriverError> {
        self.resume_with_all(session_id, vec![first])
    }

    /// Like [`Session::resume`], but the first new events are `first`, in order (e.g. a model
    /// switch, then a new prompt for a finished session).
    pub fn resume_with_all(mut self, session_id: &str, first: Vec<Event>) -> Result<RunHandle, DriverError> {
        let Some(journal) = &mut self.journal else {
            return Err(DriverError::NeedsJournal { action: "resuming a session" });
        };
        // Two writers would interleave their steps; a lock this journal holds already is kept.
        journal.lock_session(session_id)?;
        let journal = &*journal;
        let header = journal.header(session_id)?;
        self.core = header.core_config.clone();
        if let Ok(run) = serde_json::from_value::<RunConfig>(header.run_config.clone()) {
            self.run = run;
        }
        if let Some(agents) = &self.agents {
            self.tools.register(agents.catalog.tool(self.core.background_agents()));
            self.request_base = crate::subagent::tree_requests_completed(&**journal, session_id)?;
        }
        // The session goes on offering the tools it offered (an old header lists none: all).
        if !self.run.tools.is_empty() {
            let offered = self.run.tools.clone();
            self.tools.retain(|name| offered.iter().any(|o| o == name));
        }
        let crate::fold::Rebuilt { state, last_seq: seq, .. } =
            crate::fold::rebuild(&**journal, session_id, &self.core)?;
        if state.is_idle() {
            // The process stopped before the prompt was journaled: there is nothing to go on with.
            return Err(DriverError::NothingToResume(session_id.to_string()));
        }
        Ok(self.launch(session_id.to_string(), state, seq, first, None))
    }

    /// Journals the session with its prompt as its first step, and leaves it in the journal's
    /// queue for a worker to run (`reloop run --enqueue`); returns its id. Nothing runs here: the
    /// worker resumes it, asking the model for the request the prompt's step asked for.
    pub fn enqueue(mut self, prompt: Vec<ContentBlock>) -> Result<String, DriverError> {
        let (id, content, header) = self.prepare(prompt);
        let (Some(header), Some(journal)) = (header, self.journal.as_mut()) else {
            return Err(DriverError::NeedsJournal { action: "queueing a session" });
        };
        if journal.as_sqlite().is_some() {
            // Refused before anything is written: SQLite has no queue.
            return Err(reloop_journal::JournalError::NeedsShared {
                place: journal.location(),
                what: "a queue of sessions",
            }
            .into());
        }
        let state = State::new(self.core.clone());
        let (from_phase, turn_before) = (state.phase(), state.context().turn_count());
        let event = Event::user_input(content);
        let step = transition(state, event.clone());
        let first = StepRecord::of(1, now_ms(), event, from_phase, turn_before, &step);
        journal.create_session_with_steps(&header, &[first])?;
        journal.enqueue(&id)?;
        Ok(id)
    }

    fn launch(
        self,
        session_id: String,
        state: State,
        seq: u64,
        first: Vec<Event>,
        header: Option<SessionHeader>,
    ) -> RunHandle {
        let (out, events) = mpsc::unbounded_channel();
        let (abort, abort_rx) = mpsc::unbounded_channel();
        let task = match Runner::new(self, session_id.clone(), out, state, seq) {
            Ok(mut runner) => {
                runner.pending_header = header;
                tokio::spawn(runner.run(first, abort_rx))
            }
            Err(e) => tokio::spawn(async move { Err(e) }),
        };
        RunHandle { session_id, events, abort, task }
    }
}

struct Runner {
    session_id: String,
    /// An automatic compaction's summary request, held while its PreCompact hooks run (flag 21).
    held_summary: Option<Command>,
    provider: Arc<dyn ModelProvider>,
    /// Runs the session's `Agent` calls, when it offers the tool.
    agents: Option<Arc<crate::subagent::Subagents>>,
    /// Where its background children's ends are told (flag 44).
    notices: Option<crate::notices::Notices>,
    tools: ToolRegistry,
    /// Sent with every request; computed once.
    tool_specs: std::sync::Arc<[reloop_core::ToolSpec]>,
    /// The session's journal, written on its own thread.
    journal: Option<Journaling>,
    /// Woken when the journal commits (held outputs may go out).
    commit_signal: Option<Arc<tokio::sync::Notify>>,
    run: RunConfig,
    state: Option<State>,
    seq: u64,
    out: mpsc::UnboundedSender<RunEvent>,
    inbox: mpsc::UnboundedSender<Event>,
    inbox_rx: mpsc::UnboundedReceiver<Event>,
    model_task: Option<JoinHandle<()>>,
    /// Calls that may change something ask here to be journaled as started before they run.
    starts_rx: mpsc::UnboundedReceiver<(String, u32, tokio::sync::oneshot::Sender<()>)>,
    tools_in_flight: ToolScheduler,
    hooks: Arc<HooksConfig>,
    hook_common: HookCommon,
    hooks_cancel: CancellationToken,
    stop_hook_task: Option<JoinHandle<()>>,
    started: Instant,
    crash_after_step: Option<u64>,
    /// A new session's header, journaled with its first step.
    pending_header: Option<SessionHeader>,
    /// Keeps every step under the journal's row cap.
    bounds: crate::bounds::StepBounds,
    /// Stay up between queries (see [`Session::keep_alive`]).
    keep_alive: bool,
    /// The `source` of its SessionStart hooks and the `reason` of its SessionEnd hooks.
    start_source: &'static str,
    end_reason: &'static str,
    /// Milliseconds spent waiting for the model, summed by the model tasks.
    api_ms: Arc<std::sync::atomic::AtomicU64>,
    /// `api_ms` when the current query started.
    api_ms_at_query: u64,
}

impl Runner {
    fn new(
        session: Session,
        session_id: String,
        out: mpsc::UnboundedSender<RunEvent>,
        state: State,
        seq: u64,
    ) -> Result<Self, DriverError> {
        let (inbox, inbox_rx) = mpsc::unbounded_channel();
        let mut tool_ctx = ToolContext::new(session.run.cwd.clone());
        // Grep and Glob hide what Read deny rules name; tool processes lose the credentials.
        if let Some(permissions) = &session.permissions {
            tool_ctx.hidden = permissions.read_filter();
            tool_ctx.env = permissions.tool_env.clone();
            tool_ctx.containment = permissions.containment(std::env::vars_os());
        }
        // The tools speak and check as the session's profile says.
        let rules = session.core.rules();
        tool_ctx.require_read = rules.tools.edit_requires_read;
        // The session's folder beside its transcript file, when the file is written.
        tool_ctx.results_dir = session
            .core
            .transcript
            .as_ref()
            .filter(|t| t.written && rules.tools.mcp_image_saved)
            .map(|t| std::path::PathBuf::from(t.path.trim_end_matches(".jsonl")).join("tool-results"));
        tool_ctx.unchanged_read = rules.tools.unchanged_read;
        tool_ctx.structured_results = session.core.flag(reloop_core::Flag::StreamDetails);
        tool_ctx.exit_code_first = rules.tools.exit_code_first && session.core.flag(reloop_core::Flag::ExitCodeFirst);
        tool_ctx.written_note =
            rules.tools.written_note.filter(|_| session.core.flag(reloop_core::Flag::WrittenFileTexts));
        let permissions =
            session.permissions.as_ref().map(|p| Arc::new(PermissionContext::clone(p).with_texts(rules.tools)));
        crate::tools::files_read_from(&state, &tool_ctx);
        let hook_common = HookCommon {
            session_id: session_id.clone(),
            transcript_path: session.journal.as_ref().map(|j| j.location()).unwrap_or_default(),
            cwd: session.run.cwd.display().to_string(),
            permission_mode: session
                .permissions
                .as_ref()
                .map_or("default".to_string(), |p| p.mode.as_str().to_string()),
        };
        let (starts, starts_rx) = mpsc::unbounded_channel();
        // With agents, the session and its children ask one provider in one request order.
        let (agents, notices, provider) = children::subagents_for(&session, &session_id, &out);
        // A subagent's tool hooks are told the calling session's id, and the subagent's.
        let (tool_hooks, agent) = match &session.run.agent {
            Some(link) => (
                HookCommon { session_id: link.parent.clone(), ..hook_common.clone() },
                Some((session_id.clone(), link.agent_type.clone())),
            ),
            None => (hook_common.clone(), None),
        };
        let tools_in_flight = ToolScheduler::new(ToolEnv {
            agents: agents.clone(),
            resumed: Arc::default(),
            starts: Some(starts),
            registry: session.tools.clone(),
            ctx: tool_ctx.clone(),
            hooks: session.hooks.clone(),
            hook_common: tool_hooks,
            agent,
            permissions,
            prompt: session.prompt.clone(),
            read_check_first: rules.tools.read_check_first,
            hook_rulings: reloop_tools::HookRulings::of(&session.core),
            can_use_tool: session.can_use_tool.clone(),
            failure_hooks: session.core.flag(reloop_core::Flag::PostToolUseFailureHooks),
            tool_use_result: session.core.flag(reloop_core::Flag::StreamDetails),
            rule_sources: session.core.flag(reloop_core::Flag::RuleSources),
            read_times: session.core.flag(reloop_core::Flag::GivenBackByChange),
        });
        // From here on the journal is written on its own thread.
        let journal = match session.journal {
            Some(journal) => Some(Journaling::start(journal, &session_id)?),
            None => None,
        };
        let mut bounds = crate::bounds::StepBounds::new(session.max_event_bytes);
        if journal.as_ref().is_some_and(Journaling::takes_event_json) {
            bounds.keep_json();
        }
        let mut runner = Runner {
            session_id,
            provider,
            agents,
            notices,
            tool_specs: session.tools.specs().into(),
            tools: session.tools,
            commit_signal: journal.as_ref().map(|j| j.committed.clone()),
            journal,
            run: session.run,
            state: Some(state),
            seq,
            out,
            inbox,
            inbox_rx,
            model_task: None,
            starts_rx,
            tools_in_flight,
            hooks: session.hooks,
            hook_common,
            hooks_cancel: CancellationToken::new(),
            stop_hook_task: None,
            started: Instant::now(),
            crash_after_step: session.crash_after_step,
            pending_header: None,
            bounds,
            keep_alive: session.keep_alive,
            start_source: if session.cleared { session_hooks::CLEAR } else { session_hooks::STARTUP },
            end_reason: session_hooks::END_REASON,
            api_ms: Arc::new(std::sync::atomic::AtomicU64::new(0)),
            api_ms_at_query: 0,
            held_summary: None,
        };
        // A resumed session goes on under the mode it was last switched to.
        if let Some(mode) = runner.state.as_ref().and_then(|s| s.context().permission_mode().map(str::to_string)) {
            runner.switch_permission_mode(&mode);
        }
        Ok(runner)
    }

    /// The caller switched the permission mode: tools and hooks see it from now on. A name
    /// reloop does not know (refused before it is journaled) changes nothing.
    fn switch_permission_mode(&mut self, mode: &str) {
        if let Ok(mode) = mode.parse::<reloop_tools::PermissionMode>() {
            self.tools_in_flight.set_permission_mode(mode);
            self.hook_common.permission_mode = mode.as_str().to_string();
        }
    }

    async fn run(
        mut self,
        first: Vec<Event>,
        mut abort: mpsc::UnboundedReceiver<Control>,
    ) -> Result<RunResult, DriverError> {
        let _ = self.out.send(RunEvent::Started {
            session_id: self.session_id.clone(),
            model: self.run.model.clone(),
            cwd: self.run.cwd.clone(),
            tools: self.tool_specs.iter().map(|s| s.name.clone()).collect(),
            permission_mode: self.hook_common.permission_mode.clone(),
            provider: self.run.provider.clone(),
            profile: self.state.as_ref().map(|s| s.context().config().profile).unwrap_or_default(),
        });
        if let Err(e) = self.session_start().await {
            self.cancel_all();
            return Err(e);
        }
        // Background children stop with the session, however it ends.
        let _background = self.agents.as_ref().map(|a| a.background.ended.clone().drop_guard());
        let mut pending = std::collections::VecDeque::from(first);
        match self.owed_after_resume(&mut abort, &mut pending).await {
            Ok(true) => return self.session_end().await.map(|()| self.result()),
            Ok(false) => {}
            Err(e) => return Err(self.cancelled(e)),
        }
        if pending.is_empty() {
            // Started without a prompt ([`Session::start_unprompted`]): a message starts it.
            match self.first_message(&mut abort).await {
                Ok(Some(event)) => pending.push_back(event),
                Ok(None) => return self.end_unprompted().await,
                Err(e) => return Err(self.cancelled(e)),
            }
        }
        let mut abort_open = true;
        let mut queued = 0u32;
        let mut start_ack: Option<tokio::sync::oneshot::Sender<()>> = None;
        let mut closing = false;
        loop {
            if pending.is_empty() {
                // Before waiting: the steps to be committed go to the journal's writer now.
                if let Some(Err(e)) = self.journal.as_mut().map(Journaling::before_idle) {
                    self.cancel_all();
                    return Err(e);
                }
            }
            let group_since = self.journal.as_ref().and_then(Journaling::group_since);
            let event = match pending.pop_front() {
                Some(event) => event,
                None => tokio::select! {
                    biased;
                    signal = abort.recv(), if abort_open => match signal {
                        Some(Control::Abort) => {
                            // Outcomes that already arrived happened before the abort: they are
                            // journaled first, so a finished edit is never reported interrupted.
                            while let Ok(event) = self.inbox_rx.try_recv() {
                                pending.push_back(event);
                            }
                            pending.push_back(Event::Abort);
                            continue;
                        }
                        // Mid-query messages join the request in flight: no query of their own
                        // to echo an origin on.
                        Some(Control::Send(content, ..)) => {
                            queued += 1;
                            Event::QueuedInput { id: format!("queued-{queued}"), content }
                        }
                        Some(Control::Set(event)) => event,
                        Some(Control::Compact) => Event::CompactRequested,
                        Some(Control::Close) | None => { abort_open = false; closing = true; continue; }
                        Some(Control::Clear) => {
                            (abort_open, closing, self.end_reason) = (false, true, session_hooks::CLEAR);
                            continue;
                        }
                    },
                    Some(event) = self.inbox_rx.recv() => event,
                    Some((id, request, ack)) = self.starts_rx.recv() => {
                        start_ack = Some(ack);
                        Event::ToolStarted { tool_use_id: id, request }
                    }
                    // A stream that went quiet does not keep its streamed steps uncommitted.
                    () = group_deadline(group_since), if group_since.is_some() => {
                        if let Some(Err(e)) = self.journal.as_mut().map(Journaling::commit_group) {
                            self.cancel_all();
                            return Err(e);
                        }
                        continue;
                    }
                    // The journal committed steps whose outputs wait for it.
                    () = committed(self.commit_signal.clone()), if self.journal.as_ref().is_some_and(Journaling::holds) => {
                        if let Some(journal) = self.journal.as_mut() {
                            journal.release(&self.out);
                        }
                        continue;
                    }
                },
            };
            if let Err(e) = self.pre_compact(&event).await {
                return Err(self.cancelled(e));
            }
            if let Err(e) = self.prompt_submit(&event).await {
                return Err(self.cancelled(e));
            }
            if let Err(e) = self.compacted_session_start(&event).await {
                return Err(self.cancelled(e));
            }
            let applied = match self.apply(event) {
                Ok(applied) => applied,
                Err(e) => return Err(self.cancelled(e)),
            };
            if let Err(e) = self.run_held_summary().await {
                self.cancel_all();
                return Err(e);
            }
            // The start is journaled: the call may run now. A start the core ignored (a call of
            // no request in flight) gets no word, so the call does not run.
            if let Some(ack) = start_ack.take().filter(|_| applied) {
                let _ = ack.send(());
            }
            if self.state.as_ref().is_some_and(State::is_done) {
                // What was still pending (an abort behind the last outcome) came too late.
                pending.clear();
                self.cancel_all();
                // An aborted child journals its end before the parent reports its own.
                if let Some(agents) = &self.agents {
                    agents.settle(false).await;
                }
                let result = self.result();
                let _ = self.out.send(RunEvent::Finished(result.clone()));
                match self.after_query(&mut abort, &mut closing).await {
                    Ok(Some(event)) => pending.push_back(event),
                    Ok(None) => return self.session_end().await.map(|()| result),
                    Err(e) => {
                        self.cancel_all();
                        return Err(e);
                    }
                }
            }
        }
    }

    /// Between the queries of a kept-alive session: settings are applied as they come, and a
    /// message (or a compaction by hand) starts the next query. `None` when the caller closes
    /// the session.
    async fn next_query(
        &mut self,
        control: &mut mpsc::UnboundedReceiver<Control>,
    ) -> Result<Option<Event>, DriverError> {
        loop {
            let next = match control.recv().await {
                Some(Control::Send(content, origin, local)) => Event::UserInput { content, origin, local },
                Some(Control::Compact) => Event::CompactRequested,
                Some(Control::Set(event)) => {
                    self.apply(event)?;
                    continue;
                }
                // Nothing runs between queries: an interrupt has nothing to stop.
                Some(Control::Abort) => continue,
                Some(Control::Close) | None => return Ok(None),
                Some(Control::Clear) => {
                    self.end_reason = session_hooks::CLEAR;
                    return Ok(None);
                }
            };
            self.query_begins();
            return Ok(Some(next));
        }
    }

    /// Steps the core with one event, journals the step, then executes its effects. Returns
    /// whether the event was applied (`false`: the core ignored it).
    fn apply(&mut self, event: Event) -> Result<bool, DriverError> {
        let Some(state) = self.state.take() else {
            return Err(DriverError::StateLost);
        };
        let from_phase = state.phase();
        let turn_before = state.context().turn_count();
        let len_before = state.messages().len();
        self.seq += 1;
        let event = self.bounds.bound(event);
        let step = transition(state, event.clone());
        self.bounds.after(&step.effects);
        let at_ms = now_ms();
        let outputs =
            step_outputs(self.seq, at_ms, &event, len_before, &step.state, &step.effects, step.reason.as_ref());
        if let Some(journal) = self.journal.as_mut() {
            // The row is encoded from the step as the core returned it: nothing is copied.
            let mut record = NewStep::of(self.seq, at_ms, &event, from_phase, turn_before, &step);
            record.event_json = self.bounds.json();
            let scheduler = &self.tools_in_flight;
            let plan =
                journaling::plan(&event, &step, |calls| scheduler.runs_quietly(calls), self.provider.in_process());
            let first = || StepRecord::of(self.seq, record.at_ms, event.clone(), from_phase, turn_before, &step);
            let written = journal.write(self.pending_header.take(), &record, first, plan);
            if let Err(e) = written {
                self.state = Some(step.state);
                return Err(e);
            }
            // As a `kill -9` would: what the writer has not committed yet is lost.
            if self.crash_after_step == Some(self.seq) {
                std::process::abort();
            }
            journal.show(self.seq, plan, outputs, &self.out);
        } else {
            if self.crash_after_step == Some(self.seq) {
                std::process::abort();
            }
            for output in outputs {
                let _ = self.out.send(output);
            }
        }
        // A safe call may start while the model still streams.
        if let (Event::ModelBlock { block: ContentBlock::ToolUse(call), request, .. }, Some(_), None) =
            (&event, step.state.streaming(), &step.ignored)
        {
            self.tools_in_flight.on_block(call, *request);
        }
        if let (Event::SetPermissionMode { mode }, None) = (&event, &step.ignored) {
            self.switch_permission_mode(mode);
        }
        if let (Event::CommandTools { allow, .. }, None) = (&event, &step.ignored) {
            self.tools_in_flight.set_command_tools(allow);
        }
        if step.effects.iter().any(|e| matches!(e, Effect::Notice(reloop_core::Notice::CompactBoundary { .. }))) {
            self.tools_in_flight.forget_read_stamps();
        }
        for command in step.effects.iter().filter_map(Effect::command) {
            self.execute(command, &step.state);
        }
        self.state = Some(step.state);
        Ok(step.ignored.is_none())
    }

    /// Carries out one command; notices are the caller's stream's business ([`step_outputs`]).
    fn execute(&mut self, command: &Command, state: &State) {
        // The request whose answer is being worked on: every outcome fed back names it.
        let request = state.context().requests();
        match command {
            Command::CallModel(call) => self.call_model(call, state),
            Command::RunTools { calls } => {
                self.note_spent(state);
                self.tools_in_flight.run(calls.clone(), request, self.inbox.clone())
            }
            Command::ResumeTools { calls, started } => {
                // Read-only calls run again; so do calls that never started. A call that may
                // have changed something and was journaled as started is never run twice. An
                // `Agent` call (read-only) goes on with its journaled child, which repeats nothing.
                self.note_spent(state);
                let (rerun, unknown): (Vec<_>, Vec<_>) = calls
                    .iter()
                    .cloned()
                    .partition(|c| self.tools.is_read_only(&c.name, &c.input) || !started.contains(&c.id));
                for call in unknown {
                    let mut outcome = ToolOutcome::error(&call.id, crate::tools::UNFINISHED_TOOL_RESULT);
                    outcome.request = request;
                    let _ = self.inbox.send(Event::ToolDone(outcome));
                }
                if !rerun.is_empty() {
                    self.tools_in_flight.set_resumed(started);
                    self.tools_in_flight.run(rerun, request, self.inbox.clone());
                }
            }
            Command::RunStopHooks { stop_hook_active, last_assistant_message } => {
                let (hook_event, commands, input) =
                    self.stop_hooks_of(*stop_hook_active, Some(last_assistant_message.clone()));
                let (cwd, token, inbox) = (self.run.cwd.clone(), self.hooks_cancel.clone(), self.inbox.clone());
                self.stop_hook_task = Some(tokio::spawn(async move {
                    let runs = run_all(&commands, &input, &cwd, &token).await;
                    let done = Event::HookDone { hook_event, tool_use_id: None, runs, request };
                    let _ = inbox.send(done);
                }));
            }
            Command::CancelHooks => self.cancel_hooks(),
            Command::Summarize { .. } if self.holds_summary(command, state) => {}
            Command::Summarize { request, summarize, truncated, date_last, attempt, give_back, .. } => {
                let shape = reloop_core::compact::shape::shape_of(*truncated, *date_last);
                self.summarize(*request, *summarize, shape, *attempt, give_back, state)
            }
            Command::CancelModel => {
                if let Some(task) = self.model_task.take() {
                    task.abort();
                }
            }
            Command::WaitRetry(wait) => {
                let inbox = self.inbox.clone();
                let (delay, attempt) = (std::time::Duration::from_millis(wait.delay_ms), wait.attempt);
                self.model_task = Some(tokio::spawn(async move {
                    tokio::time::sleep(delay).await;
                    let _ = inbox.send(Event::RetryReady { attempt });
                }));
            }
            Command::CancelTools => self.tools_in_flight.cancel(),
        }
    }

    /// What the session has spent when its tools start: its children may spend what is left.
    fn note_spent(&self, state: &State) {
        if let Some(agents) = &self.agents {
            *agents.spent.lock().unwrap_or_else(|p| p.into_inner()) = state.context().cost_usd();
        }
    }

    fn cancel_hooks(&mut self) {
        self.hooks_cancel.cancel();
        self.hooks_cancel = CancellationToken::new();
        if let Some(task) = self.stop_hook_task.take() {
            task.abort();
        }
    }

    fn cancel_all(&mut self) {
        if let Some(task) = self.model_task.take() {
            task.abort();
        }
        self.tools_in_flight.cancel();
        self.cancel_hooks();
    }

    fn result(&self) -> RunResult {
        let duration = self.started.elapsed().as_millis() as u64;
        let mut result = match &self.state {
            Some(state) => result_of(&self.session_id, state, duration),
            None => result_of(&self.session_id, &State::new(Config::default()), duration),
        };
        let api_ms = self.api_ms.load(std::sync::atomic::Ordering::Relaxed);
        result.duration_api_ms = api_ms.saturating_sub(self.api_ms_at_query);
        result
    }
}

/// Resolves when the journal has committed something (never without a journal).
async fn committed(signal: Option<Arc<tokio::sync::Notify>>) {
    match signal {
        Some(signal) => signal.notified().await,
        None => std::future::pending().await,
    }
}

/// Resolves when the open group of deferred steps is due ([`reloop_journal::GROUP_COMMIT_INTERVAL`]).
async fn group_deadline(since: Option<Instant>) {
    if let Some(since) = since {
        let due = since + reloop_journal::GROUP_COMMIT_INTERVAL;
        tokio::time::sleep_until(tokio::time::Instant::from_std(due)).await;
    }
}
