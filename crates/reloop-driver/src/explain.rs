//! `reloop why`: the continue and terminal decisions of a session, with their evidence.

use reloop_core::{Effect, Evidence};
use reloop_journal::StepRecord;
use serde::Serialize;

/// One decision of the loop.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WhyLine {
    pub seq: u64,
    /// The turn the decision was taken in.
    pub turn: u32,
    /// The turn after it (one more for `next_turn`).
    pub next_turn: u32,
    /// `continue` or `terminal`.
    pub kind: &'static str,
    pub reason: &'static str,
    pub explanation: String,
    pub evidence: Evidence,
}

impl std::fmt::Display for WhyLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.kind {
            "terminal" => write!(f, "#{:<4} stop: {}: {}", self.seq, self.reason, self.explanation),
            _ => write!(
                f,
                "#{:<4} turn {} -> {}: {}: {}",
                self.seq, self.turn, self.next_turn, self.reason, self.explanation
            ),
        }
    }
}

/// The decisions of a session, optionally only those taken in one turn.
pub fn why(steps: &[StepRecord], turn: Option<u32>) -> Vec<WhyLine> {
    steps
        .iter()
        .filter(|s| turn.is_none_or(|t| s.turn_before == t))
        .filter_map(|s| {
            let reason = s.reason.as_ref()?;
            Some(WhyLine {
                seq: s.seq,
                turn: s.turn_before,
                next_turn: s.turn_after,
                kind: if reason.is_terminal() { "terminal" } else { "continue" },
                reason: reason.name(),
                explanation: reason.explain(),
                evidence: reason.evidence().clone(),
            })
        })
        .collect()
}

/// One line of the transition trace: the event, the phase change, the effects and the reason.
pub fn trace_line(step: &StepRecord) -> String {
    let mut line = format!("#{:<4} {:<13} {} -> {}", step.seq, step.event.kind(), step.from_phase, step.to_phase);
    if step.turn_before != step.turn_after {
        line.push_str(&format!(" (turn {} -> {})", step.turn_before, step.turn_after));
    }
    match serde_json::from_value::<Vec<Effect>>(step.effects.clone()) {
        Ok(effects) => {
            for effect in &effects {
                line.push_str("  ! ");
                line.push_str(&describe_effect(effect));
            }
        }
        Err(_) => line.push_str(&format!("  ! {}", step.effects)),
    }
    if let Some(reason) = &step.reason {
        let kind = if reason.is_terminal() { "stop" } else { "continue" };
        line.push_str(&format!("  => {kind}: {}", reason.name()));
    }
    line
}

/// An effect in a few words.
pub fn describe_effect(effect: &Effect) -> String {
    match effect {
        Effect::CallModel(c) => {
            format!("call_model(request {}, turn {}, {} messages)", c.request, c.turn, c.message_count)
        }
        Effect::RunTools { calls } => {
            let names: Vec<String> = calls.iter().map(|c| format!("{} {} {}", c.id, c.name, c.input)).collect();
            format!("run_tools({})", names.join("; "))
        }
        Effect::CancelModel => "cancel_model".to_string(),
        Effect::CancelTools => "cancel_tools".to_string(),
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}
