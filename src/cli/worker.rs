//! `reloop worker --journal postgres://...`: runs queued sessions until told to stop.
//!
//! A worker claims the oldest queued session nobody writes (never started, or whose writer's
//! lease expired: a worker that died), becoming its writer by the lease, and runs it with
//! `resume` semantics: the state is rebuilt from the journal and whatever was in flight is
//! asked again, so nothing journaled runs twice. Several workers on one database share the
//! queue; the lease and its epoch keep any session to one writer at a time.
//!
//! SIGTERM, SIGINT or SIGHUP stop the worker: it claims nothing more and halts its runs where
//! they are, without journaling an abort (which would end them for good), gives their leases up
//! and exits 0. Every session it held is left as a crash would leave it, for the next worker.
//!
//! An operator sees it work in its log on stderr (`tracing`): one line (or, with `--log-format
//! json`, one JSON object) as it starts, claims a session, renews a lease (the heartbeat), finishes
//! or fails a session, and stops, each naming the worker (`host:pid`) and the session.

use std::time::{Duration, Instant};

use futures::StreamExt;
use reloop_driver::{RunEvent, SessionJournal};
use reloop_journal::JournalBackend;
use reloop_journal_pg::PgJournal;
use tokio::signal::unix::{signal, SignalKind};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::{CliError, JournalArg};
use crate::error::Exit;
use crate::launch::journal;

#[derive(clap::Args, Debug)]
pub struct WorkerArgs {
    #[command(flatten)]
    pub journal: JournalArg,
    /// Sessions this worker runs at once.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub concurrency: u32,
    /// How long an idle worker waits before it looks for queued sessions again, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 500, value_parser = clap::value_parser!(u64).range(10..=60_000))]
    pub poll_ms: u64,
    /// Stop once no queued session is left to claim and none is running (batch jobs).
    /// Exit 1 instead of 0 when a session it ran failed.
    #[arg(long)]
    pub exit_when_idle: bool,
    /// How its log on stderr is written: human lines, or one JSON object a line for a log
    /// collector.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = LogFormat::Human)]
    pub log_format: LogFormat,
    #[command(flatten)]
    pub wire: crate::options::WireArgs,
}

/// The worker's log format.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormat {
    /// Lines as a person reads them: time, level, words, fields (coloured on a terminal).
    Human,
    /// One JSON object a line: `timestamp`, `level`, `message`, `event`, `session`, `worker`...
    Json,
}

/// Starts the worker's log on stderr: its own events and the leases' heartbeats, at INFO.
fn init_log(format: LogFormat) {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let targets = tracing_subscriber::filter::Targets::new()
        .with_target("reloop", tracing::Level::INFO)
        .with_target("reloop_journal_pg", tracing::Level::INFO);
    let colour = anstream::AutoStream::choice(&std::io::stderr()) != anstream::ColorChoice::Never;
    let layer = tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_target(false);
    // A second worker in one process (tests) keeps the first's log: nothing to do then.
    let _ = match format {
        LogFormat::Human => tracing_subscriber::registry().with(layer.with_ansi(colour)).with(targets).try_init(),
        LogFormat::Json => tracing_subscriber::registry()
            .with(layer.json().flatten_event(true).with_current_span(false).with_span_list(false))
            .with(targets)
            .try_init(),
    };
}

/// What the worker counts as it goes, for its last log line and its exit code.
#[derive(Default)]
struct Tally {
    finished: usize,
    failed: usize,
}

/// How one claimed session's run ended.
enum Ended {
    /// Its run ended (a terminal reason, or an error that would end it again): done with.
    Finished(String),
    /// The worker was told to stop: the session is left to the next worker.
    Halted,
}

pub async fn run(args: WorkerArgs) -> Result<Exit, CliError> {
    let Some(url) = args.journal.shared_url().map(str::to_string) else {
        return Err(CliError::Usage(
            "reloop worker takes sessions from a shared journal: --journal postgres://...".into(),
        ));
    };
    let mut stops = Vec::new();
    for kind in [SignalKind::terminate(), SignalKind::interrupt(), SignalKind::hangup()] {
        stops.push(signal(kind).map_err(|e| CliError::Io(format!("cannot listen for signals: {e}")))?);
    }
    let stop = CancellationToken::new();
    let listener = {
        let stop = stop.clone();
        tokio::spawn(async move {
            let waits = stops.iter_mut().map(|s| Box::pin(s.recv()));
            futures::future::select_all(waits).await;
            stop.cancel();
        })
    };
    init_log(args.log_format);
    let mut control = open(&url).await?;
    let worker = control.worker_id().to_string();
    tracing::info!(target: "reloop::worker", event = "start", worker = worker.as_str(), journal = %control.location(),
        concurrency = args.concurrency, poll_ms = args.poll_ms, exit_when_idle = args.exit_when_idle, "worker started");
    let mut tally = Tally::default();
    let mut spare: Option<PgJournal> = None;
    let mut running: JoinSet<(String, Instant, Result<Ended, CliError>)> = JoinSet::new();
    let timeouts = args.wire.timeouts();
    let poll = Duration::from_millis(args.poll_ms);
    let mut idle = false;
    while !stop.is_cancelled() {
        let mut claimed_none = false;
        while running.len() < args.concurrency as usize && !stop.is_cancelled() {
            // A database that cannot be reached now is tried again at the next poll: a restart
            // of the server must not end the fleet's workers.
            let journal = match spare.take() {
                Some(j) => Ok(j),
                None => open(&url).await,
            };
            let claimed = match journal {
                Ok(journal) => claim(journal).await,
                Err(e) => Err(e),
            };
            let (journal, claimed) = match claimed {
                Ok(claimed) => claimed,
                Err(e) => {
                    tracing::warn!(target: "reloop::worker", event = "claim_failed", worker = worker.as_str(),
                        error = %e, "cannot claim a session now; trying again at the next poll");
                    claimed_none = true;
                    break;
                }
            };
            match claimed {
                // Told to stop while the claim was on its way (a halting run may have just given
                // this very session back): it goes back to the queue unrun and uncounted.
                Some(id) if stop.is_cancelled() => {
                    let given_back = unclaim(journal, id.clone()).await;
                    match given_back {
                        Ok(()) => tracing::info!(target: "reloop::worker", event = "unclaim", session = id.as_str(),
                            worker = worker.as_str(), "gave back a session claimed as the worker was told to stop"),
                        Err(e) => tracing::warn!(target: "reloop::worker", event = "unclaim_failed",
                            session = id.as_str(), worker = worker.as_str(), error = %e,
                            "cannot give back a session claimed as the worker was told to stop; its lease lapses"),
                    }
                    break;
                }
                Some(id) => {
                    tracing::info!(target: "reloop::worker", event = "claim", session = id.as_str(),
                        worker = worker.as_str(), holder = journal.holder(), "claimed session");
                    let stop = stop.clone();
                    running.spawn(async move {
                        let started = Instant::now();
                        (id.clone(), started, run_one(id, journal, stop, timeouts).await)
                    });
                }
                None => {
                    spare = Some(journal);
                    claimed_none = true;
                    break;
                }
            }
        }
        if args.exit_when_idle && claimed_none && running.is_empty() {
            idle = true;
            break;
        }
        let wait = if claimed_none || running.len() >= args.concurrency as usize { poll } else { Duration::ZERO };
        tokio::select! {
            Some(done) = running.join_next() => finish(&mut control, &worker, &mut tally, done).await,
            _ = tokio::time::sleep(wait) => {}
            _ = stop.cancelled() => {}
        }
    }
    // Told to stop (or idle): the runs halt where they are and give their sessions up.
    while let Some(done) = running.join_next().await {
        finish(&mut control, &worker, &mut tally, done).await;
    }
    listener.abort();
    drop(spare);
    if stop.is_cancelled() {
        crate::launch::signals::kill_child_groups();
    }
    let why = if idle { "no queued session is left" } else { "told to stop" };
    tracing::info!(target: "reloop::worker", event = "stop", worker = worker.as_str(), finished = tally.finished,
        failed = tally.failed, "worker stopped: {why}");
    // A batch that ends with failed sessions says so to whatever ran it (a CI job, a cron).
    Ok(if idle && tally.failed > 0 { Exit::Failed } else { Exit::Success })
}

/// A new connection to the shared journal (connecting blocks: off the runtime's threads).
async fn open(url: &str) -> Result<PgJournal, CliError> {
    let url = url.to_string();
    tokio::task::spawn_blocking(move || journal::connect(&url))
        .await
        .map_err(|e| CliError::Io(format!("the journal connection task failed: {e}")))?
}

/// Claims a queued session on `journal`, which becomes its writer.
/// A connection whose claim failed is dropped: the next claim connects anew.
async fn claim(mut journal: PgJournal) -> Result<(PgJournal, Option<String>), CliError> {
    tokio::task::spawn_blocking(move || {
        let claimed = journal.claim();
        (journal, claimed)
    })
    .await
    .map_err(|e| CliError::Io(format!("the claim task failed: {e}")))
    .and_then(|(journal, claimed)| Ok((journal, claimed?)))
}

/// Gives a just-claimed session back to the queue, the claim uncounted.
async fn unclaim(mut journal: PgJournal, id: String) -> Result<(), CliError> {
    tokio::task::spawn_blocking(move || journal.unclaim(&id))
        .await
        .map_err(|e| CliError::Io(format!("the unclaim task failed: {e}")))?
        .map_err(CliError::Journal)
}

/// Records how a run ended: a finished session leaves the queue; a halted one stays in it.
async fn finish(
    control: &mut PgJournal,
    worker: &str,
    tally: &mut Tally,
    done: Result<(String, Instant, Result<Ended, CliError>), tokio::task::JoinError>,
) {
    let (id, started, ended) = match done {
        Ok(done) => done,
        Err(e) => {
            tracing::error!(target: "reloop::worker", event = "failure", worker, error = %e,
                "a run's task failed; its session is left to the next claim");
            return;
        }
    };
    let (session, elapsed_ms) = (id.as_str(), started.elapsed().as_millis() as u64);
    let outcome = match ended {
        Ok(Ended::Finished(outcome)) => outcome,
        Ok(Ended::Halted) => {
            tracing::info!(target: "reloop::worker", event = "halt", session, worker, elapsed_ms,
                "halted session; it stays queued for the next worker");
            return;
        }
        // The journal failed (the database went away, the lease was lost): the session is left
        // to whoever takes it next; the queue's attempt count bounds a session that always fails.
        Err(CliError::Journal(e)) | Err(CliError::Driver(reloop_driver::DriverError::Journal(e))) => {
            tracing::warn!(target: "reloop::worker", event = "left", session, worker, elapsed_ms, error = %e,
                "gave the session up; it stays queued for the next claim");
            return;
        }
        Err(e) => format!("error: {e}"),
    };
    // Failed as `reloop run` would have exited 1 on it, or not run at all (`error: ...`).
    if reloop_journal_pg::QueueState::of_outcome(&outcome) == reloop_journal_pg::QueueState::Failed {
        tally.failed += 1;
        tracing::error!(target: "reloop::worker", event = "failure", session, worker, elapsed_ms,
            reason = outcome.as_str(), "session failed: {outcome}");
    } else {
        tally.finished += 1;
        tracing::info!(target: "reloop::worker", event = "finish", session, worker, elapsed_ms,
            outcome = outcome.as_str(), "finished session: {outcome}");
    }
    if let Err(e) = tokio::task::block_in_place(|| control.finish_queued(&id, &outcome)) {
        tracing::error!(target: "reloop::worker", event = "failure", session, worker, error = %e,
            "cannot mark the session done in the queue");
    }
}

/// Runs one claimed session to its end, or until the worker is told to stop.
async fn run_one(
    id: String,
    journal: PgJournal,
    stop: CancellationToken,
    timeouts: reloop_model::Timeouts,
) -> Result<Ended, CliError> {
    let journal = SessionJournal::Shared(Box::new(journal) as Box<dyn JournalBackend + Send>);
    let header = tokio::task::block_in_place(|| journal.header(&id))?;
    let provider = match crate::launch::recorded::provider_for(&header, None, timeouts) {
        Ok(provider) => provider,
        Err(e) => return Ok(Ended::Finished(format!("error: {e}"))),
    };
    let session = match crate::launch::recorded::session_with(provider, &header, journal, None) {
        Ok(session) => session,
        Err(e) => return Ok(Ended::Finished(format!("error: {e}"))),
    };
    let mut handle = tokio::task::block_in_place(|| session.resume(&id))?;
    let mut result = None;
    loop {
        tokio::select! {
            event = handle.next() => match event {
                Some(RunEvent::Finished(r)) => result = Some(r),
                Some(_) => {}
                None => break,
            },
            _ = stop.cancelled() => {
                handle.halt().await;
                return Ok(Ended::Halted);
            }
        }
    }
    handle.finish().await?;
    Ok(Ended::Finished(match result {
        Some(r) => r.terminal.reason().as_str().to_string(),
        None => "error: the run ended without a result".to_string(),
    }))
}
