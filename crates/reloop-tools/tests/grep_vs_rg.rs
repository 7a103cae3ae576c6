//! Grep against ripgrep on a small tree, flag combination by flag combination: against rg's
//! answers recorded in `tests/fixtures/rg_answers.json` always (so the test passes on a machine
//! without `rg`), and against the live `rg` as well when it is installed.
//!
//! rg runs with `--sort path` (Grep's own walk order for content and count output),
//! `--no-require-git` (Grep honours .gitignore outside a git repository) and `-H` (Grep always
//! names the file). The only normalizations are the documented ones: files_with_matches lists
//! files newest first under a `Found N files` header, so that mode compares the sorted lists; count
//! mode adds a `Found N total occurrences across M files.` footer, which is checked against rg's
//! numbers.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

use common::Workspace;
use serde_json::{json, Value};

fn tree() -> Workspace {
    let ws = Workspace::new();
    ws.file(".gitignore", "ignored/\n*.tmp\n");
    ws.file(
        "src/main.rs",
        "// TODO: parse args\nfn main() {\n    let cfg = Config::load();\n    run(cfg);\n}\n\nfn run(cfg: Config) {\n    println!(\"{:?}\", cfg);\n}\n",
    );
    ws.file(
        "src/lib.rs",
        "pub struct Config {\n    pub name: String,\n    pub verbose: bool,\n}\n\nimpl Config {\n    pub fn load() -> Config {\n        // todo: read a file\n        Config { name: String::new(), verbose: false }\n    }\n}\n",
    );
    ws.file(
        "src/util/helpers.rs",
        "pub fn helper() -> u32 {\n    42\n}\n\npub fn other_helper() -> u32 {\n    helper() + 1\n}\n",
    );
    ws.file(
        "web/app.ts",
        "export function run(cfg: Config): void {\n  // TODO handle errors\n  console.log(cfg);\n}\n",
    );
    ws.file("web/app.js", "function run(cfg) {\n  console.log(cfg);\n}\n");
    ws.file("docs/README.md", "# Config\n\nRun `run` with a Config.\nTODO: document fields.\n");
    ws.file("ignored/skip.rs", "fn main() { /* TODO ignored */ }\n");
    ws.file("notes.tmp", "TODO temp note with Config\n");
    ws.file(".hidden/secret.rs", "fn secret() { /* TODO hidden */ }\n");
    ws.file(".env.rs", "fn env() {} // TODO hidden file\n");
    ws.file("data.bin", b"Config\x00\x01\x02TODO fn main\x00binary");
    ws
}

/// ripgrep's recorded answers, so the parity holds on a machine without `rg`
/// (`RELOOP_RECORD_RG=1 cargo test -p reloop-tools --test grep_vs_rg` records them again).
const ANSWERS: &str = "tests/fixtures/rg_answers.json";

/// Answers recorded in this process, written out when recording.
static RECORDED: Mutex<Option<Value>> = Mutex::new(None);

fn answers_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(ANSWERS)
}

fn recording() -> bool {
    std::env::var_os("RELOOP_RECORD_RG").is_some_and(|v| !v.is_empty() && v != "0")
}

/// What rg answered for `args` when it was recorded.
fn recorded(args: &[&str]) -> Option<String> {
    let text = std::fs::read_to_string(answers_path()).ok()?;
    let answers: Value = serde_json::from_str(&text).expect("the recorded rg answers are JSON");
    answers["answers"][serde_json::to_string(args).unwrap()].as_str().map(str::to_string)
}

fn record(args: &[&str], answer: &str, version: &str) {
    let mut recorded = RECORDED.lock().unwrap_or_else(|e| e.into_inner());
    let all = recorded.get_or_insert_with(|| {
        let old = std::fs::read_to_string(answers_path()).ok().and_then(|t| serde_json::from_str(&t).ok());
        old.unwrap_or_else(|| json!({"answers": {}}))
    });
    all["rg_version"] = json!(version);
    all["answers"][serde_json::to_string(args).unwrap()] = json!(answer);
    let text = serde_json::to_string_pretty(all).unwrap() + "\n";
    std::fs::create_dir_all(answers_path().parent().unwrap()).unwrap();
    std::fs::write(answers_path(), text).unwrap();
}

/// The real `rg` in the tree, or `None` when ripgrep is not installed.
fn live_rg(ws: &Workspace, args: &[&str]) -> Option<String> {
    let output = Command::new("rg")
        .args(["--no-config", "--sort", "path", "--no-require-git", "-H"])
        .args(args)
        .current_dir(&ws.root)
        .stdin(Stdio::null())
        .output();
    let output = match output {
        Ok(output) => output,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return None,
        Err(err) => panic!("could not run rg: {err}"),
    };
    let code = output.status.code();
    assert!(
        code == Some(0) || code == Some(1),
        "rg {args:?} failed ({code:?}): {}",
        String::from_utf8_lossy(&output.stderr)
    );
    Some(String::from_utf8(output.stdout).expect("rg output is UTF-8").trim_end_matches('\n').to_string())
}

fn rg_version() -> String {
    let out = Command::new("rg").arg("--version").output().map(|o| o.stdout).unwrap_or_default();
    String::from_utf8_lossy(&out).lines().next().unwrap_or("unknown").to_string()
}

/// ripgrep's answers for `args`: the recorded one always, and the live one too when `rg` is
/// installed. Recording (`RELOOP_RECORD_RG=1`) needs `rg`.
fn rg(ws: &Workspace, args: &[&str]) -> Vec<(&'static str, String)> {
    let live = live_rg(ws, args);
    if recording() {
        let answer = live.clone().expect("recording rg's answers needs rg: apt-get install -y ripgrep");
        record(args, &answer, &rg_version());
    }
    let recorded = recorded(args).unwrap_or_else(|| {
        panic!("no recorded rg answer for {args:?} in {ANSWERS}: record them with RELOOP_RECORD_RG=1 (needs rg)")
    });
    let mut answers = vec![("recorded rg", recorded)];
    answers.extend(live.map(|answer| ("live rg", answer)));
    answers
}

enum Shape {
    Content,
    Count,
    Files,
}

fn compare(ws: &Workspace, input: Value, rg_args: &[&str]) {
    for (which, theirs) in rg(ws, rg_args) {
        compare_with(ws, &input, rg_args, which, theirs);
    }
}

fn compare_with(ws: &Workspace, input: &Value, rg_args: &[&str], which: &str, theirs: String) {
    let mode = input.get("output_mode").and_then(Value::as_str).unwrap_or("files_with_matches");
    let shape = match mode {
        "content" => Shape::Content,
        "count" => Shape::Count,
        _ => Shape::Files,
    };
    let ours = ws.ok("Grep", input.clone());
    let expects_matches = !rg_args.contains(&"absent_everywhere");
    assert_eq!(!theirs.is_empty(), expects_matches, "the fixture no longer exercises rg {rg_args:?}");
    let context = format!("Grep {input} vs {which} {rg_args:?}\n--- Grep:\n{ours}\n--- rg:\n{theirs}\n");
    match shape {
        Shape::Content => {
            let expected = if theirs.is_empty() { "No matches found".to_string() } else { theirs.clone() };
            assert_eq!(ours, expected, "{context}");
        }
        Shape::Count => {
            if theirs.is_empty() {
                assert_eq!(ours, "No matches found", "{context}");
                return;
            }
            let (lines, footer) = ours.split_once("\n\n").expect("count output has a footer");
            assert_eq!(lines, theirs, "{context}");
            let total: u64 = theirs
                .lines()
                .map(|l| l.rsplit_once(':').and_then(|(_, n)| n.parse::<u64>().ok()).expect("path:count"))
                .sum();
            let files = theirs.lines().count();
            let occurrences = if total == 1 { "occurrence" } else { "occurrences" };
            let file_word = if files == 1 { "file" } else { "files" };
            assert_eq!(footer, format!("Found {total} total {occurrences} across {files} {file_word}."), "{context}");
        }
        Shape::Files => {
            if theirs.is_empty() {
                assert_eq!(ours, "No files found", "{context}");
                return;
            }
            let (header, list) = ours.split_once('\n').expect("files output has a header");
            let mut ours_sorted: Vec<&str> = list.lines().collect();
            ours_sorted.sort_unstable();
            let mut theirs_sorted: Vec<&str> = theirs.lines().collect();
            theirs_sorted.sort_unstable();
            assert_eq!(ours_sorted, theirs_sorted, "{context}");
            let n = theirs_sorted.len();
            assert_eq!(header, format!("Found {n} {}", if n == 1 { "file" } else { "files" }), "{context}");
        }
    }
}

#[test]
fn grep_matches_rg_across_modes_and_flags() {
    let ws = tree();
    let table: Vec<(Value, Vec<&str>)> = vec![
        (json!({"pattern": "fn \\w+", "output_mode": "content"}), vec!["-n", "fn \\w+"]),
        (json!({"pattern": "todo", "-i": true, "output_mode": "content"}), vec!["-n", "-i", "todo"]),
        (json!({"pattern": "Config", "output_mode": "content", "-n": false}), vec!["-N", "Config"]),
        (json!({"pattern": "TODO", "output_mode": "content", "-A": 1}), vec!["-n", "-A", "1", "TODO"]),
        (json!({"pattern": "helper", "output_mode": "content", "-B": 2}), vec!["-n", "-B", "2", "helper"]),
        (json!({"pattern": "cfg", "output_mode": "content", "-C": 1}), vec!["-n", "-C", "1", "cfg"]),
        (json!({"pattern": "Config", "output_mode": "content", "context": 2}), vec!["-n", "-C", "2", "Config"]),
        (json!({"pattern": "pub", "glob": "*.rs", "output_mode": "content"}), vec!["-n", "-g", "*.rs", "pub"]),
        (json!({"pattern": "run", "type": "ts", "output_mode": "content"}), vec!["-n", "-t", "ts", "run"]),
        (json!({"pattern": "Config", "output_mode": "count"}), vec!["-c", "Config"]),
        (
            json!({"pattern": "todo", "-i": true, "type": "rust", "output_mode": "count"}),
            vec!["-c", "-i", "-t", "rust", "todo"],
        ),
        (json!({"pattern": "TODO"}), vec!["-l", "TODO"]),
        (json!({"pattern": "helper", "path": "src"}), vec!["-l", "helper", "src"]),
        (json!({"pattern": "Config", "glob": "!*.md"}), vec!["-l", "-g", "!*.md", "Config"]),
        (
            json!({"pattern": "cfg", "glob": "web/*", "output_mode": "files_with_matches"}),
            vec!["-l", "-g", "web/*", "cfg"],
        ),
        (
            json!({"pattern": "struct Config \\{.*?\\}", "multiline": true, "output_mode": "content"}),
            vec!["-n", "-U", "--multiline-dotall", "struct Config \\{.*?\\}"],
        ),
        (
            json!({"pattern": "fn load.*?Config \\{", "multiline": true, "output_mode": "content", "-n": false}),
            vec!["-N", "-U", "--multiline-dotall", "fn load.*?Config \\{"],
        ),
        (json!({"pattern": "absent_everywhere", "output_mode": "content"}), vec!["-n", "absent_everywhere"]),
        (json!({"pattern": "absent_everywhere"}), vec!["-l", "absent_everywhere"]),
        (json!({"pattern": "absent_everywhere", "output_mode": "count"}), vec!["-c", "absent_everywhere"]),
    ];
    assert!(table.len() >= 10);
    for (input, rg_args) in table {
        compare(&ws, input, &rg_args);
    }
}

#[test]
fn ignored_hidden_and_binary_files_are_skipped_as_rg_skips_them() {
    let ws = tree();
    for (which, listed) in rg(&ws, &["-l", "TODO"]) {
        for skipped in ["ignored/skip.rs", "notes.tmp", ".hidden/secret.rs", ".env.rs", "data.bin"] {
            assert!(!listed.contains(skipped), "{which} lists {skipped}: the fixture no longer tests what it claims");
            let ours = ws.ok("Grep", json!({"pattern": "TODO"}));
            assert!(!ours.contains(skipped), "Grep lists {skipped}:\n{ours}");
        }
    }
}
