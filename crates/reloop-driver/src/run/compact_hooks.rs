//! The hooks Claude Code runs around a compaction (flag 21), as recorded in both versions
//! (`tests/print/recorded/*/sdk36/auto_compact_hooks`, `settings_slash/stream_compact`):
//! an automatic compaction's PreCompact hooks (`trigger: "auto"`, `custom_instructions: null`)
//! before its summary request, and, once any compaction's summary has come back, the
//! SessionStart hooks with `source: "compact"` and the model's name, before the compacted
//! conversation is in place (Claude Code prints their lines between `compacting` and
//! `compact_result`). Each set is journaled as a `hook_done` the compaction waits through;
//! what the hooks answer changes nothing yet (docs/settings.md).

use reloop_core::hook::HookEventName;
use reloop_core::{Command, Event, Flag, State};
use reloop_hooks::{run_all, HookInput};

use super::Runner;
use crate::error::DriverError;

/// PreCompact's `trigger`, and what its matchers match, for a compaction the loop starts.
const AUTO: &str = "auto";
/// SessionStart's `source` after a compaction, and what its matchers match.
const COMPACT: &str = "compact";

impl Runner {
    /// Whether this session runs the compaction's hooks (never a subagent's).
    fn compaction_hooks_on(&self) -> bool {
        self.run.agent.is_none()
            && self.state.as_ref().is_some_and(|s| {
                let config = s.context().config();
                config.flag(Flag::SessionEventHooks) && config.flag(Flag::CompactionHooks)
            })
    }

    /// Whether `command` is an automatic compaction's first summary request that PreCompact
    /// hooks must see first: it is then held, for [`Self::run_held_summary`].
    pub(super) fn holds_summary(&mut self, command: &Command, state: &State) -> bool {
        let Command::Summarize { trigger, truncated: false, attempt: 0, .. } = command else { return false };
        let config = state.context().config();
        if trigger != AUTO
            || self.run.agent.is_some()
            || !config.flag(Flag::SessionEventHooks)
            || !config.flag(Flag::CompactionHooks)
            || self.hooks.matching(HookEventName::PreCompact, Some(AUTO)).is_empty()
        {
            return false;
        }
        self.held_summary = Some(command.clone());
        true
    }

    /// Runs the PreCompact hooks of a held summary request, journals them, then sends it.
    pub(super) async fn run_held_summary(&mut self) -> Result<(), DriverError> {
        let Some(command) = self.held_summary.take() else { return Ok(()) };
        let commands = self.hooks.matching(HookEventName::PreCompact, Some(AUTO));
        let input = HookInput::pre_compact(self.hook_common.clone(), AUTO, None);
        let runs = run_all(&commands, &input, &self.run.cwd, &self.hooks_cancel).await;
        let done = Event::HookDone { hook_event: HookEventName::PreCompact, tool_use_id: None, runs, request: 0 };
        self.apply(done)?;
        // Still compacting (an abort meanwhile would have ended it): the request goes now.
        if let (Some(state), Command::Summarize { request, summarize, truncated, date_last, attempt, give_back, .. }) =
            (self.state.take(), &command)
        {
            if state.phase() == "compacting" {
                let shape = reloop_core::compact::shape::shape_of(*truncated, *date_last);
                self.summarize(*request, *summarize, shape, *attempt, give_back, &state);
            }
            self.state = Some(state);
        }
        Ok(())
    }

    /// Before a compaction's summary is applied: the SessionStart hooks of `source: "compact"`.
    pub(super) async fn compacted_session_start(&mut self, event: &Event) -> Result<(), DriverError> {
        let Event::CompactDone { request, .. } = event else { return Ok(()) };
        if !self.compaction_hooks_on() {
            return Ok(());
        }
        let Some(state) = self.state.as_ref() else { return Ok(()) };
        if state.phase() != "compacting" || !state.context().is_current(*request) {
            return Ok(());
        }
        let commands = self.hooks.matching(HookEventName::SessionStart, Some(COMPACT));
        if commands.is_empty() {
            return Ok(());
        }
        // Named as `system/init` names it: a 1M-context model keeps its `[1m]` (2.1.197's
        // `opus[1m]` and `default`), so nothing is added here.
        let model = state.context().current_model().to_string();
        let mut input = HookInput::session_start(self.hook_common.clone(), COMPACT);
        input.model = Some(model);
        let runs = run_all(&commands, &input, &self.run.cwd, &self.hooks_cancel).await;
        let done = Event::HookDone { hook_event: HookEventName::SessionStart, tool_use_id: None, runs, request: 0 };
        self.apply(done).map(|_| ())
    }
}
