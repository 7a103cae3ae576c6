//! The files a compaction gives back, read again from disk as it ends (flag 47), as Claude Code
//! reads them: with the Read tool, each as the session last read it (or whole, a file it wrote),
//! without asking anybody. The summary request's effect names them; their texts go back to
//! the core with its `compact_done`, so a replay reads nothing.

use reloop_tools::Verdict;
use serde_json::Value;

use crate::tools::ToolEnv;

/// Each file's text as a Read returns it, or `None`: it cannot be read (gone, no longer a
/// regular file, too large), a deny rule now covers it, or its text is over what a compaction
/// gives back ([`reloop_core::compact::shape::REATTACH_MAX_BYTES`]), so the journal never
/// holds what the conversation would not.
pub(crate) fn read_again(env: &ToolEnv, inputs: &[String]) -> Vec<Option<String>> {
    inputs.iter().map(|input| read_one(env, input)).collect()
}

fn read_one(env: &ToolEnv, input: &str) -> Option<String> {
    let input: Value = serde_json::from_str(input).ok()?;
    // The session read or wrote the file with the rules' leave; a deny rule since takes it back.
    if let Some(rules) = &env.permissions {
        if let Verdict::Deny { .. } = rules.judge(&env.registry, "Read", &input).verdict {
            return None;
        }
    }
    let mut ctx = env.ctx.clone();
    ctx.unchanged_read = None;
    ctx.structured_results = false;
    let run = std::panic::AssertUnwindSafe(|| env.registry.execute("Read", &input, &ctx));
    let output = std::panic::catch_unwind(run).ok()?;
    let fits = output.content.len() <= reloop_core::compact::shape::REATTACH_MAX_BYTES;
    (!output.is_error && fits).then_some(output.content)
}

#[cfg(test)]
mod tests {
    use super::*;
    use reloop_tools::{PermissionContext, PermissionMode, PermissionRules, ToolRegistry, Workspace};

    fn read(path: &str) -> String {
        serde_json::json!({ "file_path": path }).to_string()
    }

    /// Files gone, turned into a FIFO or grown past what is given back are left out at once,
    /// and so is one a deny rule covers: hostile or changed files never stall or leak.
    #[test]
    fn only_files_still_readable_and_allowed_come_back() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::write(cwd.join("a.ts"), "one\n").unwrap();
        std::fs::write(cwd.join("big.ts"), format!("{}\n", "x".repeat(60)).repeat(1_000)).unwrap();
        std::fs::write(cwd.join("secret.ts"), "key\n").unwrap();
        let fifo = cwd.join("fifo");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let mut env = ToolEnv::for_test(ToolRegistry::builtin(), cwd.clone());
        let rules = PermissionRules::parse::<&str>(&[], &["Read(./secret.ts)"], &[]).unwrap();
        let workspace = Workspace::new(&cwd, &[]).unwrap();
        env.permissions = Some(std::sync::Arc::new(
            PermissionContext::new(PermissionMode::Default, rules, workspace, Vec::new()).unwrap(),
        ));
        let paths = ["a.ts", "gone.ts", "fifo", "big.ts", "secret.ts"];
        let inputs: Vec<String> = paths.iter().map(|p| read(&cwd.join(p).display().to_string())).collect();
        let texts = read_again(&env, &inputs);
        assert_eq!(texts, [Some("1\tone\n2\t".to_string()), None, None, None, None]);
        env.permissions = None;
        assert_eq!(read_again(&env, &inputs[4..]), [Some("1\tkey\n2\t".to_string())], "no rules: read");
    }
}
