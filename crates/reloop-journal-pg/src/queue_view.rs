//! The work queue as an operator reads it: what waits, what runs where since when, what failed
//! and why. `reloop queue`, `sessions`, `why` and the web UI read it; before it, a session a
//! worker could not run stayed `(unfinished)` with its reason only in `reloop.queue.outcome`.

use reloop_core::TerminalReason;
use reloop_journal::JournalError;
use serde::Serialize;

use crate::conn::{database_error, Conn};
use crate::queue::MAX_ATTEMPTS;

/// Where a queued session stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum QueueState {
    /// Waiting for a worker (never claimed, or its last worker stopped or died).
    Queued,
    /// A worker holds its lease and runs it.
    Claimed,
    /// Its run ended in an error, or it was given up after `MAX_ATTEMPTS` (5) claims.
    Failed,
    /// Its run ended with a terminal reason that is no failure.
    Done,
}

impl QueueState {
    /// `queued`, `claimed`, `failed`, `done`.
    pub fn as_str(self) -> &'static str {
        match self {
            QueueState::Queued => "queued",
            QueueState::Claimed => "claimed",
            QueueState::Failed => "failed",
            QueueState::Done => "done",
        }
    }

    /// The state a run's outcome as the worker journals it leaves a session in: a terminal
    /// reason's name, done unless `reloop run` would exit 1 on it; `error: ...` (the run could
    /// not go on) failed.
    pub fn of_outcome(outcome: &str) -> QueueState {
        match serde_json::from_value::<TerminalReason>(serde_json::Value::String(outcome.to_string())) {
            Ok(reason) if !reason.is_error() => QueueState::Done,
            _ => QueueState::Failed,
        }
    }
}

/// One row of the queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QueueEntry {
    /// The session's id.
    pub session: String,
    /// Where it stands.
    pub state: QueueState,
    /// The lease holder (`host:pid:n`) that runs it (claimed) or ran it last (failed, done).
    pub worker: Option<String>,
    /// Since when it is in that state, in milliseconds since the Unix epoch by the database's
    /// clock: enqueued (queued), claimed, or finished.
    pub since_ms: u64,
    /// Why it failed; how it ended (done); why it waits again (queued after earlier claims).
    pub reason: Option<String>,
}

/// How many queue rows stand where, counted by the database: a page heading a list of
/// 100,000 sessions reads a few numbers, not the queue.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct QueueSummary {
    /// Waiting for a worker.
    pub queued: u64,
    /// Held by a worker now.
    pub claimed: u64,
    /// Ended in an error, or given up.
    pub failed: u64,
}

/// The queue rows still open, counted by state; and the finished ones by outcome, an error's
/// message folded into `error:` so the groups stay as few as the terminal reasons.
const SUMMARY_OPEN: &str = "SELECT
        count(*) FILTER (WHERE coalesce(l.expires_at > clock_timestamp(), false)),
        count(*) FILTER (WHERE NOT coalesce(l.expires_at > clock_timestamp(), false) AND q.attempts < $1),
        count(*) FILTER (WHERE NOT coalesce(l.expires_at > clock_timestamp(), false) AND q.attempts >= $1)
     FROM reloop.queue q LEFT JOIN reloop.leases l ON l.session_id = q.session_id WHERE q.finished_at IS NULL";
const SUMMARY_FINISHED: &str =
    "SELECT CASE WHEN outcome IS NULL OR outcome LIKE 'error:%' THEN 'error:' ELSE outcome END, count(*)
     FROM reloop.queue WHERE finished_at IS NOT NULL GROUP BY 1";

/// Every queue row with what decides its state, oldest first.
const ENTRIES: &str = "SELECT q.session_id,
        (extract(epoch FROM q.enqueued_at) * 1000)::bigint,
        (extract(epoch FROM q.finished_at) * 1000)::bigint,
        q.outcome, q.attempts, l.holder,
        (extract(epoch FROM l.acquired_at) * 1000)::bigint,
        coalesce(l.expires_at > clock_timestamp(), false)
     FROM reloop.queue q LEFT JOIN reloop.leases l ON l.session_id = q.session_id
     WHERE $1::text[] IS NULL OR q.session_id = ANY($1)
     ORDER BY q.enqueued_at, q.session_id";

impl Conn {
    pub(crate) fn queue_summary(&mut self) -> Result<QueueSummary, JournalError> {
        let open =
            self.client.query_one(SUMMARY_OPEN, &[&MAX_ATTEMPTS]).map_err(|e| database_error(&self.place, &e))?;
        let n = |v: i64| u64::try_from(v).unwrap_or(0);
        let mut summary = QueueSummary { claimed: n(open.get(0)), queued: n(open.get(1)), failed: n(open.get(2)) };
        let finished = self.client.query(SUMMARY_FINISHED, &[]).map_err(|e| database_error(&self.place, &e))?;
        for r in finished {
            let outcome: String = r.get(0);
            if QueueState::of_outcome(&outcome) == QueueState::Failed {
                summary.failed += n(r.get(1));
            }
        }
        Ok(summary)
    }

    pub(crate) fn queue_entries(&mut self, of: Option<&[String]>) -> Result<Vec<QueueEntry>, JournalError> {
        let of: Option<Vec<String>> = of.map(<[String]>::to_vec);
        let rows = self.client.query(ENTRIES, &[&of]).map_err(|e| database_error(&self.place, &e))?;
        let ms = |v: Option<i64>| v.map_or(0, |v| u64::try_from(v).unwrap_or(0));
        Ok(rows
            .iter()
            .map(|r| {
                let (enqueued, finished) = (ms(r.get(1)), r.get::<_, Option<i64>>(2));
                let (outcome, attempts): (Option<String>, i32) = (r.get(3), r.get(4));
                let (holder, acquired, live): (Option<String>, Option<i64>, bool) = (r.get(5), r.get(6), r.get(7));
                let (state, since, reason) = match (finished, live) {
                    (Some(at), _) => {
                        let state = outcome.as_deref().map_or(QueueState::Failed, QueueState::of_outcome);
                        (state, ms(Some(at)), outcome)
                    }
                    (None, true) => (QueueState::Claimed, ms(acquired), None),
                    (None, false) if attempts >= MAX_ATTEMPTS => (
                        QueueState::Failed,
                        ms(acquired).max(enqueued),
                        Some(format!("given up after {attempts} claims that did not finish it")),
                    ),
                    (None, false) => {
                        let again = (attempts > 0).then(|| match attempts {
                            1 => "claimed once before; its worker stopped or lost the session".to_string(),
                            n => format!("claimed {n} times before; its workers stopped or lost the session"),
                        });
                        (QueueState::Queued, enqueued, again)
                    }
                };
                // A session still waiting has nobody's name on it: its last holder let it go.
                let worker = holder.filter(|_| state != QueueState::Queued);
                QueueEntry { session: r.get(0), state, worker, since_ms: since, reason }
            })
            .collect())
    }
}

impl crate::PgJournal {
    /// Every session in the queue, oldest enqueued first: queued, claimed (by which lease
    /// holder, since when), failed (with why) and done.
    pub fn queue_entries(&mut self) -> Result<Vec<QueueEntry>, JournalError> {
        self.call(|conn| conn.queue_entries(None))
    }

    /// The queue rows of these sessions only (a list page's), oldest enqueued first.
    pub fn queue_entries_of(&mut self, sessions: &[String]) -> Result<Vec<QueueEntry>, JournalError> {
        let sessions = sessions.to_vec();
        self.call(move |conn| conn.queue_entries(Some(&sessions)))
    }

    /// How many sessions the queue holds queued, claimed and failed, counted by the database.
    pub fn queue_summary(&mut self) -> Result<QueueSummary, JournalError> {
        self.call(|conn| conn.queue_summary())
    }
}
