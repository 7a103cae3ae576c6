//! Files whose contents later commands execute: writing them needs approval in every mode but
//! `bypassPermissions`, even in `acceptEdits` and even with a bare `Edit` allow rule.
//!
//! An edit of `.git/config` adding `core.fsmonitor`, or of `~/.bashrc`, turns the next harmless
//! looking command (`git status`, any Bash call) into running the model's program. A rule that
//! names the file (`Edit(./.git/config)`) still allows it: the user said so explicitly.

use std::path::Path;

/// Directories whose whole contents configure or run code: git's (hooks, config, info/attributes,
/// a `.git` file pointing elsewhere), reloop's and Claude Code's settings, editor task runners
/// and dev containers, git hook folders (`.husky`, and `.githooks` that `core.hooksPath` often
/// names).
const PROTECTED_DIRS: &[&str] =
    &[".git", ".reloop", ".claude", ".vscode", ".idea", ".devcontainer", ".husky", ".githooks"];

/// Files that shells, git, npm, direnv and MCP clients read and act on.
const PROTECTED_FILES: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zprofile",
    ".zshenv",
    ".zlogin",
    ".zlogout",
    ".envrc",
    ".gitconfig",
    ".gitmodules",
    ".ripgreprc",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".mcp.json",
    ".claude.json",
    ".inputrc",
    ".netrc",
];

/// Whether writing `path` (canonical) could make a later command run code.
pub(crate) fn is_protected(path: &Path) -> bool {
    let mut components = path.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).peekable();
    while let Some(part) = components.next() {
        if PROTECTED_DIRS.contains(&part.as_str()) {
            return true;
        }
        // ~/.config/git/config and friends.
        if part == ".config" && components.peek().is_some_and(|next| next == "git") {
            return true;
        }
    }
    path.file_name().is_some_and(|name| PROTECTED_FILES.contains(&name.to_string_lossy().as_ref()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_shell_and_tool_configuration_is_protected_anywhere() {
        for path in [
            "/w/.git/config",
            "/w/.git/hooks/pre-commit",
            "/w/sub/.git",
            "/w/.reloop/settings.json",
            "/w/.claude/settings.local.json",
            "/home/u/.bashrc",
            "/w/.envrc",
            "/w/.mcp.json",
            "/home/u/.config/git/config",
            "/w/.vscode/tasks.json",
        ] {
            assert!(is_protected(Path::new(path)), "{path}");
        }
        for path in ["/w/src/main.rs", "/w/gitconfig.md", "/w/.github/workflows/ci.yml", "/w/docs/.gitkeep"] {
            assert!(!is_protected(Path::new(path)), "{path}");
        }
    }
}
