//! `Session::resume` takes the session's lock itself: while one process resumes a session and
//! runs it, a second resume of the same session is refused with the journal's typed error, so
//! two writers never interleave their steps. The lock names a process, so the first resume runs
//! in a child process: this test binary again, running only [`holder`].

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::stream::{BoxStream, StreamExt};
use reloop_core::{Config, ContentBlock};
use reloop_driver::{DriverError, RunConfig, Session};
use reloop_journal::{Journal, JournalError};
use reloop_model::{ModelProvider, ModelRequest, StreamEvent};
use reloop_tools::ToolRegistry;
use tokio::sync::Notify;

const JOURNAL_VAR: &str = "RELOOP_RESUME_LOCK_JOURNAL";
const SESSION_VAR: &str = "RELOOP_RESUME_LOCK_SESSION";

/// A model that never answers, so a run stays at its request (and keeps its lock); it says
/// when it was asked, by which time the step that asks is committed.
struct Silent(Arc<Notify>);

impl ModelProvider for Silent {
    fn name(&self) -> &str {
        "scripted"
    }

    fn stream(&self, _request: ModelRequest) -> BoxStream<'static, StreamEvent> {
        self.0.notify_one();
        futures::stream::pending().boxed()
    }
}

/// The child process, killed and reaped when the test ends, however it ends.
struct Holder(std::process::Child);

impl Drop for Holder {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn session(journal: &Path, cwd: &Path, asked: Arc<Notify>) -> Session {
    Session::new(
        Arc::new(Silent(asked)),
        ToolRegistry::builtin(),
        Some(Journal::open_existing(journal).unwrap().into()),
        Config::default(),
        RunConfig::new("scripted", "m", cwd.to_path_buf()).with_gather_context(false),
    )
}

/// The child's part: resumes the session it is given and holds it until it is killed. Does
/// nothing when run as an ordinary test.
#[tokio::test]
async fn holder() {
    let (Ok(journal), Ok(id)) = (std::env::var(JOURNAL_VAR), std::env::var(SESSION_VAR)) else { return };
    let journal = Path::new(&journal);
    let cwd = journal.parent().unwrap();
    let asked = Arc::new(Notify::new());
    match session(journal, cwd, asked.clone()).resume(&id) {
        Ok(handle) => {
            asked.notified().await;
            println!("RESUMED");
            tokio::time::sleep(Duration::from_secs(60)).await;
            handle.halt().await;
        }
        Err(e) => println!("REFUSED {e}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_resume_of_a_session_being_resumed_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    let path = cwd.join("j.db");
    drop(Journal::create_or_open(&path).unwrap());

    // A session stopped at its first request, as if its process had been killed there.
    let asked = Arc::new(Notify::new());
    let handle = session(&path, &cwd, asked.clone()).start(vec![ContentBlock::text("hi")]).unwrap();
    let id = handle.session_id().to_string();
    asked.notified().await;
    handle.halt().await;
    assert_eq!(Journal::open_existing(&path).unwrap().writer(&id).unwrap(), None, "the halted run let go");

    let mut child = Holder(
        Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "holder", "--nocapture", "--test-threads=1"])
            .env(JOURNAL_VAR, &path)
            .env(SESSION_VAR, &id)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let stdout = child.0.stdout.take().unwrap();
    let said = tokio::task::spawn_blocking(move || {
        // The harness may print "test holder ... " on the same line first.
        BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .find_map(|line| line.find("RESUMED").or_else(|| line.find("REFUSED")).map(|at| line[at..].to_string()))
    })
    .await
    .unwrap();
    assert_eq!(said.as_deref(), Some("RESUMED"), "the first resume proceeds");

    // The second resume, while the first runs: refused by the lock, naming the first's process.
    let second = session(&path, &cwd, Arc::new(Notify::new())).resume(&id);
    match second {
        Err(DriverError::Journal(JournalError::Locked { session, pid })) => {
            assert_eq!(session, id);
            assert_eq!(pid, child.0.id());
        }
        Err(e) => panic!("refused for another reason: {e}"),
        Ok(_) => panic!("two resumes of one session proceeded at once"),
    }

    // Once the first process is gone, its lock is stale: the session resumes again.
    drop(child);
    let deadline = Instant::now() + Duration::from_secs(10);
    let asked = Arc::new(Notify::new());
    let handle = loop {
        match session(&path, &cwd, asked.clone()).resume(&id) {
            Ok(handle) => break handle,
            Err(DriverError::Journal(JournalError::Locked { .. })) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => panic!("the session did not resume after its writer died: {e}"),
        }
    };
    asked.notified().await;
    handle.halt().await;
}

/// Resuming a session given no journal is the caller's mistake, typed as such: nothing to lock.
#[test]
fn a_resume_without_a_journal_is_refused_as_misuse() {
    let cwd = std::env::temp_dir();
    let session = Session::new(
        Arc::new(Silent(Arc::new(Notify::new()))),
        ToolRegistry::builtin(),
        None,
        Config::default(),
        RunConfig::new("scripted", "m", cwd).with_gather_context(false),
    );
    match session.resume("s1") {
        Err(e @ DriverError::NeedsJournal { action: "resuming a session" }) => {
            assert_eq!(e.to_string(), "resuming a session needs its journal, and this session was given none");
        }
        Err(e) => panic!("refused for another reason: {e}"),
        Ok(_) => panic!("a session with no journal resumed"),
    }
}
