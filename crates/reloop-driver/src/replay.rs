//! Replay: today's core over yesterday's journal, with no model and no tools.
//!
//! Each journaled event is fed to [`reloop_core::transition`] in order; the effects, the reason
//! and the state digest of every step are compared with what the journal recorded. The first
//! mismatch is a [`Divergence`], named by a stable code:
//!
//! | code | meaning |
//! |---|---|
//! | `RELOOP-D001` | the step's effects differ (a different request, tool run, wait, ...) |
//! | `RELOOP-D002` | same effects, but the continue/terminal reason differs, or whether (and why) the event was ignored |
//! | `RELOOP-D003` | same effects and reason, but the phase or the state digest differs |
//! | `RELOOP-D004` | the journal was recorded with behaviour flags this engine does not know |
//!
//! Codes are stable: a new kind of divergence gets a new number, an old one is never reused.

use reloop_core::{flags, transition, Ignored, Reason, State};
use reloop_journal::{SessionHeader, StepRecord};
use serde::Serialize;
use serde_json::Value;

/// What a step produced, as compared by replay.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepView {
    pub to_phase: String,
    pub reason: Option<Reason>,
    /// Why the event was ignored; compared from digest version 2 on (journals before it did not
    /// record ignored events).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ignored: Option<Ignored>,
    pub effects: Value,
    pub digest: String,
}

/// The first step where today's engine does not do what the journal says it did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Divergence {
    /// `RELOOP-D001` .. `RELOOP-D004`, see the module docs. Codes are stable.
    pub code: &'static str,
    /// The step (0 for `RELOOP-D004`, found before any step runs).
    pub seq: u64,
    pub event_kind: String,
    /// What differs, in a sentence.
    pub reason: String,
    pub expected: StepView,
    pub actual: StepView,
    /// A short diff: `-` what the journal holds, `+` what the engine produced, by JSON path.
    pub diff: Vec<String>,
}

impl Divergence {
    /// What differs, in a sentence.
    pub fn summary(&self) -> String {
        self.reason.clone()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReplayReport {
    pub session_id: String,
    pub steps: usize,
    /// The behaviour flags the replay ran under.
    pub flags: Vec<u32>,
    pub divergence: Option<Divergence>,
}

/// Replays a session's journal through today's core under the session's own config.
pub fn replay(header: &SessionHeader, steps: &[StepRecord]) -> ReplayReport {
    replay_with_flips(header, steps, &[])
}

/// Replays with some behaviour flags flipped: what the session would have done had the engine
/// behaved otherwise. `reloop replay --flip-flag N` uses it to show where a behaviour bites.
pub fn replay_with_flips(header: &SessionHeader, steps: &[StepRecord], flips: &[u32]) -> ReplayReport {
    let mut config = header.core_config.clone();
    for flag in flips {
        config.flags.flip(*flag);
    }
    let report = |steps: usize, divergence| ReplayReport {
        session_id: header.id.clone(),
        steps,
        flags: config.flags.numbers().collect(),
        divergence,
    };
    let unknown = header.core_config.flags.unknown();
    if !unknown.is_empty() {
        let empty = StepView {
            to_phase: String::new(),
            reason: None,
            ignored: None,
            effects: Value::Null,
            digest: String::new(),
        };
        let known: Vec<u32> = flags::TABLE.iter().map(|f| f.number).collect();
        let divergence = Divergence {
            code: "RELOOP-D004",
            seq: 0,
            event_kind: String::new(),
            reason: format!(
                "the journal was recorded with behaviour flags {unknown:?}, unknown to this engine \
                 (engine {}, which knows {known:?}); replay it with the engine that wrote it ({})",
                reloop_core::ENGINE_VERSION,
                header.engine_version
            ),
            expected: empty.clone(),
            actual: empty,
            diff: Vec::new(),
        };
        return report(0, Some(divergence));
    }
    // Digest version 1 journaled no ignored events: there is nothing to compare them with.
    let compare_ignored = config.digest_version >= 2;
    let mut state = State::new(config.clone());
    for (i, record) in steps.iter().enumerate() {
        let step = transition(state, record.event.clone());
        let actual = StepView {
            to_phase: step.state.phase().to_string(),
            reason: step.reason.clone(),
            ignored: step.ignored.clone().filter(|_| compare_ignored),
            effects: serde_json::to_value(&step.effects).unwrap_or_default(),
            digest: format!("{:016x}", step.state.digest()),
        };
        let expected = StepView {
            to_phase: record.to_phase.clone(),
            reason: record.reason.clone(),
            ignored: record.ignored.clone().filter(|_| compare_ignored),
            effects: record.effects.clone(),
            digest: format!("{:016x}", record.digest),
        };
        if let Some(divergence) = compare(record, expected, actual) {
            return report(i, Some(divergence));
        }
        state = step.state;
    }
    report(steps.len(), None)
}

fn compare(record: &StepRecord, expected: StepView, actual: StepView) -> Option<Divergence> {
    let name = |r: &Option<Reason>| r.as_ref().map_or("none", Reason::name);
    let (code, reason, mut diff) = if actual.effects != expected.effects {
        ("RELOOP-D001", "the effects differ".to_string(), Vec::new())
    } else if actual.reason != expected.reason {
        let text = match (name(&expected.reason), name(&actual.reason)) {
            (a, b) if a == b => format!("the evidence of {a} differs"),
            (a, b) => format!("the reason differs: journal {a}, engine {b}"),
        };
        ("RELOOP-D002", text, Vec::new())
    } else if actual.ignored != expected.ignored {
        let said =
            |i: &Option<Ignored>| i.as_ref().map_or("applied".to_string(), |i| format!("ignored ({})", i.name()));
        let text = format!("the journal says {}, the engine {}", said(&expected.ignored), said(&actual.ignored));
        ("RELOOP-D002", text, Vec::new())
    } else if actual.digest != expected.digest || actual.to_phase != expected.to_phase {
        let text = format!(
            "the state differs: journal {} (digest {}), engine {} (digest {})",
            expected.to_phase, expected.digest, actual.to_phase, actual.digest
        );
        ("RELOOP-D003", text, Vec::new())
    } else {
        return None;
    };
    json_diff("effects", &expected.effects, &actual.effects, &mut diff);
    let as_json = |r: &Option<Reason>| serde_json::to_value(r).unwrap_or_default();
    json_diff("reason", &as_json(&expected.reason), &as_json(&actual.reason), &mut diff);
    let ignored_json = |i: &Option<Ignored>| serde_json::to_value(i).unwrap_or_default();
    json_diff("ignored", &ignored_json(&expected.ignored), &ignored_json(&actual.ignored), &mut diff);
    if expected.to_phase != actual.to_phase {
        diff.push(format!("- phase: {}", expected.to_phase));
        diff.push(format!("+ phase: {}", actual.to_phase));
    }
    if expected.digest != actual.digest {
        diff.push(format!("- digest: {}", expected.digest));
        diff.push(format!("+ digest: {}", actual.digest));
    }
    diff.truncate(MAX_DIFF_LINES);
    Some(Divergence {
        code,
        seq: record.seq,
        event_kind: record.event.kind().to_string(),
        reason,
        expected,
        actual,
        diff,
    })
}

const MAX_DIFF_LINES: usize = 16;

/// Appends `- path: old` / `+ path: new` for every leaf where two JSON values differ.
fn json_diff(path: &str, a: &Value, b: &Value, out: &mut Vec<String>) {
    if a == b || out.len() >= MAX_DIFF_LINES {
        return;
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let (va, vb) = (x.get(k).unwrap_or(&Value::Null), y.get(k).unwrap_or(&Value::Null));
                json_diff(&format!("{path}.{k}"), va, vb, out);
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            for i in 0..x.len().max(y.len()) {
                let (va, vb) = (x.get(i).unwrap_or(&Value::Null), y.get(i).unwrap_or(&Value::Null));
                json_diff(&format!("{path}[{i}]"), va, vb, out);
            }
        }
        _ => {
            if !a.is_null() {
                out.push(format!("- {path}: {a}"));
            }
            if !b.is_null() {
                out.push(format!("+ {path}: {b}"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_diff_names_each_changed_leaf_by_path() {
        let mut out = Vec::new();
        let a = json!([{"effect": "wait_retry", "delay_ms": 1000, "attempt": 1}]);
        let b = json!([{"effect": "wait_retry", "delay_ms": 540, "attempt": 1}, {"effect": "withdraw"}]);
        json_diff("effects", &a, &b, &mut out);
        assert_eq!(
            out,
            vec![
                "- effects[0].delay_ms: 1000",
                "+ effects[0].delay_ms: 540",
                "+ effects[1]: {\"effect\":\"withdraw\"}"
            ]
        );
    }
}
