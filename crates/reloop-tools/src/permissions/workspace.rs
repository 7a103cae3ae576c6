//! The folders a session may touch without asking, and where a call's paths really lead.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::PermissionError;
use crate::paths::normalize;

/// Tools whose path a rule for `Edit` covers (Claude Code: Edit rules apply to every tool that
/// edits files).
pub(crate) const EDIT_TOOLS: &[&str] = &["Edit", "Write", "MultiEdit", "NotebookEdit"];
/// Tools whose path a rule for `Read` covers (Claude Code applies Read rules to Glob and Grep).
pub(crate) const READ_TOOLS: &[&str] = &["Read", "Glob", "Grep"];

/// How many symlinks one path may pass through before it is taken as a loop (as Linux's ELOOP).
const MAX_SYMLINKS: usize = 40;

/// The session's working directory and its `--add-dir` folders, canonical, so that a path is
/// inside the workspace exactly when its canonical form starts with one of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    roots: Vec<PathBuf>,
}

impl Workspace {
    /// The working directory `cwd` plus extra folders; relative extra folders are taken from
    /// `cwd`, as the CLI's `--add-dir` does. Each must be an existing directory, because a root
    /// that cannot be canonicalized could not be compared with canonical call paths.
    pub fn new(cwd: impl AsRef<Path>, add_dirs: &[PathBuf]) -> Result<Self, PermissionError> {
        let cwd = canonical_dir(cwd.as_ref())?;
        let mut roots = vec![cwd.clone()];
        for dir in add_dirs {
            let root = canonical_dir(&cwd.join(dir))?;
            if !roots.contains(&root) {
                roots.push(root);
            }
        }
        Ok(Workspace { roots })
    }

    /// The canonical working directory, against which relative paths resolve.
    pub fn cwd(&self) -> &Path {
        // `new` always puts the working directory first; the fallback is never taken.
        self.roots.first().map_or(Path::new("/"), PathBuf::as_path)
    }

    /// All roots, the working directory first.
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// Whether a canonical `path` lies in (or is) one of the roots.
    pub fn contains(&self, path: &Path) -> bool {
        self.roots.iter().any(|root| path.starts_with(root))
    }
}

fn canonical_dir(path: &Path) -> Result<PathBuf, PermissionError> {
    let canonical = std::fs::canonicalize(path)
        .map_err(|source| PermissionError::Workspace { path: path.to_path_buf(), source })?;
    if !canonical.is_dir() {
        return Err(PermissionError::NotADirectory { path: canonical });
    }
    Ok(canonical)
}

/// The paths a call touches, absolute and canonical: the `file_path` of Read, Write and Edit
/// (`notebook_path` of NotebookEdit), the `path` of Glob and Grep (the working directory when
/// absent). Bash and other tools name no path this can know, so they give none.
///
/// A path is first resolved the way the tools resolve it (against `cwd`, folding `.` and `..`
/// lexically), then canonicalized, so the check sees the file the tool will really open.
pub fn tool_paths(tool: &str, input: &Value, cwd: &Path) -> Vec<PathBuf> {
    let given = |key: &str| input.get(key).and_then(Value::as_str);
    let raw = match tool {
        "Read" | "Write" | "Edit" | "MultiEdit" => given("file_path"),
        "NotebookEdit" => given("notebook_path"),
        "Glob" | "Grep" => Some(given("path").unwrap_or(".")),
        _ => None,
    };
    raw.map(|p| vec![canonicalize_lenient(&crate::paths::resolve(cwd, p))]).unwrap_or_default()
}

/// Canonicalizes `path` even when it does not exist yet: the deepest existing ancestor is
/// canonicalized and the rest appended. A dangling symlink on the way is followed to where it
/// points, because writing through it creates its target, and that target is what is touched.
pub(crate) fn canonicalize_lenient(path: &Path) -> PathBuf {
    resolve_links(path, 0)
}

fn resolve_links(path: &Path, links: usize) -> PathBuf {
    if let Ok(canonical) = std::fs::canonicalize(path) {
        return canonical;
    }
    if links < MAX_SYMLINKS {
        if let (Ok(target), Some(parent)) = (std::fs::read_link(path), path.parent()) {
            return resolve_links(&normalize(&parent.join(target)), links + 1);
        }
    }
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => resolve_links(parent, links).join(name),
        _ => path.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_path_keeps_its_tail_under_the_canonical_ancestor() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(dir.path()).expect("canonical");
        assert_eq!(canonicalize_lenient(&root.join("a/b/c.txt")), root.join("a/b/c.txt"));
    }

    #[test]
    fn a_dangling_symlink_resolves_to_its_target() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(dir.path()).expect("canonical");
        std::os::unix::fs::symlink(root.join("elsewhere/new.txt"), root.join("link")).expect("symlink");
        assert_eq!(canonicalize_lenient(&root.join("link")), root.join("elsewhere/new.txt"));
    }

    #[test]
    fn a_symlink_loop_does_not_hang() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(dir.path()).expect("canonical");
        std::os::unix::fs::symlink(root.join("b"), root.join("a")).expect("symlink");
        std::os::unix::fs::symlink(root.join("a"), root.join("b")).expect("symlink");
        let _ = canonicalize_lenient(&root.join("a/x"));
    }
}
