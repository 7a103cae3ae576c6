//! docs/testing-agents.md as a newcomer follows it, in a fresh git repository that is not Rust:
//! every `sh` block of its sections 1, 2, 3, 5 and 6 runs as written (a local server on the
//! Anthropic wire stands in for the model), then the steps of docs/examples/agent-sessions.yml
//! run in a clone elsewhere, the recording's checkout gone, as a CI job runs them.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::fake_server::{sse_from_message, FakeServer};
use common::{call, response, stderr, stdout, text};
use serde_json::json;

fn read(path: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

/// The `sh` blocks of section `number` of docs/testing-agents.md, in order.
fn blocks(number: u32) -> Vec<String> {
    let doc = read("docs/testing-agents.md");
    let section = doc.split("\n## ").find(|s| s.starts_with(&format!("{number}. "))).unwrap();
    section.split("```sh\n").skip(1).map(|b| b.split("```").next().unwrap().to_string()).collect()
}

/// The `run:` steps of the example CI job, but the one that installs reloop (the test's is on PATH).
fn workflow_steps() -> Vec<String> {
    read("docs/examples/agent-sessions.yml")
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("run: "))
        .filter(|run| !run.starts_with("cargo install"))
        .map(str::to_string)
        .collect()
}

struct Scratch {
    dir: tempfile::TempDir,
    server_url: String,
}

impl Scratch {
    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// `bash -e -c SCRIPT` in `dir`, as a person's shell with the `reloop` under test on PATH.
    fn sh(&self, dir: &Path, script: &str) -> Output {
        let bin = Path::new(env!("CARGO_BIN_EXE_reloop")).parent().unwrap().display().to_string();
        common::hermetic(&mut Command::new("bash"))
            .args(["-e", "-c", script])
            .current_dir(dir)
            .env("PATH", format!("{bin}:{}", std::env::var("PATH").unwrap_or_default()))
            .env("HOME", self.home())
            .env("ANTHROPIC_BASE_URL", &self.server_url)
            .env("GIT_AUTHOR_NAME", "Ada")
            .env("GIT_AUTHOR_EMAIL", "ada@example.com")
            .env("GIT_COMMITTER_NAME", "Ada")
            .env("GIT_COMMITTER_EMAIL", "ada@example.com")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap()
    }

    fn ok(&self, dir: &Path, script: &str) -> String {
        let out = self.sh(dir, script);
        assert_eq!(out.status.code(), Some(0), "{script}\n{}{}", stdout(&out), stderr(&out));
        stdout(&out)
    }
}

const LOGIN_PY: &str = "def login(user, password):\n    return bool(user) and bool(password)\n";

#[test]
fn the_documented_recipe_runs_as_written_in_a_repository_that_is_not_rust_and_bisect_finds_the_breaking_commit() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("shop");
    std::fs::create_dir_all(repo.join("src")).unwrap();
    std::fs::create_dir_all(dir.path().join("home")).unwrap();
    let repo = repo.canonicalize().unwrap();
    let login = repo.join("src/login.py");
    let answers = [
        response("m1", json!([call("toolu_read", "Read", json!({"file_path": login}))]), "tool_use", 10),
        response("m2", text("login() accepts any non-empty password: the test is right."), "end_turn", 12),
    ];
    let server = FakeServer::start(
        answers.iter().map(|a| common::fake_server::Canned::Sse(sse_from_message(&a["message"]))).collect(),
    );
    let s = Scratch { dir, server_url: server.url.clone() };
    std::fs::write(&login, LOGIN_PY).unwrap();
    std::fs::write(repo.join("README.md"), "# shop\n").unwrap();
    s.ok(&repo, "git init -q && git add -A && git commit -q -m 'A shop'");

    // 1. Record, 2. keep, 3. check.
    for block in blocks(1).iter().chain(&blocks(2)).chain(&blocks(3)) {
        s.ok(&repo, block);
    }
    assert_eq!(server.requests().len(), 2, "the recording asked the model twice");
    let report = std::fs::read_to_string(repo.join("target/agent-sessions.xml")).unwrap();
    assert!(report.contains("tests=\"1\" failures=\"0\" errors=\"0\""), "{report}");
    assert_eq!(s.ok(&repo, "git status --porcelain -- .reloop"), "", "the journal shows in git status");

    // 5. Rerun: identical today; after the code changes, the changed read is shown.
    let [rerun] = &blocks(5)[..] else { panic!("section 5 has one command") };
    assert!(s.ok(&repo, rerun).contains("2 requests as recorded, identical"));
    s.ok(&repo, "echo '# the shop' > README.md && git commit -q -am 'README'");
    // A stretch where the session file is away: `rerun` exits 2 there (bad input), which bisect
    // visits (the stretch is the middle of the range) and must skip, not blame.
    s.ok(&repo, "git mv tests/agent-sessions/fix-login.json fix-login.json && git commit -q -m 'Move it away'");
    for n in 1..=4 {
        s.ok(&repo, &format!("echo '# a shop {n}' > README.md && git commit -q -am 'README {n}, the session away'"));
    }
    let away = s.sh(&repo, rerun);
    assert_eq!(away.status.code(), Some(2), "{}{}", stdout(&away), stderr(&away));
    s.ok(&repo, "git mv fix-login.json tests/agent-sessions/fix-login.json && git commit -q -m 'Move it back'");
    std::fs::write(&login, LOGIN_PY.replace("bool(password)", "check(password)")).unwrap();
    s.ok(&repo, "git commit -q -am 'Check passwords'");
    let breaking = s.ok(&repo, "git rev-parse HEAD").trim().to_string();
    s.ok(&repo, "echo '# the small shop' > README.md && git commit -q -am 'README again'");
    let diverged = s.sh(&repo, rerun);
    assert_eq!(diverged.status.code(), Some(3), "{}{}", stdout(&diverged), stderr(&diverged));
    assert!(stdout(&diverged).contains("RELOOP-R001: request 2 differs from the recording"), "{}", stdout(&diverged));
    assert!(stdout(&diverged).contains("+ 2\t    return bool(user) and check(password)"), "{}", stdout(&diverged));

    // 6. The CI steps are the job file's; git bisect names the commit that changed the run.
    let [ci, bisect] = &blocks(6)[..] else { panic!("section 6 has two blocks") };
    let steps = workflow_steps();
    assert_eq!(steps.len(), 2, "{steps:?}");
    assert_eq!(ci.lines().collect::<Vec<_>>(), steps, "the doc and the job file run the same steps");
    let found = s.ok(&repo, bisect);
    assert!(found.contains(&format!("{breaking} is the first bad commit")), "{found}");

    // The job, in a clone elsewhere with the recording's checkout gone: green on the good
    // code, red once the code changes what the agent read.
    s.ok(&repo, &format!("git revert --no-edit {breaking} > /dev/null"));
    let clone = s.dir.path().join("ci-checkout");
    s.ok(s.dir.path(), &format!("git clone -q {} {}", repo.display(), clone.display()));
    std::fs::rename(&repo, s.dir.path().join("moved-away")).unwrap();
    for step in &steps {
        s.ok(&clone, step);
    }
    let report = std::fs::read_to_string(clone.join("target/agent-sessions.xml")).unwrap();
    assert!(report.contains("tests=\"1\" failures=\"0\" errors=\"0\""), "{report}");
    std::fs::write(clone.join("src/login.py"), LOGIN_PY.replace("bool(user)", "user in USERS")).unwrap();
    let red = s.sh(&clone, &steps[1]);
    assert_eq!(red.status.code(), Some(1), "{}{}", stdout(&red), stderr(&red));
    assert!(stdout(&red).contains("RELOOP-R001"), "{}", stdout(&red));
}
