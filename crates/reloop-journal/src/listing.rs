//! Reading a journal for a person: which session was written last, what `sessions` shows of
//! each, and whether a transcript was imported before.

use reloop_core::{Event, Usage};
use rusqlite::{params, OptionalExtension};
use serde_json::Value;

use crate::error::JournalError;
use crate::store::Journal;

/// The session whose latest write is the newest (v5's `session_writes`); before any write is
/// recorded, its creation time stands for it. A subagent's session is never `last`: its parent
/// is what a person ran (and resuming or replaying it covers the child).
pub(crate) const LAST_WRITTEN: &str = "SELECT s.id FROM sessions s LEFT JOIN session_writes w ON w.session_id = s.id
     WHERE json_extract(s.run_config, '$.agent') IS NULL
     ORDER BY coalesce(w.last_written_ms, s.created_at_ms) DESC, s.rowid DESC LIMIT 1";

/// What a listing shows of one session.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionOverview {
    /// The session's id.
    pub id: String,
    /// Wall-clock start, in milliseconds since the Unix epoch.
    pub created_at_ms: u64,
    /// This machine's clock at the session's latest write.
    pub last_written_ms: u64,
    /// How many steps are journaled.
    pub steps: u64,
    /// Why the session ended (a terminal reason's name); `None` while it may still go on.
    pub terminal_reason: Option<String>,
    /// For a fork: the parent session's id and the step it was forked at.
    pub parent: Option<(String, u64)>,
    /// Provider, model, cwd, an import's file...
    pub run_config: Value,
    /// The session's first `user_input` event.
    pub first_prompt: Option<Event>,
    /// Every response's model (when it named one) and usage, in order.
    pub responses: Vec<(Option<String>, Usage)>,
}

impl Journal {
    /// Resolves a session selector: a full id, a unique id prefix, or `last`.
    pub fn resolve(&self, selector: &str) -> Result<String, JournalError> {
        if selector == "last" {
            return self.conn.query_row(LAST_WRITTEN, [], |r| r.get(0)).optional()?.ok_or(JournalError::Empty);
        }
        let mut stmt = self.conn.prepare("SELECT id FROM sessions WHERE substr(id, 1, length(?1)) = ?1")?;
        let ids: Vec<String> = stmt.query_map([selector], |r| r.get(0))?.collect::<Result<_, _>>()?;
        if let Some(exact) = ids.iter().find(|id| *id == selector) {
            return Ok(exact.clone());
        }
        match ids.len() {
            0 => Err(JournalError::NoSuchSession(selector.to_string())),
            1 => Ok(ids[0].clone()),
            count => Err(JournalError::AmbiguousSession { selector: selector.to_string(), count }),
        }
    }

    /// Every session with what a listing shows of it, oldest written first.
    pub fn overview(&self) -> Result<Vec<SessionOverview>, JournalError> {
        // A session's steps are the keys of its number (see `steps`): each query reads only its
        // own range. Through the `events` view, each read every session's steps.
        let mut stmt = self.conn.prepare(
            "SELECT s.id, s.created_at_ms, coalesce(w.last_written_ms, s.created_at_ms), s.terminal_reason,
                    s.parent_id, s.fork_seq, s.run_config, n.n,
                    (SELECT count(*) FROM steps st WHERE st.key >= n.n << 32 AND st.key < (n.n + 1) << 32)
             FROM sessions s LEFT JOIN session_writes w ON w.session_id = s.id
                  LEFT JOIN session_numbers n ON n.id = s.id
             ORDER BY coalesce(w.last_written_ms, s.created_at_ms), s.rowid",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, Option<String>>(3)?,
                r.get::<_, Option<String>>(4)?,
                r.get::<_, Option<i64>>(5)?,
                r.get::<_, String>(6)?,
                r.get::<_, Option<i64>>(7)?,
                r.get::<_, i64>(8)?,
            ))
        })?;
        let rows: Vec<_> = rows.collect::<Result<_, _>>()?;
        let mut prompt = self.conn.prepare(
            "SELECT event FROM steps WHERE key >= ?1 << 32 AND key < (?1 + 1) << 32
                 AND json_extract(event, '$.kind') = 'user_input' ORDER BY key LIMIT 1",
        )?;
        let mut usage = self.conn.prepare(
            "SELECT json_extract(event, '$.model'), json_extract(event, '$.usage') FROM steps
             WHERE key >= ?1 << 32 AND key < (?1 + 1) << 32
                 AND json_extract(event, '$.kind') IN ('model_done', 'compact_done') ORDER BY key",
        )?;
        let mut out = Vec::with_capacity(rows.len());
        for (id, created, written, terminal_reason, parent, fork_seq, run_config, number, steps) in rows {
            let decode = |what, source| JournalError::Decode { session: id.clone(), seq: 0, what, source };
            let first: Option<String> =
                prompt.query_row(params![number], |r| r.get(0)).map(Some).or_else(|e| match e {
                    rusqlite::Error::QueryReturnedNoRows => Ok(None),
                    e => Err(e),
                })?;
            let responses = usage
                .query_map(params![number], |r| Ok((r.get::<_, Option<String>>(0)?, r.get::<_, Option<String>>(1)?)))?
                .collect::<Result<Vec<_>, _>>()?
                .into_iter()
                .map(|(model, usage)| {
                    let usage = usage.map(|u| serde_json::from_str(&u)).transpose().map_err(|e| decode("usage", e))?;
                    Ok((model, usage.unwrap_or_default()))
                })
                .collect::<Result<_, JournalError>>()?;
            out.push(SessionOverview {
                first_prompt: first.map(|p| serde_json::from_str(&p)).transpose().map_err(|e| decode("event", e))?,
                run_config: serde_json::from_str(&run_config).map_err(|e| decode("run config", e))?,
                id,
                created_at_ms: created as u64,
                last_written_ms: written as u64,
                steps: steps as u64,
                terminal_reason,
                parent: parent.zip(fork_seq.map(|s| s as u64)),
                responses,
            });
        }
        Ok(out)
    }

    /// Sessions imported from `file` (the path as the import recorded it), with their run
    /// configs, oldest first: an import of the same file again finds its earlier copies here.
    pub fn imports_of(&self, file: &str) -> Result<Vec<(String, Value)>, JournalError> {
        let mut stmt = self.conn.prepare(
            "SELECT id, run_config FROM sessions
             WHERE json_extract(run_config, '$.provider') = 'import' AND json_extract(run_config, '$.file') = ?1
             ORDER BY rowid",
        )?;
        let rows = stmt.query_map([file], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
        rows.map(|row| {
            let (id, config) = row?;
            let config = serde_json::from_str(&config).map_err(|source| JournalError::Decode {
                session: id.clone(),
                seq: 0,
                what: "run config",
                source,
            })?;
            Ok((id, config))
        })
        .collect()
    }
}

#[cfg(test)]
mod tests {
    use crate::record::{SessionHeader, ENGINE_VERSION};
    use crate::store::Journal;
    use rusqlite::Connection;

    fn header(id: &str, created_at_ms: u64) -> SessionHeader {
        SessionHeader {
            id: id.into(),
            created_at_ms,
            engine_version: ENGINE_VERSION.into(),
            core_config: reloop_core::Config::default(),
            run_config: serde_json::json!({"provider": "import", "file": "/t.jsonl"}),
            parent: None,
        }
    }

    #[test]
    fn last_is_the_session_written_last_in_old_and_new_journals() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v3.db");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(crate::schema::V1_SCHEMA).unwrap();
        conn.pragma_update(None, "application_id", crate::schema::APPLICATION_ID).unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
        for (id, created) in [("newer", 2_000), ("older", 1_000)] {
            conn.execute(
                "INSERT INTO sessions (id, created_at_ms, engine_version, core_config, run_config)
                 VALUES (?1, ?2, '0.0.9', '{}', '{}')",
                rusqlite::params![id, created],
            )
            .unwrap();
        }
        drop(conn);
        // An old journal reads as before: its sessions were last written when created.
        let journal = Journal::create_or_open(&path).unwrap();
        assert_eq!(journal.resolve("last").unwrap(), "newer");
        // A session whose own clock is the oldest (an import of an old transcript) is `last`
        // once written.
        journal.create_session(&header("imported", 5)).unwrap();
        assert_eq!(journal.resolve("last").unwrap(), "imported");
        let listed: Vec<String> = journal.overview().unwrap().into_iter().map(|o| o.id).collect();
        assert_eq!(listed, ["older", "newer", "imported"]);
        assert_eq!(journal.imports_of("/t.jsonl").unwrap().len(), 1);
        assert!(journal.imports_of("/other.jsonl").unwrap().is_empty());
    }
}
