//! The tool contract the driver codes against: a context, an output, and the [`Tool`] trait.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::confine::Containment;
pub use crate::output::ToolOutput;
pub use crate::path_filter::PathFilter;

/// What a tool call may see of its session.
///
/// Cloning is cheap and clones share the cancel flag and the read set, because the driver hands a
/// clone to each blocking task while keeping one to raise the abort.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// The session's working directory (absolute, canonical); relative tool paths resolve here.
    pub cwd: PathBuf,
    /// Set by the driver on abort; long tools (Bash, big greps) poll it and stop early.
    pub cancel: Arc<AtomicBool>,
    /// Canonical paths of the files this session read, for Write/Edit's read-first rule, each
    /// with how its last Read saw it when the profile answers unchanged reads
    /// ([`ToolContext::unchanged_read`]; `None`: no such stamp, or the file was written since).
    pub files_read: Arc<Mutex<HashMap<PathBuf, Option<ReadStamp>>>>,
    /// Files a Read deny rule hides: Grep does not search them and Glob does not list them.
    pub hidden: Option<PathFilter>,
    /// What the processes tools start (Bash) may inherit of reloop's environment, unconfined.
    pub env: ToolEnvPolicy,
    /// The sandbox the processes tools start run in ([`Containment::Unconfined`] by default).
    pub containment: Containment,
    /// Write and Edit refuse an existing file the session has not read (Claude Code 2.1.197's
    /// rule; 2.1.332 dropped it). On by default.
    pub require_read: bool,
    /// The answer to a Read of a file unchanged since this session last read the same part of
    /// it (Claude Code 2.1.197's "Wasted call"); `None`: the content again.
    pub unchanged_read: Option<&'static str>,
    /// What a Write's or an Edit's result ends with when the model knows the file as written,
    /// the Edit of a `replace_all` then saying so too (Claude Code's wording, flag 24); `None`:
    /// reloop's own texts.
    pub written_note: Option<&'static str>,
    /// A failed command's result opens with `Exit code N`, its output after it (Claude Code's
    /// order, flag 30); off: the output, then `Exit code N`.
    pub exit_code_first: bool,
    /// Where a tool saves what it also shows the model by path (Claude Code 2.1.332's
    /// `<session>/tool-results/` beside the transcript: an MCP result's images); `None`: nothing
    /// is saved.
    pub results_dir: Option<PathBuf>,
    /// Tools describe what they did as data too ([`crate::ToolOutput::structured`], Claude
    /// Code's `tool_use_result`, kept under flag 12). Off by default: building it costs a copy
    /// of what was read and, for Write and Edit, the file's old text and a diff, which a session
    /// that does not keep it should not pay.
    pub structured_results: bool,
}

/// A file as a Read saw it: the part read (offset, limit as given), its length and its
/// modification time. Equal stamps mean the same part of an unchanged file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadStamp {
    /// Offset and limit as the model gave them: another part of the file is a new read.
    part: (Option<i64>, Option<i64>),
    /// The size then; a change of size alone shows a rewrite within the clock's resolution.
    len: u64,
    /// The modification time then; `None` (no clock on this file system) never counts as
    /// unchanged.
    modified: Option<std::time::SystemTime>,
}

impl ReadStamp {
    /// The stamp of `path` now, for the given part.
    pub fn of(path: &Path, part: (Option<i64>, Option<i64>)) -> Option<Self> {
        let meta = std::fs::metadata(path).ok()?;
        Some(ReadStamp { part, len: meta.len(), modified: meta.modified().ok() })
    }
}

pub use reloop_sandbox::CREDENTIAL_VARS;

/// Which environment variables are removed from the processes tools start.
///
/// A read-only Bash command such as `env` would otherwise put reloop's API key into the tool
/// result, and from there into the journal, the stream-json output and every export.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolEnvPolicy {
    removed: Vec<String>,
    /// Names the user keeps (`--tool-env-keep`): they pass the sandbox's allow-list too.
    kept: Vec<String>,
}

impl Default for ToolEnvPolicy {
    fn default() -> Self {
        ToolEnvPolicy::new::<&str>(&[], &[])
    }
}

impl ToolEnvPolicy {
    /// [`CREDENTIAL_VARS`] plus `secret` names are removed, except those named in `keep`.
    pub fn new<S: AsRef<str>>(secret: &[S], keep: &[S]) -> Self {
        let keep: Vec<&str> = keep.iter().map(AsRef::as_ref).collect();
        let mut removed: Vec<String> = Vec::new();
        for name in CREDENTIAL_VARS.iter().copied().chain(secret.iter().map(AsRef::as_ref)) {
            if !keep.contains(&name) && !removed.iter().any(|r| r == name) {
                removed.push(name.to_string());
            }
        }
        ToolEnvPolicy { removed, kept: keep.iter().map(|k| k.to_string()).collect() }
    }

    /// The names the user keeps, which a confined process may inherit.
    pub fn kept(&self) -> &[String] {
        &self.kept
    }

    /// The names removed, in order.
    pub fn removed(&self) -> &[String] {
        &self.removed
    }
}

impl ToolContext {
    /// A fresh context: not cancelled, nothing read yet.
    pub fn new(cwd: PathBuf) -> Self {
        ToolContext {
            cwd,
            cancel: Arc::new(AtomicBool::new(false)),
            files_read: Arc::new(Mutex::new(HashMap::new())),
            hidden: None,
            env: ToolEnvPolicy::default(),
            containment: Containment::Unconfined,
            require_read: true,
            unchanged_read: None,
            written_note: None,
            exit_code_first: false,
            results_dir: None,
            structured_results: false,
        }
    }

    /// Whether the session last read this very part of `path`, and the file has not changed
    /// since (its length and modification time are the same).
    pub fn read_unchanged(&self, path: &Path, stamp: &ReadStamp) -> bool {
        let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let read = self.files_read.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        stamp.modified.is_some() && read.get(&canonical).is_some_and(|last| last.as_ref() == Some(stamp))
    }

    /// Forgets how files looked when read (they still count as read): after a compaction the
    /// earlier results an "unchanged" answer would point at are out of the model's view.
    pub fn forget_read_stamps(&self) {
        let mut read = self.files_read.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        read.values_mut().for_each(|stamp| *stamp = None);
    }

    /// Whether the driver has asked the running call to stop.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.load(Ordering::SeqCst)
    }

    /// Records that `path` (canonicalized when possible) was read, so Write/Edit may touch it,
    /// and how the read saw it (`None` after a write, whose content the model wrote itself).
    pub fn mark_read(&self, path: &std::path::Path, stamp: Option<ReadStamp>) {
        let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        // A poisoned lock only means another call panicked mid-insert; the map is still usable.
        let mut read = self.files_read.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        read.insert(canonical, stamp);
    }

    /// Whether `path` (canonicalized when possible) was read in this session.
    pub fn was_read(&self, path: &std::path::Path) -> bool {
        !self.require_read || self.has_read(path)
    }

    /// Whether `path` was read (or written) in this session, whatever the read-first rule: an
    /// Edit of a file never read changes what the model has not seen.
    pub fn has_read(&self, path: &std::path::Path) -> bool {
        let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let read = self.files_read.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        read.contains_key(&canonical)
    }
}

/// A tool the model can call.
///
/// Calls are synchronous: only the driver awaits, running each call inside
/// `tokio::task::spawn_blocking`, so a tool is free to block on files and processes. Cancellation
/// is cooperative through [`ToolContext::cancel`]. `input` has already been validated against
/// [`Tool::input_schema`] when it comes through [`crate::ToolRegistry`].
pub trait Tool: Send + Sync {
    /// The name the model calls the tool by, and rules and hooks match on (`Read`, `Bash`).
    fn name(&self) -> &str;
    /// The text the model is given to decide when and how to use the tool.
    fn description(&self) -> &str;
    /// A JSON schema (`"type": "object"`) the model is given and the registry validates against.
    fn input_schema(&self) -> Value;
    /// Whether the call only reads (used for permissions and crash-resume re-runs).
    fn is_read_only(&self, input: &Value) -> bool;
    /// Whether the call may run in parallel with other safe calls.
    fn is_concurrency_safe(&self, input: &Value) -> bool;
    /// Whether the call answers at once from memory, with nothing that can block (no file, no
    /// process, no network): the driver then runs it on the loop's own thread, sparing it the
    /// round trip through the blocking pool. No built-in tool says so (a file read can stall on
    /// a slow disk); in-memory tools and test doubles may.
    fn is_instant(&self, _input: &Value) -> bool {
        false
    }
    /// Whether the tool checks its input against its schema itself, in its own words (the
    /// registry then does not): `StructuredOutput`'s errors are Claude Code's, not the registry's.
    fn validates_own_input(&self) -> bool {
        false
    }
    /// Runs the call. Never panics: a failure is a [`ToolOutput::error`] worded for the model.
    fn call(&self, input: &Value, ctx: &ToolContext) -> ToolOutput;
}
