//! A throwaway PostgreSQL server for the tests: `initdb` into a temporary directory, started
//! with `pg_ctl` listening only on a Unix socket there, stopped when the last test using it
//! ends. Each test gets a database of its own. The root crate's tests use it too (by `#[path]`),
//! so there is one harness.
//!
//! The server's binaries come from `RELOOP_PG_BIN`, else Debian's `/usr/lib/postgresql/*/bin`,
//! else `initdb` on the `PATH`. Without them a test is skipped with a note — unless
//! `RELOOP_REQUIRE_PG=1` (set by `scripts/test.sh`), when it fails. Run as root, the server runs
//! as the `postgres` user (or `nobody`), as PostgreSQL refuses to run as root.

// Shared by the tests and the bench, which each use part of it.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

/// The running server, shared by the tests that overlap in time.
pub struct Cluster {
    bin: PathBuf,
    dir: tempfile::TempDir,
    user: Option<String>,
}

static CLUSTER: Mutex<Weak<Cluster>> = Mutex::new(Weak::new());
static DATABASES: AtomicU64 = AtomicU64::new(0);

/// A database of its own for one test, on the shared server.
pub struct TestDb {
    _cluster: Arc<Cluster>,
    /// Key-value form (`host=... user=... dbname=...`).
    pub url: String,
    /// The same database as a `postgresql://` address, as `--journal` takes it.
    pub uri: String,
}

impl TestDb {
    /// A fresh database, or `None` (after printing why) when no server can be started and the
    /// tests do not require one.
    pub fn new(test: &str) -> Option<TestDb> {
        let cluster = match shared_cluster() {
            Ok(c) => c,
            Err(why) => {
                if std::env::var("RELOOP_REQUIRE_PG").is_ok_and(|v| v == "1") {
                    panic!("RELOOP_REQUIRE_PG=1 but no PostgreSQL server could be started: {why}");
                }
                eprintln!("note: {test} skipped: no PostgreSQL server ({why}); scripts/pg-setup.sh installs one");
                return None;
            }
        };
        Some(TestDb::on(cluster))
    }

    /// A fresh database on `cluster`.
    pub fn on(cluster: Arc<Cluster>) -> TestDb {
        let name = format!("t{}_{}", std::process::id(), DATABASES.fetch_add(1, Ordering::Relaxed));
        let mut admin = cluster.client("postgres");
        admin.batch_execute(&format!("CREATE DATABASE {name}")).expect("create a test database");
        TestDb { url: cluster.url(&name), uri: cluster.uri(&name), _cluster: cluster }
    }

    /// A plain client on the test's database, to look at what the journal stored.
    pub fn client(&self) -> postgres::Client {
        postgres::Client::connect(&self.url, postgres::NoTls).expect("connect to the test database")
    }
}

fn shared_cluster() -> Result<Arc<Cluster>, String> {
    let mut slot = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(cluster) = slot.upgrade() {
        return Ok(cluster);
    }
    // Tests need no durability across a server crash: fsync off keeps them quick.
    let cluster = Arc::new(Cluster::start("-c fsync=off")?);
    *slot = Arc::downgrade(&cluster);
    Ok(cluster)
}

/// Where `initdb`, `pg_ctl` and `postgres` are.
fn binaries() -> Result<PathBuf, String> {
    if let Ok(dir) = std::env::var("RELOOP_PG_BIN") {
        return Ok(PathBuf::from(dir));
    }
    let mut debian: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|d| d.filter_map(Result::ok).map(|e| e.path().join("bin")).collect())
        .unwrap_or_default();
    debian.retain(|d| d.join("initdb").exists());
    debian.sort_by_key(|d| {
        d.parent().and_then(|v| v.file_name()).and_then(|v| v.to_str()).and_then(|v| v.parse::<u32>().ok())
    });
    if let Some(newest) = debian.pop() {
        return Ok(newest);
    }
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .find(|d| d.join("initdb").exists())
        .ok_or_else(|| "no initdb in RELOOP_PG_BIN, /usr/lib/postgresql/*/bin or PATH".to_string())
}

/// The user the server runs as: ourselves, or when we are root an unprivileged one.
#[allow(unsafe_code)]
fn server_user() -> Option<String> {
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return None;
    }
    let exists = |u: &str| Command::new("id").arg("-u").arg(u).output().is_ok_and(|o| o.status.success());
    ["postgres", "nobody"].into_iter().find(|u| exists(u)).map(str::to_string)
}

impl Cluster {
    /// Starts a server of its own with `settings` (`-c name=value ...`), for benchmarks.
    pub fn own(settings: &str) -> Result<Arc<Cluster>, String> {
        Cluster::start(settings).map(Arc::new)
    }

    fn start(settings: &str) -> Result<Cluster, String> {
        let bin = binaries()?;
        let user = server_user();
        let dir = tempfile::Builder::new().prefix("reloop-pg-").tempdir().map_err(|e| e.to_string())?;
        if let Some(user) = &user {
            let out = Command::new("chown").arg(user).arg(dir.path()).output().map_err(|e| e.to_string())?;
            if !out.status.success() {
                return Err(format!("chown {user}: {}", String::from_utf8_lossy(&out.stderr)));
            }
        }
        let cluster = Cluster { bin, dir, user };
        let data = cluster.data();
        cluster.run(
            "initdb",
            &["-D", &data, "-U", "reloop", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions"],
        )?;
        let options = format!("-k {} -c listen_addresses='' {settings}", cluster.dir.path().display());
        let log = format!("{}/server.log", cluster.dir.path().display());
        cluster.run("pg_ctl", &["-D", &data, "-o", &options, "-l", &log, "-w", "-t", "60", "start"])?;
        Ok(cluster)
    }

    fn data(&self) -> String {
        format!("{}/data", self.dir.path().display())
    }

    /// Runs one of the server's programs, as the server's user.
    fn run(&self, program: &str, args: &[&str]) -> Result<(), String> {
        let path = self.bin.join(program);
        let mut command = match &self.user {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.arg("-u").arg(user).arg("--").arg(&path);
                c
            }
            None => Command::new(&path),
        };
        let out = command.args(args).current_dir(self.dir.path()).output().map_err(|e| format!("{program}: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "{program} failed: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(())
    }

    pub fn url(&self, database: &str) -> String {
        format!("host={} user=reloop dbname={database}", self.dir.path().display())
    }

    /// `database` as a `postgresql://` address: the socket's folder goes in `host=`.
    pub fn uri(&self, database: &str) -> String {
        format!("postgresql://reloop@localhost/{database}?host={}", self.dir.path().display())
    }

    fn client(&self, database: &str) -> postgres::Client {
        postgres::Client::connect(&self.url(database), postgres::NoTls).expect("connect to the test server")
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self.run("pg_ctl", &["-D", &self.data(), "-m", "immediate", "-w", "stop"]);
    }
}
