//! `reloop completions SHELL`: generated from the same clap definition that parses the command
//! line, so it can never name a flag reloop does not take.

use clap::CommandFactory;

use super::{Cli, CliError};
use crate::error::Exit;

#[derive(clap::Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// The completion script for the shell, on stdout.
pub fn run(args: CompletionsArgs) -> Result<Exit, CliError> {
    let mut command = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "reloop", &mut script);
    write_generated(script)
}

/// Writes generated text to stdout.
pub(crate) fn write_generated(bytes: Vec<u8>) -> Result<Exit, CliError> {
    let text = String::from_utf8(bytes).map_err(|e| CliError::Io(format!("generated text is not UTF-8: {e}")))?;
    crate::term::write_stdout(&text, false);
    Ok(Exit::Success)
}
