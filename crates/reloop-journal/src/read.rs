//! Reading a session's steps back from SQLite, one row at a time and in order: decoded
//! ([`Journal::visit_steps`]), as rows ([`Journal::visit_rows`]) or only the columns replay
//! compares ([`Journal::visit_replay_rows`], [`Journal::visit_hashed_rows`]).

use crate::error::JournalError;
use crate::record::StepRecord;
use crate::rows::{seq_of, session_number, step_key, ReplayRow, StepRow, SEQ_BITS};
use crate::store::Journal;

impl Journal {
    /// Hands the session's steps to `visit` one at a time, in order, holding only one in memory;
    /// `visit` returns `false` to stop early. Returns how many it was handed.
    pub fn visit_steps(&self, id: &str, mut visit: impl FnMut(StepRecord) -> bool) -> Result<usize, JournalError> {
        self.visit_rows(id, 0, |row| Ok(visit(row.record(id)?)))
    }

    /// Like [`Journal::visit_steps`], but each step is handed as its row, undecoded; an error
    /// from `visit` stops the walk and is returned.
    pub(crate) fn visit_rows(
        &self,
        id: &str,
        from: u64,
        mut visit: impl FnMut(&StepRow<'_>) -> Result<bool, JournalError>,
    ) -> Result<usize, JournalError> {
        let columns = "key, at_ms, event, from_phase, to_phase, turn_before, turn_after,
                       reason_kind, reason_json, effects, digest, outcome";
        self.walk_session(id, columns, from, |r| {
            let text = |i: usize| r.get_ref(i)?.as_str_or_null().map_err(rusqlite::Error::from);
            visit(&StepRow {
                seq: seq_of(r.get(0)?),
                at_ms: r.get::<_, i64>(1)? as u64,
                event: text(2)?.unwrap_or_default(),
                from_phase: r.get_ref(3)?,
                to_phase: r.get_ref(4)?,
                turn_before: r.get(5)?,
                turn_after: r.get(6)?,
                reason_kind: text(7)?,
                reason_json: text(8)?,
                effects: text(9)?.unwrap_or("[]"),
                digest: r.get::<_, i64>(10)? as u64,
                outcome: r.get::<_, Option<i64>>(11)?.map(|hash| hash as u64),
            })
        })
    }

    /// Like [`Journal::visit_steps`], but each step is handed undecoded, and only the columns
    /// replay compares are read.
    pub fn visit_replay_rows(
        &self,
        id: &str,
        visit: impl FnMut(&ReplayRow<'_>) -> Result<bool, JournalError>,
    ) -> Result<usize, JournalError> {
        self.replay_rows(id, 0, true, visit)
    }

    /// Like [`Journal::visit_replay_rows`] from step `from` on, but a row that holds the hash of
    /// what its step did is read without the text of it (effects and reason), which only a
    /// step that differs needs ([`Journal::visit_replay_row`] reads it then): reading those
    /// columns was a sixteenth of a streamed replay's reading thread.
    pub fn visit_hashed_rows(
        &self,
        id: &str,
        from: u64,
        visit: impl FnMut(&ReplayRow<'_>) -> Result<bool, JournalError>,
    ) -> Result<usize, JournalError> {
        self.replay_rows(id, from, false, visit)
    }

    /// Hands `visit` step `seq`'s row as [`Journal::visit_replay_rows`] reads it, whole; `false`
    /// when the session has no such step.
    pub fn visit_replay_row(
        &self,
        id: &str,
        seq: u64,
        mut visit: impl FnMut(&ReplayRow<'_>) -> Result<(), JournalError>,
    ) -> Result<bool, JournalError> {
        let mut found = false;
        self.replay_rows(id, seq, true, |row| {
            found = row.seq == seq;
            if found {
                visit(row)?;
            }
            Ok(false)
        })?;
        Ok(found)
    }

    fn replay_rows(
        &self,
        id: &str,
        from: u64,
        always_text: bool,
        mut visit: impl FnMut(&ReplayRow<'_>) -> Result<bool, JournalError>,
    ) -> Result<usize, JournalError> {
        let columns = "key, event, to_phase, reason_kind, reason_json, effects, digest, outcome";
        self.walk_session(id, columns, from, |r| {
            // Read as the borrowed values they are: `Row::get`'s conversions cost a tenth of a
            // streamed replay's reading thread.
            let text = |i: usize| r.get_ref(i)?.as_str_or_null().map_err(rusqlite::Error::from);
            let bytes = |i: usize| r.get_ref(i)?.as_bytes_or_null().map_err(rusqlite::Error::from);
            let integer = |i: usize| r.get_ref(i)?.as_i64().map_err(rusqlite::Error::from);
            let outcome = r.get_ref(7)?.as_i64_or_null().map_err(rusqlite::Error::from)?.map(|hash| hash as u64);
            let with_text = always_text || outcome.is_none();
            visit(&ReplayRow {
                seq: seq_of(integer(0)?),
                event: text(1)?.unwrap_or_default(),
                to_phase: r.get_ref(2)?,
                reason_kind: if with_text { text(3)? } else { None },
                reason_json: if with_text { bytes(4)? } else { None },
                effects: if with_text { bytes(5)?.unwrap_or(b"[]") } else { b"[]" },
                digest: integer(6)? as u64,
                outcome,
                with_text,
            })
        })
    }

    /// Hands `each` the session's rows from step `from` on (`columns` of them, the key first) in
    /// order, until it returns `false` or an error; returns how many it was handed.
    fn walk_session(
        &self,
        id: &str,
        columns: &str,
        from: u64,
        mut each: impl FnMut(&rusqlite::Row<'_>) -> Result<bool, JournalError>,
    ) -> Result<usize, JournalError> {
        let Some(number) = session_number(&self.conn, id)? else { return Ok(0) };
        let mut stmt = self
            .conn
            .prepare_cached(&format!("SELECT {columns} FROM steps WHERE key >= ?1 AND key < ?2 ORDER BY key"))?;
        let first = step_key(number, 0).unwrap_or(i64::MAX);
        // A step past the last a key can hold is no step: the range is then empty.
        let start = step_key(number, from).unwrap_or(i64::MAX);
        let mut rows = stmt.query([start, first.saturating_add(1 << SEQ_BITS)])?;
        let mut handed = 0;
        while let Some(r) = rows.next()? {
            handed += 1;
            if !each(r)? {
                break;
            }
        }
        Ok(handed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{APPLICATION_ID, V1_SCHEMA};
    use reloop_core::{Command, ContentBlock, Effect, Event};
    use rusqlite::Connection;

    /// A journal as reloop wrote it before v4 (the v1 tables hold v3's rows), with one step.
    fn v3_journal(path: &std::path::Path) {
        let conn = Connection::open(path).unwrap();
        conn.execute_batch(V1_SCHEMA).unwrap();
        conn.execute_batch(
            "CREATE TABLE session_locks (session_id TEXT PRIMARY KEY, pid INTEGER NOT NULL,
                                         acquired_at_ms INTEGER NOT NULL) WITHOUT ROWID;
             CREATE INDEX sessions_by_parent ON sessions(parent_id);
             INSERT INTO sessions (id, created_at_ms, engine_version, core_config, run_config)
                 VALUES ('old3', 5, '0.1.0', '{\"model\": \"m\"}', '{}');
             INSERT INTO events VALUES ('old3', 1, 77, 'user_input',
                 '{\"kind\":\"user_input\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}');
             INSERT INTO transitions VALUES ('old3', 1, 'idle', 'awaiting_model', 0, 1, NULL, NULL, NULL,
                 '[{\"effect\":\"cancel_model\"}]', '00000000deadbeef');
             INSERT INTO events VALUES ('old3', 2, 78, 'abort', '{\"kind\":\"abort\"}');
             INSERT INTO transitions VALUES ('old3', 2, 'awaiting_model', 'some_new_phase', 1, 1, NULL, NULL,
                 NULL, '[]', 'ffffffffffffffff');",
        )
        .unwrap();
        conn.pragma_update(None, "application_id", APPLICATION_ID).unwrap();
        conn.pragma_update(None, "user_version", 3).unwrap();
    }

    #[test]
    fn a_v3_journal_moves_to_one_row_per_step_and_reads_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v3.db");
        v3_journal(&path);
        let mut j = Journal::open_for_reading(&path).unwrap();
        let steps = j.steps("old3").unwrap();
        assert_eq!(steps.len(), 2);
        assert_eq!(steps[0].event, Event::user_input(vec![ContentBlock::text("hi")]));
        assert_eq!((steps[0].from_phase.as_str(), steps[0].to_phase.as_str()), ("idle", "awaiting_model"));
        assert_eq!((steps[0].at_ms, steps[0].turn_before, steps[0].turn_after), (77, 0, 1));
        assert_eq!(steps[0].effects, serde_json::to_value(vec![Effect::from(Command::CancelModel)]).unwrap());
        assert_eq!(steps[0].digest, 0xdead_beef);
        assert_eq!(steps[1].to_phase, "some_new_phase", "a phase without a number is kept by name");
        assert_eq!(steps[1].effects, serde_json::json!([]));
        assert_eq!(steps[1].digest, u64::MAX);
        assert_eq!(j.sessions().unwrap()[0].steps, 2);

        // The old tables' queries still work, on views with the old columns.
        let old: (String, String, String, String) = j
            .conn
            .query_row(
                "SELECT e.kind, t.to_phase, t.effects, t.digest FROM events e JOIN transitions t
                     ON t.session_id = e.session_id AND t.seq = e.seq WHERE e.session_id = 'old3' AND e.seq = 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .unwrap();
        assert_eq!(
            old,
            (
                "user_input".into(),
                "awaiting_model".into(),
                "[{\"effect\":\"cancel_model\"}]".into(),
                "00000000deadbeef".into()
            )
        );

        // New steps of the old session follow its old ones.
        j.lock_session("old3").unwrap();
        let mut next = steps[1].clone();
        next.seq = 3;
        next.to_phase = "done".into();
        j.append("old3", &next).unwrap();
        assert_eq!(j.steps("old3").unwrap().iter().map(|s| s.seq).collect::<Vec<_>>(), vec![1, 2, 3]);
    }

    #[test]
    fn a_v3_digest_that_is_not_hex_stops_the_migration_naming_its_step() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v3.db");
        v3_journal(&path);
        let conn = Connection::open(&path).unwrap();
        conn.execute("UPDATE transitions SET digest = 'not-a-digest!!!!' WHERE session_id = 'old3' AND seq = 2", [])
            .unwrap();
        drop(conn);

        let err = Journal::open_for_reading(&path).unwrap_err();
        assert!(
            matches!(&err, JournalError::BadDigest { session, seq: 2, digest }
                if session == "old3" && digest == "not-a-digest!!!!"),
            "{err:?}"
        );
        assert!(err.to_string().contains("session old3, step 2"), "{err}");
        // The migration ran in one transaction: the file is still the v3 journal it was.
        let conn = Connection::open(&path).unwrap();
        let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
        assert_eq!(version, 3);
        let digest: String = conn.query_row("SELECT digest FROM transitions WHERE seq = 2", [], |r| r.get(0)).unwrap();
        assert_eq!(digest, "not-a-digest!!!!");
    }
}
