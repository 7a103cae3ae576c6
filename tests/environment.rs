//! The suite does not depend on the developer's shell: every variable reloop reads from the
//! environment is one a test's child process starts without (`common::USER_ENV`), unless it
//! describes the machine (where the home and the tools are). A new `env::var("X")` in the code
//! fails this test until `X` is on one list; scripts/test.sh also runs part of the suite with
//! such variables exported, so the clearing itself stays tested.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use reloop_layout::{non_test_code, read, sources};

/// Variables that describe the machine rather than a person's taste: children keep them.
const MACHINE_ENV: &[&str] = &["HOME", "PATH", "HOSTNAME", "RELOOP_BWRAP"];

/// The quoted upper-case names right after each `marker` in `text`.
fn names_after(text: &str, marker: &str, found: &mut BTreeSet<String>) {
    for (at, _) in text.match_indices(marker) {
        let rest = &text[at + marker.len()..];
        let name: String =
            rest.chars().take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_').collect();
        if rest[name.len()..].starts_with('"') && name.len() > 1 {
            found.insert(name);
        }
    }
}

/// Every variable name the non-test code of the binary and its crates reads: `env::var("X")`,
/// `env::var_os("X")`, the binary's `env_nonempty("X")`, clap's `env = "X"`, and constants
/// named `..._ENV` or `..._VAR`.
fn read_by_the_code() -> BTreeSet<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs = vec![root.join("src")];
    for entry in std::fs::read_dir(root.join("crates")).unwrap().flatten() {
        dirs.push(entry.path().join("src"));
    }
    let mut found = BTreeSet::new();
    for file in dirs.iter().flat_map(|d| sources(d)) {
        if file.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with("tests.rs") || n == "test_corpus.rs") {
            continue;
        }
        let code = non_test_code(&read(&file));
        for marker in
            ["env::var(\"", "env::var_os(\"", "env_nonempty(\"", "env = \"", "_ENV: &str = \"", "_VAR: &str = \""]
        {
            names_after(&code, marker, &mut found);
        }
    }
    found
}

#[test]
fn every_variable_the_code_reads_is_cleared_for_the_tests_children_or_describes_the_machine() {
    let found = read_by_the_code();
    // The reader saw what it checks.
    for known in ["RELOOP_COMPAT", "RELOOP_PAGER", "PAGER", "ANTHROPIC_API_KEY", "RELOOP_LEASE_TTL_MS", "HOME"] {
        assert!(found.contains(known), "{known} not found in {found:?}");
    }
    let kept: Vec<&String> = found
        .iter()
        .filter(|n| !common::USER_ENV.contains(&n.as_str()) && !MACHINE_ENV.contains(&n.as_str()))
        .collect();
    assert!(kept.is_empty(), "read by reloop, yet a test's child inherits it from the caller: {kept:?}");
}

#[test]
fn a_child_of_a_test_sees_none_of_the_callers_settings() {
    let mut cmd = common::reloop_bin();
    cmd.env("NO_COLOR", "1");
    let envs: Vec<_> = cmd.get_envs().collect();
    for name in common::USER_ENV {
        let entry = envs.iter().find(|(k, _)| *k == std::ffi::OsStr::new(name));
        match *name {
            "NO_COLOR" => assert!(entry.is_some_and(|(_, v)| v.is_some()), "a test's own setting is kept"),
            _ => assert!(entry.is_some_and(|(_, v)| v.is_none()), "{name} is not cleared"),
        }
    }
}
