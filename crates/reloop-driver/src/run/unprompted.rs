//! Sessions that start before their first message: the one a stream-json `/clear` begins, and
//! the process's first when its first prompt is `/clear` (`settings_slash/clear`,
//! `settings_slash/stream_clear`, both versions). Claude Code starts such a session at once: its
//! SessionStart hooks run then (`source: "clear"`, or `startup`), before the `/clear`'s
//! `system/init` and `result`, whether or not a message follows, and its SessionEnd hooks run
//! when it ends (`reason: "clear"` for another `/clear`, `other` when the input closes).
//!
//! Journaled as any session: its header with its first step (a SessionStart run, else the first
//! message), or with no step at all when it ends having journaled none, so a replay prints what
//! the header records.

use reloop_core::{ContentBlock, Event, State};
use tokio::sync::mpsc;

use super::Runner;
use crate::error::DriverError;
use crate::handle::{Control, RunEvent, RunHandle, RunResult};
use crate::session::Session;

impl Session {
    /// Starts the session with no prompt: its SessionStart hooks run, then
    /// [`RunEvent::Ready`] is sent and the session waits for its first message (or a close, or
    /// a `clear`) as a kept-alive session waits between queries.
    pub fn start_unprompted(mut self) -> RunHandle {
        let (session_id, _, header) = self.prepare(Vec::new());
        let state = State::new(self.core.clone());
        self.launch(session_id, state, 0, Vec::new(), header)
    }
}

impl Runner {
    /// After an unprompted start's SessionStart hooks: says it is ready, then waits for the
    /// first message, which opens with the gathered context as a prompt does.
    pub(super) async fn first_message(
        &mut self,
        control: &mut mpsc::UnboundedReceiver<Control>,
    ) -> Result<Option<Event>, DriverError> {
        if let Some(journal) = self.journal.as_mut() {
            journal.release(&self.out);
        }
        let _ = self.out.send(RunEvent::Ready);
        let first = self.next_query(control).await?;
        Ok(first.map(|event| match event {
            Event::UserInput { content, origin, local } if self.run.gather_context => {
                let context = crate::context::user_context(&self.run.cwd, &crate::context::today());
                let mut opened = vec![ContentBlock::text(context)];
                opened.extend(content);
                Event::UserInput { content: opened, origin, local }
            }
            other => other,
        }))
    }

    /// An unprompted session that ended before any message: its SessionEnd hooks run, and its
    /// header is journaled if no step carried it.
    pub(super) async fn end_unprompted(mut self) -> Result<RunResult, DriverError> {
        self.session_end().await?;
        if let (Some(header), Some(journal)) = (self.pending_header.take(), self.journal.as_mut()) {
            journal.create_without_steps(&header)?;
        }
        Ok(self.result())
    }
}
