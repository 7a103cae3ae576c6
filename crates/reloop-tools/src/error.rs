//! The failures a built-in tool reports; each one's `Display` is the exact text the model sees.

use std::path::PathBuf;

use crate::output::ToolOutput;

/// A built-in tool's failure. Keeping the model-facing wording in one place makes the texts that
/// must match Claude Code byte for byte easy to audit.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ToolError {
    #[error("File does not exist. Note: your current working directory is {}.", cwd.display())]
    FileNotFound { cwd: PathBuf },
    #[error("Path does not exist: {}. Note: your current working directory is {}.", path.display(), cwd.display())]
    PathNotFound { path: PathBuf, cwd: PathBuf },
    #[error("EISDIR: illegal operation on a directory, read '{}'", path.display())]
    IsDirectory { path: PathBuf },
    #[error(
        "This tool cannot read binary files. The file appears to be a binary {}file. Please use appropriate tools for binary file analysis.",
        extension.as_deref().map(|ext| format!(".{ext} ")).unwrap_or_default()
    )]
    BinaryFile { extension: Option<String> },
    #[error("Error: cannot use '{}': it is {kind}, not a regular file. Only regular files can be read or written.", path.display())]
    NotRegularFile { path: PathBuf, kind: &'static str },
    #[error(
        "File content ({size}) exceeds maximum allowed size (256KB). Use offset and limit parameters to read specific portions of the file, or search for specific content instead of reading the whole file."
    )]
    FileTooLarge { size: String },
    #[error(
        "File content ({tokens} tokens) exceeds maximum allowed tokens (25000). Use offset and limit parameters to read specific portions of the file, or search for specific content instead of reading the whole file."
    )]
    TooManyTokens { tokens: usize },
    #[error(
        "<tool_use_error>File is too large to edit ({size}). Maximum editable file size is {max}.</tool_use_error>"
    )]
    TooLargeToEdit { size: String, max: String },
    #[error("<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>")]
    NotReadYet,
    #[error(
        "<tool_use_error>The edit would make the file {size} ({count} replacements), over the maximum editable file size of {max}. Replace fewer occurrences at a time.</tool_use_error>"
    )]
    EditTooLarge { size: String, count: usize, max: String },
    #[error(
        "Error: cannot write '{}': it is a symbolic link to '{}', which does not exist. Write and Edit do not create files through symbolic links; use the target's own path.",
        path.display(), target.display()
    )]
    DanglingSymlink { path: PathBuf, target: PathBuf },
    #[error(
        "Error: cannot write '{}': it has {links} hard links, so writing it would also change the same file under its other names, which may lie outside the workspace. Write and Edit do not change hard-linked files.",
        path.display()
    )]
    HardLinked { path: PathBuf, links: u64 },
    #[error("<tool_use_error>No changes to make: old_string and new_string are exactly the same.</tool_use_error>")]
    NoChanges,
    #[error("<tool_use_error>String to replace not found in file.\nString: {old_string}</tool_use_error>")]
    StringNotFound { old_string: String },
    #[error(
        "<tool_use_error>Found {count} matches of the string to replace, but replace_all is false. To replace all occurrences, set replace_all to true. To replace only one occurrence, please provide more context to uniquely identify the instance.\nString: {old_string}</tool_use_error>"
    )]
    AmbiguousMatch { count: usize, old_string: String },
    #[error("<tool_use_error>Cannot create new file - file already exists.</tool_use_error>")]
    FileAlreadyExists,
    #[error("<tool_use_error>{0}</tool_use_error>")]
    InvalidArgument(String),
    #[error("Interrupted by user")]
    Interrupted,
    #[error("Error: {action} '{}': {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl ToolError {
    pub(crate) fn io(action: &'static str, path: &std::path::Path, source: std::io::Error) -> Self {
        ToolError::Io { action, path: path.to_path_buf(), source }
    }
}

impl From<ToolError> for ToolOutput {
    fn from(err: ToolError) -> Self {
        ToolOutput::error(err.to_string())
    }
}

/// Turns a tool body's result into the output the model sees.
pub(crate) fn into_output(result: Result<String, ToolError>) -> ToolOutput {
    match result {
        Ok(text) => ToolOutput::ok(text),
        Err(err) => err.into(),
    }
}
