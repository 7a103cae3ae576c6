//! `reloop man`: the man page, generated from the same clap definition that parses the command
//! line, so it can never name a flag reloop does not take.

use clap::CommandFactory;

use super::{Cli, CliError};
use crate::error::Exit;

#[derive(clap::Args, Debug)]
pub struct ManArgs {}

/// The man page (section 1, roff), on stdout: the top-level page, then one page per
/// subcommand, as `man -l` reads them.
pub fn run(_: ManArgs) -> Result<Exit, CliError> {
    let mut command = Cli::command();
    // Built, so each subcommand carries the global flags (--no-pager) into its own page.
    command.build();
    let mut page = Vec::new();
    let render = |command: clap::Command, page: &mut Vec<u8>| {
        clap_mangen::Man::new(command)
            .render(page)
            .map_err(|e| CliError::Io(format!("cannot render the man page: {e}")))
    };
    render(command.clone(), &mut page)?;
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        let page_name = format!("reloop-{}", sub.get_name());
        let invoked = format!("reloop {}", sub.get_name());
        render(sub.clone().display_name(page_name).bin_name(invoked).version(env!("CARGO_PKG_VERSION")), &mut page)?;
    }
    super::completions::write_generated(page)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every argument of every subcommand, positional or not, hidden or not, says what it is
    /// for: `--help`, the completions and the man page all show it.
    #[test]
    fn every_option_has_help_text() {
        fn walk(command: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for arg in command.get_arguments() {
                let generated = matches!(arg.get_id().as_str(), "help" | "version");
                if !generated && arg.get_help().is_none() && arg.get_long_help().is_none() {
                    missing.push(format!("{path} {}", arg.get_id()));
                }
            }
            for sub in command.get_subcommands() {
                if sub.get_about().is_none() && sub.get_name() != "help" {
                    missing.push(format!("{path} {} (the subcommand)", sub.get_name()));
                }
                walk(sub, &format!("{path} {}", sub.get_name()), missing);
            }
        }
        let mut command = Cli::command();
        command.build();
        let mut missing = Vec::new();
        walk(&command, "reloop", &mut missing);
        assert!(missing.is_empty(), "arguments without help text:\n{}", missing.join("\n"));
    }
}
