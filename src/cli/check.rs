//! `reloop check DIR|FILE`: recorded sessions as regression tests. Every session found is
//! replayed through today's engine; one line per session, a summary, exit 3 on any divergence,
//! exit 2 when a file or a session cannot be read (a broken input is not a regression: CI
//! systems show it as an error, not a failure), and `--junit FILE` for CI systems.
//!
//! What it reads: session dumps (`reloop export --format journal`, `*.json`), Claude Code
//! transcripts (`*.jsonl`, imported in memory under the profile of their version), and SQLite
//! journals (`*.db`, every session in them). A folder is read one level deep, sorted by name.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use reloop_journal::{DumpHead, Journal};

use super::junit::{headline, Case, Verdict};
use super::CliError;
use crate::error::Exit;
use crate::term::outln;

#[derive(clap::Args, Debug)]
pub struct CheckArgs {
    /// A folder of recorded sessions, or one file (`.json` dump, `.jsonl` transcript, `.db` journal).
    pub path: PathBuf,
    /// Also write a JUnit XML report here, one test case per session (its folders are created).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Check Claude Code transcripts against their profile's rules instead of replaying: does
    /// the engine, fed what the model, the tools and the hooks answered, decide what Claude Code
    /// did? Exit 3 on the first disagreement of any transcript.
    #[arg(long)]
    pub rules: bool,
    /// With `--rules`: the verdicts as one JSON document.
    #[arg(long, requires = "rules")]
    pub json: bool,
}

pub fn run(args: CheckArgs) -> Result<Exit, CliError> {
    if args.rules {
        return super::check_rules::run(&args.path, args.junit.as_deref(), args.json);
    }
    let started = jiff::Timestamp::now();
    let files = files(&args.path)?;
    let mut cases = Vec::new();
    for file in &files {
        let clock = Instant::now();
        let mut found = check_file(file);
        // A journal's sessions are timed one by one; a file of one session takes the whole time.
        if let [one] = found.as_mut_slice() {
            one.time = clock.elapsed();
        }
        cases.extend(found);
    }
    if cases.is_empty() {
        return Err(CliError::Usage(format!(
            "{}: no recorded sessions (.json dumps, .jsonl transcripts or .db journals)",
            args.path.display()
        )));
    }
    for case in &cases {
        match &case.verdict {
            Verdict::Passed => outln!("ok        {}  ({} steps identical)", case.name, case.steps),
            Verdict::Diverged(d) => outln!("DIVERGED  {}: {}", case.name, headline(d)),
            Verdict::Unreadable(why) => outln!("ERROR     {}: {why}", case.name),
        }
    }
    let failed = cases.iter().filter(|c| matches!(c.verdict, Verdict::Diverged(_))).count();
    let errors = cases.iter().filter(|c| matches!(c.verdict, Verdict::Unreadable(_))).count();
    let passed = cases.len() - failed - errors;
    if errors == 0 {
        outln!("{passed} passed, {failed} failed");
    } else {
        outln!("{passed} passed, {failed} failed, {errors} unreadable");
    }
    if let Some(junit) = &args.junit {
        super::junit::write(junit, &super::junit::report(&cases, started))?;
    }
    Ok(match (errors, failed) {
        (0, 0) => Exit::Success,
        (0, _) => Exit::Diverged,
        _ => Exit::BadInput,
    })
}

/// The files to check: `path` itself, or the recorded sessions of a folder, sorted.
fn files(path: &Path) -> Result<Vec<PathBuf>, CliError> {
    if !path.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(|e| CliError::Usage(format!("cannot read {}: {e}", path.display())))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && matches!(extension(p), "json" | "jsonl" | "db"))
        .collect();
    files.sort();
    Ok(files)
}

fn extension(path: &Path) -> &str {
    path.extension().and_then(|e| e.to_str()).unwrap_or("")
}

/// The verdicts of one file; a file that cannot be read is one unreadable case, naming why.
fn check_file(file: &Path) -> Vec<Case> {
    let name = file.display().to_string();
    match extension(file) {
        "db" => journal_cases(file, &name),
        "jsonl" => vec![transcript_case(file, name)],
        _ => vec![dump_case(file, name)],
    }
}

fn case(name: String, file: &Path, session: Option<String>, report: reloop_inspect::ReplayReport) -> Case {
    let verdict = match report.divergence {
        None => Verdict::Passed,
        Some(d) => Verdict::Diverged(Box::new(d)),
    };
    Case { name, file: file.to_path_buf(), session, steps: report.steps, time: Duration::ZERO, verdict }
}

/// Every session of a journal, each replayed as `reloop replay` replays it (its rows read on a
/// second thread, a step at a time): a journal of any size is checked in the memory of one
/// session's state. A journal that cannot be opened is one unreadable case; a session that
/// cannot be read is its own.
fn journal_cases(file: &Path, name: &str) -> Vec<Case> {
    let opened = Journal::open_for_reading(file).and_then(|journal| Ok((journal.sessions()?, journal)));
    let (summaries, mut journal) = match opened {
        Ok(opened) => opened,
        Err(e) => return vec![Case::unreadable(name.to_string(), file, None, e.to_string())],
    };
    summaries
        .iter()
        .map(|summary| {
            let clock = Instant::now();
            let (name, id) = (format!("{name} {}", summary.id), Some(summary.id.clone()));
            let header = match journal.header(&summary.id) {
                Ok(header) => header,
                Err(e) => return Case::unreadable(name, file, id, e.to_string()),
            };
            let mut replayer = reloop_inspect::Replayer::new(&header, &[]);
            let mut checked = match reloop_inspect::replay_journal(&mut journal, &summary.id, &mut replayer) {
                Ok(_) => case(name, file, id, replayer.finish()),
                Err(e) => Case::unreadable(name, file, id, e.to_string()),
            };
            checked.time = clock.elapsed();
            checked
        })
        .collect()
}

/// A session dump, replayed a step at a time as it is read (twice: checked whole, then fed to
/// the replay), so a dump of any length is checked in the memory of its state; a pipe is copied
/// to a temporary file first (`Rereadable`).
fn dump_case(file: &Path, name: String) -> Case {
    let mut id = None;
    let replayed = (|| {
        let dump = super::reread::Rereadable::open(file).map_err(|e| format!("cannot read it: {e}"))?;
        let open = || dump.read().map_err(|e| format!("cannot read it: {e}"));
        let head = DumpHead::read(open()?).map_err(|e| format!("not a session dump: {e}"))?;
        id = Some(head.header.id.clone());
        let mut replayer = reloop_inspect::Replayer::new(&head.header, &[]);
        reloop_journal::visit_dump(open()?, &mut |step| Ok(replayer.feed(&step))).map_err(|e| e.to_string())?;
        Ok::<_, String>(replayer.finish())
    })();
    match replayed {
        Ok(report) => case(name, file, id, report),
        Err(why) => Case::unreadable(name, file, id, why),
    }
}

/// A Claude Code transcript, imported into a journal in memory and replayed from it as a
/// journal file is.
fn transcript_case(file: &Path, name: String) -> Case {
    let replayed = (|| {
        let text = super::check_rules::read_transcript(file)?;
        let options = reloop_import::ImportOptions::default();
        let imported = reloop_import::parse_claude_code(&text, &file.display().to_string(), &options)
            .map_err(|e| format!("not an importable transcript: {e}"))?;
        drop(text);
        let mut journal = Journal::in_memory().map_err(|e| e.to_string())?;
        let id = reloop_driver::new_session_id();
        let created = imported.at_ms.first().copied().unwrap_or(0);
        reloop_import::import_into(&mut journal, &imported, &id, created).map_err(|e| e.to_string())?;
        drop(imported);
        let header = journal.header(&id).map_err(|e| e.to_string())?;
        let mut replayer = reloop_inspect::Replayer::new(&header, &[]);
        reloop_inspect::replay_journal(&mut journal, &id, &mut replayer).map_err(|e| e.to_string())?;
        Ok::<_, String>(replayer.finish())
    })();
    match replayed {
        Ok(report) => case(name, file, None, report),
        Err(why) => Case::unreadable(name, file, None, why),
    }
}
