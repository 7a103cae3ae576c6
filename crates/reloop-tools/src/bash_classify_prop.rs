//! The property behind the table: no command the classifier calls read-only changes a file.
//!
//! Commands are generated from the table's own vocabulary (its commands, every option of them,
//! dangerous ones included, and operands naming files of a scratch tree), bounded in count and
//! time: a sweep of every option of every row alone (which catches one mislabelled option: with
//! `sort -o` made "safe" it fails on `sort -o 1 a.txt dir/c.txt`), then 1000 random
//! combinations. Each one classified read-only runs in a scratch directory, confined with `unshare` in a
//! new mount and network namespace where the machine allows it, with the environment a
//! read-only Bash call gets; the tree (paths, sizes, mtimes, content hashes) must be unchanged.
//! The vocabulary leaves out what could touch the clock or wait forever (`date`, `tail -f`,
//! pagers), not what could write: catching a write is the point.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use proptest::prelude::*;

use super::{analyze, Arity, Class};
use crate::bash_table::{Operands, TABLE};

/// Commands left out: they may set the clock, follow a file forever or wait for a terminal.
const LEFT_OUT: &[&str] = &["date", "less", "cd"];
/// Options left out because they never end on their own.
const NEVER_ENDING: &[&str] = &["-f", "-F", "--follow", "--retry", "--pid"];
/// Operands naming the scratch tree (and stdin).
const OPERANDS: &[&str] = &["a.txt", "b.txt", "dir", "dir/c.txt", "-", "new.txt", "."];
/// Longest a generated command may run.
const TIMEOUT: Duration = Duration::from_secs(5);

/// One option of the vocabulary as command words, with a value when it takes one.
fn option_words(command: &str, name: &str, arity: Arity, class: Class, pick: usize) -> Vec<String> {
    let value = |i: usize| match class {
        Class::ReadsPath | Class::PatternFile => OPERANDS[i % 4].to_string(),
        _ if command == "find" => ["*.txt", "f", "1"][i % 3].to_string(),
        _ => ["1", "a", "out.txt"][i % 3].to_string(),
    };
    match arity {
        Arity::None => vec![name.to_string()],
        Arity::Optional if name.starts_with("--") => vec![format!("{name}={}", value(pick))],
        Arity::Optional => vec![format!("{name}{}", value(pick))],
        Arity::Required => vec![name.to_string(), value(pick)],
        Arity::Two => vec![name.to_string(), "v".into(), value(pick)],
    }
}

/// A command line from the vocabulary: a row, some of its options, some operands.
fn command_line(row: usize, options: &[usize], operands: &[usize]) -> Option<String> {
    let rows: Vec<_> = TABLE.iter().filter(|r| !LEFT_OUT.contains(&r.command)).collect();
    let row = rows[row % rows.len()];
    let mut words = vec![row.command.to_string()];
    if row.operands == Operands::Git {
        words.push(
            ["status", "log", "diff", "show", "blame", "ls-files", "rev-parse", "branch"][options.len() % 8].into(),
        );
    }
    let all = row.options();
    if row.operands == Operands::Find {
        words.push(".".into());
    }
    for (n, &pick) in options.iter().enumerate() {
        if let Some(opt) = all.get(pick % all.len().max(1)) {
            if NEVER_ENDING.contains(&opt.name.as_str()) {
                return None;
            }
            words.extend(option_words(row.command, &opt.name, opt.arity, opt.class, n + pick));
        }
    }
    if matches!(row.operands, Operands::PatternThenPaths) {
        words.push("a".into());
    }
    if row.operands == Operands::JqFilter {
        words.push(".".into());
    }
    if row.operands != Operands::Find {
        words.extend(operands.iter().map(|&i| OPERANDS[i % OPERANDS.len()].to_string()));
    }
    let quoted: Vec<String> = words.iter().map(|w| format!("'{}'", w.replace('\'', "'\\''"))).collect();
    Some(quoted.join(" "))
}

/// A small tree with a git repository, so git's rows have something to read.
fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    std::fs::create_dir_all(root.join("dir")).expect("mkdir");
    std::fs::write(root.join("a.txt"), "b\na\n1 2\n").expect("write");
    std::fs::write(root.join("b.txt"), "a\nc\n").expect("write");
    std::fs::write(root.join("dir/c.txt"), "{\"x\": 1}\n").expect("write");
    for args in
        [&["init", "-q"][..], &["add", "."], &["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "i"]]
    {
        let ok = Command::new("git").args(args).current_dir(root).stdout(Stdio::null()).status();
        assert!(ok.is_ok_and(|s| s.success()), "git {args:?}");
    }
    std::fs::write(root.join("a.txt"), "changed\n").expect("write");
    dir
}

/// Every file and folder below `root`: size, mtime and a content hash.
fn snapshot(root: &Path) -> Snapshot {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            if meta.is_file() {
                std::fs::read(&path).unwrap_or_default().hash(&mut hasher);
            }
            if meta.is_dir() {
                stack.push(path.clone());
            }
            out.insert(path, (meta.len(), meta.modified().ok(), hasher.finish()));
        }
    }
    out
}

/// How commands are confined: `unshare` with new mount and network namespaces where possible.
/// Probed once per test run.
fn confinement() -> &'static [&'static str] {
    static PREFIX: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    PREFIX.get_or_init(probe_confinement)
}

fn probe_confinement() -> Vec<&'static str> {
    for prefix in [&["unshare", "--mount", "--net", "--map-root-user"][..], &["unshare", "-m", "-n"]] {
        let works = Command::new(prefix[0]).args(&prefix[1..]).arg("true").status().is_ok_and(|s| s.success());
        if works {
            return prefix.to_vec();
        }
    }
    eprintln!("unshare is not available here: generated commands run unconfined in their scratch directory");
    Vec::new()
}

/// Runs `cmd` as a read-only Bash call would run, killed after [`TIMEOUT`].
fn run(cmd: &str, cwd: &Path, prefix: &[&str]) {
    let mut command = match prefix.split_first() {
        Some((program, args)) => {
            let mut c = Command::new(program);
            c.args(args).arg("bash");
            c
        }
        None => Command::new("bash"),
    };
    command.arg("-c").arg(cmd).current_dir(cwd).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
    crate::bash::read_only_env(&mut command);
    let Ok(mut child) = command.spawn() else { return };
    let started = Instant::now();
    while started.elapsed() < TIMEOUT {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// A tree's snapshot, as the property compares it.
type Snapshot = BTreeMap<PathBuf, (u64, Option<std::time::SystemTime>, u64)>;

thread_local! {
    static SCRATCH: (tempfile::TempDir, Snapshot) = {
        let dir = scratch();
        let snap = snapshot(dir.path());
        (dir, snap)
    };
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn no_command_called_read_only_changes_a_file(
        row in 0usize..64,
        options in proptest::collection::vec(0usize..400, 0..3),
        operands in proptest::collection::vec(0usize..7, 0..3),
    ) {
        let Some(cmd) = command_line(row, &options, &operands) else { return Ok(()) };
        if !analyze(&cmd).is_read_only() {
            return Ok(());
        }
        // One scratch tree per test thread: a case that changed it fails the test anyway.
        SCRATCH.with(|scratch| {
            let (dir, before) = scratch;
            run(&cmd, dir.path(), confinement());
            let after = snapshot(dir.path());
            prop_assert!(*before == after, "`{}` is called read-only but changed the tree", cmd);
            Ok(())
        })?;
    }
}

#[test]
fn the_vocabulary_yields_read_only_commands_and_commands_that_are_not() {
    let mut read_only = 0;
    let mut not = 0;
    for row in 0..64 {
        for pick in 0..40 {
            if let Some(cmd) = command_line(row, &[pick * 7], &[pick]) {
                if analyze(&cmd).is_read_only() {
                    read_only += 1;
                } else {
                    not += 1;
                }
            }
        }
    }
    assert!(read_only > 500 && not > 50, "read-only {read_only}, not {not}: the property would be vacuous");
}

/// Besides random combinations, every option of every row once, alone with two operands: a
/// single mislabelled option is found whatever the random draw.
#[test]
fn no_single_option_called_read_only_changes_a_file() {
    let rows = TABLE.iter().filter(|r| !LEFT_OUT.contains(&r.command)).count();
    let started = Instant::now();
    let mut ran = 0;
    for row in 0..rows {
        let options = TABLE.iter().filter(|r| !LEFT_OUT.contains(&r.command)).nth(row).map_or(0, |r| r.options().len());
        for pick in 0..options.max(1) {
            let Some(cmd) = command_line(row, &[pick], &[pick % OPERANDS.len(), (pick + 3) % OPERANDS.len()]) else {
                continue;
            };
            if !analyze(&cmd).is_read_only() {
                continue;
            }
            SCRATCH.with(|scratch| {
                let (dir, before) = scratch;
                run(&cmd, dir.path(), confinement());
                assert!(*before == snapshot(dir.path()), "`{cmd}` is called read-only but changed the tree");
            });
            ran += 1;
        }
    }
    assert!(ran > 500, "only {ran} commands ran");
    assert!(started.elapsed() < Duration::from_secs(600), "the sweep is bounded in time");
}
