//! Opening files without blocking: FIFOs, devices and sockets are refused with a tool error.
//!
//! Opening a FIFO for reading blocks until a writer appears, and reading a device such as
//! `/dev/zero` or a terminal never ends, so a hostile model could hang a session with one Read.
//! The path is checked before opening, and the opened descriptor again (the name could have been
//! swapped in between); the open itself is non-blocking, so even a swapped-in FIFO returns.

use std::fs::{File, OpenOptions};
use std::io::ErrorKind;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use crate::error::ToolError;
use crate::tool::ToolContext;

/// What a non-regular file is, in words for the model.
pub(crate) fn kind_of(file_type: std::fs::FileType) -> Option<&'static str> {
    if file_type.is_file() || file_type.is_dir() {
        None
    } else if file_type.is_fifo() {
        Some("a FIFO")
    } else if file_type.is_char_device() {
        Some("a character device")
    } else if file_type.is_block_device() {
        Some("a block device")
    } else if file_type.is_socket() {
        Some("a socket")
    } else {
        Some("not a regular file")
    }
}

/// Opens `path` for reading if it is a regular file, with its size. A missing file, a directory
/// and anything else that is not a regular file become the tool errors the model sees.
pub(crate) fn open_regular(path: &Path, ctx: &ToolContext) -> Result<(File, u64), ToolError> {
    let metadata = std::fs::metadata(path).map_err(|err| match err.kind() {
        ErrorKind::NotFound => ToolError::FileNotFound { cwd: ctx.cwd.clone() },
        _ => ToolError::io("cannot read", path, err),
    })?;
    check_regular(path, &metadata)?;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|err| ToolError::io("cannot read", path, err))?;
    let metadata = file.metadata().map_err(|err| ToolError::io("cannot read", path, err))?;
    check_regular(path, &metadata)?;
    Ok((file, metadata.len()))
}

/// Refuses a directory or a non-regular file found at `path`.
pub(crate) fn check_regular(path: &Path, metadata: &std::fs::Metadata) -> Result<(), ToolError> {
    if metadata.is_dir() {
        return Err(ToolError::IsDirectory { path: path.to_path_buf() });
    }
    match kind_of(metadata.file_type()) {
        Some(kind) => Err(ToolError::NotRegularFile { path: path.to_path_buf(), kind }),
        None => Ok(()),
    }
}
