//! SIGINT, SIGTERM and SIGHUP end a run the same way: the loop is aborted (tool process groups
//! killed, the abort journaled) and reloop exits with 128 + the signal's number (130, 143, 129).
//!
//! Without this, SIGTERM and SIGHUP killed reloop at once, left the Bash command's process group
//! running as an orphan and journaled no abort. A second signal while the abort is under way ends
//! the process within [`SECOND_SIGNAL_GRACE`], and an abort that does not finish within [`GRACE`]
//! ends it too — after killing the process groups of reloop's own children — so ending reloop is
//! always bounded.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::signal::unix::{signal, Signal, SignalKind};
use tokio::task::JoinHandle;

use crate::error::{CliError, Exit};

/// How long an abort may take before the process ends without waiting for it.
pub const GRACE: Duration = Duration::from_secs(5);

/// How long the run may still take after a second signal.
pub const SECOND_SIGNAL_GRACE: Duration = Duration::from_secs(1);

/// Set once a run was told to end from outside (a signal, a closed stdout): the process then
/// leaves without waiting long for tool threads, whose process groups are killed anyway.
static ENDING: AtomicBool = AtomicBool::new(false);

/// Whether a signal or a closed stdout is ending this process.
pub fn ending() -> bool {
    ENDING.load(Ordering::SeqCst)
}

/// Marks the process as ending (see [`ending`]).
pub fn mark_ending() {
    ENDING.store(true, Ordering::SeqCst);
}

/// Asks the run to stop (the run handle's abort).
pub type Abort = Arc<dyn Fn() + Send + Sync>;

/// The signals reloop answers, listened to from before the run starts so none is missed.
pub struct Signals {
    received: Arc<AtomicI32>,
    run: Arc<Mutex<Option<Abort>>>,
    task: JoinHandle<()>,
}

/// The listening task of a run; dropping it stops listening.
pub struct Watch {
    received: Arc<AtomicI32>,
    task: JoinHandle<()>,
}

impl Signals {
    /// Takes over SIGINT, SIGTERM and SIGHUP for this process. Until a run is handed over with
    /// [`Signals::watch`] there is nothing to abort, so a signal ends the process at once (a
    /// run waiting for its prompt on stdin must not swallow SIGTERM).
    pub fn install() -> Result<Self, CliError> {
        let kinds = [
            (libc::SIGINT, SignalKind::interrupt()),
            (libc::SIGTERM, SignalKind::terminate()),
            (libc::SIGHUP, SignalKind::hangup()),
        ];
        let mut streams = Vec::with_capacity(kinds.len());
        for (number, kind) in kinds {
            let stream = signal(kind).map_err(|e| CliError::Io(format!("cannot listen for signal {number}: {e}")))?;
            streams.push((number, stream));
        }
        let received = Arc::new(AtomicI32::new(0));
        let run: Arc<Mutex<Option<Abort>>> = Arc::new(Mutex::new(None));
        let (task_received, task_run) = (received.clone(), run.clone());
        let task = tokio::spawn(async move {
            loop {
                let Some(number) = next_signal(&mut streams).await else { return };
                mark_ending();
                if let Err(first) = task_received.compare_exchange(0, number, Ordering::SeqCst, Ordering::SeqCst) {
                    // The abort normally ends the run within milliseconds; give it a moment to
                    // be journaled, but no more.
                    tokio::time::sleep(SECOND_SIGNAL_GRACE).await;
                    end_now(first);
                }
                let abort = task_run.lock().unwrap_or_else(|p| p.into_inner()).clone();
                let Some(abort) = abort else { end_now(number) };
                abort();
                tokio::spawn(async move {
                    tokio::time::sleep(GRACE).await;
                    end_now(number);
                });
            }
        });
        Ok(Signals { received, run, task })
    }

    /// From now on the first signal aborts the run behind `abort`; a second one, or an abort that
    /// outlasts [`GRACE`], ends the process.
    pub fn watch(self, abort: Abort) -> Watch {
        let received = self.received.load(Ordering::SeqCst);
        *self.run.lock().unwrap_or_else(|p| p.into_inner()) = Some(abort.clone());
        if received != 0 {
            // Arrived while the run was being handed over: the listener saw no run yet.
            abort();
        }
        Watch { received: self.received, task: self.task }
    }
}

impl Watch {
    /// The signal that ended the run, if one did.
    pub fn received(&self) -> Option<i32> {
        Some(self.received.load(Ordering::SeqCst)).filter(|n| *n != 0)
    }

    /// The exit code of a run a signal ended: 128 + its number, as a shell reports it.
    pub fn exit_code(&self) -> Option<Exit> {
        self.received().map(Exit::Signal)
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The number of the next signal of any of `streams`; `None` once none can arrive.
async fn next_signal(streams: &mut [(i32, Signal)]) -> Option<i32> {
    let waits = streams.iter_mut().map(|(number, stream)| {
        let number = *number;
        Box::pin(async move { stream.recv().await.map(|()| number) })
    });
    let (first, _, _) = futures::future::select_all(waits).await;
    first
}

/// Ends the process without waiting for the run: kills reloop's children's process groups (the
/// Bash commands and hooks, each started as a group of its own), then exits with 128 + `number`.
/// What was journaled stays; a resume takes the session over.
fn end_now(number: i32) -> ! {
    kill_child_groups();
    crate::term::flush_stdout();
    std::process::exit(Exit::Signal(number).status())
}

/// Kills the process group of every child of this process that leads one. Children found in
/// `/proc`; a child in reloop's own group is left alone (it would be reloop itself).
#[allow(unsafe_code)]
pub fn kill_child_groups() {
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else { return };
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        if let Some((ppid, pgrp)) = parent_and_group(&stat) {
            if ppid == me && pgrp == pid {
                if let Ok(group) = libc::pid_t::try_from(pgrp) {
                    // SAFETY: killpg only sends a signal, to a group our own child leads.
                    unsafe {
                        libc::killpg(group, libc::SIGKILL);
                    }
                }
            }
        }
    }
}

/// The parent pid and process group of a `/proc/PID/stat` line. The command name (field 2) may
/// hold spaces and parentheses, so fields are counted after its last `)`.
fn parent_and_group(stat: &str) -> Option<(u32, u32)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let _state = fields.next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some((ppid, pgrp))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_give_parent_and_group_even_with_odd_command_names() {
        assert_eq!(parent_and_group("42 (sleep) S 7 42 7 0 -1"), Some((7, 42)));
        assert_eq!(parent_and_group("42 (a) b) (c) R 1 9 9 0"), Some((1, 9)));
        assert_eq!(parent_and_group("42 (x"), None);
        assert_eq!(parent_and_group(""), None);
    }
}
