//! The confined command: one bwrap argument list built from a session's [`Policy`] and a
//! call's [`Call`].

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::SandboxError;

/// The system directories a confined process sees read-only, when they exist (a directory is
/// bound, a symlink such as `/bin -> usr/bin` is recreated as the same link).
pub const SYSTEM_DIRS: &[&str] = &["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"];

/// Files under the system directories no tool needs and root could read as their owner once
/// capabilities are dropped: masked like a Read deny rule's paths.
const SYSTEM_SECRETS: &[&str] = &["/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-", "/etc/sudoers"];

/// The size of a call's private `/tmp` (a tmpfs, so it is memory): enough for a build's
/// temporary files, bounded so one command cannot fill the machine's memory.
pub const SCRATCH_BYTES: u64 = 1 << 30;

/// What a session's tool processes may reach, the same for every call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    /// The workspace roots (the working directory and each `--add-dir` folder), canonical:
    /// visible to every call, writable to calls with [`Access::Write`].
    pub roots: Vec<PathBuf>,
    /// Whether calls share the machine's network; otherwise they get a network namespace of
    /// their own, with only a loopback device.
    pub network: bool,
    /// The whole environment of a call (see [`crate::EnvPolicy`]).
    pub env: Vec<(OsString, OsString)>,
}

/// Whether a call may write the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// The classifier called the command read-only: the roots are mounted read-only and only
    /// the private `/tmp` takes writes.
    ReadOnly,
    /// The command was approved (a rule, a mode, a person) to write: the roots are writable.
    Write,
}

/// One call's limits beyond its session's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// Whether the workspace roots are writable to this call.
    pub access: Access,
    /// Paths that must not be read, by any name the caller found (canonical path, hard links).
    pub masked: Vec<PathBuf>,
    /// Paths that must not be written (Edit deny rules).
    pub frozen: Vec<PathBuf>,
    /// Variables set for this call on top of the session's environment.
    pub env: Vec<(OsString, OsString)>,
}

impl Call {
    /// A call with no masks and no extra variables.
    pub fn new(access: Access) -> Self {
        Call { access, masked: Vec::new(), frozen: Vec::new(), env: Vec::new() }
    }
}

/// The bwrap arguments that confine `call` under `policy`, up to and including the `--`
/// before the program.
pub(crate) fn arguments(
    policy: &Policy,
    call: &Call,
    cwd: &Path,
    as_root: bool,
) -> Result<Vec<OsString>, SandboxError> {
    for path in policy.roots.iter().chain(&call.masked).chain(&call.frozen).chain(std::iter::once(&cwd.to_path_buf())) {
        if !path.is_absolute() {
            return Err(SandboxError::NotAbsolute { path: path.clone() });
        }
    }
    let mut args = Args::default();
    args.flags(&["--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc", "--unshare-uts"]);
    // The command is the namespace's first process, so bwrap reports its end only once the
    // kernel has killed every other process of the namespace (bwrap's own init reports it
    // before, and a background process could still be dying when the call returns).
    args.flags(&["--as-pid-1"]);
    args.flags(&["--unshare-cgroup-try"]);
    if !policy.network {
        args.flags(&["--unshare-net"]);
    }
    if !as_root {
        // Unprivileged: bwrap needs a user namespace to mount; the process keeps the user's ids.
        args.flags(&["--unshare-user"]);
    }
    // Root keeps no capability either: without CAP_SYS_ADMIN a mask cannot be unmounted.
    args.flags(&["--cap-drop", "ALL"]);
    for dir in SYSTEM_DIRS {
        let dir = Path::new(dir);
        match std::fs::symlink_metadata(dir) {
            Ok(meta) if meta.file_type().is_symlink() => {
                if let Ok(target) = std::fs::read_link(dir) {
                    args.pair("--symlink", target.as_os_str(), dir.as_os_str());
                }
            }
            Ok(meta) if meta.is_dir() => args.pair("--ro-bind", dir.as_os_str(), dir.as_os_str()),
            _ => {}
        }
    }
    args.pair("--dev", OsStr::new("/dev"), None);
    args.pair("--proc", OsStr::new("/proc"), None);
    args.pair("--size", OsStr::new(&SCRATCH_BYTES.to_string()), None);
    args.pair("--tmpfs", OsStr::new("/tmp"), None);
    let bind = match call.access {
        Access::ReadOnly => "--ro-bind",
        Access::Write => "--bind",
    };
    for root in &policy.roots {
        args.pair(bind, root.as_os_str(), root.as_os_str());
    }
    if call.access == Access::Write {
        for path in call.frozen.iter().filter(|p| visible(policy, p) && p.exists()) {
            args.pair("--ro-bind", path.as_os_str(), path.as_os_str());
        }
    }
    let secrets = SYSTEM_SECRETS.iter().map(PathBuf::from);
    for path in call.masked.iter().cloned().chain(secrets) {
        if !(visible(policy, &path) || path.starts_with("/etc")) {
            continue;
        }
        match std::fs::metadata(&path) {
            Ok(meta) if meta.is_dir() => {
                args.pair("--tmpfs", path.as_os_str(), None);
                args.pair("--remount-ro", path.as_os_str(), None);
            }
            // A device node is refused on open: the mount carries nodev.
            Ok(_) => args.pair("--ro-bind", OsStr::new("/dev/null"), path.as_os_str()),
            Err(_) => {}
        }
    }
    args.pair("--chdir", cwd.as_os_str(), None);
    args.flags(&["--"]);
    Ok(args.0)
}

/// Whether `path` lies under a root (anything else is invisible already).
fn visible(policy: &Policy, path: &Path) -> bool {
    policy.roots.iter().any(|root| path.starts_with(root))
}

/// Builds the command `bwrap ARGS -- program args...` with only the allowed environment.
pub(crate) fn build(
    bwrap: &Path,
    policy: &Policy,
    call: &Call,
    cwd: &Path,
    program: &OsStr,
    program_args: &[&OsStr],
) -> Result<Command, SandboxError> {
    let as_root = crate::os::is_root();
    let mut command = Command::new(bwrap);
    command.args(arguments(policy, call, cwd, as_root)?).arg(program).args(program_args);
    command.env_clear().envs(policy.env.iter().map(|(k, v)| (k, v))).envs(call.env.iter().map(|(k, v)| (k, v)));
    // bwrap is started from a directory it can see whatever the caller's is.
    command.current_dir("/");
    crate::os::die_with_parent(&mut command);
    Ok(command)
}

#[derive(Default)]
struct Args(Vec<OsString>);

impl Args {
    fn flags(&mut self, flags: &[&str]) {
        self.0.extend(flags.iter().map(OsString::from));
    }

    fn pair<'a>(&mut self, flag: &str, first: &OsStr, second: impl Into<Option<&'a OsStr>>) {
        self.0.push(flag.into());
        self.0.push(first.to_owned());
        if let Some(second) = second.into() {
            self.0.push(second.to_owned());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(args: &[OsString]) -> String {
        args.iter().map(|a| a.to_string_lossy().into_owned()).collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn a_read_only_call_binds_the_roots_read_only_and_shares_no_network() {
        let policy = Policy { roots: vec!["/work/ws".into()], network: false, env: vec![] };
        let args = text(&arguments(&policy, &Call::new(Access::ReadOnly), Path::new("/work/ws"), true).unwrap());
        assert!(args.contains("--ro-bind /work/ws /work/ws"), "{args}");
        assert!(!args.contains("--bind /work/ws"), "{args}");
        assert!(args.contains("--unshare-net"), "{args}");
        assert!(args.contains("--cap-drop ALL"), "{args}");
        assert!(args.ends_with("--chdir /work/ws --"), "{args}");
    }

    #[test]
    fn a_writing_call_binds_the_roots_writable_and_the_network_follows_the_policy() {
        let policy = Policy { roots: vec!["/a".into(), "/b".into()], network: true, env: vec![] };
        let args = text(&arguments(&policy, &Call::new(Access::Write), Path::new("/a"), false).unwrap());
        assert!(args.contains("--bind /a /a --bind /b /b"), "{args}");
        assert!(!args.contains("--unshare-net"), "{args}");
        assert!(args.contains("--unshare-user"), "{args}");
    }

    #[test]
    fn masks_cover_files_and_directories_under_the_roots_only() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("secret.txt"), "s").unwrap();
        std::fs::create_dir(root.join("vault")).unwrap();
        let policy = Policy { roots: vec![root.clone()], network: false, env: vec![] };
        let mut call = Call::new(Access::Write);
        call.masked = vec![root.join("secret.txt"), root.join("vault"), "/outside/x".into()];
        call.frozen = vec![root.join("vault")];
        let args = text(&arguments(&policy, &call, &root, true).unwrap());
        let r = root.display();
        assert!(args.contains(&format!("--ro-bind /dev/null {r}/secret.txt")), "{args}");
        assert!(args.contains(&format!("--tmpfs {r}/vault --remount-ro {r}/vault")), "{args}");
        assert!(args.contains(&format!("--ro-bind {r}/vault {r}/vault")), "{args}");
        assert!(!args.contains("/outside/x"), "{args}");
    }

    #[test]
    fn relative_paths_are_refused() {
        let policy = Policy { roots: vec!["ws".into()], network: false, env: vec![] };
        let err = arguments(&policy, &Call::new(Access::ReadOnly), Path::new("/"), true).unwrap_err();
        assert!(err.to_string().contains("\"ws\" is not an absolute path"), "{err}");
    }
}
