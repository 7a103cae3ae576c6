//! Background agents (2.1.332, [`reloop_core::Flag::BackgroundAgents`]): an `Agent` call that
//! does not ask for the foreground is answered as soon as its child's first request is out,
//! the child runs on, and its end is queued as a task notification, a message the parent's
//! loop sends as a query of its own once the query in flight has ended
//! (`subagent/default`, crates/reloop-import/tests/recorded/2.1.332).
//!
//! The notification is journaled as the parent's `UserInput` step (its `origin` names the
//! child's run), so a replay needs neither the child nor the timing: the parent's journal says
//! when each end was told. With a scripted provider (a cassette, answered by request number)
//! the call waits for its child's end, so the numbers follow one order on every run.

use std::sync::Arc;
use std::time::Instant;

use reloop_core::profile::{agent_id, async_launched, notification_origin, notified_run, run_id, TaskEnd, TaskNotice};
use reloop_core::{ContentBlock, Event, Message, ToolOutcome, ToolResultContent, ToolUse};
use reloop_journal::{JournalBackend, JournalError, Subagent};
use reloop_tools::PermissionContext;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::hand_back::Report;
use crate::subagent::{Ended, Start, Subagents};

impl Subagents {
    /// Whether `call` runs its agent in the background: under the flag and a profile that does
    /// (2.1.332), unless the call asks for the foreground (`run_in_background: false`).
    pub(crate) fn in_background(&self, call: &ToolUse) -> bool {
        self.core.background_agents() && call.input.get("run_in_background") != Some(&Value::Bool(false))
    }

    /// Answers `call` by launching its agent in the background: the answer as soon as its first
    /// request is out, its notification queued when it ends.
    pub(crate) async fn launch(
        self: Arc<Self>,
        call: ToolUse,
        permissions: Option<Arc<PermissionContext>>,
        cancel: CancellationToken,
        turn: tokio::sync::OwnedMutexGuard<()>,
    ) -> ToolOutcome {
        let started = Instant::now();
        let running = match self.start_child(&call, permissions, &cancel, turn).await {
            Err(text) => return ToolOutcome::error(&call.id, &format!("<tool_use_error>{text}</tool_use_error>")),
            // A resumed parent's child that had ended: told at once.
            Ok(Start::Ended(ended)) => {
                let agent_id = agent_id(&ended.result.session_id);
                let outcome = self.launched(&call, &agent_id, &ended.model);
                self.background.tell(self.notice(&call, &agent_id, Ok(ended), started));
                return outcome;
            }
            Ok(Start::Running(running)) => running,
        };
        let agent_id = running.agent_id.clone();
        let outcome = self.launched(&call, &agent_id, &running.model(&self));
        let running_count = self.background.launched();
        let agents = self.clone();
        let told = async move {
            let ended = running.finish(&agents, &agents.background.ended).await;
            agents.background.tell(agents.notice(&call, &agent_id, ended, started));
            // Counted as running until its notice is queued.
            drop(running_count);
        };
        if self.order.renumbers() {
            told.await;
        } else {
            tokio::spawn(told);
        }
        outcome
    }

    /// The call's answer: the launch, in 2.1.332's words, and its summary.
    fn launched(&self, call: &ToolUse, agent_id: &str, model: &str) -> ToolOutcome {
        let text = ContentBlock::text(async_launched(agent_id));
        let mut outcome = ToolOutcome::new(&call.id, ToolResultContent::Blocks(vec![text]));
        let field = |key: &str| call.input.get(key).cloned().unwrap_or(Value::Null);
        // reloop keeps no task output file (docs/profiles.md): the summary names none.
        outcome.tool_use_result = Some(json!({
            "isAsync": true,
            "status": "async_launched",
            "agentId": agent_id,
            "description": field("description"),
            "resolvedModel": model,
            "prompt": field("prompt"),
            "canReadOutputFile": false,
            "canContinueAgent": true,
        }));
        outcome
    }

    /// The message that tells the parent of the child's end.
    fn notice(&self, call: &ToolUse, agent_id: &str, ended: Result<Ended, String>, started: Instant) -> Event {
        let description = call.input.get("description").and_then(Value::as_str).unwrap_or_default();
        let ran_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let content = match ended {
            Ok(Ended { result, agent_type, model, tally, journaled_ms }) => {
                let end = if result.is_error {
                    TaskEnd::Failed { error: result.result.clone() }
                } else {
                    TaskEnd::Completed { report: result.result.clone() }
                };
                let report = Report {
                    call,
                    agent_type: &agent_type,
                    model: &model,
                    agent_id: agent_id.to_string(),
                    text: &result.result,
                    tally: &tally,
                    duration_ms: journaled_ms.unwrap_or(ran_ms),
                };
                report.notification(description, &end)
            }
            Err(error) => {
                let end = TaskEnd::Failed { error };
                let notice =
                    TaskNotice { agent_id, tool_use_id: &call.id, description, end: &end, usage: (0, 0, ran_ms) };
                vec![ContentBlock::text(notice.text())]
            }
        };
        Event::UserInput { content, origin: Some(notification_origin(&run_id(agent_id))), local: Vec::new() }
    }
}

/// The background agents of `session` whose end its journal never told: a crash came between
/// the launch and the notification. `resume` resumes such a session even when it had ended.
pub fn untold_background(journal: &dyn JournalBackend, session: &str) -> Result<Vec<Subagent>, JournalError> {
    let mut children = Vec::new();
    for child in journal.subagents_of(session)? {
        let header = journal.header(&child.id)?;
        let agent = header.run_config.get("agent");
        if agent.and_then(|a| a.get("background")).and_then(Value::as_bool) == Some(true) {
            children.push(child);
        }
    }
    if children.is_empty() {
        return Ok(children);
    }
    let mut told = std::collections::HashSet::new();
    journal.visit_steps(session, &mut |step| {
        if let Event::UserInput { origin, .. } = &step.event {
            told.extend(notified_run(origin.as_ref()).map(str::to_string));
        }
        Ok(true)
    })?;
    children.retain(|child| !told.contains(&run_id(&agent_id(&child.id))));
    Ok(children)
}

impl Subagents {
    /// A resumed session's background agents whose launch `history` holds answered but whose
    /// end was never told: each goes on in the background (or, ended, is told at once) as at
    /// its launch. A call `history` has not answered is run again by the resumed loop instead.
    pub(crate) fn relaunch_untold(
        self: &Arc<Self>,
        history: &[&Message],
        permissions: Option<Arc<PermissionContext>>,
    ) -> Result<(), String> {
        let Some(journal) = self.journals.open()? else { return Ok(()) };
        let untold = untold_background(&*journal, &self.parent).map_err(|e| e.to_string())?;
        if untold.is_empty() {
            return Ok(());
        }
        let answered: std::collections::HashSet<&str> = history
            .iter()
            .flat_map(|m| &m.content)
            .filter_map(|b| match b {
                ContentBlock::ToolResult(r) => Some(r.tool_use_id.as_str()),
                _ => None,
            })
            .collect();
        for child in untold.into_iter().filter(|c| answered.contains(c.tool_use_id.as_str())) {
            let Some(call) = history.iter().flat_map(|m| m.tool_uses()).find(|c| c.id == child.tool_use_id) else {
                continue;
            };
            let (call, agents, permissions) = (ToolUse::clone(call), self.clone(), permissions.clone());
            let running_count = self.background.launched();
            tokio::spawn(async move {
                let started = Instant::now();
                let stop = agents.background.ended.clone();
                let turn = agents.turn().await;
                let ended = match agents.start_child(&call, permissions, &stop, turn).await {
                    Ok(Start::Ended(ended)) => Ok(ended),
                    Ok(Start::Running(running)) => running.finish(&agents, &stop).await,
                    Err(error) => Err(error),
                };
                agents.background.tell(agents.notice(&call, &agent_id(&child.id), ended, started));
                drop(running_count);
            });
        }
        Ok(())
    }
}
