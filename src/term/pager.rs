//! Long output through the user's pager when stdout is a terminal, as git does.
//!
//! The pager is `RELOOP_PAGER`, else `PAGER`, else `less -FRX` (quit when the text fits one
//! screen, keep colours, leave the text on screen); an empty `RELOOP_PAGER` or `PAGER`, or
//! `--no-pager`, turns it off, and a stdout that is not a terminal never gets one. The command
//! runs under `sh -c`, as git runs it, so it may carry arguments and quotes. Quitting the pager
//! early closes its stdin: reloop's next write fails, stdout counts as closed
//! ([`crate::term::stdout_closed`]) and the command ends quietly with exit 0.

use std::io::IsTerminal;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;

/// The running pager, waited for at the end of the command.
static PAGER: Mutex<Option<Child>> = Mutex::new(None);

/// What runs when neither `RELOOP_PAGER` nor `PAGER` is set.
pub const DEFAULT_PAGER: &str = "less -FRX";

/// The pager command the environment asks for; `None` when it asks for none.
fn command() -> Option<String> {
    let chosen = match std::env::var("RELOOP_PAGER") {
        Ok(pager) => pager,
        Err(_) => std::env::var("PAGER").unwrap_or_else(|_| DEFAULT_PAGER.to_string()),
    };
    let chosen = chosen.trim().to_string();
    (!chosen.is_empty()).then_some(chosen)
}

/// Starts the pager if stdout is a terminal and nothing turned it off; from then on stdout goes
/// to it. A pager that cannot start leaves stdout as it was.
pub fn start(disabled: bool) {
    // Colour is decided by the terminal, not by the pipe to the pager.
    crate::term::init_colour();
    if disabled || !std::io::stdout().is_terminal() {
        return;
    }
    let Some(pager) = command() else { return };
    let mut command = Command::new("sh");
    command.arg("-c").arg(&pager).stdin(Stdio::piped());
    // As git does: a bare `less` gets the options that make short output behave.
    if std::env::var_os("LESS").is_none() {
        command.env("LESS", "FRX");
    }
    if std::env::var_os("LV").is_none() {
        command.env("LV", "-c");
    }
    let Ok(mut child) = command.spawn() else { return };
    let Some(input) = child.stdin.take() else { return };
    crate::term::send_stdout_to(input);
    if let Ok(mut running) = PAGER.lock() {
        *running = Some(child);
    }
}

/// Ends the text: closes the pager's stdin and waits until the user quits it.
pub fn finish() {
    crate::term::flush_stdout();
    drop(crate::term::take_pager_input());
    let child = PAGER.lock().ok().and_then(|mut running| running.take());
    if let Some(mut child) = child {
        let _ = child.wait();
    }
}
