//! A conservative judge of whether a shell command only reads.
//!
//! The driver runs read-only calls in parallel and may re-run them after a crash, so a false
//! "read-only" is a real hazard while a false "writes" only costs speed. Hence: anything this
//! module does not understand (command substitution, process substitution, subshells, heredocs,
//! unknown commands, redirection to a file) makes the whole command count as writing.

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

/// Splits `cmd` into simple commands (on `&&`, `||`, `;`, `|`, `&` and newlines) of unquoted
/// words, or `None` when it holds a construct that is not understood or may write.
fn split(cmd: &str) -> Option<Vec<Vec<String>>> {
    let chars: Vec<char> = cmd.chars().collect();
    let mut lexer = Lexer { chars: &chars, pos: 0, segments: Vec::new(), words: Vec::new(), word: None };
    lexer.run()?;
    lexer.end_segment();
    Some(lexer.segments)
}

struct Lexer<'a> {
    chars: &'a [char],
    pos: usize,
    segments: Vec<Vec<String>>,
    words: Vec<String>,
    /// The word being built; `Some("")` after an empty quoted string.
    word: Option<String>,
}

impl Lexer<'_> {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    fn push(&mut self, c: char) {
        self.word.get_or_insert_with(String::new).push(c);
    }

    fn end_word(&mut self) {
        if let Some(word) = self.word.take() {
            self.words.push(word);
        }
    }

    fn end_segment(&mut self) {
        self.end_word();
        if !self.words.is_empty() {
            self.segments.push(std::mem::take(&mut self.words));
        }
    }

    fn run(&mut self) -> Option<()> {
        while let Some(c) = self.peek(0) {
            match c {
                '\'' => self.single_quoted()?,
                '"' => self.double_quoted()?,
                '\\' => {
                    if let Some(next) = self.peek(1) {
                        self.push(next);
                    }
                    self.pos += 2;
                }
                '`' | '(' | ')' => return None,
                '$' if self.peek(1) == Some('(') => return None,
                ' ' | '\t' => {
                    self.end_word();
                    self.pos += 1;
                }
                '#' if self.word.is_none() => {
                    // A comment runs to the end of the line.
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                '\n' | ';' => {
                    self.end_segment();
                    self.pos += 1;
                }
                '&' if self.peek(1) == Some('>') => {
                    self.end_word();
                    self.pos += 1;
                    self.output_redirect()?;
                }
                '&' | '|' => {
                    self.end_segment();
                    let doubled = matches!(self.peek(1), Some('&') | Some('|'));
                    self.pos += if doubled { 2 } else { 1 };
                }
                '>' => {
                    self.drop_fd_number();
                    self.output_redirect()?;
                }
                '<' => {
                    self.drop_fd_number();
                    self.input_redirect()?;
                }
                other => {
                    self.push(other);
                    self.pos += 1;
                }
            }
        }
        Some(())
    }

    fn single_quoted(&mut self) -> Option<()> {
        let start = self.pos + 1;
        let len = self.chars[start..].iter().position(|&c| c == '\'')?;
        let text: String = self.chars[start..start + len].iter().collect();
        self.word.get_or_insert_with(String::new).push_str(&text);
        self.pos = start + len + 1;
        Some(())
    }

    /// Double quotes still expand `$(...)` and backticks, so those stay refused inside them.
    fn double_quoted(&mut self) -> Option<()> {
        self.word.get_or_insert_with(String::new);
        self.pos += 1;
        loop {
            match self.peek(0)? {
                '"' => {
                    self.pos += 1;
                    return Some(());
                }
                '`' => return None,
                '$' if self.peek(1) == Some('(') => return None,
                '\\' => {
                    let next = self.peek(1)?;
                    if !matches!(next, '$' | '`' | '"' | '\\' | '\n') {
                        self.push('\\');
                    }
                    self.push(next);
                    self.pos += 2;
                }
                other => {
                    self.push(other);
                    self.pos += 1;
                }
            }
        }
    }

    /// `2>` and `<0` name a file descriptor with the digits just before the operator.
    fn drop_fd_number(&mut self) {
        if self.word.as_deref().is_some_and(|w| !w.is_empty() && w.chars().all(|c| c.is_ascii_digit())) {
            self.word = None;
        } else {
            self.end_word();
        }
    }

    /// At `>`: allows duplicating a descriptor (`>&2`, `2>&1`) and discarding to `/dev/null`.
    fn output_redirect(&mut self) -> Option<()> {
        self.pos += 1; // the '>'
        match self.peek(0) {
            Some('(') => return None,
            Some('>') | Some('|') => self.pos += 1,
            Some('&') => {
                self.pos += 1;
                let target = self.target()?;
                return (target == "-" || target.chars().all(|c| c.is_ascii_digit())).then_some(());
            }
            _ => {}
        }
        (self.target()? == "/dev/null").then_some(())
    }

    /// At `<`: reading a file is fine; heredocs, `<>` (opens for writing) and `<(` are refused.
    fn input_redirect(&mut self) -> Option<()> {
        self.pos += 1; // the '<'
        match self.peek(0) {
            Some('<') | Some('>') | Some('(') => None,
            Some('&') => {
                self.pos += 1;
                self.target().map(|_| ())
            }
            _ => self.target().map(|_| ()),
        }
    }

    /// The plain word after a redirection operator; quoting or expansion there is refused.
    fn target(&mut self) -> Option<String> {
        while matches!(self.peek(0), Some(' ') | Some('\t')) {
            self.pos += 1;
        }
        let mut target = String::new();
        while let Some(c) = self.peek(0) {
            if c.is_whitespace() || ";&|<>()".contains(c) {
                break;
            }
            if "'\"\\`$".contains(c) {
                return None;
            }
            target.push(c);
            self.pos += 1;
        }
        (!target.is_empty()).then_some(target)
    }
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
