//! Blocks and messages written as JSON straight into a sink: each message as it joins the
//! history (its length for the token estimate, and its digest up to version 3), and the blocks
//! and calls of a state digested up to version 3. Through serde a small block cost some six
//! hundred instructions, most of them serde's machinery; here about a hundred. The bytes are
//! serde_json's for the `Serialize` impls, which the tests hold these to for every form.

use super::json::{self, Sink};
use crate::message::{ContentBlock, Message, Role, ToolResultContent, ToolUse};

impl ContentBlock {
    pub(crate) fn write_json<S: Sink + ?Sized>(&self, out: &mut S) {
        match self {
            ContentBlock::Text(b) => {
                out.put(b"{\"type\":\"text\",\"text\":");
                json::string(out, &b.text);
                close(out, &b.extra);
            }
            ContentBlock::ToolUse(b) => {
                out.put(b"{\"type\":\"tool_use\",");
                b.write_fields(out);
                close(out, &b.extra);
            }
            ContentBlock::ToolResult(b) => {
                out.put(b"{\"type\":\"tool_result\",\"tool_use_id\":");
                json::string(out, &b.tool_use_id);
                out.put(b",\"content\":");
                match &b.content {
                    ToolResultContent::Text(text) => json::string(out, text),
                    ToolResultContent::Blocks(blocks) => write_blocks(out, blocks),
                }
                if b.is_error {
                    out.put(b",\"is_error\":true");
                }
                close(out, &b.extra);
            }
            ContentBlock::Thinking(b) => {
                out.put(b"{\"type\":\"thinking\",\"thinking\":");
                json::string(out, &b.thinking);
                if let Some(signature) = &b.signature {
                    out.put(b",\"signature\":");
                    json::string(out, signature);
                }
                close(out, &b.extra);
            }
            ContentBlock::RedactedThinking(b) => {
                out.put(b"{\"type\":\"redacted_thinking\",\"data\":");
                json::string(out, &b.data);
                close(out, &b.extra);
            }
            ContentBlock::Other(map) => json::object(out, map),
        }
    }
}

impl ToolUse {
    /// The call as an object of its own (as an effect lists it): no tag.
    pub(crate) fn write_json<S: Sink + ?Sized>(&self, out: &mut S) {
        out.put(b"{");
        self.write_fields(out);
        close(out, &self.extra);
    }

    /// `"id":…,"name":…,"input":…`: a call's fields, in a block or an effect.
    pub(crate) fn write_fields<S: Sink + ?Sized>(&self, out: &mut S) {
        out.put(b"\"id\":");
        json::string(out, &self.id);
        out.put(b",\"name\":");
        json::string(out, &self.name);
        out.put(b",\"input\":");
        json::value(out, &self.input);
    }
}

/// Calls as a JSON array of untagged objects (an effect's `calls`, the state's calls in flight).
pub(crate) fn write_tool_uses<S: Sink + ?Sized>(out: &mut S, calls: &[ToolUse]) {
    json::array(out, calls, |out, call| call.write_json(out));
}

impl Message {
    pub(crate) fn write_json<S: Sink + ?Sized>(&self, out: &mut S) {
        out.put(match self.role {
            Role::User => b"{\"role\":\"user\",\"content\":",
            Role::Assistant => b"{\"role\":\"assistant\",\"content\":",
            Role::System => b"{\"role\":\"system\",\"content\":",
        });
        write_blocks(out, &self.content);
        close(out, &self.extra);
    }
}

/// Blocks as a JSON array (a message's content, a response's blocks so far).
pub(crate) fn write_blocks<S: Sink + ?Sized>(out: &mut S, blocks: &[ContentBlock]) {
    json::array(out, blocks, |out, block| block.write_json(out));
}

/// The kept fields (their text is serde_json's for the map's entries), and the brace.
fn close<S: Sink + ?Sized>(out: &mut S, extra: &crate::extra::Extra) {
    if let Some(fields) = extra.json_fields() {
        out.put(b",");
        out.put(fields.as_bytes());
    }
    out.put(b"}");
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::{json, Map, Value};

    use crate::message::{Extra, RedactedThinking, Thinking, ToolResult};

    use super::*;

    fn written(block: &ContentBlock) -> String {
        let mut out = Vec::new();
        block.write_json(&mut out);
        String::from_utf8(out).expect("utf-8")
    }

    fn text() -> impl Strategy<Value = String> {
        prop_oneof![any::<String>(), "[a-z \"\\\\\n\t\u{1}é]{0,24}"]
    }

    fn input() -> impl Strategy<Value = Value> {
        crate::wire::json::tests::arbitrary_value()
    }

    fn extra() -> impl Strategy<Value = Extra> {
        proptest::collection::vec(("[a-z_]{1,8}", input()), 0..3)
            .prop_map(|entries| Extra::from(entries.into_iter().collect::<Map<String, Value>>()))
    }

    fn block() -> impl Strategy<Value = ContentBlock> {
        let leaf = prop_oneof![
            (text(), extra()).prop_map(|(text, extra)| {
                let mut b = ContentBlock::text(text);
                if let ContentBlock::Text(t) = &mut b {
                    t.extra = extra;
                }
                b
            }),
            (text(), text(), input(), extra()).prop_map(|(id, name, input, extra)| {
                let mut b = ContentBlock::tool_use(id, name, input);
                if let ContentBlock::ToolUse(t) = &mut b {
                    t.extra = extra;
                }
                b
            }),
            (text(), proptest::option::of(text()), extra()).prop_map(|(thinking, signature, extra)| {
                ContentBlock::Thinking(Thinking { thinking, signature, extra })
            }),
            (text(), extra())
                .prop_map(|(data, extra)| ContentBlock::RedactedThinking(RedactedThinking { data, extra })),
            input().prop_map(|v| ContentBlock::Other(match v {
                Value::Object(map) => map,
                other => json!({"type": "other", "v": other}).as_object().cloned().unwrap_or_default(),
            })),
        ];
        leaf.prop_recursive(2, 12, 3, |inner| {
            (
                text(),
                prop_oneof![
                    text().prop_map(ToolResultContent::Text),
                    proptest::collection::vec(inner, 0..3).prop_map(ToolResultContent::Blocks)
                ],
                any::<bool>(),
                extra(),
            )
                .prop_map(|(tool_use_id, content, is_error, extra)| {
                    ContentBlock::ToolResult(ToolResult { tool_use_id, content, is_error, extra })
                })
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        #[test]
        fn a_block_is_written_as_it_serializes(block in block()) {
            prop_assert_eq!(written(&block), serde_json::to_string(&block).expect("serializes"));
        }

        #[test]
        fn a_message_is_written_as_it_serializes(
            role in prop_oneof![Just(Role::User), Just(Role::Assistant), Just(Role::System)],
            content in proptest::collection::vec(block(), 0..4),
            extra in extra(),
        ) {
            let message = Message { role, content, extra };
            let mut out = Vec::new();
            message.write_json(&mut out);
            prop_assert_eq!(String::from_utf8(out).expect("utf-8"), serde_json::to_string(&message).expect("serializes"));
        }
    }
}
