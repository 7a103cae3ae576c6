//! What the model is told about its surroundings, gathered once at session start.
//!
//! The user context (project instruction files, today's date) is prepended to the first user
//! message as a `<system-reminder>` block, as Claude Code's `prependUserContext` does; the system
//! context (working directory, platform, git branch and status) is appended to the system prompt.
//! Both are outside facts: they travel inside the journaled `user_input` event and the session
//! header, so a replay sees exactly what the model saw.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Instruction files read from the working directory up to the repository root.
pub const INSTRUCTION_FILES: [&str; 2] = ["CLAUDE.md", "AGENTS.md"];
/// Instruction files larger than this are cut, so one huge file cannot fill the context.
const MAX_INSTRUCTION_BYTES: usize = 40_000;

/// The folders searched for instruction files: cwd, then its parents up to the repository root
/// (the first folder holding `.git`), or cwd alone outside a repository. Outermost first.
pub fn instruction_dirs(cwd: &Path) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    let mut dir = Some(cwd);
    while let Some(d) = dir {
        dirs.push(d.to_path_buf());
        if d.join(".git").exists() {
            dirs.reverse();
            return dirs;
        }
        dir = d.parent();
    }
    vec![cwd.to_path_buf()]
}

/// The `<system-reminder>` text prepended to the first user message.
pub fn user_context(cwd: &Path, today: &str) -> String {
    let mut files = String::new();
    for dir in instruction_dirs(cwd) {
        for name in INSTRUCTION_FILES {
            let path = dir.join(name);
            let Ok(mut text) = std::fs::read_to_string(&path) else { continue };
            if text.len() > MAX_INSTRUCTION_BYTES {
                let mut cut = MAX_INSTRUCTION_BYTES;
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                text.truncate(cut);
                text.push_str("\n… [truncated]");
            }
            files.push_str(&format!(
                "Contents of {} (project instructions, checked into the codebase):\n\n{}\n\n",
                path.display(),
                text.trim_end()
            ));
        }
    }
    // The core finds this block again by its opening when a compaction gives the date back.
    let mut out = String::from(reloop_core::compact::shape::USER_CONTEXT_OPENING);
    if !files.is_empty() {
        out.push_str(
            "# claudeMd\nCodebase and user instructions are shown below. Be sure to adhere to these instructions. \
             IMPORTANT: These instructions OVERRIDE any default behavior and you MUST follow them exactly as written.\n\n",
        );
        out.push_str(&files);
    }
    out.push_str(&format!("# currentDate\n{}{today}.\n\n", reloop_core::compact::shape::DATE_OPENING));
    out.push_str(
        "      IMPORTANT: this context may or may not be relevant to your tasks. You should not respond to this \
         context unless it is highly relevant to your task.\n</system-reminder>\n",
    );
    out
}

/// The text appended to the system prompt: where the session runs.
pub fn system_context(cwd: &Path) -> String {
    let mut out = format!(
        "<env>\nWorking directory: {}\nPlatform: {}\nIs directory a git repo: ",
        cwd.display(),
        std::env::consts::OS
    );
    match git(cwd, &["rev-parse", "--abbrev-ref", "HEAD"]) {
        Some(branch) => {
            out.push_str(&format!("Yes\nCurrent branch: {}\n", branch.trim()));
            let status = git(cwd, &["status", "--short"]).unwrap_or_default();
            let lines: Vec<&str> = status.lines().collect();
            let shown = lines.iter().take(20).copied().collect::<Vec<_>>().join("\n");
            let status = match lines.len() {
                0 => "(clean)".to_string(),
                n if n > 20 => format!("{shown}\n… and {} more", n - 20),
                _ => shown,
            };
            out.push_str(&format!("Status:\n{status}\n"));
        }
        None => out.push_str("No\n"),
    }
    out.push_str("</env>");
    out
}

fn git(cwd: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).current_dir(cwd).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Today's date as `YYYY-MM-DD` (UTC), from the system clock: an outside fact, journaled.
pub fn today() -> String {
    let days =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() / 86_400).unwrap_or(0)
            as i64;
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Howard Hinnant's days-to-civil conversion.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_786), (2026, 11, 29));
    }

    #[test]
    fn instruction_files_from_the_repository_root_down() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("pkg")).unwrap();
        std::fs::write(root.join("CLAUDE.md"), "root rules").unwrap();
        std::fs::write(root.join("pkg/AGENTS.md"), "pkg rules").unwrap();
        let text = user_context(&root.join("pkg"), "2026-11-29");
        let (r, p) = (text.find("root rules").unwrap(), text.find("pkg rules").unwrap());
        assert!(r < p, "outermost first");
        assert!(text.starts_with("<system-reminder>\n"));
        assert!(text.contains("# currentDate\nToday's date is 2026-11-29."));
        assert!(text.trim_end().ends_with("</system-reminder>"));
    }
}
