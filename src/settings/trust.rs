//! Workspace trust: Claude Code lets the project's own settings file allow nothing until the
//! folder is trusted (`rule_sources/allow_project`, both versions). A repository can carry
//! `.claude/settings.json`, so its allow rules would otherwise let a checkout grant itself any
//! tool; its deny and ask rules only ever narrow what runs, and hold either way.
//!
//! The record is Claude Code's own: `projects[CWD].hasTrustDialogAccepted: true` in its global
//! config (`$CLAUDE_CONFIG_DIR/.claude.json`, else `~/.claude.json`), which its trust dialog
//! writes. An unreadable, oversized or malformed config, or a path that is not a plain file (a
//! FIFO, a device), trusts nothing.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

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

/// Said once per process, as Claude Code says it.
static WARNED: AtomicBool = AtomicBool::new(false);

/// Claude Code's words for the allow rules an untrusted workspace's settings lost (both
/// versions print this on stderr, `rule_sources/allow_project`).
pub(crate) fn ignored_text(count: usize, cwd: &Path, config: Option<&Path>) -> String {
    let entries = if count == 1 { "entry" } else { "entries" };
    let key = serde_json::to_string(&cwd.display().to_string()).unwrap_or_default();
    let config = config.map_or_else(|| "the global config".to_string(), |c| c.display().to_string());
    format!(
        "Ignoring {count} permissions.allow {entries} from .claude/settings.json: this workspace has not been trusted. \
         Run Claude Code interactively here once and accept the trust dialog, or set \
         projects[{key}].hasTrustDialogAccepted: true in {config}."
    )
}

/// Prints [`ignored_text`] on stderr, the first time only.
pub(crate) fn warn_ignored(count: usize, cwd: &Path, config: Option<&Path>) {
    if !WARNED.swap(true, Ordering::Relaxed) {
        crate::term::errln!("{}", ignored_text(count, cwd, config));
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
        let text =
            ignored_text(2, Path::new("/tmp/reloop-cc-project"), Some(Path::new("/tmp/reloop-cc-home/.claude.json")));
        assert_eq!(
            text,
            "Ignoring 2 permissions.allow entries from .claude/settings.json: this workspace has not been trusted. Run \
             Claude Code interactively here once and accept the trust dialog, or set \
             projects[\"/tmp/reloop-cc-project\"].hasTrustDialogAccepted: true in /tmp/reloop-cc-home/.claude.json."
        );
        assert!(ignored_text(1, Path::new("/p"), None).starts_with("Ignoring 1 permissions.allow entry from"));
    }
}
