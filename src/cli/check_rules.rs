//! `reloop check --rules DIR|FILE`: does the profile's engine explain what Claude Code did?
//! Every Claude Code transcript found (a file, or every `*.jsonl` under a folder, subagents'
//! sidechains included as transcripts of their own) is fed to the engine under its version's
//! profile, no model called and no tool run, and each decision is held against the transcript's
//! (`reloop_import::check_rules`). One line per transcript, the first disagreement with its code,
//! both sides and the rule; exit 3 on any disagreement, 2 on a transcript that cannot be read.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use reloop_import::{ImportError, RulesReport};
use serde_json::json;

use super::CliError;
use crate::error::Exit;
use crate::term::outln;

/// What became of one file.
enum Verdict {
    Checked(Box<RulesReport>),
    /// Named on the command line or found as a transcript, but it cannot be read.
    Unreadable(String),
    /// A file Claude Code writes that holds no conversation (0 bytes, titles and checkpoints
    /// only, a `/command` alone): no decision to check, neither agreement nor failure.
    NoConversation(String),
}

struct Case {
    file: PathBuf,
    time: Duration,
    verdict: Verdict,
}

impl Case {
    fn disagrees(&self) -> bool {
        matches!(&self.verdict, Verdict::Checked(r) if r.disagreement.is_some())
    }
    fn unreadable(&self) -> bool {
        matches!(self.verdict, Verdict::Unreadable(_))
    }
    fn empty(&self) -> bool {
        matches!(self.verdict, Verdict::NoConversation(_))
    }
}

pub fn run(path: &Path, junit: Option<&Path>, as_json: bool) -> Result<Exit, CliError> {
    let started = jiff::Timestamp::now();
    let (files, skipped) = transcripts(path)?;
    if files.is_empty() {
        return Err(CliError::Usage(format!("{}: no Claude Code transcripts (*.jsonl)", path.display())));
    }
    let registry = reloop_tools::ToolRegistry::builtin();
    let inputs = |name: &str, input: &serde_json::Value| registry.check_input(name, input);
    let cases: Vec<Case> = files
        .into_iter()
        .map(|file| {
            let clock = Instant::now();
            let verdict = match read_transcript(&file) {
                Err(why) => Verdict::Unreadable(why),
                Ok(text) => match reloop_import::check_rules(&text, &file.display().to_string(), &inputs) {
                    Ok(report) => Verdict::Checked(Box::new(report)),
                    Err(
                        e @ (ImportError::Empty { .. }
                        | ImportError::NoConversation { .. }
                        | ImportError::NothingToReplay { .. }),
                    ) => Verdict::NoConversation(e.to_string()),
                    Err(e) => Verdict::Unreadable(format!("not a readable transcript: {e}")),
                },
            };
            Case { file, time: clock.elapsed(), verdict }
        })
        .collect();
    let disagree = cases.iter().filter(|c| c.disagrees()).count();
    let unreadable = cases.iter().filter(|c| c.unreadable()).count();
    let empty = cases.iter().filter(|c| c.empty()).count();
    let agree = cases.len() - disagree - unreadable - empty;
    if as_json {
        let transcripts: Vec<_> = cases
            .iter()
            .map(|c| match &c.verdict {
                Verdict::Checked(r) => {
                    let mut v = serde_json::to_value(r).unwrap_or_default();
                    v["status"] = json!(if r.disagreement.is_some() { "disagrees" } else { "agrees" });
                    v
                }
                Verdict::Unreadable(why) => {
                    json!({"file": c.file.display().to_string(), "status": "unreadable", "error": why})
                }
                Verdict::NoConversation(why) => {
                    json!({"file": c.file.display().to_string(), "status": "no_conversation", "why": why})
                }
            })
            .collect();
        let skipped: Vec<String> = skipped.iter().map(|p| p.display().to_string()).collect();
        let doc = json!({
            "transcripts": transcripts,
            "skipped": skipped,
            "agree": agree,
            "disagree": disagree,
            "unreadable": unreadable,
            "no_conversation": empty,
        });
        outln!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
    } else {
        for case in &cases {
            outln!("{}", line(case));
        }
        let others = match skipped.len() {
            0 => String::new(),
            n => format!(" ({n} other .jsonl files are not Claude Code transcripts; --json lists them)"),
        };
        outln!("{agree} agree, {disagree} disagree, {unreadable} unreadable, {empty} without a conversation{others}");
    }
    if let Some(junit) = junit {
        super::junit::write(junit, &junit_xml(&cases, started))?;
    }
    Ok(if unreadable > 0 || empty == cases.len() {
        // Nothing readable to check is bad input, as a folder with no transcript is.
        Exit::BadInput
    } else if disagree > 0 {
        Exit::Diverged
    } else {
        Exit::Success
    })
}

/// One transcript's line.
fn line(case: &Case) -> String {
    let name = case.file.display();
    match &case.verdict {
        Verdict::Unreadable(why) => format!("UNREADABLE {name}: {why}"),
        Verdict::NoConversation(_) => format!("empty      {name}  (no conversation: nothing to check)"),
        Verdict::Checked(r) => match &r.disagreement {
            None => format!(
                "agrees     {name}  ({}{}, {} decisions, {} tool inputs, {} inferred)",
                r.profile,
                if r.profile_exact == Some(false) { " (nearest)" } else { "" },
                r.decisions,
                r.inputs_checked,
                r.inferred.len()
            ),
            Some(_) => format!("DISAGREES  {name}: {}", headline(r)),
        },
    }
}

/// The disagreement in one line, then both sides and the rule.
fn headline(r: &RulesReport) -> String {
    let Some(d) = &r.disagreement else { return String::new() };
    let at = match d.line {
        Some(line) => format!("line {line}, step {}", d.seq),
        None => format!("step {}", d.seq),
    };
    format!(
        "{} at {at} ({}): Claude Code: {}; the engine: {}; rule: {}",
        d.code, r.profile, d.claude_code, d.engine, d.rule
    )
}

/// The transcripts under `path`: the file itself and its subagents' sidechains, or every
/// `*.jsonl` below the folder that holds Claude Code lines (others, such as a recorder's stdout,
/// are listed as skipped), sorted.
fn transcripts(path: &Path) -> Result<(Vec<PathBuf>, Vec<PathBuf>), CliError> {
    let mut found = Vec::new();
    let mut dirs = Vec::new();
    if path.is_dir() {
        dirs.push(path.to_path_buf());
    } else {
        // A session's subagents live beside it: `<session>/subagents/agent-*.jsonl`, or
        // `subagents/` itself beside it, as recordings keep them (as `import` finds them).
        let beside = path.parent().map(|d| d.join("subagents"));
        for subagents in [Some(path.with_extension("").join("subagents")), beside].into_iter().flatten() {
            if subagents.is_dir() {
                dirs.push(subagents);
            }
        }
    }
    while let Some(dir) = dirs.pop() {
        let entries =
            std::fs::read_dir(&dir).map_err(|e| CliError::Usage(format!("cannot read {}: {e}", dir.display())))?;
        for entry in entries.flatten() {
            let p = entry.path();
            // A symlinked folder is not walked (a link to a parent would loop for ever); a
            // `.jsonl` that is no regular file (a FIFO, a device) is not opened.
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => dirs.push(p),
                _ if p.extension().is_some_and(|e| e == "jsonl") && p.is_file() => found.push(p),
                _ => {}
            }
        }
    }
    found.sort();
    let (mut transcripts, others): (Vec<PathBuf>, Vec<PathBuf>) =
        found.into_iter().partition(|p| looks_like_transcript(p));
    if !path.is_dir() {
        transcripts.insert(0, path.to_path_buf());
    }
    Ok((transcripts, others))
}

/// A Claude Code transcript's lines carry `sessionId` (stream-json output says `session_id`),
/// and Claude Code's files without a conversation hold `summary` or `file-history-snapshot`
/// lines or nothing; a file that cannot be opened is taken as one, so that it is reported.
fn looks_like_transcript(path: &Path) -> bool {
    use std::io::{BufRead, Read};
    let Ok(file) = std::fs::File::open(path) else { return true };
    // Its first lines tell; a file of one endless line is read no further than this.
    let reader = std::io::BufReader::new(file.take(SNIFF_BYTES));
    let mut lines = 0;
    for line in reader.lines().take(64) {
        let Ok(line) = line else { return true };
        lines += 1;
        if let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(&line) {
            let own = map
                .get("type")
                .and_then(|t| t.as_str())
                .is_some_and(|t| matches!(t, "summary" | "file-history-snapshot"));
            if own || map.contains_key("sessionId") {
                return true;
            }
        }
    }
    lines == 0
}

/// The most of a transcript `check` and `check --rules` read: a Claude Code session of a long
/// day is tens of megabytes; a bigger file is reported unreadable rather than read into memory.
const MAX_TRANSCRIPT_BYTES: u64 = 512 * 1024 * 1024;

/// How much of a `.jsonl` is read to tell whether Claude Code wrote it.
const SNIFF_BYTES: u64 = 1024 * 1024;

/// A transcript's text, at most [`MAX_TRANSCRIPT_BYTES`]. A pipe named on the command line is
/// read as the person asked (as a dump is); the folder walk never opens one.
pub(super) fn read_transcript(file: &Path) -> Result<String, String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(file)
        .and_then(|f| f.take(MAX_TRANSCRIPT_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| format!("cannot read it: {e}"))?;
    if bytes.len() as u64 > MAX_TRANSCRIPT_BYTES {
        return Err(format!("cannot read it: more than the {MAX_TRANSCRIPT_BYTES} bytes a transcript may hold"));
    }
    String::from_utf8(bytes).map_err(|e| format!("cannot read it: {e}"))
}

/// The JUnit report: one case per transcript, a disagreement a `<failure>` whose type is its
/// code, an unreadable transcript an `<error>` (a broken input is no disagreement), a file with
/// no conversation `<skipped>`.
fn junit_xml(cases: &[Case], started: jiff::Timestamp) -> String {
    use super::junit::{Outcome, TestCase};
    let cases: Vec<TestCase> = cases
        .iter()
        .map(|case| TestCase {
            classname: "reloop.rules",
            name: case.file.display().to_string(),
            time: case.time,
            outcome: match &case.verdict {
                Verdict::Checked(r) => match &r.disagreement {
                    None => Outcome::Passed,
                    Some(d) => {
                        let line = d.line.map_or("?".to_string(), |l| l.to_string());
                        let body = [
                            format!("{} at line {line}, step {}", d.code, d.seq),
                            format!("  Claude Code: {}", d.claude_code),
                            format!("  the engine ({}): {}", r.profile, d.engine),
                            format!("  rule: {}", d.rule),
                            format!("to see it again: reloop check --rules {}", super::junit::shell_word(&case.file)),
                        ];
                        Outcome::Failure { message: headline(r), kind: d.code.to_string(), body: body.join("\n") }
                    }
                },
                Verdict::NoConversation(why) => Outcome::Skipped { message: why.clone() },
                Verdict::Unreadable(why) => {
                    Outcome::Error { message: why.clone(), body: format!("{}: {why}", case.file.display()) }
                }
            },
        })
        .collect();
    super::junit::document("reloop check --rules", started, &cases)
}
