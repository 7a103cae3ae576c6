//! A launched session run to its end: its events shown as they come, signals and a closed stdout
//! turned into an abort, and the exit code of how it ended.

use std::sync::Arc;

use futures::StreamExt;
use reloop_driver::{RunEvent, RunHandle, RunResult};

use super::signals::{self, Signals, Watch};
use crate::error::{CliError, Exit};
use crate::options::OutputFormat;
use crate::term::output::Printer;

/// Prints the run as it goes and returns its exit code; SIGINT, SIGTERM and SIGHUP abort it.
pub(crate) async fn drive(handle: RunHandle, format: OutputFormat) -> Result<Exit, CliError> {
    let signals = Signals::install()?;
    let (_, code) = drive_with(handle, &mut Printer::new(format, false).live(), signals).await?;
    Ok(code)
}

/// What shows a live run's events: reloop's own [`Printer`], or the print mode's Claude Code
/// lines.
pub(crate) trait ShowEvents {
    fn on_event(&mut self, event: &RunEvent);
}

impl ShowEvents for Printer {
    fn on_event(&mut self, event: &RunEvent) {
        Printer::on_event(self, event)
    }
}

/// Runs `handle` to its end, showing its events. A signal aborts the run, and so does a stdout
/// nobody reads any more (as SIGPIPE would end a program that cannot write); see
/// [`live_exit_code`].
pub(crate) async fn drive_with(
    mut handle: RunHandle,
    printer: &mut impl ShowEvents,
    signals: Signals,
) -> Result<(RunResult, Exit), CliError> {
    let abort = handle.abort_handle();
    let on_signal = handle.abort_handle();
    let watch = signals.watch(Arc::new(move || on_signal.abort()));
    let mut result: Option<RunResult> = None;
    let mut reader_gone = false;
    let mut live = super::otel::Live::start();
    while let Some(event) = handle.next().await {
        printer.on_event(&event);
        if let Some(live) = &mut live {
            live.on_event(&event);
        }
        if let RunEvent::Finished(r) = event {
            result = Some(r);
        }
        if !reader_gone && crate::term::stdout_closed() {
            reader_gone = true;
            signals::mark_ending();
            abort.abort();
        }
    }
    handle.finish().await?;
    if let Some(live) = live {
        // The last spans are sent off the runtime's threads; bounded, and only warned about.
        let _ = tokio::task::spawn_blocking(move || live.finish()).await;
    }
    let result = result.ok_or_else(|| CliError::Io("the run ended without a result".into()))?;
    let code = live_exit_code(&watch, reader_gone, result.is_error);
    Ok((result, code))
}

/// How a live run ends: 128 + the number of the signal that stopped it, 141 when its stdout was
/// closed, else 1 for a run that ended in error and 0 otherwise. After a signal or a closed
/// stdout, whatever the tools left alive is killed.
pub(crate) fn live_exit_code(watch: &Watch, reader_gone: bool, is_error: bool) -> Exit {
    match (watch.exit_code(), reader_gone) {
        (Some(code), _) => {
            // The tools were told to stop; anything of theirs still alive goes now.
            signals::kill_child_groups();
            code
        }
        (None, true) => {
            signals::kill_child_groups();
            Exit::Signal(libc::SIGPIPE)
        }
        (None, false) if is_error => Exit::Failed,
        (None, false) => Exit::Success,
    }
}
