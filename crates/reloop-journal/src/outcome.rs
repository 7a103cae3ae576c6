//! What a step did, as one number: a hash of its effects, its reason and why its event was
//! ignored, written beside its row when it is appended (the `outcome` column). Replay compares
//! this number with the engine's, so it writes no text for a step that agrees; only a step that
//! differs is decoded and rendered, to report the divergence.
//!
//! The hash is of the values, typed (the input of digest version 4, folded as digests from
//! version 3 are), not of their JSON: so the engine's step hashes without being serialized. A
//! row written before the column existed (or from JSON that does not read back as exactly the
//! engine's values) has none; replay compares its text with serde_json's for the engine's step.

use reloop_core::{Digest, TYPED_FROM};
use reloop_core::{Effect, Ignored, Reason};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

/// The hash of a step's effects, reason and why its event was ignored.
pub fn outcome_hash(effects: &[Effect], reason: Option<&Reason>, ignored: Option<&Ignored>) -> u64 {
    let mut d = Digest::for_version(TYPED_FROM);
    d.effects(effects);
    d.reason(reason);
    d.option(&ignored);
    d.finish()
}

/// The hash of a step whose effects are JSON (a fork's or an import's record), when they read
/// back as exactly the engine's effects; `None` otherwise.
pub(crate) fn outcome_hash_of_json(effects: &Value, reason: Option<&Reason>, ignored: Option<&Ignored>) -> Option<u64> {
    let effects: Vec<Effect> = exactly(effects)?;
    Some(outcome_hash(&effects, reason, ignored))
}

/// `json` read as a `T` that writes back as the same JSON: a value the engine may produce.
fn exactly<T: Serialize + DeserializeOwned>(json: &Value) -> Option<T> {
    let typed: T = serde_json::from_value(json.clone()).ok()?;
    (serde_json::to_value(&typed).ok()? == *json).then_some(typed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use reloop_core::{Command, Completion, ContentBlock, IgnoreWhy, Stop};
    use serde_json::json;

    fn effects() -> Vec<Effect> {
        let calls = ContentBlock::tool_use("t1", "Read", json!({"file_path": "/a"}));
        let ContentBlock::ToolUse(call) = calls else { unreachable!() };
        vec![Command::RunTools { calls: vec![call] }.into()]
    }

    #[test]
    fn a_step_hashes_as_its_json_record_reads_back_and_a_record_that_does_not_has_none() {
        let reason = Reason::Terminal(Stop::Completed(Completion::NoToolRequested { stop_reason: None }));
        let effects = effects();
        let json = serde_json::to_value(&effects).unwrap();
        assert_eq!(outcome_hash_of_json(&json, Some(&reason), None), Some(outcome_hash(&effects, Some(&reason), None)));
        assert_ne!(outcome_hash(&effects, None, None), outcome_hash(&[], None, None));
        let why = Ignored { phase: "idle".into(), event_kind: "model_done".into(), why: IgnoreWhy::NotExpected };
        assert_ne!(outcome_hash(&[], None, Some(&why)), outcome_hash(&[], None, None));
        let more = serde_json::json!([{"effect": "cancel_model", "more": 1}]);
        assert_eq!(outcome_hash_of_json(&more, None, None), None);
    }
}
