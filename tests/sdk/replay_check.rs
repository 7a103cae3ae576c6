//! Whether every SDK session a run of the SDKs' own programs started replays as it ran: the
//! SDKs take for the CLI a wrapper that tees the CLI's stdout to a file per run (with the pytest
//! test that started it) and execs the CLI; each session those lines name is then replayed with
//! `reloop replay ID --output-format stream-json` and its message types compared. Shared by
//! tests/sdk_e2e.rs and tests/sdk_examples.rs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// A temporary folder with the CLI wrapper `cli` that records each run of `exe` in `runs/`.
pub struct Capture {
    dir: tempfile::TempDir,
}

impl Capture {
    pub fn new(exe: &Path) -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("runs")).unwrap();
        let runs = dir.path().join("runs");
        let script = format!(
            "#!/bin/bash\nn='{}'/$(date +%s%N)-$$\nprintf '%s\\n' \"${{PYTEST_CURRENT_TEST:-}}\" > \"$n.test\"\n\
             exec > >(exec tee \"$n.out\")\nexec '{}' \"$@\"\n",
            runs.display(),
            exe.display()
        );
        let cli = dir.path().join("cli");
        std::fs::write(&cli, script).unwrap();
        std::fs::set_permissions(&cli, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        Capture { dir }
    }

    pub fn cli(&self) -> PathBuf {
        self.dir.path().join("cli")
    }

    pub fn journal(&self) -> PathBuf {
        self.dir.path().join("journal.db")
    }
}

/// A line's message type: its `type`, and `/subtype` when it has one.
fn kind(line: &Value) -> String {
    let kind = line["type"].as_str().unwrap_or("?").to_string();
    match line["subtype"].as_str() {
        Some(subtype) => format!("{kind}/{subtype}"),
        None => kind,
    }
}

/// Every session the captured runs printed lines of (the control protocol's lines belong to
/// none), replayed from the journal: the sessions whose replay prints other message types than
/// the live runs printed for them (a resumed session's runs in order), by the pytest test that
/// started them (the demos have none). At least `at_least` sessions must have run.
pub fn replay_mismatches(capture: &Capture, at_least: usize) -> BTreeMap<String, Vec<String>> {
    let runs = capture.dir.path().join("runs");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&runs)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "out"))
        .collect();
    names.sort();
    let mut live: BTreeMap<String, (String, Vec<String>)> = BTreeMap::new();
    let mut order = Vec::new();
    for path in names {
        let test = std::fs::read_to_string(path.with_extension("test")).unwrap_or_default();
        let test = test.split("::").nth(1).unwrap_or("").split(' ').next().unwrap_or("").trim().to_string();
        for line in std::fs::read_to_string(&path).unwrap().lines() {
            let Ok(line) = serde_json::from_str::<Value>(line) else { continue };
            let Some(session) = line["session_id"].as_str() else { continue };
            if !live.contains_key(session) {
                order.push(session.to_string());
            }
            live.entry(session.to_string()).or_insert_with(|| (test.clone(), Vec::new())).1.push(kind(&line));
        }
    }
    assert!(live.len() >= at_least, "only {} sessions ran", live.len());
    let mut differing: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for session in &order {
        let (test, printed) = &live[session];
        let out = crate::common::reloop_bin()
            .args(["replay", session, "--output-format", "stream-json", "--journal"])
            .arg(capture.journal())
            .output()
            .unwrap();
        let replayed: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .map(|l| kind(&l))
            .collect();
        if &replayed != printed {
            let why = String::from_utf8_lossy(&out.stderr).trim().to_string();
            let test = if test.is_empty() { "(no pytest test)".to_string() } else { test.clone() };
            differing
                .entry(test)
                .or_default()
                .push(format!("session {session}: live {printed:?}, replay {replayed:?} {why}"));
        }
    }
    eprintln!(
        "replayed {} sessions: {} differ from their live runs",
        order.len(),
        differing.values().flatten().count()
    );
    differing
}
