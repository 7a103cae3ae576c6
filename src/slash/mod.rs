//! Custom slash commands in print mode: a prompt `/NAME ARGS` that names a Markdown file in
//! `.claude/commands/` (the project's) or `~/.claude/commands/` (the user's) is sent to the model
//! as Claude Code sends it, not as the literal text.
//!
//! What the recordings under `tests/print/recorded/*/settings_slash/` show, identical in 2.1.197
//! and 2.1.332: the user message holds two text blocks, the command's tags
//! (`<command-message>NAME</command-message>\n<command-name>/NAME</command-name>\n<command-args>ARGS</command-args>\n`)
//! and the file's body without its front matter, `$ARGUMENTS` replaced by ARGS and `$N` by the
//! N-th whitespace-separated argument counted from 0 (`/greet Alice Bob` turned `$1` into
//! `Bob`); a command typed without arguments has no `<command-args>` line
//! (`crates/reloop-import/tests/recorded/*/rule_sources/command`). `ns/sub.md` is `/ns:sub`. A project command is found only when the project settings
//! source is read (`--setting-sources user` left `/greet` unknown); likewise user commands and the
//! user source. An unknown command is left as text: 2.1.332 sends it to the model after a
//! reminder ([`unknown`]), 2.1.197 answers "Unknown command" locally.

use std::path::{Path, PathBuf};

use reloop_core::ContentBlock;

use crate::settings::{Source, Sources};

mod catalog;
mod unknown;
pub(crate) use catalog::described;
pub(crate) use unknown::closest;

/// The most a command file may hold; a bigger one is not expanded.
const MAX_COMMAND_BYTES: u64 = 1024 * 1024;

/// A prompt that named a custom command, expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Expanded {
    /// The user message's text blocks, in order: the command tags, then the body.
    pub blocks: Vec<String>,
}

/// The prompt's expansion when it is `/NAME [ARGS]` and NAME is a command file in a folder
/// `sources` lets in; `None` otherwise (not a command, or one reloop does not know).
pub(crate) fn expand(prompt: &str, cwd: &Path, user_dir: Option<&Path>, sources: &Sources) -> Option<Expanded> {
    let rest = prompt.strip_prefix('/')?;
    let (name, args) = match rest.find(char::is_whitespace) {
        Some(at) => (&rest[..at], rest[at..].trim()),
        None => (rest, ""),
    };
    let text = command_text(name, cwd, user_dir, sources)?;
    // A command typed without arguments has no `<command-args>` line (`rule_sources/command`).
    let args_line = if args.is_empty() { String::new() } else { format!("<command-args>{args}</command-args>\n") };
    let tags = format!("<command-message>{name}</command-message>\n<command-name>/{name}</command-name>\n{args_line}");
    Some(Expanded { blocks: vec![tags, substitute(body(&text), args)] })
}

/// What a command file sets for the query that runs it (`crate::sdk`'s command queries).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct QuerySettings {
    /// The command (`fm` for `/fm`).
    pub name: String,
    /// `model`: Claude Code asks that command's query with it, then goes back
    /// (`sdk_wire/command_frontmatter`, both versions).
    pub model: Option<String>,
    /// `allowed-tools`: allowed for that command's query only (`sdk36/command_allowed_tools`).
    pub allow: Vec<String>,
}

/// The command a prompt `/NAME [ARGS]` runs and what its file sets for its query.
pub(crate) fn query_settings(
    prompt: &str,
    cwd: &Path,
    user_dir: Option<&Path>,
    sources: &Sources,
) -> Option<QuerySettings> {
    let name = prompt.strip_prefix('/')?.split(char::is_whitespace).next()?;
    let text = command_text(name, cwd, user_dir, sources)?;
    let fields = catalog::front_matter(&text);
    Some(QuerySettings { name: name.to_string(), model: fields.model, allow: fields.allowed_tools })
}

/// The file of command `name` (`ns:sub` is `ns/sub.md`): the project's, else the user's, in the
/// folders `sources` lets in.
fn command_text(name: &str, cwd: &Path, user_dir: Option<&Path>, sources: &Sources) -> Option<String> {
    let relative = relative_path(name)?;
    let mut folders: Vec<PathBuf> = Vec::new();
    if sources.reads(Source::Project) {
        folders.push(cwd.join(".claude").join("commands"));
    }
    if let (true, Some(dir)) = (sources.reads(Source::User), user_dir) {
        folders.push(dir.join("commands"));
    }
    folders.iter().find_map(|folder| read_command(&folder.join(&relative)))
}

/// A user message that is only a command prompt, expanded; any other message as it came, but
/// for one naming no command under a profile that says so (`unknown_reminder`, 2.1.332): the
/// reminder goes first ([`unknown::reminder`], naming only the commands the model may run), a
/// `"\n"` after it as Claude Code joins it.
pub(crate) fn expand_content(
    content: Vec<ContentBlock>,
    cwd: &Path,
    user_dir: Option<&Path>,
    sources: &Sources,
    unknown_reminder: bool,
) -> Vec<ContentBlock> {
    let [ContentBlock::Text(text)] = content.as_slice() else { return content };
    if let Some(found) = expand(&text.text, cwd, user_dir, sources) {
        return found.blocks.into_iter().map(ContentBlock::text).collect();
    }
    let reminder = unknown_reminder
        .then(|| {
            let all = list(cwd, user_dir, sources);
            let invocable: Vec<String> = all
                .iter()
                .filter(|name| {
                    let text = command_text(name, cwd, user_dir, sources);
                    !text.is_some_and(|text| catalog::front_matter(&text).disable_model_invocation)
                })
                .cloned()
                .collect();
            unknown::reminder(&text.text, &all, &invocable)
        })
        .flatten();
    match reminder {
        Some(reminder) => [ContentBlock::text(format!("{reminder}\n"))].into_iter().chain(content).collect(),
        None => content,
    }
}

/// The custom commands `init` lists, as Claude Code lists them before its built-ins: the
/// project's (`ns/sub.md` as `ns:sub`), then the user's, each sorted by name.
pub(crate) fn list(cwd: &Path, user_dir: Option<&Path>, sources: &Sources) -> Vec<String> {
    let mut out = Vec::new();
    if sources.reads(Source::Project) {
        out.extend(names_in(&cwd.join(".claude").join("commands")));
    }
    if let (true, Some(dir)) = (sources.reads(Source::User), user_dir) {
        for name in names_in(&dir.join("commands")) {
            if !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out
}

/// How deep and how many command files are looked at, so a huge or looping tree stays bounded.
const MAX_DEPTH: usize = 8;
const MAX_COMMANDS: usize = 1000;

fn names_in(root: &Path) -> Vec<String> {
    let mut names = Vec::new();
    let mut pending = vec![(root.to_path_buf(), Vec::<String>::new())];
    while let Some((dir, prefix)) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            // `file_type` does not follow symlinks: a linked folder is not walked into.
            let Ok(kind) = entry.file_type() else { continue };
            if name.starts_with('.') || names.len() >= MAX_COMMANDS {
                continue;
            }
            if kind.is_dir() && prefix.len() + 1 < MAX_DEPTH {
                let mut deeper = prefix.clone();
                deeper.push(name);
                pending.push((entry.path(), deeper));
            } else if let Some(stem) = name.strip_suffix(".md").filter(|s| !s.is_empty() && !s.contains(':')) {
                let mut parts = prefix.clone();
                parts.push(stem.to_string());
                names.push(parts.join(":"));
            }
        }
    }
    names.sort();
    names
}

/// `ns:sub` → `ns/sub.md`; a name that could leave the commands folder is no command.
fn relative_path(name: &str) -> Option<PathBuf> {
    let parts: Vec<&str> = name.split(':').collect();
    let safe =
        |p: &&str| !p.is_empty() && *p != "." && *p != ".." && !p.contains(['/', '\\', '\0']) && !p.starts_with('.');
    if !parts.iter().all(safe) {
        return None;
    }
    let mut path: PathBuf = parts.iter().collect();
    path.set_extension("md");
    Some(path)
}

fn read_command(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_COMMAND_BYTES {
        return None;
    }
    std::fs::read_to_string(path).ok()
}

/// The file without its front matter (a first line `---` up to the next `---` line).
fn body(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("---\n").or_else(|| text.strip_prefix("---\r\n")) else { return text };
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        offset += line.len();
        if line.trim_end() == "---" {
            return &rest[offset..];
        }
    }
    text
}

/// `$ARGUMENTS` → all arguments; `$N` → argument N counted from 0 (empty past the last one).
fn substitute(body: &str, args: &str) -> String {
    let words: Vec<&str> = args.split_whitespace().collect();
    let mut out = String::with_capacity(body.len() + args.len());
    let mut rest = body;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix("ARGUMENTS") {
            out.push_str(args);
            rest = tail;
            continue;
        }
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        match after[..digits].parse::<usize>() {
            Ok(index) => {
                out.push_str(words.get(index).copied().unwrap_or(""));
                rest = &after[digits..];
            }
            Err(_) => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests;
