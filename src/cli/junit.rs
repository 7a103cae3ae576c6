//! The JUnit XML report `reloop check --junit FILE` writes, in the shape CI systems read
//! (Jenkins, GitLab, GitHub test reporters): one suite with its counts, start and duration, one
//! case per session with its time; a divergence is a `<failure>` whose body says what the
//! journal holds, what today's engine does and the command that shows it again; a file that
//! cannot be read is an `<error>`, since a broken input is no regression of the agent.

use std::path::{Path, PathBuf};
use std::time::Duration;

use reloop_inspect::Divergence;

/// One session's verdict.
pub(crate) struct Case {
    /// Where it came from: the file, and the session id inside a journal.
    pub name: String,
    /// The file it came from.
    pub file: PathBuf,
    /// The session's id inside a `.db` journal (a dump or a transcript holds one session).
    pub session: Option<String>,
    pub steps: usize,
    /// How long the check of this session took (a journal's sessions share its opening).
    pub time: Duration,
    pub verdict: Verdict,
}

/// What became of one session.
pub(crate) enum Verdict {
    /// Every step replayed identical.
    Passed,
    /// Today's engine did otherwise at a step: a regression (JUnit `<failure>`, exit 3).
    Diverged(Box<Divergence>),
    /// The file or the session could not be read: bad input (JUnit `<error>`, exit 2).
    Unreadable(String),
}

impl Case {
    pub(crate) fn unreadable(name: String, file: &Path, session: Option<String>, why: String) -> Case {
        Case {
            name,
            file: file.to_path_buf(),
            session,
            steps: 0,
            time: Duration::ZERO,
            verdict: Verdict::Unreadable(why),
        }
    }
}

/// A divergence in one line: its code, the step, what differs.
pub(crate) fn headline(d: &Divergence) -> String {
    format!("{} at step {} ({}): {}", d.code, d.seq, d.event_kind, d.summary())
}

/// One case of a JUnit report, as every command that writes one (`check`, `check --rules`)
/// shapes it.
pub(crate) struct TestCase {
    /// Which kind of check: `reloop.replay`, `reloop.rules`.
    pub classname: &'static str,
    pub name: String,
    pub time: Duration,
    pub outcome: Outcome,
}

/// How a case ended, in JUnit's words.
pub(crate) enum Outcome {
    Passed,
    /// A regression: `message` is its headline, `kind` its code, `body` what differs and how
    /// to see it again.
    Failure {
        message: String,
        kind: String,
        body: String,
    },
    /// The input could not be read.
    Error {
        message: String,
        body: String,
    },
    /// Nothing to check.
    Skipped {
        message: String,
    },
}

/// A JUnit document of one suite named `suite`, begun at `started`: the counts CI systems read
/// (`tests`, `failures`, `errors`, `skipped`, `time`), its timestamp, and a `time` per case.
pub(crate) fn document(suite: &str, started: jiff::Timestamp, cases: &[TestCase]) -> String {
    let count = |f: fn(&Outcome) -> bool| cases.iter().filter(|c| f(&c.outcome)).count();
    let failures = count(|o| matches!(o, Outcome::Failure { .. }));
    let errors = count(|o| matches!(o, Outcome::Error { .. }));
    let skipped = count(|o| matches!(o, Outcome::Skipped { .. }));
    let time: f64 = cases.iter().map(|c| c.time.as_secs_f64()).sum();
    // JUnit's timestamp is ISO 8601 without a zone; reloop writes it in UTC.
    let timestamp = started.strftime("%Y-%m-%dT%H:%M:%S");
    let counts = format!(
        "tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\" time=\"{time:.3}\"",
        cases.len()
    );
    let mut xml = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"{suite}\" {counts}>\n  <testsuite name=\"{suite}\" {counts} timestamp=\"{timestamp}\">\n"
    );
    for case in cases {
        let open = format!(
            "    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3}\"",
            case.classname,
            escape(&case.name),
            case.time.as_secs_f64()
        );
        let inner = match &case.outcome {
            Outcome::Passed => {
                xml.push_str(&format!("{open}/>\n"));
                continue;
            }
            Outcome::Failure { message, kind, body } => {
                format!("<failure message=\"{}\" type=\"{}\">{}</failure>", escape(message), escape(kind), escape(body))
            }
            Outcome::Error { message, body } => {
                format!("<error message=\"{}\" type=\"unreadable\">{}</error>", escape(message), escape(body))
            }
            Outcome::Skipped { message } => format!("<skipped message=\"{}\"/>", escape(message)),
        };
        xml.push_str(&format!("{open}>\n      {inner}\n    </testcase>\n"));
    }
    xml.push_str("  </testsuite>\n</testsuites>\n");
    xml
}

/// Writes a report to `path`, creating its folders (a CI job's `target/` may not exist yet).
pub(crate) fn write(path: &Path, xml: &str) -> Result<(), super::CliError> {
    if let Some(folder) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(folder)
            .map_err(|e| super::CliError::Io(format!("cannot create {}: {e}", folder.display())))?;
    }
    std::fs::write(path, xml).map_err(|e| super::CliError::Io(format!("cannot write {}: {e}", path.display())))
}

/// The report of one `reloop check`, begun at `started`.
pub(crate) fn report(cases: &[Case], started: jiff::Timestamp) -> String {
    let cases: Vec<TestCase> = cases
        .iter()
        .map(|case| TestCase {
            classname: "reloop.replay",
            name: case.name.clone(),
            time: case.time,
            outcome: match &case.verdict {
                Verdict::Passed => Outcome::Passed,
                Verdict::Diverged(d) => {
                    let mut body = vec![headline(d)];
                    body.extend(d.diff.iter().map(|line| format!("  {line}")));
                    if d.diff.is_empty() {
                        body.push(format!("  - the journal: {}", side(&d.expected)));
                        body.push(format!("  + today's engine: {}", side(&d.actual)));
                    }
                    body.push(format!("to see it again: {}", reproduce(case)));
                    Outcome::Failure { message: headline(d), kind: d.code.to_string(), body: body.join("\n") }
                }
                Verdict::Unreadable(why) => {
                    Outcome::Error { message: why.clone(), body: format!("{}: {why}", case.file.display()) }
                }
            },
        })
        .collect();
    document("reloop check", started, &cases)
}

/// One side of a divergence whose diff is empty: the step's view as JSON.
fn side(view: &reloop_inspect::replay::StepView) -> String {
    serde_json::to_string(view).unwrap_or_default()
}

/// The command that replays the diverging session step by step, from the folder `check` ran in:
/// a journal's session by its id, a dump or a transcript by its file.
pub(crate) fn reproduce(case: &Case) -> String {
    let file = shell_word(&case.file);
    match (&case.session, case.file.extension().and_then(|e| e.to_str())) {
        (Some(id), Some("db")) => format!("reloop replay {id} --journal {file}"),
        _ => format!("reloop replay {file}"),
    }
}

/// A path as one shell word: quoted when it holds anything a shell would read.
pub(crate) fn shell_word(path: &Path) -> String {
    let text = path.display().to_string();
    if !text.is_empty() && text.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+=:@,".contains(c)) {
        text
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// XML text: markup characters escaped, control characters dropped (XML 1.0 has none).
pub(crate) fn escape(text: &str) -> String {
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

    fn case(name: &str, file: &str, session: Option<&str>, verdict: Verdict) -> Case {
        let file = PathBuf::from(file);
        Case {
            name: name.into(),
            file,
            session: session.map(String::from),
            steps: 3,
            time: Duration::from_millis(1500),
            verdict,
        }
    }

    #[test]
    fn counts_times_and_escapes_and_an_unreadable_file_is_an_error_not_a_failure() {
        let cases = [
            case("a.json", "a.json", Some("s1"), Verdict::Passed),
            case("b<&>\"x\u{1}", "b.json", None, Verdict::Unreadable("not a session dump: a\nb".into())),
        ];
        let at = jiff::Timestamp::from_second(1_700_000_000).unwrap();
        let xml = report(&cases, at);
        assert!(
            xml.contains("tests=\"2\" failures=\"0\" errors=\"1\" skipped=\"0\" time=\"3.000\" timestamp=\"2023-11-14T22:13:20\""),
            "{xml}"
        );
        assert!(xml.contains("name=\"b&lt;&amp;&gt;&quot;x\" time=\"1.500\""), "{xml}");
        assert!(xml.contains("<error message=\"not a session dump: a&#10;b\" type=\"unreadable\">b.json: "), "{xml}");
        assert!(!xml.contains("<failure"), "{xml}");
    }

    #[test]
    fn the_command_that_shows_a_divergence_again_names_the_file_and_session() {
        let db = case("j.db s1", "rec/j.db", Some("s1"), Verdict::Passed);
        assert_eq!(reproduce(&db), "reloop replay s1 --journal rec/j.db");
        let dump = case("it's.json", "rec/it's.json", Some("s2"), Verdict::Passed);
        assert_eq!(reproduce(&dump), "reloop replay 'rec/it'\\''s.json'");
    }
}
