//! The session page: a timeline a person clicks through (`view.html`, its CSS and JS inline),
//! with everything it shows embedded as JSON. `reloop view` writes it to a file; `reloop serve`
//! serves it, a window of a long session's steps at a time.
//!
//! The page is written as the journal is read, in three walks over the session's steps: its
//! facts, then its decisions (which read the facts) and the steps themselves, each written out
//! as it is found. Only the facts are held, so a long session's page costs the memory of those
//! and not of a JSON tree of every step (a 10,000-turn page peaked at 803 MiB when it was built
//! whole).

use std::io::{self, Write};

use reloop_core::{Event, Reason};
use reloop_driver::SessionJournal;
use reloop_inspect::explain::{why_step, WhyFilter};
use reloop_inspect::timeline::{Facts, FactsGatherer};
use reloop_journal::{JournalError, SessionHeader, StepRecord};
use serde::Serialize;
use serde_json::{json, Value};

const TEMPLATE: &str = include_str!("view.html");

/// Where the template takes the session's data.
const DATA: &str = "{{DATA}}";

/// What a response cost at its model's price, `None` for a model with no known price.
pub type Price<'a> = &'a dyn Fn(&str, &reloop_core::Usage) -> Option<f64>;

/// Which of a session's steps a page shows, and how it links to other sessions.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    /// The index (0-based) of the first step shown.
    pub start: usize,
    /// At most this many steps from `start`.
    pub limit: usize,
    /// Served by `reloop serve`: links go to its pages, not to files beside this one.
    pub served: bool,
}

impl Window {
    /// Every step, linking to files: `reloop view`'s page.
    pub const ALL: Window = Window { start: 0, limit: usize::MAX, served: false };
}

/// Why a page could not be written.
#[derive(Debug, thiserror::Error)]
pub enum PageError {
    /// Reading the journal failed.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// Writing the page failed (a full disk, a reader gone).
    #[error(transparent)]
    Io(#[from] io::Error),
}

impl From<serde_json::Error> for PageError {
    fn from(e: serde_json::Error) -> Self {
        PageError::Io(e.into())
    }
}

/// What [`write_page`] found while writing: the session's id, how many steps it has and the
/// models with no price (their cost is shown as unknown).
#[derive(Debug)]
pub struct Written {
    /// The session's full id.
    pub id: String,
    /// Its steps when the page was written.
    pub steps: usize,
    /// Models whose responses have no known price.
    pub unpriced_models: Vec<String>,
}

/// Writes the page of the session `id` to `out`: its facts gathered in a first walk, then the
/// window's decisions and steps as they are read.
pub fn write_page(
    out: &mut dyn Write,
    journal: &SessionJournal,
    id: &str,
    price: Price<'_>,
    window: Window,
) -> Result<Written, PageError> {
    let header = journal.header(id)?;
    // The facts, with every call's input and output: the page shows them.
    let mut gatherer = FactsGatherer::new(&header, price);
    let mut terminal = None;
    let steps = journal.visit_steps(id, &mut |s| {
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
    let session = session_json(journal, &header, &facts, terminal.as_deref(), steps)?;
    let start = window.start.min(steps);
    let shown = window.limit.min(steps - start);
    let range = Range { start, end: start + shown };
    let title: String = header.id.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-').collect();
    let template = TEMPLATE.replace("{{TITLE}}", &title);
    let (head, tail) = template.split_once(DATA).unwrap_or((&template, ""));
    out.write_all(head.as_bytes())?;
    let mut data = Escaped(&mut *out);
    // The keys in the order the page's data always had.
    data.write_all(b"{\"session\":")?;
    serde_json::to_writer(&mut data, &session)?;
    field(&mut data, "prompts", &facts.prompts)?;
    field(&mut data, "turns", &facts.turns)?;
    field(&mut data, "requests", &facts.requests)?;
    field(&mut data, "tools", &facts.tools)?;
    // A session still being written may have more steps by now: the page is of the first ones.
    let filter = WhyFilter { ignored: true, ..WhyFilter::default() };
    data.write_all(b",\"decisions\":")?;
    write_array(&mut data, journal, id, range, &mut |i, s, array| {
        why_step(i, &s, &facts, &filter).iter().try_for_each(|line| array.push(line))
    })?;
    data.write_all(b",\"steps\":")?;
    write_array(&mut data, journal, id, range, &mut |_, s, array| array.push(&StepRow::of(&s, &facts)))?;
    if window.served {
        field(&mut data, "served", &true)?;
    }
    if shown < steps {
        field(&mut data, "window", &json!({"start": start, "shown": shown, "total": steps}))?;
    }
    data.write_all(b"}")?;
    out.write_all(tail.as_bytes())?;
    out.flush()?;
    Ok(Written { id: header.id, steps, unpriced_models: facts.totals().unpriced_models.into_iter().collect() })
}

/// `2025-03-04 17:22` in this machine's time zone.
pub fn local_time(ms: u64) -> String {
    let Ok(at) = jiff::Timestamp::from_millisecond(ms as i64) else { return "?".to_string() };
    at.to_zoned(jiff::tz::TimeZone::system()).strftime("%Y-%m-%d %H:%M").to_string()
}

/// The page's `session` object: who and what the session is, its totals and how it ended.
fn session_json(
    journal: &SessionJournal,
    header: &SessionHeader,
    facts: &Facts,
    terminal: Option<&str>,
    steps: usize,
) -> Result<Value, JournalError> {
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
        "created": local_time(header.created_at_ms),
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
        // The run's own result's cost when it differs (it prices as the model asked).
        "reported_cost": facts.reported_cost_words(spend.cost_usd()),
        "steps": steps,
    }))
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

/// The steps a page shows, by index: `start..end`.
#[derive(Clone, Copy)]
struct Range {
    start: usize,
    end: usize,
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

/// Writes an array of what `each` pushes for each of the session's steps in `range`, read from
/// the journal one at a time.
fn write_array<W: Write>(
    out: &mut W,
    journal: &SessionJournal,
    id: &str,
    range: Range,
    each: &mut PushEach<'_, W>,
) -> Result<(), PageError> {
    out.write_all(b"[")?;
    let mut array = Array { out, empty: true };
    let (mut failed, mut i) = (None, 0);
    if range.end > range.start {
        journal.visit_steps(id, &mut |s| {
            // A failed write stops the walk; the failure is returned below. Every step is
            // handed to `each` in order from the window's start (the decisions count them).
            if i >= range.start {
                failed = each(i, s, &mut array).err();
            }
            i += 1;
            Ok(failed.is_none() && i < range.end)
        })?;
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
