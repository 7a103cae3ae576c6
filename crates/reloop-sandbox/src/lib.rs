//! # reloop-sandbox: containment for the processes reloop starts for a tool
//!
//! The permission classifier decides when to ask; this crate decides what a process can do,
//! whatever its command says. A wrong classification is harmless because of what holds here.
//!
//! The contract:
//!
//! * [`Sandbox::probe`] finds bubblewrap (`bwrap`, or the program `RELOOP_BWRAP` names) and
//!   runs one confined `true` to prove this machine gives the namespaces it needs. Without it
//!   reloop has no containment and says so ([`Availability::Unavailable`] carries why); the
//!   permission layer then asks before every command.
//! * [`Sandbox::command`] builds a [`std::process::Command`] that runs a program under a
//!   [`Call`]'s limits:
//!   - only the system's read-only directories (`/usr`, `/etc`, the `/bin` and `/lib` links),
//!     the workspace roots, a private `/tmp` (a size-bounded tmpfs, gone with the call), a
//!     minimal `/dev` and a `/proc` of the call's own processes are visible;
//!   - the roots are writable only for [`Access::Write`]; under [`Access::ReadOnly`] the
//!     private `/tmp` is the only place a write lands;
//!   - every [`Call::masked`] path reads as denied (a file is covered by an unreadable device
//!     node, a directory by an empty read-only tmpfs) and every [`Call::frozen`] path is
//!     read-only; both by bind mounts over the canonical path, so symlinks lead to the mask and
//!     renames or removals of the path fail (the caller names every hard link: the mount covers
//!     one name);
//!   - no network namespace is shared unless the session allows the network ([`Policy::network`]);
//!   - the environment is [`Policy::env`] and nothing else: bwrap itself starts with it, so not
//!     even the namespace's first process carries reloop's variables;
//!   - all capabilities are dropped, the call gets its own PID, IPC and UTS namespaces and a new
//!     session, and every process it starts, daemons included, is killed when the call's first
//!     process exits or bwrap dies (bwrap dies with the thread that started it).
//! * [`EnvPolicy`] is the allow-list: variables a tool process may inherit, never reloop's own
//!   environment minus a few names.

#![warn(missing_docs)]

mod command;
mod env;
mod os;
mod probe;

pub use command::{Access, Call, Policy, SCRATCH_BYTES, SYSTEM_DIRS};
pub use env::{EnvPolicy, BASE_VARS, CREDENTIAL_VARS};
pub use os::protect_self;
pub use probe::{Availability, Report, Sandbox, BWRAP_ENV};

/// Why a confined command could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    /// A path the sandbox must bind is not absolute, or not valid where bwrap expects it.
    #[error("cannot confine the command: {path:?} is not an absolute path")]
    NotAbsolute {
        /// The path as the caller gave it.
        path: std::path::PathBuf,
    },
}
