//! Option parsing for the Bash classifier, as the real programs parse their options: GNU
//! `getopt_long` (any unique prefix of a long option, `--opt=value` and `--opt value`, bundled
//! short options such as `-uo FILE` or `-ofile`, `-` and everything after `--` as operands),
//! POSIX builtins (options stop at the first operand), or no options at all ([`Parse`]). It reads
//! a row's option lists (see [`crate::bash_table`] for their notation) and records what each
//! option given does; what the operands mean is decided above it.

use crate::bash_table::{Parse, Row};
use crate::bash_verdict::NotReadOnly;

impl Row {
    /// The row's options, parsed from its lists.
    pub(crate) fn options(&self) -> Vec<Opt> {
        let mut all = opts(self.safe, Class::Safe);
        all.extend(opts(self.unsafe_, Class::Unsafe));
        all
    }
}

/// What option parsing found.
#[derive(Debug, Default)]
pub(crate) struct Parsed {
    /// Operands, in order.
    pub operands: Vec<String>,
    /// Paths named by options (`-f FILE`) and by operands once classified.
    pub paths: Vec<(String, bool)>,
    /// An option supplied the pattern (`grep -e`), so the first operand is a path too.
    pub pattern_given: bool,
    /// An option made directory operands be walked (`grep -r`).
    pub walks: bool,
    /// How many operands came before `--`, when one was given: the rest are pathspecs for git.
    pub pathspecs_from: Option<usize>,
    /// Paths relative to the top of the git repository holding a directory: (directory, path,
    /// walks). `HEAD:a.rs` and a bare `git show` name files from there.
    pub top_reads: Vec<(String, String, bool)>,
    /// Set (to the option's name) when the command is read-only only in the session's own
    /// directory (`git --git-dir=.git` names the workspace's repository only there).
    pub session_directory_only: Option<String>,
}

/// What an option does, from its row's spec (see [`crate::bash_table`] for the notation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    Safe,
    /// Its value is a file the command reads.
    ReadsPath,
    /// It supplies the pattern, so every operand is a path.
    Pattern,
    /// It supplies the pattern from a file.
    PatternFile,
    /// It makes the command read every file below its directory operands.
    Walks,
    /// It writes, runs programs, sets the clock or reads the environment.
    Unsafe,
}

/// How many values an option takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arity {
    None,
    Required,
    /// Only attached: `--color=auto`, `-M50`.
    Optional,
    /// Two separate words (`jq --arg name value`).
    Two,
}

/// One option of a row, parsed from its spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Opt {
    /// With its dashes: `-o`, `--output`.
    pub name: String,
    pub arity: Arity,
    pub class: Class,
}

/// Parses a spec list such as `"-n -k= <--files0-from= *-r"` into options of class `default`
/// unless a sigil says otherwise: `<` reads the value as a path, `^` supplies the pattern,
/// `^<` supplies it from a file, `*` walks directories. A trailing `=` takes a value, `=?` an
/// attached optional one, `==` two values.
pub(crate) fn opts(spec: &str, default: Class) -> Vec<Opt> {
    spec.split_whitespace()
        .map(|token| {
            let (class, rest) = if let Some(rest) = token.strip_prefix("^<") {
                (Class::PatternFile, rest)
            } else if let Some(rest) = token.strip_prefix('^') {
                (Class::Pattern, rest)
            } else if let Some(rest) = token.strip_prefix('<') {
                (if default == Class::Unsafe { Class::Unsafe } else { Class::ReadsPath }, rest)
            } else if let Some(rest) = token.strip_prefix('*') {
                (Class::Walks, rest)
            } else {
                (default, token)
            };
            let (name, arity) = if let Some(name) = rest.strip_suffix("==") {
                (name, Arity::Two)
            } else if let Some(name) = rest.strip_suffix("=?") {
                (name, Arity::Optional)
            } else if let Some(name) = rest.strip_suffix('=') {
                (name, Arity::Required)
            } else {
                (rest, Arity::None)
            };
            Opt { name: name.to_string(), arity, class }
        })
        .collect()
}

/// Finds a long option as `getopt_long` does: an exact name wins; otherwise the unique option
/// the text is a prefix of. `None` for an unknown or ambiguous one.
pub(crate) fn long_option<'a>(options: &'a [Opt], given: &str) -> Option<&'a Opt> {
    if let Some(exact) = options.iter().find(|o| o.name == given) {
        return Some(exact);
    }
    let mut candidates = options.iter().filter(|o| o.name.starts_with("--") && o.name.starts_with(given));
    let first = candidates.next()?;
    // getopt_long accepts an ambiguous prefix only when every candidate is the same option;
    // here two names are two options, so any second candidate makes it ambiguous.
    candidates.next().is_none().then_some(first)
}

/// Parses `args` against `row`'s options, collecting operands and option effects.
pub(crate) fn parse_options(row: &Row, args: &[String], out: &mut Parsed) -> Result<(), NotReadOnly> {
    parse_with(row, &row.options(), args, out)
}

/// Parses `args` against `options`, read as `row` says.
pub(crate) fn parse_with(row: &Row, options: &[Opt], args: &[String], out: &mut Parsed) -> Result<(), NotReadOnly> {
    let unknown =
        |option: &str| NotReadOnly::UnknownOption { command: row.command.to_string(), option: option.to_string() };
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        let is_option = row.parse != Parse::NoOptions && arg.starts_with('-') && arg != "-";
        if !is_option || (row.parse == Parse::Posix && !out.operands.is_empty()) {
            out.operands.push(arg.clone());
            continue;
        }
        if arg == "--" {
            out.pathspecs_from = Some(out.operands.len());
            out.operands.extend(args[i..].iter().cloned());
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((name, value)) => (format!("--{name}"), Some(value.to_string())),
                None => (arg.clone(), None),
            };
            let opt = long_option(options, &name).ok_or_else(|| unknown(&name))?;
            let values = match (opt.arity, inline) {
                (Arity::None, Some(_)) => return Err(unknown(arg)),
                (Arity::None, None) | (Arity::Optional, None) => Vec::new(),
                (Arity::Optional | Arity::Required, Some(value)) => vec![value],
                (Arity::Required, None) => take(args, &mut i, 1).ok_or_else(|| unknown(arg))?,
                (Arity::Two, _) => take(args, &mut i, 2).ok_or_else(|| unknown(arg))?,
            };
            apply(row, opt, &values, out)?;
            continue;
        }
        short_cluster(row, options, arg, args, &mut i, out)?;
    }
    Ok(())
}

/// `-abc`, `-ofile`, `-o file`, and `-5` where the row takes a number as an option.
fn short_cluster(
    row: &Row,
    options: &[Opt],
    arg: &str,
    args: &[String],
    i: &mut usize,
    out: &mut Parsed,
) -> Result<(), NotReadOnly> {
    let unknown =
        |option: &str| NotReadOnly::UnknownOption { command: row.command.to_string(), option: option.to_string() };
    let cluster = &arg[1..];
    if row.numeric_option && cluster.chars().all(|c| c.is_ascii_digit()) {
        return Ok(());
    }
    for (at, c) in cluster.char_indices() {
        let name = format!("-{c}");
        let opt = options.iter().find(|o| o.name == name).ok_or_else(|| unknown(&name))?;
        let rest = &cluster[at + c.len_utf8()..];
        match opt.arity {
            Arity::None => apply(row, opt, &[], out)?,
            Arity::Optional => return apply(row, opt, &[rest.to_string()], out),
            Arity::Required if !rest.is_empty() => return apply(row, opt, &[rest.to_string()], out),
            Arity::Required => {
                let values = take(args, i, 1).ok_or_else(|| unknown(&name))?;
                return apply(row, opt, &values, out);
            }
            Arity::Two => {
                let values = take(args, i, 2).ok_or_else(|| unknown(&name))?;
                return apply(row, opt, &values, out);
            }
        }
    }
    Ok(())
}

/// The next `n` words as an option's values; `None` when the line ends first, so the option is
/// malformed and the command needs approval.
fn take(args: &[String], i: &mut usize, n: usize) -> Option<Vec<String>> {
    let values = args.get(*i..*i + n)?.to_vec();
    *i += n;
    Some(values)
}

/// Records what one option does.
fn apply(row: &Row, opt: &Opt, values: &[String], out: &mut Parsed) -> Result<(), NotReadOnly> {
    let path = values.last().filter(|v| !v.is_empty()).cloned();
    match opt.class {
        Class::Safe => {}
        Class::ReadsPath => out.paths.extend(path.map(|p| (p, false))),
        Class::Pattern => out.pattern_given = true,
        Class::PatternFile => {
            out.pattern_given = true;
            out.paths.extend(path.map(|p| (p, false)));
        }
        Class::Walks => out.walks = true,
        Class::Unsafe => {
            return Err(NotReadOnly::Capability { command: row.command.to_string(), what: opt.name.clone() })
        }
    }
    Ok(())
}
