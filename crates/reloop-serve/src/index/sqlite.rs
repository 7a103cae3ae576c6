//! The index beside a SQLite journal: a file of its own (so building it never takes the
//! journal's write lock from a run), with the journal attached read-only; texts in FTS5.

use std::collections::HashSet;
use std::path::Path;

use rusqlite::{params, params_from_iter, Connection, OptionalExtension, ToSql};

use super::chunks;
use super::extract::step_facts;
use super::filter::Param;
use super::{read_only_uri, Filter, IndexError, ListRow, Listing, LiveWriter, Origin, PriceTable, Totals, MAX_COUNTED};

/// The index's layout version, kept in the file's `user_version`: an index file written by
/// another layout is emptied and built again, never misread. 2: a session's texts in a few
/// chunks keyed by the session's number (one FTS row per text before).
const VERSION: i64 = 2;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS sessions (
    k                 INTEGER PRIMARY KEY,       -- the index's own number: its texts' keys are k << 20 | chunk
    id                TEXT NOT NULL UNIQUE,
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
    unpriced          INTEGER NOT NULL DEFAULT 0,
    chunks            INTEGER NOT NULL DEFAULT 0,-- its texts' chunks
    chunk_len         INTEGER NOT NULL DEFAULT 0 -- the last chunk's bytes
);
CREATE INDEX IF NOT EXISTS sessions_created ON sessions(created_at_ms, id);
CREATE INDEX IF NOT EXISTS sessions_parent ON sessions(parent_id);
CREATE INDEX IF NOT EXISTS sessions_jrowid ON sessions(jrowid);
CREATE VIRTUAL TABLE IF NOT EXISTS texts USING fts5(body);
-- The filter form's choices (models, terminal reasons), kept as sessions are read: the form
-- heads every page, and reading them off 100,000 sessions took longer than the page.
CREATE TABLE IF NOT EXISTS choices (kind TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (kind, value)) WITHOUT ROWID;
";

/// What an index of another layout held: dropped before [`SCHEMA`] makes this one's.
const OLD: &str = "DROP TABLE IF EXISTS texts; DROP TABLE IF EXISTS sessions; DROP TABLE IF EXISTS choices;";

/// The list's columns, in [`row`]'s order.
const COLUMNS: &str = "id, created_at_ms, last_at_ms, last_seq, terminal_reason, writer, model, requested_model, kind,
     parent_id, coalesce(first_prompt, ''), input_tokens, output_tokens, cache_read_tokens, cost_usd, unpriced, k";

/// The most sessions a search matches for the filters to be checked on each by key; past it,
/// the list is walked in its order and checked against the matches.
const FEW_MATCHES: usize = 5_000;

/// The most steps one refresh reads of one session: a huge session is indexed over refreshes.
const STEPS_PER_REFRESH: i64 = 20_000;

/// A connection to the index file, with the journal attached as `j`.
pub struct SqliteIndex {
    conn: Connection,
    /// [`FEW_MATCHES`]; a test lowers it to walk a small list.
    few: usize,
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

/// A word of a search as an FTS5 query: a quoted string, so no word is taken for syntax.
pub(crate) fn fts_word(w: &str) -> String {
    format!("\"{}\"", w.replace('"', "\"\""))
}

/// Writes `texts` into the chunks of the session numbered `k` (see [`chunks::place`]), and
/// empties it.
fn write_chunks(
    append: &mut rusqlite::Statement<'_>,
    chunk: &mut rusqlite::Statement<'_>,
    k: i64,
    state: &mut chunks::State,
    texts: &mut Vec<String>,
) -> Result<(), IndexError> {
    let (plan, after) = chunks::place(*state, texts);
    if let Some(more) = plan.append {
        append.execute(params![chunks::key(k, state.chunks - 1), more])?;
    }
    for (i, body) in plan.new.iter().enumerate() {
        chunk.execute(params![chunks::key(k, state.chunks + i as i64), body])?;
    }
    *state = after;
    texts.clear();
    Ok(())
}

impl SqliteIndex {
    /// Opens (creating) the index file and attaches the journal read-only.
    pub fn open(journal: &Path, index: &Path) -> Result<SqliteIndex, IndexError> {
        let mut conn = Connection::open(index)?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        conn.pragma_update(None, "journal_mode", "wal")?;
        conn.pragma_update(None, "synchronous", "normal")?;
        // Checked and made under the write lock (before the read-only journal is attached, which
        // an immediate transaction would try to lock for writing too): two connections opening
        // at once take turns.
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let version: i64 = tx.query_row("PRAGMA main.user_version", [], |r| r.get(0))?;
        if version != VERSION {
            tx.execute_batch(OLD)?;
            tx.execute_batch(SCHEMA)?;
            tx.pragma_update(Some(rusqlite::DatabaseName::Main), "user_version", VERSION)?;
        }
        tx.commit()?;
        conn.execute("ATTACH DATABASE ?1 AS j", [read_only_uri(journal)])?;
        Ok(SqliteIndex { conn, few: FEW_MATCHES })
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
        let open: Vec<(String, Option<i64>, i64)> = {
            let mut stmt = tx.prepare(
                "SELECT s.id, s.n, s.k FROM sessions s WHERE s.terminal_reason IS NULL OR s.writer IS NOT NULL OR s.last_seq = 0
                 UNION
                 SELECT s.id, s.n, s.k FROM sessions s JOIN j.session_writes w ON w.session_id = s.id
                 WHERE w.last_written_ms > s.last_written_ms",
            )?;
            let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
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
                        cost_usd, unpriced, chunks, chunk_len FROM sessions WHERE id = ?1",
            )?;
            let mut steps = tx.prepare(
                "SELECT key & 4294967295, at_ms, event FROM j.steps WHERE key > ?1 AND key < ?2 ORDER BY key LIMIT ?3",
            )?;
            let mut append = tx.prepare("UPDATE texts SET body = body || ?2 WHERE rowid = ?1")?;
            let mut chunk = tx.prepare("INSERT INTO texts (rowid, body) VALUES (?1, ?2)")?;
            let mut choice = tx.prepare("INSERT OR IGNORE INTO choices (kind, value) VALUES (?1, ?2)")?;
            let mut update = tx.prepare(
                "UPDATE sessions SET last_seq = ?2, last_at_ms = ?3, model = ?4, first_prompt = ?5, input_tokens = ?6,
                     output_tokens = ?7, cache_read_tokens = ?8, cost_usd = ?9, unpriced = ?10,
                     terminal_reason = ?11, writer = ?12, last_written_ms = ?13, chunks = ?14, chunk_len = ?15
                 WHERE id = ?1",
            )?;
            for (id, n, k) in open {
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
                        chunks: chunks::State { chunks: r.get(9)?, last_len: r.get(10)? },
                    })
                })?;
                // The writer is asked before the steps are read: a step written after is read
                // by the next refresh, which the writer's presence makes happen.
                let writer = live(&id);
                let mut read = 0;
                let mut texts = Vec::new();
                if let Some(n) = n {
                    let mut rows = steps.query(params![(n << 32) | t.last_seq, (n + 1) << 32, STEPS_PER_REFRESH])?;
                    while let Some(r) = rows.next()? {
                        let (seq, at, event): (i64, i64, String) = (r.get(0)?, r.get(1)?, r.get(2)?);
                        let event: serde_json::Value = serde_json::from_str(&event).unwrap_or_default();
                        let facts = step_facts(&event);
                        texts.extend(facts.texts.iter().map(|x| x.body.clone()));
                        t.step(&facts, &origin, table, &origin.requested_model);
                        (t.last_seq, t.last_at_ms) = (seq, at);
                        read += 1;
                        // A long session's texts are written as they add up, not held whole.
                        if texts.iter().map(String::len).sum::<usize>() > 4 * chunks::CHUNK {
                            write_chunks(&mut append, &mut chunk, k, &mut t.chunks, &mut texts)?;
                        }
                    }
                }
                write_chunks(&mut append, &mut chunk, k, &mut t.chunks, &mut texts)?;
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
                    written,
                    t.chunks.chunks,
                    t.chunks.last_len
                ])?;
                for (kind, value) in super::choices_of(&t, &origin, terminal.as_deref()) {
                    choice.execute(params![kind, value])?;
                }
            }
        }
        tx.commit()?;
        Ok(touched)
    }

    /// See [`super::Index::list`].
    pub fn list(&mut self, filter: &Filter) -> Result<Listing, IndexError> {
        let words = filter.words();
        if filter.q.is_some() && words.is_empty() {
            return Ok(Listing { rows: Vec::new(), total: 0, more: false });
        }
        // The filters but the search, as SQL; the search is done apart (see `search`).
        let rest = Filter { q: None, ..filter.clone() };
        let (cond, params) = rest.condition(&|n| format!("?{n}"), &|_| String::new(), &str::to_string);
        let mut values: Vec<Box<dyn ToSql>> = params
            .iter()
            .map(|p| -> Box<dyn ToSql> {
                match p {
                    Param::Text(s) => Box::new(s.clone()),
                    Param::Int(i) => Box::new(*i),
                    Param::Real(r) => Box::new(*r),
                }
            })
            .collect();
        let (page, total, more, offset) = if words.is_empty() {
            // The whole list is counted exactly (from an index); a filtered one up to
            // MAX_COUNTED, or the page shown (a count of every row would read each).
            let enough = MAX_COUNTED.max(filter.offset() + filter.per);
            let count = match cond.as_str() {
                "1=1" => "SELECT count(*) FROM sessions".to_string(),
                _ => format!("SELECT count(*) FROM (SELECT 1 FROM sessions WHERE {cond} LIMIT {})", enough + 1),
            };
            let counted: i64 = self.conn.query_row(&count, params_from_iter(values.iter()), |r| r.get(0))?;
            let more = cond != "1=1" && counted > enough;
            (cond, if more { enough } else { counted }, more, filter.offset())
        } else {
            let matched = self.matching(&words)?;
            if matched.len() <= self.few {
                // Few sessions hold the words: the filters are checked on just those, by key.
                let keys = serde_json::to_string(&matched).unwrap_or_default();
                values.push(Box::new(keys));
                let cond = format!("{cond} AND k IN (SELECT value FROM json_each(?{}))", values.len());
                let total: i64 = self.conn.query_row(
                    &format!("SELECT count(*) FROM sessions WHERE {cond}"),
                    params_from_iter(values.iter()),
                    |r| r.get(0),
                )?;
                (cond, total, false, filter.offset())
            } else {
                // Many do: the filtered list is walked newest first (its index's order) until
                // the page is full and MAX_COUNTED are counted, never sorting every match.
                let (keys, total, more) = self.walk(&cond, &values, &matched, filter)?;
                values = vec![Box::new(serde_json::to_string(&keys).unwrap_or_default())];
                ("k IN (SELECT value FROM json_each(?1))".to_string(), total, more, 0)
            }
        };
        let sql = format!(
            "SELECT {COLUMNS} FROM sessions WHERE {page} ORDER BY created_at_ms DESC, id LIMIT {} OFFSET {offset}",
            filter.per,
        );
        let mut stmt = self.conn.prepare(&sql)?;
        let mut rows: Vec<(ListRow, i64)> = stmt
            .query_map(params_from_iter(values.iter()), |r| Ok((row(r)?, r.get(16)?)))?
            .collect::<Result<_, _>>()?;
        let words = filter.words();
        if !words.is_empty() {
            // Where each listed session matched: its first chunk holding any of the words,
            // found by the session's key range, a snippet made only for this page's sessions.
            let any = words.iter().map(|w| fts_word(w)).collect::<Vec<_>>().join(" OR ");
            let mut stmt = self.conn.prepare(
                "SELECT snippet(texts, 0, '«', '»', '…', 12) FROM texts
                 WHERE texts MATCH ?1 AND rowid >= ?2 AND rowid < ?3 ORDER BY rowid LIMIT 1",
            )?;
            for (r, k) in rows.iter_mut() {
                let (from, to) = (chunks::key(*k, 0), chunks::key(*k + 1, 0));
                r.snippet = stmt.query_row(params![any, from, to], |r| r.get(0)).optional()?;
            }
        }
        let rows: Vec<ListRow> = rows.into_iter().map(|(r, _)| r).collect();
        Ok(Listing { rows, total, more })
    }

    /// The keys of the sessions whose texts hold every one of `words`: each word's matching
    /// chunks, read from FTS5's own index (a chunk's key names its session), intersected.
    fn matching(&mut self, words: &[String]) -> Result<Vec<i64>, IndexError> {
        let mut stmt = self
            .conn
            .prepare(&format!("SELECT DISTINCT rowid >> {} FROM texts WHERE texts MATCH ?1", chunks::CHUNK_BITS))?;
        let mut found: Option<HashSet<i64>> = None;
        for w in words {
            let keys = stmt.query_map([fts_word(w)], |r| r.get::<_, i64>(0))?;
            let mut these = HashSet::new();
            for k in keys {
                let k = k?;
                if found.as_ref().is_none_or(|f| f.contains(&k)) {
                    these.insert(k);
                }
            }
            found = Some(these);
        }
        let mut keys: Vec<i64> = found.unwrap_or_default().into_iter().collect();
        keys.sort_unstable();
        Ok(keys)
    }

    /// The keys of the page of `filter` among the sessions matching `cond` whose key is in
    /// `matched`, newest first; with how many were counted and whether more match than that.
    fn walk(
        &mut self,
        cond: &str,
        values: &[Box<dyn ToSql>],
        matched: &[i64],
        filter: &Filter,
    ) -> Result<(Vec<i64>, i64, bool), IndexError> {
        let matched: HashSet<i64> = matched.iter().copied().collect();
        let (from, to) = (filter.offset(), filter.offset() + filter.per);
        // Counted to MAX_COUNTED or the page's end, whichever is further, plus one to know
        // whether more match.
        let enough = MAX_COUNTED.max(to);
        let mut stmt =
            self.conn.prepare(&format!("SELECT k FROM sessions WHERE {cond} ORDER BY created_at_ms DESC, id"))?;
        let mut rows = stmt.query(params_from_iter(values.iter()))?;
        let (mut found, mut page) = (0i64, Vec::new());
        while let Some(r) = rows.next()? {
            let k: i64 = r.get(0)?;
            if !matched.contains(&k) {
                continue;
            }
            if found == enough {
                return Ok((page, found, true));
            }
            if (from..to).contains(&found) {
                page.push(k);
            }
            found += 1;
        }
        Ok((page, found, false))
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
        let mut stmt = self.conn.prepare("SELECT value FROM choices WHERE kind = ?1 ORDER BY value LIMIT 200")?;
        let mut of = |kind: &str| -> Result<Vec<String>, IndexError> {
            Ok(stmt.query_map([kind], |r| r.get(0))?.collect::<Result<_, _>>()?)
        };
        Ok((of("model")?, of("reason")?))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A search lists the same pages, counts and snippets whether its matches are few (checked
    /// by key) or many (the list walked in its order).
    #[test]
    fn a_search_lists_the_same_whether_its_matches_are_few_or_many() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.db");
        let mut journal = reloop_journal::Journal::create_or_open(&path).unwrap();
        let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/journals");
        for name in
            ["scripted_seed.json", "scripted_max_turns.json", "scripted_auto_compact.json", "anthropic_seed.json"]
        {
            let dump = std::fs::read_to_string(corpus.join(name)).unwrap();
            let dump = reloop_journal::SessionDump::from_json(&dump).unwrap();
            // Each journal three times over, under new ids.
            for copy in 0..3 {
                let mut dump = dump.clone();
                dump.header.id = format!("{}-{copy}", dump.header.id);
                journal.load_session(&dump).unwrap();
            }
        }
        let mut idx = SqliteIndex::open(&path, &dir.path().join("index")).unwrap();
        let table: PriceTable = std::sync::Arc::new(|_, _| Some(0.001));
        idx.refresh(&table, &|_| None).unwrap();
        let searches = [
            Filter { q: Some("login".into()), ..Filter::default() },
            Filter { q: Some("login src".into()), per: 2, page: 2, ..Filter::default() },
            Filter {
                q: Some("login".into()),
                status: Some(super::super::Status::Reason("max_turns".into())),
                ..Filter::default()
            },
            Filter { q: Some("Glob".into()), per: 5, page: 3, ..Filter::default() },
            Filter { q: Some("zzqx".into()), ..Filter::default() },
        ];
        for f in &searches {
            idx.few = FEW_MATCHES;
            let by_key = idx.list(f).unwrap();
            idx.few = 0;
            let walked = idx.list(f).unwrap();
            assert_eq!((by_key.total, by_key.more), (walked.total, walked.more), "{f:?}");
            assert_eq!(by_key.rows, walked.rows, "{f:?}");
            assert!(by_key.rows.iter().all(|r| r.snippet.as_deref().is_some_and(|s| s.contains('«'))), "{f:?}");
        }
        idx.few = FEW_MATCHES;
        assert!(idx.list(&searches[0]).unwrap().total >= 6, "the copies all hold the word");
    }

    /// An index file of the layout before (a row per text, no version) is emptied and built
    /// again in this one, not misread.
    #[test]
    fn an_index_of_another_layout_is_built_again() {
        let dir = tempfile::tempdir().unwrap();
        let (path, index) = (dir.path().join("j.db"), dir.path().join("index"));
        let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/journals/scripted_seed.json");
        let dump = reloop_journal::SessionDump::from_json(&std::fs::read_to_string(corpus).unwrap()).unwrap();
        reloop_journal::Journal::create_or_open(&path).unwrap().load_session(&dump).unwrap();
        Connection::open(&index)
            .unwrap()
            .execute_batch(
                "CREATE TABLE sessions (id TEXT PRIMARY KEY, jrowid INTEGER NOT NULL, created_at_ms INTEGER NOT NULL);
                 INSERT INTO sessions VALUES ('stale', 99, 0);
                 CREATE VIRTUAL TABLE texts USING fts5(body, sid UNINDEXED, seq UNINDEXED, kind UNINDEXED);",
            )
            .unwrap();
        let mut idx = SqliteIndex::open(&path, &index).unwrap();
        let table: PriceTable = std::sync::Arc::new(|_, _| None);
        assert_eq!(idx.refresh(&table, &|_| None).unwrap(), 1);
        let found = idx.list(&Filter { q: Some("login".into()), ..Filter::default() }).unwrap();
        assert_eq!(found.rows.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), [dump.header.id.as_str()]);
        let version: i64 = idx.conn.query_row("PRAGMA main.user_version", [], |r| r.get(0)).unwrap();
        assert_eq!(version, VERSION);
    }
}
