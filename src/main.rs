//! `reloop`: run, replay and explain coding-agent loops.
//!
//! Exit codes: 0 success; 1 the run ended in error (`is_error`); 2 bad input (arguments,
//! cassette, journal); 3 replay diverged.

mod budget;
mod cli;
mod demo;
mod models;
mod output;
mod term;

use std::process::ExitCode;

use clap::Parser;

/// How long the runtime may take to wind down its tasks once a command is over.
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// The same, once a signal or a closed stdout ended the run.
const ENDING_GRACE: std::time::Duration = std::time::Duration::from_millis(250);

fn main() -> ExitCode {
    let args = match cli::Cli::try_parse() {
        Ok(args) => args,
        // Help and version are reloop's own text; clap prints them as it likes.
        Err(e) if !e.use_stderr() => e.exit(),
        Err(e) => {
            // A usage error quotes the argument it refuses: shown visibly, never raw.
            term::write_stderr(&term::visible(&e.render().to_string()));
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            term::errln!("reloop: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let code = match runtime.block_on(cli::dispatch(args)) {
        Ok(code) => code,
        Err(e) => {
            term::errln!("reloop: {e}");
            ExitCode::from(e.exit_code())
        }
    };
    // A tool thread that ignores its cancel flag (a read stuck on a device) must not keep the
    // process alive: the runtime gets a bounded time to wind down, and hardly any once a signal
    // ended the run (the tools' process groups are killed by then).
    runtime.shutdown_timeout(if cli::ending() { ENDING_GRACE } else { SHUTDOWN_GRACE });
    term::flush_stdout();
    code
}
