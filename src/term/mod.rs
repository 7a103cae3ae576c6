//! What reaches a person's terminal.
//!
//! Text in a session comes from places nobody vetted: file names, tool output, model answers,
//! hook output. Printed raw, `\x1b]0;pwned\x07` retitles the terminal, `\x1b[2J` clears it,
//! and a bidi override makes a line read differently from what it holds. Every human-readable
//! line reloop prints therefore goes through [`visible`], which turns such characters into the
//! visible escape `\u{1b}` (Rust's notation: `\u{` + lowercase hex + `}`) and keeps `\n`,
//! `\t` and CRLF line ends. JSON output goes through [`json_safe`], which keeps it the exact same
//! JSON value while escaping what serde leaves raw (C1 controls, DEL, bidi controls).
//!
//! A closed stdout (`reloop show last | head -1`) is a normal end, not a panic: the writes here
//! never panic, and the first failed write marks stdout closed ([`stdout_closed`]) so a caller
//! can stop early.
//!
//! Colour is decided once per stream, as anstream decides it (`NO_COLOR`, `CLICOLOR_FORCE`,
//! `CLICOLOR`, `TERM=dumb`, and whether the stream is a terminal), before a pager takes stdout
//! over; styles are anstyle's and only ever wrap text already made [`visible`], so the only
//! escape codes that reach a terminal are reloop's own.
//!
//! Everything else about the terminal sits here too, below every command: the pager ([`pager`]),
//! the spinner ([`spinner`]) and how a run is shown ([`output`]).

pub mod output;
pub mod pager;
pub mod spinner;

use std::borrow::Cow;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

use anstyle::Style;

/// Set by the first write to stdout that failed (the reader went away).
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Whether stdout and stderr get colour, decided on first use.
static COLOUR: OnceLock<(bool, bool)> = OnceLock::new();

/// The pager's stdin, when a pager shows what reloop writes to stdout ([`pager`]).
static PAGER_INPUT: Mutex<Option<std::process::ChildStdin>> = Mutex::new(None);

/// The styles reloop uses, so every command looks alike.
pub mod style {
    use anstyle::{AnsiColor, Color, Style};

    /// A tool call, a heading.
    pub const STRONG: Style = Style::new().bold();
    /// Secondary detail: tool results, notices, the run's footer.
    pub const DIM: Style = Style::new().dimmed();
    /// Something went wrong.
    pub const ERROR: Style = Style::new().fg_color(Some(Color::Ansi(AnsiColor::Red))).bold();
    /// A warning the user should read.
    pub const WARN: Style = Style::new().fg_color(Some(Color::Ansi(AnsiColor::Yellow)));
}

fn colour() -> (bool, bool) {
    *COLOUR.get_or_init(|| {
        let on = |choice: anstream::ColorChoice| choice != anstream::ColorChoice::Never;
        (on(anstream::AutoStream::choice(&std::io::stdout())), on(anstream::AutoStream::choice(&std::io::stderr())))
    })
}

/// Decides colour now, while stdout is still what the user gave reloop (before a pager).
pub fn init_colour() {
    colour();
}

/// `text` made [`visible`] and wrapped in `style` when `on`.
pub fn paint(style: Style, text: &str, on: bool) -> String {
    if on && style != Style::new() {
        format!("{style}{}{style:#}", visible(text))
    } else {
        visible(text).into_owned()
    }
}

/// One line on stdout in `style` (when stdout has colour).
pub fn styled_line(style: Style, text: &str) {
    write_stdout(&format!("{}\n", paint(style, text, colour().0)), false);
}

/// One line on stderr in `style` (when stderr has colour).
pub fn styled_errln(style: Style, text: &str) {
    write_stderr(&format!("{}\n", paint(style, text, colour().1)));
}

/// From now on stdout goes to `input`, a pager's stdin.
pub(crate) fn send_stdout_to(input: std::process::ChildStdin) {
    if let Ok(mut pager) = PAGER_INPUT.lock() {
        *pager = Some(input);
    }
}

/// Stops sending stdout to the pager and closes its stdin, so it sees the end of the text.
pub(crate) fn take_pager_input() -> Option<std::process::ChildStdin> {
    PAGER_INPUT.lock().ok().and_then(|mut pager| pager.take())
}

/// Characters a terminal may act on instead of showing, other than `\n`, `\t` and CR (which is
/// kept only as part of CRLF): C0 and C1 controls, DEL, and the bidi embeddings, overrides,
/// isolates and marks.
fn is_unsafe(c: char) -> bool {
    match c {
        '\n' | '\t' => false,
        c if c.is_control() => true,
        '\u{200e}' | '\u{200f}' | '\u{061c}' => true,
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => true,
        _ => false,
    }
}

/// `text` with every unsafe character written as `\u{hex}`; borrowed when nothing changes.
pub fn visible(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let unsafe_at = |i: usize, c: char| is_unsafe(c) && !(c == '\r' && bytes.get(i + 1) == Some(&b'\n'));
    if !text.char_indices().any(|(i, c)| unsafe_at(i, c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for (i, c) in text.char_indices() {
        if unsafe_at(i, c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Serialized JSON with C1 controls, DEL and bidi controls escaped as `\uXXXX`. The value is
/// unchanged: outside strings JSON holds only ASCII, and inside a string `\uXXXX` is that char.
pub fn json_safe(json: &str) -> Cow<'_, str> {
    // serde escapes C0 controls inside strings, and outside them `\n`, `\r`, `\t` are JSON's
    // own whitespace: only DEL and above are left to do.
    let raw = |c: char| c >= '\u{7f}' && is_unsafe(c);
    if !json.chars().any(raw) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if raw(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Whether a write to stdout has failed because nobody reads it any more.
pub fn stdout_closed() -> bool {
    STDOUT_CLOSED.load(Ordering::Relaxed)
}

/// Writes `text` to stdout as it is (the caller made it safe), flushing when `flush`. Once stdout
/// is closed nothing more is written.
pub fn write_stdout(text: &str, flush: bool) {
    if stdout_closed() {
        return;
    }
    let write =
        |out: &mut dyn Write| out.write_all(text.as_bytes()).and_then(|()| if flush { out.flush() } else { Ok(()) });
    let written = match PAGER_INPUT.lock().as_deref_mut() {
        Ok(Some(pager)) => write(pager),
        _ => write(&mut std::io::stdout().lock()),
    };
    if written.is_err() {
        STDOUT_CLOSED.store(true, Ordering::Relaxed);
    }
}

/// Writes `text` to stderr; a closed stderr is ignored (there is nobody left to tell).
pub fn write_stderr(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// Flushes stdout at the end of a command; a reader that went away is not an error.
pub fn flush_stdout() {
    let flushed = match PAGER_INPUT.lock().as_deref_mut() {
        Ok(Some(pager)) => pager.flush(),
        _ => std::io::stdout().lock().flush(),
    };
    if !stdout_closed() && flushed.is_err() {
        STDOUT_CLOSED.store(true, Ordering::Relaxed);
    }
}

/// A JSON value on stdout, pretty or compact, with [`json_safe`] applied.
pub fn json_line(value: &impl serde::Serialize, pretty: bool) -> Result<(), serde_json::Error> {
    let text = if pretty { serde_json::to_string_pretty(value)? } else { serde_json::to_string(value)? };
    write_stdout(&format!("{}\n", json_safe(&text)), false);
    Ok(())
}

/// The array `serde_json` pretty-prints, written an element at a time (with [`json_safe`]
/// applied), so a command walking a session never holds the whole array: [`PrettyArray::push`]
/// each element, then [`PrettyArray::end`].
#[derive(Default)]
pub struct PrettyArray {
    pushed: bool,
}

impl PrettyArray {
    pub fn push(&mut self, element: &impl serde::Serialize) -> Result<(), serde_json::Error> {
        let element = serde_json::to_string_pretty(element)?;
        let open = if std::mem::replace(&mut self.pushed, true) { ",\n  " } else { "[\n  " };
        write_stdout(&format!("{open}{}", json_safe(&element.replace('\n', "\n  "))), false);
        Ok(())
    }

    /// Closes the array and its line.
    pub fn end(self) {
        write_stdout(if self.pushed { "\n]\n" } else { "[]\n" }, false);
    }
}

/// [`json_line`] written as it is serialized, a chunk at a time, so a long value (a session's
/// whole conversation) is never held as one string. The bytes are the same.
pub fn json_line_streamed(value: &impl serde::Serialize, pretty: bool) -> Result<(), serde_json::Error> {
    let mut out = JsonStdout::default();
    if pretty {
        serde_json::to_writer_pretty(&mut out, value)?;
    } else {
        serde_json::to_writer(&mut out, value)?;
    }
    out.write_all(b"\n").map_err(serde_json::Error::io)?;
    out.finish();
    Ok(())
}

/// Stdout for JSON written as it is made: the bytes are gathered and handed to stdout through
/// [`json_safe`] in chunks that end on a character boundary. A write to a closed stdout fails,
/// which stops whatever is writing. [`JsonStdout::finish`] writes what is left.
#[derive(Default)]
pub struct JsonStdout {
    pending: Vec<u8>,
    /// The last byte written, to tell whether the output ends its line.
    last: Option<u8>,
}

impl JsonStdout {
    const CHUNK: usize = 64 << 10;

    /// Whether what was written so far ends with a newline (nothing written: no).
    pub fn ends_line(&self) -> bool {
        self.last == Some(b'\n')
    }

    /// Writes what is left.
    pub fn finish(mut self) {
        self.drain(true);
    }

    fn drain(&mut self, all: bool) {
        let valid = match std::str::from_utf8(&self.pending) {
            Ok(text) => text.len(),
            Err(e) => e.valid_up_to(),
        };
        let end = if all { self.pending.len() } else { valid };
        let text = String::from_utf8_lossy(&self.pending[..end]);
        write_stdout(&json_safe(&text), false);
        self.pending.drain(..end);
    }
}

impl Write for JsonStdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if stdout_closed() {
            return Err(std::io::Error::new(std::io::ErrorKind::BrokenPipe, "stdout is closed"));
        }
        self.pending.extend_from_slice(buf);
        self.last = buf.last().copied().or(self.last);
        if self.pending.len() >= Self::CHUNK {
            self.drain(false);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `println!` for human-readable text: made [`visible`], never panics on a closed stdout.
macro_rules! outln {
    () => { $crate::term::write_stdout("\n", false) };
    ($($arg:tt)*) => {{
        let line = format!($($arg)*);
        $crate::term::write_stdout(&format!("{}\n", $crate::term::visible(&line)), false)
    }};
}

/// `print!` for human-readable text, flushed at once (streamed model text).
macro_rules! out {
    ($($arg:tt)*) => {{
        let text = format!($($arg)*);
        $crate::term::write_stdout(&$crate::term::visible(&text), true)
    }};
}

/// `eprintln!` for human-readable text: made [`visible`], never panics on a closed stderr.
macro_rules! errln {
    ($($arg:tt)*) => {{
        let line = format!($($arg)*);
        $crate::term::write_stderr(&format!("{}\n", $crate::term::visible(&line)))
    }};
}

pub(crate) use {errln, out, outln};

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Whatever a session holds, what reaches the terminal holds no control it could act on
        /// (a CR only right before a LF), and the JSON form is the same value.
        #[test]
        fn nothing_a_terminal_acts_on_gets_through(text in "(?s)(.|\u{1b}|\u{7}|\r|\u{9b}|\u{202e}|\u{2066}){0,40}") {
            let shown = visible(&text);
            let chars: Vec<char> = shown.chars().collect();
            for (i, c) in chars.iter().enumerate() {
                prop_assert!(!is_unsafe(*c) || (*c == '\r' && chars.get(i + 1) == Some(&'\n')), "{shown:?}");
            }
            let json = serde_json::to_string(&text).unwrap();
            let safe = json_safe(&json);
            prop_assert!(!safe.chars().any(is_unsafe), "{safe:?}");
            prop_assert_eq!(serde_json::from_str::<String>(&safe).unwrap(), text);
        }
    }

    #[test]
    fn terminal_controls_become_visible_and_line_ends_stay() {
        assert_eq!(visible("a\x1b]0;pwned\x07b"), "a\\u{1b}]0;pwned\\u{7}b");
        assert_eq!(visible("\x1b[2J"), "\\u{1b}[2J");
        assert_eq!(visible("one\r\ntwo\n\tthree"), "one\r\ntwo\n\tthree");
        assert_eq!(visible("50%\rdone"), "50%\\u{d}done");
        assert_eq!(visible("end\r"), "end\\u{d}");
        assert_eq!(visible("back\x08space\x7f"), "back\\u{8}space\\u{7f}");
        assert_eq!(visible("c1 \u{9b}31m"), "c1 \\u{9b}31m");
        assert_eq!(visible("admin\u{202e}txt.exe"), "admin\\u{202e}txt.exe");
        assert_eq!(visible("\u{2066}x\u{2069}"), "\\u{2066}x\\u{2069}");
        assert_eq!(visible("\0nul"), "\\u{0}nul");
    }

    #[test]
    fn ordinary_text_is_borrowed_untouched() {
        for text in ["", "plain", "登录模块检查完毕", "tabs\tand\nlines\r\n", "emoji ⏺ ⎿ é"] {
            assert!(matches!(visible(text), Cow::Borrowed(t) if t == text), "{text:?}");
            assert!(matches!(json_safe(text), Cow::Borrowed(_)), "{text:?}");
        }
    }

    #[test]
    fn json_stays_the_same_value_without_raw_controls() {
        let value = serde_json::json!({"name": "a\u{1b}[2J\u{9b}\u{202e}\u{7f}b", "n": 1});
        let text = serde_json::to_string(&value).unwrap();
        let safe = json_safe(&text);
        assert!(!safe.chars().any(is_unsafe), "{safe}");
        assert_eq!(serde_json::from_str::<serde_json::Value>(&safe).unwrap(), value);
        assert_eq!(safe, r#"{"name":"a\u001b[2J\u009b\u202e\u007fb","n":1}"#);
    }
}
