//! # reloop-serve: a journal's sessions as a local web app
//!
//! `reloop serve` serves, over the same journal the CLI reads (SQLite or PostgreSQL):
//! * `/`: the session list, filtered (time, state or terminal reason, model, source, cost,
//!   tokens, parent) and searched (prompts, the model's text, tool inputs and results), a page at
//!   a time; every filter is in the URL, so a link shares it.
//! * `/s/ID`: a session: its models, times, cache hit rate, system prompt, the model's text and
//!   final answer, `why`, its tree of forks, reruns and subagents, and the timeline `reloop view`
//!   writes ([`page`]), which follows a running session as its steps are journaled
//!   (server-sent events, `/s/ID/events`).
//! * `/diff?a=ID&b=ID`: where two sessions part ways.
//!
//! The list and search read an index ([`index`]) the server builds from the journal's rows and
//! refreshes incrementally; the run loop never writes it. Nothing here writes the journal. A
//! server bound to anything but loopback needs a token, checked on every request ([`auth`]).

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod auth;
mod diff;
mod html;
pub mod index;
mod list;
mod live;
pub mod page;
mod pool;
mod session;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use reloop_driver::SessionJournal;
use reloop_journal::JournalError;

pub use index::{IndexPlace, PriceTable};

/// Opens a connection to the journal, to read a session's steps.
pub type OpenJournal = Arc<dyn Fn() -> Result<SessionJournal, JournalError> + Send + Sync>;

/// A per-session status beyond the journal's: a queue's (queued, claimed by which worker, failed
/// and why). Given one, the list shows its words in a column of their own; without one the
/// column is not there.
pub trait QueueStatus: Send + Sync {
    /// The words for each of `ids` that has a status; a session missing from the map has none.
    fn statuses(&self, ids: &[String]) -> Result<HashMap<String, String>, String>;

    /// The queue summed up in a line (how many wait, run, failed), read in bounded time so a
    /// page heads a list of any length with it; `None` when there is nothing to say.
    fn summary(&self) -> Result<Option<String>, String> {
        Ok(None)
    }
}

/// What the server serves and how.
#[derive(Clone)]
pub struct Config {
    /// The index's place (beside the journal).
    pub index: IndexPlace,
    /// Opens the journal to read a session.
    pub journal: OpenJournal,
    /// The bundled model table's prices, for sessions that recorded none.
    pub prices: PriceTable,
    /// Who may ask ([`auth`]).
    pub access: auth::Access,
    /// How often the index reads what the journal added, and a live page looks for new steps.
    pub refresh: Duration,
    /// The queue's statuses, when a journal has a queue ([`QueueStatus`]).
    pub queue: Option<Arc<dyn QueueStatus>>,
}

/// The server's shared state: its config and its connections.
pub(crate) struct App {
    pub config: Config,
    pub index: pool::Pool<index::Index>,
    pub journals: pool::Pool<SessionJournal>,
}

pub(crate) type State = Arc<App>;

/// Why the server could not start or answer.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The index could not be opened or built.
    #[error(transparent)]
    Index(#[from] index::IndexError),
    /// The journal could not be read.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// Listening failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// The server's routes over `config`, with the index opened (and built once, so the first page
/// lists every session).
pub fn app(config: Config) -> Result<Router, ServeError> {
    let mut first = index::Index::open(&config.index)?;
    let journal = (config.journal)()?;
    first.refresh(&config.prices, &|id| journal.live_writer(id).ok().flatten())?;
    let place = config.index.clone();
    let open_journal = config.journal.clone();
    let state: State = Arc::new(App {
        index: pool::Pool::new(vec![first], Arc::new(move || index::Index::open(&place).map_err(|e| e.to_string()))),
        journals: pool::Pool::new(vec![journal], Arc::new(move || open_journal().map_err(|e| e.to_string()))),
        config: config.clone(),
    });
    Ok(Router::new()
        .route("/", get(list::page))
        .route("/sessions.json", get(list::json))
        .route("/s/{id}", get(session::page))
        .route("/s/{id}/facts", get(session::facts))
        .route("/s/{id}/timeline", get(session::timeline))
        .route("/s/{id}/events", get(live::events))
        .route("/diff", get(diff::page))
        .route("/assets/app.css", get(|| asset("text/css", include_str!("assets/app.css"))))
        .route("/assets/app.js", get(|| asset("text/javascript", include_str!("assets/app.js"))))
        .fallback(|| async { html::error(StatusCode::NOT_FOUND, "no such page") })
        .layer(axum::middleware::from_fn_with_state(config.access.clone(), auth::check))
        .with_state(state))
}

async fn asset(kind: &'static str, body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, kind), (header::CACHE_CONTROL, "no-cache")], body).into_response()
}

/// Serves `config` on `listener` until `shutdown` completes, refreshing the index in the
/// background meanwhile.
pub async fn serve(
    listener: tokio::net::TcpListener,
    config: Config,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let router = tokio::task::spawn_blocking({
        let config = config.clone();
        move || app(config)
    })
    .await
    .map_err(|e| std::io::Error::other(e.to_string()))??;
    let refresher = spawn_refresher(config);
    let served = axum::serve(listener, router.into_make_service_with_connect_info::<SocketAddr>())
        .with_graceful_shutdown(shutdown)
        .await;
    refresher.abort();
    Ok(served?)
}

/// Refreshes the index every `config.refresh` on a thread of its own (its connection writes
/// while the pages' connections read).
fn spawn_refresher(config: Config) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let opened = {
            let config = config.clone();
            tokio::task::spawn_blocking(move || {
                Ok::<_, ServeError>((index::Index::open(&config.index)?, (config.journal)()?))
            })
            .await
        };
        let Ok(Ok((index, journal))) = opened else { return };
        let shared = Arc::new(std::sync::Mutex::new((index, journal)));
        loop {
            tokio::time::sleep(config.refresh).await;
            let (shared, prices) = (shared.clone(), config.prices.clone());
            let _ = tokio::task::spawn_blocking(move || {
                let Ok(mut guard) = shared.lock() else { return };
                let (index, journal) = &mut *guard;
                // A failed refresh (a busy journal) is tried again at the next tick.
                let _ = index.refresh(&prices, &|id| journal.live_writer(id).ok().flatten());
            })
            .await;
        }
    })
}
