//! Shared fixtures: a temporary workspace and a way to call a built-in tool through the registry.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use reloop_tools::{ToolContext, ToolOutput, ToolRegistry};
use serde_json::Value;

/// A temporary directory used as the session's working directory.
pub struct Workspace {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub ctx: ToolContext,
    pub registry: ToolRegistry,
}

impl Workspace {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        // The driver hands tools a canonical cwd; /tmp may be a symlink on some systems.
        let root = std::fs::canonicalize(dir.path()).expect("canonical tempdir");
        let ctx = ToolContext::new(root.clone());
        Workspace { _dir: dir, root, ctx, registry: ToolRegistry::builtin() }
    }

    /// Writes `content` at `rel`, creating parent directories.
    pub fn file(&self, rel: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, content).expect("write");
        path
    }

    /// Sets a file's modification time to `secs` seconds after the epoch.
    pub fn set_mtime(&self, rel: &str, secs: u64) {
        let file = std::fs::File::options().write(true).open(self.root.join(rel)).expect("open");
        file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(secs)).expect("set_modified");
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    pub fn read_to_string(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root.join(rel)).expect("read")
    }

    pub fn run(&self, tool: &str, input: Value) -> ToolOutput {
        self.registry.execute(tool, &input, &self.ctx)
    }

    /// Runs a tool expecting success, returning its text.
    pub fn ok(&self, tool: &str, input: Value) -> String {
        let out = self.run(tool, input);
        assert!(!out.is_error, "{tool} failed: {}", out.content);
        out.content
    }

    /// Runs a tool expecting an error, returning its text.
    pub fn err(&self, tool: &str, input: Value) -> String {
        let out = self.run(tool, input);
        assert!(out.is_error, "{tool} unexpectedly succeeded: {}", out.content);
        out.content
    }
}

pub fn abs(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}
