//! `reloop`: run, replay and explain coding-agent loops.
//!
//! Exit codes: 0 success; 1 the run ended in error (`is_error`); 2 bad input (arguments,
//! cassette, journal); 3 replay diverged.

mod budget;
mod cli;
mod demo;
mod models;
mod output;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("reloop: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    match runtime.block_on(cli::dispatch(args)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("reloop: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}
