//! `reloop prop --hooks run`: the settings file's hook commands run for every hook run a case
//! reaches, in a scratch copy of the workspace (so a hook that writes cannot touch the real
//! one), with reloop's credentials removed as for any hook.

use std::path::Path;

use reloop_core::hook::{HookEventName, HookRun};
use reloop_core::ToolUse;
use reloop_hooks::{HookCommon, HookInput, HooksConfig, Settings};
use serde_json::Value;

use super::CliError;

/// Files bigger than this are not copied into the scratch workspace: hooks read sources.
const MAX_COPIED_FILE: u64 = 8 * 1024 * 1024;

/// The configuration's hooks, run for real in a scratch workspace.
pub(crate) struct RealHooks {
    hooks: HooksConfig,
    scratch: tempfile::TempDir,
    runtime: tokio::runtime::Handle,
}

impl RealHooks {
    /// The hooks of `settings`, to run in a scratch copy of `workspace`.
    pub(crate) fn new(settings: &Settings, workspace: &Path) -> Result<Self, CliError> {
        let scratch = tempfile::Builder::new()
            .prefix("reloop-prop-")
            .tempdir()
            .map_err(|e| CliError::Io(format!("cannot create a scratch workspace: {e}")))?;
        copy_tree(workspace, scratch.path(), 0)
            .map_err(|e| CliError::Io(format!("cannot copy {} to a scratch workspace: {e}", workspace.display())))?;
        Ok(RealHooks { hooks: settings.hooks.clone(), scratch, runtime: tokio::runtime::Handle::current() })
    }

    fn common(&self) -> HookCommon {
        HookCommon {
            session_id: "reloop-prop".into(),
            transcript_path: String::new(),
            cwd: self.scratch.path().display().to_string(),
            permission_mode: "default".into(),
        }
    }
}

impl reloop_prop::HookRunner for RealHooks {
    fn runs(&self, event: HookEventName, call: Option<&ToolUse>) -> Option<Vec<HookRun>> {
        let commands = self.hooks.matching(event, call.map(|c| c.name.as_str()));
        if commands.is_empty() {
            return None;
        }
        let input = match (event, call) {
            (HookEventName::PreToolUse, Some(c)) => {
                HookInput::pre_tool_use(self.common(), &c.name, c.input.clone(), &c.id)
            }
            (HookEventName::PostToolUse, Some(c)) => HookInput::post_tool_use(
                self.common(),
                &c.name,
                c.input.clone(),
                &c.id,
                Value::String(format!("ran {}", c.name)),
            ),
            _ => HookInput::stop(self.common(), false, None),
        };
        let cancel = tokio_util::sync::CancellationToken::new();
        let cwd = self.scratch.path();
        // The cases run on a thread the runtime let block (`block_in_place`): the hooks'
        // processes are awaited on the runtime from here.
        Some(self.runtime.block_on(reloop_hooks::run_all(&commands, &input, cwd, &cancel)))
    }
}

/// Copies the files of `from` into `to`, skipping `.git`, `.reloop`, `target`, `node_modules`,
/// symlinks and large files; at most 16 levels deep.
fn copy_tree(from: &Path, to: &Path, depth: usize) -> std::io::Result<()> {
    if depth > 16 {
        return Ok(());
    }
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        if [".git", ".reloop", "target", "node_modules"].iter().any(|skip| name == *skip) {
            continue;
        }
        let kind = entry.file_type()?;
        let dest = to.join(&name);
        if kind.is_dir() {
            std::fs::create_dir_all(&dest)?;
            copy_tree(&entry.path(), &dest, depth + 1)?;
        } else if kind.is_file() && entry.metadata()?.len() <= MAX_COPIED_FILE {
            std::fs::copy(entry.path(), &dest)?;
        }
    }
    Ok(())
}
