//! # reloop-driver: the run loop around the pure core
//!
//! The contract (the core's "run loop"):
//! 1. take the next event — the user's input, a model stream event, a tool's outcome, an abort;
//! 2. apply it with [`reloop_core::transition()`];
//! 3. journal the event and the step in one transaction, *before* anything else happens;
//! 4. execute the step's effects (call the model, run tools, cancel), whose outcomes come back as
//!    events in step 1;
//! 5. stop when the state is done.
//!
//! Only this crate awaits. The caller sees the run as an async stream of [`RunEvent`]s ending
//! with [`RunEvent::Finished`]; [`replay()`] re-runs a journal through today's core with no model
//! and no tools and names the first step where it diverges.

#![forbid(unsafe_code)]

pub mod agents;
pub mod bounds;
mod config;
pub mod context;
pub mod diff;
mod error;
pub mod explain;
pub mod fork;
mod handle;
mod ids;
mod journal;
mod order;
pub mod outputs;
pub mod prompt;
pub mod replay;
mod replay_stream;
pub mod request;
pub mod rerun;
mod run;
mod session;
pub mod subagent;
#[cfg(test)]
mod test_corpus;
pub mod timeline;
mod tools;

pub use config::{AgentLink, CanUseTool};
pub use error::DriverError;
pub use fork::{fork_point_of, fork_steps, ForkError, ForkPoint, OffsetProvider};
pub use handle::{AbortHandle, CompactStatus};
pub use ids::{is_uuid, line_uuid, new_seed, new_session_id};
pub use journal::{rebuild, Rebuilt, SessionJournal};
pub use prompt::{PermissionPrompt, PromptRequest};
pub use replay::{replay, replay_with_flips, Divergence, ReplayReport, Replayer};
pub use replay_stream::{replay_journal, replay_rows};
pub use request::{request_at, RebuiltRequest, RequestAt, RequestFinder};
pub use run::{PermissionSpec, RunConfig, RunEvent, RunHandle, RunResult, Session, DEFAULT_SYSTEM_PROMPT};
pub use subagent::AgentSetup;
