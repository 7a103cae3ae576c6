//! The index beside a SQLite journal: a file of its own (so building it never takes the
//! journal's write lock from a run), with the journal attached read-only; texts in FTS5.

use std::path::Path;

use rusqlite::{params, params_from_iter, Connection, OptionalExtension, ToSql};

use super::extract::step_facts;
use super::filter::Param;
use super::{read_only_uri, Filter, IndexError, ListRow, Listing, LiveWriter, Origin, PriceTable, Totals};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS sessions (
    id                TEXT PRIMARY KEY,
    jrowid            INTEGER NOT NULL,          -- the journal's sessions.rowid: new ones are above the last
    n                 INTEGER,                   -- the journal's session number (its steps' key >> 32)
    created_at_ms     INTEGER NOT NULL,
    last_written_ms   INTEGER NOT NULL DEFAULT 0,-- the journal's session_writes when last read
    last_seq          INTEGER NOT NULL DEFAULT 0,-- the last step indexed
    last_at_ms        INTEGER NOT NULL DEFAULT 0,
    terminal_reason   TEXT,
    writer            TEXT,                      -- who wrote it at the last refresh
    model             TEXT,
    requested_model   TEXT,
    kind              TEXT NOT NULL,
    parent_id         TEXT,
    first_prompt      TEXT,
    input_tokens      INTEGER NOT NULL DEFAULT 0,
    output_tokens     INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd          REAL NOT NULL DEFAULT 0,
    unpriced          INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS sessions_created ON sessions(created_at_ms);
CREATE INDEX IF NOT EXISTS sessions_parent ON sessions(parent_id);
CREATE INDEX IF NOT EXISTS sessions_jrowid ON sessions(jrowid);
CREATE VIRTUAL TABLE IF NOT EXISTS texts USING fts5(body, sid UNINDEXED, seq UNINDEXED, kind UNINDEXED);
";

/// The list's columns, in [`row`]'s order.
const COLUMNS: &str = "id, created_at_ms, last_at_ms, last_seq, terminal_reason, writer, model, requested_model, kind,
     parent_id, coalesce(first_prompt, ''), input_tokens, output_tokens, cache_read_tokens, cost_usd, unpriced";

/// The most steps one refresh reads of one session: a huge session is indexed over refreshes.
const STEPS_PER_REFRESH: i64 = 20_000;

/// A connection to the index file, with the journal attached as `j`.
pub struct SqliteIndex {
    conn: Connection,
}

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ListRow> {
    let unpriced: i64 = r.get(15)?;
    Ok(ListRow {
        id: r.get(0)?,
        created_at_ms: r.get(1)?,
        last_at_ms: r.get(2)?,
        steps: r.get(3)?,
        terminal_reason: r.get(4)?,
        writer: r.get(5)?,
        model: r.get(6)?,
        requested_model: r.get(7)?,
        kind: r.get(8)?,
        parent_id: r.get(9)?,
        first_prompt: r.get(10)?,
        input_tokens: r.get(11)?,
        output_tokens: r.get(12)?,
        cache_read_tokens: r.get(13)?,
        cost_usd: (unpriced == 0).then_some(r.get(14)?),
        snippet: None,
    })
}

/// The words of a search as an FTS5 query: each a quoted string (so no word is taken for
/// syntax), all required. `None` when no word has a letter or digit.
pub(crate) fn fts_query(q: &str) -> Option<String> {
    let words: Vec<String> = q
        .split_whitespace()
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .take(32)
        .map(|w| format!("\"{}\"", w.replace('"', "\"\"")))
        .collect();
    (!words.is_empty()).then(|| words.join(" "))
}

impl SqliteIndex {
    /// Opens (creating) the index file and attaches the journal read-only.
    pub fn open(journal: &Path, index: &Path) -> Result<SqliteIndex, IndexError> {
        let conn = Connection::open(index)?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        conn.pragma_update(None, "journal_mode", "wal")?;
        conn.pragma_update(None, "synchronous", "normal")?;
        conn.execute("ATTACH DATABASE ?1 AS j", [read_only_uri(journal)])?;
        conn.execute_batch(SCHEMA)?;
        Ok(SqliteIndex { conn })
    }

    /// See [`super::Index::refresh`].
    pub fn refresh(&mut self, table: &PriceTable, live: LiveWriter<'_>) -> Result<usize, IndexError> {
        let tx = self.conn.transaction()?;
        // New sessions: those the journal added since the last refresh.
        let last_rowid: i64 = tx.query_row("SELECT coalesce(max(jrowid), 0) FROM sessions", [], |r| r.get(0))?;
        {
            let mut read = tx.prepare(
                "SELECT s.rowid, s.id, n.n, s.created_at_ms, s.parent_id, s.run_config, s.core_config
                 FROM j.sessions s LEFT JOIN j.session_numbers n ON n.id = s.id WHERE s.rowid > ?1 ORDER BY s.rowid",
            )?;
            let mut write = tx.prepare(
                "INSERT OR IGNORE INTO sessions (id, jrowid, n, created_at_ms, kind, parent_id, requested_model)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?;
            let mut rows = read.query([last_rowid])?;
            while let Some(r) = rows.next()? {
                let (parent, run, core): (Option<String>, String, String) = (r.get(4)?, r.get(5)?, r.get(6)?);
                let origin = Origin::of(parent.as_deref(), &run, &core);
                write.execute(params![
                    r.get::<_, String>(1)?,
                    r.get::<_, i64>(0)?,
                    r.get::<_, Option<i64>>(2)?,
                    r.get::<_, i64>(3)?,
                    origin.kind,
                    origin.parent,
                    origin.requested_model
                ])?;
            }
        }
        // Sessions that may have new steps: any not known to have ended, and any a writer has
        // taken up again since (a resume, a new query).
        let open: Vec<(String, Option<i64>)> = {
            let mut stmt = tx.prepare(
                "SELECT s.id, s.n FROM sessions s WHERE s.terminal_reason IS NULL OR s.writer IS NOT NULL OR s.last_seq = 0
                 UNION
                 SELECT s.id, s.n FROM sessions s JOIN j.session_writes w ON w.session_id = s.id
                 WHERE w.last_written_ms > s.last_written_ms",
            )?;
            let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
            rows.collect::<Result<_, _>>()?
        };
        let touched = open.len();
        {
            let mut header = tx.prepare(
                "SELECT s.parent_id, s.run_config, s.core_config, s.terminal_reason,
                        coalesce(w.last_written_ms, s.created_at_ms)
                 FROM j.sessions s LEFT JOIN j.session_writes w ON w.session_id = s.id WHERE s.id = ?1",
            )?;
            let mut totals_of = tx.prepare(
                "SELECT last_seq, last_at_ms, model, first_prompt, input_tokens, output_tokens, cache_read_tokens,
                        cost_usd, unpriced FROM sessions WHERE id = ?1",
            )?;
            let mut steps = tx.prepare(
                "SELECT key & 4294967295, at_ms, event FROM j.steps WHERE key > ?1 AND key < ?2 ORDER BY key LIMIT ?3",
            )?;
            let mut text = tx.prepare("INSERT INTO texts (body, sid, seq, kind) VALUES (?1, ?2, ?3, ?4)")?;
            let mut update = tx.prepare(
                "UPDATE sessions SET last_seq = ?2, last_at_ms = ?3, model = ?4, first_prompt = ?5, input_tokens = ?6,
                     output_tokens = ?7, cache_read_tokens = ?8, cost_usd = ?9, unpriced = ?10,
                     terminal_reason = ?11, writer = ?12, last_written_ms = ?13 WHERE id = ?1",
            )?;
            for (id, n) in open {
                let Some((parent, run, core, terminal, written)) = header
                    .query_row([&id], |r| {
                        Ok((
                            r.get::<_, Option<String>>(0)?,
                            r.get::<_, String>(1)?,
                            r.get::<_, String>(2)?,
                            r.get::<_, Option<String>>(3)?,
                            r.get::<_, i64>(4)?,
                        ))
                    })
                    .optional()?
                else {
                    continue;
                };
                let origin = Origin::of(parent.as_deref(), &run, &core);
                let mut t = totals_of.query_row([&id], |r| {
                    Ok(Totals {
                        last_seq: r.get(0)?,
                        last_at_ms: r.get(1)?,
                        model: r.get(2)?,
                        first_prompt: r.get(3)?,
                        input_tokens: r.get(4)?,
                        output_tokens: r.get(5)?,
                        cache_read_tokens: r.get(6)?,
                        cost_usd: r.get(7)?,
                        unpriced: r.get::<_, i64>(8)? != 0,
                    })
                })?;
                // The writer is asked before the steps are read: a step written after is read
                // by the next refresh, which the writer's presence makes happen.
                let writer = live(&id);
                let mut read = 0;
                if let Some(n) = n {
                    let mut rows = steps.query(params![(n << 32) | t.last_seq, (n + 1) << 32, STEPS_PER_REFRESH])?;
                    while let Some(r) = rows.next()? {
                        let (seq, at, event): (i64, i64, String) = (r.get(0)?, r.get(1)?, r.get(2)?);
                        let event: serde_json::Value = serde_json::from_str(&event).unwrap_or_default();
                        let facts = step_facts(&event);
                        for x in &facts.texts {
                            text.execute(params![x.body, id, seq, x.kind])?;
                        }
                        t.step(&facts, &origin, table, &origin.requested_model);
                        (t.last_seq, t.last_at_ms) = (seq, at);
                        read += 1;
                    }
                }
                // A session with more steps than one refresh reads stays open until all are.
                let terminal = terminal.filter(|_| read < STEPS_PER_REFRESH);
                update.execute(params![
                    id,
                    t.last_seq,
                    t.last_at_ms,
                    t.model,
                    t.first_prompt,
                    t.input_tokens,
                    t.output_tokens,
                    t.cache_read_tokens,
                    t.cost_usd,
                    t.unpriced as i64,
                    terminal,
                    writer,
                    written
                ])?;
            }
        }
        tx.commit()?;
        Ok(touched)
    }

    /// See [`super::Index::list`].
    pub fn list(&mut self, filter: &Filter) -> Result<Listing, IndexError> {
        let mut filter = filter.clone();
        if let Some(q) = &filter.q {
            match fts_query(q) {
                Some(query) => filter.q = Some(query),
                None => return Ok(Listing { rows: Vec::new(), total: 0 }),
            }
        }
        let (cond, params) =
            filter.condition(&|n| format!("?{n}"), &|p| format!("id IN (SELECT sid FROM texts WHERE texts MATCH {p})"));
        let values: Vec<Box<dyn ToSql>> = params
            .iter()
            .map(|p| -> Box<dyn ToSql> {
                match p {
                    Param::Text(s) => Box::new(s.clone()),
                    Param::Int(i) => Box::new(*i),
                    Param::Real(r) => Box::new(*r),
                }
            })
            .collect();
        let total: i64 = self.conn.query_row(
            &format!("SELECT count(*) FROM sessions WHERE {cond}"),
            params_from_iter(values.iter()),
            |r| r.get(0),
        )?;
        let sql = format!(
            "SELECT {COLUMNS} FROM sessions WHERE {cond} ORDER BY created_at_ms DESC, id LIMIT {} OFFSET {}",
            filter.per,
            filter.offset()
        );
        let mut stmt = self.conn.prepare(&sql)?;
        let mut rows: Vec<ListRow> = stmt.query_map(params_from_iter(values.iter()), row)?.collect::<Result<_, _>>()?;
        if let (Some(q), false) = (&filter.q, rows.is_empty()) {
            // Where each listed session matched: one pass over the matches, snippets made only
            // for this page's sessions.
            let ids = serde_json::to_string(&rows.iter().map(|r| &r.id).collect::<Vec<_>>()).unwrap_or_default();
            let mut stmt = self.conn.prepare(
                "SELECT sid, snippet(texts, 0, '«', '»', '…', 12) FROM texts
                 WHERE texts MATCH ?1 AND sid IN (SELECT value FROM json_each(?2))",
            )?;
            let found = stmt.query_map(params![q, ids], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
            for hit in found {
                let (sid, snippet) = hit?;
                if let Some(r) = rows.iter_mut().find(|r| r.id == sid && r.snippet.is_none()) {
                    r.snippet = Some(snippet);
                }
            }
        }
        Ok(Listing { rows, total })
    }

    /// See [`super::Index::rows`].
    pub fn rows(&mut self, ids: &[String]) -> Result<Vec<ListRow>, IndexError> {
        let ids = serde_json::to_string(ids).unwrap_or_default();
        let mut stmt = self.conn.prepare(&format!(
            "SELECT {COLUMNS} FROM sessions WHERE id IN (SELECT value FROM json_each(?1)) ORDER BY created_at_ms, id"
        ))?;
        let rows = stmt.query_map([ids], row)?.collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// See [`super::Index::choices`].
    pub fn choices(&mut self) -> Result<(Vec<String>, Vec<String>), IndexError> {
        let distinct = |sql: &str| -> Result<Vec<String>, IndexError> {
            let mut stmt = self.conn.prepare(sql)?;
            let rows = stmt.query_map([], |r| r.get(0))?.collect::<Result<_, _>>()?;
            Ok(rows)
        };
        let models = distinct(
            "SELECT model FROM sessions WHERE model IS NOT NULL UNION SELECT requested_model FROM sessions
             WHERE requested_model IS NOT NULL AND requested_model != '' ORDER BY 1 LIMIT 200",
        )?;
        let reasons = distinct(
            "SELECT DISTINCT terminal_reason FROM sessions WHERE terminal_reason IS NOT NULL ORDER BY 1 LIMIT 200",
        )?;
        Ok((models, reasons))
    }

    /// See [`super::Index::journal_state`].
    pub fn journal_state(&mut self, id: &str) -> Result<Option<(i64, Option<String>)>, IndexError> {
        let found: Option<(Option<i64>, Option<String>)> = self
            .conn
            .query_row(
                "SELECT n.n, s.terminal_reason FROM j.sessions s LEFT JOIN j.session_numbers n ON n.id = s.id
                 WHERE s.id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let Some((n, terminal)) = found else { return Ok(None) };
        let Some(n) = n else { return Ok(Some((0, terminal))) };
        let last: Option<i64> = self.conn.query_row(
            "SELECT max(key) & 4294967295 FROM j.steps WHERE key > ?1 AND key < ?2",
            params![n << 32, (n + 1) << 32],
            |r| r.get(0),
        )?;
        Ok(Some((last.unwrap_or(0), terminal)))
    }
}
