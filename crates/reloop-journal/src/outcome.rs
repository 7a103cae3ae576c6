//! What a step did, as one number: a hash of its effects, its reason and why its event was
//! ignored, written beside its row when it is appended (the `outcome` column). Replay compares
//! this number with the engine's, so it writes no text for a step that agrees; only a step that
//! differs is decoded and rendered, to report the divergence.
//!
//! The hash is of the values, typed (the input of digest version 4, folded as digests from
//! version 3 are), not of their JSON: so the engine's step hashes without being serialized. A
//! row written before the column existed (or from JSON that does not read back as exactly the
//! engine's values) has none; its hash is computed on read from its text, when that text reads
//! back exactly, and otherwise replay compares the decoded values.

use reloop_core::{Digest, TYPED_FROM};
use reloop_core::{Effect, Ignored, Reason};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

/// The hash of a step's effects, reason and why its event was ignored.
pub fn outcome_hash(effects: &[Effect], reason: Option<&Reason>, ignored: Option<&Ignored>) -> u64 {
    let mut d = Digest::for_version(TYPED_FROM);
    d.value(effects);
    d.value(&reason);
    d.value(&ignored);
    d.finish()
}

/// The hash of a step whose effects are JSON (a fork's or an import's record), when they read
/// back as exactly the engine's effects; `None` otherwise.
pub(crate) fn outcome_hash_of_json(effects: &Value, reason: Option<&Reason>, ignored: Option<&Ignored>) -> Option<u64> {
    let effects: Vec<Effect> = exactly(effects)?;
    Some(outcome_hash(&effects, reason, ignored))
}

/// The hash of a stored row, from its text: its effects (a JSON array) and its reason (or,
/// when `reason_kind` is `ignored`, its why). `None` when any of it does not read back exactly.
pub(crate) fn outcome_hash_of_text(
    effects: &[u8],
    reason_kind: Option<&str>,
    reason_json: Option<&[u8]>,
) -> Option<u64> {
    if effects == b"[]" && reason_json.is_none() {
        // Nothing done: a step's row stores no hash for it.
        return Some(outcome_hash(&[], None, None));
    }
    let effects: Value = serde_json::from_slice(effects).ok()?;
    let value = |json: Option<&[u8]>| json.map(serde_json::from_slice::<Value>).transpose().ok();
    let (reason, ignored): (Option<Reason>, Option<Ignored>) = match (reason_kind, value(reason_json)?) {
        (Some("ignored"), Some(why)) => (None, Some(exactly(&why)?)),
        (_, Some(reason)) => (Some(exactly(&reason)?), None),
        (_, None) => (None, None),
    };
    outcome_hash_of_json(&effects, reason.as_ref(), ignored.as_ref())
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
    fn a_step_hashes_as_its_stored_text_reads_back() {
        let reason = Reason::Terminal(Stop::Completed(Completion::NoToolRequested { stop_reason: None }));
        let effects = effects();
        let text = serde_json::to_vec(&effects).unwrap();
        let reason_text = serde_json::to_vec(&reason).unwrap();
        assert_eq!(
            outcome_hash_of_text(&text, Some("terminal"), Some(&reason_text)),
            Some(outcome_hash(&effects, Some(&reason), None))
        );
        assert_eq!(outcome_hash_of_text(b"[]", None, None), Some(outcome_hash(&[], None, None)));
        assert_ne!(outcome_hash(&effects, None, None), outcome_hash(&[], None, None));
    }

    #[test]
    fn an_ignored_step_hashes_its_why_and_text_that_does_not_read_back_exactly_has_no_hash() {
        let why = Ignored { phase: "idle".into(), event_kind: "model_done".into(), why: IgnoreWhy::NotExpected };
        let text = serde_json::to_vec(&why).unwrap();
        assert_eq!(
            outcome_hash_of_text(b"[]", Some("ignored"), Some(&text)),
            Some(outcome_hash(&[], None, Some(&why)))
        );
        assert_eq!(outcome_hash_of_text(b"[{\"effect\":\"cancel_model\",\"more\":1}]", None, None), None);
        assert_eq!(outcome_hash_of_text(b"not json", None, None), None);
    }
}
