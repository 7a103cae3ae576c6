//! # reloop-journal-pg: the journal in a PostgreSQL database many machines share
//!
//! The same contract as the SQLite journal ([`reloop_journal::JournalBackend`]), for a fleet:
//! * An append returns once its transaction is committed (PostgreSQL's default
//!   `synchronous_commit = on`: flushed to the server's WAL), so every append is as durable as
//!   SQLite's synced one.
//! * One writer per session across machines: a lease row per session with an epoch (fencing
//!   token). Every write renews the lease *by its epoch* in the same transaction, so a writer that
//!   was paused or partitioned while another took its expired lease over writes nothing more.
//!   A lease expires [`LeaseTimes::ttl`] (30 s) after its last renewal; a background heartbeat
//!   renews held leases every [`LeaseTimes::heartbeat`] (10 s) while the process lives.
//! * Payloads of at least [`BLOB_MIN_BYTES`] are stored once, content-addressed, in `blobs`;
//!   a fork references its parent's steps instead of copying them.
//!
//! The connection is owned by a thread of its own and the journal talks to it over channels:
//! the synchronous `postgres` client runs its own runtime, which must not be entered from a
//! tokio runtime thread, and the driver calls the journal from tokio tasks.
//!
//! The schema is documented in `docs/journal.md` for people who query it with `psql`.
//!
//! The public surface is small: [`PgJournal`], used through [`reloop_journal::JournalBackend`]
//! like any journal, and [`LeaseTimes`] to tune its leases; [`PgJournal::queue_entries`] reads
//! the work queue for a person ([`QueueEntry`]); [`SCHEMA_VERSION`] and
//! [`BLOB_MIN_BYTES`] are public so that tests and tools can check what a database holds.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod conn;
mod listing;
mod queue;
mod queue_view;
mod schema;

use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use reloop_journal::{
    Fill, JournalBackend, JournalError, Reopen, SessionHeader, SessionOverview, SessionSummary, StepRecord, Subagent,
    Writer,
};
use serde_json::Value;

pub use conn::BLOB_MIN_BYTES;
pub use queue_view::{QueueEntry, QueueState, QueueSummary};
pub use schema::SCHEMA_VERSION;

use conn::{database_error, Conn, PAGE};

/// How long a writer's lease lasts without renewal, and how often it is renewed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseTimes {
    /// A lease not renewed for this long may be taken over (default 30 s): long enough that a
    /// busy database or a GC pause does not lose it, short enough that a crashed writer's
    /// sessions resume within a minute.
    pub ttl: Duration,
    /// How often held leases are renewed while the connection is idle (default 10 s, a third of
    /// the ttl, so two missed beats still keep the lease). `None`: only appends renew.
    pub heartbeat: Option<Duration>,
}

impl Default for LeaseTimes {
    fn default() -> Self {
        LeaseTimes { ttl: Duration::from_secs(30), heartbeat: Some(Duration::from_secs(10)) }
    }
}

type Job = Box<dyn FnOnce(&mut Conn) + Send>;

/// A journal in a PostgreSQL database.
pub struct PgJournal {
    jobs: Option<mpsc::Sender<Job>>,
    thread: Option<JoinHandle<()>>,
    place: String,
    holder: String,
    /// The address and lease times it was opened with, to open another connection alike.
    url: String,
    times: LeaseTimes,
    /// Deferred steps, by session, in order: written in one transaction by the next commit.
    deferred: Vec<(String, StepRecord)>,
}

impl std::fmt::Debug for PgJournal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgJournal").field("place", &self.place).field("holder", &self.holder).finish()
    }
}

/// Writers of this process so far, so two journals of one process are two holders.
static WRITERS: AtomicU64 = AtomicU64::new(0);

/// `host:pid:n`: who holds a lease, readable by a person looking at `reloop.leases`.
fn holder_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_string());
    format!("{host}:{}:{}", std::process::id(), WRITERS.fetch_add(1, Ordering::Relaxed))
}

impl PgJournal {
    /// Connects to the database at `url` (`postgres://user@host/db`, or `host=/run/pg dbname=x`),
    /// creating or migrating the schema; a database a newer reloop wrote is refused.
    pub fn connect(url: &str, times: LeaseTimes) -> Result<Self, JournalError> {
        let mut config = postgres::Config::from_str(url)
            .map_err(|e| JournalError::Database { place: "postgres".into(), detail: format!("bad address: {e}") })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(10));
        }
        config.application_name("reloop");
        // A writer cut off from the database for longer than its lease has lost it anyway: a
        // dead peer ends the call then instead of hanging it (TCP only; sockets fail at once).
        config.keepalives(true).keepalives_idle(Duration::from_secs(10));
        #[cfg(target_os = "linux")]
        if config.get_tcp_user_timeout().is_none() {
            config.tcp_user_timeout(times.ttl);
        }
        let place = describe(&config);
        let holder = holder_name();
        let (ready_tx, ready_rx) = mpsc::sync_channel::<Result<(), JournalError>>(1);
        let (jobs, inbox) = mpsc::channel::<Job>();
        let (thread_place, thread_holder) = (place.clone(), holder.clone());
        let thread = std::thread::Builder::new()
            .name("reloop-journal-pg".into())
            .spawn(move || {
                let mut client = match config.connect(postgres::NoTls) {
                    Ok(client) => client,
                    Err(e) => {
                        let _ = ready_tx.send(Err(database_error(&thread_place, &e)));
                        return;
                    }
                };
                if let Err(e) = schema::migrate(&mut client, &thread_place) {
                    let _ = ready_tx.send(Err(e));
                    return;
                }
                let _ = ready_tx.send(Ok(()));
                serve(Conn::new(client, thread_place, thread_holder, times.ttl), &inbox, times.heartbeat);
            })
            .map_err(|e| JournalError::Database { place: place.clone(), detail: format!("cannot start: {e}") })?;
        let ready = ready_rx.recv().unwrap_or_else(|_| {
            Err(JournalError::Database { place: place.clone(), detail: "the connection thread ended".into() })
        });
        let journal = PgJournal {
            jobs: Some(jobs),
            thread: Some(thread),
            place,
            holder,
            url: url.to_string(),
            times,
            deferred: Vec::new(),
        };
        ready.map(|()| journal)
    }

    /// The name this journal's leases are held under (`host:pid:n`).
    pub fn holder(&self) -> &str {
        &self.holder
    }

    /// The process its leases are held by (`host:pid`): every journal a worker opens shares it,
    /// so its logs and the queue's holders can be matched to the worker.
    pub fn worker_id(&self) -> &str {
        self.holder.rsplit_once(':').map_or(&self.holder, |(process, _)| process)
    }

    /// Runs `job` on the connection's thread and waits for its answer.
    fn call<R: Send + 'static>(
        &self,
        job: impl FnOnce(&mut Conn) -> Result<R, JournalError> + Send + 'static,
    ) -> Result<R, JournalError> {
        let gone =
            || JournalError::Database { place: self.place.clone(), detail: "the connection thread ended".into() };
        let (answer, reply) = mpsc::sync_channel(1);
        let jobs = self.jobs.as_ref().ok_or_else(gone)?;
        jobs.send(Box::new(move |conn: &mut Conn| {
            let _ = answer.send(job(conn));
        }))
        .map_err(|_| gone())?;
        reply.recv().map_err(|_| gone())?
    }

    /// Writes the deferred steps and `then` (if any) of one session per transaction, in order.
    fn flush(&mut self, then: Option<(&str, &StepRecord)>) -> Result<(), JournalError> {
        let mut groups: Vec<(String, Vec<StepRecord>)> = Vec::new();
        let pending = std::mem::take(&mut self.deferred);
        let then = then.map(|(s, step)| (s.to_string(), step.clone()));
        for (session, step) in pending.into_iter().chain(then) {
            match groups.last_mut() {
                Some((s, steps)) if *s == session => steps.push(step),
                _ => groups.push((session, vec![step])),
            }
        }
        if groups.is_empty() {
            return Ok(());
        }
        self.call(move |conn| groups.iter().try_for_each(|(session, steps)| conn.append(session, steps)))
    }
}

/// The connection's loop: jobs as they come, and a heartbeat for held leases when one is due.
fn serve(mut conn: Conn, inbox: &mpsc::Receiver<Job>, heartbeat: Option<Duration>) {
    let mut next_beat = heartbeat.map(|h| Instant::now() + h);
    loop {
        let wait = next_beat.map_or(Duration::from_secs(3600), |at| at.saturating_duration_since(Instant::now()));
        match inbox.recv_timeout(wait) {
            Ok(job) => job(&mut conn),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return,
        }
        if let (Some(at), Some(every)) = (next_beat, heartbeat) {
            if Instant::now() >= at {
                // A failed beat is retried at the next; the lease's epoch guards the rest.
                if let Err(e) = conn.heartbeat() {
                    tracing::warn!(target: "reloop::lease", event = "heartbeat_failed", holder = conn.holder.as_str(),
                        error = %e, "heartbeat failed; retried at the next");
                }
                next_beat = Some(Instant::now() + every);
            }
        }
    }
}

/// The database as messages name it: user, host or socket, database; never the password.
fn describe(config: &postgres::Config) -> String {
    let host = match config.get_hosts().first() {
        Some(postgres::config::Host::Tcp(h)) => h.clone(),
        #[cfg(unix)]
        Some(postgres::config::Host::Unix(p)) => p.display().to_string(),
        None => "localhost".to_string(),
    };
    format!("postgres://{}@{host}/{}", config.get_user().unwrap_or_default(), config.get_dbname().unwrap_or_default())
}

impl Drop for PgJournal {
    fn drop(&mut self) {
        // What was deferred was journaled as far as the writer knows: committed, not lost.
        let _ = self.flush(None);
        let _ = self.call(|conn| {
            let held: Vec<String> = conn.leases.keys().cloned().collect();
            held.iter().try_for_each(|s| conn.release(s))
        });
        self.jobs = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl JournalBackend for PgJournal {
    fn reopener(&self) -> Reopen {
        let (url, times) = (self.url.clone(), self.times);
        std::sync::Arc::new(move || Ok(Box::new(PgJournal::connect(&url, times)?) as Box<dyn JournalBackend + Send>))
    }

    fn location(&self) -> String {
        self.place.clone()
    }

    fn create_session_from(
        &mut self,
        header: &SessionHeader,
        writer: Writer,
        fill: &mut Fill<'_>,
    ) -> Result<(), JournalError> {
        // The transaction lives on the connection's thread, one job at a time: the steps are
        // gathered here first, then written by one job.
        let mut steps = Vec::new();
        fill(&mut |step| {
            steps.push(step.clone());
            Ok(())
        })?;
        self.flush(None)?;
        let header = header.clone();
        self.call(move |conn| conn.create_session(&header, &steps, writer == Writer::Take))
    }

    fn append(&mut self, session: &str, step: &StepRecord) -> Result<(), JournalError> {
        self.flush(Some((session, step)))
    }

    fn append_deferred(&mut self, session: &str, step: &StepRecord) -> Result<(), JournalError> {
        conn::check(session, step)?;
        self.deferred.push((session.to_string(), step.clone()));
        Ok(())
    }

    fn append_synced(&mut self, session: &str, step: &StepRecord) -> Result<(), JournalError> {
        // Every commit is flushed to the server's WAL before it returns (synchronous_commit).
        self.flush(Some((session, step)))
    }

    fn deferred(&self) -> usize {
        self.deferred.len()
    }

    fn commit(&mut self) -> Result<(), JournalError> {
        self.flush(None)
    }

    fn lock_session(&mut self, session: &str) -> Result<(), JournalError> {
        let session = session.to_string();
        self.call(move |conn| conn.take(&session))
    }

    fn release_session(&mut self, session: &str) -> Result<(), JournalError> {
        self.flush(None)?;
        let session = session.to_string();
        self.call(move |conn| conn.release(&session))
    }

    fn live_writer(&self, session: &str) -> Result<Option<String>, JournalError> {
        let session = session.to_string();
        self.call(move |conn| conn.live_writer(&session))
    }

    fn header(&self, id: &str) -> Result<SessionHeader, JournalError> {
        let id = id.to_string();
        self.call(move |conn| conn.header(&id))
    }

    fn resolve(&self, selector: &str) -> Result<String, JournalError> {
        let selector = selector.to_string();
        self.call(move |conn| conn.resolve(&selector))
    }

    fn sessions(&self) -> Result<Vec<SessionSummary>, JournalError> {
        self.call(|conn| conn.sessions())
    }

    fn imports_of(&self, file: &str) -> Result<Vec<(String, Value)>, JournalError> {
        let file = file.to_string();
        self.call(move |conn| conn.imports_of(&file))
    }

    fn overview(&self) -> Result<Vec<SessionOverview>, JournalError> {
        self.call(|conn| conn.overview())
    }

    fn subagents_of(&self, parent: &str) -> Result<Vec<Subagent>, JournalError> {
        let parent = parent.to_string();
        self.call(move |conn| conn.subagents_of(&parent))
    }

    fn cleared_from(&self, session: &str) -> Result<Vec<String>, JournalError> {
        let session = session.to_string();
        self.call(move |conn| conn.cleared_from(&session))
    }

    fn enqueue(&mut self, session: &str) -> Result<(), JournalError> {
        self.flush(None)?;
        let session = session.to_string();
        self.call(move |conn| {
            conn.enqueue(&session)?;
            conn.release(&session)
        })
    }

    fn claim(&mut self) -> Result<Option<String>, JournalError> {
        self.call(|conn| conn.claim())
    }

    fn unclaim(&mut self, session: &str) -> Result<(), JournalError> {
        let session = session.to_string();
        self.call(move |conn| conn.unclaim(&session))
    }

    fn finish_queued(&mut self, session: &str, outcome: &str) -> Result<(), JournalError> {
        let (session, outcome) = (session.to_string(), outcome.to_string());
        self.call(move |conn| conn.finish_queued(&session, &outcome))
    }

    fn visit_steps_from(
        &self,
        id: &str,
        from: u64,
        visit: &mut dyn FnMut(StepRecord) -> Result<bool, JournalError>,
    ) -> Result<usize, JournalError> {
        let owned = id.to_string();
        let segments = self.call(move |conn| conn.segments(&owned))?;
        // Each segment holds the steps after its `after` up to its `upto`; those before `from`
        // are not read.
        let skip = i64::try_from(from).unwrap_or(i64::MAX).saturating_sub(1);
        let mut handed = 0;
        for seg in segments.into_iter().filter(|seg| seg.upto > skip) {
            let mut after = seg.after.max(skip);
            loop {
                let (session, upto) = (seg.session.clone(), seg.upto);
                let page = self.call(move |conn| conn.page(&session, after, upto, PAGE))?;
                let Some(last) = page.last() else { break };
                after = last.seq as i64;
                let full = page.len() as i64 == PAGE;
                for step in page {
                    handed += 1;
                    if !visit(step)? {
                        return Ok(handed);
                    }
                }
                if !full {
                    break;
                }
            }
        }
        Ok(handed)
    }
}
