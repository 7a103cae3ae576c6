//! Bash: runs a shell command in the session's directory, bounded in time and output.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{ErrorKind, Read};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use reloop_sandbox::Access;

use crate::bash_classify::is_read_only_command;
use crate::confine::Containment;
use crate::error::ToolError;
use crate::input;
use crate::tool::{Tool, ToolContext, ToolOutput};

/// Timeout when the model gives none (ms).
pub(crate) const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// Longest timeout the model may ask for (ms); larger values are lowered to it.
pub(crate) const MAX_TIMEOUT_MS: u64 = 600_000;
/// Characters of output kept by default; the start is kept because that is where errors usually
/// begin. `BASH_MAX_OUTPUT_LENGTH` changes it, as in Claude Code, up to [`MAX_OUTPUT_CHARS_LIMIT`].
pub(crate) const MAX_OUTPUT_CHARS: usize = 30_000;
/// The most `BASH_MAX_OUTPUT_LENGTH` may raise the output to (Claude Code's bound).
pub(crate) const MAX_OUTPUT_CHARS_LIMIT: usize = 150_000;
/// The environment variable that sets how many characters of output are kept.
pub(crate) const MAX_OUTPUT_ENV: &str = "BASH_MAX_OUTPUT_LENGTH";

/// Config keys every read-only command runs with, as `git -c` would set them, so a repository
/// config the model managed to change cannot turn a "read-only" `git status` into a program run:
/// no fsmonitor hook, no hooks, no pager, no bare repository found by walking up, no gpg run
/// for signatures. Keys with no harmless value (`diff.external`, textconv and filter drivers)
/// are protected instead by refusing edits of `.git/` and git config files without approval.
pub(crate) const NEUTRAL_GIT_CONFIG: &[(&str, &str)] = &[
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("safe.bareRepository", "explicit"),
    ("log.showSignature", "false"),
];
/// How often the child, the clock and the cancel flag are checked while the output is open.
const POLL_INTERVAL_MS: i32 = 10;
/// How often once every writer closed the output: the command is ending, so its exit is near
/// and a 10 ms nap would add up to 10 ms to every call.
const EXIT_POLL_INTERVAL_MS: u64 = 1;

const DESCRIPTION: &str = "Executes a bash command in the session's working directory and returns its output \
(stdout and stderr interleaved as they were written). Each call runs in a fresh shell: use absolute paths or `cd` \
within the command. timeout is in milliseconds (default 120000, at most 600000); on timeout the command and all \
its child processes are killed. Output longer than 30000 characters is cut. A non-zero exit status is reported as \
an error together with the output. Do not use it for reading, searching or editing files: Read, Grep, Glob, Edit \
and Write do that better. Commands are not interactive: stdin is empty.";

/// The built-in Bash tool.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct BashTool;

impl Tool for BashTool {
    fn name(&self) -> &str {
        "Bash"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The command to execute"},
                "timeout": {"type": "integer", "description": "Optional timeout in milliseconds (max 600000)"},
                "description": {"type": "string", "description": "Clear, concise description of what this command does in 5-10 words"},
                "run_in_background": {"type": "boolean", "description": "Not supported by reloop; must be false or omitted."}
            },
            "required": ["command"],
            "additionalProperties": false
        })
    }

    fn is_read_only(&self, input: &Value) -> bool {
        input.get("command").and_then(Value::as_str).is_some_and(is_read_only_command)
    }

    fn is_concurrency_safe(&self, input: &Value) -> bool {
        self.is_read_only(input)
    }

    fn call(&self, input: &Value, ctx: &ToolContext) -> ToolOutput {
        match run(input, ctx) {
            Ok(output) => output,
            Err(err) => err.into(),
        }
    }
}

fn run(input: &Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    let command = input::string(input, "command")?;
    if input::opt_bool(input, "run_in_background") == Some(true) {
        return Err(ToolError::InvalidArgument(
            "run_in_background is not supported by reloop. Run the command in the foreground instead.".into(),
        ));
    }
    let timeout_ms = match input::opt_int(input, "timeout") {
        None => DEFAULT_TIMEOUT_MS,
        Some(ms) if ms > 0 => u64::try_from(ms).unwrap_or(MAX_TIMEOUT_MS).min(MAX_TIMEOUT_MS),
        Some(ms) => {
            return Err(ToolError::InvalidArgument(format!(
                "timeout must be a positive number of milliseconds, got {ms}"
            )))
        }
    };
    if ctx.is_cancelled() {
        return Err(ToolError::Interrupted);
    }
    let (reader, writer) = pipe().map_err(|err| ToolError::io("cannot create a pipe for", &ctx.cwd, err))?;
    let read_only = is_read_only_command(command);
    let mut child = spawn(command, ctx, writer, read_only)?;
    let mut output = Collected::new(max_output_chars(std::env::var(MAX_OUTPUT_ENV).ok().as_deref()));
    let mut reader = File::from(reader);
    let end = supervise(&mut child, &mut reader, &mut output, ctx, Duration::from_millis(timeout_ms));
    let text = output.render();
    Ok(match end {
        End::Exited(status) => {
            let output = finished(text, status, ctx.exit_code_first);
            let structured =
                (ctx.structured_results && !output.is_error).then(|| crate::structured::bash(command, &output.content));
            output.with_structured(structured)
        }
        End::TimedOut => ToolOutput::error(with_output(format!("Command timed out after {timeout_ms}ms"), &text)),
        End::Cancelled => ToolOutput::error(with_output(ToolError::Interrupted.to_string(), &text)),
        End::WaitFailed(err) => ToolOutput::error(with_output(format!("Error: cannot wait for bash: {err}"), &text)),
    })
}

fn with_output(message: String, output: &str) -> String {
    if output.is_empty() {
        message
    } else {
        format!("{message}\n{output}")
    }
}

/// The result of a command that ran to its end; a failure names its exit code before the output
/// when `code_first` (Claude Code: `Exit code 2\npartial\nbad`, `tool_results/errors`).
fn finished(text: String, status: ExitStatus, code_first: bool) -> ToolOutput {
    // A child killed by a signal reports as the shell would: 128 + the signal number.
    let code = status.code().or_else(|| status.signal().map(|s| 128 + s)).unwrap_or(1);
    match (code, text.is_empty()) {
        (0, true) => ToolOutput::ok(crate::structured::BASH_NO_OUTPUT),
        (0, false) => ToolOutput::ok(text),
        (_, true) => ToolOutput::error(format!("Exit code {code}")),
        (_, false) if code_first => ToolOutput::error(format!("Exit code {code}\n{text}")),
        (_, false) => ToolOutput::error(format!("{text}\nExit code {code}")),
    }
}

/// A close-on-exec pipe; the child gets the write end as both stdout and stderr, so the two
/// streams arrive interleaved in the order they were written.
#[allow(unsafe_code)]
fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: `fds` is a valid array of two ints for pipe2 to fill.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: pipe2 succeeded, so both descriptors are open and owned by nothing else.
    let (reader, writer) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // Non-blocking so the poll loop can drain what is there without waiting for writers to close:
    // a background process left behind by the command may keep the pipe open indefinitely.
    // SAFETY: fcntl on a descriptor we own, with flags it accepts.
    let flags = unsafe { libc::fcntl(reader.as_raw_fd(), libc::F_GETFL) };
    if flags < 0 || unsafe { libc::fcntl(reader.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok((reader, writer))
}

/// What a read-only command runs with: [`NEUTRAL_GIT_CONFIG`] as `GIT_CONFIG_*` variables (git
/// reads them like `-c` options), no pager, no prompt, no optional index refresh (so
/// `git status` writes nothing).
fn read_only_vars() -> Vec<(OsString, OsString)> {
    let mut vars: Vec<(OsString, OsString)> =
        vec![("GIT_CONFIG_COUNT".into(), NEUTRAL_GIT_CONFIG.len().to_string().into())];
    for (i, (key, value)) in NEUTRAL_GIT_CONFIG.iter().enumerate() {
        vars.push((format!("GIT_CONFIG_KEY_{i}").into(), (*key).into()));
        vars.push((format!("GIT_CONFIG_VALUE_{i}").into(), (*value).into()));
    }
    for (name, value) in
        [("GIT_PAGER", "cat"), ("PAGER", "cat"), ("GIT_TERMINAL_PROMPT", "0"), ("GIT_OPTIONAL_LOCKS", "0")]
    {
        vars.push((name.into(), value.into()));
    }
    vars
}

/// [`read_only_vars`] on a command that inherits reloop's environment, which must also lose
/// the `cd` search path and `less`'s input preprocessor (a confined command's environment is an
/// allow-list that holds neither).
pub(crate) fn read_only_env(command: &mut Command) {
    command.envs(read_only_vars()).env_remove("CDPATH").env_remove("LESSOPEN").env_remove("LESSCLOSE");
}

/// The output bound from `BASH_MAX_OUTPUT_LENGTH`: a positive number, at most
/// [`MAX_OUTPUT_CHARS_LIMIT`]; anything else leaves the default.
fn max_output_chars(setting: Option<&str>) -> usize {
    match setting.and_then(|s| s.trim().parse::<usize>().ok()) {
        Some(n) if n > 0 => n.min(MAX_OUTPUT_CHARS_LIMIT),
        _ => MAX_OUTPUT_CHARS,
    }
}

/// Starts `bash -c command` in its own process group so a timeout or abort can kill everything it
/// started, not just the shell. Confined ([`Containment::Confined`]), it runs in the session's
/// sandbox: a read-only command with the workspace read-only, any other (it was approved) with
/// the workspace writable, and the sandbox's allow-listed environment; killing the group kills
/// bwrap, which takes every process of the call with it. Unconfined, the credentials of
/// [`ToolContext::env`] are removed from reloop's environment. A read-only command also gets
/// [`NEUTRAL_GIT_CONFIG`] either way.
fn spawn(command: &str, ctx: &ToolContext, writer: OwnedFd, read_only: bool) -> Result<Child, ToolError> {
    let io = |err| ToolError::io("cannot run bash in", &ctx.cwd, err);
    let stderr = writer.try_clone().map_err(io)?;
    // The Command (holding our copies of the write end) is dropped at the end of this function,
    // so the pipe reports EOF once the child's side closes.
    let mut bash = match &ctx.containment {
        Containment::Unconfined => {
            let mut bash = Command::new("bash");
            bash.arg("-c").arg(command).current_dir(&ctx.cwd);
            for name in ctx.env.removed() {
                bash.env_remove(name);
            }
            if read_only {
                read_only_env(&mut bash);
            }
            bash
        }
        Containment::Confined(confinement) => {
            let access = if read_only { Access::ReadOnly } else { Access::Write };
            let mut call = confinement.call(access)?;
            if read_only {
                call.env = read_only_vars();
            }
            let args = [OsStr::new("-c"), OsStr::new(command)];
            confinement
                .sandbox()
                .command(confinement.policy(), &call, &ctx.cwd, OsStr::new("bash"), &args)
                .map_err(|err| ToolError::InvalidArgument(err.to_string()))?
        }
    };
    bash.stdin(Stdio::null()).stdout(Stdio::from(writer)).stderr(Stdio::from(stderr)).process_group(0);
    bash.spawn().map_err(io)
}

/// How a command's run ended.
enum End {
    Exited(ExitStatus),
    TimedOut,
    Cancelled,
    /// The OS could not report the child's status; the group was killed to leave nothing behind.
    WaitFailed(std::io::Error),
}

/// Reads output and watches the child, the clock and the cancel flag until one of them ends the run.
fn supervise(child: &mut Child, reader: &mut File, output: &mut Collected, ctx: &ToolContext, limit: Duration) -> End {
    let started = Instant::now();
    let mut open = true;
    loop {
        if open {
            wait_readable(reader);
            open = drain(reader, output);
        } else {
            std::thread::sleep(Duration::from_millis(EXIT_POLL_INTERVAL_MS));
        }
        if ctx.is_cancelled() {
            kill_group(child);
            drain(reader, output);
            return End::Cancelled;
        }
        if started.elapsed() >= limit {
            kill_group(child);
            drain(reader, output);
            return End::TimedOut;
        }
        match child.try_wait() {
            Ok(Some(status)) => {
                // Everything the shell wrote is in the pipe by now.
                drain(reader, output);
                return End::Exited(status);
            }
            Ok(None) => {}
            Err(err) => {
                kill_group(child);
                drain(reader, output);
                return End::WaitFailed(err);
            }
        }
    }
}

/// Blocks until the pipe has data or is closed, or the poll interval passes.
#[allow(unsafe_code)]
fn wait_readable(reader: &File) {
    let mut fd = libc::pollfd { fd: reader.as_raw_fd(), events: libc::POLLIN, revents: 0 };
    // SAFETY: one valid pollfd, for a descriptor that stays open during the call.
    unsafe {
        libc::poll(&mut fd, 1, POLL_INTERVAL_MS);
    }
}

/// Reads whatever is available; false once every writer has closed the pipe.
fn drain(reader: &mut File, output: &mut Collected) -> bool {
    let mut buf = [0u8; 16 * 1024];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => return false,
            Ok(n) => output.push(&buf[..n]),
            Err(err) if err.kind() == ErrorKind::Interrupted => {}
            Err(_) => return true,
        }
    }
}

/// Kills the command's whole process group, then reaps the shell.
#[allow(unsafe_code)]
fn kill_group(child: &mut Child) {
    if let Ok(pgid) = libc::pid_t::try_from(child.id()) {
        // SAFETY: killpg only sends a signal; the group id is the shell's pid (process_group(0)).
        unsafe {
            libc::killpg(pgid, libc::SIGKILL);
        }
    }
    let _ = child.wait();
}

/// Output kept up to a bound, with the rest only counted, so `yes` cannot exhaust memory: at
/// most `4 * max_chars` bytes (enough for `max_chars` characters of any UTF-8) are held.
struct Collected {
    max_chars: usize,
    kept: Vec<u8>,
    /// Bytes seen past `kept`.
    dropped_bytes: usize,
    /// Newlines among the dropped bytes, for the truncation note.
    dropped_newlines: usize,
}

impl Collected {
    fn new(max_chars: usize) -> Self {
        Collected { max_chars, kept: Vec::new(), dropped_bytes: 0, dropped_newlines: 0 }
    }

    fn push(&mut self, bytes: &[u8]) {
        let room = (self.max_chars * 4).saturating_sub(self.kept.len()).min(bytes.len());
        self.kept.extend_from_slice(&bytes[..room]);
        self.dropped_bytes += bytes.len() - room;
        self.dropped_newlines += bytes[room..].iter().filter(|&&b| b == b'\n').count();
    }

    /// The output as the model sees it, cut as Claude Code cuts it: the first `max_chars`
    /// characters, then `... [N lines truncated] ...` where N counts the lines of the rest.
    fn render(&self) -> String {
        let text = String::from_utf8_lossy(&self.kept);
        let text = if self.dropped_bytes == 0 { text.trim_end() } else { &text };
        let Some((end, _)) = text.char_indices().nth(self.max_chars) else {
            if self.dropped_bytes == 0 {
                return text.to_string();
            }
            // Only reachable if max_chars characters took more than 4 bytes each (invalid UTF-8
            // replaced); show what was kept and count the rest.
            return format!("{text}\n\n... [{} lines truncated] ...", self.dropped_newlines + 1);
        };
        let rest_newlines = text[end..].matches('\n').count() + self.dropped_newlines;
        format!("{}\n\n... [{} lines truncated] ...", &text[..end], rest_newlines + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collected_output_keeps_the_start_and_counts_the_lines_of_the_rest() {
        let mut out = Collected::new(MAX_OUTPUT_CHARS);
        let line = format!("{}\n", "é".repeat(99));
        for _ in 0..10_000 {
            out.push(line.as_bytes());
        }
        assert_eq!(out.kept.len(), MAX_OUTPUT_CHARS * 4, "memory stays bounded");
        let rendered = out.render();
        // 30000 characters are 300 whole lines: the rest is 9700 lines and the empty tail.
        let note = "\n\n... [9701 lines truncated] ...";
        assert_eq!(rendered, format!("{}{note}", line.repeat(300)));
    }

    #[test]
    fn the_output_bound_follows_bash_max_output_length_within_claude_codes_limit() {
        assert_eq!(max_output_chars(None), 30_000);
        assert_eq!(max_output_chars(Some("500")), 500);
        assert_eq!(max_output_chars(Some("999999")), 150_000);
        assert_eq!(max_output_chars(Some("0")), 30_000);
        assert_eq!(max_output_chars(Some("lots")), 30_000);
    }

    #[test]
    fn signal_deaths_report_128_plus_the_signal() {
        let status = ExitStatus::from_raw(libc::SIGKILL);
        assert_eq!(finished(String::new(), status, false), ToolOutput::error("Exit code 137"));
    }

    #[test]
    fn a_failure_names_its_exit_code_after_the_output_or_before_it_as_claude_code_does() {
        let exit_2 = ExitStatus::from_raw(2 << 8);
        let output = || "partial\nbad".to_string();
        assert_eq!(finished(output(), exit_2, false), ToolOutput::error("partial\nbad\nExit code 2"));
        assert_eq!(finished(output(), exit_2, true), ToolOutput::error("Exit code 2\npartial\nbad"));
        assert_eq!(finished(String::new(), exit_2, true), ToolOutput::error("Exit code 2"));
    }
}
