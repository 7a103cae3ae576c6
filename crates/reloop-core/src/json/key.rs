//! A map key, as serde_json takes one.

use std::fmt;

use serde::ser::{self, Serialize};

use super::{string, Res, Sink, Unsupported};

/// A map's key: a string, as serde_json takes keys. Numbers and booleans (which serde_json
/// quotes) and anything else are left to it.
pub(super) struct Key<'a, S: Sink + ?Sized> {
    pub(super) out: &'a mut S,
}

impl<S: Sink + ?Sized> ser::Serializer for Key<'_, S> {
    type Ok = ();
    type Error = Unsupported;
    type SerializeSeq = ser::Impossible<(), Unsupported>;
    type SerializeTuple = ser::Impossible<(), Unsupported>;
    type SerializeTupleStruct = ser::Impossible<(), Unsupported>;
    type SerializeTupleVariant = ser::Impossible<(), Unsupported>;
    type SerializeMap = ser::Impossible<(), Unsupported>;
    type SerializeStruct = ser::Impossible<(), Unsupported>;
    type SerializeStructVariant = ser::Impossible<(), Unsupported>;

    fn serialize_str(self, v: &str) -> Res {
        string(self.out, v);
        Ok(())
    }
    fn serialize_char(self, v: char) -> Res {
        string(self.out, v.encode_utf8(&mut [0; 4]));
        Ok(())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Res {
        string(self.out, variant);
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, value: &T) -> Res {
        value.serialize(self)
    }
    fn collect_str<T: fmt::Display + ?Sized>(self, value: &T) -> Res {
        string(self.out, &value.to_string());
        Ok(())
    }
    fn serialize_bool(self, _: bool) -> Res {
        Err(Unsupported)
    }
    fn serialize_i8(self, _: i8) -> Res {
        Err(Unsupported)
    }
    fn serialize_i16(self, _: i16) -> Res {
        Err(Unsupported)
    }
    fn serialize_i32(self, _: i32) -> Res {
        Err(Unsupported)
    }
    fn serialize_i64(self, _: i64) -> Res {
        Err(Unsupported)
    }
    fn serialize_u8(self, _: u8) -> Res {
        Err(Unsupported)
    }
    fn serialize_u16(self, _: u16) -> Res {
        Err(Unsupported)
    }
    fn serialize_u32(self, _: u32) -> Res {
        Err(Unsupported)
    }
    fn serialize_u64(self, _: u64) -> Res {
        Err(Unsupported)
    }
    fn serialize_f32(self, _: f32) -> Res {
        Err(Unsupported)
    }
    fn serialize_f64(self, _: f64) -> Res {
        Err(Unsupported)
    }
    fn serialize_bytes(self, _: &[u8]) -> Res {
        Err(Unsupported)
    }
    fn serialize_none(self) -> Res {
        Err(Unsupported)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Res {
        Err(Unsupported)
    }
    fn serialize_unit(self) -> Res {
        Err(Unsupported)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Res {
        Err(Unsupported)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(self, _: &'static str, _: u32, _: &'static str, _: &T) -> Res {
        Err(Unsupported)
    }
    fn serialize_seq(self, _: Option<usize>) -> Res<Self::SerializeSeq> {
        Err(Unsupported)
    }
    fn serialize_tuple(self, _: usize) -> Res<Self::SerializeTuple> {
        Err(Unsupported)
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Res<Self::SerializeTupleStruct> {
        Err(Unsupported)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Res<Self::SerializeTupleVariant> {
        Err(Unsupported)
    }
    fn serialize_map(self, _: Option<usize>) -> Res<Self::SerializeMap> {
        Err(Unsupported)
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Res<Self::SerializeStruct> {
        Err(Unsupported)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Res<Self::SerializeStructVariant> {
        Err(Unsupported)
    }
}
