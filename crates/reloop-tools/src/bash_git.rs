//! `git` in the read-only table: how its global options, subcommand and operands are read, and
//! what the operands name (revisions, paths inside revisions, `-C` directories). The options
//! themselves are rows of [`crate::bash_table`].

use crate::bash_options::{long_option, opts, parse_with, Arity, Class, Opt, Parsed};
use crate::bash_table::{
    Operands, Row, BASE, GIT_EVERY_SUBCOMMAND, GIT_EVERY_SUBCOMMAND_UNSAFE, GIT_GLOBAL, GIT_GLOBAL_UNSAFE,
    GIT_SUBCOMMANDS,
};
use crate::bash_verdict::NotReadOnly;

/// The `--git-dir` values that name the workspace's own repository when git runs in the
/// session's directory.
const OWN_GIT_DIR: &[&str] = &[".git", "./.git", ".git/", "./.git/"];

/// A read-only subcommand's options, from its row, and whether it walks.
fn git_subcommand(name: &str) -> Option<(Vec<Opt>, bool)> {
    let sub = GIT_SUBCOMMANDS.iter().find(|s| s.name == name)?;
    let mut all: Vec<Opt> = sub.safe.iter().flat_map(|l| opts(l, Class::Safe)).collect();
    all.extend(opts(GIT_EVERY_SUBCOMMAND_UNSAFE, Class::Unsafe));
    all.extend(opts(GIT_EVERY_SUBCOMMAND, Class::Safe));
    Some((all, sub.walks))
}

/// Parses `git [global options] SUBCOMMAND [options] [operands]`.
///
/// Relative paths resolve from the `-C` directories, one after the other. Pathspec magic
/// (`:(top)`, `:/`, `:!`, `:(glob)`) is refused rather than reproduced. A path inside a
/// revision (`HEAD:src/a.rs`, `:0:a`) is relative to the repository's top, unless it starts
/// with `./` or `../`; and `diff`, `log` and `show` without a pathspec after `--` may show any
/// file of the repository (`git show HEAD` prints the whole commit), so they read its top.
pub(crate) fn git(args: &[String], out: &mut Parsed) -> Result<(), NotReadOnly> {
    let mut global = opts(GIT_GLOBAL, Class::Safe);
    global.extend(opts(GIT_GLOBAL_UNSAFE, Class::Unsafe));
    let unknown = |option: &str| NotReadOnly::UnknownOption { command: "git".into(), option: option.to_string() };
    let capability = |what: String| NotReadOnly::Capability { command: "git".into(), what };
    let mut directory = ".".to_string();
    let mut i = 0;
    while let Some(arg) = args.get(i).filter(|a| a.starts_with('-')) {
        i += 1;
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) => (name.to_string(), Some(value.to_string())),
            None => (arg.clone(), None),
        };
        let opt = long_option(&global, &name).ok_or_else(|| unknown(&name))?;
        let value = match (opt.arity, inline) {
            (Arity::Required, None) => {
                i += 1;
                Some(args.get(i - 1).cloned().ok_or_else(|| unknown(&name))?)
            }
            (_, inline) => inline,
        };
        match (opt.class, opt.name.as_str(), value) {
            (Class::Unsafe, ..) => return Err(capability(opt.name.clone())),
            (_, "-C", Some(dir)) => {
                directory = join(&directory, &dir);
                out.paths.push((directory.clone(), false));
            }
            (_, "--git-dir", Some(dir)) if directory == "." && OWN_GIT_DIR.contains(&dir.as_str()) => {
                out.session_directory_only = Some("--git-dir".into());
            }
            (_, "--git-dir", _) => {
                return Err(capability("--git-dir (a repository the model may have written)".into()))
            }
            _ => {}
        }
    }
    let sub = args.get(i).ok_or_else(|| unknown("(no subcommand)"))?;
    let (options, walks) = git_subcommand(sub).ok_or_else(|| NotReadOnly::UnknownCommand(format!("git {sub}")))?;
    let row = Row { command: "git", operands: Operands::Paths, numeric_option: true, ..BASE };
    let mut parsed = Parsed::default();
    let sub_args = &args[i + 1..];
    parse_with(&row, &options, sub_args, &mut parsed)?;
    if sub == "branch" && !parsed.operands.is_empty() {
        return Err(NotReadOnly::Capability {
            command: "git branch".into(),
            what: "an operand (creates a branch)".into(),
        });
    }
    for operand in &parsed.operands {
        let path = revision_path(operand).inspect_err(|_| {
            // Refused, but deny rules must still see that any file of the repository may be shown.
            out.top_reads.push((directory.clone(), ".".into(), true));
        })?;
        match path {
            Some(path) if path.starts_with("./") || path.starts_with("../") || path == "." || path == ".." => {
                out.paths.push((join(&directory, &path), false));
            }
            Some(path) => out.top_reads.push((directory.clone(), path, false)),
            None => {}
        }
    }
    let pathspecs = parsed.pathspecs_from.is_some_and(|from| parsed.operands.len() > from);
    let no_index = sub_args.iter().any(|a| a == "--no-index");
    if matches!(sub.as_str(), "diff" | "log" | "show") && !pathspecs && !no_index {
        out.top_reads.push((directory.clone(), ".".into(), true));
    }
    out.paths.extend(parsed.paths.into_iter().map(|(p, w)| (join(&directory, &p), w)));
    out.operands.extend(parsed.operands.iter().map(|o| join(&directory, o)));
    out.walks = walks;
    Ok(())
}

/// `path` as seen from `directory` (both as written; `~` and `/` start afresh).
fn join(directory: &str, path: &str) -> String {
    if directory == "." || path.starts_with('/') || path.starts_with('~') {
        path.to_string()
    } else {
        format!("{directory}/{path}")
    }
}

/// The path named inside a revision operand (`REV:path`, `:path`, `:N:path`), or `None` for a
/// plain revision or path. Pathspec magic and `:/message` searches are refused.
fn revision_path(operand: &str) -> Result<Option<String>, NotReadOnly> {
    let refuse =
        |what: &str| Err(NotReadOnly::Capability { command: "git".into(), what: format!("`{operand}` ({what})") });
    if operand.starts_with(":(") || operand.starts_with(":/") || operand.starts_with(":!") || operand.starts_with(":^")
    {
        return refuse("pathspec magic or a message search");
    }
    // The first colon outside `@{...}` (a date there may hold colons) ends the revision.
    let mut depth = 0usize;
    let mut colon = None;
    for (at, c) in operand.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ':' if depth == 0 => {
                colon = Some(at);
                break;
            }
            _ => {}
        }
    }
    if depth > 0 {
        return refuse("a revision this check does not read");
    }
    let Some(colon) = colon else { return Ok(None) };
    let mut path = &operand[colon + 1..];
    if colon == 0 {
        // `:N:path` names stage N of the index.
        if let Some(rest) = path.strip_prefix(['0', '1', '2', '3']).and_then(|r| r.strip_prefix(':')) {
            path = rest;
        }
    }
    Ok((!path.is_empty()).then(|| path.to_string()))
}
