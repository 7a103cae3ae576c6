//! The directory walk shared by Glob and Grep, configured like `rg`'s, so the model sees the files
//! a developer's ripgrep would.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use ignore::WalkBuilder;

/// A walker over `root` with ripgrep's defaults: hidden files skipped; `.gitignore`, `.ignore` and
/// `.rgignore` honoured; symlinks not followed.
///
/// One deliberate difference: `.gitignore` applies even outside a git repository (`rg
/// --no-require-git`), because a session's directory is often a plain copy of a project whose
/// ignore rules still describe what is noise.
pub(crate) fn builder(root: &Path) -> WalkBuilder {
    let mut builder = WalkBuilder::new(root);
    builder.require_git(false).add_custom_ignore_filename(".rgignore");
    builder
}

/// Modification time in a form that sorts; files whose time cannot be read sort as oldest.
pub(crate) fn mtime(path: &Path) -> SystemTime {
    std::fs::metadata(path).and_then(|m| m.modified()).unwrap_or(std::time::UNIX_EPOCH)
}

/// Orders `(mtime, path)` pairs as Glob and Grep list files: most recently modified first, ties
/// by path, so both tools show the same files in the same order.
pub(crate) fn sort_newest_first(files: &mut [(SystemTime, PathBuf)]) {
    files.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
}
