//! The one shell lexer: cuts a Bash command into simple commands of unquoted words.
//!
//! Two judges read Bash commands: the read-only classifier ([`crate::is_read_only_command`]),
//! which decides whether a call may run in parallel and be re-run after a crash, and the
//! permission rule matcher (`permissions::shell`), which decides whether `Bash(git diff:*)` covers
//! a call. They are shared so that both see the same words for the same text: a quoting, redirect
//! or operator rule fixed for one is fixed for the other, and a command the matcher quotes back
//! (`permissions::shell::quote`) is read by the classifier exactly as the matcher split it.
//!
//! The lexer never fails. It splits on `&&`, `||`, `;`, `|`, `&` and newlines, unquotes words,
//! drops the redirections that show no effect (`2>&1`, `>/dev/null`, `< file`) and marks the
//! command [`Lexed::opaque`] where the words do not show what runs or what is written (command or
//! process substitution, subshells, heredocs, output into a file, an unclosed quote). It goes on
//! after such a construct, so the pieces inside `$(...)` still become segments for deny rules;
//! the classifier simply refuses any opaque command. Where the two callers read the text
//! differently, [`Options`] says so.

/// Where the two callers read the same text differently.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Options {
    /// Whether `\` before a newline joins the lines, as the shell does. When false the newline is
    /// kept as a character of the word.
    pub(crate) line_continuation: bool,
    /// Whether a `$` that does not open `$(...)` (a variable or other expansion) makes the
    /// command opaque. When false it is kept as a plain character of the word.
    pub(crate) dollar_is_opaque: bool,
}

/// A command cut into simple commands, each a list of unquoted words without redirections.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Lexed {
    pub(crate) segments: Vec<Vec<String>>,
    /// Set when the text holds a construct whose effect the words do not show.
    pub(crate) opaque: bool,
    /// Files read through `< file`, with the index of the segment they feed: the words of a
    /// segment do not show them, but the path checks must.
    pub(crate) inputs: Vec<(usize, String)>,
    /// Files written through `> file` (which also makes the command opaque), for deny rules.
    pub(crate) outputs: Vec<String>,
    /// For each word of each segment, whether it holds an unquoted `*`, `?` or `[`: a glob the
    /// shell expands into words the text does not show (`'*.rs'` quoted is one literal word).
    pub(crate) globbed: Vec<Vec<bool>>,
}

/// Cuts `text` into simple commands, reading it as `options` say.
pub(crate) fn lex(text: &str, options: Options) -> Lexed {
    let chars: Vec<char> = text.chars().collect();
    let mut lexer = Lexer {
        chars: &chars,
        pos: 0,
        options,
        lexed: Lexed::default(),
        words: Vec::new(),
        word: None,
        globs: Vec::new(),
        glob: false,
    };
    lexer.run();
    lexer.end_segment();
    lexer.lexed
}

struct Lexer<'a> {
    chars: &'a [char],
    pos: usize,
    options: Options,
    lexed: Lexed,
    words: Vec<String>,
    /// The word being built; `Some("")` after an empty quoted string.
    word: Option<String>,
    /// Whether each word of `words` is a glob.
    globs: Vec<bool>,
    /// Whether the word being built holds an unquoted glob character.
    glob: bool,
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
            self.globs.push(self.glob);
        }
        self.glob = false;
    }

    fn end_segment(&mut self) {
        self.end_word();
        if !self.words.is_empty() {
            self.lexed.segments.push(std::mem::take(&mut self.words));
            self.lexed.globbed.push(std::mem::take(&mut self.globs));
        }
    }

    /// A construct that hides what runs: the text around it still splits, so the pieces inside
    /// `$(...)` or `(...)` become segments of their own for deny rules to see.
    fn opaque_boundary(&mut self, width: usize) {
        self.lexed.opaque = true;
        self.end_segment();
        self.pos += width;
    }

    fn run(&mut self) {
        while let Some(c) = self.peek(0) {
            match c {
                '\'' => self.single_quoted(),
                '"' => self.double_quoted(),
                '\\' => {
                    let continuation = self.options.line_continuation;
                    if let Some(next) = self.peek(1).filter(|&n| !(continuation && n == '\n')) {
                        self.push(next);
                    }
                    self.pos += 2;
                }
                '$' if self.peek(1) == Some('(') => self.opaque_boundary(2),
                '`' | '(' | ')' => self.opaque_boundary(1),
                '$' => {
                    if self.options.dollar_is_opaque {
                        self.lexed.opaque = true;
                    }
                    self.push('$');
                    self.pos += 1;
                }
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
                    self.glob |= matches!(other, '*' | '?' | '[');
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
        self.lexed.opaque = true; // never closed
    }

    /// Double quotes still expand `$(...)` and backticks (and `$` variables), so those make the
    /// command opaque.
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
                    if c == '`' || self.options.dollar_is_opaque || self.peek(1) == Some('(') {
                        self.lexed.opaque = true;
                    }
                    self.push(c);
                    self.pos += 1;
                }
                '\\' => {
                    match self.peek(1) {
                        Some('\n') if self.options.line_continuation => {}
                        Some(next @ ('$' | '`' | '"' | '\\' | '\n')) => self.push(next),
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
        self.lexed.opaque = true; // never closed
    }

    /// `2>` and `<0` name a file descriptor with the digits just before the operator.
    fn drop_fd_number(&mut self) {
        if self.word.as_deref().is_some_and(|w| !w.is_empty() && w.chars().all(|c| c.is_ascii_digit())) {
            self.word = None;
        } else {
            self.end_word();
        }
    }

    /// At `>`: duplicating a descriptor (`>&2`, `2>&1`) and discarding to `/dev/null` leave the
    /// words as they are; writing into any other file is an effect the words do not show.
    fn output_redirect(&mut self) {
        self.pos += 1; // the '>'
        match self.peek(0) {
            Some('(') => return self.opaque_boundary(1),
            Some('>') | Some('|') => self.pos += 1,
            Some('&') => {
                self.pos += 1;
                let target = self.target();
                if !(target == "-" || (!target.is_empty() && target.chars().all(|c| c.is_ascii_digit()))) {
                    self.lexed.opaque = true;
                }
                return;
            }
            _ => {}
        }
        let target = self.target();
        if target != "/dev/null" {
            self.lexed.opaque = true;
            self.lexed.outputs.push(target);
        }
    }

    /// At `<`: reading a file leaves the words as they are; heredocs, `<>` (opens for writing) and
    /// `<(` do not.
    fn input_redirect(&mut self) {
        self.pos += 1; // the '<'
        match self.peek(0) {
            Some('(') => self.opaque_boundary(1),
            Some('<') | Some('>') => {
                self.lexed.opaque = true;
                self.pos += 1;
            }
            Some('&') => {
                self.pos += 1;
                self.target();
            }
            _ => {
                let target = self.target();
                let segment = self.lexed.segments.len();
                self.lexed.inputs.push((segment, target));
            }
        }
    }

    /// The plain word after a redirection operator; a quoted, expanded or missing one is opaque.
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
                self.lexed.opaque = true;
            }
            target.push(c);
            self.pos += 1;
        }
        if target.is_empty() {
            self.lexed.opaque = true;
        }
        target
    }
}
