//! Reading the journal for a person: `reloop sessions` and the subagent tree.

use reloop_core::{Event, Usage};
use reloop_journal::{JournalError, SessionOverview, Subagent};

use crate::conn::{database_error, Conn};

/// The kinds of events whose `model` and `usage` a listing sums, as SQLite's listing does.
const PRICED: &str = "SELECT seq, event::jsonb ->> 'model', (event::jsonb -> 'usage')::text
     FROM reloop.step_bodies WHERE session_id = $1 AND seq > $2 AND seq <= $3
       AND kind IN ('model_done', 'compact_done') ORDER BY seq";
const PROMPT: &str = "SELECT event FROM reloop.step_bodies
     WHERE session_id = $1 AND seq > $2 AND seq <= $3 AND kind = 'user_input' ORDER BY seq LIMIT 1";

impl Conn {
    pub(crate) fn overview(&mut self) -> Result<Vec<SessionOverview>, JournalError> {
        let rows = self
            .client
            .query(
                "SELECT s.id, s.created_at_ms, (extract(epoch FROM s.last_written_at) * 1000)::bigint,
                        s.terminal_reason, s.parent_id, s.fork_seq, s.run_config,
                        s.base_seq + (SELECT count(*) FROM reloop.steps st WHERE st.session_id = s.id)
                 FROM reloop.sessions s ORDER BY s.last_written_at, s.created_order",
                &[],
            )
            .map_err(|e| database_error(&self.place, &e))?;
        let (priced, prompt) = (self.stmt(PRICED)?, self.stmt(PROMPT)?);
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            let id: String = r.get(0);
            let decode = |what, source| JournalError::Decode { session: id.clone(), seq: 0, what, source };
            let mut first_prompt: Option<Event> = None;
            let mut responses = Vec::new();
            // A fork's first steps are its parent's: each stored piece in order.
            for seg in self.segments(&id)? {
                let range: [&(dyn postgres::types::ToSql + Sync); 3] = [&seg.session, &seg.after, &seg.upto];
                let db = |e: postgres::Error| database_error(&self.place, &e);
                if first_prompt.is_none() {
                    if let Some(p) = self.client.query_opt(&prompt, &range).map_err(db)? {
                        first_prompt = Some(reloop_journal::read_event(p.get(0)).map_err(|e| decode("event", e))?);
                    }
                }
                for row in self.client.query(&priced, &range).map_err(db)? {
                    let usage: Usage = match row.get::<_, Option<&str>>(2) {
                        Some(u) => serde_json::from_str(u).map_err(|e| decode("usage", e))?,
                        None => Usage::default(),
                    };
                    responses.push((row.get::<_, Option<String>>(1), usage));
                }
            }
            out.push(SessionOverview {
                created_at_ms: r.get::<_, i64>(1) as u64,
                last_written_ms: r.get::<_, Option<i64>>(2).unwrap_or_default() as u64,
                terminal_reason: r.get(3),
                parent: r.get::<_, Option<String>>(4).zip(r.get::<_, Option<i64>>(5).map(|s| s as u64)),
                run_config: serde_json::from_str(r.get(6)).map_err(|e| decode("run config", e))?,
                steps: r.get::<_, i64>(7) as u64,
                first_prompt,
                responses,
                id,
            });
        }
        Ok(out)
    }

    pub(crate) fn subagents_of(&mut self, parent: &str) -> Result<Vec<Subagent>, JournalError> {
        let rows = self
            .client
            .query(
                "SELECT id, run_config::jsonb -> 'agent' ->> 'tool_use_id', run_config::jsonb -> 'agent' ->> 'agent_type'
                 FROM reloop.sessions WHERE run_config::jsonb -> 'agent' ->> 'parent' = $1
                 ORDER BY created_at_ms, created_order",
                &[&parent],
            )
            .map_err(|e| database_error(&self.place, &e))?;
        Ok(rows
            .iter()
            .map(|r| Subagent {
                id: r.get(0),
                tool_use_id: r.get::<_, Option<String>>(1).unwrap_or_default(),
                agent_type: r.get::<_, Option<String>>(2).unwrap_or_default(),
            })
            .collect())
    }

    /// The sessions a `/clear` started from `session`, in creation order.
    pub(crate) fn cleared_from(&mut self, session: &str) -> Result<Vec<String>, JournalError> {
        let rows = self
            .client
            .query(
                "SELECT id FROM reloop.sessions
                 WHERE run_config::jsonb -> 'print' -> 'cleared_from' ->> 'session' = $1
                 ORDER BY created_at_ms, created_order",
                &[&session],
            )
            .map_err(|e| database_error(&self.place, &e))?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }
}
