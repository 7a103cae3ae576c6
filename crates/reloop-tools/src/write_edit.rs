//! Write and Edit: the two tools that change files, both bound by the read-first rule so the model
//! never overwrites content it has not seen.

use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

use serde_json::{json, Value};

use crate::error::ToolError;
use crate::input;
use crate::paths::resolve;
use crate::read::format_file_size;
use crate::special::{check_regular, open_regular};
use crate::structured;
use crate::tool::{Tool, ToolContext, ToolOutput};

const WRITE_DESCRIPTION: &str = "Writes a file to the local filesystem, replacing it if it exists. The \
file_path should be absolute (a relative one is resolved against the working directory); missing parent \
directories are created. An existing file must have been read with the Read tool in this session first, or the \
write is refused. Prefer Edit for changing part of an existing file.";

const EDIT_DESCRIPTION: &str = "Performs an exact string replacement in a file. The file must have been read \
with the Read tool in this session first. old_string must match the file's text exactly (without the line-number \
prefix Read shows) and must be unique in the file unless replace_all is true; give more surrounding context to \
make it unique. replace_all replaces every occurrence, which is handy for renaming. An empty old_string on a file \
that does not exist creates it with new_string.";

/// Largest file Edit loads, and largest it writes: it holds the file twice (old and new text),
/// so memory stays near 130 MB. Claude Code's bound is 1 GB, with the same message. The result's
/// size is computed before it is built, since `replace_all` of a short string by a long one
/// can multiply a small file a thousandfold.
pub const MAX_EDIT_BYTES: u64 = 64 * 1024 * 1024;

/// The built-in Write tool.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct WriteTool;

/// The built-in Edit tool.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct EditTool;

impl Tool for WriteTool {
    fn name(&self) -> &str {
        "Write"
    }

    fn description(&self) -> &str {
        WRITE_DESCRIPTION
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "file_path": {"type": "string", "description": "The absolute path to the file to write (must be absolute, not relative)"},
                "content": {"type": "string", "description": "The content to write to the file"}
            },
            "required": ["file_path", "content"],
            "additionalProperties": false
        })
    }

    fn is_read_only(&self, _input: &Value) -> bool {
        false
    }

    fn is_concurrency_safe(&self, _input: &Value) -> bool {
        false
    }

    fn call(&self, input: &Value, ctx: &ToolContext) -> ToolOutput {
        with_changed(with_structured(write(input, ctx)), input, ctx)
    }
}

impl Tool for EditTool {
    fn name(&self) -> &str {
        "Edit"
    }

    fn description(&self) -> &str {
        EDIT_DESCRIPTION
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "file_path": {"type": "string", "description": "The absolute path to the file to modify"},
                "old_string": {"type": "string", "description": "The text to replace"},
                "new_string": {"type": "string", "description": "The text to replace it with (must be different from old_string)"},
                "replace_all": {"type": "boolean", "description": "Replace all occurrences of old_string (default false)"}
            },
            "required": ["file_path", "old_string", "new_string"],
            "additionalProperties": false
        })
    }

    fn is_read_only(&self, _input: &Value) -> bool {
        false
    }

    fn is_concurrency_safe(&self, _input: &Value) -> bool {
        false
    }

    fn call(&self, input: &Value, ctx: &ToolContext) -> ToolOutput {
        with_changed(with_structured(edit(input, ctx)), input, ctx)
    }
}

/// Whether `path` exists as a regular file; a directory, a FIFO, a device or a socket is an
/// error for both tools, because writing to one would block or reach past the file system.
fn existing_file(path: &Path) -> Result<bool, ToolError> {
    match std::fs::metadata(path) {
        Ok(meta) => check_regular(path, &meta).map(|()| true),
        Err(err) if err.kind() == ErrorKind::NotFound => Ok(false),
        Err(err) => Err(ToolError::io("cannot access", path, err)),
    }
}

/// Writes `content`, creating parent directories, and counts the file as read: the model now
/// knows exactly what it holds.
fn store(path: &Path, content: &str, ctx: &ToolContext) -> Result<(), ToolError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|err| ToolError::io("cannot create directory", parent, err))?;
    }
    let mut file = open_for_write(path)?;
    file.write_all(content.as_bytes()).map_err(|err| ToolError::io("cannot write", path, err))?;
    ctx.mark_read(path, None);
    Ok(())
}

/// Opens `path` for writing (created, then truncated) without blocking on a FIFO, and refuses
/// before a byte is written:
///
/// * a file created through a symbolic link: the final component is opened with `O_NOFOLLOW`, and
///   a link is then followed only to a file that exists (no `O_CREAT`), so a dangling link in the
///   workspace can never plant a file where it points, whatever was checked before;
/// * a file with more than one hard link: its other names (maybe outside the workspace) share its
///   content, so writing it would change them too. Refused rather than replaced by a new file
///   (temp + rename): that would silently change the file's identity (inode, owner, the links a
///   tool such as pnpm or a backup relies on), which only the user can decide to do;
/// * anything that is not a regular file.
///
/// Every check is on the opened descriptor, so a name swapped in between cannot slip past.
fn open_for_write(path: &Path) -> Result<File, ToolError> {
    let options = |create: bool, nofollow: bool| {
        let mut options = OpenOptions::new();
        let nofollow = if nofollow { libc::O_NOFOLLOW } else { 0 };
        options.write(true).create(create).truncate(false).custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | nofollow);
        options
    };
    let file = match options(true, true).open(path) {
        Ok(file) => file,
        // ELOOP with O_NOFOLLOW: the final component is a symbolic link.
        Err(err) if err.raw_os_error() == Some(libc::ELOOP) => match options(false, false).open(path) {
            Ok(file) => file,
            Err(err) if err.kind() == ErrorKind::NotFound => {
                let target = std::fs::read_link(path).unwrap_or_default();
                return Err(ToolError::DanglingSymlink { path: path.to_path_buf(), target });
            }
            Err(err) => return Err(ToolError::io("cannot write", path, err)),
        },
        Err(err) => return Err(ToolError::io("cannot write", path, err)),
    };
    let metadata = file.metadata().map_err(|err| ToolError::io("cannot write", path, err))?;
    check_regular(path, &metadata)?;
    if metadata.nlink() > 1 {
        return Err(ToolError::HardLinked { path: path.to_path_buf(), links: metadata.nlink() });
    }
    file.set_len(0).map_err(|err| ToolError::io("cannot write", path, err))?;
    Ok(file)
}

fn created(path: &Path) -> String {
    format!("File created successfully at: {}", path.display())
}

fn updated(path: &Path) -> String {
    format!("The file {} has been updated successfully.", path.display())
}

/// A text with the profile's note that the model knows the file as written, when it does.
fn noted(text: String, ctx: &ToolContext, known: bool) -> String {
    match ctx.written_note {
        Some(note) if known => text + note,
        _ => text,
    }
}

/// An Edit's text: Claude Code's `replace_all` wording and note under its profiles (flag 24,
/// both versions' `mapToolResultToToolResultBlockParam`); the note is left off an Edit of a
/// file the session never read (2.1.332's `contentNotInModelContext`, `tool_results/errors`).
fn edited(path: &Path, ctx: &ToolContext, replace_all: bool, unread: bool) -> String {
    let text = match ctx.written_note {
        Some(_) if replace_all => {
            format!("The file {} has been updated. All occurrences were successfully replaced.", path.display())
        }
        _ => updated(path),
    };
    noted(text, ctx, !unread)
}

/// The read-first refusal a Write or Edit of `input` would meet, found before anything else is
/// checked: Claude Code 2.1.197 refuses such a call before its permission check, and the refusal
/// is a tool error, not a permission denial. `None` for other tools and for calls that pass.
pub fn read_first_refusal(tool: &str, input: &Value, ctx: &ToolContext) -> Option<String> {
    if !ctx.require_read || !matches!(tool, "Write" | "Edit") {
        return None;
    }
    let path = resolve(&ctx.cwd, input::string(input, "file_path").ok()?);
    let exists = existing_file(&path).ok()?;
    (exists && !ctx.was_read(&path)).then(|| ToolError::NotReadYet.to_string())
}

/// The text the model reads, with what the call did as data when the context asks for it.
type Done = Result<(String, Option<Value>), ToolError>;

fn with_structured(result: Done) -> ToolOutput {
    match result {
        Ok((text, structured)) => ToolOutput::ok(text).with_structured(structured),
        Err(err) => err.into(),
    }
}

/// A successful write's output, with when the file it wrote last changed: a compaction gives
/// written files back too, newest change first.
fn with_changed(output: ToolOutput, input: &Value, ctx: &ToolContext) -> ToolOutput {
    let path = input::string(input, "file_path").ok().filter(|_| !output.is_error).map(|p| resolve(&ctx.cwd, p));
    let changed_ms = path.and_then(|p| std::fs::metadata(p).ok()).as_ref().and_then(crate::output::changed_ms);
    ToolOutput { changed_ms, ..output }
}

/// The text of the file a Write replaces, when it is text and small enough to keep.
fn original_text(path: &Path) -> Option<String> {
    let size = std::fs::metadata(path).ok()?.len();
    (size <= MAX_EDIT_BYTES).then(|| std::fs::read_to_string(path).ok()).flatten()
}

fn write(input: &Value, ctx: &ToolContext) -> Done {
    let file_path = input::string(input, "file_path")?;
    let path = resolve(&ctx.cwd, file_path);
    let content = input::string(input, "content")?;
    let exists = existing_file(&path)?;
    if exists && !ctx.was_read(&path) {
        return Err(ToolError::NotReadYet);
    }
    // The old text is read only for the structured result, which holds it.
    let original = if exists && ctx.structured_results { original_text(&path) } else { None };
    store(&path, content, ctx)?;
    let text = noted(if exists { updated(&path) } else { created(&path) }, ctx, true);
    Ok((text, ctx.structured_results.then(|| structured::write(file_path, content, original.as_deref()))))
}

fn edit(input: &Value, ctx: &ToolContext) -> Done {
    let file_path = input::string(input, "file_path")?;
    let path = resolve(&ctx.cwd, file_path);
    let old_string = input::string(input, "old_string")?;
    let new_string = input::string(input, "new_string")?;
    let replace_all = input::opt_bool(input, "replace_all").unwrap_or(false);
    let call = structured::EditCall { file_path, old_string, new_string, replace_all };
    if old_string == new_string {
        return Err(ToolError::NoChanges);
    }
    if !existing_file(&path)? {
        if old_string.is_empty() {
            store(&path, new_string, ctx)?;
            return Ok((
                created(&path),
                ctx.structured_results.then(|| structured::edit(&call, "", new_string, false)),
            ));
        }
        return Err(ToolError::FileNotFound { cwd: ctx.cwd.clone() });
    }
    if !ctx.was_read(&path) {
        return Err(ToolError::NotReadYet);
    }
    let unread = !ctx.has_read(&path);
    let (mut file, size) = open_regular(&path, ctx)?;
    if size > MAX_EDIT_BYTES {
        return Err(ToolError::TooLargeToEdit { size: format_file_size(size), max: format_file_size(MAX_EDIT_BYTES) });
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).map_err(|err| ToolError::io("cannot read", &path, err))?;
    let content = String::from_utf8(bytes).map_err(|_| {
        ToolError::InvalidArgument(format!("{} is not valid UTF-8 text and cannot be edited.", path.display()))
    })?;
    if old_string.is_empty() {
        if !content.is_empty() {
            return Err(ToolError::FileAlreadyExists);
        }
        store(&path, new_string, ctx)?;
        let structured = ctx.structured_results.then(|| structured::edit(&call, &content, new_string, unread));
        return Ok((edited(&path, ctx, replace_all, unread), structured));
    }
    let replaced = replace(&content, old_string, new_string, replace_all)?;
    store(&path, &replaced, ctx)?;
    let structured = ctx.structured_results.then(|| structured::edit(&call, &content, &replaced, unread));
    Ok((edited(&path, ctx, replace_all, unread), structured))
}

/// Replaces `old` by `new` in `content`, enforcing uniqueness unless `all`.
///
/// Read shows CRLF files without their `\r`, so when the text as given is absent from a CRLF file
/// the replacement is retried with CRLF line ends on both strings.
fn replace(content: &str, old: &str, new: &str, all: bool) -> Result<String, ToolError> {
    let (old_eff, new_eff) = if !content.contains(old) && content.contains("\r\n") && old.contains('\n') {
        (old.replace("\r\n", "\n").replace('\n', "\r\n"), new.replace("\r\n", "\n").replace('\n', "\r\n"))
    } else {
        (old.to_string(), new.to_string())
    };
    let count = content.matches(old_eff.as_str()).count();
    let replacements = if all { count } else { count.min(1) };
    let size = edited_size(content.len(), replacements, old_eff.len(), new_eff.len());
    if size > MAX_EDIT_BYTES && (count == 1 || all) {
        return Err(ToolError::EditTooLarge {
            size: format_file_size(size),
            count: replacements,
            max: format_file_size(MAX_EDIT_BYTES),
        });
    }
    match count {
        0 => Err(ToolError::StringNotFound { old_string: old.to_string() }),
        1 => Ok(content.replacen(old_eff.as_str(), &new_eff, 1)),
        _ if all => Ok(content.replace(old_eff.as_str(), &new_eff)),
        _ => Err(ToolError::AmbiguousMatch { count, old_string: old.to_string() }),
    }
}

/// The size of `len` bytes after `count` replacements of `old` bytes by `new` bytes, computed
/// without building it; saturating, so a hostile count cannot wrap it to a small number.
fn edited_size(len: usize, count: usize, old: usize, new: usize) -> u64 {
    let (len, count, old, new) = (len as u64, count as u64, old as u64, new as u64);
    if new >= old {
        len.saturating_add(count.saturating_mul(new - old))
    } else {
        len.saturating_sub(count.saturating_mul(old - new))
    }
}

#[cfg(test)]
mod tests {
    use super::{edited_size, replace};

    #[test]
    fn a_unique_match_is_replaced_once() {
        assert_eq!(replace("a b c", "b", "x", false).ok(), Some("a x c".to_string()));
    }

    #[test]
    fn replace_all_replaces_every_occurrence() {
        assert_eq!(replace("b b", "b", "x", true).ok(), Some("x x".to_string()));
    }

    #[test]
    fn an_edit_is_sized_before_it_is_built() {
        assert_eq!(edited_size(10, 2, 1, 4), 16);
        assert_eq!(edited_size(10, 2, 4, 1), 4);
        assert_eq!(edited_size(10, usize::MAX, 0, usize::MAX), u64::MAX, "saturates, never wraps");
        let refused = replace(&"a".repeat(200_000), "a", &"b".repeat(10_000), true);
        assert!(refused.is_err_and(|e| e.to_string().contains("1.9GB")));
    }

    #[test]
    fn lf_text_matches_a_crlf_file_and_keeps_its_line_ends() {
        assert_eq!(replace("a\r\nb\r\nc", "a\nb", "x\ny", false).ok(), Some("x\r\ny\r\nc".to_string()));
    }
}
