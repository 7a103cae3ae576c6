//! The search half of Grep: a ripgrep-configured matcher, walk and searcher, collecting per-file
//! results in `rg`'s output shapes.

use std::path::PathBuf;

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use ignore::overrides::OverrideBuilder;
use ignore::types::TypesBuilder;

use crate::error::ToolError;
use crate::tool::ToolContext;
use crate::walk;

/// Characters kept of one content line, so a minified file cannot flood the context.
pub(crate) const MAX_GREP_LINE_CHARS: usize = 500;
/// Most bytes one searched line (or, in multiline mode, one file) may take in memory; a file
/// needing more is skipped, so a 300 MB single-line file cannot exhaust memory.
const SEARCH_HEAP_LIMIT: usize = 32 * 1024 * 1024;

/// What Grep reports for each file, mirroring `rg -l`, `rg -c` and plain `rg`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    FilesWithMatches,
    Content,
    Count,
}

/// Everything the search needs, already decided from the tool input.
#[derive(Debug, Clone)]
pub(crate) struct Query {
    pub pattern: String,
    pub root: PathBuf,
    pub globs: Vec<String>,
    pub file_type: Option<String>,
    pub mode: Mode,
    pub case_insensitive: bool,
    pub line_numbers: bool,
    pub before: usize,
    pub after: usize,
    pub multiline: bool,
    /// Content mode: stop once this many lines are collected (the caller shows fewer and notes
    /// that more exist), so memory stays bounded whatever matches.
    pub max_lines: usize,
    /// Content mode: lines (`--` separators included) counted but not kept, the `offset` of the
    /// page, so a far offset costs no memory.
    pub skip_lines: usize,
    /// Whether a path is hidden by a Read deny rule: such files are not searched at all.
    pub hidden: Option<crate::tool::PathFilter>,
}

/// One file's findings.
#[derive(Debug, Clone)]
pub(crate) struct FileHit {
    pub path: PathBuf,
    /// Content mode: the printed lines, without the `--` that may precede the file.
    pub lines: Vec<String>,
    /// Count mode: matching lines (matches, with multiline), as `rg -c` counts.
    pub count: u64,
}

/// Runs `query`, returning the files with at least one match in `rg --sort path` order.
pub(crate) fn search(query: &Query, ctx: &ToolContext) -> Result<Vec<FileHit>, ToolError> {
    let matcher = build_matcher(query)?;
    let mut searcher = build_searcher(query);
    let mut hits = Vec::new();
    let mut collected = 0usize;
    let mut skip = query.skip_lines;
    // rg separates context groups of different files with `--` too.
    let with_context = query.before > 0 || query.after > 0;
    let mut any_line = false;
    for path in files(query, ctx)? {
        if ctx.is_cancelled() {
            return Err(ToolError::Interrupted);
        }
        if query.mode == Mode::Content && collected >= query.max_lines {
            break;
        }
        let shown = crate::paths::display(&ctx.cwd, &path);
        let budget = query.max_lines.saturating_sub(collected);
        let mut sink = FileSink {
            mode: query.mode,
            shown,
            line_numbers: query.line_numbers,
            lines: Vec::new(),
            count: 0,
            budget,
            skip,
            separator_pending: with_context && any_line,
            any_line: false,
        };
        // An unreadable file (or one that stopped being a regular file) is skipped, as rg skips
        // it (after a warning the model has no use for).
        let Some(file) = open_nonblocking(&path) else { continue };
        if searcher.search_file(&matcher, &file, &mut sink).is_err() {
            continue;
        }
        collected += sink.lines.len();
        skip = sink.skip;
        any_line |= sink.any_line;
        let matched = match query.mode {
            Mode::Content => !sink.lines.is_empty(),
            Mode::Count | Mode::FilesWithMatches => sink.count > 0,
        };
        if matched {
            hits.push(FileHit { path, lines: sink.lines, count: sink.count });
        }
    }
    Ok(hits)
}

fn build_matcher(query: &Query) -> Result<RegexMatcher, ToolError> {
    let mut builder = RegexMatcherBuilder::new();
    builder.case_insensitive(query.case_insensitive).multi_line(true);
    if query.multiline {
        builder.dot_matches_new_line(true);
    } else {
        // Tells the matcher a match can never span lines, which rg relies on for speed.
        builder.line_terminator(Some(b'\n'));
    }
    builder
        .build(&query.pattern)
        .map_err(|err| ToolError::InvalidArgument(format!("Invalid regex pattern `{}`: {err}", query.pattern)))
}

fn build_searcher(query: &Query) -> Searcher {
    SearcherBuilder::new()
        .line_number(true)
        .multi_line(query.multiline)
        .before_context(query.before)
        .after_context(query.after)
        .binary_detection(BinaryDetection::quit(b'\x00'))
        .heap_limit(Some(SEARCH_HEAP_LIMIT))
        .memory_map(grep_searcher::MmapChoice::never())
        .build()
}

/// Opens a walked file without blocking and only if it is still a regular file.
fn open_nonblocking(path: &std::path::Path) -> Option<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file =
        std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY).open(path).ok()?;
    file.metadata().ok().filter(|m| m.is_file()).map(|_| file)
}

/// The files to search: `root` itself when it is a file, else an rg-like walk filtered by the
/// globs and type, in `rg --sort path` order.
fn files(query: &Query, ctx: &ToolContext) -> Result<Vec<PathBuf>, ToolError> {
    let metadata = std::fs::metadata(&query.root).map_err(|err| ToolError::io("cannot read", &query.root, err))?;
    if !metadata.is_dir() {
        crate::special::check_regular(&query.root, &metadata)?;
        return Ok(vec![query.root.clone()]);
    }
    let mut builder = walk::builder(&query.root);
    builder.sort_by_file_name(|a, b| a.cmp(b));
    if !query.globs.is_empty() {
        // rg roots --glob overrides at its working directory; so do we.
        let mut overrides = OverrideBuilder::new(&ctx.cwd);
        for glob in &query.globs {
            overrides.add(glob).map_err(|err| ToolError::InvalidArgument(format!("Invalid glob `{glob}`: {err}")))?;
        }
        let overrides = overrides.build().map_err(|err| ToolError::InvalidArgument(format!("Invalid glob: {err}")))?;
        builder.overrides(overrides);
    }
    if let Some(file_type) = &query.file_type {
        let mut types = TypesBuilder::new();
        types.add_defaults();
        types.select(file_type);
        let types = types.build().map_err(|err| ToolError::InvalidArgument(format!("Invalid file type: {err}")))?;
        builder.types(types);
    }
    let mut out = Vec::new();
    for entry in builder.build() {
        if ctx.is_cancelled() {
            return Err(ToolError::Interrupted);
        }
        let Ok(entry) = entry else { continue };
        // Only regular files: a FIFO, device or socket met on the walk is never opened.
        if entry.file_type().is_some_and(|t| t.is_file())
            && !query.hidden.as_ref().is_some_and(|hidden| hidden.hides(entry.path()))
        {
            out.push(entry.into_path());
        }
    }
    Ok(out)
}

/// Collects one file's output in rg's shapes: `path:N:text` for matched lines, `path-N-text` for
/// context lines and `--` between context groups.
struct FileSink {
    mode: Mode,
    shown: String,
    line_numbers: bool,
    lines: Vec<String>,
    count: u64,
    /// Content lines this file may still add.
    budget: usize,
    /// Lines still to count without keeping (the page's offset, shared across files).
    skip: usize,
    /// A `--` goes before this file's first line: an earlier file printed lines with context.
    separator_pending: bool,
    /// Whether this file printed (or skipped) any line.
    any_line: bool,
}

impl FileSink {
    /// Counts a line, keeping it once the offset is passed; false once the budget is spent,
    /// which ends the search.
    fn emit(&mut self, line: impl FnOnce(&Self) -> String) -> bool {
        self.any_line = true;
        if self.skip > 0 {
            self.skip -= 1;
            return true;
        }
        if self.lines.len() >= self.budget {
            return false;
        }
        let line = line(self);
        self.lines.push(line);
        true
    }

    /// Adds a matched or context line, after the `--` separating it from an earlier file.
    fn push(&mut self, separator: char, number: Option<u64>, bytes: &[u8]) -> bool {
        if std::mem::take(&mut self.separator_pending) && !self.emit(|_| "--".to_string()) {
            return false;
        }
        self.emit(|sink| sink.format(separator, number, bytes))
    }

    fn format(&self, separator: char, number: Option<u64>, bytes: &[u8]) -> String {
        let text = String::from_utf8_lossy(bytes);
        let text = text.strip_suffix('\n').unwrap_or(&text);
        let text = text.strip_suffix('\r').unwrap_or(text);
        let text = cut(text);
        match number.filter(|_| self.line_numbers) {
            Some(n) => format!("{}{separator}{n}{separator}{text}", self.shown),
            None => format!("{}{separator}{text}", self.shown),
        }
    }
}

fn cut(text: &str) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(MAX_GREP_LINE_CHARS) {
        Some((end, _)) => format!("{}{}", &text[..end], crate::read::LINE_TRUNCATED_MARKER).into(),
        None => text.into(),
    }
}

impl Sink for FileSink {
    type Error = std::io::Error;

    fn matched(&mut self, _searcher: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        self.count += 1;
        match self.mode {
            // One match settles the question; stop reading the file.
            Mode::FilesWithMatches => Ok(false),
            Mode::Count => Ok(true),
            Mode::Content => {
                let mut number = mat.line_number();
                for line in mat.lines() {
                    if !self.push(':', number, line) {
                        return Ok(false);
                    }
                    number = number.map(|n| n + 1);
                }
                Ok(true)
            }
        }
    }

    fn context(&mut self, _searcher: &Searcher, context: &SinkContext<'_>) -> Result<bool, Self::Error> {
        Ok(self.push('-', context.line_number(), context.bytes()))
    }

    fn context_break(&mut self, _searcher: &Searcher) -> Result<bool, Self::Error> {
        Ok(self.emit(|_| "--".to_string()))
    }
}
