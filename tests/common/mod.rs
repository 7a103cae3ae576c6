//! Helpers for the end-to-end tests: a workspace, the `reloop` binary, its journal.

#![allow(dead_code)]

pub mod fake_server;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub const LOGIN_TS: &str = include_str!("../../src/demo/login.ts");

/// A temporary workspace holding `src/auth/login.ts`, and a journal beside it.
pub struct Workspace {
    pub dir: tempfile::TempDir,
}

impl Workspace {
    pub fn seed() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("ws/src/auth")).unwrap();
        std::fs::write(dir.path().join("ws/src/auth/login.ts"), LOGIN_TS).unwrap();
        std::fs::write(dir.path().join("ws/README.md"), "# shop\n").unwrap();
        Workspace { dir }
    }

    pub fn cwd(&self) -> PathBuf {
        std::fs::canonicalize(self.dir.path().join("ws")).unwrap()
    }

    pub fn journal(&self) -> PathBuf {
        self.dir.path().join("journal.db")
    }

    /// Runs `reloop ARGS` with this workspace's journal.
    pub fn reloop(&self, args: &[&str]) -> Output {
        self.reloop_env(args, &[])
    }

    /// Runs `reloop ARGS` with extra environment variables (and no inherited provider keys).
    pub fn reloop_env(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_reloop"));
        cmd.args(args)
            .env("RELOOP_JOURNAL", self.journal())
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("ANTHROPIC_BASE_URL")
            .env_remove("OPENAI_API_KEY")
            .env_remove("ANTHROPIC_MODEL")
            .current_dir(self.dir.path());
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    }

    /// `reloop run PROMPT --script CASSETTE --cwd ws EXTRA...`
    pub fn run(&self, prompt: &str, cassette: &str, extra: &[&str]) -> Output {
        let cassette = cassette_path(cassette);
        let cwd = self.cwd();
        let mut args = vec!["run", prompt, "--script", cassette.to_str().unwrap(), "--cwd", cwd.to_str().unwrap()];
        args.extend_from_slice(extra);
        self.reloop(&args)
    }
}

pub fn cassette_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cassettes").join(name)
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Parses stream-json output, one object a line.
pub fn json_lines(output: &Output) -> Vec<serde_json::Value> {
    stdout(output).lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect()
}

/// Snapshot settings shared by every end-to-end test: snapshots live in `snapshots/`.
pub fn settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_snapshot_path(Path::new(env!("CARGO_MANIFEST_DIR")).join("snapshots"));
    s.set_prepend_module_to_snapshot(false);
    s
}
