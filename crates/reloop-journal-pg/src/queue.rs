//! The work queue: sessions journaled by `reloop run --enqueue` and run by `reloop worker`.
//!
//! A queued session is a session like any other (its header and first step are journaled)
//! plus a row of `reloop.queue`. Claiming picks the oldest unfinished row whose session nobody
//! writes (no lease, or an expired one) with `FOR UPDATE SKIP LOCKED`, so concurrent workers
//! do not wait on each other's candidates, and takes the session's lease in the same
//! transaction. The row lock lasts only for the claim: the lease and its epoch stay the guard
//! against two writers, as for every other append.

use reloop_journal::JournalError;

use crate::conn::{database_error, Conn, EXPIRE, TAKE};

/// Claims after which a session that never finished is left alone: a session whose every run
/// fails (its script is gone, its provider unknown) must not keep the fleet busy.
pub(crate) const MAX_ATTEMPTS: i32 = 5;

/// Unfinished rows whose session ended are candidates too: their worker died between the
/// session's last step and marking the row, and the claimer marks it instead.
const CLAIM: &str = "SELECT q.session_id, s.terminal_reason FROM reloop.queue q
     JOIN reloop.sessions s ON s.id = q.session_id
     LEFT JOIN reloop.leases l ON l.session_id = q.session_id
     WHERE q.finished_at IS NULL AND q.attempts < $1
       AND (l.session_id IS NULL OR l.expires_at <= clock_timestamp())
     ORDER BY q.enqueued_at, q.session_id
     LIMIT 1
     FOR UPDATE OF q SKIP LOCKED";

/// What one claiming round found.
/// A session no worker queued whose writer died: it had a lease that expired, it has not ended,
/// and it is nobody's subagent (a parent's resume goes on with its children). The lease row is
/// locked, so two claimers never take the same one.
const ORPHAN: &str = "SELECT s.id FROM reloop.sessions s
     JOIN reloop.leases l ON l.session_id = s.id
     WHERE s.terminal_reason IS NULL AND l.expires_at <= clock_timestamp()
       AND s.run_config::jsonb -> 'agent' IS NULL
       AND NOT EXISTS (SELECT 1 FROM reloop.queue q WHERE q.session_id = s.id)
     ORDER BY l.expires_at, s.id
     LIMIT 1
     FOR UPDATE OF l SKIP LOCKED";

enum Claim {
    Taken(String),
    None,
    /// A session that had ended, now marked finished.
    Ended,
    /// Another claimer took the session between our look and our lease: its claim committed
    /// after our statement's snapshot, so the row read as free. Others may still be queued.
    Lost,
}

impl Conn {
    /// Puts `session` in the queue (it must exist).
    pub(crate) fn enqueue(&mut self, session: &str) -> Result<(), JournalError> {
        self.client
            .execute(
                "INSERT INTO reloop.queue (session_id) VALUES ($1) ON CONFLICT (session_id) DO NOTHING",
                &[&session],
            )
            .map_err(|e| database_error(&self.place, &e))?;
        Ok(())
    }

    /// Claims the oldest queued session nobody writes, taking its lease; `None` when none waits.
    pub(crate) fn claim(&mut self) -> Result<Option<String>, JournalError> {
        // Each round either claims, finds nothing, marks one ended session, or loses a race for
        // one to another claimer: bounded by the queue, and by this cap per call.
        for _ in 0..1_000 {
            match self.claim_one()? {
                Claim::Taken(session) => return Ok(Some(session)),
                Claim::None => return self.claim_orphan(),
                Claim::Ended | Claim::Lost => {}
            }
        }
        Ok(None)
    }

    fn claim_one(&mut self) -> Result<Claim, JournalError> {
        let (claim, take) = (self.stmt(CLAIM)?, self.stmt(TAKE)?);
        let (ttl, holder, place) = (self.ttl_ms(), self.holder.clone(), self.place.clone());
        let db = |e: postgres::Error| database_error(&place, &e);
        let mut tx = self.client.transaction().map_err(db)?;
        let Some(row) = tx.query_opt(&claim, &[&MAX_ATTEMPTS]).map_err(db)? else { return Ok(Claim::None) };
        let session: String = row.get(0);
        if let Some(reason) = row.get::<_, Option<String>>(1) {
            tx.execute(
                "UPDATE reloop.queue SET finished_at = clock_timestamp(), outcome = $2 WHERE session_id = $1",
                &[&session, &reason],
            )
            .map_err(db)?;
            tx.commit().map_err(db)?;
            return Ok(Claim::Ended);
        }
        // The lease decides: a writer that took the session between our look and now keeps it,
        // and we look again (answering "nothing queued" here left a queue of three sessions
        // with a claimer of three that found none).
        let Some(lease) = tx.query_opt(&take, &[&session, &holder, &ttl]).map_err(db)? else { return Ok(Claim::Lost) };
        tx.execute("UPDATE reloop.queue SET attempts = attempts + 1 WHERE session_id = $1", &[&session]).map_err(db)?;
        tx.execute("UPDATE reloop.sessions SET last_written_at = clock_timestamp() WHERE id = $1", &[&session])
            .map_err(db)?;
        tx.commit().map_err(db)?;
        self.leases.insert(session.clone(), lease.get(0));
        Ok(Claim::Taken(session))
    }

    /// Takes over a session whose writer died outside any queue ([`ORPHAN`]); it joins the queue
    /// as claimed once, so its end is recorded and a session failing every time stops at
    /// [`MAX_ATTEMPTS`] like a queued one.
    fn claim_orphan(&mut self) -> Result<Option<String>, JournalError> {
        let (orphan, take) = (self.stmt(ORPHAN)?, self.stmt(TAKE)?);
        let (ttl, holder, place) = (self.ttl_ms(), self.holder.clone(), self.place.clone());
        let db = |e: postgres::Error| database_error(&place, &e);
        let mut tx = self.client.transaction().map_err(db)?;
        let Some(row) = tx.query_opt(&orphan, &[]).map_err(db)? else { return Ok(None) };
        let session: String = row.get(0);
        let Some(lease) = tx.query_opt(&take, &[&session, &holder, &ttl]).map_err(db)? else { return Ok(None) };
        tx.execute("INSERT INTO reloop.queue (session_id, attempts) VALUES ($1, 1)", &[&session]).map_err(db)?;
        tx.execute("UPDATE reloop.sessions SET last_written_at = clock_timestamp() WHERE id = $1", &[&session])
            .map_err(db)?;
        tx.commit().map_err(db)?;
        self.leases.insert(session.clone(), lease.get(0));
        Ok(Some(session))
    }

    /// Gives a session this connection just claimed back to the queue as if it had never been
    /// claimed: its lease expires now and the claim is not counted as an attempt. A worker told
    /// to stop while a claim was on its way runs nothing, and must not use up one of the
    /// session's [`MAX_ATTEMPTS`] doing so.
    pub(crate) fn unclaim(&mut self, session: &str) -> Result<(), JournalError> {
        let Some(epoch) = self.leases.remove(session) else { return Ok(()) };
        let (holder, place) = (self.holder.clone(), self.place.clone());
        let db = |e: postgres::Error| database_error(&place, &e);
        let mut tx = self.client.transaction().map_err(db)?;
        let released = tx.execute(EXPIRE, &[&session, &epoch, &holder]).map_err(db)?;
        // A lease another writer took over meanwhile was a claim of theirs: it stays counted.
        if released == 1 {
            tx.execute(
                "UPDATE reloop.queue SET attempts = greatest(attempts - 1, 0)
                 WHERE session_id = $1 AND finished_at IS NULL",
                &[&session],
            )
            .map_err(db)?;
        }
        tx.commit().map_err(db)
    }

    /// Marks a queued session done with; it is never claimed again.
    pub(crate) fn finish_queued(&mut self, session: &str, outcome: &str) -> Result<(), JournalError> {
        self.client
            .execute(
                "UPDATE reloop.queue SET finished_at = clock_timestamp(), outcome = $2 WHERE session_id = $1",
                &[&session, &outcome],
            )
            .map_err(|e| database_error(&self.place, &e))?;
        Ok(())
    }
}
