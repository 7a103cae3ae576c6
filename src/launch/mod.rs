//! The one launch path: everything that turns a front end's arguments into a running session.
//! `reloop run` and the print mode fill a [`NewSession`] (as ripgrep builds its `HiArgs` from the
//! parsed flags) and launch it; `resume`, `fork`, `compact`, `rerun`, `worker` and the print
//! mode's `--resume` rebuild a journaled session from its header ([`recorded`]), a fork first
//! journaled by [`fork`]. The provider, the tools and MCP servers, the permissions, the agents
//! and the journal are built here and nowhere else; [`drive`] runs the session to its end.
//!
//! Both front ends (`cli`, `sdk`) sit on this module; it knows neither.

mod agents;
pub mod drive;
pub mod fork;
pub mod journal;
pub mod new;
pub mod otel;
pub mod permissions;
pub mod recorded;
mod scripted;
pub mod signals;

pub use new::NewSession;

use std::path::PathBuf;

use crate::error::CliError;

/// The directory reloop was started in.
pub(crate) fn current_dir() -> Result<PathBuf, CliError> {
    std::env::current_dir().map_err(|e| CliError::Io(format!("cannot read the current directory: {e}")))
}
