//! A conservative judge of whether a shell command only reads.
//!
//! The driver runs read-only calls in parallel and may re-run them after a crash, so a false
//! "read-only" is a real hazard while a false "writes" only costs speed. Hence: anything this
//! module does not understand (command substitution, process substitution, subshells, heredocs,
//! unknown commands, redirection to a file) makes the whole command count as writing.

use crate::shell_lex::{lex, Options};

/// Commands that only read, whatever their arguments (beyond the checks in [`args_are_safe`]).
const READ_ONLY_COMMANDS: &[&str] = &[
    "basename",
    "cat",
    "cd",
    "cmp",
    "column",
    "comm",
    "cut",
    "date",
    "df",
    "diff",
    "dirname",
    "du",
    "echo",
    "egrep",
    "false",
    "fgrep",
    "file",
    "find",
    "git",
    "grep",
    "head",
    "id",
    "jq",
    "less",
    "ls",
    "md5sum",
    "nl",
    "od",
    "printf",
    "pwd",
    "readlink",
    "realpath",
    "rg",
    "seq",
    "sha1sum",
    "sha256sum",
    "sort",
    "stat",
    "tail",
    "test",
    "tr",
    "tree",
    "true",
    "type",
    "uname",
    "uniq",
    "wc",
    "which",
    "whoami",
];

/// git subcommands that do not change the repository (with [`git_args_are_safe`]).
const READ_ONLY_GIT: &[&str] = &["blame", "branch", "diff", "log", "ls-files", "rev-parse", "show", "status"];

/// `find` actions that run programs or write files.
const FIND_WRITES: &[&str] =
    &["-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"];

/// Whether `cmd` certainly only reads. Bash calls are concurrency-safe and read-only iff this holds.
pub fn is_read_only_command(cmd: &str) -> bool {
    match split(cmd) {
        Some(segments) => !segments.is_empty() && segments.iter().all(|words| segment_is_read_only(words)),
        None => false,
    }
}

fn segment_is_read_only(words: &[String]) -> bool {
    let Some((first, args)) = words.split_first() else { return true };
    READ_ONLY_COMMANDS.contains(&first.as_str()) && args_are_safe(first, args)
}

/// Per-command argument checks for the listed commands that can write or run programs.
fn args_are_safe(command: &str, args: &[String]) -> bool {
    let any = |pred: &dyn Fn(&str) -> bool| args.iter().any(|a| pred(a));
    match command {
        "find" => !any(&|a| FIND_WRITES.contains(&a)),
        "rg" => !any(&|a| a == "--pre" || a.starts_with("--pre=")),
        // -o FILE writes the result; a bundled short flag like -uo does too.
        "sort" => {
            !any(&|a| a.starts_with("--output") || a.starts_with("--compress-program") || is_short_flags_with(a, 'o'))
        }
        "tree" => !any(&|a| is_short_flags_with(a, 'o')),
        "file" => !any(&|a| a == "--compile" || is_short_flags_with(a, 'C')),
        "date" => !any(&|a| a.starts_with("--set") || is_short_flags_with(a, 's')),
        // `uniq IN OUT` writes OUT.
        "uniq" => args.iter().filter(|a| !a.starts_with('-')).count() <= 1,
        "less" => !any(&|a| a.starts_with("-o") || a.starts_with("-O") || a.starts_with("--log-file")),
        "git" => git_args_are_safe(args),
        _ => true,
    }
}

fn is_short_flags_with(arg: &str, flag: char) -> bool {
    arg.starts_with('-') && !arg.starts_with("--") && arg.contains(flag)
}

/// git: the subcommand must come first (no `-c` config that could run programs) and must read.
fn git_args_are_safe(args: &[String]) -> bool {
    let Some((sub, rest)) = args.split_first() else { return false };
    if !READ_ONLY_GIT.contains(&sub.as_str()) {
        return false;
    }
    // --output writes a file; --ext-diff runs a configured program.
    if rest.iter().any(|a| a.starts_with("--output") || a == "--ext-diff") {
        return false;
    }
    if sub == "branch" {
        // Only listing: any other argument could create, rename or delete a branch.
        const LISTING: &[&str] = &[
            "-a",
            "-r",
            "-v",
            "-vv",
            "-l",
            "--all",
            "--remotes",
            "--list",
            "--show-current",
            "--verbose",
            "--no-color",
        ];
        return rest.iter().all(|a| LISTING.contains(&a.as_str()));
    }
    true
}

/// Read as bash would: a backslash-newline joins lines (`--\<newline>output=x` is `--output=x`),
/// and a `$NAME` could expand to anything (`sort $X` may be `sort -o out`), so it is opaque.
/// Conservative on purpose: `echo $HOME` then needs approval and runs alone.
const LEX: Options = Options { line_continuation: true, dollar_is_opaque: true };

/// Splits `cmd` into simple commands (on `&&`, `||`, `;`, `|`, `&` and newlines) of unquoted
/// words, or `None` when it holds a construct that is not understood or may write.
fn split(cmd: &str) -> Option<Vec<Vec<String>>> {
    let lexed = lex(cmd, LEX);
    (!lexed.opaque).then_some(lexed.segments)
}

#[cfg(test)]
mod tests {
    use super::is_read_only_command as ro;

    #[test]
    fn plain_reading_commands_are_read_only() {
        for cmd in [
            "ls -la",
            "cat src/main.rs",
            "head -n 20 a.txt",
            "wc -l *.rs",
            "grep -rn 'fn main' src",
            "rg foo",
            "find . -name '*.rs'",
            "pwd",
            "echo hello",
            "git status",
            "git log --oneline -5",
            "git diff HEAD~1",
            "git branch",
            "git branch -a",
            "tree -L 2",
            "du -sh .",
            "sort a.txt | uniq -c",
        ] {
            assert!(ro(cmd), "{cmd} should be read-only");
        }
    }

    #[test]
    fn every_segment_of_a_chain_or_pipeline_must_read() {
        assert!(ro("cd src && ls; cat a | grep x || echo none"));
        assert!(!ro("ls && rm -rf target"));
        assert!(!ro("cat a | tee b"));
        assert!(!ro("ls; touch x"));
        assert!(!ro("ls\nrm x"));
        assert!(!ro("ls & rm x"));
    }

    #[test]
    fn operators_inside_quotes_do_not_split() {
        assert!(ro("grep -E 'a|b;c&&d' file"));
        assert!(ro("echo \"x > y\""));
        assert!(!ro("echo 'a' > out.txt"));
    }

    #[test]
    fn output_redirection_to_a_file_writes() {
        assert!(!ro("echo hi > out.txt"));
        assert!(!ro("echo hi >> out.txt"));
        assert!(!ro("ls &> out.txt"));
        assert!(!ro("ls 2> err.txt"));
        assert!(!ro("ls >| out.txt"));
        assert!(!ro("echo hi>out.txt"));
    }

    #[test]
    fn discarding_output_and_merging_streams_is_allowed() {
        assert!(ro("ls 2>/dev/null"));
        assert!(ro("ls > /dev/null 2>&1"));
        assert!(ro("ls &>/dev/null"));
        assert!(ro("grep x a 2>&1 | head"));
        assert!(ro("cat < input.txt"));
    }

    #[test]
    fn substitutions_subshells_and_heredocs_are_refused() {
        assert!(!ro("echo $(rm x)"));
        assert!(!ro("echo \"$(rm x)\""));
        assert!(!ro("echo `rm x`"));
        assert!(!ro("echo \"`rm x`\""));
        assert!(!ro("diff <(ls a) <(ls b)"));
        assert!(!ro("ls >(cat)"));
        assert!(!ro("(ls)"));
        assert!(!ro("cat <<EOF\nhi\nEOF"));
        assert!(!ro("cat <> file"));
        assert!(ro("echo '$(not expanded)'"));
    }

    #[test]
    fn unknown_or_indirect_commands_are_not_read_only() {
        assert!(!ro("rm -rf /"));
        assert!(!ro("sed -i s/a/b/ f"));
        assert!(!ro("xargs rm"));
        assert!(!ro("FOO=bar ls"));
        assert!(!ro("$CMD"));
        assert!(!ro("/bin/rm x"));
        assert!(!ro("env rm x"));
        assert!(!ro(""));
        assert!(!ro("   "));
    }

    #[test]
    fn writing_flags_of_reading_commands_are_refused() {
        assert!(!ro("find . -name '*.o' -delete"));
        assert!(!ro("find . -exec rm {} ;"));
        assert!(!ro("find . -fprint out"));
        assert!(!ro("sort -o out.txt in.txt"));
        assert!(!ro("sort -uo out.txt in.txt"));
        assert!(!ro("sort --output=out.txt in.txt"));
        assert!(!ro("uniq in.txt out.txt"));
        assert!(!ro("tree -o out.txt"));
        assert!(!ro("rg --pre ./script foo"));
        assert!(!ro("date -s 2020-01-01"));
    }

    #[test]
    fn only_reading_git_subcommands_count() {
        assert!(!ro("git commit -m x"));
        assert!(!ro("git push"));
        assert!(!ro("git checkout main"));
        assert!(!ro("git branch new-feature"));
        assert!(!ro("git branch -D old"));
        assert!(!ro("git -c core.pager=rm log"));
        assert!(!ro("git diff --output=patch.txt"));
        assert!(!ro("git diff --ext-diff"));
        assert!(!ro("git"));
        assert!(ro("git show HEAD:src/lib.rs"));
        assert!(ro("git rev-parse --show-toplevel"));
        assert!(ro("git ls-files | wc -l"));
        assert!(ro("git blame src/lib.rs"));
    }

    #[test]
    fn comments_are_ignored() {
        assert!(ro("ls # list files > out"));
        assert!(!ro("# just a comment\nrm x"));
    }
}

#[cfg(test)]
mod expansion_tests {
    use super::is_read_only_command;

    #[test]
    fn what_bash_would_join_or_expand_is_not_trusted() {
        assert!(!is_read_only_command("git diff --\\\noutput=x"));
        assert!(!is_read_only_command("sort $X in"));
        assert!(!is_read_only_command("cat $FILE"));
        assert!(is_read_only_command("git diff --stat"));
        assert!(is_read_only_command("ls -la src"));
    }
}
