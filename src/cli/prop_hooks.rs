//! `reloop prop --hooks run`: the settings file's hook commands run for every hook run a case
//! reaches, in a scratch copy of the workspace (so a hook that writes cannot touch the real
//! one), contained as Bash commands are: in the sandbox, the scratch copy its only writable
//! root, no network, the allow-listed environment. Without a sandbox on this machine they run
//! as `reloop run` runs hooks (in the scratch copy, reloop's credentials removed), said once.

use std::ffi::OsStr;
use std::path::Path;

use reloop_hooks::HookCommand;
use reloop_sandbox::{Access, Availability, Policy, Sandbox};

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
    /// The sandbox and what a hook may reach, when this machine has one.
    confined: Option<(Sandbox, Policy)>,
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
        let root = std::fs::canonicalize(scratch.path()).unwrap_or_else(|_| scratch.path().to_path_buf());
        let confined = match Sandbox::probe() {
            Availability::Available(sandbox) => {
                let env = reloop_sandbox::EnvPolicy { extra: Vec::new() }
                    .build(std::env::vars_os(), |home| home.starts_with(&root));
                Some((sandbox.clone(), Policy { roots: vec![root], network: false, env }))
            }
            Availability::Unavailable(why) => {
                crate::term::errln!("reloop: hooks run unconfined in a scratch workspace: {why}");
                None
            }
        };
        Ok(RealHooks { hooks: settings.hooks.clone(), scratch, runtime: tokio::runtime::Handle::current(), confined })
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
        Some(match &self.confined {
            Some((sandbox, policy)) => self.runtime.block_on(futures::future::join_all(
                commands.iter().map(|cmd| run_confined(sandbox, policy, cmd, &input, cwd)),
            )),
            None => self.runtime.block_on(reloop_hooks::run_all(&commands, &input, cwd, &cancel)),
        })
    }
}

/// One hook command in the sandbox, with the workspace writable (hooks run formatters and
/// tests), run as `reloop run` runs hooks otherwise (input, output bounds, timeout, kill).
async fn run_confined(sandbox: &Sandbox, policy: &Policy, cmd: &HookCommand, input: &HookInput, cwd: &Path) -> HookRun {
    let cancel = tokio_util::sync::CancellationToken::new();
    reloop_hooks::run_hook_as(cmd, input, cwd, &cancel, || {
        let args = [OsStr::new("-c"), OsStr::new(&cmd.command)];
        let call = reloop_sandbox::Call::new(Access::Write);
        sandbox.command(policy, &call, cwd, OsStr::new("bash"), &args).map_err(|e| format!("cannot confine it: {e}"))
    })
    .await
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
