//! A step's effects and reason as the journal holds them, written for replay's comparison.
//!
//! Replay writes every step's effects and reason to compare them with the journal's text. The
//! ones nearly every turn takes (a model call, a batch of tool calls, `next_turn` with the tools
//! asked for) are written here straight; through serde they were a fifth of a replay's
//! stepping. Everything else is serde_json's, so the bytes are always the `Serialize` impls'
//! (the tests hold the two to each other).

use crate::effect::{Command, Effect, ModelCall};
use crate::wire::json::{self, Sink};
use crate::reason::{Continue, Reason};

/// Appends `effects` as their JSON array.
pub fn write_effects(out: &mut Vec<u8>, effects: &[Effect]) -> Result<(), serde_json::Error> {
    out.push(b'[');
    for (i, effect) in effects.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        match effect {
            Effect::Command(Command::CallModel(call)) => call_model(out, call),
            Effect::Command(Command::RunTools { calls }) => {
                out.put(b"{\"effect\":\"run_tools\",\"calls\":");
                crate::wire::write_tool_uses(out, calls);
                out.push(b'}');
            }
            other => serde_json::to_writer(&mut *out, other)?,
        }
    }
    out.push(b']');
    Ok(())
}

/// Appends `reason` as its JSON (`null` for none).
pub fn write_reason(out: &mut Vec<u8>, reason: Option<&Reason>) -> Result<(), serde_json::Error> {
    match reason {
        None => out.put(b"null"),
        Some(Reason::Continue(Continue::NextTurn { tools })) => {
            out.put(b"{\"kind\":\"continue\",\"reason\":\"next_turn\",\"evidence\":{\"evidence\":\"tools_requested\",\"tools\":");
            json::array(out, tools, |out, tool| {
                out.put(b"{\"name\":");
                json::string(out, &tool.name);
                out.put(b",\"id\":");
                json::string(out, &tool.id);
                out.put(b"}");
            });
            out.put(b"}}");
        }
        Some(other) => serde_json::to_writer(&mut *out, other)?,
    }
    Ok(())
}

fn call_model(out: &mut Vec<u8>, call: &ModelCall) {
    let mut n = itoa::Buffer::new();
    out.put(b"{\"effect\":\"call_model\",\"turn\":");
    out.put(n.format(call.turn).as_bytes());
    out.put(b",\"request\":");
    out.put(n.format(call.request).as_bytes());
    out.put(b",\"message_count\":");
    out.put(n.format(call.message_count).as_bytes());
    if !call.model.is_empty() {
        out.put(b",\"model\":");
        json::string(out, &call.model);
    }
    out.put(b",\"max_tokens\":");
    out.put(n.format(call.max_tokens).as_bytes());
    if !call.stream {
        out.put(b",\"stream\":false");
    }
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;
    use crate::effect::{Notice, RetryWait};
    use crate::message::{ContentBlock, ToolUse};
    use crate::reason::{Completion, Stop, ToolRef};

    fn text() -> impl Strategy<Value = String> {
        prop_oneof![Just(String::new()), "[a-z_]{1,12}", any::<String>(), "[a-z \"\\\\\n\u{1}é]{0,12}"]
    }

    fn call() -> impl Strategy<Value = ToolUse> {
        (
            text(),
            text(),
            prop_oneof![Just(json!({})), Just(json!({"n": 1, "f": 1.5, "s": "a\"b", "l": [null, true]}))],
            any::<bool>(),
        )
            .prop_map(|(id, name, input, kept)| {
                let ContentBlock::ToolUse(mut call) = ContentBlock::tool_use(id, name, input) else { unreachable!() };
                if kept {
                    call.extra.insert("cache_control", json!({"type": "ephemeral"}));
                }
                call
            })
    }

    fn effect() -> impl Strategy<Value = Effect> {
        prop_oneof![
            (any::<u32>(), any::<u32>(), any::<usize>(), text(), any::<u32>(), any::<bool>()).prop_map(
                |(turn, request, message_count, model, max_tokens, stream)| {
                    Command::CallModel(ModelCall { turn, request, message_count, model, max_tokens, stream }).into()
                }
            ),
            proptest::collection::vec(call(), 0..4).prop_map(|calls| Command::RunTools { calls }.into()),
            (proptest::collection::vec(call(), 0..3), proptest::collection::vec(text(), 0..2))
                .prop_map(|(calls, started)| Command::ResumeTools { calls, started }.into()),
            Just(Command::CancelTools.into()),
            (text(), proptest::option::of(any::<u64>())).prop_map(|(error, retry_after_capped_from_ms)| {
                Command::WaitRetry(RetryWait {
                    attempt: 1,
                    max_retries: 10,
                    delay_ms: 500,
                    error_status: Some(529),
                    error,
                    retry_after_capped_from_ms,
                })
                .into()
            }),
            text().prop_map(|to| Notice::SwitchModel { trigger: "overloaded".into(), from: "a".into(), to }.into()),
        ]
    }

    fn reason() -> impl Strategy<Value = Option<Reason>> {
        let tool = (text(), text()).prop_map(|(name, id)| ToolRef { name, id });
        prop_oneof![
            Just(None),
            proptest::collection::vec(tool, 0..4)
                .prop_map(|tools| Some(Reason::Continue(Continue::NextTurn { tools }))),
            Just(Some(Reason::Terminal(Stop::Completed(Completion::NoToolRequested {
                stop_reason: Some(crate::event::StopReason::EndTurn)
            })))),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        #[test]
        fn effects_are_written_as_they_serialize(effects in proptest::collection::vec(effect(), 0..4)) {
            let mut out = Vec::new();
            write_effects(&mut out, &effects).expect("writes");
            prop_assert_eq!(String::from_utf8(out).expect("utf-8"), serde_json::to_string(&effects).expect("serializes"));
        }

        #[test]
        fn a_reason_is_written_as_it_serializes(reason in reason()) {
            let mut out = Vec::new();
            write_reason(&mut out, reason.as_ref()).expect("writes");
            prop_assert_eq!(String::from_utf8(out).expect("utf-8"), serde_json::to_string(&reason).expect("serializes"));
        }
    }
}
