//! The session events' hooks (flag 10), run by the driver and journaled as `hook_done` steps
//! between queries: SessionStart once a new session has started (its context opens the system
//! context the requests carry), UserPromptSubmit before each prompt's `user_input` (the core
//! decides from the journaled runs whether the prompt goes on), SessionEnd when the session
//! ends. A subagent's session runs none of them, as Claude Code's do not: it runs SubagentStart
//! as its first step and the SubagentStop hooks where a session runs its Stop hooks.

use reloop_core::hook::session::{prompt_text, session_start_context};
use reloop_core::hook::HookEventName;
use reloop_core::{Event, Flag};
use reloop_hooks::{run_all, HookCommand, HookCommon, HookInput};

use super::Runner;
use crate::error::DriverError;

/// The `source` of a new session's SessionStart, and what its hooks' matchers match.
pub(super) const STARTUP: &str = "startup";
/// The `source` of the SessionStart of a session a `/clear` began, and the `reason` of the
/// SessionEnd of the one it ended (`settings_slash/stream_clear`, both versions).
pub(super) const CLEAR: &str = "clear";
/// PreCompact's `trigger` for `/compact`, and what its hooks' matchers match.
const MANUAL: &str = "manual";
/// SessionEnd's `reason` when a print-mode run is over (recorded in both versions).
pub(super) const END_REASON: &str = "other";

impl Runner {
    /// Whether this session fires the session events' hooks (a subagent: its own two).
    fn session_hooks_on(&self) -> bool {
        self.state.as_ref().is_some_and(|s| s.context().config().flag(Flag::SessionEventHooks))
    }

    /// What a subagent's hooks are told of the session: the calling session's id, as Claude
    /// Code's subagent hooks read it.
    fn parent_common(&self, parent: &str) -> HookCommon {
        HookCommon { session_id: parent.to_string(), ..self.hook_common.clone() }
    }

    /// The hooks the core's `run_stop_hooks` runs: the Stop hooks, or a subagent's SubagentStop
    /// hooks with the subagent's id, type and transcript (the journal here).
    pub(super) fn stop_hooks_of(
        &self,
        stop_hook_active: bool,
        last_assistant_message: Option<String>,
    ) -> (HookEventName, Vec<HookCommand>, HookInput) {
        let Some(agent) = &self.run.agent else {
            let input = HookInput::stop(self.hook_common.clone(), stop_hook_active, last_assistant_message);
            return (HookEventName::Stop, self.hooks.matching(HookEventName::Stop, None), input);
        };
        let commands = self.hooks.matching(HookEventName::SubagentStop, Some(&agent.agent_type));
        let input = HookInput::subagent_stop(
            self.parent_common(&agent.parent),
            (&self.session_id, &agent.agent_type),
            &self.hook_common.transcript_path,
            stop_hook_active,
            last_assistant_message,
        );
        (HookEventName::SubagentStop, commands, input)
    }

    /// A new session's SessionStart hooks, before its first prompt (a subagent's: its
    /// SubagentStart hooks). What SessionStart hooks add goes before the system context, in the
    /// header too, so every request of the session (and a resume) carries it.
    pub(super) async fn session_start(&mut self) -> Result<(), DriverError> {
        // Only a new session starts: a resumed one has journaled steps.
        if self.seq != 0 || !self.session_hooks_on() {
            return Ok(());
        }
        if let Some(agent) = self.run.agent.clone() {
            let commands = self.hooks.matching(HookEventName::SubagentStart, Some(&agent.agent_type));
            if commands.is_empty() {
                return Ok(());
            }
            let input =
                HookInput::subagent_start(self.parent_common(&agent.parent), &self.session_id, &agent.agent_type);
            let runs = run_all(&commands, &input, &self.run.cwd, &self.hooks_cancel).await;
            let done =
                Event::HookDone { hook_event: HookEventName::SubagentStart, tool_use_id: None, runs, request: 0 };
            return self.apply(done).map(|_| ());
        }
        let commands = self.hooks.matching(HookEventName::SessionStart, Some(self.start_source));
        if commands.is_empty() {
            return Ok(());
        }
        let input = HookInput::session_start(self.hook_common.clone(), self.start_source);
        let runs = run_all(&commands, &input, &self.run.cwd, &self.hooks_cancel).await;
        let checked = self.state.as_ref().is_some_and(|s| s.context().config().flag(Flag::HookEventNameChecked));
        let context = session_start_context(&runs, checked);
        if !context.is_empty() {
            let rest = self.run.system_context.take().unwrap_or_default();
            let joined = if rest.is_empty() { context.trim_end().to_string() } else { format!("{context}{rest}") };
            self.run.system_context = Some(joined);
            if let Some(header) = self.pending_header.as_mut() {
                header.run_config = serde_json::to_value(&self.run).unwrap_or_default();
            }
        }
        let done = Event::HookDone { hook_event: HookEventName::SessionStart, tool_use_id: None, runs, request: 0 };
        self.apply(done).map(|_| ())
    }

    /// A prompt's UserPromptSubmit hooks, before its `user_input` is applied.
    pub(super) async fn prompt_submit(&mut self, event: &Event) -> Result<(), DriverError> {
        let Event::UserInput { content, .. } = event else {
            return Ok(());
        };
        if self.run.agent.is_some() || !self.session_hooks_on() {
            return Ok(());
        }
        let commands = self.hooks.matching(HookEventName::UserPromptSubmit, None);
        if commands.is_empty() {
            return Ok(());
        }
        let input = HookInput::user_prompt_submit(self.hook_common.clone(), &prompt_text(content));
        let runs = run_all(&commands, &input, &self.run.cwd, &self.hooks_cancel).await;
        let done = Event::HookDone { hook_event: HookEventName::UserPromptSubmit, tool_use_id: None, runs, request: 0 };
        self.apply(done).map(|_| ())
    }

    /// The PreCompact hooks of a compaction asked for by hand between queries (`/compact`,
    /// `trigger: "manual"`), before its `compact_requested` is applied; the stream words the
    /// compaction's note from the journaled runs. A compaction the core starts by itself runs
    /// none yet.
    pub(super) async fn pre_compact(&mut self, event: &Event) -> Result<(), DriverError> {
        if !matches!(event, Event::CompactRequested) || self.run.agent.is_some() || !self.session_hooks_on() {
            return Ok(());
        }
        if !self.state.as_ref().is_some_and(reloop_core::State::is_done) {
            return Ok(());
        }
        let commands = self.hooks.matching(HookEventName::PreCompact, Some(MANUAL));
        if commands.is_empty() {
            return Ok(());
        }
        let input = HookInput::pre_compact(self.hook_common.clone(), MANUAL, None);
        let runs = run_all(&commands, &input, &self.run.cwd, &self.hooks_cancel).await;
        let done = Event::HookDone { hook_event: HookEventName::PreCompact, tool_use_id: None, runs, request: 0 };
        self.apply(done).map(|_| ())
    }

    /// The session's SessionEnd hooks, once its last query is over. Their output changes
    /// nothing; the runs are journaled like any other.
    pub(super) async fn session_end(&mut self) -> Result<(), DriverError> {
        if self.run.agent.is_some() || !self.session_hooks_on() {
            return Ok(());
        }
        let commands = self.hooks.matching(HookEventName::SessionEnd, None);
        if commands.is_empty() {
            return Ok(());
        }
        let input = HookInput::session_end(self.hook_common.clone(), self.end_reason);
        let runs = run_all(&commands, &input, &self.run.cwd, &self.hooks_cancel).await;
        let done = Event::HookDone { hook_event: HookEventName::SessionEnd, tool_use_id: None, runs, request: 0 };
        self.apply(done).map(|_| ())
    }
}
