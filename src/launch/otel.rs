//! Live OpenTelemetry export of a running session (`run --otlp-endpoint URL`, or the standard
//! `OTEL_EXPORTER_OTLP_ENDPOINT` / `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` for every launched
//! session, the print mode's included).
//!
//! Off the hot path by construction: the run loop does nothing for it. A thread of its own reads
//! the session's committed steps back from the journal every 300 ms, maps them to spans
//! (`reloop_otel::SessionMapper`) and hands each finished span to the SDK's batch processor,
//! whose bounded queue and own thread do the sending. At the end the rest is flushed for at most
//! [`FLUSH_WAIT`]; a receiver that is down or never answers costs a warning, never a hang or a
//! failed run.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use reloop_driver::RunEvent;
use reloop_otel::otlp::{resolve_endpoint, LiveExporter};
use reloop_otel::SessionMapper;

use crate::options::JournalArg;
use crate::term::errln;

/// How often the journal is read for new steps.
const POLL: Duration = Duration::from_millis(300);

/// The longest the end of a run waits for the last spans to be sent.
pub const FLUSH_WAIT: Duration = Duration::from_secs(8);

/// `--otlp-endpoint`, when the command took one.
static FLAG: OnceLock<String> = OnceLock::new();

/// The journal the launched session is written to, noted by the launch path.
static JOURNAL: Mutex<Option<(JournalArg, PathBuf)>> = Mutex::new(None);

/// Records `--otlp-endpoint URL` for the session this process launches.
pub fn set_endpoint(url: &str) {
    let _ = FLAG.set(url.to_string());
}

/// Records the journal a launched session is written to, for the live export to read back.
pub fn note_journal(journal: &JournalArg, base: &std::path::Path) {
    if let Ok(mut slot) = JOURNAL.lock() {
        *slot = Some((journal.clone(), base.to_path_buf()));
    }
}

/// The traces URL this process exports to, if any.
fn endpoint() -> Option<String> {
    resolve_endpoint(FLAG.get().map(String::as_str), |name| std::env::var(name).ok())
}

/// The reader thread's ends: closing `stop` ends it, `finished` brings its outcome, `seen` is
/// the latest step the run has shown (the reader reads the journal only when it moved).
struct Running {
    seen: Arc<AtomicU64>,
    stop: mpsc::Sender<()>,
    finished: mpsc::Receiver<Result<(), String>>,
}

/// A live export in progress: nothing until the session has started, then its reader thread.
pub(crate) struct Live {
    endpoint: String,
    journal: (JournalArg, PathBuf),
    running: Option<Running>,
}

impl Live {
    /// The live export this process asks for, if it asks for one.
    pub(crate) fn start() -> Option<Live> {
        let endpoint = endpoint()?;
        let journal = JOURNAL.lock().ok()?.clone()?;
        Some(Live { endpoint, journal, running: None })
    }

    /// Starts reading the session back once it exists.
    /// Starts reading the session back once it exists; then notes how far the run has got
    /// (one atomic store: all the run loop's side ever does).
    pub(crate) fn on_event(&mut self, event: &RunEvent) {
        if let (RunEvent::Step { seq, .. }, Some(running)) = (event, &self.running) {
            running.seen.fetch_max(*seq, Ordering::Relaxed);
            return;
        }
        let RunEvent::Started { session_id, .. } = event else { return };
        if self.running.is_some() {
            return;
        }
        let exporter = match LiveExporter::new(&self.endpoint) {
            Ok(exporter) => exporter,
            Err(e) => return warn(&e.to_string()),
        };
        let (stop, stopped) = mpsc::channel();
        let (done, finished) = mpsc::channel();
        let (journal, session) = (self.journal.clone(), session_id.clone());
        let seen = Arc::new(AtomicU64::new(0));
        let progress = seen.clone();
        let spawned = std::thread::Builder::new().name("reloop-otel-live".into()).spawn(move || {
            let _ = done.send(tail(journal, &session, exporter, &progress, stopped));
        });
        match spawned {
            Ok(_) => self.running = Some(Running { seen, stop, finished }),
            Err(e) => warn(&format!("cannot start the export thread: {e}")),
        }
    }

    /// After the run: the last steps are read and everything is sent, waiting at most
    /// [`FLUSH_WAIT`] (plus the exporter's own timeout); a failure is a warning.
    pub(crate) fn finish(self) {
        let Some(Running { stop, finished, .. }) = self.running else { return };
        drop(stop);
        match finished.recv_timeout(FLUSH_WAIT + reloop_otel::otlp::EXPORT_TIMEOUT) {
            Ok(Ok(())) => {}
            Ok(Err(why)) => warn(&why),
            Err(_) => warn(&format!("{} did not answer in time; the session's last spans may be lost", self.endpoint)),
        }
    }
}

fn warn(why: &str) {
    errln!("reloop: warning: OpenTelemetry export: {why}");
}

/// The reader: the session's new steps every [`POLL`] while the run shows progress (`seen`),
/// until `stopped` closes; then the rest, the spans still open and the root, and the flush.
/// Each look reads only the steps after the last one seen, at most three times a second.
fn tail(
    (journal, base): (JournalArg, PathBuf),
    session: &str,
    exporter: LiveExporter,
    seen: &AtomicU64,
    stopped: mpsc::Receiver<()>,
) -> Result<(), String> {
    let read = journal.open(&base, super::journal::Open::Reading).map_err(|e| e.to_string());
    let result = read.and_then(|journal| {
        let mut mapper: Option<SessionMapper> = None;
        let mut last = 0;
        loop {
            let ending = matches!(stopped.recv_timeout(POLL), Err(RecvTimeoutError::Disconnected));
            if !ending && seen.load(Ordering::Relaxed) <= last {
                continue;
            }
            // The header is committed by the journal's writer thread, maybe after the run
            // announced the session: it is looked for until it is there (at the end, it must be).
            let mapper = match (&mut mapper, journal.header(session)) {
                (Some(mapper), _) => mapper,
                (None, Ok(header)) => mapper.insert(SessionMapper::new(&header)),
                (None, Err(e)) if ending => return Err(e.to_string()),
                (None, Err(_)) => continue,
            };
            journal
                .visit_steps_from(session, last + 1, &mut |step| {
                    last = step.seq;
                    for span in mapper.step(&step) {
                        exporter.send(&span);
                    }
                    Ok(true)
                })
                .map_err(|e| e.to_string())?;
            if ending {
                break;
            }
        }
        for span in mapper.into_iter().flat_map(SessionMapper::finish) {
            exporter.send(&span);
        }
        Ok(())
    });
    let flushed = exporter.finish(FLUSH_WAIT).map_err(|e| e.to_string());
    result.and(flushed)
}
