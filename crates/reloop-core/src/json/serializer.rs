//! The value serializer: serde_json's compact forms, into a [`Sink`].

use std::fmt;

use serde::ser::{self, Serialize};

use super::key::Key;
use super::{integer, string, Res, Sink, Unsupported};

/// The serializer: one value into the sink.
pub(super) struct Json<'a, S: Sink + ?Sized> {
    pub(super) out: &'a mut S,
}

/// An array or object being written: whether an element was, so the next takes a comma; what
/// closes it.
pub(super) struct Compound<'a, S: Sink + ?Sized> {
    out: &'a mut S,
    first: bool,
    close: &'static [u8],
}

impl<S: Sink + ?Sized> Compound<'_, S> {
    #[inline]
    fn comma(&mut self) {
        if !self.first {
            self.out.put(b",");
        }
        self.first = false;
    }

    #[inline]
    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Res {
        self.comma();
        value.serialize(Json { out: &mut *self.out })
    }

    #[inline]
    fn key<T: Serialize + ?Sized>(&mut self, key: &T) -> Res {
        self.comma();
        key.serialize(Key { out: &mut *self.out })
    }

    #[inline]
    fn value<T: Serialize + ?Sized>(&mut self, value: &T) -> Res {
        self.out.put(b":");
        value.serialize(Json { out: &mut *self.out })
    }

    #[inline]
    fn field<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> Res {
        self.comma();
        string(self.out, key);
        self.value(value)
    }

    #[inline]
    fn close(self) -> Res {
        self.out.put(self.close);
        Ok(())
    }
}

impl<'a, S: Sink + ?Sized> Json<'a, S> {
    fn open(self, open: &[u8], close: &'static [u8]) -> Compound<'a, S> {
        self.out.put(open);
        Compound { out: self.out, first: true, close }
    }

    /// `{"variant":` then what `open` opens; closed by `close`, which closes both.
    fn open_variant(self, variant: &str, open: &[u8], close: &'static [u8]) -> Compound<'a, S> {
        self.out.put(b"{");
        string(self.out, variant);
        self.out.put(b":");
        self.open(open, close)
    }
}

impl<'a, S: Sink + ?Sized> ser::Serializer for Json<'a, S> {
    type Ok = ();
    type Error = Unsupported;
    type SerializeSeq = Compound<'a, S>;
    type SerializeTuple = Compound<'a, S>;
    type SerializeTupleStruct = Compound<'a, S>;
    type SerializeTupleVariant = Compound<'a, S>;
    type SerializeMap = Compound<'a, S>;
    type SerializeStruct = Compound<'a, S>;
    type SerializeStructVariant = Compound<'a, S>;

    fn serialize_bool(self, v: bool) -> Res {
        self.out.put(if v { b"true" } else { b"false" });
        Ok(())
    }
    fn serialize_i8(self, v: i8) -> Res {
        integer(self.out, v);
        Ok(())
    }
    fn serialize_i16(self, v: i16) -> Res {
        integer(self.out, v);
        Ok(())
    }
    fn serialize_i32(self, v: i32) -> Res {
        integer(self.out, v);
        Ok(())
    }
    fn serialize_i64(self, v: i64) -> Res {
        integer(self.out, v);
        Ok(())
    }
    fn serialize_u8(self, v: u8) -> Res {
        integer(self.out, v);
        Ok(())
    }
    fn serialize_u16(self, v: u16) -> Res {
        integer(self.out, v);
        Ok(())
    }
    fn serialize_u32(self, v: u32) -> Res {
        integer(self.out, v);
        Ok(())
    }
    fn serialize_u64(self, v: u64) -> Res {
        integer(self.out, v);
        Ok(())
    }
    /// Floats are written by serde_json itself (its formatter has changed between releases),
    /// into a buffer on the stack.
    fn serialize_f32(self, v: f32) -> Res {
        float(self.out, v)
    }
    fn serialize_f64(self, v: f64) -> Res {
        float(self.out, v)
    }
    fn serialize_char(self, v: char) -> Res {
        string(self.out, v.encode_utf8(&mut [0; 4]));
        Ok(())
    }
    fn serialize_str(self, v: &str) -> Res {
        string(self.out, v);
        Ok(())
    }
    /// An array of numbers, as serde_json writes bytes.
    fn serialize_bytes(self, v: &[u8]) -> Res {
        let mut seq = self.open(b"[", b"]");
        for b in v {
            seq.comma();
            integer(seq.out, *b);
        }
        seq.close()
    }
    fn serialize_none(self) -> Res {
        self.out.put(b"null");
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Res {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Res {
        self.out.put(b"null");
        Ok(())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Res {
        self.serialize_unit()
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Res {
        string(self.out, variant);
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, value: &T) -> Res {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Res {
        self.out.put(b"{");
        string(self.out, variant);
        self.out.put(b":");
        value.serialize(Json { out: &mut *self.out })?;
        self.out.put(b"}");
        Ok(())
    }
    fn serialize_seq(self, _: Option<usize>) -> Res<Compound<'a, S>> {
        Ok(self.open(b"[", b"]"))
    }
    fn serialize_tuple(self, _: usize) -> Res<Compound<'a, S>> {
        Ok(self.open(b"[", b"]"))
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Res<Compound<'a, S>> {
        Ok(self.open(b"[", b"]"))
    }
    fn serialize_tuple_variant(self, _: &'static str, _: u32, variant: &'static str, _: usize) -> Res<Compound<'a, S>> {
        Ok(self.open_variant(variant, b"[", b"]}"))
    }
    fn serialize_map(self, _: Option<usize>) -> Res<Compound<'a, S>> {
        Ok(self.open(b"{", b"}"))
    }
    /// serde_json's raw values (and numbers, were arbitrary precision on) are structs it
    /// recognises by name: those are its to write.
    fn serialize_struct(self, name: &'static str, _: usize) -> Res<Compound<'a, S>> {
        if name.starts_with("$serde_json") {
            return Err(Unsupported);
        }
        Ok(self.open(b"{", b"}"))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Res<Compound<'a, S>> {
        Ok(self.open_variant(variant, b"{", b"}}"))
    }
    fn collect_str<T: fmt::Display + ?Sized>(self, value: &T) -> Res {
        string(self.out, &value.to_string());
        Ok(())
    }
}

impl<S: Sink + ?Sized> ser::SerializeSeq for Compound<'_, S> {
    type Ok = ();
    type Error = Unsupported;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Res {
        self.element(value)
    }
    fn end(self) -> Res {
        self.close()
    }
}

impl<S: Sink + ?Sized> ser::SerializeTuple for Compound<'_, S> {
    type Ok = ();
    type Error = Unsupported;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Res {
        self.element(value)
    }
    fn end(self) -> Res {
        self.close()
    }
}

impl<S: Sink + ?Sized> ser::SerializeTupleStruct for Compound<'_, S> {
    type Ok = ();
    type Error = Unsupported;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Res {
        self.element(value)
    }
    fn end(self) -> Res {
        self.close()
    }
}

impl<S: Sink + ?Sized> ser::SerializeTupleVariant for Compound<'_, S> {
    type Ok = ();
    type Error = Unsupported;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Res {
        self.element(value)
    }
    fn end(self) -> Res {
        self.close()
    }
}

impl<S: Sink + ?Sized> ser::SerializeMap for Compound<'_, S> {
    type Ok = ();
    type Error = Unsupported;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Res {
        self.key(key)
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Res {
        self.value(value)
    }
    fn end(self) -> Res {
        self.close()
    }
}

impl<S: Sink + ?Sized> ser::SerializeStruct for Compound<'_, S> {
    type Ok = ();
    type Error = Unsupported;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Res {
        self.field(key, value)
    }
    fn end(self) -> Res {
        self.close()
    }
}

impl<S: Sink + ?Sized> ser::SerializeStructVariant for Compound<'_, S> {
    type Ok = ();
    type Error = Unsupported;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Res {
        self.field(key, value)
    }
    fn end(self) -> Res {
        self.close()
    }
}

/// A float as serde_json writes it: its shortest form, `null` for what is not finite.
pub(super) fn float<S: Sink + ?Sized, F: Serialize>(out: &mut S, v: F) -> Res {
    let mut buf = [0u8; 40];
    let mut rest = &mut buf[..];
    serde_json::to_writer(&mut rest, &v).map_err(|_| Unsupported)?;
    let written = 40 - rest.len();
    out.put(&buf[..written]);
    Ok(())
}
