//! `reloop`: run, replay and explain coding-agent loops.
//!
//! Exit codes: 0 success; 1 the run ended in error (`is_error`); 2 bad input (arguments,
//! cassette, journal); 3 replay diverged; 128 + N a signal ended the run. Each command returns
//! its [`error::Exit`], each error carries one, and `main` turns it into the process's code.
//!
//! The modules form layers: `term` (what reaches a terminal) and `error` at the bottom, the
//! shared `options`, the one `launch` path that builds and drives sessions, and the two front
//! ends on top, `cli` (the subcommands) and `sdk` (Claude Code's print mode).

mod budget;
mod cli;
mod demo;
mod error;
mod launch;
mod mcp;
mod models;
mod options;
mod sdk;
mod settings;
mod slash;
mod structured;
mod term;

use std::process::ExitCode;

/// mimalloc rather than the system allocator: the loop and replay allocate many small,
/// short-lived values, often freed on another thread than the one that made them (replay
/// decodes on one thread and steps on another), which glibc's malloc does slowly; measured,
/// a streamed replay takes a third less time.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// How long the runtime may take to wind down its tasks once a command is over.
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// The same, once a signal or a closed stdout ended the run.
const ENDING_GRACE: std::time::Duration = std::time::Duration::from_millis(250);

/// What the command line asks for: a reloop subcommand, or Claude Code's print mode.
/// Parsed once per process, so the variants' sizes do not matter.
#[allow(clippy::large_enum_variant)]
enum Invocation {
    Reloop(cli::Cli),
    Print(sdk::PrintArgs),
}

/// Parses the command line; a usage error quotes the argument it refuses, shown visibly.
fn parse<T: clap::Parser>() -> Result<T, error::Exit> {
    match T::try_parse() {
        Ok(args) => Ok(args),
        // Help and version are reloop's own text; clap prints them as it likes.
        Err(e) if !e.use_stderr() => e.exit(),
        Err(e) => {
            term::write_stderr(&term::visible(&e.render().to_string()));
            Err(error::Exit::BadInput)
        }
    }
}

fn main() -> ExitCode {
    // Processes reloop starts unconfined (hooks, MCP servers) must not read its environment.
    // Failing leaves reloop as exposed as any other process, so a failure is only ignored.
    let _ = reloop_tools::sandbox::protect_self();
    // Colour follows the terminal reloop was given, decided before a pager takes stdout.
    term::init_colour();
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let command = <cli::Cli as clap::CommandFactory>::command();
    let subcommands: Vec<&str> = command.get_subcommands().map(clap::Command::get_name).collect();
    // With no subcommand, reloop is Claude Code's `claude -p`, as the Agent SDKs run it.
    let invocation = if sdk::is_print_mode(&argv, &subcommands) {
        parse::<sdk::PrintArgs>().map(Invocation::Print)
    } else {
        parse::<cli::Cli>().map(Invocation::Reloop)
    };
    let invocation = match invocation {
        Ok(invocation) => invocation,
        Err(exit) => return exit.code(),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            term::errln!("reloop: cannot start the async runtime: {e}");
            return error::Exit::BadInput.code();
        }
    };
    let outcome = match invocation {
        Invocation::Reloop(args) => {
            // `reloop replay` of a session the SDKs drove prints their stream with their printer.
            let _ = cli::SDK_STREAM.set(sdk::replay::replay);
            runtime.block_on(cli::dispatch(args))
        }
        Invocation::Print(args) => runtime.block_on(sdk::run(args)),
    };
    // The pager shows everything the command wrote; the user may read on after an error too.
    term::pager::finish();
    let exit = match outcome {
        Ok(exit) => exit,
        Err(e) => {
            term::errln!("reloop: {e}");
            e.exit()
        }
    };
    // A tool thread that ignores its cancel flag (a read stuck on a device) must not keep the
    // process alive: the runtime gets a bounded time to wind down, and hardly any once a signal
    // ended the run (the tools' process groups are killed by then).
    runtime.shutdown_timeout(if launch::signals::ending() { ENDING_GRACE } else { SHUTDOWN_GRACE });
    term::flush_stdout();
    exit.code()
}
