//! A step's outcome (its effects and its reason) as typed digest input, written field by field
//! for what every turn does: a model call, a batch of tool calls, `next_turn`. The bytes are
//! the ones [`Digest::value`] writes through serde (`crate::digest::typed`), and the tests hold
//! the two to each other, so the hashes journaled with every step keep their meaning; anything
//! rarer goes through serde.
//!
//! Why by hand: replay hashes the engine's outcome of every step to compare it with the row's,
//! and the serde walk (a call per field, a copy of unknown length per name) was a tenth of the
//! stepping thread, most of it for these three. Names here are constants, copied as such.

use serde_json::Value;

use crate::digest::typed::{self, END, FALSE, LIST, MAP, SOME, STRING, STRUCT, TRUE, UNIT, VARIANT};
use crate::digest::typed::{FLOAT, SIGNED, UNSIGNED};
use crate::digest::Digest;
use crate::effect::{Command, Effect, ModelCall};
use crate::message::ToolUse;
use crate::reason::{Continue, Reason, ToolRef};

/// `tag`, if any, then `name` after its length, as [`Digest::str`] writes it, built at compile
/// time (`M` is the name's length, eight for the length and one for a tag).
const fn prefixed<const M: usize>(tag: Option<u8>, name: &[u8]) -> [u8; M] {
    let mut out = [0u8; M];
    let start = if tag.is_some() { 1 } else { 0 };
    if let Some(tag) = tag {
        out[0] = tag;
    }
    let len = (name.len() as u64).to_le_bytes();
    let mut i = 0;
    while i < 8 {
        out[start + i] = len[i];
        i += 1;
    }
    let mut j = 0;
    while j < name.len() {
        out[start + 8 + j] = name[j];
        j += 1;
    }
    out
}

/// A struct field's name, as the serializer writes it before the field's value.
macro_rules! key {
    ($d:expr, $name:literal) => {
        $d.bytes(&const { prefixed::<{ $name.len() + 8 }>(None, $name.as_bytes()) })
    };
}

/// A constant string value (`STRING`) or a unit variant's name (`VARIANT`), tagged.
macro_rules! tagged {
    ($d:expr, $tag:expr, $name:literal) => {
        $d.bytes(&const { prefixed::<{ $name.len() + 9 }>(Some($tag), $name.as_bytes()) })
    };
}

impl Digest {
    /// Mixes in a step's effects as [`Digest::value`] does.
    pub fn effects(&mut self, effects: &[Effect]) {
        if !self.is_typed() {
            return self.value(effects);
        }
        self.bytes(&[LIST]);
        for effect in effects {
            match effect {
                // A call sent without guesses (rare) goes through serde.
                Effect::Command(Command::CallModel(call)) if call.shed.is_empty() => model_call(self, call),
                Effect::Command(Command::RunTools { calls }) => {
                    self.bytes(&[STRUCT]);
                    key!(self, "effect");
                    tagged!(self, STRING, "run_tools");
                    key!(self, "calls");
                    self.bytes(&[LIST]);
                    calls.iter().for_each(|call| tool_use(self, call));
                    self.bytes(&[END, END]);
                }
                other => typed::value(self, other),
            }
        }
        self.bytes(&[END]);
    }

    /// Mixes in a step's reason (`None` for a step that gave none) as [`Digest::value`] does.
    pub fn reason(&mut self, reason: Option<&Reason>) {
        let Some(Reason::Continue(Continue::NextTurn { tools })) = reason.filter(|_| self.is_typed()) else {
            return self.value(&reason);
        };
        self.bytes(&[SOME, STRUCT]);
        key!(self, "kind");
        tagged!(self, STRING, "continue");
        key!(self, "reason");
        tagged!(self, VARIANT, "next_turn");
        key!(self, "evidence");
        self.bytes(&[STRUCT]);
        key!(self, "evidence");
        tagged!(self, STRING, "tools_requested");
        key!(self, "tools");
        self.bytes(&[LIST]);
        for ToolRef { name, id } in tools {
            self.bytes(&[STRUCT]);
            key!(self, "name");
            string(self, name);
            key!(self, "id");
            string(self, id);
            self.bytes(&[END]);
        }
        self.bytes(&[END, END, END]);
    }
}

/// A model call: its fields in their order, those serde skips skipped alike (`shed` is empty
/// here). Destructured whole, so a new field cannot be left out unnoticed.
fn model_call(d: &mut Digest, call: &ModelCall) {
    let ModelCall { turn, request, message_count, model, max_tokens, stream, shed: _ } = call;
    d.bytes(&[STRUCT]);
    key!(d, "effect");
    tagged!(d, STRING, "call_model");
    key!(d, "turn");
    typed::tagged(d, UNSIGNED, u64::from(*turn));
    key!(d, "request");
    typed::tagged(d, UNSIGNED, u64::from(*request));
    key!(d, "message_count");
    typed::tagged(d, UNSIGNED, *message_count as u64);
    if !model.is_empty() {
        key!(d, "model");
        string(d, model);
    }
    key!(d, "max_tokens");
    typed::tagged(d, UNSIGNED, u64::from(*max_tokens));
    if !*stream {
        key!(d, "stream");
        d.bytes(&[FALSE]);
    }
    d.bytes(&[END]);
}

/// A tool call: a map (its kept fields are flattened into it), keys written as strings. A call
/// that kept fields goes through serde.
fn tool_use(d: &mut Digest, call: &ToolUse) {
    let ToolUse { id, name, input, extra } = call;
    if !extra.is_empty() {
        return typed::value(d, call);
    }
    d.bytes(&[MAP]);
    tagged!(d, STRING, "id");
    string(d, id);
    tagged!(d, STRING, "name");
    string(d, name);
    tagged!(d, STRING, "input");
    json(d, input);
    d.bytes(&[END]);
}

/// A JSON value as serde_json serializes it: numbers as the integer or float they hold.
fn json(d: &mut Digest, value: &Value) {
    match value {
        Value::Null => d.bytes(&[UNIT]),
        Value::Bool(b) => d.bytes(&[if *b { TRUE } else { FALSE }]),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => typed::tagged(d, UNSIGNED, u),
            (None, Some(i)) => typed::tagged(d, SIGNED, i as u64),
            (None, None) => typed::tagged(d, FLOAT, n.as_f64().unwrap_or_default().to_bits()),
        },
        Value::String(s) => string(d, s),
        Value::Array(items) => {
            d.bytes(&[LIST]);
            items.iter().for_each(|item| json(d, item));
            d.bytes(&[END]);
        }
        Value::Object(map) => {
            d.bytes(&[MAP]);
            for (k, v) in map {
                string(d, k);
                json(d, v);
            }
            d.bytes(&[END]);
        }
    }
}

/// A string value: its tag and length, then its bytes.
#[inline]
fn string(d: &mut Digest, s: &str) {
    typed::tagged_bytes(d, STRING, s.as_bytes());
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use proptest::prelude::*;
    use serde_json::json;

    use super::*;
    use crate::digest::TYPED_FROM;
    use crate::effect::{Notice, RetryWait};
    use crate::message::ContentBlock;
    use crate::reason::{Completion, Stop};

    fn by_hand(effects: &[Effect], reason: Option<&Reason>) -> u64 {
        let mut d = Digest::for_version(TYPED_FROM);
        d.effects(effects);
        d.reason(reason);
        d.finish()
    }

    fn by_serde(effects: &[Effect], reason: Option<&Reason>) -> u64 {
        let mut d = Digest::for_version(TYPED_FROM);
        d.value(effects);
        d.value(&reason);
        d.finish()
    }

    fn call(id: &str, name: &str, input: Value) -> Arc<ToolUse> {
        let ContentBlock::ToolUse(call) = ContentBlock::tool_use(id, name, input) else { unreachable!() };
        call
    }

    fn model_call(model: &str, stream: bool) -> Effect {
        let call = ModelCall {
            turn: 3,
            request: 4,
            message_count: 9,
            model: model.into(),
            max_tokens: 32_000,
            stream,
            shed: Default::default(),
        };
        Command::CallModel(call).into()
    }

    #[test]
    fn every_turns_effects_and_reason_write_what_serde_writes() {
        let input = json!({"n": 5, "neg": -2, "f": 1.5, "big": u64::MAX, "s": "é\"\n", "a": [null, true, false, [], {}],
            "o": {"k": {"deeper": [1, -1.0e300]}}});
        let calls = vec![call("toolu_1", "Read", json!({"file_path": "/a"})), call("toolu_2", "Bash", input)];
        let mut kept = (*call("toolu_3", "Edit", json!({}))).clone();
        kept.extra = crate::extra::Extra::of_strings(&[("caller", "direct")]);
        let tools = |n: usize| (0..n).map(|i| ToolRef { name: format!("T{i}"), id: format!("toolu_{i}") }).collect();
        let effects: Vec<Vec<Effect>> = vec![
            vec![],
            vec![model_call("", true)],
            vec![model_call("claude-opus-4-5", false)],
            vec![match model_call("m", true) {
                Effect::Command(Command::CallModel(mut call)) => {
                    call.shed = [crate::profile::RequestGuess::TokenCountBeta].into_iter().collect();
                    Command::CallModel(call).into()
                }
                other => other,
            }],
            vec![Command::RunTools { calls: calls.clone() }.into()],
            vec![Command::RunTools { calls: vec![] }.into(), model_call("m", true)],
            vec![Command::RunTools { calls: vec![Arc::new(kept)] }.into()],
            vec![Command::ResumeTools { calls, started: vec!["toolu_1".into()] }.into()],
            vec![Command::CancelModel.into(), Notice::Withdraw.into()],
            vec![Command::WaitRetry(RetryWait {
                attempt: 1,
                max_retries: 10,
                delay_ms: 500,
                error_status: Some(529),
                error: "overloaded".into(),
                retry_after_capped_from_ms: None,
                unrounded_delay_ms: Some(512.5),
            })
            .into()],
        ];
        let reasons = [
            None,
            Some(Reason::Continue(Continue::NextTurn { tools: vec![] })),
            Some(Reason::Continue(Continue::NextTurn { tools: tools(1) })),
            Some(Reason::Continue(Continue::NextTurn { tools: tools(3) })),
            Some(Reason::Terminal(Stop::Completed(Completion::NoToolRequested { stop_reason: None }))),
        ];
        for effects in &effects {
            for reason in &reasons {
                assert_eq!(
                    by_hand(effects, reason.as_ref()),
                    by_serde(effects, reason.as_ref()),
                    "{effects:?} {reason:?}"
                );
            }
        }
        // A digest of an older version takes them as JSON text, as it always did.
        let mut d = Digest::for_version(TYPED_FROM - 1);
        d.effects(&effects[3]);
        d.reason(reasons[2].as_ref());
        let mut e = Digest::for_version(TYPED_FROM - 1);
        e.value(&effects[3][..]);
        e.value(&reasons[2].as_ref());
        assert_eq!(d.finish(), e.finish());
    }

    fn any_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<u64>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(Value::from),
            ".{0,12}".prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec(("[a-z_]{0,6}", inner), 0..4)
                    .prop_map(|entries| Value::Object(entries.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn any_model_call_and_tool_input_write_what_serde_writes(
            turn: u32, request: u32, message_count: usize, model in ".{0,8}", max_tokens: u32, stream: bool,
            id in ".{0,10}", name in ".{0,10}", input in any_json(), names in prop::collection::vec((".{0,6}", ".{0,6}"), 0..3),
            guessed: bool,
        ) {
            let shed = if guessed { [crate::profile::RequestGuess::ThinkingDisplay].into_iter().collect() } else { Default::default() };
            let call_model = Command::CallModel(ModelCall { turn, request, message_count, model, max_tokens, stream, shed });
            let effects: Vec<Effect> = vec![call_model.into(), Command::RunTools { calls: vec![call(&id, &name, input)] }.into()];
            let tools = names.into_iter().map(|(name, id)| ToolRef { name, id }).collect();
            let reason = Reason::Continue(Continue::NextTurn { tools });
            prop_assert_eq!(by_hand(&effects, Some(&reason)), by_serde(&effects, Some(&reason)));
        }
    }
}
