//! # reloop-journal: every event and transition of a session, in SQLite
//!
//! The contract:
//! * A step (one event and the transition it caused) is one row of `steps`, committed before
//!   any of its effects can be seen outside the process: the driver hands rows to a
//!   [`JournalWriter`] (the journal on a thread of its own, commits grouped) and waits for a
//!   step's commit before an outward effect (see `docs/journal.md`). Everything committed is
//!   durable across a `kill -9` (WAL with `synchronous=NORMAL`); a write tool's start is synced,
//!   so not even a power loss loses it.
//! * Rows hold what happened, never a copy of the whole state: journal size grows linearly with
//!   the number of events.
//! * The schema is plain SQL over JSON text, readable with `sqlite3` (see `docs/journal.md`).
//!   A database that is not a reloop journal, or is corrupt, is reported and never written to.
//! * No row holds more than [`MAX_ROW_BYTES`] (8 MiB): a step or header over it is refused with
//!   a typed error before anything is written; the driver trims what it journals to stay under.
//! * One process writes a session at a time (`session_locks`); a crashed writer's row is stale
//!   and taken over, so a crash never blocks a resume.
//!
//! * [`JournalBackend`] is what any journal does; [`Journal`] is the SQLite one, and
//!   `reloop-journal-pg` a PostgreSQL one many machines share.
//!
//! The public surface, by who uses it: the records every writer and reader shares
//! ([`SessionHeader`], [`StepRecord`], [`NewStep`], [`SessionSummary`], [`SessionOverview`],
//! [`Subagent`], [`JournalError`]); the driver's writing ([`JournalWriter`], [`Durability`],
//! [`Writer`], [`Reopen`]); replay's reading ([`ReplayRow`], [`RowBatch`], [`RowOutcome`],
//! [`outcome_hash`], [`read_event`]); the one row codec another backend builds on
//! ([`EncodedStep`]); and dumps, a session as one JSON document ([`SessionDump`],
//! [`DumpWriter`], [`load_dump`], [`visit_dump`]).
//!
//! This crate knows nothing of HTTP, processes or tokio.

// Layers, lowest first (`tests/layout.rs` keeps them free of cycles): `error`; the records and
// the one row codec, the hash of what a step did and the reading of an event, with no database in
// them (`record`, `outcome`, `codec`, `event_read`); SQLite's rows and schema
// (`rows`, `schema`); the SQLite journal (`store`) and what extends it (`read`, `lock`,
// `listing`, `agents`, `dump`); the backend trait over it (`backend`), and what runs on that
// (`dump_stream`, `writer`, `batch`).
#![warn(missing_docs)]

mod agents;
mod backend;
mod batch;
mod codec;
mod dump;
mod dump_stream;
mod error;
mod event_read;
mod listing;
mod lock;
mod outcome;
mod read;
mod record;
mod rows;
mod schema;
mod store;
mod writer;

pub use agents::Subagent;
pub use backend::{Fill, JournalBackend, Reopen, StepSink, Writer};
pub use batch::RowBatch;
pub use codec::{EncodedStep, RowOutcome};
pub use dump::{DumpHeader, DumpStep, DumpWriter, SessionDump, DUMP_FORMAT};
pub use dump_stream::{load_dump, visit_dump, DumpHead};
pub use error::JournalError;
pub use event_read::read_event;
pub use listing::SessionOverview;
pub use outcome::outcome_hash;
pub use record::{EffectsRef, NewStep, SessionHeader, SessionSummary, StepRecord, ENGINE_VERSION, MAX_ROW_BYTES};
pub use rows::ReplayRow;
pub use schema::SCHEMA_VERSION;
pub use store::Journal;
pub use writer::{Durability, JournalWriter, GROUP_COMMIT_INTERVAL};
