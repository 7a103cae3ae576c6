//! `reloop doctor`: what containment this machine gives the processes tools start, measured.

use reloop_tools::sandbox::{Availability, Sandbox};

use super::CliError;
use crate::error::Exit;
use crate::options::JsonArg;

/// `reloop doctor`: prints the sandbox's state, its bwrap, the kernel's security modules and the cost of a
/// confined call; `json` for tools. Exit 0 either way: a machine without a sandbox is a fact
/// to report, and sessions on it still run (every command then asks).
#[derive(clap::Args, Debug)]
pub struct DoctorArgs {
    #[command(flatten)]
    pub json: JsonArg,
}

pub fn run(args: DoctorArgs) -> Result<Exit, CliError> {
    let json = args.json.json;
    let report = Sandbox::report();
    if json {
        let (available, why, bwrap) = match &report.availability {
            Availability::Available(sandbox) => (true, None, Some(sandbox.bwrap().display().to_string())),
            Availability::Unavailable(why) => (false, Some(why.clone()), None),
        };
        let value = serde_json::json!({
            "sandbox": {
                "available": available,
                "unavailable_because": why,
                "bwrap": bwrap,
                "bwrap_version": report.bwrap_version,
                "root": report.root,
                "lsm": report.lsm,
                "confined_call_ms": report.cost_ms.map(|c| c.0),
                "plain_call_ms": report.cost_ms.map(|c| c.1),
            }
        });
        crate::term::write_stdout(&format!("{value}\n"), false);
        return Ok(Exit::Success);
    }
    let mut lines = Vec::new();
    match &report.availability {
        Availability::Available(sandbox) => {
            let version = report.bwrap_version.as_deref().unwrap_or("bubblewrap");
            lines.push(format!("sandbox: available ({version} at {})", sandbox.bwrap().display()));
            lines.push(
                "  every Bash command runs confined, in every permission mode: the workspace read-only unless the \
                 command was approved to write, a private /tmp, no network unless the settings allow it, an \
                 allow-listed environment, deny-rule paths masked; its processes end with it"
                    .into(),
            );
        }
        Availability::Unavailable(why) => {
            lines.push(format!("sandbox: unavailable ({why})"));
            lines.push(
                "  every Bash command needs approval (a rule, bypassPermissions or a person); Read, Write, Edit, Glob \
                 and Grep keep their rules"
                    .into(),
            );
        }
    }
    if let Some(lsm) = &report.lsm {
        lines.push(format!("  kernel security modules: {lsm}"));
    }
    lines.push(format!(
        "  running as root: {}",
        if report.root { "yes (the sandbox drops every capability)" } else { "no (the sandbox uses a user namespace)" }
    ));
    if let Some((confined, plain)) = report.cost_ms {
        lines.push(format!("  a confined process starts in {confined:.1} ms (a plain one: {plain:.1} ms)"));
    }
    crate::term::write_stdout(&(lines.join("\n") + "\n"), false);
    Ok(Exit::Success)
}
