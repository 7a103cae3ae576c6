//! Claude Code's print mode: `reloop` with no subcommand, as the Claude Agent SDKs run it.
//!
//! With `--input-format stream-json` the process is a long-lived session: it reads the SDK's
//! lines on stdin ([`protocol`]), answers its control requests ([`control`]), runs one query per
//! user message (messages that arrive while a query runs wait for its result), prints Claude
//! Code's stream-json lines ([`stream`]) and exits when stdin closes and the last query is over.
//! Every session is journaled like `reloop run`'s, so it replays, is explained by `why`, forks
//! and resumes; the SDK's answers (permission prompts, hook callbacks, model and mode switches)
//! are journaled events, so a replay needs no SDK.

mod accepted;
pub mod args;
mod control;
mod ending;
mod protocol;
mod session;
mod stream;
mod usage;

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
    session::run(args).await
}

/// The printer `reloop replay --output-format` shows a print-mode session with (`reloop -p
/// PROMPT`, marked in its header): the stream-json lines the live run printed, rebuilt from the
/// journal's events. `None` for any other session, which the plain printer shows. The binary
/// registers it as [`crate::launch::drive::REPLAY_PRINTER`].
pub fn replay_printer(
    run_config: &serde_json::Value,
    format: crate::options::OutputFormat,
) -> Option<Box<dyn crate::launch::drive::ShowEvents>> {
    let print_mode: reloop_driver::PrintMode = serde_json::from_value(run_config.get("print_mode")?.clone()).ok()?;
    let model = run_config.get("model").and_then(serde_json::Value::as_str).unwrap_or_default().to_string();
    Some(Box::new(
        stream::SdkStream::new(protocol::Wire::default(), model, false)
            .with_output(format)
            .with_gateway(print_mode.gateway)
            .with_max_output_tokens(print_mode.max_output_tokens),
    ))
}
