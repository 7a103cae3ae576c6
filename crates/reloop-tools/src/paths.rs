//! Path resolution against the session's working directory, and how paths are shown to the model.

use std::path::{Component, Path, PathBuf};

use crate::error::ToolError;

/// Resolves a path given by the model against `cwd`, lexically (no symlinks are followed), so a
/// path that does not exist yet (Write) resolves the same way as one that does.
pub(crate) fn resolve(cwd: &Path, input: &str) -> PathBuf {
    let joined = if Path::new(input).is_absolute() { PathBuf::from(input) } else { cwd.join(input) };
    normalize(&joined)
}

/// Where Glob and Grep start: their optional `path` input resolved against `cwd` (`cwd` itself
/// when absent), or the error both report, in Claude Code's words, when it does not exist.
pub(crate) fn search_root(cwd: &Path, given: Option<&str>) -> Result<PathBuf, ToolError> {
    let root = given.map_or_else(|| cwd.to_path_buf(), |p| resolve(cwd, p));
    if !root.exists() {
        return Err(ToolError::PathNotFound { path: root, cwd: cwd.to_path_buf() });
    }
    Ok(root)
}

/// Drops `.` components and folds `..` into its parent, lexically. The permission checks (rule
/// paths, symlink targets) fold paths with this too, so they see the paths the tools will open.
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push(component);
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// Shows `path` relative to `cwd` when it lies inside it (as `rg` prints paths it walked from the
/// current directory), otherwise absolute.
pub(crate) fn display(cwd: &Path, path: &Path) -> String {
    match path.strip_prefix(cwd) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.to_string_lossy().into_owned(),
        Ok(_) => ".".to_string(),
        Err(_) => path.to_string_lossy().into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_inputs_resolve_against_cwd_and_fold_dots() {
        let cwd = Path::new("/work/repo");
        assert_eq!(resolve(cwd, "src/./a.rs"), PathBuf::from("/work/repo/src/a.rs"));
        assert_eq!(resolve(cwd, "../other/b.rs"), PathBuf::from("/work/other/b.rs"));
        assert_eq!(resolve(cwd, "/etc/hosts"), PathBuf::from("/etc/hosts"));
    }

    #[test]
    fn display_is_relative_inside_cwd_and_absolute_outside() {
        let cwd = Path::new("/work/repo");
        assert_eq!(display(cwd, Path::new("/work/repo/src/a.rs")), "src/a.rs");
        assert_eq!(display(cwd, Path::new("/work/repo")), ".");
        assert_eq!(display(cwd, Path::new("/work/other/b.rs")), "/work/other/b.rs");
    }
}
