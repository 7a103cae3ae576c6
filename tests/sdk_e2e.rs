//! The Agent SDKs' own end-to-end tests and demos, vendored unchanged in `tests/sdk/vendor/`
//! (`SOURCES.md` there pins them), run against reloop through `tests/sdk/examples.py`'s fake
//! model on 127.0.0.1, which refuses model aliases as the real API does:
//!
//! - the Python SDK's `e2e-tests/` (pytest, installed by scripts/sdk-setup.sh): the tests that
//!   fail are exactly the ones docs/sdk.md lists (its table is read here, so the doc and the
//!   test cannot disagree), on reloop and on the Claude Code the wheel bundles (2.1.332);
//! - the TypeScript demos `hello-world` and `resume-generator` (tsx), given the CLI's path at
//!   run time in a temporary copy, print what docs/sdk.md's demo table says;
//! - every SDK session those runs started on reloop, replayed with
//!   `reloop replay ID --output-format stream-json`, prints the message types (type and
//!   subtype) the live run printed, in order; the sessions docs/sdk.md lists as differing are
//!   the only ones that do.
//!
//! The live lines are caught by a wrapper the SDKs take for the CLI (`sdk/replay_check.rs`).

mod common;
#[path = "sdk/install.rs"]
mod install;
#[path = "sdk/replay_check.rs"]
mod replay_check;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use replay_check::{replay_mismatches, Capture};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The SDK install with what these tests run ([`install::sdk_dir`]).
fn sdk_dir() -> Option<PathBuf> {
    install::sdk_dir(&["venv/bin/pytest", "node/node_modules/.bin/tsx"], "the SDKs' test tools")
}

/// A section of docs/sdk.md: from its `### TITLE` heading to the next heading.
fn doc_section(title: &str) -> String {
    let doc = std::fs::read_to_string(root().join("docs/sdk.md")).unwrap();
    let start = doc.find(&format!("### {title}\n")).unwrap_or_else(|| panic!("docs/sdk.md has no `### {title}`"));
    let rest = &doc[start + title.len() + 5..];
    rest[..rest.find("\n#").unwrap_or(rest.len())].to_string()
}

/// The rows of a section's table whose first cell is a backquoted name, as their cells.
fn doc_rows(section: &str) -> Vec<Vec<String>> {
    section
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| l.trim_matches('|').split(" | ").map(|c| c.trim().trim_matches('`').to_string()).collect())
        .collect()
}

/// `tests/sdk/examples.py MODE ROOT CLI ARGS...` with the journal kept in `capture`: its exit
/// code, stdout and stderr, and how long it took.
fn harness(sdk: &Path, mode: &str, dir: &Path, cli: &Path, capture: &Capture, args: &[&str]) -> (i32, String, f64) {
    let mut cmd = Command::new(sdk.join("venv/bin/python"));
    cmd.arg(root().join("tests/sdk/examples.py")).arg(mode).arg(dir).arg(cli).args(args);
    cmd.env("EXAMPLE_JOURNAL", capture.journal()).env("PYTHONDONTWRITEBYTECODE", "1");
    let started = Instant::now();
    let out = common::hermetic(&mut cmd).output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.code().unwrap_or(-1), text, started.elapsed().as_secs_f64())
}

/// A copy of the vendored `from` in a fresh folder (the runs write beside their files).
fn copy_of(from: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let status = Command::new("cp").arg("-r").arg(root().join(from)).arg(dir.path()).status().unwrap();
    assert!(status.success(), "cp -r {from}");
    dir
}

/// The vendored e2e-tests run on `cli`: each test's outcome by name, and the run's wall time.
fn run_e2e_tests(sdk: &Path, cli: &Path, capture: &Capture) -> (BTreeMap<String, String>, String, f64) {
    let checkout = copy_of("tests/sdk/vendor/claude-agent-sdk-python");
    let dir = checkout.path().join("claude-agent-sdk-python");
    // Native tracebacks: pytest's own parse a failing test's source with `ast`, which on
    // CPython 3.11.7 sometimes dies with `SystemError: AST constructor recursion depth mismatch`
    // (an INTERNALERROR that ends the whole run).
    let args = ["e2e-tests", "-q", "-rA", "-p", "no:cacheprovider", "--tb=native"];
    let (_, text, secs) = harness(sdk, "--pytest", &dir, cli, capture, &args);
    let mut outcomes = BTreeMap::new();
    for line in text.lines() {
        let Some((outcome, rest)) = line.split_once(" e2e-tests/") else { continue };
        if let (Some(name), true) = (rest.split("::").nth(1), ["PASSED", "FAILED", "ERROR"].contains(&outcome)) {
            let name = name.split(' ').next().unwrap_or(name).to_string();
            outcomes.insert(name, outcome.to_string());
        }
    }
    (outcomes, text, secs)
}

/// The e2e tests docs/sdk.md says fail on reloop (`column` 1) or Claude Code (2).
fn documented_failures(column: usize) -> BTreeSet<String> {
    doc_rows(&doc_section("The Python SDK's e2e tests"))
        .into_iter()
        .filter(|cells| cells.get(column).map(String::as_str) == Some("fails"))
        .map(|cells| cells[0].clone())
        .collect()
}

fn failures(outcomes: &BTreeMap<String, String>) -> BTreeSet<String> {
    outcomes.iter().filter(|(_, o)| o.as_str() != "PASSED").map(|(n, _)| n.clone()).collect()
}

#[test]
fn the_python_sdks_e2e_tests_fail_on_reloop_only_where_docs_sdk_md_says_and_replay_as_they_ran() {
    let Some(sdk) = sdk_dir() else { return };
    let capture = Capture::new(Path::new(env!("CARGO_BIN_EXE_reloop")));
    let (outcomes, text, secs) = run_e2e_tests(&sdk, &capture.cli(), &capture);
    eprintln!("e2e-tests on reloop: {} tests in {secs:.1}s", outcomes.len());
    assert_eq!(outcomes.len(), 42, "every e2e test ran:\n{text}");
    assert_eq!(failures(&outcomes), documented_failures(1), "the e2e tests failing on reloop:\n{text}");
    let differing = replay_mismatches(&capture, 40);
    let documented: BTreeSet<String> =
        doc_rows(&doc_section("Replaying their sessions")).into_iter().map(|cells| cells[0].clone()).collect();
    let tests: BTreeSet<String> = differing.keys().cloned().collect();
    assert_eq!(tests, documented, "the e2e tests whose sessions replay otherwise than they ran:\n{differing:#?}");
}

#[test]
fn the_python_sdks_e2e_tests_fail_on_claude_code_where_docs_sdk_md_says() {
    let Some(sdk) = sdk_dir() else { return };
    let Some(claude) = install::bundled_claude(&sdk) else {
        eprintln!("notice: SDK e2e tests on Claude Code skipped: the wheel's bundled Claude Code is missing");
        return;
    };
    let capture = Capture::new(&claude);
    let (outcomes, text, secs) = run_e2e_tests(&sdk, &claude, &capture);
    eprintln!("e2e-tests on Claude Code 2.1.332: {} tests in {secs:.1}s", outcomes.len());
    assert_eq!(outcomes.len(), 42, "every e2e test ran:\n{text}");
    assert_eq!(failures(&outcomes), documented_failures(2), "the e2e tests failing on Claude Code:\n{text}");
}

#[test]
fn the_typescript_demos_run_on_reloop_as_docs_sdk_md_says_and_replay_as_they_ran() {
    let Some(sdk) = sdk_dir() else { return };
    let capture = Capture::new(Path::new(env!("CARGO_BIN_EXE_reloop")));
    let tsx = sdk.join("node/node_modules/.bin/tsx");
    let demos = doc_section("The TypeScript demos");
    for (demo, file, args, says) in [
        ("hello-world", "hello-world.ts", &[][..], "Claude says: FAKE ANSWER to: Hello, Claude!"),
        ("resume-generator", "resume-generator.ts", &["Jane Doe"][..], "❌ Resume file was not created."),
    ] {
        assert!(demos.contains(&format!("| `{demo}`")), "docs/sdk.md's demo table has no `{demo}`");
        let copy = copy_of(&format!("tests/sdk/vendor/claude-agent-sdk-demos/{demo}"));
        let dir = copy.path().join(demo);
        // The one change docs/sdk.md names: the demo's options are given the CLI's path.
        let source = std::fs::read_to_string(dir.join(file)).unwrap();
        assert_eq!(source.matches("\n    options: {\n").count(), 1, "{demo}: one options object");
        let source = source.replace(
            "\n    options: {\n",
            "\n    options: {\n      pathToClaudeCodeExecutable: process.env.EXAMPLE_CLI,\n",
        );
        std::fs::write(dir.join(file), source).unwrap();
        // What the demo's README has one make before running it (git keeps no empty folder).
        std::fs::create_dir_all(dir.join("agent/custom_scripts")).unwrap();
        std::os::unix::fs::symlink(sdk.join("node/node_modules"), dir.join("node_modules")).unwrap();
        let mut argv = vec![tsx.to_str().unwrap(), file];
        argv.extend(args);
        let (code, text, secs) = harness(&sdk, "--cmd", &dir, &capture.cli(), &capture, &argv);
        eprintln!("{demo} on reloop: exit {code} in {secs:.1}s");
        assert_eq!(code, 0, "{demo}:\n{text}");
        assert!(text.contains(says), "{demo} should print {says:?}:\n{text}");
    }
    let differing = replay_mismatches(&capture, 2);
    assert!(differing.is_empty(), "the demos' sessions replay otherwise than they ran:\n{differing:#?}");
}
