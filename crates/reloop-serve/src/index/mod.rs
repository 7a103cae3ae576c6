//! The index `reloop serve` lists and searches sessions through: one summary row per session
//! (when, how it ended, models, source, tokens, cost, relations) and its searchable texts, in
//! SQLite FTS5 beside a SQLite journal, or a `tsvector` with a GIN index in a PostgreSQL one.
//!
//! The index is built from the journal's rows by the server, incrementally: each refresh reads
//! only the sessions created since the last one, and the steps after the last indexed one of
//! those still being written. The run loop never writes it, so it costs the journal's write
//! path nothing.

pub mod chunks;
pub mod extract;
pub mod filter;
mod pg;
mod sqlite;

use std::path::Path;
use std::sync::Arc;

use reloop_core::Usage;
use serde_json::Value;

pub use filter::{Filter, Status};

/// The bundled model table's price of a response, for sessions that recorded none.
pub type PriceTable = Arc<dyn Fn(&str, &Usage) -> Option<f64> + Send + Sync>;

/// Who writes a session now (a pid, a lease holder), for a session the index finds unfinished.
pub type LiveWriter<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Why the index could not be built or read.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// SQLite failed (the index file, or the journal attached to it).
    #[error("index: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// PostgreSQL failed.
    #[error("index: {0}")]
    Postgres(#[from] postgres::Error),
}

/// One row of the session list.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ListRow {
    /// The session's id.
    pub id: String,
    /// Its start, ms since the epoch.
    pub created_at_ms: i64,
    /// Its last indexed step's time.
    pub last_at_ms: i64,
    /// Steps indexed.
    pub steps: i64,
    /// Why it ended; `None` while it may go on.
    pub terminal_reason: Option<String>,
    /// Who writes it now, if anyone.
    pub writer: Option<String>,
    /// The model that answered last.
    pub model: Option<String>,
    /// The model the session asked for.
    pub requested_model: Option<String>,
    /// run, fork, rerun, agent, import or prop.
    pub kind: String,
    /// The parent: a fork's or rerun's, or the session whose call a subagent answers.
    pub parent_id: Option<String>,
    /// The first prompt, shortened.
    pub first_prompt: String,
    /// Input tokens, cache reads and writes included.
    pub input_tokens: i64,
    /// Output tokens.
    pub output_tokens: i64,
    /// Cache reads, of the input.
    pub cache_read_tokens: i64,
    /// What it cost; `None` when a model it used has no price.
    pub cost_usd: Option<f64>,
    /// Where a search matched: a snippet of the first matching text.
    pub snippet: Option<String>,
}

impl ListRow {
    /// Its state in words: running (who writes it), how it ended, or unfinished.
    pub fn status(&self) -> String {
        match (&self.writer, &self.terminal_reason) {
            (Some(w), _) => format!("running ({w})"),
            (None, Some(r)) => r.clone(),
            (None, None) => "unfinished".to_string(),
        }
    }
}

/// A page of the list, with how many sessions match in all.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Listing {
    /// The rows of this page.
    pub rows: Vec<ListRow>,
    /// Every matching session, or, when counting them all would take long (a search for a
    /// word most sessions hold), at least this many: see `more`.
    pub total: i64,
    /// True when `total` is a lower bound: more sessions match than were counted.
    pub more: bool,
}

/// The most sessions a search counts: past it the list says "10,000+", since counting every
/// one of 100,000 matches would cost more than the page it heads.
pub const MAX_COUNTED: i64 = 10_000;

/// A session's kind and parent, read from its header's columns.
pub(crate) struct Origin {
    pub kind: &'static str,
    pub parent: Option<String>,
    pub requested_model: String,
    pub prices: Vec<reloop_core::Price>,
}

impl Origin {
    pub(crate) fn of(parent: Option<&str>, run_config: &str, core_config: &str) -> Origin {
        let run: Value = serde_json::from_str(run_config).unwrap_or_default();
        let core: reloop_core::Config = serde_json::from_str(core_config).unwrap_or_default();
        let provider = run.get("provider").and_then(Value::as_str).unwrap_or_default();
        let agent_parent = run.get("agent").and_then(|a| a.get("parent")).and_then(Value::as_str);
        let kind = match (parent, provider, agent_parent) {
            (Some(_), "rerun", _) => "rerun",
            (Some(_), _, _) => "fork",
            (None, _, Some(_)) => "agent",
            (None, "import", _) => "import",
            (None, "prop", _) => "prop",
            _ => "run",
        };
        Origin {
            kind,
            parent: parent.or(agent_parent).map(str::to_string),
            requested_model: core.model.clone(),
            prices: core.prices,
        }
    }
}

/// A session's running totals, carried from one refresh to the next.
#[derive(Debug, Default, Clone)]
pub(crate) struct Totals {
    pub last_seq: i64,
    pub last_at_ms: i64,
    pub model: Option<String>,
    pub first_prompt: Option<String>,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cache_read_tokens: i64,
    pub cost_usd: f64,
    pub unpriced: bool,
    /// Where its searchable texts stand ([`chunks`]).
    pub chunks: chunks::State,
}

impl Totals {
    /// Adds a response: its model answers from now on, its tokens and price count.
    /// Counted by [`reloop_inspect::spend::Spend`], as a session's page and `show` count, so the
    /// list never says another total than the session's own views.
    pub(crate) fn add(&mut self, model: Option<String>, usage: &Usage, price: Option<f64>) {
        let mut one = reloop_inspect::spend::Spend::default();
        one.add(model.as_deref().unwrap_or_default(), usage, price);
        if model.is_some() {
            self.model = model;
        }
        let int = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        self.input_tokens = self.input_tokens.saturating_add(int(one.all_input_tokens()));
        self.output_tokens = self.output_tokens.saturating_add(int(one.output_tokens));
        self.cache_read_tokens = self.cache_read_tokens.saturating_add(int(one.cache_read_input_tokens));
        self.cost_usd += one.priced_usd;
        self.unpriced |= !one.unpriced_models.is_empty();
    }

    /// Folds a step in: its response and its first prompt.
    pub(crate) fn step(&mut self, facts: &extract::StepFacts, origin: &Origin, table: &PriceTable, requested: &str) {
        if let Some((model, usage)) = &facts.response {
            // Priced as a session's page prices it: by the model that answered when the answer
            // names one, else by the one asked (a summary's answer names none).
            let m = model.as_deref().unwrap_or(requested).to_string();
            let price = match origin.prices.iter().find(|p| p.model == m) {
                Some(p) => Some(p.cost(usage)),
                None => table(&m, usage),
            };
            self.add(model.clone(), usage, price);
        }
        if self.first_prompt.is_none() {
            if let Some(p) = &facts.prompt {
                self.first_prompt = Some(reloop_inspect::timeline::shorten(p, 200));
            }
        }
    }
}

/// What a session adds to the filter form's choices: the models that answered and the one
/// asked, and how it ended.
pub(crate) fn choices_of<'a>(
    t: &'a Totals,
    origin: &'a Origin,
    terminal: Option<&'a str>,
) -> impl Iterator<Item = (&'static str, &'a str)> {
    let asked = Some(origin.requested_model.as_str()).filter(|m| !m.is_empty());
    [("model", t.model.as_deref()), ("model", asked), ("reason", terminal)]
        .into_iter()
        .filter_map(|(kind, value)| value.map(|v| (kind, v)))
}

/// Where the index lives and which journal it reads.
#[derive(Debug, Clone)]
pub enum IndexPlace {
    /// A SQLite file of its own (FTS5) beside the SQLite journal it reads.
    Sqlite {
        /// The journal.
        journal: std::path::PathBuf,
        /// The index file.
        index: std::path::PathBuf,
    },
    /// The `reloop_serve` schema of the PostgreSQL journal's own database.
    Postgres {
        /// The database's address.
        url: String,
    },
}

/// A connection to the index: the refresher holds one, each reader another.
pub enum Index {
    /// Beside a SQLite journal.
    Sqlite(sqlite::SqliteIndex),
    /// In a PostgreSQL journal's database.
    Postgres(Box<pg::PgIndex>),
}

impl Index {
    /// Opens the index at `place`, creating its tables when missing.
    pub fn open(place: &IndexPlace) -> Result<Index, IndexError> {
        Ok(match place {
            IndexPlace::Sqlite { journal, index } => Index::Sqlite(sqlite::SqliteIndex::open(journal, index)?),
            IndexPlace::Postgres { url } => Index::Postgres(Box::new(pg::PgIndex::open(url)?)),
        })
    }

    /// Reads what the journal added since the last refresh into the index; returns how many
    /// sessions it touched.
    pub fn refresh(&mut self, table: &PriceTable, live: LiveWriter<'_>) -> Result<usize, IndexError> {
        match self {
            Index::Sqlite(i) => i.refresh(table, live),
            Index::Postgres(i) => i.refresh(table, live),
        }
    }

    /// The page of sessions `filter` asks for, newest first.
    pub fn list(&mut self, filter: &Filter) -> Result<Listing, IndexError> {
        match self {
            Index::Sqlite(i) => i.list(filter),
            Index::Postgres(i) => i.list(filter),
        }
    }

    /// The rows of these sessions (for a session's tree), in creation order.
    pub fn rows(&mut self, ids: &[String]) -> Result<Vec<ListRow>, IndexError> {
        match self {
            Index::Sqlite(i) => i.rows(ids),
            Index::Postgres(i) => i.rows(ids),
        }
    }

    /// The sessions whose parent is `id` (forks, reruns, subagents), at most `most`.
    pub fn children(&mut self, id: &str, most: i64) -> Result<Vec<ListRow>, IndexError> {
        let filter = Filter { parent: Some(id.to_string()), per: most, ..Filter::default() };
        Ok(self.list(&filter)?.rows)
    }

    /// The distinct models and terminal reasons the index holds, for the filter form.
    pub fn choices(&mut self) -> Result<(Vec<String>, Vec<String>), IndexError> {
        match self {
            Index::Sqlite(i) => i.choices(),
            Index::Postgres(i) => i.choices(),
        }
    }

    /// The journal's last step of `id` now, and how it ended if it did (the journal's, not the
    /// index's: the live view's clock); `None` when there is no such session.
    pub fn journal_state(&mut self, id: &str) -> Result<Option<(i64, Option<String>)>, IndexError> {
        match self {
            Index::Sqlite(i) => i.journal_state(id),
            Index::Postgres(i) => i.journal_state(id),
        }
    }
}

/// `path` as a SQLite URI that opens it read-only.
pub(crate) fn read_only_uri(path: &Path) -> String {
    let mut uri = String::from("file:");
    for b in path.to_string_lossy().bytes() {
        match b {
            b'?' | b'#' | b'%' | 0x80..=0xff => uri.push_str(&format!("%{b:02X}")),
            _ => uri.push(b as char),
        }
    }
    uri.push_str("?mode=ro");
    uri
}
