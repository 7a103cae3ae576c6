//! Read: a file's lines, numbered as `cat -n` would, so the model can cite and edit them.
//!
//! The file is streamed, never loaded whole: a line longer than [`MAX_LINE_CHARS`] keeps only
//! its start in memory, lines outside the window are counted and dropped, so a 1 GB file costs
//! a few megabytes. Like Claude Code, a file over [`MAX_FILE_BYTES`] is refused unless the model
//! gives an `offset` or a `limit`, and any answer over [`MAX_OUTPUT_TOKENS`] is refused too.

use std::io::{BufRead, BufReader, ErrorKind};
use std::path::Path;

use serde_json::{json, Value};

use crate::error::ToolError;
use crate::input;
use crate::paths::resolve;
use crate::special::open_regular;
use crate::tool::{ReadStamp, Tool, ToolContext, ToolOutput};

/// Lines shown when the model gives no limit.
pub(crate) const DEFAULT_LINE_LIMIT: usize = 2000;
/// Characters kept of one line; longer lines are cut so one minified file cannot flood the context.
pub(crate) const MAX_LINE_CHARS: usize = 2000;
/// Marker appended to a cut line.
pub(crate) const LINE_TRUNCATED_MARKER: &str = "… [line truncated]";
/// Largest file read without `offset`/`limit` (Claude Code's 256 KB).
pub(crate) const MAX_FILE_BYTES: u64 = 256 * 1024;
/// Largest answer, in estimated tokens (Claude Code's 25000).
pub(crate) const MAX_OUTPUT_TOKENS: usize = 25_000;
/// How much of the file is sniffed for NUL bytes to call it binary.
const BINARY_SNIFF_BYTES: usize = 8192;
/// Bytes of one line kept while streaming: enough for [`MAX_LINE_CHARS`] of any UTF-8.
const LINE_KEEP_BYTES: usize = MAX_LINE_CHARS * 4;

const DESCRIPTION: &str = "Reads a file from the local filesystem. The file_path should be an absolute path \
(a relative one is resolved against the working directory). By default up to 2000 lines are read from the start \
of the file; for long files pass offset (the 1-based line to start at) and limit (how many lines). Lines are \
returned numbered as `N<tab>text`, starting at 1 or at offset, and lines longer than 2000 characters are cut. \
Binary files cannot be read. Read a file before editing or overwriting it: Write and Edit refuse files that were \
not read in this session.";

/// The built-in Read tool.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ReadTool;

impl Tool for ReadTool {
    fn name(&self) -> &str {
        "Read"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "file_path": {"type": "string", "description": "The absolute path to the file to read"},
                "offset": {"type": "integer", "description": "The line number to start reading from (1-based). Only provide if the file is too large to read at once"},
                "limit": {"type": "integer", "description": "The number of lines to read. Only provide if the file is too large to read at once"}
            },
            "required": ["file_path"],
            "additionalProperties": false
        })
    }

    fn is_read_only(&self, _input: &Value) -> bool {
        true
    }

    fn is_concurrency_safe(&self, _input: &Value) -> bool {
        true
    }

    fn call(&self, input: &Value, ctx: &ToolContext) -> ToolOutput {
        match read(input, ctx) {
            Ok((text, structured, changed_ms)) => {
                ToolOutput { changed_ms, ..ToolOutput::ok(text).with_structured(structured) }
            }
            Err(err) => err.into(),
        }
    }
}

/// The text the model reads and, for lines of the file, what was read as data, and when the
/// file was last changed (milliseconds since the epoch) if it was read.
fn read(input: &Value, ctx: &ToolContext) -> Result<(String, Option<Value>, Option<u64>), ToolError> {
    let file_path = input::string(input, "file_path")?;
    let path = resolve(&ctx.cwd, file_path);
    let offset = input::opt_int(input, "offset");
    let given_limit = input::opt_int(input, "limit");
    let limit = match given_limit {
        None => DEFAULT_LINE_LIMIT,
        Some(n) if n > 0 => usize::try_from(n).unwrap_or(usize::MAX),
        Some(n) => return Err(ToolError::InvalidArgument(format!("limit must be a positive number, got {n}"))),
    };
    let (file, size) = open_regular(&path, ctx)?;
    let changed_ms = file.metadata().ok().as_ref().and_then(crate::output::changed_ms);
    let stamp = ctx.unchanged_read.and_then(|_| ReadStamp::of(&path, (offset, given_limit)));
    if let (Some(text), Some(stamp)) = (ctx.unchanged_read, &stamp) {
        if ctx.read_unchanged(&path, stamp) {
            let unchanged = serde_json::json!({"type": "file_unchanged", "file": {"filePath": file_path}});
            return Ok((text.to_string(), Some(unchanged), None));
        }
    }
    if offset.is_none() && given_limit.is_none() && size > MAX_FILE_BYTES {
        return Err(ToolError::FileTooLarge { size: format_file_size(size) });
    }
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    let head = reader.fill_buf().map_err(|err| ToolError::io("cannot read", &path, err))?;
    if head[..head.len().min(BINARY_SNIFF_BYTES)].contains(&0) {
        return Err(ToolError::BinaryFile { extension: extension(&path) });
    }
    if head.is_empty() {
        ctx.mark_read(&path, None);
        return Ok((
            "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>".into(),
            None,
            changed_ms,
        ));
    }
    // Claude Code treats offset 0 like 1: both mean "from the first line".
    let first = usize::try_from(offset.unwrap_or(1).max(1)).unwrap_or(usize::MAX);
    let window = Window { first, limit };
    let (shown, total_lines) = stream_lines(&mut reader, &window, ctx).map_err(|err| match err.kind() {
        ErrorKind::Interrupted => ToolError::Interrupted,
        _ => ToolError::io("cannot read", &path, err),
    })?;
    if first > total_lines {
        ctx.mark_read(&path, None);
        let text = format!(
            "<system-reminder>Warning: the file exists but is shorter than the provided offset ({}). The file has {} lines.</system-reminder>",
            offset.unwrap_or(1),
            total_lines
        );
        return Ok((text, None, changed_ms));
    }
    let tokens = shown.tokens();
    if tokens > MAX_OUTPUT_TOKENS {
        return Err(ToolError::TooManyTokens { tokens });
    }
    ctx.mark_read(&path, stamp);
    let structured =
        ctx.structured_results.then(|| crate::structured::read(file_path, &shown.lines, first, total_lines));
    Ok((shown.lines.join("\n"), structured, changed_ms))
}

/// The lines to show: from 1-based `first`, at most `limit` of them.
struct Window {
    first: usize,
    limit: usize,
}

/// Streams the file's lines, keeping the numbered lines inside `window` (each cut to
/// [`MAX_LINE_CHARS`]) and counting all of them. Lines end at `\n`; a `\r` before it is dropped.
/// Once the window is full only newlines are counted, so a line is never held whole.
fn stream_lines(reader: &mut impl BufRead, window: &Window, ctx: &ToolContext) -> std::io::Result<(Shown, usize)> {
    let mut shown = Shown::default();
    let mut line: Vec<u8> = Vec::new();
    let mut line_overflow = false;
    let mut number = 1usize;
    let last = window.first.saturating_add(window.limit);
    loop {
        if ctx.is_cancelled() {
            return Err(std::io::Error::from(ErrorKind::Interrupted));
        }
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        let len = buf.len();
        let keeping = number >= window.first && number < last;
        if !keeping && number >= last {
            // Past the window: count the remaining newlines only.
            let newlines = buf.iter().filter(|&&b| b == b'\n').count();
            number += newlines;
            reader.consume(len);
            continue;
        }
        match buf.iter().position(|&b| b == b'\n') {
            Some(at) => {
                if keeping {
                    keep(&mut line, &mut line_overflow, &buf[..at]);
                    shown.add(number, &line, line_overflow);
                }
                line.clear();
                line_overflow = false;
                number += 1;
                reader.consume(at + 1);
            }
            None => {
                if keeping {
                    keep(&mut line, &mut line_overflow, buf);
                }
                reader.consume(len);
            }
        }
    }
    // As `split('\n')`: the text after the last newline is a line, even when empty.
    let total = number;
    if number >= window.first && number < last {
        shown.add(number, &line, line_overflow);
    }
    Ok((shown, total))
}

/// The numbered lines of the window, held only while they fit the token bound: past it the
/// answer will be refused anyway, so the rest is only measured (a `limit` of millions of lines
/// costs no memory).
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Shown {
    lines: Vec<String>,
    /// Bytes of the answer: the lines joined by newlines.
    len: usize,
}

impl Shown {
    /// Adds line `number` as Read shows it. Past the bound a short ASCII line is measured
    /// without being rendered, so refusing a huge window stays fast.
    fn add(&mut self, number: usize, bytes: &[u8], overflow: bool) {
        let over = self.len > MAX_OUTPUT_TOKENS * 4;
        if over && !overflow && bytes.len() <= MAX_LINE_CHARS && bytes.is_ascii() {
            let text = bytes.strip_suffix(b"\r").unwrap_or(bytes);
            self.len += digits(number) + 1 + text.len() + 1;
            return;
        }
        self.push(format!("{number}\t{}", render_line(bytes, overflow)));
    }

    fn push(&mut self, line: String) {
        self.len += line.len() + usize::from(self.len > 0 || !self.lines.is_empty());
        if self.len <= MAX_OUTPUT_TOKENS * 4 {
            self.lines.push(line);
        }
    }

    /// Claude Code's rough count of the answer's tokens: one per four bytes.
    fn tokens(&self) -> usize {
        self.len.div_ceil(4)
    }
}

/// Appends `bytes` to the line up to [`LINE_KEEP_BYTES`], noting that more was dropped.
fn keep(line: &mut Vec<u8>, overflow: &mut bool, bytes: &[u8]) {
    let room = LINE_KEEP_BYTES.saturating_sub(line.len()).min(bytes.len());
    line.extend_from_slice(&bytes[..room]);
    if room < bytes.len() {
        *overflow = true;
    }
}

/// A kept line as shown: lossy UTF-8, `\r` end dropped, cut past [`MAX_LINE_CHARS`] characters.
fn render_line(bytes: &[u8], overflow: bool) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = if overflow { &text } else { text.strip_suffix('\r').unwrap_or(&text) };
    match text.char_indices().nth(MAX_LINE_CHARS) {
        Some((end, _)) => format!("{}{LINE_TRUNCATED_MARKER}", &text[..end]),
        None if overflow => format!("{text}{LINE_TRUNCATED_MARKER}"),
        None => text.to_string(),
    }
}

/// Decimal digits of `n`.
fn digits(n: usize) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

fn extension(path: &Path) -> Option<String> {
    path.extension().map(|e| e.to_string_lossy().into_owned())
}

/// A size as Claude Code prints it: `363KB`, `306.6KB`, `2MB`.
pub(crate) fn format_file_size(bytes: u64) -> String {
    let kb = bytes as f64 / 1024.0;
    if kb < 1.0 {
        return format!("{bytes} bytes");
    }
    let (value, unit) = if kb < 1024.0 {
        (kb, "KB")
    } else if kb / 1024.0 < 1024.0 {
        (kb / 1024.0, "MB")
    } else {
        (kb / 1024.0 / 1024.0, "GB")
    };
    let text = format!("{value:.1}");
    format!("{}{unit}", text.strip_suffix(".0").unwrap_or(&text))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str, first: usize, limit: usize) -> (Vec<String>, usize) {
        let ctx = ToolContext::new(std::env::temp_dir());
        let (shown, total) = stream_lines(&mut std::io::Cursor::new(text.as_bytes()), &Window { first, limit }, &ctx)
            .expect("in memory");
        (shown.lines, total)
    }

    #[test]
    fn no_structured_result_is_built_unless_the_context_asks_for_one() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "one\ntwo").unwrap();
        let mut ctx = ToolContext::new(dir.path().to_path_buf());
        let input = json!({"file_path": "a.txt"});
        assert_eq!(read(&input, &ctx).unwrap().1, None);
        ctx.structured_results = true;
        assert!(read(&input, &ctx).unwrap().1.is_some());
    }

    #[test]
    fn an_unchanged_part_read_again_gets_the_profile_s_answer_a_changed_file_its_content() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.txt");
        std::fs::write(&path, "one\ntwo").unwrap();
        let mut ctx = ToolContext::new(dir.path().to_path_buf());
        ctx.unchanged_read = Some("unchanged");
        ctx.structured_results = true;
        let whole = json!({"file_path": "a.txt"});
        let text = |input: &Value| read(input, &ctx).unwrap().0;
        let (first, structured, changed) = read(&whole, &ctx).unwrap();
        assert_eq!(first, "1\tone\n2\ttwo");
        let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
        let modified_ms = modified.duration_since(std::time::UNIX_EPOCH).unwrap().as_millis();
        assert_eq!(changed.map(u128::from), Some(modified_ms), "when the file last changed, as the Read saw it");
        assert_eq!(
            structured,
            Some(json!({"type": "text", "file": {"filePath": "a.txt", "content": "one\ntwo", "numLines": 2,
                        "startLine": 1, "totalLines": 2}}))
        );
        let (again, structured, changed) = read(&whole, &ctx).unwrap();
        assert_eq!(again, "unchanged");
        assert_eq!(changed, None, "the file was not read again");
        assert_eq!(structured, Some(json!({"type": "file_unchanged", "file": {"filePath": "a.txt"}})));
        // Another part of it is news.
        let (part, structured, _) = read(&json!({"file_path": "a.txt", "offset": 2}), &ctx).unwrap();
        assert_eq!(part, "2\ttwo");
        assert_eq!(
            structured.unwrap()["file"],
            json!({"filePath": "a.txt", "content": "two", "numLines": 1,
            "startLine": 2, "totalLines": 2})
        );
        assert_eq!(text(&whole), "1\tone\n2\ttwo", "the last Read was of another part");
        std::fs::write(&path, "one\ntwo\nthree").unwrap();
        assert_eq!(text(&whole), "1\tone\n2\ttwo\n3\tthree", "changed since");
        ctx.unchanged_read = None;
        assert_eq!(read(&whole, &ctx).unwrap().0, "1\tone\n2\ttwo\n3\tthree", "no such rule");
    }

    #[test]
    fn a_line_measured_past_the_bound_counts_as_it_would_show() {
        let mut measured = Shown::default();
        let mut rendered = Shown::default();
        for n in 1..=30_000 {
            measured.add(n, b"some text\r", false);
            rendered.push(format!("{n}\tsome text"));
        }
        assert_eq!(measured.tokens(), rendered.tokens());
        assert_eq!(digits(9), 1);
        assert_eq!(digits(10), 2);
    }

    #[test]
    fn an_answer_past_the_token_bound_is_measured_not_held() {
        let mut shown = Shown::default();
        for _ in 0..100_000 {
            shown.push("x".repeat(99));
        }
        assert!(shown.lines.len() < 1001, "held {} lines", shown.lines.len());
        // 100000 lines of 99 bytes joined by 99999 newlines.
        assert_eq!(shown.tokens(), (100_000 * 99 + 99_999_usize).div_ceil(4));
    }

    #[test]
    fn lines_are_numbered_windowed_and_counted_like_split_on_newline() {
        assert_eq!(lines("a\nb\r\nc", 1, 10), (vec!["1\ta".into(), "2\tb".into(), "3\tc".into()], 3));
        assert_eq!(lines("a\nb\n", 2, 1), (vec!["2\tb".into()], 3));
        assert_eq!(lines("a\nb\n", 5, 1), (vec![], 3));
    }

    #[test]
    fn a_long_line_keeps_only_its_start() {
        let long = "x".repeat(LINE_KEEP_BYTES * 3);
        let (shown, total) = lines(&format!("{long}\nend"), 1, 10);
        assert_eq!(total, 2);
        assert_eq!(shown[0], format!("1\t{}{LINE_TRUNCATED_MARKER}", "x".repeat(MAX_LINE_CHARS)));
        assert_eq!(shown[1], "2\tend");
    }

    #[test]
    fn sizes_print_as_claude_code_prints_them() {
        assert_eq!(format_file_size(363 * 1024), "363KB");
        assert_eq!(format_file_size(313_958), "306.6KB");
        assert_eq!(format_file_size(2 * 1024 * 1024), "2MB");
        assert_eq!(format_file_size(500), "500 bytes");
    }
}
