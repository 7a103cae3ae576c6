//! The database side of a [`crate::PgJournal`]: one connection, owned by one thread, and every
//! operation the journal runs on it.
//!
//! Every write runs in one transaction that first renews the writer's lease *by its epoch*: a
//! writer whose lease another took over finds no row to renew, and its transaction writes
//! nothing (the fencing check the issue asks for; advisory locks are not used as the guard).

use std::collections::HashMap;
use std::time::Duration;

use postgres::{Client, Statement, Transaction};
use reloop_core::Reason;
use reloop_journal::{
    EncodedStep, JournalError, NewStep, RowOutcome, SessionHeader, SessionSummary, StepRecord, MAX_ROW_BYTES,
};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// A payload (an event's or effects' JSON) at least this long is stored once, in `blobs`, and
/// referenced by its hash: tool results and requests, which repeat across steps and forks.
pub const BLOB_MIN_BYTES: usize = 1024;

/// Steps one read fetches at a time: a walk holds at most this many in memory.
pub(crate) const PAGE: i64 = 256;

/// A database error, phrased with the database it came from.
pub(crate) fn database_error(place: &str, e: &postgres::Error) -> JournalError {
    let detail = match e.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => e.to_string(),
    };
    JournalError::Database { place: place.to_string(), detail }
}

/// A lease this connection holds: the session and its epoch when taken.
type Leases = HashMap<String, i64>;

pub(crate) struct Conn {
    pub(crate) client: Client,
    pub(crate) place: String,
    pub(crate) holder: String,
    pub(crate) ttl: Duration,
    pub(crate) leases: Leases,
    statements: HashMap<&'static str, Statement>,
}

const FENCE: &str = "UPDATE reloop.leases SET expires_at = clock_timestamp() + $4::bigint * interval '1 millisecond'
     WHERE session_id = $1 AND epoch = $2 AND holder = $3";
pub(crate) const TAKE: &str = "INSERT INTO reloop.leases (session_id, epoch, holder, acquired_at, expires_at)
     VALUES ($1, 1, $2, clock_timestamp(), clock_timestamp() + $3::bigint * interval '1 millisecond')
     ON CONFLICT (session_id) DO UPDATE
         SET epoch = reloop.leases.epoch + 1, holder = EXCLUDED.holder,
             acquired_at = EXCLUDED.acquired_at, expires_at = EXCLUDED.expires_at
         WHERE reloop.leases.expires_at <= clock_timestamp()
     RETURNING epoch";
/// Ends a lease now, keeping its epoch, so the next writer's epoch is higher still; only the
/// holder of that epoch can.
pub(crate) const EXPIRE: &str = "UPDATE reloop.leases SET expires_at = clock_timestamp()
     WHERE session_id = $1 AND epoch = $2 AND holder = $3";
const BLOB: &str = "INSERT INTO reloop.blobs (hash, body) VALUES ($1, $2) ON CONFLICT (hash) DO NOTHING";
const STEP: &str = "INSERT INTO reloop.steps (session_id, seq, at_ms, kind, event, event_hash, from_phase, to_phase,
         turn_before, turn_after, reason_kind, reason, reason_json, effects, effects_hash, digest, outcome)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)";
const SESSION: &str = "INSERT INTO reloop.sessions (id, created_at_ms, engine_version, core_config, run_config,
         parent_id, fork_seq, base_seq)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (id) DO NOTHING";
const PAGE_OF_STEPS: &str = "SELECT seq, at_ms, event, from_phase, to_phase, turn_before, turn_after, reason_kind,
         reason_json, effects, digest
     FROM reloop.step_bodies WHERE session_id = $1 AND seq > $2 AND seq <= $3 ORDER BY seq LIMIT $4";

/// A payload (an event's or effects' JSON) as a step row stores it: inline, or as the hash of
/// its blob.
struct Payload {
    hash: Option<Vec<u8>>,
}

impl Payload {
    fn of(json: Option<&str>) -> Self {
        Payload { hash: json.filter(|body| body.len() >= BLOB_MIN_BYTES).map(|body| Sha256::digest(body).to_vec()) }
    }

    /// What the row's inline column holds: the JSON, unless a blob holds it.
    fn inline<'a>(&self, json: Option<&'a str>) -> Option<&'a str> {
        json.filter(|_| self.hash.is_none())
    }
}

/// One step encoded for its row: the fields reloop-journal's one row codec gives every backend,
/// and where this one keeps its payloads.
struct EncodedRow {
    step: EncodedStep,
    seq: i64,
    event: Payload,
    effects: Payload,
}

fn encode(session: &str, step: &StepRecord) -> Result<EncodedRow, JournalError> {
    let step = EncodedStep::encode(&NewStep::from(step), session, Vec::new())?;
    let seq = i64::try_from(step.seq())
        .map_err(|_| JournalError::TooManySteps { session: session.to_string(), seq: step.seq() })?;
    let event = Payload::of(Some(step.event_json()?));
    let effects = Payload::of(step.effects_json()?);
    // The reason's text is checked here too, so writing the row cannot fail on it.
    step.reason_json()?;
    Ok(EncodedRow { step, seq, event, effects })
}

/// Checks a step's size and encoding without writing it: a deferred step over the cap is
/// refused when appended, as SQLite refuses it, not later at its group's commit.
pub(crate) fn check(session: &str, step: &StepRecord) -> Result<(), JournalError> {
    encode(session, step).map(|_| ())
}

/// The terminal reason the last of `steps` to end the session gives it, if any does.
fn terminal_of<'a>(steps: impl IntoIterator<Item = &'a StepRecord>) -> Option<&'static str> {
    steps.into_iter().filter_map(|s| s.reason.as_ref().and_then(Reason::terminal_reason)).last().map(|r| r.as_str())
}

impl Conn {
    pub(crate) fn new(client: Client, place: String, holder: String, ttl: Duration) -> Self {
        Conn { client, place, holder, ttl, leases: HashMap::new(), statements: HashMap::new() }
    }

    fn db(&self) -> impl Fn(postgres::Error) -> JournalError + '_ {
        |e| database_error(&self.place, &e)
    }

    pub(crate) fn ttl_ms(&self) -> i64 {
        i64::try_from(self.ttl.as_millis()).unwrap_or(i64::MAX)
    }

    /// A statement prepared once per connection.
    pub(crate) fn stmt(&mut self, sql: &'static str) -> Result<Statement, JournalError> {
        if let Some(s) = self.statements.get(sql) {
            return Ok(s.clone());
        }
        let s = self.client.prepare(sql).map_err(|e| database_error(&self.place, &e))?;
        self.statements.insert(sql, s.clone());
        Ok(s)
    }

    /// Journals a new session with its first steps and takes its lease, in one transaction.
    /// A fork whose first steps are its parent's (a copied prefix) references them instead.
    pub(crate) fn create_session(
        &mut self,
        header: &SessionHeader,
        steps: &[StepRecord],
        take_lease: bool,
    ) -> Result<(), JournalError> {
        let core = serde_json::to_string(&header.core_config)
            .map_err(|source| JournalError::Encode { what: "core config", source })?;
        let run = serde_json::to_string(&header.run_config)
            .map_err(|source| JournalError::Encode { what: "run config", source })?;
        if core.len() + run.len() > MAX_ROW_BYTES {
            let bytes = core.len() + run.len();
            return Err(JournalError::RowTooLarge { session: header.id.clone(), seq: 0, bytes, limit: MAX_ROW_BYTES });
        }
        let shared = self.shared_prefix(header, steps)?;
        let base_seq = shared.checked_sub(1).map_or(0, |last| steps[last].seq);
        let own: Vec<EncodedRow> = steps[shared..].iter().map(|s| encode(&header.id, s)).collect::<Result<_, _>>()?;
        let (session_stmt, take) = (self.stmt(SESSION)?, self.stmt(TAKE)?);
        let (blob, step) = (self.stmt(BLOB)?, self.stmt(STEP)?);
        let (ttl, holder, place) = (self.ttl_ms(), self.holder.clone(), self.place.clone());
        let db = |e: postgres::Error| database_error(&place, &e);
        let mut tx = self.client.transaction().map_err(db)?;
        let parent = header.parent.as_ref();
        let fork_seq = parent.map(|p| i64::try_from(p.1).unwrap_or(i64::MAX));
        let inserted = tx
            .execute(
                &session_stmt,
                &[
                    &header.id,
                    &(header.created_at_ms as i64),
                    &header.engine_version,
                    &core,
                    &run,
                    &parent.map(|p| p.0.as_str()),
                    &fork_seq,
                    &(base_seq as i64),
                ],
            )
            .map_err(db)?;
        if inserted == 0 {
            return Err(JournalError::Duplicate(header.id.clone()));
        }
        write_rows(&place, &mut tx, &blob, &step, &header.id, &own)?;
        if let Some(reason) = terminal_of(steps) {
            tx.execute("UPDATE reloop.sessions SET terminal_reason = $2 WHERE id = $1", &[&header.id, &reason])
                .map_err(db)?;
        }
        let epoch = if take_lease {
            let row = tx.query_opt(&take, &[&header.id, &holder, &ttl]).map_err(db)?;
            Some(row.map(|r| r.get::<_, i64>(0)).ok_or_else(|| JournalError::Database {
                place: place.clone(),
                detail: format!("a lease on new session {} already existed", header.id),
            })?)
        } else {
            None
        };
        tx.commit().map_err(db)?;
        if let Some(epoch) = epoch {
            self.leases.insert(header.id.clone(), epoch);
        }
        Ok(())
    }

    /// How many of a fork's first steps are exactly its parent's steps (so need not be copied).
    fn shared_prefix(&mut self, header: &SessionHeader, steps: &[StepRecord]) -> Result<usize, JournalError> {
        let Some((parent, fork_seq)) = header.parent.as_ref() else { return Ok(0) };
        let upto = steps.iter().take_while(|s| s.seq <= *fork_seq).count();
        if upto == 0 {
            return Ok(0);
        }
        let theirs = self.read_steps(parent, 0, steps[upto - 1].seq, upto)?;
        Ok(theirs.iter().zip(&steps[..upto]).take_while(|(a, b)| a == b).count())
    }

    /// Writes steps of a session this connection holds the lease of, in one transaction that
    /// first renews the lease by its epoch: a writer fenced off by a takeover writes nothing.
    pub(crate) fn append(&mut self, session: &str, steps: &[StepRecord]) -> Result<(), JournalError> {
        let Some(epoch) = self.leases.get(session).copied() else {
            return Err(JournalError::Database {
                place: self.place.clone(),
                detail: format!("this journal is not session {session}'s writer; lock the session first"),
            });
        };
        let rows: Vec<EncodedRow> = steps.iter().map(|s| encode(session, s)).collect::<Result<_, _>>()?;
        let (fence, blob, step) = (self.stmt(FENCE)?, self.stmt(BLOB)?, self.stmt(STEP)?);
        let (ttl, holder, place) = (self.ttl_ms(), self.holder.clone(), self.place.clone());
        let db = |e: postgres::Error| database_error(&place, &e);
        let mut tx = self.client.transaction().map_err(db)?;
        if tx.execute(&fence, &[&session, &epoch, &holder, &ttl]).map_err(db)? == 0 {
            return Err(JournalError::LeaseLost { session: session.to_string(), epoch });
        }
        write_rows(&place, &mut tx, &blob, &step, session, &rows)?;
        if let Some(reason) = terminal_of(steps) {
            tx.execute("UPDATE reloop.sessions SET terminal_reason = $2 WHERE id = $1", &[&session, &reason])
                .map_err(db)?;
        }
        tx.commit().map_err(db)
    }

    /// Takes the session's lease: a new one, an expired one (its epoch + 1), or the one this
    /// connection holds already.
    pub(crate) fn take(&mut self, session: &str) -> Result<(), JournalError> {
        if self.leases.contains_key(session) {
            return Ok(());
        }
        let take = self.stmt(TAKE)?;
        let (ttl, holder, place) = (self.ttl_ms(), self.holder.clone(), self.place.clone());
        let db = |e: postgres::Error| database_error(&place, &e);
        let mut tx = self.client.transaction().map_err(db)?;
        if tx.query_opt("SELECT 1 FROM reloop.sessions WHERE id = $1", &[&session]).map_err(db)?.is_none() {
            return Err(JournalError::NoSuchSession(session.to_string()));
        }
        let Some(row) = tx.query_opt(&take, &[&session, &holder, &ttl]).map_err(db)? else {
            let held = tx
                .query_one(
                    "SELECT holder, epoch, (extract(epoch FROM expires_at - clock_timestamp()) * 1000)::bigint
                     FROM reloop.leases WHERE session_id = $1",
                    &[&session],
                )
                .map_err(db)?;
            return Err(JournalError::Leased {
                session: session.to_string(),
                holder: format!("{} (epoch {})", held.get::<_, String>(0), held.get::<_, i64>(1)),
                expires_in_ms: held.get(2),
            });
        };
        tx.execute("UPDATE reloop.sessions SET last_written_at = clock_timestamp() WHERE id = $1", &[&session])
            .map_err(db)?;
        tx.commit().map_err(db)?;
        self.leases.insert(session.to_string(), row.get(0));
        Ok(())
    }

    /// Gives the session's lease up: it expires now, keeping its epoch, so the next writer's
    /// epoch is higher still.
    pub(crate) fn release(&mut self, session: &str) -> Result<(), JournalError> {
        let Some(epoch) = self.leases.remove(session) else { return Ok(()) };
        let holder = self.holder.clone();
        self.client.execute(EXPIRE, &[&session, &epoch, &holder]).map_err(self.db())?;
        Ok(())
    }

    /// Renews every lease this connection holds; one another took over stays lost (the next
    /// append says so).
    pub(crate) fn heartbeat(&mut self) -> Result<(), JournalError> {
        let fence = self.stmt(FENCE)?;
        let (ttl, holder) = (self.ttl_ms(), self.holder.clone());
        let held: Vec<(String, i64)> = self.leases.iter().map(|(s, e)| (s.clone(), *e)).collect();
        let worker = holder.rsplit_once(':').map_or(holder.as_str(), |(process, _)| process);
        for (session, epoch) in held {
            // Each beat is told (a worker's log shows its sessions alive), and a lease found
            // taken over is told at once, before the next append fails on it.
            match self.client.execute(&fence, &[&session, &epoch, &holder, &ttl]).map_err(self.db())? {
                0 => tracing::warn!(target: "reloop::lease", event = "lease_lost", session = session.as_str(),
                    worker, holder = holder.as_str(), epoch, "lease lost: another writer took the session over"),
                _ => tracing::info!(target: "reloop::lease", event = "heartbeat", session = session.as_str(),
                    worker, holder = holder.as_str(), epoch, ttl_ms = ttl, "heartbeat: lease renewed"),
            }
        }
        Ok(())
    }

    pub(crate) fn live_writer(&mut self, session: &str) -> Result<Option<String>, JournalError> {
        let row = self
            .client
            .query_opt(
                "SELECT holder, epoch FROM reloop.leases WHERE session_id = $1 AND expires_at > clock_timestamp()",
                &[&session],
            )
            .map_err(self.db())?;
        Ok(row.map(|r| format!("{} (epoch {})", r.get::<_, String>(0), r.get::<_, i64>(1))))
    }

    pub(crate) fn header(&mut self, id: &str) -> Result<SessionHeader, JournalError> {
        let row = self
            .client
            .query_opt(
                "SELECT id, created_at_ms, engine_version, core_config, run_config, parent_id, fork_seq
                 FROM reloop.sessions WHERE id = $1",
                &[&id],
            )
            .map_err(self.db())?
            .ok_or_else(|| JournalError::NoSuchSession(id.to_string()))?;
        let decode = |what, source| JournalError::Decode { session: id.to_string(), seq: 0, what, source };
        Ok(SessionHeader {
            id: row.get(0),
            created_at_ms: row.get::<_, i64>(1) as u64,
            engine_version: row.get(2),
            core_config: serde_json::from_str(row.get(3)).map_err(|e| decode("core config", e))?,
            run_config: serde_json::from_str(row.get(4)).map_err(|e| decode("run config", e))?,
            parent: row.get::<_, Option<String>>(5).zip(row.get::<_, Option<i64>>(6).map(|s| s as u64)),
        })
    }

    pub(crate) fn resolve(&mut self, selector: &str) -> Result<String, JournalError> {
        let db = |e: postgres::Error| database_error(&self.place, &e);
        if selector == "last" {
            let row = self
                .client
                .query_opt(
                    // A subagent's session is never `last`, as in SQLite: its parent is what a
                    // person ran, and resuming or replaying it covers the child.
                    "SELECT id FROM reloop.sessions WHERE run_config::jsonb -> 'agent' IS NULL
                     ORDER BY last_written_at DESC, created_order DESC LIMIT 1",
                    &[],
                )
                .map_err(db)?;
            return row.map(|r| r.get(0)).ok_or(JournalError::Empty);
        }
        let row = self
            .client
            .query_one(
                "SELECT count(*), min(id), bool_or(id = $1) FROM reloop.sessions WHERE starts_with(id, $1)",
                &[&selector],
            )
            .map_err(db)?;
        match (row.get::<_, i64>(0), row.get::<_, Option<bool>>(2)) {
            (_, Some(true)) => Ok(selector.to_string()),
            (0, _) => Err(JournalError::NoSuchSession(selector.to_string())),
            (1, _) => Ok(row.get(1)),
            (count, _) => Err(JournalError::AmbiguousSession {
                selector: selector.to_string(),
                count: usize::try_from(count).unwrap_or(usize::MAX),
            }),
        }
    }

    pub(crate) fn sessions(&mut self) -> Result<Vec<SessionSummary>, JournalError> {
        let rows = self
            .client
            .query(
                "SELECT s.id, s.created_at_ms, s.terminal_reason, s.parent_id, s.fork_seq,
                        s.base_seq + (SELECT count(*) FROM reloop.steps st WHERE st.session_id = s.id)
                 FROM reloop.sessions s ORDER BY s.created_at_ms, s.created_order",
                &[],
            )
            .map_err(self.db())?;
        Ok(rows
            .iter()
            .map(|r| SessionSummary {
                id: r.get(0),
                created_at_ms: r.get::<_, i64>(1) as u64,
                terminal_reason: r.get(2),
                parent: r.get::<_, Option<String>>(3).zip(r.get::<_, Option<i64>>(4).map(|s| s as u64)),
                steps: r.get::<_, i64>(5) as u64,
            })
            .collect())
    }

    pub(crate) fn imports_of(&mut self, file: &str) -> Result<Vec<(String, Value)>, JournalError> {
        let rows = self
            .client
            .query(
                "SELECT id, run_config FROM reloop.sessions
                 WHERE run_config::jsonb ->> 'provider' = 'import' AND run_config::jsonb ->> 'file' = $1
                 ORDER BY created_order",
                &[&file],
            )
            .map_err(self.db())?;
        rows.iter()
            .map(|r| {
                let id: String = r.get(0);
                let config = serde_json::from_str(r.get(1)).map_err(|source| JournalError::Decode {
                    session: id.clone(),
                    seq: 0,
                    what: "run config",
                    source,
                })?;
                Ok((id, config))
            })
            .collect()
    }

    /// The stored pieces a session's steps are read from, oldest first: for a fork, its
    /// parent's steps up to the fork's `base_seq` (and so on up), then its own.
    pub(crate) fn segments(&mut self, id: &str) -> Result<Vec<Segment>, JournalError> {
        let mut out = vec![];
        let (mut session, mut upto) = (id.to_string(), i64::MAX);
        // Each fork has a parent created before it, so the walk ends; the cap guards a database
        // edited by hand into a cycle.
        for _ in 0..10_000 {
            let Some(row) = self
                .client
                .query_opt("SELECT parent_id, base_seq FROM reloop.sessions WHERE id = $1", &[&session])
                .map_err(self.db())?
            else {
                break;
            };
            let (parent, base): (Option<String>, i64) = (row.get(0), row.get(1));
            out.push(Segment { session: session.clone(), after: base, upto });
            match parent.filter(|_| base > 0) {
                Some(p) => (session, upto) = (p, base),
                None => break,
            }
        }
        out.reverse();
        Ok(out)
    }

    /// Up to `limit` steps of the stored session `session` with `after < seq <= upto`.
    pub(crate) fn page(
        &mut self,
        session: &str,
        after: i64,
        upto: i64,
        limit: i64,
    ) -> Result<Vec<StepRecord>, JournalError> {
        let stmt = self.stmt(PAGE_OF_STEPS)?;
        let rows = self.client.query(&stmt, &[&session, &after, &upto, &limit]).map_err(self.db())?;
        rows.iter().map(|r| decode(session, r)).collect()
    }

    /// A session's steps (through its parents) with `after < seq <= upto`, at most `limit`.
    pub(crate) fn read_steps(
        &mut self,
        id: &str,
        after: u64,
        upto: u64,
        limit: usize,
    ) -> Result<Vec<StepRecord>, JournalError> {
        let mut out = Vec::new();
        let (after, upto) = (after as i64, i64::try_from(upto).unwrap_or(i64::MAX));
        for seg in self.segments(id)? {
            let (mut from, to) = (seg.after.max(after), seg.upto.min(upto));
            while from < to && out.len() < limit {
                let page = self.page(&seg.session, from, to, PAGE)?;
                let Some(last) = page.last() else { break };
                from = last.seq as i64;
                out.extend(page);
            }
        }
        out.truncate(limit);
        Ok(out)
    }
}

/// Part of a session's steps stored under one session: `after < seq <= upto`.
#[derive(Debug, Clone)]
pub(crate) struct Segment {
    pub(crate) session: String,
    pub(crate) after: i64,
    pub(crate) upto: i64,
}

fn write_rows(
    place: &str,
    tx: &mut Transaction<'_>,
    blob: &Statement,
    step: &Statement,
    session: &str,
    rows: &[EncodedRow],
) -> Result<(), JournalError> {
    for row in rows {
        let (event, effects) = (row.step.event_json()?, row.step.effects_json()?);
        for (payload, body) in [(&row.event, Some(event)), (&row.effects, effects)] {
            if let (Some(hash), Some(body)) = (&payload.hash, body) {
                tx.execute(blob, &[hash, &body]).map_err(|e| database_error(place, &e))?;
            }
        }
        let s = &row.step;
        tx.execute(
            step,
            &[
                &session,
                &row.seq,
                &(s.at_ms() as i64),
                &s.kind(),
                &row.event.inline(Some(event)),
                &row.event.hash,
                &s.from_phase(),
                &s.to_phase(),
                &i64::from(s.turn_before()),
                &i64::from(s.turn_after()),
                &s.reason_kind(),
                &s.reason_name(),
                &s.reason_json()?,
                &row.effects.inline(effects),
                &row.effects.hash,
                &(s.digest() as i64),
                &s.outcome().map(|hash| hash as i64),
            ],
        )
        .map_err(|e| database_error(place, &e))?;
    }
    Ok(())
}

/// A step read back from its row (through `step_bodies`, which joins its blobs).
fn decode(session: &str, r: &postgres::Row) -> Result<StepRecord, JournalError> {
    let seq = r.get::<_, i64>(0) as u64;
    let event = serde_json::from_str(r.get(2)).map_err(|source| JournalError::Decode {
        session: session.to_string(),
        seq,
        what: "event",
        source,
    })?;
    let (kind, why, effects): (Option<&str>, Option<&str>, &str) = (r.get(7), r.get(8), r.get(9));
    let RowOutcome { reason, ignored, effects } =
        RowOutcome::decode(session, seq, kind, why.map(str::as_bytes), effects.as_bytes())?;
    Ok(StepRecord {
        seq,
        at_ms: r.get::<_, i64>(1) as u64,
        event,
        from_phase: r.get(3),
        to_phase: r.get(4),
        turn_before: u32::try_from(r.get::<_, i64>(5)).unwrap_or(u32::MAX),
        turn_after: u32::try_from(r.get::<_, i64>(6)).unwrap_or(u32::MAX),
        reason,
        ignored,
        effects,
        digest: r.get::<_, i64>(10) as u64,
    })
}
