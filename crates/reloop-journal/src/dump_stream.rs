//! A session dump read as a stream: `reloop import journal` of a dump of any length holds one
//! step at a time, where reading it whole held its text, its JSON tree and its records at once
//! (2.2 GB for a 100,000-turn session's 307 MB dump).
//!
//! The dump is read twice. The first read checks all of it as [`SessionDump::from_json`] would
//! (its format, its header, every step decoded, nothing after its end) and keeps only the
//! header; the second writes the steps as it parses them, in one transaction. So a bad dump is
//! refused before the journal is touched, and a dump that changes between the reads writes
//! nothing.

use std::fmt;
use std::io::Read;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::backend::{JournalBackend, Writer};
use crate::dump::{DumpHeader, DumpStep, DUMP_FORMAT};
use crate::error::JournalError;
use crate::record::{SessionHeader, StepRecord};

/// What a checked dump holds before its steps.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct DumpHead {
    /// The session the dump holds, decoded.
    pub header: SessionHeader,
    /// How many steps it holds.
    pub steps: usize,
}

impl DumpHead {
    /// Reads a whole dump from `reader` and checks it, a step at a time.
    pub fn read(reader: impl Read) -> Result<DumpHead, JournalError> {
        let mut pass = Pass { visit: None, failure: None, stopped: false };
        let parsed = parse(reader, &mut pass);
        let parsed = pass.outcome(parsed)?.ok_or_else(|| JournalError::Dump("the check stopped".into()))?;
        let header = parsed.header.ok_or_else(|| JournalError::Dump("missing field `header`".into()))?;
        Ok(DumpHead { header: header.record()?, steps: parsed.steps })
    }
}

/// Journals the dump `reader` holds verbatim, a step at a time, in one transaction, without
/// becoming its writer: `reader` reads the dump `head` was read from, again. Returns the
/// session's id. A journal that already holds the id is left unchanged.
pub fn load_dump(journal: &mut dyn JournalBackend, head: &DumpHead, reader: impl Read) -> Result<String, JournalError> {
    let mut reader = Some(reader);
    journal.create_session_from(&head.header, Writer::Leave, &mut |sink| {
        let reader = reader.take().ok_or_else(|| JournalError::Dump("the dump was read already".into()))?;
        let steps = visit_dump(reader, &mut |step| sink(&step).map(|()| true))?;
        if steps != head.steps {
            return Err(JournalError::Dump(format!(
                "the dump changed while it was read ({} steps, then {steps})",
                head.steps
            )));
        }
        Ok(())
    })?;
    Ok(head.header.id.clone())
}

/// Hands each step of the dump `reader` holds to `visit`, in order, decoded one at a time (its
/// header is checked for presence, not read: [`DumpHead::read`] reads it). `visit` returns
/// `false` to stop, or an error that stops the reading and is returned; a dump found bad after
/// some steps were handed over is an error too. Returns how many steps were handed over.
pub fn visit_dump(
    reader: impl Read,
    visit: &mut dyn FnMut(StepRecord) -> Result<bool, JournalError>,
) -> Result<usize, JournalError> {
    let mut handed = 0;
    let mut counted = |step| {
        handed += 1;
        visit(step)
    };
    let mut pass = Pass { visit: Some(&mut counted), failure: None, stopped: false };
    let parsed = parse(reader, &mut pass);
    pass.outcome(parsed)?;
    Ok(handed)
}

/// Where a read's steps go: nowhere (the check) or to a visitor, which says whether to go on;
/// and the error that stopped it, which serde can only carry as text.
struct Pass<'s> {
    visit: Option<&'s mut dyn FnMut(StepRecord) -> Result<bool, JournalError>>,
    failure: Option<JournalError>,
    /// The visitor asked to stop.
    stopped: bool,
}

impl Pass<'_> {
    /// What a read came to: the visitor's error first, then serde's; a stop asked for is none.
    fn outcome(self, parsed: Result<Parsed, serde_json::Error>) -> Result<Option<Parsed>, JournalError> {
        match (self.failure, self.stopped) {
            (Some(e), _) => Err(e),
            (None, true) => Ok(None),
            (None, false) => parsed.map(Some).map_err(|e| JournalError::Dump(e.to_string())),
        }
    }
}

/// What one read found.
struct Parsed {
    /// The header, on the check (the write skips it).
    header: Option<DumpHeader>,
    steps: usize,
}

fn parse(reader: impl Read, pass: &mut Pass<'_>) -> Result<Parsed, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_reader(std::io::BufReader::with_capacity(64 << 10, reader));
    let parsed = de::Deserializer::deserialize_map(&mut de, DumpVisitor { pass })?;
    // Nothing but whitespace after the dump, as reading it whole requires.
    de.end()?;
    Ok(parsed)
}

struct DumpVisitor<'p, 's> {
    pass: &'p mut Pass<'s>,
}

impl<'de> Visitor<'de> for DumpVisitor<'_, '_> {
    type Value = Parsed;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a session dump: an object with a format, a header and steps")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Parsed, A::Error> {
        let checking = self.pass.visit.is_none();
        let (mut format, mut header, mut steps) = (false, None, None);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "format" if format => return Err(de::Error::duplicate_field("format")),
                "format" => {
                    let found: String = map.next_value()?;
                    if found != DUMP_FORMAT {
                        return Err(de::Error::custom(format!("format {found:?}, expected {DUMP_FORMAT:?}")));
                    }
                    format = true;
                }
                "header" if header.is_some() => return Err(de::Error::duplicate_field("header")),
                "header" if checking => header = Some(Some(map.next_value::<DumpHeader>()?)),
                "header" => {
                    map.next_value::<IgnoredAny>()?;
                    header = Some(None);
                }
                "steps" if steps.is_some() => return Err(de::Error::duplicate_field("steps")),
                "steps" => steps = Some(map.next_value_seed(StepsSeed { pass: &mut *self.pass })?),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if !format {
            return Err(de::Error::missing_field("format"));
        }
        let header = header.ok_or_else(|| de::Error::missing_field("header"))?;
        let steps = steps.ok_or_else(|| de::Error::missing_field("steps"))?;
        Ok(Parsed { header, steps })
    }
}

/// The `steps` array, each step decoded and handed on as it is parsed.
struct StepsSeed<'p, 's> {
    pass: &'p mut Pass<'s>,
}

impl<'de> DeserializeSeed<'de> for StepsSeed<'_, '_> {
    type Value = usize;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<usize, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for StepsSeed<'_, '_> {
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of steps")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
        let mut steps = 0;
        while let Some(step) = seq.next_element::<DumpStep>()? {
            let handed = step.record().and_then(|record| match self.pass.visit.as_mut() {
                Some(visit) => visit(record),
                None => Ok(true),
            });
            match handed {
                Ok(true) => {}
                Ok(false) => {
                    self.pass.stopped = true;
                    return Err(de::Error::custom("stopped"));
                }
                Err(e) => {
                    let said = e.to_string();
                    self.pass.failure = Some(e);
                    return Err(de::Error::custom(said));
                }
            }
            steps += 1;
        }
        Ok(steps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Journal, SessionDump};

    fn corpus() -> Vec<String> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/journals");
        let texts: Vec<String> = std::fs::read_dir(dir)
            .expect("corpus")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .map(|p| std::fs::read_to_string(p).expect("read"))
            .collect();
        assert!(texts.len() >= 10, "the corpus holds sessions");
        texts
    }

    fn journal() -> (tempfile::TempDir, Journal) {
        let tmp = tempfile::tempdir().expect("tempdir");
        let journal = Journal::create_or_open(&tmp.path().join("j.db")).expect("journal");
        (tmp, journal)
    }

    #[test]
    fn a_dump_read_a_step_at_a_time_loads_as_the_dump_read_whole() {
        for text in corpus() {
            let whole = SessionDump::from_json(&text).expect("dump");
            let head = DumpHead::read(text.as_bytes()).expect("head");
            assert_eq!(head.steps, whole.steps.len());
            assert_eq!(head.header, whole.header.record().expect("header"));
            let (_tmp, mut streamed) = journal();
            let id = load_dump(&mut streamed, &head, text.as_bytes()).expect("load");
            let (_tmp, mut loaded) = journal();
            loaded.load_session(&whole).expect("load whole");
            assert_eq!(streamed.dump_session(&id).expect("dump"), loaded.dump_session(&id).expect("dump"), "{id}");
            // Loaded and left: any journal may take it up.
            assert_eq!(streamed.writer(&id).expect("writer"), None);
        }
    }

    #[test]
    fn a_visit_stops_when_asked_and_a_visitors_error_is_returned() {
        let text = corpus().remove(0);
        let whole = SessionDump::from_json(&text).expect("dump").records().expect("records").1;
        let mut seen = Vec::new();
        let handed = visit_dump(text.as_bytes(), &mut |step| {
            seen.push(step);
            Ok(seen.len() < 2)
        });
        assert_eq!(handed.expect("stopped"), 2);
        assert_eq!(seen, whole[..2]);
        let failed = visit_dump(text.as_bytes(), &mut |_| Err(JournalError::Empty));
        assert!(matches!(failed, Err(JournalError::Empty)), "{failed:?}");
        let all = visit_dump(text.as_bytes(), &mut |_| Ok(true)).expect("all");
        assert_eq!(all, whole.len());
    }

    #[test]
    fn a_bad_dump_is_refused_by_the_check_and_writes_nothing() {
        let text = corpus().remove(0);
        let dump: serde_json::Value = serde_json::from_str(&text).expect("json");
        let edited = |edit: &dyn Fn(&mut serde_json::Map<String, serde_json::Value>)| {
            let mut dump = dump.clone();
            edit(dump.as_object_mut().expect("object"));
            serde_json::to_string(&dump).expect("text")
        };
        let cases = [
            ("format", edited(&|d| drop(d.insert("format".into(), "reloop-session/9".into())))),
            ("header", edited(&|d| drop(d.remove("header")))),
            ("steps", edited(&|d| drop(d.remove("steps")))),
            ("step 2 event", edited(&|d| d["steps"][1]["event"] = serde_json::json!({"kind": "nonsense"}))),
            ("digest", edited(&|d| d["steps"][0]["digest"] = "not hex".into())),
            ("trailing", format!("{text} {{}}")),
            ("EOF", text[..text.len() / 2].to_string()),
            ("not an object", "[1, 2]".to_string()),
        ];
        for (what, bad) in cases {
            let refused = DumpHead::read(bad.as_bytes());
            assert!(matches!(&refused, Err(JournalError::Dump(_))), "{what}: {refused:?}");
            let said = refused.expect_err("refused").to_string();
            assert!(said.contains(what) || what == "not an object" || what == "EOF", "{what}: {said}");
        }
        // Steps before the header read as well: JSON's keys have no order.
        let reordered = edited(&|d| {
            let header = d.remove("header").expect("header");
            d.insert("header".into(), header);
        });
        assert!(reordered.find("\"steps\"") < reordered.find("\"header\""));
        let head = DumpHead::read(reordered.as_bytes()).expect("reordered");
        let (_tmp, mut journal) = journal();
        load_dump(&mut journal, &head, reordered.as_bytes()).expect("load");
    }

    #[test]
    fn a_dump_that_changes_between_its_reads_or_a_journal_that_refuses_it_writes_nothing() {
        let text = corpus().remove(0);
        let head = DumpHead::read(text.as_bytes()).expect("head");
        let mut shorter: serde_json::Value = serde_json::from_str(&text).expect("json");
        shorter["steps"].as_array_mut().expect("steps").pop();
        let shorter = serde_json::to_string(&shorter).expect("text");
        let (_tmp, mut journal) = journal();
        let changed = load_dump(&mut journal, &head, shorter.as_bytes());
        assert!(matches!(&changed, Err(JournalError::Dump(m)) if m.contains("changed")), "{changed:?}");
        let garbled = load_dump(&mut journal, &head, &text.as_bytes()[..text.len() - 10]);
        assert!(matches!(&garbled, Err(JournalError::Dump(_))), "{garbled:?}");
        assert!(journal.sessions().expect("sessions").is_empty(), "nothing was written");

        load_dump(&mut journal, &head, text.as_bytes()).expect("load");
        let again = load_dump(&mut journal, &head, text.as_bytes());
        assert!(matches!(again, Err(JournalError::Duplicate(_))), "{again:?}");
        assert_eq!(journal.sessions().expect("sessions").len(), 1);
    }
}
