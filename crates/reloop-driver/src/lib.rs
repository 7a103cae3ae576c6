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
//! with [`RunEvent::Finished`]. Reading a journal back goes through the core's one
//! [`reloop_core::Fold`] of its events (resume here; replay, `why`, forks and the rest in
//! `reloop-inspect`, which this crate never imports).
//!
//! The public surface is what a front end needs to launch, steer and read back a session:
//! [`Session`] with its [`RunConfig`] (and [`PermissionSpec`], [`AgentSetup`], [`CanUseTool`],
//! [`PermissionPrompt`]), the [`RunHandle`] and [`AbortHandle`] that steer a run, the
//! [`RunEvent`]s and [`RunResult`] it yields, [`DriverError`], the [`SessionJournal`] it writes,
//! [`rebuild`] (its state read back through the core's fold), [`outputs`] (the events a step
//! shows), [`agents`] (the `Agent` tool's catalog) and the ids it mints. The loop itself, its
//! tool scheduler, context gathering and row bounds are private.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod agents;
mod announce;
mod background;
mod bounds;
mod config;
mod context;
mod error;
mod fold;
mod given_back;
mod hand_back;
mod handle;
mod ids;
mod input_defaults;
mod journal;
mod js_json;
mod notices;
mod order;
pub mod outputs;
mod prompt;
mod run;
mod session;
mod subagent;
mod tool_use_result;
mod tools;

pub use background::untold_background;
pub use config::{thinking, wire_style, AgentLink, CanUseTool};
pub use error::DriverError;
pub use fold::{rebuild, Rebuilt};
pub use handle::{AbortHandle, CompactStatus};
pub use ids::{is_uuid, line_uuid, new_seed, new_session_id};
pub use journal::SessionJournal;
pub use prompt::{PermissionPrompt, PromptRequest};
pub use run::{PermissionSpec, RunConfig, RunEvent, RunHandle, RunResult, Session, DEFAULT_SYSTEM_PROMPT};
pub use subagent::AgentSetup;
