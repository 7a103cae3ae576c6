//! What a journal records, as data: a session's header, its steps, and the limit on a row. No
//! database here: SQLite (`store`, `rows`) and PostgreSQL (`reloop-journal-pg`) both build on
//! these types and their checks, so what a step is, and how big it may be, is defined once.

use reloop_core::{Config, Effect, Event, Ignored, Reason};
use serde_json::Value;

use crate::error::JournalError;

pub use reloop_core::ENGINE_VERSION;

/// The most one row may hold: a step's event, effects and reason together, or a header's
/// configs. SQLite refuses a value over 1 GB ("string or blob too big"), and far below that a
/// row becomes a memory hazard for every reader; writers (the driver) keep their steps under it,
/// and a row over it is refused with [`JournalError::RowTooLarge`] before anything is written.
pub const MAX_ROW_BYTES: usize = 8 * 1024 * 1024;

/// Refuses a row of `bytes` over [`MAX_ROW_BYTES`].
pub(crate) fn check_row(session: &str, seq: u64, bytes: usize) -> Result<(), JournalError> {
    if bytes > MAX_ROW_BYTES {
        return Err(JournalError::RowTooLarge { session: session.to_string(), seq, bytes, limit: MAX_ROW_BYTES });
    }
    Ok(())
}

/// What a session was started with.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionHeader {
    /// The session's id (a UUID); every selector and fork names it.
    pub id: String,
    /// Wall-clock start, in milliseconds since the Unix epoch; orders `reloop sessions`.
    pub created_at_ms: u64,
    /// The reloop that wrote the session, for telling which core's rules it recorded.
    pub engine_version: String,
    /// The rules the core ran under: replay runs the session again under exactly these.
    pub core_config: Config,
    /// The driver's settings (provider, model, cwd, prompt, ...), opaque to the journal.
    pub run_config: Value,
    /// For a fork: the parent session's id and the step it was forked at (`fork_seq`).
    pub parent: Option<(String, u64)>,
}

/// One line of `reloop sessions`.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionSummary {
    /// The session's id.
    pub id: String,
    /// Wall-clock start, in milliseconds since the Unix epoch.
    pub created_at_ms: u64,
    /// How many steps are journaled.
    pub steps: u64,
    /// Why the session ended (a terminal reason's name); `None` while it may still go on.
    pub terminal_reason: Option<String>,
    /// For a fork: the parent session's id and the step it was forked at.
    pub parent: Option<(String, u64)>,
}

/// One journaled step: the event and what the transition made of it.
#[derive(Debug, Clone, PartialEq)]
pub struct StepRecord {
    /// The step's place in its session: 1, 2, 3, ...
    pub seq: u64,
    /// The driver's wall clock when the event arrived (milliseconds since the Unix epoch);
    /// for display only, never an input to the core.
    pub at_ms: u64,
    /// What happened: the input replay feeds the core again.
    pub event: Event,
    /// The state's phase before the event, by name.
    pub from_phase: String,
    /// The state's phase after the transition, by name.
    pub to_phase: String,
    /// The turn count before the event.
    pub turn_before: u32,
    /// The turn count after the transition.
    pub turn_after: u32,
    /// Why the state moved on (or ended), when the transition gave a reason.
    pub reason: Option<Reason>,
    /// Set when the state did not expect the event (journaled from digest version 2 on).
    pub ignored: Option<Ignored>,
    /// The effects as JSON, compared verbatim by replay.
    pub effects: Value,
    /// The state's digest after the step: replay checks it recomputes the same state.
    pub digest: u64,
}

impl StepRecord {
    /// The record of one transition: `event` applied to a state that was in `from_phase` at
    /// `turn_before`, giving `step`. Every writer (the live driver, fork, import) builds it here,
    /// so what a step records is defined once.
    pub fn of(
        seq: u64,
        at_ms: u64,
        event: Event,
        from_phase: &str,
        turn_before: u32,
        step: &reloop_core::Step,
    ) -> Self {
        StepRecord {
            seq,
            at_ms,
            event,
            from_phase: from_phase.to_string(),
            to_phase: step.state.phase().to_string(),
            turn_before,
            turn_after: step.state.context().turn_count(),
            reason: step.reason.clone(),
            ignored: step.ignored.clone(),
            // Effects are plain data; serializing them cannot fail.
            effects: serde_json::to_value(&step.effects).unwrap_or_default(),
            digest: step.state.digest(),
        }
    }
}

/// A step's effects as they are at hand: the core's own (the live driver) or JSON read back
/// (fork, import). Both are written as the same text.
#[derive(Debug, Clone, Copy)]
pub enum EffectsRef<'a> {
    /// The effects the core's step returned, written without a `Value` in between.
    Core(&'a [Effect]),
    /// Effects already as JSON (a JSON array), read back from a journal or a dump.
    Json(&'a Value),
}

impl EffectsRef<'_> {
    pub(crate) fn is_empty(&self) -> bool {
        match self {
            EffectsRef::Core(effects) => effects.is_empty(),
            EffectsRef::Json(value) => value.as_array().is_some_and(Vec::is_empty),
        }
    }

    pub(crate) fn write(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        match self {
            EffectsRef::Core(effects) => serde_json::to_writer(out, effects),
            EffectsRef::Json(value) => serde_json::to_writer(out, value),
        }
    }
}

/// One step to be written, borrowed from wherever it is: the live driver hands the core's
/// [`reloop_core::Step`] as it is ([`NewStep::of`]), so a journaled step costs no copy of its
/// event, no `serde_json::Value` of its effects and no clone of its reason; a
/// [`StepRecord`] converts with `From`.
#[derive(Debug, Clone, Copy)]
pub struct NewStep<'a> {
    /// As [`StepRecord::seq`].
    pub seq: u64,
    /// As [`StepRecord::at_ms`].
    pub at_ms: u64,
    /// As [`StepRecord::event`].
    pub event: &'a Event,
    /// As [`StepRecord::from_phase`].
    pub from_phase: &'a str,
    /// As [`StepRecord::to_phase`].
    pub to_phase: &'a str,
    /// As [`StepRecord::turn_before`].
    pub turn_before: u32,
    /// As [`StepRecord::turn_after`].
    pub turn_after: u32,
    /// As [`StepRecord::reason`].
    pub reason: Option<&'a Reason>,
    /// As [`StepRecord::ignored`].
    pub ignored: Option<&'a Ignored>,
    /// As [`StepRecord::effects`], in whichever form the writer holds them.
    pub effects: EffectsRef<'a>,
    /// As [`StepRecord::digest`].
    pub digest: u64,
    /// The event as `serde_json::to_writer` writes it, when the caller has written it already
    /// (the driver measures every event against the row cap): the row copies these bytes rather
    /// than serializing the event a second time. They must be exactly the event's; debug builds
    /// check.
    pub event_json: Option<&'a [u8]>,
}

impl<'a> NewStep<'a> {
    /// The record of `event` applied to a state that was in `from_phase` at `turn_before`,
    /// giving `step`: the same row [`StepRecord::of`] would write.
    pub fn of(
        seq: u64,
        at_ms: u64,
        event: &'a Event,
        from_phase: &'a str,
        turn_before: u32,
        step: &'a reloop_core::Step,
    ) -> Self {
        NewStep {
            seq,
            at_ms,
            event,
            from_phase,
            to_phase: step.state.phase(),
            turn_before,
            turn_after: step.state.context().turn_count(),
            reason: step.reason.as_ref(),
            ignored: step.ignored.as_ref(),
            effects: EffectsRef::Core(&step.effects),
            digest: step.state.digest(),
            event_json: None,
        }
    }
}

impl<'a> From<&'a StepRecord> for NewStep<'a> {
    fn from(r: &'a StepRecord) -> Self {
        NewStep {
            seq: r.seq,
            at_ms: r.at_ms,
            event: &r.event,
            from_phase: &r.from_phase,
            to_phase: &r.to_phase,
            turn_before: r.turn_before,
            turn_after: r.turn_after,
            reason: r.reason.as_ref(),
            ignored: r.ignored.as_ref(),
            effects: EffectsRef::Json(&r.effects),
            digest: r.digest,
            event_json: None,
        }
    }
}
