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
pub const MAX_GREP_LINE_CHARS: usize = 500;

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
    for path in files(query, ctx)? {
        if ctx.is_cancelled() {
            return Err(ToolError::Interrupted);
        }
        let shown = crate::paths::display(&ctx.cwd, &path);
        let mut sink =
            FileSink { mode: query.mode, shown, line_numbers: query.line_numbers, lines: Vec::new(), count: 0 };
        // An unreadable file is skipped, as rg skips it (after a warning the model has no use for).
        if searcher.search_path(&matcher, &path, &mut sink).is_err() {
            continue;
        }
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
        .build()
}

/// The files to search: `root` itself when it is a file, else an rg-like walk filtered by the
/// globs and type, in `rg --sort path` order.
fn files(query: &Query, ctx: &ToolContext) -> Result<Vec<PathBuf>, ToolError> {
    if query.root.is_file() {
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
        if entry.file_type().is_some_and(|t| t.is_file()) {
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
}

impl FileSink {
    fn push(&mut self, separator: char, number: Option<u64>, bytes: &[u8]) {
        let text = String::from_utf8_lossy(bytes);
        let text = text.strip_suffix('\n').unwrap_or(&text);
        let text = text.strip_suffix('\r').unwrap_or(text);
        let text = cut(text);
        let line = match number.filter(|_| self.line_numbers) {
            Some(n) => format!("{}{separator}{n}{separator}{text}", self.shown),
            None => format!("{}{separator}{text}", self.shown),
        };
        self.lines.push(line);
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
                    self.push(':', number, line);
                    number = number.map(|n| n + 1);
                }
                Ok(true)
            }
        }
    }

    fn context(&mut self, _searcher: &Searcher, context: &SinkContext<'_>) -> Result<bool, Self::Error> {
        self.push('-', context.line_number(), context.bytes());
        Ok(true)
    }

    fn context_break(&mut self, _searcher: &Searcher) -> Result<bool, Self::Error> {
        self.lines.push("--".to_string());
        Ok(true)
    }
}
