//! Reading a Claude Code settings file: `hooks` and `permissions`, every other key kept as is.
//!
//! The file is walked by hand rather than through serde derive so that an error can name the exact
//! JSON path (`hooks.Stop[0].hooks[1].timeout`), which is what a user fixing the file needs.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use reloop_core::hook::HookEventName;
use reloop_core::{RuleSource, SourcedRule};
use serde_json::{Map, Value};

use crate::config::{HookCommand, HooksConfig, Matcher, MatcherGroup, DEFAULT_HOOK_TIMEOUT};

/// Why a settings file could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SettingsError {
    /// The file could not be read.
    #[error("cannot read settings file {}: {source}", path.display())]
    Read {
        /// The file named by `--settings`.
        path: PathBuf,
        /// Why it could not be read.
        source: std::io::Error,
    },
    /// The text is not JSON.
    #[error("{origin}: not valid JSON: {source}")]
    Json {
        /// Where the text came from (usually the file path).
        origin: String,
        /// The parser's error, with its line and column.
        source: serde_json::Error,
    },
    /// A value has the wrong shape for its key.
    #[error("{origin}: {path}: {message}")]
    Invalid {
        /// Where the text came from (usually the file path).
        origin: String,
        /// The JSON path of the offending value (`hooks.Stop[0].hooks[1].timeout`), `$` for the
        /// whole document.
        path: String,
        /// What is wrong with it.
        message: String,
    },
}

/// The `permissions` rules, kept verbatim (`"Bash(npm test:*)"`) for the permission layer, each
/// with the settings file it came from once the reader of the files says so
/// ([`PermissionRules::from_source`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PermissionRules {
    /// Calls that run without asking.
    pub allow: Vec<SourcedRule>,
    /// Calls that never run; a deny rule wins over allow and ask.
    pub deny: Vec<SourcedRule>,
    /// Calls that always ask, even where a mode or an allow rule would let them run.
    pub ask: Vec<SourcedRule>,
}

impl PermissionRules {
    /// The same rules, every one from `source`.
    pub fn from_source(mut self, source: RuleSource) -> Self {
        for rule in self.allow.iter_mut().chain(&mut self.deny).chain(&mut self.ask) {
            rule.source = Some(source);
        }
        self
    }

    /// `upper`'s rules after these, a rule already listed not repeated: how Claude Code's
    /// settings layers join their lists, the lower layer's rule (and origin) first.
    pub fn join(&mut self, upper: PermissionRules) {
        for (list, more) in [(&mut self.allow, upper.allow), (&mut self.deny, upper.deny), (&mut self.ask, upper.ask)] {
            for rule in more {
                if !list.iter().any(|r| r.text == rule.text) {
                    list.push(rule);
                }
            }
        }
    }
}

/// A parsed settings file.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Settings {
    /// The hooks to run, by event.
    pub hooks: HooksConfig,
    /// The `allow`, `deny` and `ask` rules.
    pub permissions: PermissionRules,
    /// Top-level keys reloop does not read (`model`, `env`, ...), kept so nothing is lost.
    pub other: Map<String, Value>,
}

impl Settings {
    /// No hooks, no rules: what a run without `--settings` uses.
    pub fn empty() -> Self {
        Settings::default()
    }

    /// Reads and parses `path`; errors name the file.
    pub fn from_file(path: &Path) -> Result<Self, SettingsError> {
        let text =
            std::fs::read_to_string(path).map_err(|source| SettingsError::Read { path: path.to_path_buf(), source })?;
        Settings::from_json(&text, &path.display().to_string())
    }

    /// Parses settings text; `origin` names it in errors (usually the file path).
    pub fn from_json(text: &str, origin: &str) -> Result<Self, SettingsError> {
        let value: Value =
            serde_json::from_str(text).map_err(|source| SettingsError::Json { origin: origin.to_string(), source })?;
        Parser { origin }.settings(value)
    }
}

struct Parser<'a> {
    origin: &'a str,
}

impl Parser<'_> {
    fn invalid(&self, path: &str, message: impl Into<String>) -> SettingsError {
        SettingsError::Invalid { origin: self.origin.to_string(), path: path.to_string(), message: message.into() }
    }

    fn object(&self, value: Value, path: &str) -> Result<Map<String, Value>, SettingsError> {
        match value {
            Value::Object(map) => Ok(map),
            other => Err(self.invalid(path, format!("expected an object, found {}", kind(&other)))),
        }
    }

    fn array(&self, value: Value, path: &str) -> Result<Vec<Value>, SettingsError> {
        match value {
            Value::Array(items) => Ok(items),
            other => Err(self.invalid(path, format!("expected an array, found {}", kind(&other)))),
        }
    }

    fn string(&self, value: Value, path: &str) -> Result<String, SettingsError> {
        match value {
            Value::String(text) => Ok(text),
            other => Err(self.invalid(path, format!("expected a string, found {}", kind(&other)))),
        }
    }

    fn settings(&self, value: Value) -> Result<Settings, SettingsError> {
        let mut other = self.object(value, "$")?;
        let hooks = match other.remove("hooks") {
            Some(hooks) => self.hooks(hooks)?,
            None => HooksConfig::default(),
        };
        let permissions = match other.remove("permissions") {
            Some(permissions) => self.permissions(permissions)?,
            None => PermissionRules::default(),
        };
        Ok(Settings { hooks, permissions, other })
    }

    fn permissions(&self, value: Value) -> Result<PermissionRules, SettingsError> {
        let mut map = self.object(value, "permissions")?;
        let mut rules = |key: &str| -> Result<Vec<SourcedRule>, SettingsError> {
            let Some(list) = map.remove(key) else { return Ok(Vec::new()) };
            let path = format!("permissions.{key}");
            let items = self.array(list, &path)?;
            items
                .into_iter()
                .enumerate()
                .map(|(i, item)| self.string(item, &format!("{path}[{i}]")).map(SourcedRule::bare))
                .collect()
        };
        Ok(PermissionRules { allow: rules("allow")?, deny: rules("deny")?, ask: rules("ask")? })
    }

    fn hooks(&self, value: Value) -> Result<HooksConfig, SettingsError> {
        let map = self.object(value, "hooks")?;
        let mut events = HashMap::new();
        let mut unknown = Map::new();
        for (name, groups) in map {
            let Some(event) = HookEventName::parse(&name) else {
                unknown.insert(name, groups);
                continue;
            };
            let path = format!("hooks.{name}");
            let groups = self.array(groups, &path)?;
            let parsed = groups
                .into_iter()
                .enumerate()
                .map(|(i, group)| self.group(group, &format!("{path}[{i}]")))
                .collect::<Result<Vec<_>, _>>()?;
            events.insert(event, parsed);
        }
        Ok(HooksConfig::new(events, unknown))
    }

    fn group(&self, value: Value, path: &str) -> Result<MatcherGroup, SettingsError> {
        let mut map = self.object(value, path)?;
        let matcher = match map.remove("matcher") {
            None | Some(Value::Null) => Matcher::any(),
            Some(pattern) => {
                let matcher_path = format!("{path}.matcher");
                let pattern = self.string(pattern, &matcher_path)?;
                Matcher::new(&pattern).map_err(|err| self.invalid(&matcher_path, format!("invalid regex: {err}")))?
            }
        };
        let hooks_path = format!("{path}.hooks");
        let hooks = map.remove("hooks").ok_or_else(|| self.invalid(path, "missing \"hooks\""))?;
        let mut commands = Vec::new();
        for (i, hook) in self.array(hooks, &hooks_path)?.into_iter().enumerate() {
            if let Some(command) = self.hook(hook, &format!("{hooks_path}[{i}]"))? {
                commands.push(command);
            }
        }
        Ok(MatcherGroup { matcher, hooks: commands })
    }

    /// A `command` hook; other types (`prompt`, `agent`, ...) are skipped, as reloop cannot run
    /// them, rather than failing a file written for a newer Claude Code.
    fn hook(&self, value: Value, path: &str) -> Result<Option<HookCommand>, SettingsError> {
        let mut map = self.object(value, path)?;
        let kind_path = format!("{path}.type");
        let hook_type = map.remove("type").ok_or_else(|| self.invalid(path, "missing \"type\""))?;
        if self.string(hook_type, &kind_path)? != "command" {
            return Ok(None);
        }
        let command = map.remove("command").ok_or_else(|| self.invalid(path, "missing \"command\""))?;
        let command = self.string(command, &format!("{path}.command"))?;
        let timeout = match map.remove("timeout") {
            None | Some(Value::Null) => DEFAULT_HOOK_TIMEOUT,
            Some(seconds) => self.timeout(seconds, &format!("{path}.timeout"))?,
        };
        Ok(Some(HookCommand::command(command, timeout)))
    }

    fn timeout(&self, value: Value, path: &str) -> Result<Duration, SettingsError> {
        let seconds = value.as_f64().filter(|s| s.is_finite() && *s > 0.0);
        seconds
            .and_then(|s| Duration::try_from_secs_f64(s).ok())
            .ok_or_else(|| self.invalid(path, format!("expected a positive number of seconds, found {value}")))
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
