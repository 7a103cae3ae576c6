//! Replay: today's core over yesterday's journal, with no model and no tools.
//!
//! Each journaled event is fed to [`reloop_core::transition`] in order; the effects, the reason
//! and the state digest of every step are compared with what the journal recorded. The first
//! mismatch is a [`Divergence`], named by a stable code.

use reloop_core::{transition, Reason, State};
use reloop_journal::{SessionHeader, StepRecord};
use serde::Serialize;
use serde_json::Value;

/// What a step produced, as compared by replay.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepView {
    pub to_phase: String,
    pub reason: Option<Reason>,
    pub effects: Value,
    pub digest: String,
}

/// The first step where today's engine does not do what the journal says it did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Divergence {
    /// `RELOOP-D001` effects differ, `RELOOP-D002` the reason differs, `RELOOP-D003` only the
    /// state digest differs. Codes are stable; new kinds get new numbers.
    pub code: &'static str,
    pub seq: u64,
    pub event_kind: String,
    pub expected: StepView,
    pub actual: StepView,
}

impl Divergence {
    /// What differs, in a sentence.
    pub fn summary(&self) -> String {
        match self.code {
            "RELOOP-D001" => "the effects differ".to_string(),
            "RELOOP-D002" => format!(
                "the reason differs: journal {}, engine {}",
                self.expected.reason.as_ref().map_or("none", Reason::name),
                self.actual.reason.as_ref().map_or("none", Reason::name)
            ),
            _ => format!("the state differs: journal {}, engine {}", self.expected.digest, self.actual.digest),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReplayReport {
    pub session_id: String,
    pub steps: usize,
    pub divergence: Option<Divergence>,
}

/// Replays a session's journal through today's core.
pub fn replay(header: &SessionHeader, steps: &[StepRecord]) -> ReplayReport {
    let mut state = State::new(header.core_config.clone());
    for (i, record) in steps.iter().enumerate() {
        let step = transition(state, record.event.clone());
        let actual = StepView {
            to_phase: step.state.phase().to_string(),
            reason: step.reason.clone(),
            effects: serde_json::to_value(&step.effects).unwrap_or_default(),
            digest: format!("{:016x}", step.state.digest()),
        };
        let expected = StepView {
            to_phase: record.to_phase.clone(),
            reason: record.reason.clone(),
            effects: record.effects.clone(),
            digest: format!("{:016x}", record.digest),
        };
        let code = if actual.effects != expected.effects {
            Some("RELOOP-D001")
        } else if actual.reason != expected.reason {
            Some("RELOOP-D002")
        } else if actual.digest != expected.digest || actual.to_phase != expected.to_phase {
            Some("RELOOP-D003")
        } else {
            None
        };
        if let Some(code) = code {
            let divergence =
                Divergence { code, seq: record.seq, event_kind: record.event.kind().to_string(), expected, actual };
            return ReplayReport { session_id: header.id.clone(), steps: i, divergence: Some(divergence) };
        }
        state = step.state;
    }
    ReplayReport { session_id: header.id.clone(), steps: steps.len(), divergence: None }
}
