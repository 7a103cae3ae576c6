//! One session's journal written on a thread of its own: the loop encodes each step
//! ([`EncodedStep`]) and hands it over, and SQLite's insert and commit run beside the loop
//! instead of inside its step. The write-ahead rule moves with them to where it belongs: the
//! loop waits for a step's commit ([`JournalWriter::wait_committed`]) only before an effect
//! that leaves the process, and shows a committed step's outputs only once
//! [`JournalWriter::committed`] has passed it.
//!
//! Commits are grouped: the writer commits after it has written everything queued, so a loop
//! that steps faster than one commit shares a commit among many steps. Deferred steps (streamed
//! text) wait for the next committed step, or [`GROUP_COMMIT_INTERVAL`]. A synced step (a write
//! tool's start) is committed with `synchronous=FULL`, alone.

use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::codec::EncodedStep;
use crate::error::JournalError;
use crate::record::{NewStep, SessionHeader, StepRecord};
use crate::store::Journal;

/// The longest a deferred step waits for the commit of its group: a crash loses at most this
/// much of a response's streamed text (never a step whose effects were seen).
pub const GROUP_COMMIT_INTERVAL: Duration = Duration::from_millis(100);

/// Hand-overs queued for the writer before the loop waits for it: a disk that cannot keep up
/// slows the loop down instead of letting the queue grow without bound.
const QUEUE: usize = 1024;

/// Bytes of encoded steps queued for the writer before the loop waits for it. A hand-over's
/// count alone does not bound memory (one holds up to [`BATCH`] steps, and a step up to
/// [`crate::MAX_ROW_BYTES`]): with a stalled disk, the loop holds at most this much queued
/// (or one larger hand-over alone) and a quarter of it gathered for the next hand-over, plus
/// one step, whatever its steps' sizes. Large enough that a writer keeping pace never makes
/// the loop wait.
pub const QUEUE_BYTES: usize = 4 << 20;

/// A step's buffer larger than this is not kept for reuse once written: one long tool output
/// would otherwise stay allocated for the session's life.
const SPARE_MAX: usize = 64 << 10;

/// How a step is written, by what its effects can show outside the process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// Joins the open group; committed with the next committed step or after
    /// [`GROUP_COMMIT_INTERVAL`].
    Deferred,
    /// Committed as soon as the writer has written what is queued before it.
    Committed,
    /// Committed and synced to stable storage before anything after it: a power loss cannot
    /// lose it either.
    Synced,
}

enum Job {
    /// A new session's header with its first step, in one transaction.
    Create(Box<(SessionHeader, StepRecord)>),
    /// A session that ends having journaled no step: its header alone.
    CreateBare(Box<SessionHeader>),
    Step(EncodedStep, Durability),
    /// Steps handed over together (one wake-up of the writer); `true`: commit them now, deferred
    /// ones included (their group's time is up).
    Batch(Vec<Job>, bool),
}

/// Steps the loop gathers before it hands them over anyway.
const BATCH: usize = 256;

/// What the writer has done, shared with the loop.
#[derive(Default)]
struct Progress {
    /// The last step written (committed or deferred).
    written: u64,
    /// The last step committed: every step up to it is durable against a process crash.
    committed: u64,
    /// Bytes handed over and not yet written ([`QUEUE_BYTES`]).
    queued_bytes: usize,
    /// The writer's failure; it stops writing at the first.
    failed: Option<String>,
    /// The failure itself, for the first caller to see it.
    error: Option<JournalError>,
    stopped: bool,
}

struct Shared {
    progress: Mutex<Progress>,
    changed: Condvar,
    /// Called after every commit: the loop's wake-up for outputs waiting on it.
    on_commit: Box<dyn Fn() + Send + Sync>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Progress> {
        self.progress.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A session's journal on its own thread. Dropping it commits what is queued and hands the
/// journal back to be dropped on the writer thread (which releases the session's lock).
pub struct JournalWriter {
    session: String,
    /// Steps not handed over yet: the loop hands them over in one go before it waits for a
    /// commit or for its next event, so a fast loop wakes the writer once per wait, not per step.
    pending: Vec<Job>,
    /// The encoded size of the pending steps.
    pending_bytes: usize,
    /// Whether a pending step is to be committed (not only deferred).
    pending_commit: bool,
    /// When the oldest pending deferred step was written.
    pending_since: Option<Instant>,
    /// Each hand-over with its bytes, which the writer gives back once written.
    jobs: Option<SyncSender<(Job, usize)>>,
    /// The most bytes handed over and not yet written ([`QUEUE_BYTES`]).
    queue_bytes: usize,
    spare: Receiver<Vec<u8>>,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl JournalWriter {
    /// Moves `journal` to a new thread that writes `session`'s steps; `on_commit` runs on that
    /// thread after each commit.
    pub fn spawn(
        journal: Journal,
        session: &str,
        on_commit: impl Fn() + Send + Sync + 'static,
    ) -> Result<Self, JournalError> {
        Self::spawn_grouping(journal, session, GROUP_COMMIT_INTERVAL, QUEUE_BYTES, on_commit)
    }

    /// [`JournalWriter::spawn`] with deferred steps grouped for `interval` and at most
    /// `queue_bytes` queued.
    fn spawn_grouping(
        journal: Journal,
        session: &str,
        interval: Duration,
        queue_bytes: usize,
        on_commit: impl Fn() + Send + Sync + 'static,
    ) -> Result<Self, JournalError> {
        let (jobs, queue) = mpsc::sync_channel(QUEUE);
        let (give_back, spare) = mpsc::channel();
        let shared = Arc::new(Shared {
            progress: Mutex::new(Progress::default()),
            changed: Condvar::new(),
            on_commit: Box::new(on_commit),
        });
        let writer = Writer { journal, session: session.to_string(), interval, shared: shared.clone(), give_back };
        let thread = std::thread::Builder::new()
            .name("reloop-journal".into())
            .spawn(move || {
                // However the writer ends, even by a panic, the loop's waits end with it.
                let _stopped = Stopped(writer.shared.clone());
                writer.run(queue)
            })
            .map_err(|e| JournalError::Database { place: "journal writer".into(), detail: e.to_string() })?;
        Ok(JournalWriter {
            session: session.to_string(),
            pending: Vec::new(),
            pending_bytes: 0,
            pending_commit: false,
            pending_since: None,
            jobs: Some(jobs),
            queue_bytes,
            spare,
            shared,
            thread: Some(thread),
        })
    }

    /// Journals the session's header with its first step.
    pub fn create(&mut self, header: SessionHeader, first: StepRecord) -> Result<(), JournalError> {
        self.flush(false)?;
        self.send(Job::Create(Box::new((header, first))), 0)
    }

    /// Journals the session's header with no step (a session that ended before its first); it
    /// is written before the writer stops.
    pub fn create_bare(&mut self, header: SessionHeader) -> Result<(), JournalError> {
        self.flush(false)?;
        self.send(Job::CreateBare(Box::new(header)), 0)
    }

    /// Encodes `step` here and queues it; returns at once. It reaches the writer with the next
    /// [`JournalWriter::flush`] (or wait), or once `BATCH` steps are pending.
    pub fn append(&mut self, step: &NewStep<'_>, durability: Durability) -> Result<(), JournalError> {
        // A writer that failed says so at once, not only at the next wait.
        if let Some(e) = failure(&mut self.shared.lock()) {
            return Err(e);
        }
        let buf = self.spare.try_recv().unwrap_or_default();
        let encoded = EncodedStep::encode(step, &self.session, buf)?;
        if durability == Durability::Deferred {
            self.pending_since.get_or_insert_with(Instant::now);
        } else {
            self.pending_commit = true;
        }
        self.pending_bytes += encoded.len();
        self.pending.push(Job::Step(encoded, durability));
        // Gathered steps count toward the bound too: handed over while they fit in it.
        if self.pending.len() >= BATCH || self.pending_bytes >= self.queue_bytes / 4 {
            self.flush(false)?;
        }
        Ok(())
    }

    /// Hands the pending steps to the writer, to be committed now if `commit` (deferred ones
    /// included), else as their durability says.
    pub fn flush(&mut self, commit: bool) -> Result<(), JournalError> {
        if self.pending.is_empty() && !commit {
            return Ok(());
        }
        let jobs = std::mem::take(&mut self.pending);
        let bytes = std::mem::take(&mut self.pending_bytes);
        self.pending_commit = false;
        self.pending_since = None;
        self.send(Job::Batch(jobs, commit), bytes)
    }

    /// Before the loop waits for its next event: hands over pending steps that are to be
    /// committed (deferred ones alone wait for [`JournalWriter::group_since`]'s deadline).
    pub fn flush_before_idle(&mut self) -> Result<(), JournalError> {
        if self.pending_commit {
            self.flush(false)?;
        }
        Ok(())
    }

    /// When the oldest deferred step still held here was written: [`GROUP_COMMIT_INTERVAL`]
    /// after it, the loop calls `flush(true)`.
    pub fn group_since(&self) -> Option<Instant> {
        self.pending_since
    }

    /// The last step committed.
    pub fn committed(&self) -> u64 {
        self.shared.lock().committed
    }

    /// Waits until step `seq` is committed, or the writer failed.
    pub fn wait_committed(&mut self, seq: u64) -> Result<(), JournalError> {
        self.wait(|p| p.committed >= seq)
    }

    /// Waits until step `seq` is written (a deferred step: inserted, not committed yet): tests
    /// look between the two.
    #[cfg(test)]
    fn wait_written(&mut self, seq: u64) -> Result<(), JournalError> {
        self.wait(|p| p.written >= seq)
    }

    fn wait(&mut self, done: impl Fn(&Progress) -> bool) -> Result<(), JournalError> {
        self.flush(false)?;
        let mut progress = self.shared.lock();
        loop {
            if let Some(e) = failure(&mut progress) {
                return Err(e);
            }
            if done(&progress) {
                return Ok(());
            }
            if progress.stopped {
                return Err(JournalError::Database {
                    place: "journal writer".into(),
                    detail: "the writer stopped before the step was written".into(),
                });
            }
            progress = self.shared.changed.wait(progress).unwrap_or_else(|poisoned| poisoned.into_inner());
        }
    }

    /// Hands `job` (`bytes` of encoded steps) to the writer, once the queue has room for its
    /// bytes: a job alone in the queue always has, however large.
    fn send(&mut self, job: Job, bytes: usize) -> Result<(), JournalError> {
        let mut progress = self.shared.lock();
        loop {
            if let Some(e) = failure(&mut progress) {
                return Err(e);
            }
            let fits = progress.queued_bytes == 0 || progress.queued_bytes.saturating_add(bytes) <= self.queue_bytes;
            // A stopped writer frees nothing more: the send below reports it.
            if fits || progress.stopped {
                progress.queued_bytes = progress.queued_bytes.saturating_add(bytes);
                break;
            }
            progress = self.shared.changed.wait(progress).unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        drop(progress);
        let sent = self.jobs.as_ref().map(|jobs| jobs.send((job, bytes)).is_ok()).unwrap_or(false);
        if sent {
            return Ok(());
        }
        Err(failure(&mut self.shared.lock()).unwrap_or_else(|| JournalError::Database {
            place: "journal writer".into(),
            detail: "the writer is no longer running".into(),
        }))
    }
}

/// The writer's failure: the error itself the first time it is asked for, its text after.
fn failure(progress: &mut Progress) -> Option<JournalError> {
    if let Some(e) = progress.error.take() {
        return Some(e);
    }
    progress
        .failed
        .as_ref()
        .map(|detail| JournalError::Database { place: "journal writer".into(), detail: detail.clone() })
}

impl Drop for JournalWriter {
    fn drop(&mut self) {
        // Closing the queue tells the writer to commit what it has and stop.
        let _ = self.flush(false);
        self.jobs = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Marks the writer stopped when its thread ends, however it ends: a loop waiting for a commit
/// then gets an error instead of waiting forever.
struct Stopped(Arc<Shared>);

impl Drop for Stopped {
    fn drop(&mut self) {
        let mut progress = self.0.lock();
        if !progress.stopped {
            progress.stopped = true;
            if progress.failed.is_none() {
                progress.failed = Some("the journal's writer thread stopped unexpectedly".into());
            }
        }
        drop(progress);
        self.0.changed.notify_all();
    }
}

/// The writer thread's side.
struct Writer {
    journal: Journal,
    session: String,
    /// How long deferred steps wait for a commit ([`GROUP_COMMIT_INTERVAL`]).
    interval: Duration,
    shared: Arc<Shared>,
    give_back: mpsc::Sender<Vec<u8>>,
}

impl Writer {
    fn run(mut self, queue: Receiver<(Job, usize)>) {
        let mut group_since: Option<Instant> = None;
        loop {
            let next = match group_since {
                None => queue.recv().map_err(|_| RecvTimeoutError::Disconnected),
                Some(since) => queue.recv_timeout(self.interval.saturating_sub(since.elapsed())),
            };
            let first = match next {
                Ok(job) => Some(job),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => break,
            };
            // Everything queued by now is written before the commit it shares.
            let (mut to_commit, mut written, mut bytes) = (false, None, 0);
            for (job, size) in first.into_iter().chain(std::iter::from_fn(|| queue.try_recv().ok())) {
                match self.write(job, &mut to_commit) {
                    Ok(seq) => written = seq.or(written),
                    Err(e) => return self.fail(e),
                }
                bytes += size;
            }
            // Written steps leave memory (their rows are SQLite's now): the loop may hand over more.
            if bytes > 0 {
                let mut progress = self.shared.lock();
                progress.queued_bytes = progress.queued_bytes.saturating_sub(bytes);
                drop(progress);
                self.shared.changed.notify_all();
            }
            if group_since.is_none() && self.journal.deferred() > 0 {
                group_since = Some(Instant::now());
            }
            let due = group_since.is_some_and(|since| since.elapsed() >= self.interval);
            if to_commit || due {
                if let Err(e) = self.journal.commit() {
                    return self.fail(e);
                }
            }
            if self.journal.deferred() == 0 {
                group_since = None;
            }
            self.progressed(written, self.journal.deferred() == 0);
        }
        if let Err(e) = self.journal.commit() {
            return self.fail(e);
        }
        self.progressed(None, true);
        self.stop();
    }

    /// Writes one job; returns the last step it wrote.
    fn write(&mut self, job: Job, to_commit: &mut bool) -> Result<Option<u64>, JournalError> {
        match job {
            Job::Batch(jobs, commit) => {
                let mut last = None;
                for job in jobs {
                    last = self.write(job, to_commit)?.or(last);
                }
                *to_commit |= commit;
                Ok(last)
            }
            Job::CreateBare(header) => {
                self.journal.create_session_with_steps(&header, &[])?;
                Ok(None)
            }
            Job::Create(boxed) => {
                let (header, first) = *boxed;
                self.journal.create_session_with_steps(&header, std::slice::from_ref(&first))?;
                // Committed in its own transaction.
                self.progressed(Some(first.seq), true);
                Ok(Some(first.seq))
            }
            Job::Step(step, durability) => {
                let seq = step.seq;
                match durability {
                    Durability::Deferred => self.journal.append_encoded(&self.session, &step)?,
                    Durability::Committed => {
                        self.journal.append_encoded(&self.session, &step)?;
                        *to_commit = true;
                    }
                    Durability::Synced => {
                        self.journal.append_encoded_synced(&self.session, &step)?;
                        // Committed on its own: the steps after it start a new group.
                        self.progressed(Some(seq), true);
                    }
                }
                let buffer = step.into_buffer();
                if buffer.capacity() <= SPARE_MAX {
                    let _ = self.give_back.send(buffer);
                }
                Ok(Some(seq))
            }
        }
    }

    fn progressed(&self, written: Option<u64>, committed: bool) {
        {
            let mut progress = self.shared.lock();
            if let Some(seq) = written {
                progress.written = progress.written.max(seq);
            }
            if committed {
                progress.committed = progress.written;
            }
        }
        if committed {
            (self.shared.on_commit)();
        }
        self.shared.changed.notify_all();
    }

    fn fail(self, e: JournalError) {
        {
            let mut progress = self.shared.lock();
            progress.failed = Some(e.to_string());
            progress.error = Some(e);
        }
        self.stop();
    }

    fn stop(self) {
        self.shared.lock().stopped = true;
        self.shared.changed.notify_all();
        (self.shared.on_commit)();
        // The journal is dropped here, on its own thread: that releases the session's lock.
        drop(self.journal);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use reloop_core::{ContentBlock, Event};

    use super::*;
    use crate::store::tests::{header, step};

    /// A writer for session `s` in a new journal at `path`, counting its commits; deferred steps
    /// wait an hour for their group (a test machine's load never commits them by the clock).
    fn writer(path: &std::path::Path) -> (JournalWriter, Arc<AtomicUsize>) {
        let commits = Arc::new(AtomicUsize::new(0));
        let counted = commits.clone();
        let journal = Journal::create_or_open(path).expect("journal");
        let writer = JournalWriter::spawn_grouping(journal, "s", Duration::from_secs(3600), QUEUE_BYTES, move || {
            counted.fetch_add(1, Ordering::SeqCst);
        })
        .expect("spawn");
        (writer, commits)
    }

    #[test]
    fn every_step_handed_over_is_in_the_journal_in_order_once_the_writer_is_dropped() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("j.db");
        let (mut w, _) = writer(&path);
        w.create(header("s"), step(1)).expect("create");
        w.wait_committed(1).expect("created");
        let records: Vec<StepRecord> = (2..=300).map(step).collect();
        for (i, record) in records.iter().enumerate() {
            let durability = [Durability::Deferred, Durability::Committed, Durability::Deferred][i % 3];
            w.append(&NewStep::from(record), durability).expect("append");
        }
        drop(w);
        let steps = Journal::open_existing(&path).expect("reopen").steps("s").expect("steps");
        assert_eq!(steps.len(), 300);
        assert_eq!(steps[1..], records[..]);
    }

    #[test]
    fn a_committed_step_is_durable_when_the_wait_returns_and_deferred_ones_only_with_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("j.db");
        let (mut w, commits) = writer(&path);
        w.create(header("s"), step(1)).expect("create");
        w.append(&NewStep::from(&step(2)), Durability::Deferred).expect("deferred");
        w.wait_written(2).expect("written");
        // Another connection sees only what is committed.
        let reader = Journal::open_for_reading(&path).expect("reader");
        assert_eq!(reader.steps("s").expect("steps").len(), 1, "a deferred step waits for its group");
        assert!(w.committed() >= 1 && w.committed() < 2);
        w.append(&NewStep::from(&step(3)), Durability::Committed).expect("committed");
        w.wait_committed(3).expect("commit");
        assert_eq!(reader.steps("s").expect("steps").len(), 3, "the commit takes the deferred step with it");
        assert!(commits.load(Ordering::SeqCst) >= 2, "each commit is signalled");
        w.append(&NewStep::from(&step(4)), Durability::Synced).expect("synced");
        w.wait_committed(4).expect("sync");
        assert_eq!(reader.steps("s").expect("steps").len(), 4);
    }

    #[test]
    fn a_deferred_step_alone_is_committed_after_the_group_interval() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("j.db");
        let journal = Journal::create_or_open(&path).expect("journal");
        let mut w =
            JournalWriter::spawn_grouping(journal, "s", Duration::from_millis(20), QUEUE_BYTES, || {}).expect("spawn");
        w.create(header("s"), step(1)).expect("create");
        w.append(&NewStep::from(&step(2)), Durability::Deferred).expect("deferred");
        // No further step comes: the writer's own clock commits the group.
        w.wait_committed(2).expect("committed by the interval");
        let reader = Journal::open_for_reading(&path).expect("reader");
        assert_eq!(reader.steps("s").expect("steps").len(), 2);
    }

    #[test]
    fn a_failed_write_is_reported_to_the_loop_and_nothing_after_it_is_written() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("j.db");
        let (mut w, _) = writer(&path);
        // No session `s` was created: the writer's insert fails.
        w.append(&NewStep::from(&step(1)), Durability::Committed).expect("queued");
        let failed = w.wait_committed(1);
        assert!(matches!(failed, Err(JournalError::NoSuchSession(_))), "{failed:?}");
        // Later calls keep failing, with the same words, instead of hanging.
        let again = w.append(&NewStep::from(&step(2)), Durability::Committed);
        assert!(
            matches!(&again, Err(JournalError::Database { detail, .. }) if detail.contains("no session")),
            "{again:?}"
        );
        assert!(w.wait_committed(2).is_err());
    }

    #[test]
    fn a_row_over_the_cap_is_refused_on_the_loop_before_it_is_queued() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("j.db");
        let (mut w, _) = writer(&path);
        w.create(header("s"), step(1)).expect("create");
        let mut huge = step(2);
        huge.event = Event::user_input(vec![ContentBlock::text("x".repeat(crate::MAX_ROW_BYTES))]);
        let refused = w.append(&NewStep::from(&huge), Durability::Committed);
        assert!(matches!(refused, Err(JournalError::RowTooLarge { seq: 2, .. })), "{refused:?}");
        w.append(&NewStep::from(&step(2)), Durability::Committed).expect("the next row goes in");
        w.wait_committed(2).expect("committed");
    }

    #[test]
    fn a_stalled_writer_holds_the_loop_back_with_at_most_the_queues_bytes_in_memory() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("j.db");
        let journal = Journal::create_or_open(&path).expect("journal");
        // The writer stalls in its first commit signal until the gate opens: a disk that stopped.
        // The gate opens when the test ends however it ends, so a failure cannot hang it.
        struct Gate(Mutex<bool>, Condvar);
        struct Opens(Arc<Gate>);
        impl Drop for Opens {
            fn drop(&mut self) {
                *self.0 .0.lock().unwrap_or_else(|p| p.into_inner()) = true;
                self.0 .1.notify_all();
            }
        }
        let gate = Opens(Arc::new(Gate(Mutex::new(false), Condvar::new())));
        let held = gate.0.clone();
        let cap = 64 << 10;
        let mut w = JournalWriter::spawn_grouping(journal, "s", Duration::from_secs(3600), cap, move || {
            let mut open = held.0.lock().unwrap_or_else(|p| p.into_inner());
            while !*open {
                open = held.1.wait(open).unwrap_or_else(|p| p.into_inner());
            }
        })
        .expect("spawn");
        let shared = w.shared.clone();
        w.create(header("s"), step(1)).expect("create");
        // Steps of about 10 KB each, 2 MB in all: thirty times what the queue may hold.
        let records: Vec<StepRecord> = (2..=201)
            .map(|seq| {
                let mut record = step(seq);
                record.event = Event::user_input(vec![ContentBlock::text("y".repeat(10_000))]);
                record
            })
            .collect();
        let appended = Arc::new(AtomicUsize::new(0));
        let counted = appended.clone();
        let to_append = records.clone();
        let appender = std::thread::spawn(move || {
            for record in &to_append {
                w.append(&NewStep::from(record), Durability::Committed).expect("append");
                w.flush(false).expect("hand over");
                counted.fetch_add(1, Ordering::SeqCst);
            }
            w
        });
        // The loop goes as far as the queue's bytes let it, then waits, however long the stall.
        let mut stalled_at = None;
        for _ in 0..200 {
            std::thread::sleep(Duration::from_millis(10));
            let now = appended.load(Ordering::SeqCst);
            if stalled_at == Some(now) {
                break;
            }
            stalled_at = Some(now);
        }
        std::thread::sleep(Duration::from_millis(100));
        let stalled = appended.load(Ordering::SeqCst);
        let queued = shared.lock().queued_bytes;
        let still = appended.load(Ordering::SeqCst);
        // The disk comes back (before any assertion: a failing one must not leave the writer
        // stalled with the loop waiting to join it).
        drop(gate);
        let w = appender.join().expect("the loop goes on");
        drop(w);
        assert!(stalled < records.len(), "the loop waits for the stalled writer");
        assert!(stalled >= 5, "it hands over what fits first ({stalled})");
        assert!(queued <= cap, "{queued} bytes queued, over the {cap} allowed");
        assert_eq!(stalled, still, "still waiting");
        // Everything is written, in order.
        let steps = Journal::open_existing(&path).expect("reopen").steps("s").expect("steps");
        assert_eq!(steps[1..], records[..]);
    }

    #[test]
    fn a_writer_that_panics_ends_the_loops_wait_with_an_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        let journal = Journal::create_or_open(&dir.path().join("j.db")).expect("journal");
        // The commit signal panics on the writer's thread: the loop must not wait forever.
        let mut w = JournalWriter::spawn(journal, "s", || panic!("signal failed")).expect("spawn");
        let created = w.create(header("s"), step(1)).and_then(|()| w.wait_committed(2));
        assert!(created.is_err(), "{created:?}");
    }
}
