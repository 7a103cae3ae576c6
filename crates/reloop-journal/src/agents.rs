//! Subagents: a child session names the session and the `Agent` call it answers in its header's
//! `run_config.agent` (`{"parent", "tool_use_id", "agent_type"}`), written with its first step, so
//! the tree needs no table of its own and a child never exists without its parent's name.

use rusqlite::params;

use crate::error::JournalError;
use crate::store::Journal;

/// One subagent of a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subagent {
    /// The child session.
    pub id: String,
    /// The parent's `Agent` call it answers.
    pub tool_use_id: String,
    /// The agent definition it ran under.
    pub agent_type: String,
}

impl Journal {
    /// The subagents `parent` started, in creation order.
    pub fn subagents_of(&self, parent: &str) -> Result<Vec<Subagent>, JournalError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, json_extract(run_config, '$.agent.tool_use_id'), json_extract(run_config, '$.agent.agent_type')
             FROM sessions WHERE json_extract(run_config, '$.agent.parent') = ?1
             ORDER BY created_at_ms, rowid",
        )?;
        let rows = stmt.query_map(params![parent], |r| {
            Ok(Subagent {
                id: r.get(0)?,
                tool_use_id: r.get::<_, Option<String>>(1)?.unwrap_or_default(),
                agent_type: r.get::<_, Option<String>>(2)?.unwrap_or_default(),
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The sessions a `/clear` started from `session`, in creation order.
    pub fn cleared_from(&self, session: &str) -> Result<Vec<String>, JournalError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT id FROM sessions WHERE json_extract(run_config, '$.print.cleared_from.session') = ?1
             ORDER BY created_at_ms, rowid",
        )?;
        let rows = stmt.query_map(params![session], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The session that answers `parent`'s call `tool_use_id`, if one was started.
    pub fn subagent_for(&self, parent: &str, tool_use_id: &str) -> Result<Option<String>, JournalError> {
        Ok(self.subagents_of(parent)?.into_iter().find(|s| s.tool_use_id == tool_use_id).map(|s| s.id))
    }
}
