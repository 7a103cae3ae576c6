//! The index in a PostgreSQL journal's database: the `reloop_serve` schema, apart from the
//! journal's `reloop` (which it only reads); texts searched through a generated `tsvector` with
//! a GIN index.

use std::str::FromStr;
use std::time::Duration;

use postgres::types::ToSql;
use postgres::{Client, NoTls};

use super::chunks;
use super::extract::step_facts;
use super::filter::Param;
use super::{Filter, IndexError, ListRow, Listing, LiveWriter, Origin, PriceTable, Totals, MAX_COUNTED};

/// The index's layout version, kept in `reloop_serve.layout`: a schema written by another
/// layout is dropped and built again, never misread. 2: a session's texts in a few chunks (one
/// row per text before).
const VERSION: i32 = 2;

/// What an index of another layout held: dropped before [`SCHEMA`] makes this one's.
const OLD: &str = "DROP TABLE IF EXISTS reloop_serve.texts; DROP TABLE IF EXISTS reloop_serve.sessions;
DROP TABLE IF EXISTS reloop_serve.choices;
DELETE FROM reloop_serve.layout;";

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS reloop_serve.sessions (
    id                text PRIMARY KEY,
    jorder            bigint NOT NULL,            -- reloop.sessions.created_order: new ones are above the last
    created_at_ms     bigint NOT NULL,
    last_written_ms   bigint NOT NULL DEFAULT 0,  -- reloop.sessions.last_written_at when last read
    last_seq          bigint NOT NULL DEFAULT 0,  -- the last step indexed
    last_at_ms        bigint NOT NULL DEFAULT 0,
    terminal_reason   text,
    writer            text,                       -- who wrote it at the last refresh
    model             text,
    requested_model   text,
    kind              text NOT NULL,
    parent_id         text,
    first_prompt      text,
    input_tokens      bigint NOT NULL DEFAULT 0,
    output_tokens     bigint NOT NULL DEFAULT 0,
    cache_read_tokens bigint NOT NULL DEFAULT 0,
    cost_usd          double precision NOT NULL DEFAULT 0,
    unpriced          bigint NOT NULL DEFAULT 0,
    chunks            bigint NOT NULL DEFAULT 0,  -- its texts' chunks
    chunk_len         bigint NOT NULL DEFAULT 0   -- the last chunk's bytes
);
CREATE INDEX IF NOT EXISTS sessions_created ON reloop_serve.sessions(created_at_ms);
CREATE INDEX IF NOT EXISTS sessions_parent ON reloop_serve.sessions(parent_id);
CREATE INDEX IF NOT EXISTS sessions_jorder ON reloop_serve.sessions(jorder);
CREATE TABLE IF NOT EXISTS reloop_serve.texts (
    session_id text NOT NULL,
    chunk      bigint NOT NULL,                   -- from 0: a session's texts, a chunk at a time
    body       text NOT NULL,
    tsv        tsvector GENERATED ALWAYS AS (to_tsvector('simple', body)) STORED,
    PRIMARY KEY (session_id, chunk)
);
CREATE INDEX IF NOT EXISTS texts_tsv ON reloop_serve.texts USING GIN (tsv);
-- The filter form's choices (models, terminal reasons), kept as sessions are read: the form
-- heads every page, and reading them off 100,000 sessions took longer than the page.
CREATE TABLE IF NOT EXISTS reloop_serve.choices (kind text NOT NULL, value text NOT NULL, PRIMARY KEY (kind, value));
";

/// The advisory lock the schema is created under: two connections starting at once take turns.
const SCHEMA_LOCK: i64 = 0x524C_5356;

const COLUMNS: &str = "id, created_at_ms, last_at_ms, last_seq, terminal_reason, writer, model, requested_model, kind,
     parent_id, coalesce(first_prompt, ''), input_tokens, output_tokens, cache_read_tokens, cost_usd, unpriced";

const STEPS_PER_REFRESH: i64 = 20_000;

/// A connection to the journal's database, for the index.
pub struct PgIndex {
    client: Client,
}

fn row(r: &postgres::Row) -> ListRow {
    let unpriced: i64 = r.get(15);
    ListRow {
        id: r.get(0),
        created_at_ms: r.get(1),
        last_at_ms: r.get(2),
        steps: r.get(3),
        terminal_reason: r.get(4),
        writer: r.get(5),
        model: r.get(6),
        requested_model: r.get(7),
        kind: r.get(8),
        parent_id: r.get(9),
        first_prompt: r.get(10),
        input_tokens: r.get(11),
        output_tokens: r.get(12),
        cache_read_tokens: r.get(13),
        cost_usd: (unpriced == 0).then(|| r.get(14)),
        snippet: None,
    }
}

/// The filter's parameters as PostgreSQL's.
fn values(params: &[Param]) -> Vec<Box<dyn ToSql + Sync>> {
    params
        .iter()
        .map(|p| -> Box<dyn ToSql + Sync> {
            match p {
                Param::Text(s) => Box::new(s.clone()),
                Param::Int(i) => Box::new(*i),
                Param::Real(r) => Box::new(*r),
            }
        })
        .collect()
}

impl PgIndex {
    /// Connects and creates the index's schema when missing.
    pub fn open(url: &str) -> Result<PgIndex, IndexError> {
        let mut config = postgres::Config::from_str(url)?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(10));
        }
        config.application_name("reloop serve");
        let mut client = config.connect(NoTls)?;
        let mut tx = client.transaction()?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK])?;
        tx.batch_execute(
            "CREATE SCHEMA IF NOT EXISTS reloop_serve;
             CREATE TABLE IF NOT EXISTS reloop_serve.layout (version integer NOT NULL);",
        )?;
        let version: Option<i32> =
            tx.query_opt("SELECT max(version) FROM reloop_serve.layout", &[])?.and_then(|r| r.get(0));
        if version != Some(VERSION) {
            tx.batch_execute(OLD)?;
            tx.execute("INSERT INTO reloop_serve.layout (version) VALUES ($1)", &[&VERSION])?;
        }
        tx.batch_execute(SCHEMA)?;
        tx.commit()?;
        Ok(PgIndex { client })
    }

    /// See [`super::Index::refresh`].
    pub fn refresh(&mut self, table: &PriceTable, live: LiveWriter<'_>) -> Result<usize, IndexError> {
        let mut tx = self.client.transaction()?;
        let last: i64 = tx.query_one("SELECT coalesce(max(jorder), 0) FROM reloop_serve.sessions", &[])?.get(0);
        let new = tx.query(
            "SELECT created_order, id, created_at_ms, parent_id, run_config, core_config FROM reloop.sessions
             WHERE created_order > $1 ORDER BY created_order",
            &[&last],
        )?;
        let insert = tx.prepare(
            "INSERT INTO reloop_serve.sessions (id, jorder, created_at_ms, kind, parent_id, requested_model)
             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING",
        )?;
        for r in &new {
            let (parent, run, core): (Option<String>, String, String) = (r.get(3), r.get(4), r.get(5));
            let origin = Origin::of(parent.as_deref(), &run, &core);
            let (order, id, created): (i64, String, i64) = (r.get(0), r.get(1), r.get(2));
            tx.execute(&insert, &[&id, &order, &created, &origin.kind, &origin.parent, &origin.requested_model])?;
        }
        let open = tx.query(
            "SELECT s.id FROM reloop_serve.sessions s WHERE s.terminal_reason IS NULL OR s.writer IS NOT NULL OR s.last_seq = 0
             UNION
             SELECT s.id FROM reloop_serve.sessions s JOIN reloop.sessions j ON j.id = s.id
             WHERE (extract(epoch FROM j.last_written_at) * 1000)::bigint > s.last_written_ms",
            &[],
        )?;
        let header = tx.prepare(
            "SELECT parent_id, run_config, core_config, terminal_reason, (extract(epoch FROM last_written_at) * 1000)::bigint
             FROM reloop.sessions WHERE id = $1",
        )?;
        let totals_of = tx.prepare(
            "SELECT last_seq, last_at_ms, model, first_prompt, input_tokens, output_tokens, cache_read_tokens, cost_usd,
                    unpriced, chunks, chunk_len FROM reloop_serve.sessions WHERE id = $1",
        )?;
        // A fork's steps are its parent's up to the fork point (and so on up), then its own, as
        // the journal reads them: the index counts and searches what SQLite's copy holds.
        let steps = tx.prepare(
            "WITH RECURSIVE seg(session, after, upto, depth) AS (
                 SELECT id, base_seq, 9223372036854775807::bigint, 0 FROM reloop.sessions WHERE id = $1
                 UNION ALL
                 SELECT p.id, p.base_seq, seg.after, seg.depth + 1
                 FROM seg JOIN reloop.sessions c ON c.id = seg.session JOIN reloop.sessions p ON p.id = c.parent_id
                 WHERE seg.after > 0 AND seg.depth < 10000)
             SELECT b.seq, b.at_ms, b.event FROM seg JOIN reloop.step_bodies b
                 ON b.session_id = seg.session AND b.seq > seg.after AND b.seq <= seg.upto
             WHERE b.seq > $2 ORDER BY b.seq LIMIT $3",
        )?;
        let append =
            tx.prepare("UPDATE reloop_serve.texts SET body = body || $3 WHERE session_id = $1 AND chunk = $2")?;
        let chunk = tx.prepare("INSERT INTO reloop_serve.texts (session_id, chunk, body) VALUES ($1, $2, $3)")?;
        let choice =
            tx.prepare("INSERT INTO reloop_serve.choices (kind, value) VALUES ($1, $2) ON CONFLICT DO NOTHING")?;
        let update = tx.prepare(
            "UPDATE reloop_serve.sessions SET last_seq = $2, last_at_ms = $3, model = $4, first_prompt = $5,
                 input_tokens = $6, output_tokens = $7, cache_read_tokens = $8, cost_usd = $9, unpriced = $10,
                 terminal_reason = $11, writer = $12, last_written_ms = $13, chunks = $14, chunk_len = $15
             WHERE id = $1",
        )?;
        let touched = open.len();
        for o in &open {
            let id: String = o.get(0);
            let Some(h) = tx.query_opt(&header, &[&id])? else { continue };
            let (parent, run, core): (Option<String>, String, String) = (h.get(0), h.get(1), h.get(2));
            let (terminal, written): (Option<String>, i64) = (h.get(3), h.get(4));
            let origin = Origin::of(parent.as_deref(), &run, &core);
            let r = tx.query_one(&totals_of, &[&id])?;
            let mut t = Totals {
                last_seq: r.get(0),
                last_at_ms: r.get(1),
                model: r.get(2),
                first_prompt: r.get(3),
                input_tokens: r.get(4),
                output_tokens: r.get(5),
                cache_read_tokens: r.get(6),
                cost_usd: r.get(7),
                unpriced: r.get::<_, i64>(8) != 0,
                chunks: chunks::State { chunks: r.get(9), last_len: r.get(10) },
            };
            let writer = live(&id);
            let rows = tx.query(&steps, &[&id, &t.last_seq, &STEPS_PER_REFRESH])?;
            let mut texts = Vec::new();
            for (i, s) in rows.iter().enumerate() {
                let (seq, at, event): (i64, i64, String) = (s.get(0), s.get(1), s.get(2));
                let event: serde_json::Value = serde_json::from_str(&event).unwrap_or_default();
                let facts = step_facts(&event);
                // NUL is the one character PostgreSQL's text refuses.
                texts.extend(facts.texts.iter().map(|x| x.body.replace('\0', " ")));
                t.step(&facts, &origin, table, &origin.requested_model);
                (t.last_seq, t.last_at_ms) = (seq, at);
                // A long session's texts are written as they add up, not held whole.
                if i + 1 < rows.len() && texts.iter().map(String::len).sum::<usize>() <= 4 * chunks::CHUNK {
                    continue;
                }
                let (plan, after) = chunks::place(t.chunks, &texts);
                if let Some(more) = plan.append {
                    tx.execute(&append, &[&id, &(t.chunks.chunks - 1), &more])?;
                }
                for (n, body) in plan.new.iter().enumerate() {
                    tx.execute(&chunk, &[&id, &(t.chunks.chunks + n as i64), body])?;
                }
                t.chunks = after;
                texts.clear();
            }
            let terminal = terminal.filter(|_| (rows.len() as i64) < STEPS_PER_REFRESH);
            let unpriced = t.unpriced as i64;
            tx.execute(
                &update,
                &[
                    &id,
                    &t.last_seq,
                    &t.last_at_ms,
                    &t.model,
                    &t.first_prompt,
                    &t.input_tokens,
                    &t.output_tokens,
                    &t.cache_read_tokens,
                    &t.cost_usd,
                    &unpriced,
                    &terminal,
                    &writer,
                    &written,
                    &t.chunks.chunks,
                    &t.chunks.last_len,
                ],
            )?;
            for (kind, value) in super::choices_of(&t, &origin, terminal.as_deref()) {
                tx.execute(&choice, &[&kind, &value])?;
            }
        }
        tx.commit()?;
        Ok(touched)
    }

    /// See [`super::Index::list`].
    pub fn list(&mut self, filter: &Filter) -> Result<Listing, IndexError> {
        let (cond, params) = filter.condition(
            &|n| format!("${n}"),
            &|words| {
                // A condition per word (not one INTERSECT of them): the planner then walks the
                // list newest first and checks each session by key, the page's worth, where an
                // INTERSECT of two common words built both sets whole (0.4 s at 100,000).
                let each: Vec<String> = words
                    .iter()
                    .map(|p| {
                        format!(
                            "id IN (SELECT session_id FROM reloop_serve.texts WHERE tsv @@ plainto_tsquery('simple', {p}))"
                        )
                    })
                    .collect();
                format!("({})", each.join(" AND "))
            },
            &str::to_string,
        );
        let values = values(&params);
        let refs: Vec<&(dyn ToSql + Sync)> = values.iter().map(|b| b.as_ref()).collect();
        // A search's count stops past MAX_COUNTED (the page says "10,000+"); a list's is exact.
        // The whole list is counted exactly; a filtered or searched one up to MAX_COUNTED, or
        // the page shown (a count of every match would read each).
        let enough = MAX_COUNTED.max(filter.offset() + filter.per);
        let count = match cond.as_str() {
            "1=1" => "SELECT count(*) FROM reloop_serve.sessions".to_string(),
            _ => format!(
                "SELECT count(*) FROM (SELECT 1 FROM reloop_serve.sessions WHERE {cond} LIMIT {}) c",
                enough + 1
            ),
        };
        let counted: i64 = self.client.query_one(&count, &refs)?.get(0);
        let sql = format!(
            "SELECT {COLUMNS} FROM reloop_serve.sessions WHERE {cond} ORDER BY created_at_ms DESC, id LIMIT {} OFFSET {}",
            filter.per,
            filter.offset()
        );
        let mut rows: Vec<ListRow> = self.client.query(&sql, &refs)?.iter().map(row).collect();
        let words = filter.words();
        if !words.is_empty() && !rows.is_empty() {
            // Where each listed session matched: its first chunk holding any of the words.
            let any: Vec<String> = (1..=words.len()).map(|n| format!("plainto_tsquery('simple', ${n})")).collect();
            let any = format!("({})", any.join(" || "));
            let ids: Vec<String> = rows.iter().map(|r| r.id.clone()).collect();
            let mut args: Vec<&(dyn ToSql + Sync)> = words.iter().map(|w| w as &(dyn ToSql + Sync)).collect();
            args.push(&ids);
            let hits = self.client.query(
                &format!(
                    "SELECT DISTINCT ON (session_id) session_id,
                            ts_headline('simple', body, {any}, 'StartSel=«, StopSel=», MaxWords=14, MinWords=4')
                     FROM reloop_serve.texts WHERE session_id = ANY(${}) AND tsv @@ {any}
                     ORDER BY session_id, chunk",
                    words.len() + 1
                ),
                &args,
            )?;
            for hit in hits {
                let sid: String = hit.get(0);
                if let Some(r) = rows.iter_mut().find(|r| r.id == sid) {
                    r.snippet = Some(hit.get(1));
                }
            }
        }
        let more = cond != "1=1" && counted > enough;
        Ok(Listing { rows, total: if more { enough } else { counted }, more })
    }

    /// See [`super::Index::rows`].
    pub fn rows(&mut self, ids: &[String]) -> Result<Vec<ListRow>, IndexError> {
        let sql = format!("SELECT {COLUMNS} FROM reloop_serve.sessions WHERE id = ANY($1) ORDER BY created_at_ms, id");
        Ok(self.client.query(&sql, &[&ids])?.iter().map(row).collect())
    }

    /// See [`super::Index::choices`].
    pub fn choices(&mut self) -> Result<(Vec<String>, Vec<String>), IndexError> {
        let stmt =
            self.client.prepare("SELECT value FROM reloop_serve.choices WHERE kind = $1 ORDER BY value LIMIT 200")?;
        let models = self.client.query(&stmt, &[&"model"])?.iter().map(|r| r.get(0)).collect();
        let reasons = self.client.query(&stmt, &[&"reason"])?.iter().map(|r| r.get(0)).collect();
        Ok((models, reasons))
    }

    /// See [`super::Index::journal_state`].
    pub fn journal_state(&mut self, id: &str) -> Result<Option<(i64, Option<String>)>, IndexError> {
        let Some(found) = self.client.query_opt("SELECT terminal_reason FROM reloop.sessions WHERE id = $1", &[&id])?
        else {
            return Ok(None);
        };
        let last: i64 = self
            .client
            .query_one("SELECT coalesce(max(seq), 0) FROM reloop.steps WHERE session_id = $1", &[&id])?
            .get(0);
        Ok(Some((last, found.get(0))))
    }
}
