//! Claude Code's print mode: `reloop` with no subcommand, as the Claude Agent SDKs run it.
//!
//! With `--input-format stream-json` the process is a long-lived session: it reads the SDK's
//! lines on stdin ([`protocol`]), answers its control requests ([`control`]), runs one query per
//! user message (messages that arrive while a query runs wait for its end, then go as one), prints Claude
//! Code's stream-json lines ([`stream`]) and exits when stdin closes and the last query is over.
//! Every session is journaled like `reloop run`'s, so it replays, is explained by `why`, forks
//! and resumes; the SDK's answers (permission prompts, hook callbacks, model and mode switches)
//! are journaled events, so a replay needs no SDK.

mod accepted;
pub mod args;
mod batch;
mod clear;
mod control;
mod drop_guard;
mod ending;
mod lifecycle;
mod local_answer;
mod mirror;
mod partial;
mod protocol;
pub mod replay;
mod session;
mod stream;
mod transcript;
mod usage;
mod verbose_json;

pub use args::{is_print_mode, PrintArgs};

use crate::error::{CliError, Exit};

/// Now, as Claude Code's line timestamps write it.
pub fn timestamp() -> String {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0);
    reloop_import::format_rfc3339_ms(ms)
}

/// Runs the print mode.
pub async fn run(args: PrintArgs) -> Result<Exit, CliError> {
    if args.version {
        crate::term::outln!(
            "{} (Claude Code compatible; reloop {})",
            args::CLAUDE_CODE_VERSION,
            env!("CARGO_PKG_VERSION")
        );
        return Ok(Exit::Success);
    }
    // `--output-format json --verbose`: every message, collected and printed as one array.
    if verbose_json::applies(&args) {
        let (wire, lines) = protocol::Wire::capturing();
        let exit = session::run(verbose_json::streamed(args), wire).await;
        verbose_json::print(&lines);
        return exit;
    }
    session::run(args, protocol::Wire::default()).await
}
