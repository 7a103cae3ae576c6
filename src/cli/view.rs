//! `reloop view SESSION`: the session as one self-contained HTML page, a timeline a person
//! clicks through. Everything the page shows is embedded as JSON; the CSS and JS are inline
//! (`view.html`), so the file opens anywhere with no network.
//!
//! The page is written as the journal is read, in three walks over the session's steps: its
//! facts, then its decisions (which read the facts) and the steps themselves, each written out
//! as it is found. Only the facts are held, so a long session's page costs the memory of those
//! and not of a JSON tree of every step (a 10,000-turn page peaked at 803 MiB when it was built
//! whole).

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use reloop_core::{Event, Reason};
use reloop_inspect::explain::{why_step, WhyFilter};
use reloop_inspect::timeline::{Facts, FactsGatherer};
use reloop_journal::{JournalError, SessionHeader, StepRecord};
use serde::Serialize;
use serde_json::{json, Value};

use super::{current_dir, CliError};
use crate::error::Exit;
use crate::options::{JournalArg, SessionArg};
use crate::term::outln;
use reloop_driver::SessionJournal;

const TEMPLATE: &str = include_str!("view.html");

/// Where the template takes the session's data.
const DATA: &str = "{{DATA}}";

#[derive(clap::Args, Debug)]
pub struct ViewArgs {
    #[command(flatten)]
    pub session: SessionArg,
    /// Where to write the page [default: reloop-ID.html, ID the start of the session id].
    #[arg(short, long, value_name = "FILE.html")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub journal: JournalArg,
}

pub fn run(args: ViewArgs) -> Result<Exit, CliError> {
    let (selector, output) = (args.session.session.as_str(), args.output);
    let journal = args.journal.open(&current_dir()?, crate::launch::journal::Open::Reading)?;
    let id = journal.resolve(selector)?;
    let header = journal.header(&id)?;
    let price = super::reading::price(&header);

    // The facts, with every call's input and output: the page shows them.
    let mut gatherer = FactsGatherer::new(&header, &price);
    let mut terminal = None;
    let steps = journal.visit_steps(&id, &mut |s| {
        gatherer.step(&s);
        if let Some(reason) = s.reason.as_ref().filter(|r| r.is_terminal()) {
            // A rerun's divergence, journaled as a failed request, is shown as the rerun's.
            let diverged = match reason {
                Reason::Terminal(stop) => reloop_inspect::rerun::diverged_words(stop, s.seq),
                _ => None,
            };
            terminal = Some(diverged.unwrap_or_else(|| reason.name().to_string()));
        }
        Ok(true)
    })?;
    let facts = gatherer.finish();
    super::reading::warn_unpriced(&facts.totals().unpriced_models);

    let session = session_json(&journal, &header, &facts, terminal.as_deref(), steps)?;
    let path =
        output.unwrap_or_else(|| PathBuf::from(format!("reloop-{}.html", header.id.get(..8).unwrap_or(&header.id))));
    let parts = Parts { session: &session, facts: &facts };
    if let Err(e) = write_page(&path, &header.id, &parts, &journal, steps) {
        // `-o /dev/stdout` into a reader that has gone: a normal end, as for any output.
        if matches!(&e, PageError::Io(e) if e.kind() == io::ErrorKind::BrokenPipe) {
            return Ok(Exit::Success);
        }
        // A page cut short would open as a broken timeline: better none.
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_file()) {
            let _ = std::fs::remove_file(&path);
        }
        return Err(match e {
            PageError::Journal(e) => e.into(),
            PageError::Io(e) => CliError::Io(format!("cannot write {}: {e}", path.display())),
        });
    }
    outln!("wrote {} ({} steps); open it in a browser", path.display(), steps);
    Ok(Exit::Success)
}

/// The page's `session` object: who and what the session is, its totals and how it ended.
fn session_json(
    journal: &SessionJournal,
    header: &SessionHeader,
    facts: &Facts,
    terminal: Option<&str>,
    steps: usize,
) -> Result<Value, CliError> {
    let config = &header.run_config;
    let spend = facts.totals();
    let model = facts.requests.iter().rev().map(|r| r.model.as_str()).find(|m| !m.is_empty());
    Ok(json!({
        "id": header.id,
        "source": reloop_inspect::timeline::source(header),
        "file": config.get("file"),
        "provider": config.get("provider"),
        "model": model.unwrap_or(&header.core_config.model),
        // The model asked for and the ones that answered, apart: `model` alone is the latter.
        "requested_models": facts.models().requested, "answered_models": facts.models().answered,
        "models": facts.models().words(),
        "cwd": config.get("cwd"),
        "created": super::reading::local_time(header.created_at_ms),
        "engine_version": header.engine_version,
        // Whose rules decided the steps (for an import: its transcript's version's, or the nearest).
        "rules": reloop_inspect::timeline::rules_words(header),
        "parent": header.parent.as_ref().map(|(p, seq)| json!({"id": p, "seq": seq})),
        // A subagent's call, and the session's own subagents: the tree around the page.
        "agent": config.get("agent"),
        "subagents": journal.subagents_of(&header.id)?.into_iter()
            .map(|s| json!({"id": s.id, "tool_use_id": s.tool_use_id, "agent_type": s.agent_type}))
            .collect::<Vec<_>>(),
        "terminal": terminal,
        "input_tokens": spend.input_tokens, "cache_read_input_tokens": spend.cache_read_input_tokens,
        "cache_creation_input_tokens": spend.cache_creation_input_tokens, "output_tokens": spend.output_tokens,
        "cache_hit_rate": spend.cache_hit_rate(), "cost_usd": spend.cost_usd(), "unpriced_models": spend.unpriced_models,
        "steps": steps,
    }))
}

/// What the page holds before its decisions and steps, which are written as they are read.
struct Parts<'a> {
    session: &'a Value,
    facts: &'a Facts,
}

/// One step as the page shows it.
#[derive(Serialize)]
struct StepRow<'a> {
    seq: u64,
    at_ms: u64,
    kind: &'static str,
    event: &'a Event,
    from: &'a str,
    to: &'a str,
    turn_before: u32,
    turn_after: u32,
    effects: &'a Value,
    reason: &'a Option<Reason>,
    ignored: &'a Option<reloop_core::Ignored>,
    reason_name: Option<&'static str>,
    terminal: Option<bool>,
    explanation: Option<String>,
    inferred: Option<&'a String>,
}

impl<'a> StepRow<'a> {
    fn of(s: &'a StepRecord, facts: &'a Facts) -> Self {
        StepRow {
            seq: s.seq,
            at_ms: s.at_ms,
            kind: s.event.kind(),
            event: &s.event,
            from: &s.from_phase,
            to: &s.to_phase,
            turn_before: s.turn_before,
            turn_after: s.turn_after,
            effects: &s.effects,
            reason: &s.reason,
            ignored: &s.ignored,
            reason_name: s.reason.as_ref().map(Reason::name),
            terminal: s.reason.as_ref().map(Reason::is_terminal),
            explanation: s.reason.as_ref().map(Reason::explain),
            inferred: facts.inferred.get(&s.seq),
        }
    }
}

enum PageError {
    Journal(JournalError),
    Io(io::Error),
}

impl From<io::Error> for PageError {
    fn from(e: io::Error) -> Self {
        PageError::Io(e)
    }
}

impl From<serde_json::Error> for PageError {
    fn from(e: serde_json::Error) -> Self {
        PageError::Io(e.into())
    }
}

/// Writes the page to `path`: the template with the session's data in a JSON script element,
/// the steps read from the journal as they are written.
fn write_page(
    path: &Path,
    id: &str,
    parts: &Parts<'_>,
    journal: &SessionJournal,
    steps: usize,
) -> Result<(), PageError> {
    let title: String = id.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-').collect();
    let template = TEMPLATE.replace("{{TITLE}}", &title);
    let (head, tail) = template.split_once(DATA).unwrap_or((&template, ""));
    let mut out = BufWriter::new(File::create(path)?);
    out.write_all(head.as_bytes())?;
    let mut data = Escaped(&mut out);
    // The keys in the order the page's data always had.
    data.write_all(b"{\"session\":")?;
    serde_json::to_writer(&mut data, parts.session)?;
    field(&mut data, "prompts", &parts.facts.prompts)?;
    field(&mut data, "turns", &parts.facts.turns)?;
    field(&mut data, "requests", &parts.facts.requests)?;
    field(&mut data, "tools", &parts.facts.tools)?;
    // A session still being written may have more steps by now: the page is of the first ones.
    let filter = WhyFilter { ignored: true, ..WhyFilter::default() };
    data.write_all(b",\"decisions\":")?;
    write_array(&mut data, journal, id, steps, &mut |i, s, array| {
        why_step(i, &s, parts.facts, &filter).iter().try_for_each(|line| array.push(line))
    })?;
    data.write_all(b",\"steps\":")?;
    write_array(&mut data, journal, id, steps, &mut |_, s, array| array.push(&StepRow::of(&s, parts.facts)))?;
    data.write_all(b"}")?;
    out.write_all(tail.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// A JSON array being written, an element at a time.
struct Array<'w, W: Write> {
    out: &'w mut W,
    empty: bool,
}

impl<W: Write> Array<'_, W> {
    fn push<T: Serialize>(&mut self, element: &T) -> Result<(), PageError> {
        if !self.empty {
            self.out.write_all(b",")?;
        }
        self.empty = false;
        serde_json::to_writer(&mut *self.out, element)?;
        Ok(())
    }
}

/// What [`write_array`] calls for each step, with its index, to push that step's elements.
type PushEach<'e, W> = dyn FnMut(usize, StepRecord, &mut Array<'_, W>) -> Result<(), PageError> + 'e;

/// Writes an array of what `each` pushes for each of the session's first `steps` steps, read
/// from the journal one at a time.
fn write_array<W: Write>(
    out: &mut W,
    journal: &SessionJournal,
    id: &str,
    steps: usize,
    each: &mut PushEach<'_, W>,
) -> Result<(), PageError> {
    out.write_all(b"[")?;
    let mut array = Array { out, empty: true };
    let (mut failed, mut i) = (None, 0);
    if steps > 0 {
        journal
            .visit_steps(id, &mut |s| {
                // A failed write stops the walk; the failure is returned below.
                failed = each(i, s, &mut array).err();
                i += 1;
                Ok(failed.is_none() && i < steps)
            })
            .map_err(PageError::Journal)?;
    }
    if let Some(e) = failed {
        return Err(e);
    }
    array.out.write_all(b"]")?;
    Ok(())
}

/// Writes `,"name":value`: a field after the first.
fn field<T: Serialize + ?Sized>(data: &mut impl Write, name: &str, value: &T) -> Result<(), PageError> {
    write!(data, ",\"{name}\":")?;
    serde_json::to_writer(data, value)?;
    Ok(())
}

/// Escapes `<`, `>` and `&` as JSON's `\u` escapes as the JSON passes, so no text of the session
/// can close the script element or open another. JSON's own syntax holds none of them, so each
/// one is inside a string, where the escape means the same character.
struct Escaped<W: Write>(W);

impl<W: Write> Write for Escaped<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut start = 0;
        for at in memchr::memchr3_iter(b'<', b'>', b'&', buf) {
            self.0.write_all(&buf[start..at])?;
            self.0.write_all(match buf[at] {
                b'<' => b"\\u003c",
                b'>' => b"\\u003e",
                _ => b"\\u0026",
            })?;
            start = at + 1;
        }
        self.0.write_all(&buf[start..])?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}
