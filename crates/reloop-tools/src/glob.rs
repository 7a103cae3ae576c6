//! Glob: finds files by name pattern, newest first, so the model finds what it is working on.

use std::path::PathBuf;

use globset::GlobBuilder;
use serde_json::{json, Value};

use crate::error::ToolError;
use crate::input;
use crate::paths::{display, search_root};
use crate::tool::{Tool, ToolContext, ToolOutput};
use crate::walk;

/// Most paths returned; more would flood the context without helping the model choose.
pub(crate) const MAX_GLOB_RESULTS: usize = 100;
/// The line that follows a cut result list.
pub(crate) const GLOB_TRUNCATED_NOTE: &str = "(Results are truncated. Consider using a more specific path or pattern.)";

const DESCRIPTION: &str = "Fast file pattern matching that works with any codebase size. Supports glob patterns \
like \"**/*.js\" or \"src/**/*.ts\", matched against paths relative to the searched directory (`*` does not cross \
`/`; use `**` to descend). Returns matching file paths relative to the working directory, most recently modified \
first, at most 100. Files ignored by .gitignore and hidden files are skipped, as with `rg --files`. Use this tool \
when you need to find files by name; use Grep to search their contents.";

/// The built-in Glob tool.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct GlobTool;

impl Tool for GlobTool {
    fn name(&self) -> &str {
        "Glob"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "The glob pattern to match files against"},
                "path": {"type": "string", "description": "The directory to search in. If not specified, the current working directory will be used. Omit it for the default rather than passing \"undefined\" or \"null\"."}
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
        let began = std::time::Instant::now();
        match glob(input, ctx) {
            Ok((text, total)) => {
                let millis = u64::try_from(began.elapsed().as_millis()).unwrap_or(u64::MAX);
                let structured = ctx
                    .structured_results
                    .then(|| crate::structured::glob(&text, total > MAX_GLOB_RESULTS, total, millis));
                ToolOutput::ok(text).with_structured(structured)
            }
            Err(err) => err.into(),
        }
    }
}

/// The files found, one a line, and how many matched in all.
fn glob(input: &Value, ctx: &ToolContext) -> Result<(String, usize), ToolError> {
    let pattern = input::string(input, "pattern")?;
    let root = search_root(&ctx.cwd, input::opt_string(input, "path"))?;
    let matcher = GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map_err(|err| ToolError::InvalidArgument(format!("Invalid glob pattern `{pattern}`: {err}")))?
        .compile_matcher();
    // An absolute pattern names whole paths; a relative one is anchored at the searched directory.
    let absolute = pattern.starts_with('/');
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = Vec::new();
    for entry in walk::builder(&root).build() {
        if ctx.is_cancelled() {
            return Err(ToolError::Interrupted);
        }
        let Ok(entry) = entry else { continue };
        if !entry.file_type().is_some_and(|t| t.is_file())
            || ctx.hidden.as_ref().is_some_and(|hidden| hidden.hides(entry.path()))
        {
            continue;
        }
        let path = entry.path();
        let candidate = if absolute { path } else { path.strip_prefix(&root).unwrap_or(path) };
        if matcher.is_match(candidate) {
            found.push((walk::mtime(path), path.to_path_buf()));
        }
    }
    if found.is_empty() {
        return Ok(("No files found".into(), 0));
    }
    walk::sort_newest_first(&mut found);
    let truncated = found.len() > MAX_GLOB_RESULTS;
    let mut lines: Vec<String> = found.iter().take(MAX_GLOB_RESULTS).map(|(_, path)| display(&ctx.cwd, path)).collect();
    if truncated {
        lines.push(GLOB_TRUNCATED_NOTE.to_string());
    }
    Ok((lines.join("\n"), found.len()))
}
