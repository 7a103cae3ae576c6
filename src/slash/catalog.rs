//! The custom commands as the Agent SDK's `initialize` answer lists them (`commands`): each
//! with its front matter's `description` and `argument-hint`, as Claude Code lists them.
//!
//! tests/print/recorded/*/sdk_wire/command_frontmatter (2.1.197 and 2.1.332 alike): the project's
//! commands come first, each `{"name", "description", "argumentHint"}`, the description followed
//! by ` (project)` (a user command's by ` (user)`), the hint `""` when the file gives none.
//! Claude Code's built-in commands and skills that follow them are not listed (reloop has none).

use std::path::Path;

use serde_json::{json, Value};

use crate::settings::{Source, Sources};

/// The `initialize` answer's `commands`: the project's, then the user's, in [`super::list`]'s
/// order.
pub(crate) fn described(cwd: &Path, user_dir: Option<&Path>, sources: &Sources) -> Vec<Value> {
    let project = cwd.join(".claude").join("commands");
    let user = user_dir.map(|dir| dir.join("commands"));
    super::list(cwd, user_dir, sources)
        .into_iter()
        .filter_map(|name| {
            let relative = super::relative_path(&name)?;
            let in_project = sources.reads(Source::Project) && project.join(&relative).is_file();
            let (folder, scope) = match (&user, in_project) {
                (_, true) => (project.clone(), "project"),
                (Some(user), false) => (user.clone(), "user"),
                (None, false) => return None,
            };
            let text = super::read_command(&folder.join(&relative))?;
            let fields = front_matter(&text);
            let description = fields.description.unwrap_or_else(|| first_line(super::body(&text)));
            Some(json!({
                "name": name,
                "description": format!("{description} ({scope})"),
                "argumentHint": fields.argument_hint.unwrap_or_default(),
            }))
        })
        .collect()
}

/// The front matter fields a command's listing reads.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Fields {
    description: Option<String>,
    argument_hint: Option<String>,
    /// The model the command's query is asked with (`model: claude-haiku-4-5`).
    pub(super) model: Option<String>,
    /// The permission rules its query allows (`allowed-tools: Bash(git add:*), Read`).
    pub(super) allowed_tools: Vec<String>,
    /// `disable-model-invocation: true`: the model may not run it, so 2.1.332's reminder for an
    /// unknown command neither names nor suggests it (`settings_slash/typo_hidden`).
    pub(super) disable_model_invocation: bool,
}

/// `key: value` lines between a first `---` line and the next; quotes around a value dropped.
/// Scalars are read line by line, as leniently as Claude Code reads them (`argument-hint: [FILE]`
/// is a hint, not a YAML list); an `allowed-tools` given as a YAML list on lines of its own is
/// read as YAML (`serde_norway`, which also reads agents' front matter).
pub(super) fn front_matter(text: &str) -> Fields {
    let mut fields = Fields::default();
    let Some(rest) = text.strip_prefix("---\n").or_else(|| text.strip_prefix("---\r\n")) else { return fields };
    let mut yaml = String::new();
    for line in rest.lines() {
        if line.trim_end() == "---" {
            break;
        }
        yaml.push_str(line);
        yaml.push('\n');
        let Some((key, value)) = line.split_once(':') else { continue };
        let value = value.trim();
        let value = value
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
            .unwrap_or(value)
            .to_string();
        match key.trim() {
            "description" => fields.description = Some(value),
            "argument-hint" => fields.argument_hint = Some(value),
            "model" if !value.is_empty() => fields.model = Some(value),
            "allowed-tools" => fields.allowed_tools = rule_list(&value),
            "disable-model-invocation" => fields.disable_model_invocation = value == "true",
            _ => {}
        }
    }
    if fields.allowed_tools.is_empty() {
        fields.allowed_tools = yaml_rule_list(&yaml);
    }
    fields
}

/// The `allowed-tools` of front matter written as a YAML list (`- Bash(git add:*)` lines), each
/// item a rule; nothing when the YAML does not read or holds no list there.
fn yaml_rule_list(yaml: &str) -> Vec<String> {
    #[derive(serde::Deserialize)]
    struct Listed {
        #[serde(rename = "allowed-tools")]
        allowed_tools: Option<Vec<String>>,
    }
    let listed = serde_norway::from_str::<Listed>(yaml).ok().and_then(|l| l.allowed_tools).unwrap_or_default();
    listed.into_iter().map(|rule| rule.trim().to_string()).filter(|rule| !rule.is_empty()).collect()
}

/// An `allowed-tools` value: rules split at the commas outside parentheses (a rule's own
/// specifier may hold one), blanks dropped.
fn rule_list(value: &str) -> Vec<String> {
    let (mut rules, mut depth, mut start) = (Vec::new(), 0usize, 0);
    for (at, c) in value.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                rules.push(value[start..at].trim().to_string());
                start = at + 1;
            }
            _ => {}
        }
    }
    rules.push(value[start..].trim().to_string());
    rules.retain(|r| !r.is_empty());
    rules
}

/// A command without a `description`: its body's first non-empty line (no recording shows
/// Claude Code's choice for one).
fn first_line(body: &str) -> String {
    body.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or_default().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recorded_front_matter_gives_the_recorded_fields() {
        let text = "---\ndescription: Front matter probe\nargument-hint: FIRST SECOND\nmodel: claude-haiku-4-5\n\
                    allowed-tools: Bash(echo:*)\n---\nFM-BODY $ARGUMENTS then run echo fm.\n";
        let fields = front_matter(text);
        assert_eq!(fields.description.as_deref(), Some("Front matter probe"));
        assert_eq!(fields.argument_hint.as_deref(), Some("FIRST SECOND"));
        assert_eq!(fields.allowed_tools, ["Bash(echo:*)"]);
        assert_eq!(rule_list("Bash(git add:*), Read ,Bash(a, b),"), ["Bash(git add:*)", "Read", "Bash(a, b)"]);
        assert_eq!(front_matter("no front matter\n"), Fields::default());
        let listed = "---\ndescription: Commit\nallowed-tools:\n  - Bash(git add:*)\n  - Read\n---\nbody\n";
        assert_eq!(front_matter(listed).allowed_tools, ["Bash(git add:*)", "Read"], "a YAML list");
        let hinted = "---\nargument-hint: [FILE]\nallowed-tools: Read\n---\nbody\n";
        assert_eq!(front_matter(hinted).argument_hint.as_deref(), Some("[FILE]"), "a hint, not a list");
        assert!(front_matter("---\nallowed-tools:\n  - [unclosed\n---\n").allowed_tools.is_empty(), "bad YAML: none");
        assert_eq!(first_line("\n  Greet $ARGUMENTS\nmore"), "Greet $ARGUMENTS");
    }
}
