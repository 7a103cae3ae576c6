//! `reloop check DIR|FILE`: recorded sessions as regression tests. Every session found is
//! replayed through today's engine; one line per session, a summary, exit 3 on any divergence,
//! and `--junit FILE` for CI systems.
//!
//! What it reads: session dumps (`reloop export --format journal`, `*.json`), Claude Code
//! transcripts (`*.jsonl`, imported in memory under the profile of their version), and SQLite
//! journals (`*.db`, every session in them). A folder is read one level deep, sorted by name.

use std::path::{Path, PathBuf};

use reloop_journal::{DumpHead, Journal};

use super::CliError;
use crate::error::Exit;
use crate::term::outln;

#[derive(clap::Args, Debug)]
pub struct CheckArgs {
    /// A folder of recorded sessions, or one file (`.json` dump, `.jsonl` transcript, `.db` journal).
    pub path: PathBuf,
    /// Also write a JUnit XML report here, one test case per session.
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

/// One session's verdict.
struct Case {
    /// Where it came from: the file, and the session id inside a journal.
    name: String,
    steps: usize,
    /// The divergence or the error that stopped the check, if any.
    failure: Option<String>,
}

pub fn run(args: CheckArgs) -> Result<Exit, CliError> {
    if args.rules {
        return super::check_rules::run(&args.path, args.junit.as_deref(), args.json);
    }
    let files = files(&args.path)?;
    let mut cases = Vec::new();
    for file in &files {
        cases.extend(check_file(file));
    }
    if cases.is_empty() {
        return Err(CliError::Usage(format!(
            "{}: no recorded sessions (.json dumps, .jsonl transcripts or .db journals)",
            args.path.display()
        )));
    }
    for case in &cases {
        match &case.failure {
            None => outln!("ok        {}  ({} steps identical)", case.name, case.steps),
            Some(why) => outln!("DIVERGED  {}: {why}", case.name),
        }
    }
    let failed = cases.iter().filter(|c| c.failure.is_some()).count();
    outln!("{} passed, {failed} failed", cases.len() - failed);
    if let Some(junit) = &args.junit {
        std::fs::write(junit, junit_xml(&cases))
            .map_err(|e| CliError::Io(format!("cannot write {}: {e}", junit.display())))?;
    }
    Ok(if failed == 0 { Exit::Success } else { Exit::Diverged })
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

/// The verdicts of one file; a file that cannot be read is one failed case, naming why.
fn check_file(file: &Path) -> Vec<Case> {
    let name = file.display().to_string();
    match extension(file) {
        "db" => journal_cases(file, &name),
        "jsonl" => vec![transcript_case(file, name)],
        _ => vec![dump_case(file, name)],
    }
}

fn case(name: String, report: reloop_inspect::ReplayReport) -> Case {
    let failure =
        report.divergence.map(|d| format!("{} at step {} ({}): {}", d.code, d.seq, d.event_kind, d.summary()));
    Case { name, steps: report.steps, failure }
}

/// Every session of a journal, each replayed as `reloop replay` replays it (its rows read on a
/// second thread, a step at a time): a journal of any size is checked in the memory of one
/// session's state. A journal that cannot be opened is one failed case; a session that cannot
/// be read is its own.
fn journal_cases(file: &Path, name: &str) -> Vec<Case> {
    let failed = |name: String, why: String| Case { name, steps: 0, failure: Some(why) };
    let opened = Journal::open_for_reading(file).and_then(|journal| Ok((journal.sessions()?, journal)));
    let (summaries, mut journal) = match opened {
        Ok(opened) => opened,
        Err(e) => return vec![failed(name.to_string(), e.to_string())],
    };
    summaries
        .iter()
        .map(|summary| {
            let name = format!("{name} {}", summary.id);
            let header = match journal.header(&summary.id) {
                Ok(header) => header,
                Err(e) => return failed(name, e.to_string()),
            };
            let mut replayer = reloop_inspect::Replayer::new(&header, &[]);
            match reloop_inspect::replay_journal(&mut journal, &summary.id, &mut replayer) {
                Ok(_) => case(name, replayer.finish()),
                Err(e) => failed(name, e.to_string()),
            }
        })
        .collect()
}

/// A session dump, replayed a step at a time as it is read (twice: checked whole, then fed to
/// the replay), so a dump of any length is checked in the memory of its state; a pipe is copied
/// to a temporary file first (`Rereadable`).
fn dump_case(file: &Path, name: String) -> Case {
    let replayed = (|| {
        let dump = super::reread::Rereadable::open(file).map_err(|e| format!("cannot read it: {e}"))?;
        let open = || dump.read().map_err(|e| format!("cannot read it: {e}"));
        let head = DumpHead::read(open()?).map_err(|e| format!("not a session dump: {e}"))?;
        let mut replayer = reloop_inspect::Replayer::new(&head.header, &[]);
        reloop_journal::visit_dump(open()?, &mut |step| Ok(replayer.feed(&step))).map_err(|e| e.to_string())?;
        Ok::<_, String>(replayer.finish())
    })();
    match replayed {
        Ok(report) => case(name, report),
        Err(why) => Case { name, steps: 0, failure: Some(why) },
    }
}

/// A Claude Code transcript, imported into a journal in memory and replayed from it as a
/// journal file is.
fn transcript_case(file: &Path, name: String) -> Case {
    let replayed = (|| {
        let text = std::fs::read_to_string(file).map_err(|e| format!("cannot read it: {e}"))?;
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
        Ok(report) => case(name, report),
        Err(why) => Case { name, steps: 0, failure: Some(why) },
    }
}

/// A JUnit report: one suite, one case per session, a failure element for each divergence.
fn junit_xml(cases: &[Case]) -> String {
    let failed = cases.iter().filter(|c| c.failure.is_some()).count();
    let mut xml = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite name=\"reloop check\" tests=\"{}\" failures=\"{failed}\">\n",
        cases.len()
    );
    for case in cases {
        let name = escape(&case.name);
        match &case.failure {
            None => xml.push_str(&format!("    <testcase classname=\"reloop.replay\" name=\"{name}\"/>\n")),
            Some(why) => xml.push_str(&format!(
                "    <testcase classname=\"reloop.replay\" name=\"{name}\">\n      <failure message=\"{}\"/>\n    </testcase>\n",
                escape(why)
            )),
        }
    }
    xml.push_str("  </testsuite>\n</testsuites>\n");
    xml
}

/// XML attribute text: markup characters escaped, control characters dropped (XML 1.0 has none).
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\n' => out.push_str("&#10;"),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn junit_text_is_escaped_and_counts_failures() {
        let cases = [
            Case { name: "a.json".into(), steps: 3, failure: None },
            Case { name: "b<&>\"x\u{1}".into(), steps: 1, failure: Some("RELOOP-D001 at step 2: a\nb".into()) },
        ];
        let xml = junit_xml(&cases);
        assert!(xml.contains("tests=\"2\" failures=\"1\""));
        assert!(xml.contains("name=\"b&lt;&amp;&gt;&quot;x\""));
        assert!(xml.contains("message=\"RELOOP-D001 at step 2: a&#10;b\""));
    }
}
