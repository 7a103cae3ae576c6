//! Finding the containment this machine gives, once, and saying what it is.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Instant;

use crate::command::{self, Call, Policy};
use crate::os::is_root;
use crate::SandboxError;

/// The environment variable naming the bwrap program to use instead of the one on `PATH`.
pub const BWRAP_ENV: &str = "RELOOP_BWRAP";

/// Containment that works on this machine: a bwrap that confined a test command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sandbox {
    bwrap: PathBuf,
}

/// What [`Sandbox::probe`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Availability {
    /// Containment works: every tool process runs confined by this sandbox.
    Available(Sandbox),
    /// No containment: why, in a sentence for the user.
    Unavailable(String),
}

/// What `reloop doctor` prints about containment.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// What the probe found: the containment sessions on this machine get.
    pub availability: Availability,
    /// `bwrap --version`, when it answered.
    pub bwrap_version: Option<String>,
    /// The kernel's security modules (`/sys/kernel/security/lsm`), to show whether Landlock is on.
    pub lsm: Option<String>,
    /// Whether reloop runs as root (bwrap then needs no user namespace; capabilities are dropped).
    pub root: bool,
    /// Milliseconds a confined `true` took, and an unconfined one, averaged over a few runs.
    pub cost_ms: Option<(f64, f64)>,
}

impl Sandbox {
    /// The machine's containment, probed once per process.
    pub fn probe() -> &'static Availability {
        static PROBED: OnceLock<Availability> = OnceLock::new();
        PROBED.get_or_init(|| Self::probe_with(std::env::var_os(BWRAP_ENV).as_deref()))
    }

    /// Probes the bwrap named (`None`: `bwrap` on `PATH`, then `/usr/bin/bwrap`).
    pub fn probe_with(bwrap: Option<&OsStr>) -> Availability {
        let Some(found) = find(bwrap) else {
            return Availability::Unavailable(match bwrap {
                Some(named) => format!("{BWRAP_ENV} names {}, which is not a file", PathBuf::from(named).display()),
                None => "bubblewrap (bwrap) is not installed; on Debian or Ubuntu: apt-get install bubblewrap".into(),
            });
        };
        let bwrap = found;
        let sandbox = Sandbox { bwrap };
        match sandbox.run_true() {
            Ok(()) => Availability::Available(sandbox),
            Err(why) => Availability::Unavailable(why),
        }
    }

    /// The bwrap program this sandbox runs.
    pub fn bwrap(&self) -> &Path {
        &self.bwrap
    }

    /// `program args` confined by `policy` and `call`, started in `cwd` (which must lie in the
    /// policy's roots or a system directory to be visible). Stdio is the caller's to set.
    pub fn command(
        &self,
        policy: &Policy,
        call: &Call,
        cwd: &Path,
        program: &OsStr,
        args: &[&OsStr],
    ) -> Result<Command, SandboxError> {
        command::build(&self.bwrap, policy, call, cwd, program, args)
    }

    /// Runs `true` in the strictest sandbox, the way every call will run.
    fn run_true(&self) -> Result<(), String> {
        let policy = Policy { roots: Vec::new(), network: false, env: Vec::new() };
        let call = Call::new(crate::Access::ReadOnly);
        let mut command =
            self.command(&policy, &call, Path::new("/"), OsStr::new("true"), &[]).map_err(|err| err.to_string())?;
        let out = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .map_err(|err| format!("cannot run {}: {err}", self.bwrap.display()))?;
        if out.status.success() {
            return Ok(());
        }
        let said = String::from_utf8_lossy(&out.stderr);
        Err(format!(
            "{} cannot create the namespaces it needs here ({}): user namespaces may be disabled",
            self.bwrap.display(),
            said.trim()
        ))
    }

    /// The report `reloop doctor` prints, measuring the cost of a confined call.
    pub fn report() -> Report {
        let availability = Self::probe().clone();
        let bwrap = find(std::env::var_os(BWRAP_ENV).as_deref());
        let bwrap_version = bwrap.as_ref().and_then(|b| {
            let out = Command::new(b).arg("--version").stderr(Stdio::null()).output().ok()?;
            Some(String::from_utf8_lossy(&out.stdout).trim().to_string()).filter(|v| !v.is_empty())
        });
        let lsm = std::fs::read_to_string("/sys/kernel/security/lsm").ok().map(|s| s.trim().to_string());
        let cost_ms = match &availability {
            Availability::Available(sandbox) => sandbox.cost_ms(),
            Availability::Unavailable(_) => None,
        };
        Report { availability, bwrap_version, lsm, root: is_root(), cost_ms }
    }

    /// Average milliseconds of a confined and of a plain `true`, over ten runs each.
    fn cost_ms(&self) -> Option<(f64, f64)> {
        const RUNS: u32 = 10;
        let time = |make: &dyn Fn() -> Option<Command>| -> Option<f64> {
            let start = Instant::now();
            for _ in 0..RUNS {
                let status = make()?.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).status().ok()?;
                if !status.success() {
                    return None;
                }
            }
            Some(start.elapsed().as_secs_f64() * 1000.0 / f64::from(RUNS))
        };
        let policy = Policy::default();
        let call = Call::new(crate::Access::ReadOnly);
        let confined = time(&|| self.command(&policy, &call, Path::new("/"), OsStr::new("true"), &[]).ok())?;
        let plain = time(&|| Some(Command::new("true")))?;
        Some((confined, plain))
    }
}

/// The bwrap to use: the one named, else the first on `PATH`, else `/usr/bin/bwrap`.
fn find(named: Option<&OsStr>) -> Option<PathBuf> {
    if let Some(named) = named {
        let path = PathBuf::from(named);
        return path.is_file().then_some(path);
    }
    let on_path = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).map(|dir| dir.join("bwrap")).collect::<Vec<_>>())
        .unwrap_or_default();
    on_path.into_iter().chain([PathBuf::from("/usr/bin/bwrap")]).find(|p| p.is_file())
}
