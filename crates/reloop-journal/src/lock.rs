//! One writer per session.
//!
//! Two processes appending to one session would interleave their steps and break the journal's
//! one promise (the events, in the order they were applied). So every writer first takes the
//! session's row in `session_locks`, naming its pid. A row whose process no longer exists —
//! a writer that crashed or was killed — is stale and taken over, so a crash never blocks
//! `reloop resume`. The row is removed when the writing [`Journal`] is dropped.
//!
//! The liveness check is `kill(pid, 0)` on Unix. A pid reused by an unrelated process keeps a
//! stale row alive until that process ends; the error names the pid so a person can check.

use rusqlite::{params, OptionalExtension, TransactionBehavior};

use crate::error::JournalError;
use crate::record::SessionHeader;
use crate::store::{insert_header, Journal};

impl Journal {
    /// Journals a new session's header; this journal becomes the session's one writer.
    pub fn create_session(&self, header: &SessionHeader) -> Result<(), JournalError> {
        self.commit()?;
        // Immediate, as in `create_session_with_steps`: the check reads before the insert writes.
        let tx = rusqlite::Transaction::new_unchecked(&self.conn, rusqlite::TransactionBehavior::Immediate)?;
        insert_header(&tx, header)?;
        take_lock_on(&tx, &header.id)?;
        tx.commit()?;
        self.locked.borrow_mut().push(header.id.clone());
        Ok(())
    }

    /// Makes this journal the session's one writer, or says which live process already is.
    /// Taking a lock this journal already holds is a no-op.
    pub fn lock_session(&mut self, session: &str) -> Result<(), JournalError> {
        if self.locked.borrow().iter().any(|s| s == session) {
            return Ok(());
        }
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        {
            let exists: bool =
                tx.query_row("SELECT EXISTS (SELECT 1 FROM sessions WHERE id = ?1)", [session], |r| r.get(0))?;
            if !exists {
                return Err(JournalError::NoSuchSession(session.to_string()));
            }
        }
        take_lock_on(&tx, session)?;
        tx.commit()?;
        self.locked.borrow_mut().push(session.to_string());
        Ok(())
    }

    /// The live process writing the session, if any (stale rows of dead processes are ignored).
    pub fn writer(&self, session: &str) -> Result<Option<u32>, JournalError> {
        let pid: Option<i64> = self
            .conn
            .query_row("SELECT pid FROM session_locks WHERE session_id = ?1", [session], |r| r.get(0))
            .optional()?;
        Ok(pid.map(|p| p as u32).filter(|&p| p == std::process::id() || alive(p)))
    }

    /// Stops being the session's writer (a worker done with one session of many); releasing a
    /// session this journal does not write is a no-op.
    pub(crate) fn unlock_session(&mut self, session: &str) -> Result<(), JournalError> {
        self.commit()?;
        let held = {
            let mut locked = self.locked.borrow_mut();
            let before = locked.len();
            locked.retain(|s| s != session);
            locked.len() != before
        };
        if held {
            self.conn.execute(
                "DELETE FROM session_locks WHERE session_id = ?1 AND pid = ?2",
                params![session, i64::from(std::process::id())],
            )?;
        }
        Ok(())
    }

    fn release_locks(&self) {
        for session in self.locked.borrow_mut().drain(..) {
            // Best effort: a row left behind names a dead pid and is taken over later.
            let _ = self.conn.execute(
                "DELETE FROM session_locks WHERE session_id = ?1 AND pid = ?2",
                params![session, i64::from(std::process::id())],
            );
        }
    }
}

impl Drop for Journal {
    fn drop(&mut self) {
        // What was deferred was journaled as far as the writer knows: it is committed, not lost.
        let _ = self.commit();
        self.release_locks();
    }
}

/// Takes the session's writer row inside the caller's transaction.
pub(crate) fn take_lock_on(conn: &rusqlite::Connection, session: &str) -> Result<(), JournalError> {
    let me = std::process::id();
    let holder: Option<i64> =
        conn.query_row("SELECT pid FROM session_locks WHERE session_id = ?1", [session], |r| r.get(0)).optional()?;
    if let Some(pid) = holder.map(|p| p as u32) {
        if pid != me && alive(pid) {
            return Err(JournalError::Locked { session: session.to_string(), pid });
        }
    }
    let now =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0);
    conn.execute(
        "INSERT OR REPLACE INTO session_locks (session_id, pid, acquired_at_ms) VALUES (?1, ?2, ?3)",
        params![session, i64::from(me), now],
    )?;
    Ok(())
}

/// Whether a process with this pid exists. `EPERM` means it exists but belongs to someone else.
#[cfg(unix)]
#[allow(unsafe_code)]
fn alive(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else { return false };
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 performs only the existence and permission checks; nothing is sent.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Without a portable liveness check, a recorded writer is assumed alive: refusing is safer
/// than interleaving two writers.
#[cfg(not(unix))]
fn alive(_pid: u32) -> bool {
    true
}
