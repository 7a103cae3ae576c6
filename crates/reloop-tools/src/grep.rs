//! Grep: ripgrep's search as a tool, with Claude Code's input names and result texts.

use serde_json::{json, Value};

use crate::error::{into_output, ToolError};
use crate::grep_search::{search, FileHit, Mode, Query};
use crate::input;
use crate::paths::{display, search_root};
use crate::tool::{Tool, ToolContext, ToolOutput};
use crate::walk;

const DESCRIPTION: &str = "A powerful search tool built on ripgrep. Supports full regex syntax (e.g. \
\"log.*Error\", \"function\\s+\\w+\"); literal braces need escaping (use `interface\\{\\}` to find `interface{}`). \
Filter files with glob (e.g. \"*.js\", \"**/*.tsx\") or type (e.g. \"js\", \"py\", \"rust\"). Output modes: \
\"files_with_matches\" (default) lists matching files, most recently modified first; \"content\" shows matching \
lines as path:line:text and supports -A/-B/-C context, -n line numbers (on by default) and head_limit; \"count\" \
shows match counts per file. Patterns match within single lines unless multiline is true, which lets `.` match \
newlines and patterns span lines. Like rg, hidden files and files ignored by .gitignore are skipped. Use Grep for \
searches instead of running grep or rg through Bash.";

/// Most lines (content lines, files, counts) one Grep returns, whatever `head_limit` asks; more
/// would flood the context, and collecting them is what once took a 300 MB file to 8.5 GB.
pub const MAX_GREP_RESULT_LINES: usize = 1000;

/// The note that ends a result cut at [`MAX_GREP_RESULT_LINES`].
pub fn grep_truncated_note() -> String {
    format!(
        "\n\n[Results truncated at {MAX_GREP_RESULT_LINES} lines. Use head_limit and offset to page through them, or a narrower pattern, path or glob.]"
    )
}

/// The built-in Grep tool.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct GrepTool;

impl Tool for GrepTool {
    fn name(&self) -> &str {
        "Grep"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "The regular expression pattern to search for in file contents"},
                "path": {"type": "string", "description": "File or directory to search in (rg PATH). Defaults to the current working directory."},
                "glob": {"type": "string", "description": "Glob pattern to filter files (e.g. \"*.js\", \"*.{ts,tsx}\") - maps to rg --glob"},
                "type": {"type": "string", "description": "File type to search (rg --type). Common types: js, py, rust, go, java, etc."},
                "output_mode": {
                    "type": "string",
                    "enum": ["content", "files_with_matches", "count"],
                    "description": "Output mode: \"content\" shows matching lines, \"files_with_matches\" shows file paths (default), \"count\" shows match counts"
                },
                "-i": {"type": "boolean", "description": "Case insensitive search (rg -i)"},
                "-n": {"type": "boolean", "description": "Show line numbers in output (rg -n). Requires output_mode: \"content\". Defaults to true."},
                "-A": {"type": "integer", "description": "Number of lines to show after each match (rg -A). Requires output_mode: \"content\"."},
                "-B": {"type": "integer", "description": "Number of lines to show before each match (rg -B). Requires output_mode: \"content\"."},
                "-C": {"type": "integer", "description": "Number of lines to show before and after each match (rg -C). Requires output_mode: \"content\"."},
                "context": {"type": "integer", "description": "Same as -C."},
                "head_limit": {"type": "integer", "description": "Limit output to the first N lines/entries, like \"| head -N\"."},
                "offset": {"type": "integer", "description": "Skip the first N lines/entries before applying head_limit, like \"| tail -n +N | head -N\"."},
                "multiline": {"type": "boolean", "description": "Enable multiline mode where . matches newlines and patterns can span lines (rg -U --multiline-dotall). Default: false."}
            },
            "required": ["pattern"],
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
        let output = into_output(grep(input, ctx));
        let mode = input::opt_string(input, "output_mode").unwrap_or("files_with_matches");
        let structured =
            (ctx.structured_results && !output.is_error).then(|| crate::structured::grep(mode, &output.content));
        output.with_structured(structured)
    }
}

/// A count from the input, refusing negatives rather than guessing what they meant.
fn count(input: &Value, key: &str) -> Result<Option<usize>, ToolError> {
    match input::opt_int(input, key) {
        None => Ok(None),
        Some(n) => usize::try_from(n)
            .map(Some)
            .map_err(|_| ToolError::InvalidArgument(format!("`{key}` must not be negative, got {n}"))),
    }
}

/// Splits the glob input as Claude Code does: on whitespace, and on commas outside `{...}`.
fn split_globs(glob: &str) -> Vec<String> {
    let mut out = Vec::new();
    for raw in glob.split_whitespace() {
        if raw.contains('{') && raw.contains('}') {
            out.push(raw.to_string());
        } else {
            out.extend(raw.split(',').filter(|g| !g.is_empty()).map(str::to_string));
        }
    }
    out
}

fn query(input: &Value, ctx: &ToolContext) -> Result<Query, ToolError> {
    let mode = match input::opt_string(input, "output_mode") {
        None | Some("files_with_matches") => Mode::FilesWithMatches,
        Some("content") => Mode::Content,
        Some("count") => Mode::Count,
        Some(other) => return Err(ToolError::InvalidArgument(format!("Unknown output_mode `{other}`"))),
    };
    let both = count(input, "-C")?.or(count(input, "context")?);
    let (before, after) = match mode {
        Mode::Content => (count(input, "-B")?.or(both).unwrap_or(0), count(input, "-A")?.or(both).unwrap_or(0)),
        Mode::FilesWithMatches | Mode::Count => (0, 0),
    };
    let root = search_root(&ctx.cwd, input::opt_string(input, "path"))?;
    Ok(Query {
        pattern: input::string(input, "pattern")?.to_string(),
        root,
        globs: input::opt_string(input, "glob").map(split_globs).unwrap_or_default(),
        file_type: input::opt_string(input, "type").map(str::to_string),
        mode,
        case_insensitive: input::opt_bool(input, "-i").unwrap_or(false),
        line_numbers: input::opt_bool(input, "-n").unwrap_or(true),
        before,
        after,
        multiline: input::opt_bool(input, "multiline").unwrap_or(false),
        max_lines: usize::MAX,
        skip_lines: 0,
        hidden: ctx.hidden.clone(),
    })
}

/// The `head_limit`/`offset` window over result lines or entries.
struct Page {
    limit: Option<usize>,
    offset: usize,
}

impl Page {
    /// Applies the window, returning the kept items and the note to append when it cut anything.
    fn apply<T>(&self, items: Vec<T>) -> (Vec<T>, Option<String>) {
        let remaining = items.len().saturating_sub(self.offset);
        let kept: Vec<T> = items.into_iter().skip(self.offset).take(self.limit.unwrap_or(usize::MAX)).collect();
        (kept, self.note(remaining))
    }

    /// The note for a window over `remaining` items left after the offset.
    fn note(&self, remaining: usize) -> Option<String> {
        let cut_by_limit = self.limit.is_some_and(|limit| remaining > limit);
        let info = match self.limit {
            Some(limit) if cut_by_limit => Some(format!("limit: {limit}, offset: {}", self.offset)),
            _ if self.offset > 0 => Some(format!("offset: {}", self.offset)),
            _ => None,
        };
        info.map(|info| format!("\n\n[Showing results with pagination = {info}]"))
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn grep(input: &Value, ctx: &ToolContext) -> Result<String, ToolError> {
    let mut query = query(input, ctx)?;
    let page = Page { limit: count(input, "head_limit")?, offset: count(input, "offset")?.unwrap_or(0) };
    // Content lines past what will be shown are never collected: the window, capped, plus one
    // to know that more exist.
    let shown = page.limit.unwrap_or(MAX_GREP_RESULT_LINES).min(MAX_GREP_RESULT_LINES);
    query.max_lines = shown.saturating_add(1);
    query.skip_lines = page.offset;
    let hits = search(&query, ctx)?;
    match query.mode {
        Mode::FilesWithMatches => Ok(files_with_matches(hits, &page, ctx)),
        Mode::Content => Ok(content(hits, &page)),
        Mode::Count => Ok(counts(hits, &page, ctx)),
    }
}

fn files_with_matches(hits: Vec<FileHit>, page: &Page, ctx: &ToolContext) -> String {
    let mut files: Vec<_> = hits.into_iter().map(|hit| (walk::mtime(&hit.path), hit.path)).collect();
    walk::sort_newest_first(&mut files);
    let capped = capped(page, files.len());
    let (mut files, note) = page.apply(files);
    if files.is_empty() {
        return "No files found".into();
    }
    if capped {
        files.truncate(MAX_GREP_RESULT_LINES);
    }
    let list: Vec<String> = files.iter().map(|(_, path)| display(&ctx.cwd, path)).collect();
    let note = if capped { grep_truncated_note() } else { note.unwrap_or_default() };
    format!("Found {}\n{}{note}", plural(list.len(), "file", "files"), list.join("\n"))
}

/// Content lines, the `offset` already left out by the search (which only counted them) and the
/// `--` between files' context groups already in place.
fn content(hits: Vec<FileHit>, page: &Page) -> String {
    let lines: Vec<String> = hits.into_iter().flat_map(|hit| hit.lines).collect();
    let remaining = lines.len();
    let capped = page.limit.is_none_or(|limit| limit > MAX_GREP_RESULT_LINES) && remaining > MAX_GREP_RESULT_LINES;
    let shown = page.limit.unwrap_or(usize::MAX).min(MAX_GREP_RESULT_LINES);
    let lines: Vec<String> = lines.into_iter().take(shown).collect();
    if lines.is_empty() {
        return "No matches found".into();
    }
    let note = if capped { Some(grep_truncated_note()) } else { page.note(remaining) };
    format!("{}{}", lines.join("\n"), note.unwrap_or_default())
}

/// Whether `total` entries are more than the hard cap lets through the page's window.
fn capped(page: &Page, total: usize) -> bool {
    page.limit.is_none_or(|limit| limit > MAX_GREP_RESULT_LINES)
        && total.saturating_sub(page.offset) > MAX_GREP_RESULT_LINES
}

fn counts(hits: Vec<FileHit>, page: &Page, ctx: &ToolContext) -> String {
    let capped = capped(page, hits.len());
    let (mut hits, note) = page.apply(hits);
    if hits.is_empty() {
        return "No matches found".into();
    }
    if capped {
        hits.truncate(MAX_GREP_RESULT_LINES);
    }
    let note = if capped { Some(grep_truncated_note()) } else { note };
    let total: u64 = hits.iter().map(|hit| hit.count).sum();
    let lines: Vec<String> = hits.iter().map(|hit| format!("{}:{}", display(&ctx.cwd, &hit.path), hit.count)).collect();
    format!(
        "{}\n\nFound {} total {} across {}.{}",
        lines.join("\n"),
        total,
        if total == 1 { "occurrence" } else { "occurrences" },
        plural(lines.len(), "file", "files"),
        note.unwrap_or_default()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_split_on_whitespace_and_commas_but_keep_braces() {
        assert_eq!(split_globs("*.ts, *.js"), vec!["*.ts", "*.js"]);
        assert_eq!(split_globs("*.{ts,tsx}"), vec!["*.{ts,tsx}"]);
        assert_eq!(split_globs("a,b c"), vec!["a", "b", "c"]);
    }

    #[test]
    fn a_page_notes_a_cut_by_the_limit_and_a_skip_by_the_offset() {
        let page = Page { limit: Some(2), offset: 0 };
        assert_eq!(
            page.apply(vec![1, 2, 3]),
            (vec![1, 2], Some("\n\n[Showing results with pagination = limit: 2, offset: 0]".to_string()))
        );
        assert_eq!(Page { limit: Some(5), offset: 0 }.apply(vec![1, 2, 3]), (vec![1, 2, 3], None));
        assert_eq!(
            Page { limit: None, offset: 1 }.apply(vec![1, 2, 3]),
            (vec![2, 3], Some("\n\n[Showing results with pagination = offset: 1]".to_string()))
        );
    }
}
