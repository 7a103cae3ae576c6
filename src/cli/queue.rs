//! `reloop queue --journal postgres://...`: the work queue as an operator reads it: what waits
//! since when, what runs on which worker since when, and what failed and why. `sessions` and
//! `why` read the same rows to tell a queued or failed session from an unfinished one.

use std::collections::HashMap;

use reloop_journal_pg::{QueueEntry, QueueState};
use serde_json::json;

use super::reading::{local_time, short};
use super::CliError;
use crate::error::Exit;
use crate::options::{JournalArg, JsonArg};
use crate::term::outln;

#[derive(clap::Args, Debug)]
pub struct QueueArgs {
    #[command(flatten)]
    pub journal: JournalArg,
    /// Also list the sessions the queue is done with (ended with no failure).
    #[arg(long)]
    pub all: bool,
    #[command(flatten)]
    pub json: JsonArg,
}

/// The queue's rows, by session; none for a SQLite journal, which has no queue.
pub(crate) fn by_session(journal: &JournalArg) -> Result<HashMap<String, QueueEntry>, CliError> {
    let Some(url) = journal.shared_url() else { return Ok(HashMap::new()) };
    let mut pg = crate::launch::journal::connect(url)?;
    Ok(pg.queue_entries()?.into_iter().map(|e| (e.session.clone(), e)).collect())
}

/// How `sessions` ends a queued session's row when no writer holds it and it has not ended:
/// `(queued)`, or `failed: REASON`.
pub(crate) fn end_words(entry: &QueueEntry) -> Option<String> {
    match entry.state {
        QueueState::Queued => Some("(queued)".to_string()),
        QueueState::Failed => {
            let reason = entry.reason.as_deref().unwrap_or("no reason recorded");
            Some(format!("failed: {}", reason.strip_prefix("error: ").unwrap_or(reason)))
        }
        QueueState::Claimed | QueueState::Done => None,
    }
}

pub fn run(args: QueueArgs) -> Result<Exit, CliError> {
    if args.journal.shared_url().is_none() {
        return Err(CliError::Usage(
            "reloop queue reads a shared journal's queue: --journal postgres://... (a SQLite journal has none)".into(),
        ));
    }
    let mut entries: Vec<QueueEntry> = by_session(&args.journal)?.into_values().collect();
    // Oldest first, as the queue serves them.
    entries.sort_by(|a, b| (a.since_ms, &a.session).cmp(&(b.since_ms, &b.session)));
    let done = entries.iter().filter(|e| e.state == QueueState::Done).count();
    if !args.all {
        entries.retain(|e| e.state != QueueState::Done);
    }
    if args.json.json {
        let out: Vec<_> = entries
            .iter()
            .map(|e| {
                json!({"session": e.session, "state": e.state, "worker": e.worker, "since_ms": e.since_ms,
                       "reason": e.reason})
            })
            .collect();
        crate::term::json_line(&out, true).map_err(|e| CliError::Io(e.to_string()))?;
        return Ok(Exit::Success);
    }
    for e in &entries {
        let detail = match (e.state, &e.worker, &e.reason) {
            (QueueState::Claimed, Some(worker), _) => format!("by {worker}"),
            (_, _, Some(reason)) => reason.clone(),
            _ => String::new(),
        };
        let line = format!("{:<8} {}  since {}  {detail}", e.state.as_str(), short(&e.session), local_time(e.since_ms));
        outln!("{}", line.trim_end());
    }
    let count = |state| entries.iter().filter(|e| e.state == state).count();
    let mut summary = format!(
        "{} queued, {} claimed, {} failed",
        count(QueueState::Queued),
        count(QueueState::Claimed),
        count(QueueState::Failed)
    );
    if !args.all && done > 0 {
        summary.push_str(&format!("; {done} done (--all lists them)"));
    } else if args.all {
        summary.push_str(&format!(", {done} done"));
    }
    outln!("{summary}");
    Ok(Exit::Success)
}
