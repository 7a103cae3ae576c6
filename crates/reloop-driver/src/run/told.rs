//! Between queries, while background agents run (flag 44, [`crate::background`]): the loop
//! waits for the next child's end and sends its notification as a query of its own, as
//! 2.1.332's print mode does before it exits (`subagent/default`). A caller's message, setting
//! or compaction still comes between; a close waits for the children, an abort or a `/clear`
//! stops them.

use reloop_core::profile::notified_run;
use reloop_core::{Event, State};
use tokio::sync::mpsc;

use super::{session_hooks, Runner};
use crate::error::DriverError;
use crate::handle::{Control, RunEvent};
use crate::notices::Notices;

impl Runner {
    /// A resumed session's background agents whose end a crash kept it from telling go on in
    /// the background ([`crate::subagent::Subagents::relaunch_untold`]). A session that had
    /// ended owes their notifications: they come first, and `true` says it ends after them
    /// (`pending` then holds the first).
    pub(super) async fn owed_after_resume(
        &mut self,
        control: &mut mpsc::UnboundedReceiver<Control>,
        pending: &mut std::collections::VecDeque<Event>,
    ) -> Result<bool, DriverError> {
        let (Some(agents), Some(state)) = (&self.agents, &self.state) else { return Ok(false) };
        if self.seq == 0 || !state.context().config().background_agents() {
            return Ok(false);
        }
        let history = state.messages().messages();
        agents.relaunch_untold(&history, self.tools_in_flight.permissions()).map_err(DriverError::Background)?;
        let owed = self.notices.as_ref().is_some_and(Notices::pending);
        if !owed || !pending.is_empty() || !self.state.as_ref().is_some_and(State::is_done) {
            return Ok(false);
        }
        let mut closing = !self.keep_alive;
        match self.after_query(control, &mut closing).await? {
            Some(event) => pending.push_back(event),
            None => return Ok(true),
        }
        Ok(false)
    }

    /// What follows a query that ended: a background child's notification, else (for a
    /// kept-alive session that is not closing) the caller's next query. `None`: the session ends.
    pub(super) async fn after_query(
        &mut self,
        control: &mut mpsc::UnboundedReceiver<Control>,
        closing: &mut bool,
    ) -> Result<Option<Event>, DriverError> {
        if let Some(mut notices) = self.notices.take() {
            let next = self.while_in_background(&mut notices, control, closing).await;
            self.notices = Some(notices);
            if let Some(event) = next? {
                self.query_begins();
                return Ok(Some(event));
            }
        }
        if !self.keep_alive || *closing {
            return Ok(None);
        }
        self.next_query(control).await
    }

    async fn while_in_background(
        &mut self,
        notices: &mut Notices,
        control: &mut mpsc::UnboundedReceiver<Control>,
        closing: &mut bool,
    ) -> Result<Option<Event>, DriverError> {
        let mut control_open = true;
        while notices.pending() {
            tokio::select! {
                notice = notices.next() => {
                    let Some(notice) = notice else { continue };
                    if let Event::UserInput { origin, .. } = &notice {
                        if let Some(run_id) = notified_run(origin.as_ref()) {
                            let _ = self.out.send(RunEvent::Notified { run_id: run_id.to_string() });
                        }
                    }
                    return Ok(Some(notice));
                }
                signal = control.recv(), if control_open => match signal {
                    Some(Control::Send(content, origin, local)) if self.keep_alive && !*closing => {
                        return Ok(Some(Event::UserInput { content, origin, local }));
                    }
                    Some(Control::Compact) if self.keep_alive && !*closing => return Ok(Some(Event::CompactRequested)),
                    Some(Control::Set(event)) => {
                        self.apply(event)?;
                    }
                    Some(Control::Send(..) | Control::Compact) => {}
                    Some(Control::Close) => *closing = true,
                    None => (*closing, control_open) = (true, false),
                    Some(Control::Clear) => {
                        self.end_reason = session_hooks::CLEAR;
                        self.stop_background().await;
                        return Ok(None);
                    }
                    Some(Control::Abort) => {
                        self.stop_background().await;
                        return Ok(None);
                    }
                },
            }
        }
        Ok(None)
    }

    /// Stops what is in flight and gives `error` back, for the loop to end on it.
    pub(super) fn cancelled(&mut self, error: DriverError) -> DriverError {
        self.cancel_all();
        error
    }

    /// Stops the background children and waits (a bounded while) for them to journal their end.
    async fn stop_background(&mut self) {
        if let Some(agents) = &self.agents {
            agents.background.ended.cancel();
            agents.settle(true).await;
        }
    }

    /// A new query starts: what the last one cancelled may still report, and none of it belongs
    /// to this one; its time and API time count from here.
    pub(super) fn query_begins(&mut self) {
        while self.inbox_rx.try_recv().is_ok() {}
        while self.starts_rx.try_recv().is_ok() {}
        self.started = std::time::Instant::now();
        self.api_ms_at_query = self.api_ms.load(std::sync::atomic::Ordering::Relaxed);
    }
}
