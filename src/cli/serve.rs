//! `reloop serve`: the journal's sessions as a local web app (`reloop_serve`): the list with its
//! filters and search, each session's page followed live, diffs. Read-only: it writes only its
//! own search index (a file beside a SQLite journal, the `reloop_serve` schema of a PostgreSQL
//! one), never the journal.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use std::collections::HashMap;

use reloop_journal_pg::{PgJournal, QueueState, QueueSummary};
use reloop_serve::{auth, Config, IndexPlace, OpenJournal, PriceTable, QueueStatus};

use super::{current_dir, CliError};
use crate::error::Exit;
use crate::options::JournalArg;
use crate::term::outln;

#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    #[command(flatten)]
    pub journal: JournalArg,
    /// The address to listen on; anything but loopback needs --allow-remote and a token.
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:8787")]
    pub listen: String,
    /// Allow listening on an address other machines reach (then a token is required).
    #[arg(long)]
    pub allow_remote: bool,
    /// The token every request must carry (Authorization: Bearer, or ?token= once in a browser),
    /// at least 16 characters.
    #[arg(long, env = "RELOOP_SERVE_TOKEN", hide_env_values = true, value_name = "TOKEN")]
    pub token: Option<String>,
    /// The search index of a SQLite journal [default: the journal's path + .serve-index].
    #[arg(long, value_name = "FILE")]
    pub index: Option<PathBuf>,
}

/// How often the index reads what the journal added, and a live page looks for new steps.
const REFRESH: Duration = Duration::from_millis(300);

pub async fn run(args: ServeArgs) -> Result<Exit, CliError> {
    let addr: SocketAddr = args
        .listen
        .parse()
        .map_err(|_| CliError::Usage(format!("--listen {}: not an address and port (127.0.0.1:8787)", args.listen)))?;
    let access = auth::access_for(addr, args.allow_remote, args.token.clone()).map_err(CliError::Usage)?;
    let base = current_dir()?;
    let journal = args.journal.open(&base, crate::launch::journal::Open::Reading)?;
    let index = match args.journal.shared_url() {
        Some(url) => {
            if args.index.is_some() {
                return Err(CliError::Usage("--index is for a SQLite journal; PostgreSQL's is in its database".into()));
            }
            IndexPlace::Postgres { url: url.to_string() }
        }
        None => {
            let path = args.journal.path(&base);
            let mut default = path.clone().into_os_string();
            default.push(".serve-index");
            IndexPlace::Sqlite { index: args.index.clone().unwrap_or_else(|| default.into()), journal: path }
        }
    };
    // Each page opens the journal again from this one, as a subagent's child does.
    let first = Mutex::new(journal);
    let open: OpenJournal = Arc::new(move || first.lock().unwrap_or_else(|e| e.into_inner()).open_again());
    let prices: PriceTable = Arc::new(|model, usage| crate::models::known_price(model).map(|p| p.cost(usage)));
    let queue = match args.journal.shared_url() {
        Some(url) => Some(Arc::new(PgQueue(Mutex::new(crate::launch::journal::connect(url)?))) as Arc<dyn QueueStatus>),
        None => None,
    };
    let config = Config { index, journal: open, prices, access, refresh: REFRESH, queue };
    let listener =
        tokio::net::TcpListener::bind(addr).await.map_err(|e| CliError::Io(format!("cannot listen on {addr}: {e}")))?;
    let bound = listener.local_addr().map_err(|e| CliError::Io(e.to_string()))?;
    outln!("reloop serve: listening on http://{bound}/ (read-only; Ctrl-C stops it)");
    reloop_serve::serve(listener, config, stopped()).await.map_err(|e| CliError::Io(format!("reloop serve: {e}")))?;
    Ok(Exit::Success)
}

/// Completes on Ctrl-C or SIGTERM.
async fn stopped() {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    let sigterm = async {
        match term.as_mut() {
            Some(t) => {
                t.recv().await;
            }
            None => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = sigterm => {}
    }
}

/// The list's queue column on a PostgreSQL journal, read from the queue `reloop queue` shows:
/// queued since when, claimed by which worker since when, failed and why. A session the queue is
/// done with, or never held, has none.
struct PgQueue(Mutex<PgJournal>);

impl QueueStatus for PgQueue {
    fn statuses(&self, ids: &[String]) -> Result<HashMap<String, String>, String> {
        let mut pg = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let entries = pg.queue_entries_of(ids).map_err(|e| e.to_string())?;
        Ok(entries
            .into_iter()
            .filter_map(|e| {
                let since = super::reading::local_time(e.since_ms);
                let words = match e.state {
                    QueueState::Queued => format!("queued since {since}"),
                    QueueState::Claimed => {
                        format!("claimed by {} since {since}", e.worker.as_deref().unwrap_or("a worker"))
                    }
                    QueueState::Failed => super::queue::end_words(&e)?,
                    QueueState::Done => return None,
                };
                Some((e.session, words))
            })
            .collect())
    }

    fn summary(&self) -> Result<Option<String>, String> {
        let mut pg = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let s = pg.queue_summary().map_err(|e| e.to_string())?;
        if s == QueueSummary::default() {
            return Ok(None);
        }
        Ok(Some(format!("{} queued, {} claimed, {} failed", s.queued, s.claimed, s.failed)))
    }
}
