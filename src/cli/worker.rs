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

use std::time::Duration;

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
use crate::term::errln;

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
    #[arg(long)]
    pub exit_when_idle: bool,
    #[command(flatten)]
    pub wire: crate::options::WireArgs,
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
    let mut control = open(&url).await?;
    let mut spare: Option<PgJournal> = None;
    let mut running: JoinSet<(String, Result<Ended, CliError>)> = JoinSet::new();
    let timeouts = args.wire.timeouts();
    let poll = Duration::from_millis(args.poll_ms);
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
                    errln!("reloop worker: cannot claim a session now: {e}");
                    claimed_none = true;
                    break;
                }
            };
            match claimed {
                Some(id) => {
                    let stop = stop.clone();
                    running.spawn(async move { (id.clone(), run_one(id, journal, stop, timeouts).await) });
                }
                None => {
                    spare = Some(journal);
                    claimed_none = true;
                    break;
                }
            }
        }
        if args.exit_when_idle && claimed_none && running.is_empty() {
            break;
        }
        let wait = if claimed_none || running.len() >= args.concurrency as usize { poll } else { Duration::ZERO };
        tokio::select! {
            Some(done) = running.join_next() => finish(&mut control, done).await,
            _ = tokio::time::sleep(wait) => {}
            _ = stop.cancelled() => {}
        }
    }
    // Told to stop (or idle): the runs halt where they are and give their sessions up.
    while let Some(done) = running.join_next().await {
        finish(&mut control, done).await;
    }
    listener.abort();
    drop(spare);
    if stop.is_cancelled() {
        crate::launch::signals::kill_child_groups();
    }
    Ok(Exit::Success)
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

/// Records how a run ended: a finished session leaves the queue; a halted one stays in it.
async fn finish(control: &mut PgJournal, done: Result<(String, Result<Ended, CliError>), tokio::task::JoinError>) {
    let (id, ended) = match done {
        Ok(done) => done,
        Err(e) => {
            errln!("reloop worker: a run's task failed: {e}");
            return;
        }
    };
    let outcome = match ended {
        Ok(Ended::Finished(outcome)) => outcome,
        Ok(Ended::Halted) => return,
        // The journal failed (the database went away, the lease was lost): the session is left
        // to whoever takes it next; the queue's attempt count bounds a session that always fails.
        Err(CliError::Journal(e)) | Err(CliError::Driver(reloop_driver::DriverError::Journal(e))) => {
            errln!("reloop worker: session {id}: {e}");
            return;
        }
        Err(e) => format!("error: {e}"),
    };
    if let Err(e) = tokio::task::block_in_place(|| control.finish_queued(&id, &outcome)) {
        errln!("reloop worker: session {id}: cannot mark it done: {e}");
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
