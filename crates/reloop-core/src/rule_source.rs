//! Where a permission rule came from, named as Claude Code names it: the `ruleSource` of a
//! ruling in 2.1.332's session file, `rule:<source>` in its refusal's reason code. Data only:
//! the settings files and flags are read by the binary, which tags each rule it reads.

use serde::{Deserialize, Serialize};

/// The origin of a permission rule. Only the origins reloop reads rules from, each as the
/// recordings show it (`crates/reloop-import/tests/recorded/2.1.332/rule_sources/`,
/// `tests/print/recorded/2.1.332/tool_results/deny_rules`); Claude Code also knows `session`,
/// `policySettings` and others, which reloop never reads rules from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, strum::IntoStaticStr)]
#[serde(rename_all = "camelCase")]
#[strum(serialize_all = "camelCase")]
pub enum RuleSource {
    /// The user's settings file (`~/.claude/settings.json`).
    UserSettings,
    /// The project's shared settings file (`.claude/settings.json`).
    ProjectSettings,
    /// The project's local settings file (`.claude/settings.local.json`).
    LocalSettings,
    /// The `--settings` file or JSON.
    FlagSettings,
    /// A command-line flag (`--allowedTools`, `--disallowedTools`; the Agent SDKs pass theirs so).
    CliArg,
    /// A slash command's `allowed-tools`, for its query.
    Command,
}

impl RuleSource {
    /// The name Claude Code writes (`userSettings`, `cliArg`, ...).
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// A permission rule's text as written (`Bash(npm test:*)`) and, when known, where it came
/// from. Journaled (in a session's permissions) as the bare text when the origin is unknown, as
/// every session before origins were kept has it, and as `{"rule", "source"}` otherwise.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "Wire", into = "Wire")]
pub struct SourcedRule {
    /// The rule as written.
    pub text: String,
    /// Where it came from, when known.
    pub source: Option<RuleSource>,
}

impl SourcedRule {
    /// `text` from `source`.
    pub fn new(text: impl Into<String>, source: RuleSource) -> Self {
        SourcedRule { text: text.into(), source: Some(source) }
    }

    /// `text` from nowhere known.
    pub fn bare(text: impl Into<String>) -> Self {
        SourcedRule { text: text.into(), source: None }
    }
}

impl AsRef<str> for SourcedRule {
    fn as_ref(&self) -> &str {
        &self.text
    }
}

#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum Wire {
    Bare(String),
    Sourced { rule: String, source: RuleSource },
}

impl From<Wire> for SourcedRule {
    fn from(wire: Wire) -> Self {
        match wire {
            Wire::Bare(text) => SourcedRule::bare(text),
            Wire::Sourced { rule, source } => SourcedRule::new(rule, source),
        }
    }
}

impl From<SourcedRule> for Wire {
    fn from(rule: SourcedRule) -> Self {
        match rule.source {
            None => Wire::Bare(rule.text),
            Some(source) => Wire::Sourced { rule: rule.text, source },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_claude_codes() {
        let names: Vec<&str> = [
            RuleSource::UserSettings,
            RuleSource::ProjectSettings,
            RuleSource::LocalSettings,
            RuleSource::FlagSettings,
            RuleSource::CliArg,
            RuleSource::Command,
        ]
        .into_iter()
        .map(RuleSource::as_str)
        .collect();
        assert_eq!(names, ["userSettings", "projectSettings", "localSettings", "flagSettings", "cliArg", "command"]);
        assert_eq!(serde_json::to_string(&RuleSource::CliArg).unwrap(), "\"cliArg\"");
    }

    #[test]
    fn a_rule_without_origin_is_journaled_as_its_text_and_reads_back() {
        let bare = SourcedRule::bare("Bash(ls:*)");
        assert_eq!(serde_json::to_string(&bare).unwrap(), "\"Bash(ls:*)\"");
        let sourced = SourcedRule::new("Read", RuleSource::LocalSettings);
        let text = serde_json::to_string(&sourced).unwrap();
        assert_eq!(text, r#"{"rule":"Read","source":"localSettings"}"#);
        for rule in [bare, sourced] {
            let back: SourcedRule = serde_json::from_str(&serde_json::to_string(&rule).unwrap()).unwrap();
            assert_eq!(back, rule);
        }
    }
}
