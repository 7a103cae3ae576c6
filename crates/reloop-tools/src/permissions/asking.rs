//! What a call that would be asked is told: the prompt's text, which a session with nobody to
//! ask gives as its refusal, in the profile's words. One place, to audit the texts.

use std::path::PathBuf;

use reloop_core::profile::AskRuleText;

use super::workspace::{self, EDIT_TOOLS, READ_TOOLS};
use super::{shell, Call, Decision, PermissionContext, PermissionMode, Verdict};

/// The texts the model sees when a call does not run; one place, to audit them.
#[derive(Debug, thiserror::Error)]
pub(super) enum Refusal {
    /// A tool `--disallowedTools` removed, in the profile's words.
    #[error("{text}")]
    NotEnabled { text: String },
    /// A text the profile words (a shell command writing inside the working directories).
    #[error("{text}")]
    Worded { text: String },
    /// A deny rule on a Read's path, in the profile's words; a permission denial or not.
    #[error("{text}")]
    ReadPath { text: &'static str, denial: bool },
    #[error("Permission to use {tool} has been denied.")]
    DeniedByRule { tool: String },
    #[error("Claude requested permissions to read from {}, but you haven't granted it yet.", path.display())]
    ReadFrom { path: PathBuf },
    #[error("Claude requested permissions to write to {}, but you haven't granted it yet.", path.display())]
    WriteTo { path: PathBuf },
    #[error("Permission to use {tool} has been denied because reloop is in plan mode.")]
    PlanMode { tool: String },
    #[error("This command requires approval")]
    CommandNeedsApproval,
    #[error("Claude requested permissions to use {tool}, but you haven't granted it yet.")]
    UseTool { tool: String },
    #[error(
        "Permission to use {tool} has been denied because reloop is running in don't ask mode. Approve it or add it to the allowed tools to continue."
    )]
    DontAsk { tool: String },
}

impl From<Refusal> for Decision {
    fn from(refusal: Refusal) -> Self {
        Decision::Deny { message: refusal.to_string() }
    }
}

impl PermissionContext {
    /// What would be asked: an ask with the prompt's text, or in `dontAsk` its deny.
    pub(super) fn asking(&self, call: &Call<'_>) -> Verdict {
        self.asking_with(self.ask(call))
    }

    pub(super) fn asking_with(&self, prompt: Refusal) -> Verdict {
        // `dontAsk` never asks: it denies, with the same text a headless session gives.
        match (self.mode, prompt) {
            (_, refusal @ Refusal::DontAsk { .. }) | (PermissionMode::DontAsk, refusal) => Verdict::deny(refusal),
            (_, refusal) => Verdict::Ask { message: refusal.to_string() },
        }
    }

    /// The first simple command of `command` that creates, changes or removes a file inside the
    /// working directories: the program, whether it removes, and the path it writes.
    fn bash_write(&self, command: &shell::Command) -> Option<(String, bool, PathBuf)> {
        const CREATE: &[&str] = &["touch", "mkdir", "cp", "mv", "ln", "truncate", "install"];
        const REMOVE: &[&str] = &["rm", "rmdir", "unlink"];
        command.segments.iter().find_map(|words| {
            let words = shell::skip_assignments(words);
            let program = words.first()?.rsplit('/').next()?.to_string();
            let removes = REMOVE.contains(&program.as_str());
            if !removes && !CREATE.contains(&program.as_str()) {
                return None;
            }
            let operands: Vec<&String> = words[1..].iter().filter(|w| !w.starts_with('-')).collect();
            // Copies and moves write their last operand; the others, their first.
            let target = if matches!(program.as_str(), "cp" | "mv" | "ln" | "install") {
                operands.last()
            } else {
                operands.first()
            }?;
            let path = workspace::canonicalize_lenient(&self.workspace.cwd().join(target.as_str()));
            self.workspace.contains(&path).then_some((program, removes, path))
        })
    }

    /// The `dontAsk` denial of a call of `tool`, in the profile's words.
    pub(super) fn dont_ask(&self, tool: &str) -> Refusal {
        match self.texts.dont_ask {
            Some(text) => Refusal::Worded { text: text.replace("{tool}", tool) },
            None => Refusal::DontAsk { tool: tool.to_string() },
        }
    }

    /// Step 2's question, in the version's words ([`AskRuleText`]).
    pub(super) fn ask_by_rule(&self, call: &Call<'_>) -> Refusal {
        let file_tool = !call.paths.is_empty() && (EDIT_TOOLS.contains(&call.tool) || READ_TOOLS.contains(&call.tool));
        match self.texts.ask_rule {
            _ if self.mode == PermissionMode::DontAsk => self.ask(call),
            AskRuleText::AsAsked => self.ask(call),
            AskRuleText::UseToolButFiles if file_tool => self.ask(call),
            AskRuleText::UseTool | AskRuleText::UseToolButFiles => Refusal::UseTool { tool: call.tool.to_string() },
        }
    }

    /// What would have been asked, as the deny a headless session gives instead.
    fn ask(&self, call: &Call<'_>) -> Refusal {
        let tool = call.tool.to_string();
        if self.mode == PermissionMode::DontAsk {
            return self.dont_ask(&tool);
        }
        let path = call.paths.first().cloned();
        match (call.tool, path) {
            ("Bash", _) => match (self.texts.bash_write, call.command.as_ref().and_then(|c| self.bash_write(c))) {
                (Some(texts), Some((command, removes, path))) => {
                    let dirs = self.workspace.roots().iter().map(|r| format!("'{}'", r.display())).collect::<Vec<_>>();
                    Refusal::Worded {
                        text: texts.render(&command, removes, &path.display().to_string(), &dirs.join(", ")),
                    }
                }
                _ => Refusal::CommandNeedsApproval,
            },
            (t, Some(path)) if EDIT_TOOLS.contains(&t) => Refusal::WriteTo { path },
            (t, Some(path)) if READ_TOOLS.contains(&t) => Refusal::ReadFrom { path },
            _ => Refusal::UseTool { tool },
        }
    }
}
