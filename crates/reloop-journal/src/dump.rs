//! A session as one JSON document: the header and every step, exactly as journaled.
//!
//! Dumps move sessions between journals (`reloop export --format journal`, `reloop import
//! journal`) and keep the recorded corpus in `tests/journals/` reviewable as text. Loading a
//! dump writes the rows verbatim — it does not re-run the core — so a replay of the loaded
//! session checks today's engine against what the recording engine did.

use std::io::Write;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::JournalError;
use crate::record::{SessionHeader, StepRecord};
use crate::store::Journal;

/// The format tag of a dump; a new layout gets a new tag.
pub const DUMP_FORMAT: &str = "reloop-session/1";

/// One session, header and steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SessionDump {
    /// [`DUMP_FORMAT`], checked on reading: a dump of another layout is refused, not misread.
    pub format: String,
    /// What the session was started with.
    pub header: DumpHeader,
    /// Every step, in order.
    pub steps: Vec<DumpStep>,
}

/// A [`SessionHeader`] as text: the configs as JSON, the parent as two optional fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DumpHeader {
    /// As [`SessionHeader::id`]; loading keeps it, so a session moves with its id.
    pub id: String,
    /// As [`SessionHeader::created_at_ms`].
    pub created_at_ms: u64,
    /// As [`SessionHeader::engine_version`].
    pub engine_version: String,
    /// The [`reloop_core::Config`] as JSON, checked when the dump is loaded.
    pub core_config: Value,
    /// As [`SessionHeader::run_config`].
    pub run_config: Value,
    /// For a fork: the parent session's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    /// For a fork: the step of the parent it was forked at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fork_seq: Option<u64>,
}

/// A [`StepRecord`] as text: the event, reason and ignored as JSON, the digest as hex.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DumpStep {
    /// As [`StepRecord::seq`].
    pub seq: u64,
    /// As [`StepRecord::at_ms`].
    pub at_ms: u64,
    /// The [`reloop_core::Event`] as JSON.
    pub event: Value,
    /// As [`StepRecord::from_phase`].
    pub from_phase: String,
    /// As [`StepRecord::to_phase`].
    pub to_phase: String,
    /// As [`StepRecord::turn_before`].
    pub turn_before: u32,
    /// As [`StepRecord::turn_after`].
    pub turn_after: u32,
    /// The [`reloop_core::Reason`] as JSON, when the step gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<Value>,
    /// Why the state ignored the event, for an ignored step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignored: Option<Value>,
    /// As [`StepRecord::effects`].
    pub effects: Value,
    /// 16 hex digits, as in the `transitions` table.
    pub digest: String,
}

impl SessionDump {
    /// Reads a dump's text; errors say what is wrong with it.
    pub fn from_json(text: &str) -> Result<Self, JournalError> {
        let dump: SessionDump = serde_json::from_str(text).map_err(|e| JournalError::Dump(e.to_string()))?;
        if dump.format != DUMP_FORMAT {
            return Err(JournalError::Dump(format!("format {:?}, expected {DUMP_FORMAT:?}", dump.format)));
        }
        Ok(dump)
    }

    /// The dump's text, pretty-printed so that a recorded session reviews well in a diff.
    pub fn to_json(&self) -> Result<String, JournalError> {
        serde_json::to_string_pretty(self).map_err(|source| JournalError::Encode { what: "session dump", source })
    }

    /// The header and steps the dump holds, decoded.
    pub fn records(&self) -> Result<(SessionHeader, Vec<StepRecord>), JournalError> {
        let steps = self.steps.iter().map(DumpStep::record).collect::<Result<_, JournalError>>()?;
        Ok((self.header.record()?, steps))
    }
}

fn bad(what: &str, e: serde_json::Error) -> JournalError {
    JournalError::Dump(format!("{what}: {e}"))
}

impl DumpHeader {
    /// The header as the journal holds it.
    pub(crate) fn record(&self) -> Result<SessionHeader, JournalError> {
        Ok(SessionHeader {
            id: self.id.clone(),
            created_at_ms: self.created_at_ms,
            engine_version: self.engine_version.clone(),
            core_config: serde_json::from_value(self.core_config.clone()).map_err(|e| bad("core_config", e))?,
            run_config: self.run_config.clone(),
            parent: self.parent_id.clone().zip(self.fork_seq),
        })
    }
}

impl DumpStep {
    /// The step as the journal holds it.
    pub(crate) fn record(&self) -> Result<StepRecord, JournalError> {
        let at = |what: &str| format!("step {} {what}", self.seq);
        fn decode<T: serde::de::DeserializeOwned>(at: String, value: &Value) -> Result<T, JournalError> {
            T::deserialize(value).map_err(|e| bad(&at, e))
        }
        Ok(StepRecord {
            seq: self.seq,
            at_ms: self.at_ms,
            event: decode(at("event"), &self.event)?,
            from_phase: self.from_phase.clone(),
            to_phase: self.to_phase.clone(),
            turn_before: self.turn_before,
            turn_after: self.turn_after,
            reason: self.reason.as_ref().map(|r| decode(at("reason"), r)).transpose()?,
            ignored: self.ignored.as_ref().map(|i| decode(at("ignored"), i)).transpose()?,
            effects: self.effects.clone(),
            digest: u64::from_str_radix(&self.digest, 16)
                .map_err(|e| JournalError::Dump(format!("{}: {e}", at("digest"))))?,
        })
    }
}

impl Journal {
    /// The session as a dump.
    pub fn dump_session(&self, id: &str) -> Result<SessionDump, JournalError> {
        SessionDump::of(self.header(id)?, self.steps(id)?)
    }
}

impl SessionDump {
    /// A session's header and steps as a dump: every backend dumps through here, so a dump
    /// reads the same whichever journal it came from.
    pub fn of(header: SessionHeader, steps: Vec<StepRecord>) -> Result<Self, JournalError> {
        Ok(SessionDump {
            format: DUMP_FORMAT.to_string(),
            header: DumpHeader::of(header)?,
            steps: steps.into_iter().map(DumpStep::of).collect::<Result<_, JournalError>>()?,
        })
    }
}

fn encode(what: &'static str, source: serde_json::Error) -> JournalError {
    JournalError::Encode { what, source }
}

impl DumpHeader {
    fn of(header: SessionHeader) -> Result<Self, JournalError> {
        Ok(DumpHeader {
            id: header.id,
            created_at_ms: header.created_at_ms,
            engine_version: header.engine_version,
            core_config: serde_json::to_value(&header.core_config).map_err(|e| encode("core config", e))?,
            run_config: header.run_config,
            parent_id: header.parent.as_ref().map(|p| p.0.clone()),
            fork_seq: header.parent.as_ref().map(|p| p.1),
        })
    }
}

impl DumpStep {
    fn of(s: StepRecord) -> Result<Self, JournalError> {
        Ok(DumpStep {
            seq: s.seq,
            at_ms: s.at_ms,
            event: serde_json::to_value(&s.event).map_err(|e| encode("event", e))?,
            from_phase: s.from_phase,
            to_phase: s.to_phase,
            turn_before: s.turn_before,
            turn_after: s.turn_after,
            reason: s.reason.as_ref().map(serde_json::to_value).transpose().map_err(|e| encode("reason", e))?,
            ignored: s.ignored.as_ref().map(serde_json::to_value).transpose().map_err(|e| encode("ignored", e))?,
            effects: s.effects,
            digest: format!("{:016x}", s.digest),
        })
    }
}

/// A dump written as its steps are handed over, byte for byte what [`SessionDump::to_json`]
/// writes of the whole session: `reloop export --format journal` holds one step at a time.
pub struct DumpWriter {
    steps: usize,
}

impl DumpWriter {
    /// Writes the dump's opening and its header.
    pub fn start(header: SessionHeader, out: &mut dyn Write) -> Result<Self, JournalError> {
        let header = pretty(&DumpHeader::of(header)?, 1)?;
        let format = serde_json::to_string(DUMP_FORMAT).map_err(|e| encode("session dump", e))?;
        write(out, format!("{{\n  \"format\": {format},\n  \"header\": {header},\n  \"steps\": [").as_bytes())?;
        Ok(DumpWriter { steps: 0 })
    }

    /// Writes the next step.
    pub fn step(&mut self, step: StepRecord, out: &mut dyn Write) -> Result<(), JournalError> {
        let step = pretty(&DumpStep::of(step)?, 2)?;
        let comma = if self.steps == 0 { "" } else { "," };
        write(out, format!("{comma}\n    {step}").as_bytes())?;
        self.steps += 1;
        Ok(())
    }

    /// Closes the steps and the dump (no newline after it, as [`SessionDump::to_json`]).
    pub fn finish(self, out: &mut dyn Write) -> Result<(), JournalError> {
        let close: &[u8] = if self.steps == 0 { b"]\n}" } else { b"\n  ]\n}" };
        write(out, close)
    }
}

/// `value` pretty-printed as it reads `depth` levels into a pretty-printed document: every line
/// after its first indented by two spaces a level (strings hold no raw newline: JSON escapes it).
fn pretty<T: Serialize>(value: &T, depth: usize) -> Result<String, JournalError> {
    let text = serde_json::to_string_pretty(value).map_err(|e| encode("session dump", e))?;
    Ok(text.replace('\n', &format!("\n{}", "  ".repeat(depth))))
}

fn write(out: &mut dyn Write, bytes: &[u8]) -> Result<(), JournalError> {
    out.write_all(bytes).map_err(|e| encode("session dump", serde_json::Error::io(e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every dump of the corpus, and one session with no step.
    fn dumps() -> Vec<SessionDump> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/journals");
        let mut out: Vec<SessionDump> = std::fs::read_dir(dir)
            .expect("corpus")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .map(|p| SessionDump::from_json(&std::fs::read_to_string(p).expect("read")).expect("dump"))
            .collect();
        assert!(out.len() >= 10, "the corpus holds sessions");
        let mut empty = out[0].clone();
        empty.steps.clear();
        out.push(empty);
        out
    }

    #[test]
    fn a_dump_written_a_step_at_a_time_is_the_dump_written_whole() {
        for dump in dumps() {
            let (header, steps) = dump.records().expect("records");
            let whole = SessionDump::of(header.clone(), steps.clone()).expect("dump").to_json().expect("json");
            let mut streamed = Vec::new();
            let mut writer = DumpWriter::start(header, &mut streamed).expect("start");
            for step in steps {
                writer.step(step, &mut streamed).expect("step");
            }
            writer.finish(&mut streamed).expect("finish");
            assert_eq!(String::from_utf8(streamed).expect("utf-8"), whole, "{}", dump.header.id);
        }
    }
}
