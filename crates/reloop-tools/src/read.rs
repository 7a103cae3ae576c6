//! Read: a file's lines, numbered as `cat -n` would, so the model can cite and edit them.

use std::io::ErrorKind;

use serde_json::{json, Value};

use crate::error::{into_output, ToolError};
use crate::input;
use crate::paths::resolve;
use crate::tool::{Tool, ToolContext, ToolOutput};

/// Lines shown when the model gives no limit.
pub const DEFAULT_LINE_LIMIT: usize = 2000;
/// Characters kept of one line; longer lines are cut so one minified file cannot flood the context.
pub const MAX_LINE_CHARS: usize = 2000;
/// Marker appended to a cut line.
pub const LINE_TRUNCATED_MARKER: &str = "… [line truncated]";
/// How much of the file is sniffed for NUL bytes to call it binary.
const BINARY_SNIFF_BYTES: usize = 8192;

const DESCRIPTION: &str = "Reads a file from the local filesystem. The file_path should be an absolute path \
(a relative one is resolved against the working directory). By default up to 2000 lines are read from the start \
of the file; for long files pass offset (the 1-based line to start at) and limit (how many lines). Lines are \
returned numbered as `N<tab>text`, starting at 1 or at offset, and lines longer than 2000 characters are cut. \
Binary files cannot be read. Read a file before editing or overwriting it: Write and Edit refuse files that were \
not read in this session.";

/// The built-in Read tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadTool;

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
        into_output(read(input, ctx))
    }
}

fn read(input: &Value, ctx: &ToolContext) -> Result<String, ToolError> {
    let path = resolve(&ctx.cwd, input::string(input, "file_path")?);
    let offset = input::opt_int(input, "offset");
    let limit = match input::opt_int(input, "limit") {
        None => DEFAULT_LINE_LIMIT,
        Some(n) if n > 0 => usize::try_from(n).unwrap_or(usize::MAX),
        Some(n) => return Err(ToolError::InvalidArgument(format!("limit must be a positive number, got {n}"))),
    };
    let metadata = std::fs::metadata(&path).map_err(|err| match err.kind() {
        ErrorKind::NotFound => ToolError::FileNotFound { cwd: ctx.cwd.clone() },
        _ => ToolError::io("cannot read", &path, err),
    })?;
    if metadata.is_dir() {
        return Err(ToolError::IsDirectory { path });
    }
    let bytes = std::fs::read(&path).map_err(|err| ToolError::io("cannot read", &path, err))?;
    if bytes[..bytes.len().min(BINARY_SNIFF_BYTES)].contains(&0) {
        let extension = path.extension().map(|e| e.to_string_lossy().into_owned());
        return Err(ToolError::BinaryFile { extension });
    }
    ctx.mark_read(&path);
    if bytes.is_empty() {
        return Ok("<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>".into());
    }
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.split('\n').map(|line| line.strip_suffix('\r').unwrap_or(line)).collect();
    // Claude Code treats offset 0 like 1: both mean "from the first line".
    let first = usize::try_from(offset.unwrap_or(1).max(1)).unwrap_or(usize::MAX);
    if first > lines.len() {
        return Ok(format!(
            "<system-reminder>Warning: the file exists but is shorter than the provided offset ({}). The file has {} lines.</system-reminder>",
            offset.unwrap_or(1),
            lines.len()
        ));
    }
    let numbered: Vec<String> = lines
        .iter()
        .enumerate()
        .skip(first - 1)
        .take(limit)
        .map(|(i, line)| format!("{}\t{}", i + 1, cut_line(line)))
        .collect();
    Ok(numbered.join("\n"))
}

/// Cuts a line past [`MAX_LINE_CHARS`] characters (not bytes, so no char is split).
fn cut_line(line: &str) -> std::borrow::Cow<'_, str> {
    match line.char_indices().nth(MAX_LINE_CHARS) {
        Some((end, _)) => format!("{}{LINE_TRUNCATED_MARKER}", &line[..end]).into(),
        None => line.into(),
    }
}
