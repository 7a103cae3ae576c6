//! Claude Code's settings hierarchy for print mode: the user, project and local settings files,
//! which of them `--setting-sources` lets in, and `--settings` on top, merged as Claude Code
//! merges them.
//!
//! What the recordings under `tests/print/recorded/*/settings_sources/` show, for 2.1.197 and
//! 2.1.332 alike:
//! * with no `--setting-sources`, all three files are read (the Python SDK passes the flag only
//!   when `setting_sources` is set, so an SDK app that leaves it unset gets all three too);
//!   `--setting-sources=` (empty) reads none; `--settings` is read whatever the sources say;
//! * a scalar (`model`, each `env` variable) comes from the highest layer that sets it:
//!   `--settings` over local over project over user;
//! * lists are joined: every layer's `UserPromptSubmit` hook ran, in the order user, project,
//!   local, `--settings`; a project `deny` rule held although only the user file had rules.

use std::path::{Path, PathBuf};

use reloop_core::RuleSource;
use reloop_hooks::{PermissionRules, Settings};
use serde_json::{Map, Value};

use crate::error::CliError;

/// One settings file Claude Code can read, named as `--setting-sources` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// `~/.claude/settings.json` (`$CLAUDE_CONFIG_DIR/settings.json` when that is set).
    User,
    /// `<cwd>/.claude/settings.json`, shared with the project.
    Project,
    /// `<cwd>/.claude/settings.local.json`, this machine's own.
    Local,
}

impl Source {
    /// Lowest precedence first: the order the layers are merged in.
    const ALL: [Source; 3] = [Source::User, Source::Project, Source::Local];

    /// The origin Claude Code names a rule of this file by (`ruleSource`).
    fn rule_source(self) -> RuleSource {
        match self {
            Source::User => RuleSource::UserSettings,
            Source::Project => RuleSource::ProjectSettings,
            Source::Local => RuleSource::LocalSettings,
        }
    }

    fn parse(name: &str) -> Option<Source> {
        match name {
            "user" => Some(Source::User),
            "project" => Some(Source::Project),
            "local" => Some(Source::Local),
            _ => None,
        }
    }
}

/// Which layers a session reads: `--setting-sources` as given (`None`: not given).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sources(Vec<Source>);

impl Sources {
    /// `None` (flag absent) reads every layer, as both recorded versions do; an empty value reads
    /// none; an unknown name is refused rather than silently reading less than asked.
    pub(crate) fn parse(flag: Option<&str>) -> Result<Sources, CliError> {
        let Some(text) = flag else { return Ok(Sources(Source::ALL.to_vec())) };
        let mut wanted = Vec::new();
        for name in text.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let source = Source::parse(name).ok_or_else(|| {
                CliError::Usage(format!(
                    "--setting-sources: unknown source {name:?} (expected user, project or local, comma-separated)"
                ))
            })?;
            if !wanted.contains(&source) {
                wanted.push(source);
            }
        }
        Ok(Sources(Source::ALL.into_iter().filter(|s| wanted.contains(s)).collect()))
    }

    /// Whether `source` is read.
    pub(crate) fn reads(&self, source: Source) -> bool {
        self.0.contains(&source)
    }
}

/// Where the user's Claude Code folder is: `$CLAUDE_CONFIG_DIR`, else `$HOME/.claude`.
pub(crate) fn user_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    std::env::var_os("HOME").filter(|h| !h.is_empty()).map(|home| PathBuf::from(home).join(".claude"))
}

/// The file a layer lives in.
fn path_of(source: Source, cwd: &Path, user: Option<&Path>) -> Option<PathBuf> {
    match source {
        Source::User => user.map(|dir| dir.join("settings.json")),
        Source::Project => Some(cwd.join(".claude").join("settings.json")),
        Source::Local => Some(cwd.join(".claude").join("settings.local.json")),
    }
}

/// The most a settings file may hold; a bigger one is refused rather than read into memory.
const MAX_SETTINGS_BYTES: u64 = 16 * 1024 * 1024;

/// The merged settings of a session, and the `--settings` file when one was named (a resume
/// re-reads that file's hooks).
#[derive(Debug)]
pub(crate) struct Loaded {
    /// Every layer read, merged.
    pub settings: Settings,
    /// The `--settings` file, canonical, when the flag named a file rather than inline JSON.
    pub flag_path: Option<PathBuf>,
    /// The `model` the merged settings ask for, if any.
    pub model: Option<String>,
}

/// Reads the layers `sources` allows from `cwd` and `user` (the user's Claude Code folder), then
/// `--settings` (`flag`: a file, relative to `cwd`, or an inline JSON object), and merges them;
/// the project file's allow rules, and the local file's when git tracks it, count only if
/// `config` (Claude Code's global config, [`global_config`]) trusts `cwd`.
/// A missing file is no layer; an unreadable or malformed one is a usage error naming it, with
/// the JSON path of a bad value.
pub(crate) fn load(
    flag: Option<&str>,
    sources: &Sources,
    cwd: &Path,
    user: Option<&Path>,
    config: Option<&Path>,
) -> Result<Loaded, CliError> {
    let mut merged = Value::Object(Map::new());
    // Each rule with the layer it came from: the first layer that lists it, as the lists join.
    let mut rules = PermissionRules::default();
    // The allow rules an untrusted folder's shared settings lost, and their files (see `trust`).
    let (mut ignored, mut ignored_files) = (0, Vec::new());
    let mut add = |layer: Value, source: RuleSource| -> Result<(), CliError> {
        let mut layer_rules = parse_layer(&layer.to_string(), source.as_str())?.permissions.from_source(source);
        let shared = match source {
            RuleSource::ProjectSettings => Some(".claude/settings.json"),
            RuleSource::LocalSettings => Some(".claude/settings.local.json"),
            _ => None,
        };
        if let Some(file) = shared.filter(|_| !layer_rules.allow.is_empty()) {
            // Git is asked only when the answer matters: in a folder not trusted.
            let gated = || source == RuleSource::ProjectSettings || trust::local_settings_tracked(cwd);
            if !trust::trusted(cwd, config) && gated() {
                ignored += std::mem::take(&mut layer_rules.allow).len();
                ignored_files.push(file);
            }
        }
        rules.join(layer_rules);
        merge(&mut merged, layer);
        Ok(())
    };
    for source in Source::ALL.into_iter().filter(|s| sources.reads(*s)) {
        let Some(path) = path_of(source, cwd, user) else { continue };
        if let Some(layer) = read_layer(&path)? {
            add(layer, source.rule_source())?;
        }
    }
    let mut flag_path = None;
    match flag.map(str::trim) {
        None | Some("") => {}
        Some(text) if text.starts_with('{') => add(parse_json(text, "--settings")?, RuleSource::FlagSettings)?,
        Some(file) => {
            let path = cwd.join(file);
            let layer = read_layer(&path)?.ok_or_else(|| {
                CliError::Usage(format!("cannot read settings file {}: no such file", path.display()))
            })?;
            add(layer, RuleSource::FlagSettings)?;
            flag_path = Some(std::fs::canonicalize(&path).unwrap_or(path));
        }
    }
    if ignored > 0 {
        trust::warn_ignored(ignored, &ignored_files, cwd, config);
    }
    let model = merged.get("model").and_then(Value::as_str).filter(|m| !m.is_empty()).map(str::to_string);
    let text = merged.to_string();
    let mut settings = Settings::from_json(&text, "merged settings").map_err(|e| CliError::Usage(e.to_string()))?;
    settings.permissions = rules;
    Ok(Loaded { settings, flag_path, model })
}

/// Puts the merged settings' `env` into this process's environment, as Claude Code does at start,
/// so tool and hook processes inherit it (a hook in the recordings saw the local file's value of
/// a variable all three files set) and `ANTHROPIC_MODEL` set there counts. Strings, numbers and
/// booleans are taken as text; a name or value no environment can hold is skipped. Call it before
/// anything else runs: the environment is process-wide.
pub(crate) fn apply_env(settings: &Settings) {
    let Some(Value::Object(env)) = settings.other.get("env") else { return };
    for (name, value) in env {
        let text = match value {
            Value::String(text) => text.clone(),
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            _ => continue,
        };
        if name.is_empty() || name.contains(['=', '\0']) || text.contains('\0') {
            continue;
        }
        std::env::set_var(name, text);
    }
}

/// One layer's JSON, checked on its own so an error names its file; `None` when it does not exist.
fn read_layer(path: &Path) -> Result<Option<Value>, CliError> {
    let text = read_plain(path, MAX_SETTINGS_BYTES).map_err(|why| {
        CliError::Usage(match why {
            Unreadable::TooLarge => {
                format!("settings file {} is larger than {MAX_SETTINGS_BYTES} bytes", path.display())
            }
            Unreadable::NotAFile => format!("cannot read settings file {}: not a regular file", path.display()),
            Unreadable::Io(e) => format!("cannot read settings file {}: {e}", path.display()),
        })
    })?;
    text.map(|text| parse_json(&text, &path.display().to_string())).transpose()
}

/// Why a configuration file was not read.
pub(crate) enum Unreadable {
    /// A FIFO, a device or a folder in its place.
    NotAFile,
    /// More than the bytes allowed.
    TooLarge,
    Io(std::io::Error),
}

/// A configuration file's text, at most `max` bytes; `None` when it does not exist. It is
/// opened without blocking and must be a plain file: a FIFO a repository put in its place is
/// refused rather than waited on forever.
pub(crate) fn read_plain(path: &Path, max: u64) -> Result<Option<String>, Unreadable> {
    use std::os::unix::fs::OpenOptionsExt;
    let opened = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY).open(path);
    let file = match opened {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Unreadable::Io(e)),
    };
    if !file.metadata().map_err(Unreadable::Io)?.is_file() {
        return Err(Unreadable::NotAFile);
    }
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::Read::take(file, max + 1), &mut text).map_err(Unreadable::Io)?;
    if text.len() as u64 > max {
        return Err(Unreadable::TooLarge);
    }
    Ok(Some(text))
}

/// One layer's JSON, checked as a settings file of its own so the error names this layer and
/// the bad value's path.
fn parse_json(text: &str, origin: &str) -> Result<Value, CliError> {
    parse_layer(text, origin)?;
    serde_json::from_str(text).map_err(|e| CliError::Usage(format!("{origin}: not valid JSON: {e}")))
}

fn parse_layer(text: &str, origin: &str) -> Result<Settings, CliError> {
    Settings::from_json(text, origin).map_err(|e| CliError::Usage(e.to_string()))
}

/// Lays `upper` over `lower`: objects merge key by key, lists are joined (lower first, a value
/// already there not repeated), anything else is replaced by the upper layer's value.
pub(crate) fn merge(lower: &mut Value, upper: Value) {
    match (lower, upper) {
        (Value::Object(low), Value::Object(up)) => {
            for (key, value) in up {
                match low.get_mut(&key) {
                    Some(existing) => merge(existing, value),
                    None => {
                        low.insert(key, value);
                    }
                }
            }
        }
        (Value::Array(low), Value::Array(up)) => {
            for item in up {
                if !low.contains(&item) {
                    low.push(item);
                }
            }
        }
        (low, up) => *low = up,
    }
}

mod trust;
pub(crate) use trust::global_config;

#[cfg(test)]
mod tests;
