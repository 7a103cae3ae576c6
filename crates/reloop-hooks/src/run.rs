//! Running hook commands: `bash -c` in the session directory, in a process group of their own.

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{ExitStatus, Stdio};

use reloop_core::hook::HookRun;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin, Command};
use tokio_util::sync::CancellationToken;

use crate::config::HookCommand;
use crate::input::HookInput;

/// Output kept per stream; the rest is read (so the hook never blocks on a full pipe) and counted.
pub const MAX_HOOK_OUTPUT_BYTES: usize = 1024 * 1024;

/// The note added to stderr when a hook was stopped by a cancel.
pub const CANCELLED_NOTE: &str = "Hook cancelled";

/// Runs one hook to completion, timeout or cancel, and reports what happened; never fails and
/// never panics, because a broken hook must not take the loop down with it.
///
/// The hook reads `input` as JSON on stdin (closed after writing). Output is collected until the
/// command exits and both pipes close, so a background process still holding them keeps the
/// hook running, bounded by its timeout. On timeout or cancel the whole process group is killed.
pub async fn run_hook(cmd: &HookCommand, input: &HookInput, cwd: &Path, cancel: &CancellationToken) -> HookRun {
    run_hook_as(cmd, input, cwd, cancel, || Ok(bash(&cmd.command, cwd))).await
}

/// [`run_hook`], with the process made by `process` instead of a plain `bash -c`: a caller that
/// confines hooks (`reloop prop --hooks run`) wraps the command in its sandbox and gets the same
/// input, output bounds, timeout, cancel and process-group kill. An error making it (the
/// sandbox refused) is the run's stderr, as a failure to start is.
pub async fn run_hook_as(
    cmd: &HookCommand,
    input: &HookInput,
    cwd: &Path,
    cancel: &CancellationToken,
    process: impl FnOnce() -> Result<std::process::Command, String>,
) -> HookRun {
    let mut run = HookRun {
        command: cmd.command.clone(),
        exit_code: None,
        stdout: String::new(),
        stderr: String::new(),
        timed_out: false,
    };
    if cancel.is_cancelled() {
        run.stderr = CANCELLED_NOTE.to_string();
        return run;
    }
    if let Some(callback) = &cmd.callback {
        return run_callback(run, callback, cmd.timeout, input, cancel).await;
    }
    let payload = match serde_json::to_vec(input) {
        Ok(payload) => payload,
        Err(err) => {
            run.stderr = format!("Failed to encode hook input: {err}");
            return run;
        }
    };
    let mut child = match process().and_then(|p| spawn(p).map_err(|e| e.to_string())) {
        Ok(child) => child,
        Err(err) => {
            run.stderr = format!("Failed to run hook in {}: {err}", cwd.display());
            return run;
        }
    };
    let (mut stdout, mut stderr) = (Collected::default(), Collected::default());
    let end = {
        let (stdin, out_pipe, err_pipe) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
        let work = async {
            tokio::join!(feed(stdin, &payload), collect(out_pipe, &mut stdout), collect(err_pipe, &mut stderr));
            child.wait().await
        };
        tokio::select! {
            status = work => End::Exited(status),
            () = tokio::time::sleep(cmd.timeout) => End::TimedOut,
            () = cancel.cancelled() => End::Cancelled,
        }
    };
    run.stdout = stdout.into_text();
    run.stderr = stderr.into_text();
    match end {
        End::Exited(Ok(status)) => {
            run.exit_code = status.code();
            if let Some(note) = signal_note(status) {
                add_note(&mut run.stderr, &note);
            }
        }
        End::Exited(Err(err)) => {
            kill_group(&mut child).await;
            add_note(&mut run.stderr, &format!("Failed to wait for hook: {err}"));
        }
        End::TimedOut => {
            kill_group(&mut child).await;
            run.timed_out = true;
            add_note(&mut run.stderr, &format!("Hook timed out after {:?}", cmd.timeout));
        }
        End::Cancelled => {
            kill_group(&mut child).await;
            add_note(&mut run.stderr, CANCELLED_NOTE);
        }
    }
    run
}

/// Asks the caller for a callback hook's answer. The answer is the run's stdout with exit 0, so
/// it is interpreted (and journaled) exactly as a command's output; an error, a timeout or a
/// cancel is a run without an exit code, a non-blocking error.
async fn run_callback(
    mut run: HookRun,
    callback: &crate::config::CallbackHook,
    timeout: std::time::Duration,
    input: &HookInput,
    cancel: &CancellationToken,
) -> HookRun {
    let answer = callback.handler.call(&callback.id, input);
    tokio::select! {
        answer = answer => match answer {
            Ok(value) => {
                run.exit_code = Some(0);
                run.stdout = value.to_string();
            }
            Err(error) => run.stderr = format!("Hook callback {} failed: {error}", callback.id),
        },
        () = tokio::time::sleep(timeout) => {
            run.timed_out = true;
            run.stderr = format!("Hook timed out after {timeout:?}");
        }
        () = cancel.cancelled() => run.stderr = CANCELLED_NOTE.to_string(),
    }
    run
}

/// Runs every hook of one event in parallel; the runs come back in `cmds` order.
pub async fn run_all(cmds: &[HookCommand], input: &HookInput, cwd: &Path, cancel: &CancellationToken) -> Vec<HookRun> {
    futures::future::join_all(cmds.iter().map(|cmd| run_hook(cmd, input, cwd, cancel))).await
}

enum End {
    Exited(std::io::Result<ExitStatus>),
    TimedOut,
    Cancelled,
}

/// `process_group(0)` puts the shell and everything it starts in a group whose id is the shell's
/// pid, so one `killpg` reaches them all; `kill_on_drop` covers a caller that drops the future.
/// A hook runs as the user configured it, but without reloop's own credentials: its output
/// reaches the model and the journal.
/// `bash -c COMMAND` in `cwd`, reloop's credentials removed: how a hook runs unconfined.
fn bash(command: &str, cwd: &Path) -> std::process::Command {
    let mut bash = std::process::Command::new("bash");
    for name in reloop_sandbox::CREDENTIAL_VARS {
        bash.env_remove(name);
    }
    bash.arg("-c").arg(command).current_dir(cwd);
    bash
}

/// Starts a hook's process with its pipes, in a process group of its own (killed whole on a
/// timeout or cancel), killed if dropped.
fn spawn(process: std::process::Command) -> std::io::Result<Child> {
    Command::from(process)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
}

/// Writes the input and closes stdin. A hook that exits without reading is fine (broken pipe).
async fn feed(stdin: Option<ChildStdin>, payload: &[u8]) {
    if let Some(mut stdin) = stdin {
        let _ = stdin.write_all(payload).await;
        let _ = stdin.shutdown().await;
    }
}

/// Reads a pipe to its end into `into`. Appends as it goes, so whatever arrived before a timeout
/// is still there when this future is dropped.
async fn collect(pipe: Option<impl AsyncRead + Unpin>, into: &mut Collected) {
    let Some(mut pipe) = pipe else { return };
    let mut buf = [0u8; 8192];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => into.push(&buf[..n]),
        }
    }
}

/// Kills the hook's whole process group, then reaps the shell.
#[allow(unsafe_code)]
async fn kill_group(child: &mut Child) {
    // The shell has not been reaped yet (its wait never completed), so its pid, and with it the
    // group id, cannot have been reused.
    if let Some(pgid) = child.id().and_then(|pid| libc::pid_t::try_from(pid).ok()) {
        // SAFETY: killpg only sends a signal to the group we created with process_group(0).
        unsafe {
            libc::killpg(pgid, libc::SIGKILL);
        }
    }
    let _ = child.wait().await;
}

fn signal_note(status: ExitStatus) -> Option<String> {
    status.signal().map(|signal| format!("Hook killed by signal {signal}"))
}

/// Puts `note` on a line of its own at the end of `stderr`, where [`HookRun`] documents it.
fn add_note(stderr: &mut String, note: &str) {
    if !stderr.is_empty() && !stderr.ends_with('\n') {
        stderr.push('\n');
    }
    stderr.push_str(note);
}

/// One stream's output, bounded.
#[derive(Default)]
struct Collected {
    kept: Vec<u8>,
    dropped: usize,
}

impl Collected {
    fn push(&mut self, bytes: &[u8]) {
        let room = MAX_HOOK_OUTPUT_BYTES.saturating_sub(self.kept.len()).min(bytes.len());
        self.kept.extend_from_slice(&bytes[..room]);
        self.dropped += bytes.len() - room;
    }

    fn into_text(self) -> String {
        let mut text = String::from_utf8_lossy(&self.kept).into_owned();
        if self.dropped > 0 {
            text.push_str(&format!("\n... [{} bytes truncated]", self.dropped));
        }
        text
    }
}
