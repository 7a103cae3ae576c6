//! Workspace trust: Claude Code lets the project's own settings file allow nothing until the
//! folder is trusted (`rule_sources/allow_project`, both versions). A repository can carry
//! `.claude/settings.json`, so its allow rules would otherwise let a checkout grant itself any
//! tool; its deny and ask rules only ever narrow what runs, and hold either way. The same holds
//! for `.claude/settings.local.json` once git tracks it (committed or only staged), since a
//! checkout then carries it too; untracked, it is the user's own (`rule_sources/local_*`, both
//! versions).
//!
//! The record is Claude Code's own: `projects[CWD].hasTrustDialogAccepted: true` in its global
//! config (`$CLAUDE_CONFIG_DIR/.claude.json`, else `~/.claude.json`), which its trust dialog
//! writes. An unreadable, oversized or malformed config, or a path that is not a plain file (a
//! FIFO, a device), trusts nothing.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The most of the global config read; a bigger one trusts nothing.
const MAX_CONFIG_BYTES: u64 = 64 * 1024 * 1024;

/// Claude Code's global config file, where its trust records are.
pub(crate) fn global_config() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir).join(".claude.json"));
    }
    std::env::var_os("HOME").filter(|h| !h.is_empty()).map(|home| PathBuf::from(home).join(".claude.json"))
}

/// Whether `config` records `cwd` as trusted.
pub(crate) fn trusted(cwd: &Path, config: Option<&Path>) -> bool {
    let Some(Ok(Some(text))) = config.map(|path| super::read_plain(path, MAX_CONFIG_BYTES)) else { return false };
    let Ok(value) = serde_json::from_str::<Value>(&text) else { return false };
    let key = cwd.display().to_string();
    value.get("projects").and_then(|p| p.get(&key)).and_then(|p| p.get("hasTrustDialogAccepted"))
        == Some(&Value::Bool(true))
}

/// How long git may take to say whether it tracks the local settings; past it, the file counts
/// as untracked, as Claude Code counts an answer it could not get.
const GIT_TIMEOUT: Duration = Duration::from_secs(5);

/// Whether git tracks `cwd`'s `.claude/settings.local.json` (in the index: committed, or only
/// added). Asked of `git ls-files --error-unmatch`, with the repository's fsmonitor hook
/// switched off so a checkout's own config runs nothing; no git, no repository, an error or no
/// answer within [`GIT_TIMEOUT`] is untracked, as Claude Code takes an indeterminate answer.
pub(crate) fn local_settings_tracked(cwd: &Path) -> bool {
    let child = Command::new("git")
        .arg("-C")
        .arg(cwd)
        .args(["--no-optional-locks", "-c", "core.fsmonitor=false", "ls-files", "--error-unmatch", "--"])
        .arg(Path::new(".claude").join("settings.local.json"))
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let Ok(mut child) = child else { return false };
    let deadline = Instant::now() + GIT_TIMEOUT;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status.success(),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return false;
            }
        }
    }
}

/// Said once per process, as Claude Code says it.
static WARNED: AtomicBool = AtomicBool::new(false);

/// Claude Code's words for the allow rules an untrusted workspace's settings lost, `files` the
/// settings files they were in (both versions print this on stderr, `rule_sources/allow_project`,
/// `rule_sources/local_tracked`).
pub(crate) fn ignored_text(count: usize, files: &[&str], cwd: &Path, config: Option<&Path>) -> String {
    let entries = if count == 1 { "entry" } else { "entries" };
    let files = files.join(" and ");
    let key = serde_json::to_string(&cwd.display().to_string()).unwrap_or_default();
    let config = config.map_or_else(|| "the global config".to_string(), |c| c.display().to_string());
    format!(
        "Ignoring {count} permissions.allow {entries} from {files}: this workspace has not been trusted. \
         Run Claude Code interactively here once and accept the trust dialog, or set \
         projects[{key}].hasTrustDialogAccepted: true in {config}."
    )
}

/// Prints [`ignored_text`] on stderr, the first time only.
pub(crate) fn warn_ignored(count: usize, files: &[&str], cwd: &Path, config: Option<&Path>) {
    if !WARNED.swap(true, Ordering::Relaxed) {
        crate::term::errln!("{}", ignored_text(count, files, cwd, config));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only a plain, well-formed config naming this very folder with `true` trusts it.
    #[test]
    fn only_an_explicit_record_for_the_folder_trusts_it() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join(".claude.json");
        let cwd = Path::new("/work/project");
        assert!(!trusted(cwd, Some(&config)), "no config");
        assert!(!trusted(cwd, None), "no config path");
        for (text, trusts) in [
            (r#"{"projects": {"/work/project": {"hasTrustDialogAccepted": true}}}"#, true),
            (r#"{"projects": {"/work/project": {"hasTrustDialogAccepted": "true"}}}"#, false),
            (r#"{"projects": {"/work/project": {"hasTrustDialogAccepted": false}}}"#, false),
            (r#"{"projects": {"/work": {"hasTrustDialogAccepted": true}}}"#, false),
            (r#"{"projects": {"/work/project/sub": {"hasTrustDialogAccepted": true}}}"#, false),
            (r#"{"projects": ["/work/project"]}"#, false),
            ("{not json", false),
        ] {
            std::fs::write(&config, text).unwrap();
            assert_eq!(trusted(cwd, Some(&config)), trusts, "{text}");
        }
    }

    /// A FIFO in the config's place trusts nothing and does not block the start.
    #[test]
    fn a_fifo_in_place_of_the_config_trusts_nothing_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join(".claude.json");
        assert!(std::process::Command::new("mkfifo").arg(&config).status().unwrap().success());
        assert!(!trusted(Path::new("/work/project"), Some(&config)));
    }

    /// Both versions' words (`rule_sources/allow_project`), the folder quoted as JSON.
    #[test]
    fn the_warning_is_claude_code_s() {
        let text = ignored_text(
            2,
            &[".claude/settings.json"],
            Path::new("/tmp/reloop-cc-project"),
            Some(Path::new("/tmp/reloop-cc-home/.claude.json")),
        );
        assert_eq!(
            text,
            "Ignoring 2 permissions.allow entries from .claude/settings.json: this workspace has not been trusted. Run \
             Claude Code interactively here once and accept the trust dialog, or set \
             projects[\"/tmp/reloop-cc-project\"].hasTrustDialogAccepted: true in /tmp/reloop-cc-home/.claude.json."
        );
        assert!(ignored_text(1, &[".claude/settings.local.json"], Path::new("/p"), None)
            .starts_with("Ignoring 1 permissions.allow entry from .claude/settings.local.json: "));
        let both = ignored_text(3, &[".claude/settings.json", ".claude/settings.local.json"], Path::new("/p"), None);
        assert!(both.starts_with(
            "Ignoring 3 permissions.allow entries from .claude/settings.json and .claude/settings.local.json: "
        ));
    }

    /// Git's index decides: a committed or an added local settings file is tracked; an untracked
    /// one, a folder outside any repository, or a repository whose config names an fsmonitor
    /// hook (which must not run) are not, or not by running it.
    #[test]
    fn the_local_settings_are_tracked_when_git_s_index_holds_them() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        std::fs::create_dir_all(cwd.join(".claude")).unwrap();
        std::fs::write(cwd.join(".claude/settings.local.json"), "{}").unwrap();
        assert!(!local_settings_tracked(cwd), "no repository");
        let git = |args: &[&str]| {
            let status = Command::new("git").arg("-C").arg(cwd).args(args).status().unwrap();
            assert!(status.success(), "git {args:?}");
        };
        git(&["init", "-q"]);
        assert!(!local_settings_tracked(cwd), "untracked");
        git(&["add", ".claude/settings.local.json"]);
        // A hostile checkout's fsmonitor hook, which a plain `git ls-files` runs.
        let marker = cwd.join("ran");
        git(&["config", "core.fsmonitor", &format!("touch {}", marker.display())]);
        assert!(local_settings_tracked(cwd), "added");
        assert!(!marker.exists(), "the repository's fsmonitor hook ran");
    }
}
