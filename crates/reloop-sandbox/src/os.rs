//! The calls into the operating system the sandbox makes: the crate's only unsafe code, kept
//! here so every other module is plain Rust and each call carries its `// SAFETY:` argument.

use std::process::Command;

/// Whether this process runs as root.
pub(crate) fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    #[allow(unsafe_code)]
    unsafe {
        libc::geteuid() == 0
    }
}

/// Makes bwrap die when the thread that starts it ends (reloop killed with SIGKILL included):
/// bwrap then takes the call's whole PID namespace with it.
pub(crate) fn die_with_parent(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    let parent = std::process::id();
    // SAFETY: the closure runs between fork and exec and calls only prctl, getppid and _exit,
    // which are async-signal-safe; it allocates nothing and touches no lock.
    #[allow(unsafe_code)]
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // reloop died before the signal was armed: the kernel will not send it now.
            if u32::try_from(libc::getppid()).ok() != Some(parent) {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

/// Makes this process undumpable, so processes of the same user that run unconfined (hooks, MCP
/// servers) cannot read its `/proc/PID/environ` or memory, where the API key is: the kernel then
/// gives those files to root alone and refuses ptrace. Core dumps are off as a consequence.
pub fn protect_self() -> std::io::Result<()> {
    // SAFETY: prctl with PR_SET_DUMPABLE takes plain integers and touches no memory of ours.
    #[allow(unsafe_code)]
    let done = unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0 as libc::c_ulong, 0, 0, 0) };
    if done == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}
