//! What a tool process may do, enforced: the session's sandbox, and the paths each call must
//! not read or write worked out from the deny rules at the moment the call starts.
//!
//! The classifier (`bash_classify`) only decides when to ask. A command it called read-only runs
//! with the workspace read-only; a command that was approved runs with the workspace writable;
//! either way the paths Read deny rules name are masked and the paths Edit deny rules name are
//! read-only, by every name the file has inside the workspace (its hard links included).

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::sync::Arc;

use reloop_sandbox::{Access, Call, Policy, Sandbox};

use crate::error::ToolError;
use crate::path_filter::PathFilter;

/// Entries one walk of the workspace may visit to find what deny rules name; a larger
/// workspace refuses commands rather than run them with a mask that might miss a name.
pub(crate) const MAX_WALK_ENTRIES: usize = 200_000;

/// How the processes of a session's tools are contained.
#[derive(Debug, Clone, Default)]
pub enum Containment {
    /// Processes run as the caller starts them: library use and unit tests. The CLI never
    /// runs a session this way; without a sandbox its permission layer asks for every command.
    #[default]
    Unconfined,
    /// Every process runs in the sandbox.
    Confined(Arc<Confinement>),
}

/// A session's sandbox and the rules it enforces on every call.
#[derive(Debug)]
pub struct Confinement {
    sandbox: Sandbox,
    policy: Policy,
    /// Paths a Read deny rule names (canonical paths in, as the permission layer matches them).
    read_denied: Option<PathFilter>,
    /// Paths an Edit deny rule names.
    edit_denied: Option<PathFilter>,
    /// When every deny rule names one path: those paths (Read's, then Edit's), so a call needs
    /// no walk unless one of them is a directory or a file with several links.
    literal: Option<(Vec<PathBuf>, Vec<PathBuf>)>,
}

impl Confinement {
    /// A confinement in `sandbox` under `policy` that masks what `read_denied` hides and keeps
    /// read-only what `edit_denied` hides; with both `None` a call needs no walk of the workspace.
    pub fn new(
        sandbox: Sandbox,
        policy: Policy,
        read_denied: Option<PathFilter>,
        edit_denied: Option<PathFilter>,
    ) -> Self {
        Confinement { sandbox, policy, read_denied, edit_denied, literal: None }
    }

    /// The same confinement knowing that the deny rules name exactly these paths (the rules'
    /// filters stay, for the walk a directory or a linked file still needs).
    pub fn with_literal_paths(mut self, read: Vec<PathBuf>, edit: Vec<PathBuf>) -> Self {
        self.literal = Some((read, edit));
        self
    }

    /// The sandbox calls run in.
    pub fn sandbox(&self) -> &Sandbox {
        &self.sandbox
    }

    /// What every call of the session may reach.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The limits of one call, the deny rules resolved against the workspace as it is now.
    pub(crate) fn call(&self, access: Access) -> Result<Call, ToolError> {
        let mut call = Call::new(access);
        if self.read_denied.is_none() && self.edit_denied.is_none() {
            return Ok(call);
        }
        if let Some((read, edit)) = &self.literal {
            if let Some((masked, frozen)) = single_names(read, edit) {
                call.masked = masked;
                call.frozen = frozen;
                return Ok(call);
            }
        }
        let found = walk(&self.policy.roots, self.read_denied.as_ref(), self.edit_denied.as_ref())?;
        call.masked = found.masked;
        call.frozen = found.frozen;
        Ok(call)
    }
}

/// The paths to mask and freeze when each is a file with one name (or does not exist): then no
/// other name can reach its content. `None` when one is a directory or has several links, which
/// only a walk can follow.
fn single_names(read: &[PathBuf], edit: &[PathBuf]) -> Option<(Vec<PathBuf>, Vec<PathBuf>)> {
    let existing = |paths: &[PathBuf]| -> Option<Vec<PathBuf>> {
        let mut out = Vec::new();
        for path in paths {
            match std::fs::symlink_metadata(path) {
                Ok(meta) if meta.is_file() && meta.nlink() == 1 => out.push(path.clone()),
                Ok(_) => return None,
                Err(_) => {}
            }
        }
        Some(out)
    };
    Some((existing(read)?, existing(edit)?))
}

/// The names a walk found covered by deny rules, each with every other name of its file.
#[derive(Default)]
struct Found {
    masked: Vec<PathBuf>,
    frozen: Vec<PathBuf>,
}

/// Walks the roots without following links. A directory a rule names is taken whole; a file
/// with more than one link brings every other name of it found in the roots.
fn walk(roots: &[PathBuf], read: Option<&PathFilter>, edit: Option<&PathFilter>) -> Result<Found, ToolError> {
    let mut found = Found::default();
    // (device, inode) of every file with several links, to every name of it.
    let mut linked: HashMap<(u64, u64), Vec<PathBuf>> = HashMap::new();
    let mut marked_inodes: Vec<((u64, u64), bool)> = Vec::new();
    let mut stack: Vec<PathBuf> = roots.to_vec();
    let mut visited = 0usize;
    while let Some(path) = stack.pop() {
        visited += 1;
        if visited > MAX_WALK_ENTRIES {
            return Err(ToolError::InvalidArgument(format!(
                "cannot confine the command: the workspace has more than {MAX_WALK_ENTRIES} entries to search for the \
                 paths deny rules name"
            )));
        }
        let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
        let masked = read.is_some_and(|f| f.hides(&path));
        let frozen = edit.is_some_and(|f| f.hides(&path));
        if masked {
            found.masked.push(path.clone());
        }
        if frozen {
            found.frozen.push(path.clone());
        }
        if meta.is_file() && meta.nlink() > 1 {
            let key = (meta.dev(), meta.ino());
            linked.entry(key).or_default().push(path.clone());
            // A masked name is unreadable and unwritable, so its other names join the masks;
            // a frozen one's join the frozen paths.
            if masked || frozen {
                marked_inodes.push((key, masked));
            }
        }
        // A masked directory hides everything below: no need to look further.
        if meta.is_dir() && !masked {
            if let Ok(entries) = std::fs::read_dir(&path) {
                stack.extend(entries.flatten().map(|e| e.path()));
            }
        }
    }
    for (key, masked) in marked_inodes {
        let names = linked.get(&key).cloned().unwrap_or_default();
        let list = if masked { &mut found.masked } else { &mut found.frozen };
        for name in names {
            if !list.contains(&name) {
                list.push(name);
            }
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_paths_skip_the_walk_only_while_each_is_a_file_with_one_name() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("secret.txt"), "s").unwrap();
        std::fs::create_dir(root.join("vault")).unwrap();
        let secret = vec![root.join("secret.txt"), root.join("missing.txt")];
        assert_eq!(single_names(&secret, &[]), Some((vec![root.join("secret.txt")], vec![])));
        assert_eq!(single_names(&[], &[root.join("vault")]), None, "a directory needs the walk");
        std::fs::hard_link(root.join("secret.txt"), root.join("other-name.txt")).unwrap();
        assert_eq!(single_names(&secret, &[]), None, "a second name needs the walk");
    }

    #[test]
    fn every_name_of_a_denied_file_is_masked_and_a_denied_directory_is_taken_whole() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("secret.txt"), "s").unwrap();
        std::fs::create_dir_all(root.join("deep/er")).unwrap();
        std::fs::hard_link(root.join("secret.txt"), root.join("deep/er/innocent.txt")).unwrap();
        std::fs::create_dir(root.join("vault")).unwrap();
        std::fs::write(root.join("vault/key"), "k").unwrap();
        std::fs::write(root.join("open.txt"), "o").unwrap();
        let secret = root.join("secret.txt");
        let vault = root.join("vault");
        let read = PathFilter::new(move |p| p == secret || p.starts_with(&vault));
        let found = walk(std::slice::from_ref(&root), Some(&read), None).unwrap();
        let mut masked = found.masked.clone();
        masked.sort();
        assert_eq!(masked, [root.join("deep/er/innocent.txt"), root.join("secret.txt"), root.join("vault")]);
        assert!(found.frozen.is_empty());
    }
}
