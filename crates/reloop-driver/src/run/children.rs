//! The run loop's side of the `Agent` tool: the session's means to run children
//! ([`Subagents`]), and the loop handed down to them as [`RunChild`], so the subagents below
//! the loop start child sessions without importing it.

use std::sync::{Arc, Mutex};

use reloop_core::ContentBlock;
use reloop_model::ModelProvider;

use super::Session;
use crate::error::DriverError;
use crate::handle::RunHandle;
use crate::notices::{Backgrounded, Notices};
use crate::order::RequestOrder;
use crate::subagent::{ChildJournals, RunChild, Subagents};

/// Runs each child as a [`Session`] of its own, on this same loop.
struct ChildLoop;

impl RunChild for ChildLoop {
    fn run_child(
        &self,
        session: Session,
        existing: Option<&str>,
        prompt: Vec<ContentBlock>,
    ) -> Result<RunHandle, DriverError> {
        match existing {
            Some(id) => session.resume(id),
            None => session.start(prompt),
        }
    }
}

/// The means of `session` (about to run as `session_id`) to run children, where their
/// background ends are told, and the provider the session itself then asks (its view of the tree's request order); none without agents.
pub(super) fn subagents_for(
    session: &Session,
    session_id: &str,
    events: &tokio::sync::mpsc::UnboundedSender<crate::handle::RunEvent>,
) -> (Option<Arc<Subagents>>, Option<Notices>, Arc<dyn ModelProvider>) {
    let Some(setup) = session.agents.clone() else { return (None, None, session.provider.clone()) };
    let (background, notices) = Backgrounded::new();
    let order = RequestOrder::new(session.provider.clone(), session.request_base, setup.renumber_requests);
    let subagents = Subagents {
        setup,
        order: order.clone(),
        journals: ChildJournals::of(session.journal.as_ref()),
        parent: session_id.to_string(),
        tools: session.tools.clone(),
        core: session.core.clone(),
        run: session.run.clone(),
        hooks: session.hooks.clone(),
        can_use_tool: session.can_use_tool.clone(),
        prompt: session.prompt.clone(),
        spent: Mutex::new(0.0),
        start_gate: Arc::new(tokio::sync::Mutex::new(())),
        live: Mutex::new(Vec::new()),
        runner: Arc::new(ChildLoop),
        events: events.clone(),
        background,
    };
    (Some(Arc::new(subagents)), Some(notices), order.view().0)
}
