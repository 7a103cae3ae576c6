//! 2.1.332's reminder before a prompt that names no command it has (`/nosuch foo`), which it
//! then sends to the model as typed (`settings_slash/unknown`, `sdk36/stream_local`): what the
//! bundle's `unknown_command_fallback` attachment renders. The commands it names are the
//! session's own: the custom commands `init` lists (Claude Code's prompt commands) and, counted
//! but not named, reloop's built-ins (`/clear`, `/compact`), where Claude Code lists its own.

/// The most commands the reminder names (the bundle's `vo`).
const MAX_NAMED: usize = 40;
/// The longest name Claude Code takes for a command (the bundle's `bU`).
const MAX_NAME: usize = 256;
/// reloop's own commands: known, and counted but not named (Claude Code names only its prompt
/// commands).
const BUILT_IN_NAMES: [&str; 2] = ["clear", "compact"];
const BUILT_INS: usize = BUILT_IN_NAMES.len();

/// The reminder block for `prompt` when it starts with a command-shaped `/NAME` that is none of
/// `commands` (the session's custom commands); `None` for any other prompt. Only `invocable`
/// (those the model may run: no `disable-model-invocation: true`) are named or suggested; every
/// command is counted (`settings_slash/typo_hidden`).
pub(crate) fn reminder(prompt: &str, commands: &[String], invocable: &[String]) -> Option<String> {
    let name = prompt.trim_start().strip_prefix('/')?.split(char::is_whitespace).next()?;
    if !is_name(name) || commands.iter().any(|c| c == name) || BUILT_IN_NAMES.contains(&name) {
        return None;
    }
    let named: Vec<&String> = invocable.iter().filter(|c| is_name(c)).take(MAX_NAMED).collect();
    let more = commands.len().saturating_sub(named.len()) + BUILT_INS;
    let available = match (named.is_empty(), more) {
        (true, 0) => "No slash commands are available in this session.".to_string(),
        (true, n) => format!("This session has {n} slash {}, but none can be named here.", plural(n)),
        (false, n) => {
            let list: Vec<String> = named.iter().map(|c| format!("/{c}")).collect();
            let more = if n > 0 { format!(", and {n} more") } else { String::new() };
            format!("Slash commands available in this session: {}{more}.", list.join(", "))
        }
    };
    let mut parts = vec![format!(
        "The user's message starts with the slash command /{name}, but no command with that name is available \
         in this session, so it did not run."
    )];
    if let Some(closest) = closest(name, invocable) {
        parts.push(format!("The closest available command is /{closest}. Ask the user before running it."));
    }
    parts.push(available);
    parts.push(
        "Treat the message as a plain request and do the task with the tools you have. If the task needs that \
         command, tell the user it is not installed in this session. The user can add it as an organization \
         plugin or a project skill. Do not give installation steps you are not sure of."
            .to_string(),
    );
    parts.push("Do not say the command ran.".to_string());
    Some(format!("<system-reminder>\n{}\n</system-reminder>", parts.join(" ")))
}

/// A name Claude Code takes for a command (its `iot`).
fn is_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | ':' | '.' | '-'))
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        "command"
    } else {
        "commands"
    }
}

/// The first command nearest `name` within two edits (a swap of neighbours counts one), as
/// Claude Code suggests it: a later one only when strictly nearer.
pub(crate) fn closest<'a>(name: &str, commands: &'a [String]) -> Option<&'a str> {
    let mut best: Option<(&str, usize)> = None;
    for command in commands.iter().filter(|c| is_name(c)) {
        if command.len().abs_diff(name.len()) > 2 {
            continue;
        }
        let distance = strsim::osa_distance(name, command);
        if distance <= 2 && best.is_none_or(|(_, d)| distance < d) {
            best = Some((command, distance));
        }
    }
    best.map(|(command, _)| command)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commands(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    /// `settings_slash/unknown` of 2.1.332, reloop's commands in place of Claude Code's.
    #[test]
    fn an_unknown_command_is_named_with_the_session_s_commands() {
        let all = commands(&["greet", "ns:sub", "ucmd"]);
        let text = reminder("/nosuch foo", &all, &all).unwrap();
        assert_eq!(
            text,
            "<system-reminder>\nThe user's message starts with the slash command /nosuch, but no command with that \
             name is available in this session, so it did not run. Slash commands available in this session: \
             /greet, /ns:sub, /ucmd, and 2 more. Treat the message as a plain request and do the task with the \
             tools you have. If the task needs that command, tell the user it is not installed in this session. \
             The user can add it as an organization plugin or a project skill. Do not give installation steps you \
             are not sure of. Do not say the command ran.\n</system-reminder>"
        );
    }

    #[test]
    fn a_near_name_is_suggested_and_known_commands_and_paths_get_none() {
        let known = commands(&["greet", "review-pr"]);
        let text = reminder("/gret Alice", &known, &known).unwrap();
        assert!(text.contains("The closest available command is /greet. Ask the user before running it."), "{text}");
        assert!(!reminder("/zzzzzz", &known, &known).unwrap().contains("closest"));
        assert_eq!(reminder("/greet Alice", &known, &known), None);
        assert_eq!(reminder("/compact", &known, &known), None);
        assert_eq!(reminder("/clear", &known, &known), None);
        assert_eq!(reminder("/tmp/x is a path", &known, &known), None);
        assert_eq!(reminder("hello", &known, &known), None);
        assert!(reminder("/x", &[], &[])
            .unwrap()
            .contains("This session has 2 slash commands, but none can be named here."));
    }

    /// `settings_slash/typo_hidden` of 2.1.332: a command the model may not run
    /// (`disable-model-invocation: true`) is neither suggested nor named, but counted.
    #[test]
    fn a_command_the_model_may_not_run_is_counted_but_not_named() {
        let all = commands(&["greet", "ns:sub", "ucmd"]);
        let text = reminder("/gret Alice", &all, &commands(&["ns:sub", "ucmd"])).unwrap();
        assert!(!text.contains("closest"), "{text}");
        assert!(text.contains("Slash commands available in this session: /ns:sub, /ucmd, and 3 more."), "{text}");
        let none = reminder("/gret Alice", &all, &[]).unwrap();
        assert!(none.contains("This session has 5 slash commands, but none can be named here."), "{none}");
    }
}
