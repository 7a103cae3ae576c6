//! Opening journals, writing steps, reading sessions back.

use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};

use rusqlite::{params, Connection, OpenFlags, OptionalExtension};

use crate::codec::EncodedStep;
use crate::error::JournalError;
use crate::record::{check_row, NewStep, SessionHeader, SessionSummary, StepRecord};
use crate::rows::{insert_step, session_number};
use crate::schema::{migrate, APPLICATION_ID, SCHEMA_VERSION};

/// How much of a journal is checked when it is opened.
enum Integrity {
    /// Every page (`PRAGMA quick_check`): before anything may write to the file.
    Full,
    /// What SQLite checks itself on open and on every read: a file shorter than its header
    /// says is refused at once, a garbled page where it is read. Enough for readers.
    OnRead,
}

/// An open journal database.
pub struct Journal {
    pub(crate) conn: Connection,
    path: PathBuf,
    /// Sessions this journal holds the writer's lock of; released on drop.
    pub(crate) locked: RefCell<Vec<String>>,
    /// Steps appended with [`Journal::append_deferred`] since the last commit: they share one
    /// open transaction, committed by the next durable write, [`Journal::commit`] or drop.
    pub(crate) deferred: Cell<usize>,
    /// The session number (`session_numbers.n`) of the session last written, so the writer's
    /// steps do not look it up each.
    number: RefCell<Option<(String, i64)>>,
    /// Where a step's JSON is encoded before it is bound, reused so a step allocates nothing.
    pub(crate) buf: RefCell<Vec<u8>>,
}

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Journal").field("path", &self.path).finish()
    }
}

impl Journal {
    /// Opens a journal for writing, creating it (and its folder) when absent.
    pub fn create_or_open(path: &Path) -> Result<Self, JournalError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| JournalError::Io { path: dir.to_path_buf(), source })?;
        }
        Self::open_with(path, OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE)
    }

    /// Opens an existing journal; a missing file is an error, not a new journal.
    pub fn open_existing(path: &Path) -> Result<Self, JournalError> {
        if !path.exists() {
            return Err(JournalError::Missing(path.to_path_buf()));
        }
        Self::open_with(path, OpenFlags::SQLITE_OPEN_READ_WRITE)
    }

    /// Opens an existing journal to read it (`show`, `replay`, `why`, ...). The whole-file
    /// integrity check a writer runs costs a read of every page, which a reader of one session of
    /// a long journal should not pay; SQLite's own checks stand for it (a cut copy is refused on
    /// open, a garbled page where it is read), both reported as a damaged journal.
    pub fn open_for_reading(path: &Path) -> Result<Self, JournalError> {
        if !path.exists() {
            return Err(JournalError::Missing(path.to_path_buf()));
        }
        Self::open_checked(path, OpenFlags::SQLITE_OPEN_READ_WRITE, Integrity::OnRead)
    }

    /// An in-memory journal, for benchmarks and tests.
    pub fn in_memory() -> Result<Self, JournalError> {
        let conn = Connection::open_in_memory()?;
        migrate(&conn, 0)?;
        Ok(Journal {
            conn,
            path: PathBuf::from(":memory:"),
            locked: RefCell::default(),
            deferred: Cell::new(0),
            number: RefCell::default(),
            buf: RefCell::default(),
        })
    }

    fn open_with(path: &Path, flags: OpenFlags) -> Result<Self, JournalError> {
        Self::open_checked(path, flags, Integrity::Full)
    }

    fn open_checked(path: &Path, flags: OpenFlags, integrity: Integrity) -> Result<Self, JournalError> {
        let foreign = |detail: String| JournalError::Foreign { path: path.to_path_buf(), detail };
        // Until the file is known to be a sound journal, a database error means the file is
        // damaged, not that reloop failed: say so, and write nothing.
        let damaged = |e: rusqlite::Error| JournalError::Corrupt { path: path.to_path_buf(), detail: e.to_string() };
        // A `Connection` is never shared between threads (rusqlite makes it `!Sync`), so
        // SQLite's own per-call mutex only costs: a lock and an unlock around every bind, step
        // and column read, about a tenth of a streamed replay.
        let conn = Connection::open_with_flags(path, flags | OpenFlags::SQLITE_OPEN_NO_MUTEX)?;
        // Another process may be creating the file this moment: wait out its commit rather than
        // fail on its lock.
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        // The three reads share one snapshot: read apart, a creator's commit between them showed
        // its tables without its application id, a foreign file.
        let snapshot = rusqlite::Transaction::new_unchecked(&conn, rusqlite::TransactionBehavior::Deferred)?;
        // Reading the header is the first thing that fails on a file that is not SQLite.
        let app_id: i64 = snapshot.pragma_query_value(None, "application_id", |r| r.get(0)).map_err(|e| {
            match e.sqlite_error_code() {
                // A SQLite file whose pages are missing or garbled: ours or not, it is damaged.
                Some(rusqlite::ErrorCode::DatabaseCorrupt) => damaged(e),
                _ => foreign(e.to_string()),
            }
        })?;
        let version: i64 = snapshot.pragma_query_value(None, "user_version", |r| r.get(0)).map_err(damaged)?;
        let tables: i64 =
            snapshot.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0)).map_err(damaged)?;
        snapshot.commit()?;
        if app_id != APPLICATION_ID && !(app_id == 0 && tables == 0) {
            return Err(foreign(format!("its application id is {app_id:#x}, and it holds {tables} tables")));
        }
        if version > SCHEMA_VERSION {
            return Err(JournalError::TooNew { path: path.to_path_buf(), found: version, supported: SCHEMA_VERSION });
        }
        // A reader that must migrate the file writes to it: it checks every page first, too.
        let integrity = if version < SCHEMA_VERSION { Integrity::Full } else { integrity };
        match integrity {
            Integrity::Full => {
                let integrity: String = conn.query_row("PRAGMA quick_check", [], |r| r.get(0)).map_err(damaged)?;
                if integrity != "ok" {
                    return Err(JournalError::Corrupt {
                        path: path.to_path_buf(),
                        detail: format!("integrity check failed: {}", integrity.lines().next().unwrap_or_default()),
                    });
                }
            }
            // A reader walks a session's rows in key order and visits each page once: SQLite's
            // default 2 MiB page cache would only hold pages it is done with.
            Integrity::OnRead => conn.pragma_update(None, "cache_size", -256)?,
        }
        use_wal(&conn)?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", true)?;
        if version < SCHEMA_VERSION {
            // Another process may be creating or migrating the same file right now: take the
            // write lock first (waiting for it), then look again at what there is to do.
            let tx = rusqlite::Transaction::new_unchecked(&conn, rusqlite::TransactionBehavior::Immediate)?;
            let now: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
            if now < SCHEMA_VERSION {
                migrate(&tx, now)?;
            }
            tx.commit()?;
        }
        Ok(Journal {
            conn,
            path: path.to_path_buf(),
            locked: RefCell::default(),
            deferred: Cell::new(0),
            number: RefCell::default(),
            buf: RefCell::default(),
        })
    }

    /// The journal's file, for messages that name it.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Puts the file in WAL mode (a no-op once it is). Switching needs every other connection out
/// of the file, and SQLite reports one that is not at once, without the busy timeout: a file
/// several processes create at the same moment is retried here for as long as the timeout
/// would wait.
fn use_wal(conn: &Connection) -> Result<(), rusqlite::Error> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let mut pause = std::time::Duration::from_millis(1);
    loop {
        match conn.pragma_update(None, "journal_mode", "WAL") {
            Err(e)
                if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy)
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(pause);
                pause = (pause * 2).min(std::time::Duration::from_millis(50));
            }
            done => return done,
        }
    }
}

/// Inserts a session's header row; an id already present is refused.
pub(crate) fn insert_header(conn: &Connection, header: &SessionHeader) -> Result<(), JournalError> {
    let core = serde_json::to_string(&header.core_config)
        .map_err(|source| JournalError::Encode { what: "core config", source })?;
    let run = serde_json::to_string(&header.run_config)
        .map_err(|source| JournalError::Encode { what: "run config", source })?;
    check_row(&header.id, 0, core.len() + run.len())?;
    let exists: bool =
        conn.query_row("SELECT EXISTS (SELECT 1 FROM sessions WHERE id = ?1)", [&header.id], |r| r.get(0))?;
    if exists {
        return Err(JournalError::Duplicate(header.id.clone()));
    }
    conn.execute(
        "INSERT INTO sessions (id, created_at_ms, engine_version, core_config, run_config, parent_id, fork_seq)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            header.id,
            header.created_at_ms as i64,
            header.engine_version,
            core,
            run,
            header.parent.as_ref().map(|p| p.0.clone()),
            header.parent.as_ref().map(|p| p.1 as i64),
        ],
    )?;
    conn.execute("INSERT INTO session_numbers (id) VALUES (?1)", [&header.id])?;
    Ok(())
}

impl Journal {
    /// Writes one step durably: it is committed (with any deferred steps before it, in the same
    /// transaction) when this returns.
    pub fn append<'a>(&mut self, session: &str, step: impl Into<NewStep<'a>>) -> Result<(), JournalError> {
        let number = self.number(session)?;
        let alone = self.deferred.get() == 0;
        let step = step.into();
        self.in_group(|conn| insert_step(conn, &mut self.buf.borrow_mut(), number, session, &step))?;
        match self.commit() {
            // A step written alone leaves nothing open when its commit fails, as before groups.
            Err(e) if alone => {
                let _ = self.sql("ROLLBACK");
                self.deferred.set(0);
                Err(e)
            }
            done => done,
        }
    }

    /// Runs one statement without parameters, prepared once per connection: `BEGIN` and
    /// `COMMIT` run for every group, and parsing them anew cost more than a step's insert.
    fn sql(&self, sql: &str) -> Result<(), JournalError> {
        self.conn.prepare_cached(sql)?.execute([])?;
        Ok(())
    }

    /// Writes one step without committing it: it joins an open transaction shared with the
    /// steps deferred before it, committed by the next [`Journal::append`], [`Journal::commit`]
    /// or drop. For steps nothing outside the process can have seen the effect of yet (the
    /// driver defers streamed deltas and blocks): a crash loses these, never a step whose
    /// effects ran.
    pub fn append_deferred<'a>(&mut self, session: &str, step: impl Into<NewStep<'a>>) -> Result<(), JournalError> {
        let number = self.number(session)?;
        let step = step.into();
        self.in_group(|conn| insert_step(conn, &mut self.buf.borrow_mut(), number, session, &step))
    }

    /// The number `session`'s steps are stored under (cached for the session last written).
    pub(crate) fn number(&self, session: &str) -> Result<i64, JournalError> {
        if let Some((id, n)) = self.number.borrow().as_ref() {
            if id == session {
                return Ok(*n);
            }
        }
        let n = session_number(&self.conn, session)?.ok_or_else(|| JournalError::NoSuchSession(session.to_string()))?;
        *self.number.borrow_mut() = Some((session.to_string(), n));
        Ok(n)
    }

    /// Like [`Journal::append`], but the commit is synced to stable storage (`synchronous=FULL`)
    /// so a power loss cannot lose it either: for a step that guards a side effect (a write
    /// tool's start), whose loss would let a resume run the write twice.
    pub fn append_synced<'a>(&mut self, session: &str, step: impl Into<NewStep<'a>>) -> Result<(), JournalError> {
        self.commit()?;
        self.conn.pragma_update(None, "synchronous", "FULL")?;
        let written = self.append(session, step);
        self.conn.pragma_update(None, "synchronous", "NORMAL")?;
        written
    }

    /// Writes a step encoded elsewhere ([`crate::JournalWriter`]) into the open group, without
    /// committing it.
    pub(crate) fn append_encoded(&mut self, session: &str, step: &EncodedStep) -> Result<(), JournalError> {
        let number = self.number(session)?;
        self.in_group(|conn| step.insert(conn, number, session))
    }

    /// Writes a step encoded elsewhere alone and commits it synced, as
    /// [`Journal::append_synced`] does (the open group is committed first, unsynced).
    pub(crate) fn append_encoded_synced(&mut self, session: &str, step: &EncodedStep) -> Result<(), JournalError> {
        self.commit()?;
        self.conn.pragma_update(None, "synchronous", "FULL")?;
        let written = self.append_encoded(session, step).and_then(|()| match self.commit() {
            Err(e) => {
                let _ = self.sql("ROLLBACK");
                self.deferred.set(0);
                Err(e)
            }
            done => done,
        });
        self.conn.pragma_update(None, "synchronous", "NORMAL")?;
        written
    }

    /// Steps deferred and not committed yet.
    pub fn deferred(&self) -> usize {
        self.deferred.get()
    }

    /// Commits the deferred steps, if any.
    pub fn commit(&self) -> Result<(), JournalError> {
        if self.deferred.get() > 0 {
            self.sql("COMMIT")?;
            self.deferred.set(0);
        }
        Ok(())
    }

    /// Runs `write` inside the open group transaction, opening it first; a failure rolls the
    /// whole group back (its steps were never committed) and is returned.
    fn in_group(&self, write: impl FnOnce(&Connection) -> Result<(), JournalError>) -> Result<(), JournalError> {
        if self.deferred.get() == 0 {
            self.sql("BEGIN")?;
        }
        match write(&self.conn) {
            Ok(()) => {
                self.deferred.set(self.deferred.get() + 1);
                Ok(())
            }
            Err(e) => {
                let _ = self.sql("ROLLBACK");
                self.deferred.set(0);
                Err(e)
            }
        }
    }

    /// What session `id` was started with; replay, resume and fork start from it.
    pub fn header(&self, id: &str) -> Result<SessionHeader, JournalError> {
        let row = self
            .conn
            .query_row(
                "SELECT id, created_at_ms, engine_version, core_config, run_config, parent_id, fork_seq
                 FROM sessions WHERE id = ?1",
                [id],
                |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, i64>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, String>(3)?,
                        r.get::<_, String>(4)?,
                        r.get::<_, Option<String>>(5)?,
                        r.get::<_, Option<i64>>(6)?,
                    ))
                },
            )
            .optional()?
            .ok_or_else(|| JournalError::NoSuchSession(id.to_string()))?;
        let decode = |what, source| JournalError::Decode { session: id.to_string(), seq: 0, what, source };
        Ok(SessionHeader {
            id: row.0,
            created_at_ms: row.1 as u64,
            engine_version: row.2,
            core_config: serde_json::from_str(&row.3).map_err(|e| decode("core config", e))?,
            run_config: serde_json::from_str(&row.4).map_err(|e| decode("run config", e))?,
            parent: row.5.zip(row.6.map(|s| s as u64)),
        })
    }

    /// Every session in the journal, one summary each (`reloop sessions`).
    pub fn sessions(&self) -> Result<Vec<SessionSummary>, JournalError> {
        let mut stmt = self.conn.prepare(
            "SELECT s.id, s.created_at_ms, s.terminal_reason, s.parent_id, s.fork_seq,
                    (SELECT count(*) FROM steps st WHERE st.key >= n.n << 32 AND st.key < (n.n + 1) << 32)
             FROM sessions s LEFT JOIN session_numbers n ON n.id = s.id ORDER BY s.created_at_ms, s.rowid",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(SessionSummary {
                id: r.get(0)?,
                created_at_ms: r.get::<_, i64>(1)? as u64,
                terminal_reason: r.get(2)?,
                parent: r.get::<_, Option<String>>(3)?.zip(r.get::<_, Option<i64>>(4)?.map(|s| s as u64)),
                steps: r.get::<_, i64>(5)? as u64,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Every step of a session, in order.
    pub fn steps(&self, id: &str) -> Result<Vec<StepRecord>, JournalError> {
        let mut out = Vec::new();
        self.visit_steps(id, |record| {
            out.push(record);
            true
        })?;
        Ok(out)
    }

    /// Bytes the database occupies (pages in use), for benchmarks.
    pub fn size_bytes(&self) -> Result<u64, JournalError> {
        let pages: i64 = self.conn.pragma_query_value(None, "page_count", |r| r.get(0))?;
        let free: i64 = self.conn.pragma_query_value(None, "freelist_count", |r| r.get(0))?;
        let size: i64 = self.conn.pragma_query_value(None, "page_size", |r| r.get(0))?;
        Ok(((pages - free) * size) as u64)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::record::{ENGINE_VERSION, MAX_ROW_BYTES};
    use reloop_core::{Config, ContentBlock, Effect, Event};

    /// A session header for tests (the writer's too).
    pub(crate) fn header(id: &str) -> SessionHeader {
        SessionHeader {
            id: id.into(),
            created_at_ms: 1,
            engine_version: ENGINE_VERSION.into(),
            core_config: Config::default().with_max_turns(Some(3)),
            run_config: serde_json::json!({"model": "scripted"}),
            parent: None,
        }
    }

    #[test]
    fn processes_creating_the_same_new_journal_at_once_all_open_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.db");
        let opened: Vec<_> = (0..8)
            .map(|_| {
                let path = path.clone();
                std::thread::spawn(move || Journal::create_or_open(&path).map(|_| ()))
            })
            .collect();
        for handle in opened {
            handle.join().unwrap().expect("every opener sees one journal, created once");
        }
        assert!(Journal::open_existing(&path).unwrap().sessions().unwrap().is_empty());
    }

    /// Step `seq` of a test session.
    pub(crate) fn step(seq: u64) -> StepRecord {
        StepRecord {
            seq,
            at_ms: 10,
            event: Event::user_input(vec![ContentBlock::text("hi")]),
            from_phase: "idle".into(),
            to_phase: "awaiting_model".into(),
            turn_before: 1,
            turn_after: 1,
            reason: None,
            ignored: None,
            effects: serde_json::to_value(vec![Effect::from(reloop_core::Command::CancelModel)]).unwrap(),
            digest: 0xdead_beef,
        }
    }

    #[test]
    fn steps_round_trip_and_sessions_resolve() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested/journal.db");
        let mut j = Journal::create_or_open(&path).unwrap();
        j.create_session(&header("abc123")).unwrap();
        j.create_session(&header("abd456")).unwrap();
        j.append("abc123", &step(1)).unwrap();
        assert_eq!(j.steps("abc123").unwrap(), vec![step(1)]);
        assert_eq!(j.resolve("abc").unwrap(), "abc123");
        assert!(matches!(j.resolve("ab"), Err(JournalError::AmbiguousSession { count: 2, .. })));
        assert!(matches!(j.resolve("zz"), Err(JournalError::NoSuchSession(_))));
        assert_eq!(j.resolve("last").unwrap(), "abd456");
        assert_eq!(j.header("abc123").unwrap(), header("abc123"));
        drop(j);
        let j = Journal::open_existing(&path).unwrap();
        assert_eq!(j.sessions().unwrap().len(), 2);
    }

    #[test]
    fn a_foreign_file_is_refused_and_left_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notes.db");
        std::fs::write(&path, b"these are my notes, not a database").unwrap();
        let err = Journal::create_or_open(&path).unwrap_err();
        assert!(err.to_string().contains("is not a reloop journal"), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), b"these are my notes, not a database");

        let other = dir.path().join("other.db");
        let conn = Connection::open(&other).unwrap();
        conn.execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);").unwrap();
        drop(conn);
        let err = Journal::create_or_open(&other).unwrap_err();
        assert!(matches!(err, JournalError::Foreign { .. }), "{err}");
    }

    #[test]
    fn a_v1_journal_opens_and_migrates_forward_keeping_its_sessions() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v1.db");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(crate::schema::V1_SCHEMA).unwrap();
        conn.pragma_update(None, "application_id", APPLICATION_ID).unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
        conn.execute(
            "INSERT INTO sessions (id, created_at_ms, engine_version, core_config, run_config)
             VALUES ('old1', 5, '0.0.9', '{\"model\": \"m\"}', '{}')",
            [],
        )
        .unwrap();
        drop(conn);

        let mut j = Journal::open_existing(&path).unwrap();
        let version: i64 = j.conn.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        let old = j.header("old1").unwrap();
        assert_eq!(old.engine_version, "0.0.9");
        assert_eq!(old.core_config.flags, reloop_core::Flags::baseline(), "pre-flag journals get the baseline");
        j.lock_session("old1").unwrap();
        assert_eq!(j.writer("old1").unwrap(), Some(std::process::id()));
        j.append("old1", &step(1)).unwrap();
        drop(j);
        let j = Journal::open_existing(&path).unwrap();
        assert_eq!(j.writer("old1").unwrap(), None, "dropping the writer releases the session");
        assert_eq!(j.steps("old1").unwrap().len(), 1);
    }

    #[test]
    fn a_dead_writers_lock_is_taken_over_and_a_dump_round_trips() {
        let mut j = Journal::in_memory().unwrap();
        j.create_session(&header("s1")).unwrap();
        j.append("s1", &step(1)).unwrap();
        // A writer that crashed: its pid no longer exists.
        j.conn.execute("UPDATE session_locks SET pid = 2147483000 WHERE session_id = 's1'", []).unwrap();
        assert_eq!(j.writer("s1").unwrap(), None);
        j.locked.borrow_mut().clear();
        j.lock_session("s1").unwrap();
        assert_eq!(j.writer("s1").unwrap(), Some(std::process::id()));

        let dump = j.dump_session("s1").unwrap();
        let text = dump.to_json().unwrap();
        let mut other = Journal::in_memory().unwrap();
        other.load_session(&crate::SessionDump::from_json(&text).unwrap()).unwrap();
        assert_eq!(other.header("s1").unwrap(), j.header("s1").unwrap());
        assert_eq!(other.steps("s1").unwrap(), j.steps("s1").unwrap());
        assert!(matches!(other.load_session(&dump), Err(JournalError::Duplicate(_))));
    }

    #[test]
    fn a_step_over_the_row_cap_is_refused_and_nothing_is_written() {
        let mut j = Journal::in_memory().unwrap();
        j.create_session(&header("s1")).unwrap();
        j.append("s1", &step(1)).unwrap();
        let mut big = step(2);
        big.event = Event::user_input(vec![ContentBlock::text("x".repeat(MAX_ROW_BYTES))]);
        let err = j.append("s1", &big).unwrap_err();
        assert!(
            matches!(err, JournalError::RowTooLarge { seq: 2, limit: MAX_ROW_BYTES, bytes, .. } if bytes > MAX_ROW_BYTES),
            "{err}"
        );
        assert!(err.to_string().contains("more than one journal row may hold"), "{err}");
        assert_eq!(j.steps("s1").unwrap(), vec![step(1)], "the refused step left no trace");
        // Just under the cap is fine: the cap counts the event, the effects and the reason.
        let mut fits = step(2);
        let overhead =
            serde_json::to_string(&fits.event).unwrap().len() - 2 + serde_json::to_string(&fits.effects).unwrap().len();
        fits.event = Event::user_input(vec![ContentBlock::text("x".repeat(MAX_ROW_BYTES - overhead))]);
        j.append("s1", &fits).unwrap();
        assert_eq!(j.steps("s1").unwrap().len(), 2);
    }

    #[test]
    fn a_header_over_the_row_cap_is_refused() {
        let j = Journal::in_memory().unwrap();
        let mut h = header("big");
        h.run_config = serde_json::json!({"system_prompt": "y".repeat(MAX_ROW_BYTES)});
        assert!(matches!(j.create_session(&h), Err(JournalError::RowTooLarge { seq: 0, .. })));
        assert!(matches!(j.header("big"), Err(JournalError::NoSuchSession(_))));
    }

    #[test]
    fn a_missing_journal_is_an_error_for_readers() {
        let err = Journal::open_existing(Path::new("/nonexistent/reloop.db")).unwrap_err();
        assert!(err.to_string().contains("no journal at"));
    }
}
