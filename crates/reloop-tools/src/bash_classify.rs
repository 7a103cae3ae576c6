//! A conservative judge of what a shell command can do, driven by an auditable table.
//!
//! The driver runs read-only calls in parallel, may re-run them after a crash, and the permission
//! layer lets them run without approval, so a false "read-only" is a real hazard while a false
//! "writes" only costs an approval. Hence anything this module does not understand makes the
//! whole command need approval: command or process substitution, subshells, heredocs, `$`
//! expansion, output redirected into a file, brace expansion, a command not in
//! [`crate::bash_table::TABLE`], an option its row does not list, an ambiguous abbreviation.
//!
//! Options are parsed as the real programs parse them ([`crate::bash_options`]): GNU
//! `getopt_long` accepts any unique prefix of a long option (`--outp` is `--output`),
//! `--opt=value` and `--opt value`, bundled short options (`-uo FILE`, `-ofile`), and takes `-`
//! and everything after `--` as operands. A row lists every option of the command that matters,
//! dangerous ones included, so that an abbreviation is resolved against the same set the program
//! resolves it against.
//!
//! Besides the verdict, the analysis names the paths a read-only command reads (operands and
//! option values), with the directories the command may run in after `cd`, so the permission
//! layer can check them against the workspace and the deny rules.
//!
//! This module judges the line: its segments, globs, brace expansion and `cd`. It reads the
//! table ([`crate::bash_table`], data only) through the option parser ([`crate::bash_options`])
//! and the special commands ([`crate::bash_commands`], [`crate::bash_git`]); none of them calls
//! back here, so each reads knowing only what is below it.

use crate::bash_commands::{find_expression, operand_effect, OperandEffect};
use crate::bash_git::git;
use crate::bash_options::{parse_options, Class, Parsed};
use crate::bash_table::{find_row, Operands, Parse, Row};
use crate::shell_lex::{lex, Options};

pub(crate) use crate::bash_verdict::NotReadOnly;

/// Whether `cmd` certainly only reads. Bash calls are concurrency-safe and read-only iff this holds.
pub fn is_read_only_command(cmd: &str) -> bool {
    classifier_bypassed() || analyze(cmd).is_read_only()
}

/// The variable that, in a debug build, makes every command count as read-only.
#[cfg_attr(not(debug_assertions), allow(dead_code))]
const BYPASS_VAR: &str = "RELOOP_TEST_CLASSIFY_ALL_READ_ONLY";

/// A test-only switch: true when this is a debug build (`cfg(debug_assertions)`) and the
/// environment variable `RELOOP_TEST_CLASSIFY_ALL_READ_ONLY` is `1`; then
/// [`is_read_only_command`] calls every command read-only.
///
/// It exists so integration tests can hand the sandbox a command the classifier would refuse
/// and prove the sandbox alone contains it (the sandbox is the backstop for a classifier
/// mistake). The variable is read once per process. Release builds never read it and always
/// return false, so a shipped binary cannot be talked out of its classifier.
pub(crate) fn classifier_bypassed() -> bool {
    #[cfg(debug_assertions)]
    {
        static BYPASSED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *BYPASSED.get_or_init(|| std::env::var_os(BYPASS_VAR).is_some_and(|v| v == "1"))
    }
    #[cfg(not(debug_assertions))]
    {
        false
    }
}

/// A path a read-only command reads, as written in the command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PathOperand {
    /// The word as the shell passes it (quotes removed; `~` and globs still to expand).
    pub word: String,
    /// Whether the command reads the contents of every file below it (`grep -r`, `rg`).
    pub walks: bool,
    /// Index into [`Analysis::directories`]: the directories the command may run in.
    pub directories: usize,
    /// When set, the word is relative to the top of the git repository holding this directory
    /// (as written, from each directory the command may run in), not to the directory itself.
    pub repository: Option<String>,
}

/// What a command does, as far as the table can tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Analysis {
    pub verdict: Result<(), NotReadOnly>,
    /// Paths read by a read-only command: operands, option values and `< file` inputs. A
    /// directory a command lists or walks without a path operand (`rg foo`) appears as `.`.
    pub reads: Vec<PathOperand>,
    /// Sets of directories (as written, relative to the session's directory) that a segment may
    /// run in: `cd a || cat x` may read `x` or `a/x`, so both are kept.
    pub directories: Vec<Vec<String>>,
}

impl Analysis {
    pub fn is_read_only(&self) -> bool {
        self.verdict.is_ok()
    }
}

/// Most directories tracked through `cd`; more makes the command need approval.
const MAX_DIRECTORIES: usize = 16;

/// Read as bash would: a backslash-newline joins lines (`--\<newline>output=x` is `--output=x`),
/// and a `$NAME` could expand to anything (`sort $X` may be `sort -o out`), so it is opaque.
const LEX: Options = Options { line_continuation: true, dollar_is_opaque: true };

/// Analyses a whole command line.
pub(crate) fn analyze(cmd: &str) -> Analysis {
    let lexed = lex(cmd, LEX);
    let mut analysis = Analysis { verdict: Ok(()), reads: Vec::new(), directories: vec![vec![".".to_string()]] };
    // An opaque command is still read segment by segment, so that deny rules see where
    // `cd src && cat secret.txt > out` reads; the verdict stays Opaque.
    if lexed.opaque {
        analysis.verdict = Err(NotReadOnly::Opaque);
    }
    if lexed.segments.is_empty() && !lexed.opaque {
        analysis.verdict = Err(NotReadOnly::Empty);
        return analysis;
    }
    for (index, words) in lexed.segments.iter().enumerate() {
        let directories = analysis.directories.len() - 1;
        for (_, target) in lexed.inputs.iter().filter(|(segment, _)| *segment == index) {
            analysis.reads.push(PathOperand { word: target.clone(), walks: false, directories, repository: None });
        }
        // Later segments are still read, so a rule-allowed `npm test && cat /etc/x` shows
        // what its reading part reads; the first reason stands.
        let globbed = lexed.globbed.get(index).map(Vec::as_slice).unwrap_or(&[]);
        if let Err(why) = segment(words, globbed, &mut analysis) {
            if analysis.verdict.is_ok() {
                analysis.verdict = Err(why);
            }
        }
    }
    // A CDPATH set anywhere on the line (`CDPATH=/x; cd vault`, `printf -v CDPATH`) makes a
    // later `cd` land where the text does not show.
    if cmd.contains("CDPATH") {
        for set in analysis.directories.iter_mut().skip(1) {
            set.push(UNKNOWN_DIRECTORY.to_string());
        }
    }
    // `shopt -s nocaseglob dotglob globstar extglob` and GLOBIGNORE make a glob match what the
    // path check's expansion does not: the line may read anything.
    if ["shopt", "GLOBIGNORE", "BASHOPTS"].iter().any(|word| cmd.contains(word)) {
        let directories = analysis.directories.len() - 1;
        let word = UNKNOWN_DIRECTORY.to_string();
        analysis.reads.push(PathOperand { word, walks: true, directories, repository: None });
    }
    analysis
}

/// A directory the text does not show, in [`Analysis::directories`]: it resolves to no path,
/// so it is inside no workspace and may be where any deny rule points. A NUL is in no path.
pub(crate) const UNKNOWN_DIRECTORY: &str = "\0unknown";

/// One simple command: its row, its options and its operands. `globbed` says which words are
/// unquoted globs.
fn segment(words: &[String], globbed: &[bool], analysis: &mut Analysis) -> Result<(), NotReadOnly> {
    let Some((name, args)) = words.split_first() else { return Ok(()) };
    if words.iter().any(|w| has_brace_expansion(w)) {
        return Err(NotReadOnly::Opaque);
    }
    let Some(row) = find_row(name) else {
        hidden_directory_change(words, analysis);
        return Err(NotReadOnly::UnknownCommand(name.clone()));
    };
    // Judged first, reported last: a refused `cd [s]rc` must still add its directory, so that
    // deny rules see where `cat secret.txt` after it reads.
    let glob_verdict = globs(row, args, globbed.get(1..).unwrap_or(&[]));
    let directories = analysis.directories.len() - 1;
    let mut out = Parsed::default();
    let parsed = match row.operands {
        Operands::Find => find_expression(row, args, &mut out),
        Operands::Git => git(args, &mut out),
        _ => parse_options(row, args, &mut out),
    };
    let verdict = parsed.and_then(|()| {
        if let Some(option) = &out.session_directory_only {
            if analysis.directories[directories] != ["."] {
                return Err(NotReadOnly::Capability {
                    command: row.command.to_string(),
                    what: format!("{option} after a cd (names another repository)"),
                });
            }
        }
        operands(row, &out, analysis)
    });
    // What was found is recorded even for a refused command: deny rules hold in every mode, and
    // `git show -- ':(top)x'` is refused having named the whole repository.
    for (word, walks) in out.paths {
        analysis.reads.push(PathOperand { word, walks: walks || row.walks, directories, repository: None });
    }
    for (repository, word, walks) in out.top_reads {
        analysis.reads.push(PathOperand { word, walks, directories, repository: Some(repository) });
    }
    verdict.and(glob_verdict)
}

/// Records what the operands make the command read, and tracks `cd`.
fn operands(row: &Row, parsed: &Parsed, analysis: &mut Analysis) -> Result<(), NotReadOnly> {
    match operand_effect(row, parsed)? {
        OperandEffect::ChangeDirectory(target) => add_directory(target, analysis),
        OperandEffect::Reads { paths, walks } => {
            let directories = analysis.directories.len() - 1;
            for word in paths {
                analysis.reads.push(PathOperand { word, walks, directories, repository: None });
            }
            Ok(())
        }
    }
}

/// A directory change the table does not take as read-only (`pushd src`, `command cd src`,
/// `builtin cd src`, `CDPATH=/x cd src`): it needs approval anyway, but deny rules must still
/// know where later segments may run. `pushd` alone and `popd` return to directories already
/// in the set, which only grows.
fn hidden_directory_change(words: &[String], analysis: &mut Analysis) {
    let mut rest = words;
    let mut unknown = false;
    while let Some((first, tail)) = rest.split_first() {
        match first.split_once('=') {
            Some((name, _)) if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => {
                unknown |= name == "CDPATH";
            }
            _ if matches!(first.as_str(), "command" | "builtin") => {}
            _ => break,
        }
        rest = tail;
    }
    let Some((program, args)) = rest.split_first() else { return };
    if !matches!(program.as_str(), "cd" | "pushd") {
        return;
    }
    let target = args.iter().find(|a| !a.starts_with(['-', '+']));
    let target = match (program.as_str(), target) {
        (_, Some(_)) if unknown => UNKNOWN_DIRECTORY.to_string(),
        (_, Some(dir)) => dir.clone(),
        ("cd", None) => "~".to_string(),
        _ => return,
    };
    // Past the limit the command is refused anyway; the directories tracked so far stay.
    let _ = add_directory(target, analysis);
}

/// Adds the directories a later segment may run in once `cd target` succeeded.
fn add_directory(target: String, analysis: &mut Analysis) -> Result<(), NotReadOnly> {
    let current = analysis.directories.last().cloned().unwrap_or_default();
    analysis.reads.push(PathOperand {
        word: target.clone(),
        walks: false,
        directories: analysis.directories.len() - 1,
        repository: None,
    });
    let mut next = current.clone();
    for dir in &current {
        let joined = if target.starts_with('/') || target.starts_with('~') || dir == "." || target == UNKNOWN_DIRECTORY
        {
            target.clone()
        } else {
            format!("{dir}/{target}")
        };
        if !next.contains(&joined) {
            next.push(joined);
        }
    }
    if next.len() > MAX_DIRECTORIES {
        // Refused; for deny rules, later segments may run anywhere.
        let mut anywhere = current;
        anywhere.push(UNKNOWN_DIRECTORY.to_string());
        analysis.directories.push(anywhere);
        return Err(NotReadOnly::TooManyDirectories);
    }
    analysis.directories.push(next);
    Ok(())
}

/// A glob becomes as many words as it matches, each of which the program parses like any
/// other: `uniq [ab].txt` writes `b.txt`, and `sort [-]*` next to a file named
/// `--compress-program=sh` runs `sh`. The classifier reads text, not the directory, so it
/// refuses a glob wherever the words it may become could change the verdict: on a command
/// whose operands mean different things by position or count, and, on a command with any
/// option that is not merely cosmetic, a glob that could expand to a word starting with `-`
/// (unless a `--` before it ends the options). On the rest (`cat *`, `ls *.md`) an expanded
/// `-n` is at worst an option that only changes what is shown; the path check still sees every
/// match as a path.
fn globs(row: &Row, args: &[String], globbed: &[bool]) -> Result<(), NotReadOnly> {
    let refuse = |word: &str, why: &str| {
        Err(NotReadOnly::Capability { command: row.command.to_string(), what: format!("glob `{word}` ({why})") })
    };
    let mut options_ended = false;
    for (word, glob) in args.iter().zip(globbed.iter().chain(std::iter::repeat(&false))) {
        if *glob && position_matters(row) {
            return refuse(word, "its matches decide what each operand is");
        }
        if *glob && !options_ended && may_start_with_dash(word) && !only_cosmetic_options(row) {
            return refuse(word, "a file named like an option would become one");
        }
        options_ended |= word == "--" && row.parse != Parse::NoOptions;
    }
    Ok(())
}

/// Commands whose operands are read by position or count (or are code), so a glob's number of
/// matches changes what they do.
fn position_matters(row: &Row) -> bool {
    !matches!(row.operands, Operands::Paths | Operands::Text | Operands::PatternThenPaths)
}

/// Whether every option of the row only changes what is shown: no path-valued, walking,
/// pattern-giving or unsafe option that an expanded file name could turn on.
fn only_cosmetic_options(row: &Row) -> bool {
    row.options().iter().all(|o| o.class == Class::Safe)
}

/// Whether a glob could expand to a word starting with `-`: it starts with `*` or `?`, or with
/// a bracket expression that is negated, names a class (`[[:punct:]]`) or holds a `-`.
fn may_start_with_dash(word: &str) -> bool {
    match word.chars().next() {
        Some('*' | '?') => true,
        // A negated set matches `-` unless it lists it; refusing it whole is simpler.
        Some('[') if word[1..].starts_with(['!', '^']) => true,
        Some('[') => {
            let rest = &word[1..];
            // A `]` first is a member; the expression ends at the next `]`.
            let search_from = usize::from(rest.starts_with(']'));
            match rest[search_from..].find(']') {
                None => false, // no closing bracket: a literal `[`
                Some(end) => rest[..search_from + end].contains(['-', '[']),
            }
        }
        _ => false,
    }
}

/// `{a,b}` and `{1..3}` expand to words the text does not show.
fn has_brace_expansion(word: &str) -> bool {
    let Some(open) = word.find('{') else { return false };
    let Some(close) = word[open..].find('}') else { return false };
    let inner = &word[open + 1..open + close];
    inner.contains(',') || inner.contains("..")
}

// The row tests name the option machinery through `super::`, as they did when it lived here.
#[cfg(test)]
use crate::bash_options::Arity;

#[cfg(test)]
#[path = "bash_classify_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "bash_classify_prop.rs"]
mod prop;
