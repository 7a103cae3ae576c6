//! The hooks a settings file declares, and which of them fire for an event and a tool.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use regex::Regex;
use reloop_core::hook::HookEventName;
use serde_json::{Map, Value};

/// Claude Code's default: a hook that runs longer is killed and counts as a non-blocking error.
pub const DEFAULT_HOOK_TIMEOUT: Duration = Duration::from_secs(60);

/// One hook: a command to run with `bash -c`, or a callback the caller answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookCommand {
    /// The command line; for a callback, `callback:<id>` (how runs and feedback name it).
    pub command: String,
    /// How long it may run before it is killed and counts as a non-blocking error.
    pub timeout: Duration,
    /// Set for a hook the caller answers instead of a command (the Agent SDK's hook callbacks).
    pub callback: Option<CallbackHook>,
}

impl HookCommand {
    /// A command hook.
    pub fn command(command: impl Into<String>, timeout: Duration) -> Self {
        HookCommand { command: command.into(), timeout, callback: None }
    }

    /// A hook answered by `handler` under the caller's `id`.
    pub fn callback(id: impl Into<String>, timeout: Duration, handler: Arc<dyn HookCallbacks>) -> Self {
        let id = id.into();
        HookCommand { command: format!("callback:{id}"), timeout, callback: Some(CallbackHook { id, handler }) }
    }
}

/// Answers hook callbacks: given the callback's id and the hook input Claude Code would write to
/// a command's stdin, it returns the JSON a command would print (the same reply format), or an
/// error text, which counts as a non-blocking hook error.
pub trait HookCallbacks: Send + Sync {
    /// Asks the caller; the future must end (the runner also bounds it by the hook's timeout).
    fn call(
        &self,
        callback_id: &str,
        input: &crate::HookInput,
    ) -> futures::future::BoxFuture<'static, Result<Value, String>>;
}

/// A callback hook: the caller's id for it and who answers.
#[derive(Clone)]
pub struct CallbackHook {
    /// The caller's name for the callback, handed back to [`HookCallbacks::call`].
    pub id: String,
    /// Who answers it.
    pub handler: Arc<dyn HookCallbacks>,
}

impl std::fmt::Debug for CallbackHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallbackHook").field("id", &self.id).finish_non_exhaustive()
    }
}

/// Two callback hooks are the same hook when they share an id.
impl PartialEq for CallbackHook {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl Eq for CallbackHook {}

/// Which tools a group of hooks applies to.
#[derive(Debug, Clone)]
pub struct Matcher {
    /// `None` matches every tool (empty matcher, `*`, or no matcher at all).
    regex: Option<Regex>,
    pattern: String,
}

impl Matcher {
    /// Matches every tool.
    pub fn any() -> Self {
        Matcher { regex: None, pattern: String::new() }
    }

    /// Empty or `*` matches every tool; anything else is a regex that must match the whole tool
    /// name, so `Edit|Write` matches both and `Bash` does not match `BashOutput`.
    pub fn new(pattern: &str) -> Result<Self, regex::Error> {
        let trimmed = pattern.trim();
        if trimmed.is_empty() || trimmed == "*" {
            return Ok(Matcher { regex: None, pattern: pattern.to_string() });
        }
        let regex = Regex::new(&format!("^(?:{trimmed})$"))?;
        Ok(Matcher { regex: Some(regex), pattern: pattern.to_string() })
    }

    /// The pattern as written in the settings file.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// Whether hooks with this matcher fire for `tool_name`; with no tool only match-all fires.
    pub fn matches(&self, tool_name: Option<&str>) -> bool {
        match (&self.regex, tool_name) {
            (None, _) => true,
            (Some(regex), Some(name)) => regex.is_match(name),
            (Some(_), None) => false,
        }
    }
}

/// One `{"matcher": ..., "hooks": [...]}` entry.
#[derive(Debug, Clone)]
pub struct MatcherGroup {
    /// The tools the group's hooks fire for.
    pub matcher: Matcher,
    /// The hooks, in file order.
    pub hooks: Vec<HookCommand>,
}

/// The `hooks` section: the events reloop runs, and the raw entries of any other event.
#[derive(Debug, Clone, Default)]
pub struct HooksConfig {
    events: HashMap<HookEventName, Vec<MatcherGroup>>,
    unknown: Map<String, Value>,
}

impl HooksConfig {
    pub(crate) fn new(events: HashMap<HookEventName, Vec<MatcherGroup>>, unknown: Map<String, Value>) -> Self {
        HooksConfig { events, unknown }
    }

    /// The hooks to run for `event` on `tool_name`, in file order. Stop hooks ignore the matcher.
    /// A command listed twice runs once (as in Claude Code), at its first position.
    pub fn matching(&self, event: HookEventName, tool_name: Option<&str>) -> Vec<HookCommand> {
        let mut found: Vec<HookCommand> = Vec::new();
        let groups = self.events.get(&event).map(Vec::as_slice).unwrap_or_default();
        for group in groups {
            if event != HookEventName::Stop && !group.matcher.matches(tool_name) {
                continue;
            }
            for hook in &group.hooks {
                if !found.iter().any(|seen| seen.command == hook.command) {
                    found.push(hook.clone());
                }
            }
        }
        found
    }

    /// The matcher groups declared for `event`, in file order.
    pub fn groups(&self, event: HookEventName) -> &[MatcherGroup] {
        self.events.get(&event).map(Vec::as_slice).unwrap_or_default()
    }

    /// Entries of events reloop does not run (`UserPromptSubmit`, ...), verbatim.
    pub fn unknown_events(&self) -> &Map<String, Value> {
        &self.unknown
    }

    /// Adds a matcher group for `event`, after the settings file's: the Agent SDK registers its
    /// hook callbacks this way in `initialize`.
    pub fn add_group(&mut self, event: HookEventName, group: MatcherGroup) {
        self.events.entry(event).or_default().push(group);
    }

    /// Whether no hook would ever run, so the driver can skip hook bookkeeping entirely.
    pub fn is_empty(&self) -> bool {
        self.events.values().flatten().all(|group| group.hooks.is_empty())
    }
}
