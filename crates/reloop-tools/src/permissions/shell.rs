//! How a Bash command is cut into the simple commands that permission rules are matched against.
//!
//! Claude Code is aware of shell operators: `Bash(safe-cmd:*)` must not let `safe-cmd && rm -rf x`
//! through, so a command is split on `&&`, `||`, `;`, `|`, `&` and newlines and every piece is
//! judged on its own. Anything whose effect cannot be read off the text (command or process
//! substitution, subshells, `$` expansion, heredocs, output redirected into a file, an unclosed
//! quote) makes the command *opaque*: allow rules then never apply to it, while deny rules are
//! still matched against every piece that could be recognised, including the insides of `$(...)`.

/// A command cut into simple commands, each a list of unquoted words without redirections.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Command {
    pub(crate) segments: Vec<Vec<String>>,
    /// Set when the text holds a construct whose effect the words do not show.
    pub(crate) opaque: bool,
}

/// Splits `text` into simple commands. Never fails: what is not understood sets
/// [`Command::opaque`].
pub(crate) fn parse(text: &str) -> Command {
    let chars: Vec<char> = text.chars().collect();
    let mut lexer = Lexer { chars: &chars, pos: 0, command: Command::default(), words: Vec::new(), word: None };
    lexer.run();
    lexer.end_segment();
    lexer.command
}

/// Words of a rule's command text (`git diff` in `Bash(git diff:*)`), unquoted the same way as
/// the commands they are compared with.
pub(crate) fn words(text: &str) -> Vec<String> {
    parse(text).segments.into_iter().flatten().collect()
}

/// Quotes `words` back into a command line that a shell (and [`crate::is_read_only_command`])
/// reads as exactly these words.
pub(crate) fn quote(words: &[String]) -> String {
    words.iter().map(|w| format!("'{}'", w.replace('\'', "'\\''"))).collect::<Vec<_>>().join(" ")
}

/// Leading `NAME=value` words, which set the environment of the command that follows them.
pub(crate) fn skip_assignments(words: &[String]) -> &[String] {
    let is_assignment = |w: &String| {
        w.split_once('=').is_some_and(|(name, _)| {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        })
    };
    let skip = words.iter().take_while(|w| is_assignment(w)).count();
    &words[skip..]
}

struct Lexer<'a> {
    chars: &'a [char],
    pos: usize,
    command: Command,
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
            self.command.segments.push(std::mem::take(&mut self.words));
        }
    }

    /// A construct that hides what runs: the text around it still splits, so the pieces inside
    /// `$(...)` or `(...)` become segments of their own for deny rules to see.
    fn opaque_boundary(&mut self, width: usize) {
        self.command.opaque = true;
        self.end_segment();
        self.pos += width;
    }

    fn run(&mut self) {
        while let Some(c) = self.peek(0) {
            match c {
                '\'' => self.single_quoted(),
                '"' => self.double_quoted(),
                '\\' => {
                    if let Some(next) = self.peek(1).filter(|&n| n != '\n') {
                        self.push(next);
                    }
                    self.pos += 2;
                }
                '$' if self.peek(1) == Some('(') => self.opaque_boundary(2),
                '`' | '(' | ')' => self.opaque_boundary(1),
                '$' => {
                    self.command.opaque = true;
                    self.push('$');
                    self.pos += 1;
                }
                ' ' | '\t' => {
                    self.end_word();
                    self.pos += 1;
                }
                '#' if self.word.is_none() => {
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
                    self.output_redirect();
                }
                '&' | '|' => {
                    self.end_segment();
                    let doubled = matches!(self.peek(1), Some('&') | Some('|'));
                    self.pos += if doubled { 2 } else { 1 };
                }
                '>' => {
                    self.drop_fd_number();
                    self.output_redirect();
                }
                '<' => {
                    self.drop_fd_number();
                    self.input_redirect();
                }
                other => {
                    self.push(other);
                    self.pos += 1;
                }
            }
        }
    }

    fn single_quoted(&mut self) {
        self.word.get_or_insert_with(String::new);
        self.pos += 1;
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            if c == '\'' {
                return;
            }
            self.push(c);
        }
        self.command.opaque = true; // never closed
    }

    /// Double quotes still expand `$` and backticks, so those make the command opaque.
    fn double_quoted(&mut self) {
        self.word.get_or_insert_with(String::new);
        self.pos += 1;
        while let Some(c) = self.peek(0) {
            match c {
                '"' => {
                    self.pos += 1;
                    return;
                }
                '`' | '$' => {
                    self.command.opaque = true;
                    self.push(c);
                    self.pos += 1;
                }
                '\\' => {
                    match self.peek(1) {
                        Some(next @ ('$' | '`' | '"' | '\\')) => self.push(next),
                        Some('\n') => {}
                        Some(next) => {
                            self.push('\\');
                            self.push(next);
                        }
                        None => self.push('\\'),
                    }
                    self.pos += 2;
                }
                other => {
                    self.push(other);
                    self.pos += 1;
                }
            }
        }
        self.command.opaque = true; // never closed
    }

    /// `2>` and `<0` name a file descriptor with the digits just before the operator.
    fn drop_fd_number(&mut self) {
        if self.word.as_deref().is_some_and(|w| !w.is_empty() && w.chars().all(|c| c.is_ascii_digit())) {
            self.word = None;
        } else {
            self.end_word();
        }
    }

    /// At `>`: duplicating a descriptor (`2>&1`) and discarding to `/dev/null` leave the words as
    /// they are; writing into any other file is an effect the words do not show.
    fn output_redirect(&mut self) {
        self.pos += 1; // the '>'
        match self.peek(0) {
            Some('(') => return self.opaque_boundary(1),
            Some('>') | Some('|') => self.pos += 1,
            Some('&') => {
                self.pos += 1;
                let target = self.target();
                if !(target == "-" || (!target.is_empty() && target.chars().all(|c| c.is_ascii_digit()))) {
                    self.command.opaque = true;
                }
                return;
            }
            _ => {}
        }
        if self.target() != "/dev/null" {
            self.command.opaque = true;
        }
    }

    /// At `<`: reading a file leaves the words as they are; heredocs, `<>` and `<(` do not.
    fn input_redirect(&mut self) {
        self.pos += 1; // the '<'
        match self.peek(0) {
            Some('(') => self.opaque_boundary(1),
            Some('<') | Some('>') => {
                self.command.opaque = true;
                self.pos += 1;
            }
            Some('&') => {
                self.pos += 1;
                self.target();
            }
            _ => {
                self.target();
            }
        }
    }

    /// The plain word after a redirection operator; a quoted or expanded one is opaque.
    fn target(&mut self) -> String {
        while matches!(self.peek(0), Some(' ') | Some('\t')) {
            self.pos += 1;
        }
        let mut target = String::new();
        while let Some(c) = self.peek(0) {
            if c.is_whitespace() || ";&|<>()".contains(c) {
                break;
            }
            if "'\"\\`$".contains(c) {
                self.command.opaque = true;
            }
            target.push(c);
            self.pos += 1;
        }
        if target.is_empty() {
            self.command.opaque = true;
        }
        target
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segs(text: &str) -> Vec<String> {
        parse(text).segments.iter().map(|s| s.join(" ")).collect()
    }

    #[test]
    fn operators_split_and_quotes_do_not() {
        assert_eq!(segs("git diff && npm test; ls | wc -l"), ["git diff", "npm test", "ls", "wc -l"]);
        assert_eq!(segs("grep 'a && b' f"), ["grep a && b f"]);
        assert!(!parse("git diff HEAD 2>&1 >/dev/null").opaque);
        assert_eq!(segs("git diff HEAD 2>&1"), ["git diff HEAD"]);
    }

    #[test]
    fn hidden_effects_are_opaque_but_still_split_for_deny_rules() {
        let cmd = parse("git diff $(rm -rf x)");
        assert!(cmd.opaque);
        assert_eq!(segs("git diff $(rm -rf x)"), ["git diff", "rm -rf x"]);
        for text in ["git diff > out", "echo `id`", "cat <<EOF", "echo \"$HOME\"", "echo 'open", "(ls)"] {
            assert!(parse(text).opaque, "{text}");
        }
    }

    #[test]
    fn quoting_round_trips_words() {
        let words = vec!["echo".to_string(), "it's a b".to_string()];
        assert_eq!(parse(&quote(&words)).segments, vec![words]);
    }

    #[test]
    fn leading_assignments_are_skipped() {
        let words: Vec<String> = ["FOO=1", "A_B=x=y", "rm", "-rf"].iter().map(|s| s.to_string()).collect();
        assert_eq!(skip_assignments(&words), &words[2..]);
    }
}
