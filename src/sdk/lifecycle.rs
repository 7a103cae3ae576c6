//! What becomes of each message the host stamped with a uuid, as 2.1.332 tells it
//! (`msg_lifecycle_v1`): a `command_lifecycle` line when it is `queued` (as it arrives), when it
//! is `started` (its query begins, before the query's `system/init`), and when it is done:
//! `completed` after its query's result, or `cancelled` when an interrupt stopped that query or
//! removed it from the queue (`cancel_queued`, `interrupt_cancel_queued_v1`).
//!
//! Recorded with the bundled 2.1.332 (crates/reloop-import/tests/recorded/2.1.332/interrupt/):
//! `still_queued` (a stamped message queued behind a running one, a plain interrupt, a third
//! sent while idle) and `cancel_queued`. Each line's own `uuid` is a new random one, as Claude
//! Code's are. The lines are the process's account of its input, like its control responses:
//! a replay of the session does not print them. Other profiles print none.

use reloop_core::profile::ProfileId;
use serde_json::json;

use super::protocol::Wire;

/// The stamped messages of the running query, and whether an interrupt stopped it.
pub(super) struct Lifecycle {
    wire: Wire,
    on: bool,
    running: Vec<String>,
    interrupted: bool,
}

impl Lifecycle {
    /// Lines for the profile `compat` names: 2.1.332's, or none.
    pub(super) fn new(wire: Wire, compat: &str) -> Self {
        let on = ProfileId::parse(compat) == Some(ProfileId::ClaudeCode2_1_332);
        Lifecycle { wire, on, running: Vec::new(), interrupted: false }
    }

    /// A stamped message arrived while a query runs: it waits.
    pub(super) fn queued(&self, session: &str, uuid: Option<&str>) {
        if let Some(uuid) = uuid {
            self.line(session, uuid, "queued");
        }
    }

    /// A query of these messages begins; those that never waited are `queued` first (a message
    /// sent while nothing ran, the first one).
    pub(super) fn started(&mut self, session: &str, uuids: Vec<String>, waited: bool) {
        for uuid in &uuids {
            if !waited {
                self.line(session, uuid, "queued");
            }
            self.line(session, uuid, "started");
        }
        self.running = uuids;
        self.interrupted = false;
    }

    /// An interrupt came while a query runs: its messages end `cancelled`.
    pub(super) fn interrupted(&mut self) {
        self.interrupted = true;
    }

    /// The running query printed its result: its messages are done.
    pub(super) fn ended(&mut self, session: &str) {
        let state = if self.interrupted { "cancelled" } else { "completed" };
        for uuid in std::mem::take(&mut self.running) {
            self.line(session, &uuid, state);
        }
        self.interrupted = false;
    }

    /// Waiting messages an interrupt's `cancel_queued` removed.
    pub(super) fn cancelled(&self, session: &str, uuids: &[String]) {
        for uuid in uuids {
            self.line(session, uuid, "cancelled");
        }
    }

    fn line(&self, session: &str, command_uuid: &str, state: &str) {
        if self.on {
            self.wire.line(&json!({
                "type": "command_lifecycle", "command_uuid": command_uuid, "state": state,
                "uuid": uuid::Uuid::new_v4().to_string(), "session_id": session,
            }));
        }
    }
}
