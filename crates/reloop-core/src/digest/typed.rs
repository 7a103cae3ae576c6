//! The input of digest version 4 and later: a value's typed fields, no JSON text.
//!
//! Every value starts with a byte saying what it is; numbers follow as eight little-endian bytes,
//! strings and names after their length, and a list, a map or a struct ends with [`END`]. So two
//! different values never give the same bytes, and nothing is escaped or formatted. Any
//! `Serialize` value goes through [`value`]; messages and blocks, mixed in at every append, are
//! written field by field below (their kept fields as the text they are kept as).

use serde::ser::{self, Serialize};

use super::Digest;
use crate::message::{ContentBlock, Message, ToolResultContent, ToolUse};

pub(crate) const NONE: u8 = 0;
pub(crate) const SOME: u8 = 1;
pub(crate) const FALSE: u8 = 2;
pub(crate) const TRUE: u8 = 3;
pub(crate) const UNSIGNED: u8 = 4;
pub(crate) const SIGNED: u8 = 5;
pub(crate) const FLOAT: u8 = 6;
pub(crate) const STRING: u8 = 7;
pub(crate) const BYTES: u8 = 8;
pub(crate) const UNIT: u8 = 9;
pub(crate) const VARIANT: u8 = 10;
pub(crate) const LIST: u8 = 11;
pub(crate) const MAP: u8 = 12;
pub(crate) const STRUCT: u8 = 13;
pub(crate) const END: u8 = 14;

/// An empty list's bytes, as [`Typed`] writes them; [`Digest::list`] writes them directly.
pub(super) const EMPTY_LIST: &[u8] = &[LIST, END];
/// `None`'s bytes, as [`Typed`] writes them; [`Digest::option`] writes them directly.
pub(super) const NONE_BYTES: &[u8] = &[NONE];

/// Mixes in `value`'s typed fields.
pub(crate) fn value<T: Serialize + ?Sized>(d: &mut Digest, value: &T) {
    // Our types serialize into a digest without error; a custom error could only come from a
    // `Serialize` impl that refuses, which none does. Fold a marker in regardless.
    if value.serialize(Typed(d)).is_err() {
        d.bytes(&[END, END]);
    }
}

/// Mixes in a message: its role, its blocks and its kept fields.
pub(crate) fn digest_message(d: &mut Digest, message: &Message) {
    d.name(match message.role {
        crate::message::Role::User => "user",
        crate::message::Role::Assistant => "assistant",
        crate::message::Role::System => "system",
    });
    d.u64(message.content.len() as u64);
    message.content.iter().for_each(|block| digest_block(d, block));
    d.str(message.extra.json_fields().unwrap_or_default());
}

/// Mixes in a content block: its type, its fields, its kept fields.
pub(crate) fn digest_block(d: &mut Digest, block: &ContentBlock) {
    match block {
        ContentBlock::Text(b) => {
            d.name("text");
            d.str(&b.text);
            d.str(b.extra.json_fields().unwrap_or_default());
        }
        ContentBlock::ToolUse(call) => {
            d.name("tool_use");
            digest_tool_use(d, call);
        }
        ContentBlock::ToolResult(b) => {
            d.name("tool_result");
            d.str(&b.tool_use_id);
            match &b.content {
                ToolResultContent::Text(text) => {
                    d.bytes(&[STRING]);
                    d.str(text);
                }
                ToolResultContent::Blocks(blocks) => {
                    d.bytes(&[LIST]);
                    d.u64(blocks.len() as u64);
                    blocks.iter().for_each(|block| digest_block(d, block));
                }
            }
            d.u64(u64::from(b.is_error));
            d.str(b.extra.json_fields().unwrap_or_default());
        }
        ContentBlock::Thinking(b) => {
            d.name("thinking");
            d.str(&b.thinking);
            d.option(&b.signature);
            d.str(b.extra.json_fields().unwrap_or_default());
        }
        ContentBlock::RedactedThinking(b) => {
            d.name("redacted_thinking");
            d.str(&b.data);
            d.str(b.extra.json_fields().unwrap_or_default());
        }
        ContentBlock::Other(map) => {
            d.name("other");
            value(d, map);
        }
    }
}

/// Mixes in a tool call: its id, name, input and kept fields.
pub(crate) fn digest_tool_use(d: &mut Digest, call: &ToolUse) {
    d.str(&call.id);
    d.str(&call.name);
    value(d, &call.input);
    d.str(call.extra.json_fields().unwrap_or_default());
}

/// A serde serializer into a digest.
struct Typed<'a>(&'a mut Digest);

/// A number after its tag, as eight little-endian bytes.
#[inline]
pub(crate) fn tagged(d: &mut Digest, tag: u8, n: u64) {
    let mut bytes = [0; 9];
    bytes[0] = tag;
    bytes[1..].copy_from_slice(&n.to_le_bytes());
    d.bytes(&bytes);
}

/// Bytes after their tag and their length.
#[inline]
pub(crate) fn tagged_bytes(d: &mut Digest, tag: u8, s: &[u8]) {
    tagged(d, tag, s.len() as u64);
    d.bytes(s);
}

impl Typed<'_> {
    #[inline]
    fn tagged(&mut self, tag: u8, n: u64) {
        tagged(self.0, tag, n);
    }

    #[inline]
    fn string(&mut self, tag: u8, s: &[u8]) {
        tagged_bytes(self.0, tag, s);
    }
}

/// The error a `Serialize` impl may raise (ours raise none): serde's own plain error, which
/// carries the message.
type Refused = serde::de::value::Error;
type Done = Result<(), Refused>;

/// Narrower numbers as the wide ones.
macro_rules! widen {
    ($($method:ident($ty:ty)),* => $wide:ident($wide_ty:ty)) => {$(
        fn $method(self, v: $ty) -> Done {
            self.$wide(<$wide_ty>::from(v))
        }
    )*};
}

impl<'a> ser::Serializer for Typed<'a> {
    type Ok = ();
    type Error = Refused;
    type SerializeSeq = Self;
    type SerializeTuple = Self;
    type SerializeTupleStruct = Self;
    type SerializeTupleVariant = Self;
    type SerializeMap = Self;
    type SerializeStruct = Self;
    type SerializeStructVariant = Self;

    fn serialize_bool(self, v: bool) -> Done {
        self.0.bytes(&[if v { TRUE } else { FALSE }]);
        Ok(())
    }
    widen!(serialize_i8(i8), serialize_i16(i16), serialize_i32(i32) => serialize_i64(i64));
    widen!(serialize_u8(u8), serialize_u16(u16), serialize_u32(u32) => serialize_u64(u64));
    widen!(serialize_f32(f32) => serialize_f64(f64));
    fn serialize_i64(mut self, v: i64) -> Done {
        self.tagged(SIGNED, v as u64);
        Ok(())
    }
    fn serialize_u64(mut self, v: u64) -> Done {
        self.tagged(UNSIGNED, v);
        Ok(())
    }
    fn serialize_f64(mut self, v: f64) -> Done {
        self.tagged(FLOAT, v.to_bits());
        Ok(())
    }
    fn serialize_char(self, v: char) -> Done {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(mut self, v: &str) -> Done {
        self.string(STRING, v.as_bytes());
        Ok(())
    }
    fn serialize_bytes(mut self, v: &[u8]) -> Done {
        self.string(BYTES, v);
        Ok(())
    }
    fn serialize_none(self) -> Done {
        self.0.bytes(&[NONE]);
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Done {
        self.0.bytes(&[SOME]);
        value.serialize(self)
    }
    fn serialize_unit(self) -> Done {
        self.0.bytes(&[UNIT]);
        Ok(())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Done {
        self.serialize_unit()
    }
    fn serialize_unit_variant(mut self, _name: &'static str, _index: u32, variant: &'static str) -> Done {
        self.string(VARIANT, variant.as_bytes());
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _name: &'static str, value: &T) -> Done {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        mut self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Done {
        self.string(VARIANT, variant.as_bytes());
        value.serialize(self)
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Self, Refused> {
        self.0.bytes(&[LIST]);
        Ok(self)
    }
    fn serialize_tuple(self, len: usize) -> Result<Self, Refused> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<Self, Refused> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        mut self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Self, Refused> {
        self.string(VARIANT, variant.as_bytes());
        self.0.bytes(&[LIST]);
        Ok(self)
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Self, Refused> {
        self.0.bytes(&[MAP]);
        Ok(self)
    }
    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Self, Refused> {
        self.0.bytes(&[STRUCT]);
        Ok(self)
    }
    fn serialize_struct_variant(
        mut self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Self, Refused> {
        self.string(VARIANT, variant.as_bytes());
        self.0.bytes(&[STRUCT]);
        Ok(self)
    }
}

impl Typed<'_> {
    fn item<T: Serialize + ?Sized>(&mut self, value: &T) -> Done {
        value.serialize(Typed(self.0))
    }

    fn end(self) -> Done {
        self.0.bytes(&[END]);
        Ok(())
    }
}

/// The compound forms: each item in turn (a struct's fields after their names), then [`END`].
macro_rules! compound {
    ($($trait:ident :: $method:ident $(($key:ident))?),*) => {$(
        impl ser::$trait for Typed<'_> {
            type Ok = ();
            type Error = Refused;
            fn $method<T: Serialize + ?Sized>(&mut self, $($key: &'static str,)? value: &T) -> Done {
                $(self.0.str($key);)?
                self.item(value)
            }
            fn end(self) -> Done {
                Typed::end(self)
            }
        }
    )*};
}

compound!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field,
    SerializeStruct::serialize_field(key),
    SerializeStructVariant::serialize_field(key)
);

impl ser::SerializeMap for Typed<'_> {
    type Ok = ();
    type Error = Refused;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Done {
        self.item(key)
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Done {
        self.item(value)
    }
    fn end(self) -> Done {
        Typed::end(self)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::digest::TYPED_FROM;

    fn typed(write: impl FnOnce(&mut Digest)) -> u64 {
        let mut d = Digest::for_version(TYPED_FROM);
        write(&mut d);
        d.finish()
    }

    #[test]
    fn values_that_differ_digest_apart() {
        let values = [
            json!(null),
            json!(false),
            json!(0),
            json!(-1),
            json!(0.5),
            json!(""),
            json!("0"),
            json!([]),
            json!([[]]),
            json!([null]),
            json!({}),
            json!({"a": "b"}),
            json!({"ab": ""}),
            json!(["a", "b"]),
            json!(["ab"]),
        ];
        let digests: std::collections::BTreeSet<u64> = values.iter().map(|v| typed(|d| value(d, v))).collect();
        assert_eq!(digests.len(), values.len());
    }

    #[test]
    fn a_block_s_text_and_its_kept_fields_cannot_run_together() {
        let mut kept = ContentBlock::text("a");
        if let ContentBlock::Text(t) = &mut kept {
            t.extra.insert("k", json!(1));
        }
        let block = |b: &ContentBlock| typed(|d| digest_block(d, b));
        assert_ne!(block(&kept), block(&ContentBlock::text("a")));
        assert_ne!(block(&ContentBlock::text("ab")), block(&ContentBlock::text("a")));
        let message = |m: &Message| typed(|d| digest_message(d, m));
        assert_ne!(message(&Message::user_text("a")), message(&Message::assistant(vec![ContentBlock::text("a")])));
    }
}
