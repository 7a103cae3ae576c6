//! Prompts Claude Code answers itself, without asking the model, and how reloop tells them.
//!
//! Recorded (`tests/print/recorded/*/settings_slash/compact`, `unknown`, `sdk36/stream_local`):
//! - `/compact` with no conversation yet (the first prompt of a new session, or the first after
//!   a `/clear`), both versions: `Error: No messages to compact`, no request, no hook run.
//! - 2.1.197, a `/NAME` that is no command it knows (no command file, none of its built-ins):
//!   `Unknown command: /NAME`, no request, no hook run, first or between queries. 2.1.332 sends
//!   the text to the model instead, as reloop does for it.
//!
//! Nothing is journaled for them: no model is asked and the conversation does not change, so
//! a replay has nothing to reproduce (as Claude Code's transcript keeps them only as notes).

use reloop_core::profile::ProfileId;
use reloop_core::ContentBlock;

/// Claude Code 2.1.197's own commands as its `system/init` lists them in print mode (recorded,
/// `settings_slash/unknown`): a prompt naming one of these is not "unknown" to it. reloop runs
/// `/clear` and `/compact`; the rest still reach the model as typed.
const BUILT_IN_2_1_197: &[&str] = &[
    "deep-research",
    "update-config",
    "verify",
    "debug",
    "code-review",
    "simplify",
    "batch",
    "fewer-permission-prompts",
    "loop",
    "claude-api",
    "run",
    "run-skill-generator",
    "clear",
    "compact",
    "config",
    "context",
    "heapdump",
    "init",
    "reload-skills",
    "review",
    "security-review",
    "usage",
    "insights",
    "goal",
    "team-onboarding",
];

/// A prompt answered locally.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Local {
    /// `/compact ARGS` with nothing to compact.
    NoMessages { args: String },
    /// 2.1.197: `/NAME` it does not know, typed with `args`; `suggestion`: the command nearest
    /// it within two edits, which it names.
    Unknown { name: String, args: String, suggestion: Option<String> },
}

impl Local {
    /// The words Claude Code answers with.
    pub(crate) fn text(&self) -> String {
        match self {
            Local::NoMessages { .. } => "Error: No messages to compact".to_string(),
            Local::Unknown { name, suggestion: None, .. } => format!("Unknown command: /{name}"),
            Local::Unknown { name, suggestion: Some(near), .. } => {
                format!("Unknown command: /{name}. Did you mean /{near}?")
            }
        }
    }
}

/// Whether `content` is answered locally. `empty`: the conversation has no message yet;
/// `custom`: the command files the settings sources let in, as `init` lists them.
pub(crate) fn classify(content: &[ContentBlock], profile: ProfileId, empty: bool, custom: &[String]) -> Option<Local> {
    let [ContentBlock::Text(text)] = content else { return None };
    let rest = text.text.trim().strip_prefix('/')?;
    let (name, args) = match rest.find(char::is_whitespace) {
        Some(at) => (&rest[..at], rest[at..].trim()),
        None => (rest, ""),
    };
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':')) {
        // Not shaped like a command (`/tmp/x is a path`): the text is a prompt.
        return None;
    }
    if name == "compact" {
        return empty.then(|| Local::NoMessages { args: args.to_string() });
    }
    if profile == ProfileId::ClaudeCode2_1_197 && !BUILT_IN_2_1_197.contains(&name) && !custom.iter().any(|c| c == name)
    {
        // Its commands in `init`'s order, the custom ones first (aliases are not known here).
        let known: Vec<String> = custom.iter().cloned().chain(BUILT_IN_2_1_197.iter().map(|b| b.to_string())).collect();
        let suggestion = crate::slash::closest(name, &known).map(str::to_string);
        return Some(Local::Unknown { name: name.to_string(), args: args.to_string(), suggestion });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(text: &str, profile: ProfileId, empty: bool) -> Option<Local> {
        classify(&[ContentBlock::text(text)], profile, empty, &["greet".to_string()])
    }

    #[test]
    fn compact_is_local_only_with_nothing_to_compact() {
        for profile in [ProfileId::ClaudeCode2_1_197, ProfileId::ClaudeCode2_1_332] {
            assert_eq!(of("/compact", profile, true), Some(Local::NoMessages { args: String::new() }));
            assert_eq!(
                of(" /compact keep it short\n", profile, true),
                Some(Local::NoMessages { args: "keep it short".into() })
            );
            assert_eq!(of("/compact", profile, false), None);
        }
        assert_eq!(Local::NoMessages { args: String::new() }.text(), "Error: No messages to compact");
    }

    #[test]
    fn only_2_1_197_answers_an_unknown_command() {
        let unknown = Local::Unknown { name: "nosuch".into(), args: String::new(), suggestion: None };
        let with_args = Local::Unknown { name: "nosuch".into(), args: "foo".into(), suggestion: None };
        assert_eq!(of("/nosuch foo", ProfileId::ClaudeCode2_1_197, true), Some(with_args));
        assert_eq!(of("/nosuch", ProfileId::ClaudeCode2_1_197, false), Some(unknown.clone()));
        assert_eq!(unknown.text(), "Unknown command: /nosuch");
        assert_eq!(of("/nosuch foo", ProfileId::ClaudeCode2_1_332, true), None);
        assert_eq!(of("/nosuch foo", ProfileId::Reloop, true), None);
    }

    /// 2.1.197 names the command nearest a typo, within two edits (its `mfe`).
    #[test]
    fn a_near_command_is_suggested() {
        let old = ProfileId::ClaudeCode2_1_197;
        let near = of("/gret Alice", old, false).unwrap();
        assert_eq!(near.text(), "Unknown command: /gret. Did you mean /greet?");
        assert_eq!(of("/compat", old, false).unwrap().text(), "Unknown command: /compat. Did you mean /compact?");
        assert_eq!(of("/zzzzzzz", old, false).unwrap().text(), "Unknown command: /zzzzzzz");
    }

    #[test]
    fn known_commands_paths_and_other_messages_are_prompts() {
        let old = ProfileId::ClaudeCode2_1_197;
        assert_eq!(of("/greet Alice", old, true), None, "a command file");
        assert_eq!(of("/context", old, true), None, "a built-in of Claude Code's");
        assert_eq!(of("/clear", old, true), None);
        assert_eq!(of("/tmp/x is a path", old, true), None);
        assert_eq!(of("/", old, true), None);
        assert_eq!(of("please /nosuch", old, true), None);
        let two = [ContentBlock::text("/nosuch"), ContentBlock::text("more")];
        assert_eq!(classify(&two, old, true, &[]), None);
    }
}
