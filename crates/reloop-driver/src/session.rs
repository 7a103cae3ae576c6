//! What a run needs, gathered before it starts: the [`Session`] the run loop (`run`) starts or
//! resumes, and the [`AgentSetup`] its `Agent` calls run children with. It sits below the loop
//! and the subagents, so a parent's call builds its child as a `Session` too.

use std::sync::Arc;

use reloop_core::{Config, Price};
use reloop_hooks::HooksConfig;
use reloop_model::ModelProvider;
use reloop_tools::{PermissionContext, ToolRegistry};

use crate::agents::AgentCatalog;
use crate::config::RunConfig;
use crate::journal::SessionJournal;

/// What a caller gives a session so that its `Agent` calls can run.
#[derive(Debug, Clone, Default)]
pub struct AgentSetup {
    /// The agents the calls may name.
    pub catalog: AgentCatalog,
    /// Prices of the models the agents run on, besides the session's own.
    pub prices: Vec<Price>,
    /// One cassette for the whole tree: number every request of the tree in the order it is made
    /// (see the driver's `order` module). For the scripted provider.
    pub renumber_requests: bool,
    /// For crash tests: a child aborts the process right after journaling this step.
    pub crash_after_step: Option<u64>,
}

/// Everything a run needs. [`Session::start`] journals the header and spawns the loop.
pub struct Session {
    /// Where model requests go (a live API or a cassette).
    pub(crate) provider: Arc<dyn ModelProvider>,
    /// The tools the model may call.
    pub tools: ToolRegistry,
    /// Where every step is recorded before its effects run; `None`: an unrecorded run that
    /// cannot be resumed.
    pub journal: Option<SessionJournal>,
    /// The core's rules (caps, compaction, profile), journaled in the header.
    pub(crate) core: Config,
    /// What the driver needs besides the core's rules, journaled in the header.
    pub run: RunConfig,
    /// For crash tests: the process aborts right after journaling this step, as a `kill -9`
    /// would stop it, before the step's effects run.
    pub(crate) crash_after_step: Option<u64>,
    /// Hooks from the settings file (none by default).
    pub(crate) hooks: Arc<HooksConfig>,
    /// Permission mode, rules and workspace; `None` lets every call through.
    pub(crate) permissions: Option<Arc<PermissionContext>>,
    /// The caller's own permission callback, consulted before the rules.
    pub(crate) can_use_tool: Option<crate::config::CanUseTool>,
    /// Asked when the permission rules would ask (the Agent SDK's `can_use_tool`); without it
    /// an ask is a deny with the prompt's text.
    pub(crate) prompt: Option<Arc<dyn crate::prompt::PermissionPrompt>>,
    /// Keep the session open when a query ends: the next [`crate::RunHandle::send`] starts the next
    /// query of the same conversation (Claude Code's stream-json input); [`crate::RunHandle::close`]
    /// ends it. Each query ends with its own [`crate::RunEvent::Finished`].
    pub(crate) keep_alive: bool,
    /// A stream-json `/clear` began the session: its SessionStart hooks run with `source:
    /// "clear"`, as Claude Code runs them (`settings_slash/stream_clear`).
    pub(crate) cleared: bool,
    /// The id a new session takes (`--session-id`); a fresh UUID otherwise.
    pub(crate) session_id: Option<String>,
    /// The session a new one comes from (a rerun's recording), journaled in its header.
    pub(crate) parent: Option<(String, u64)>,
    /// The most one event may hold as JSON; larger outcomes are cut before they are journaled
    /// (see the driver's `bounds` module).
    pub(crate) max_event_bytes: usize,
    /// The agents `Agent` calls may run; `None`: no `Agent` tool.
    pub(crate) agents: Option<AgentSetup>,
    /// Model requests the session's tree had completed before this process (a resume).
    pub(crate) request_base: u32,
}

impl Session {
    /// A session with no hooks, no permission checks and no crash point.
    pub fn new(
        provider: Arc<dyn ModelProvider>,
        tools: ToolRegistry,
        journal: Option<SessionJournal>,
        core: Config,
        run: RunConfig,
    ) -> Self {
        Session {
            provider,
            tools,
            journal,
            core,
            run,
            crash_after_step: None,
            hooks: Arc::new(HooksConfig::default()),
            permissions: None,
            can_use_tool: None,
            prompt: None,
            keep_alive: false,
            cleared: false,
            session_id: None,
            parent: None,
            max_event_bytes: crate::bounds::DEFAULT_EVENT_SHARE,
            agents: None,
            request_base: 0,
        }
    }
}
