//! serde_json is the reference: every form written here must be its bytes.

use std::collections::BTreeMap;

use proptest::prelude::*;
use serde::Serialize;
use serde_json::{json, Value};

use super::*;

fn ours<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    let mut out = b"kept".to_vec();
    write(&mut out, value).expect("writes");
    assert_eq!(&out[..4], b"kept", "what the buffer held stays");
    out.split_off(4)
}

fn same<T: Serialize + ?Sized>(value: &T) {
    let reference = serde_json::to_vec(value).expect("serde_json writes it");
    assert_eq!(String::from_utf8_lossy(&ours(value)), String::from_utf8_lossy(&reference));
}

#[test]
fn every_character_is_escaped_as_serde_json_escapes_it() {
    for c in (0u32..0x300).chain([0x2028, 0x2029, 0xfeff, 0x1f600]).filter_map(char::from_u32) {
        same(&c);
        same(&format!("a{c}b{c}"));
        same(&c.to_string());
        let mut map = BTreeMap::new();
        map.insert(format!("k{c}"), c);
        same(&map);
    }
}

#[test]
fn a_character_to_escape_is_found_wherever_it_stands() {
    for len in 0..20 {
        for at in 0..len {
            for b in (0u8..0x80).chain([0xc3]) {
                let mut bytes = vec![b'a'; len];
                bytes[at] = b;
                if b == 0xc3 {
                    // A two-byte character: é.
                    bytes.insert(at + 1, 0xa9);
                }
                let s = String::from_utf8(bytes).expect("utf-8");
                assert_eq!(ours(&s), serde_json::to_vec(&s).expect("writes"), "{s:?}");
            }
        }
    }
}

#[test]
fn the_first_character_to_escape_is_found_wherever_it_stands() {
    let special = |b: &u8| *b < 0x20 || *b == b'"' || *b == b'\\';
    for len in 0..26 {
        for at in 0..len {
            for b in [0u8, 0x1f, b'"', b'\\', b' ', b'!', b'#', b'[', b']', 0x7f, 0x80, 0xff, 0x21, 0x5d] {
                for later in [None, Some(b'"'), Some(0x01)] {
                    let mut bytes = vec![b'a'; len];
                    bytes[at] = b;
                    if let (Some(l), true) = (later, at + 1 < len) {
                        bytes[len - 1] = l;
                    }
                    assert_eq!(first_escaped(&bytes), bytes.iter().position(special), "{bytes:?}");
                }
            }
        }
    }
}

#[test]
fn numbers_and_floats_are_serde_json_s() {
    same(&[i64::MIN, -1, 0, 1, i64::MAX]);
    same(&[u64::MAX, 0]);
    same(&(i8::MIN, u8::MAX, i16::MIN, u16::MAX, i32::MIN, u32::MAX));
    same(&[0.0f64, -0.0, 1.0, 0.1, 1e300, -2.5e-308, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, f64::MIN_POSITIVE]);
    same(&[0.0f32, 1.5, f32::MAX, f32::NAN, f32::NEG_INFINITY]);
    same(&json!({"n": 1, "f": 1.0, "neg": -3, "big": 18_446_744_073_709_551_615u64}));
}

#[test]
fn every_serde_form_is_serde_json_s() {
    #[derive(Serialize)]
    struct Unit;
    #[derive(Serialize)]
    struct Newtype(u8);
    #[derive(Serialize)]
    struct Pair(u8, String);
    #[derive(Serialize)]
    enum E {
        Unit,
        Newtype(String),
        Tuple(u8, bool),
        Struct { a: Option<u8>, b: Vec<u8> },
    }
    #[derive(Serialize)]
    #[serde(tag = "kind", rename_all = "snake_case")]
    enum Tagged {
        A { x: u8 },
        B(Newtyped),
        C,
    }
    #[derive(Serialize)]
    struct Newtyped {
        y: Option<String>,
        #[serde(flatten)]
        rest: BTreeMap<String, Value>,
    }
    same(&Unit);
    same(&Newtype(7));
    same(&Pair(1, "two".into()));
    same(&[E::Unit, E::Newtype("n\"".into()), E::Tuple(3, true), E::Struct { a: None, b: vec![] }]);
    same(&E::Struct { a: Some(1), b: vec![1, 2] });
    let rest = BTreeMap::from([("z".to_string(), json!([1, {"q": null}]))]);
    same(&[Tagged::A { x: 1 }, Tagged::B(Newtyped { y: Some("y".into()), rest }), Tagged::C]);
    same(&serde_bytes_like(b"\x00\xffab"));
    same(&(Vec::<u8>::new(), BTreeMap::<String, u8>::new(), (), Some(()), None::<u8>));
    same(&format_args!("{}-{}", "display", 1));
}

/// Bytes as serde writes them through `serialize_bytes`.
fn serde_bytes_like(bytes: &[u8]) -> impl Serialize + '_ {
    struct Bytes<'a>(&'a [u8]);
    impl Serialize for Bytes<'_> {
        fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
            s.serialize_bytes(self.0)
        }
    }
    Bytes(bytes)
}

#[test]
fn what_is_left_to_serde_json_is_still_its_bytes_and_leaves_nothing_behind() {
    // Keys serde_json quotes: numbers, booleans.
    same(&BTreeMap::from([(1u32, "a"), (20, "b")]));
    same(&BTreeMap::from([(true, 1), (false, 2)]));
    same(&BTreeMap::from([(-1i64, json!({"deep": [1.5]}))]));
    // A raw value, written as it is.
    let raw = serde_json::value::RawValue::from_string("{\"a\" : [1, 2]}".into()).expect("raw");
    same(&json!({"x": 1}));
    same(&vec![raw.clone(), raw]);
    // A key serde_json refuses is refused here too, with its error, and nothing is written.
    let refused = BTreeMap::from([(vec![1u8], 1)]);
    let mut out = b"kept".to_vec();
    let ours = write(&mut out, &refused).expect_err("a list is no key").to_string();
    assert_eq!(out, b"kept");
    assert_eq!(ours, serde_json::to_vec(&refused).expect_err("nor for serde_json").to_string());
}

#[test]
fn a_string_is_written_alone_as_serde_json_writes_it() {
    for s in ["", "plain", "tab\there", "quote\"back\\slash", "\u{7f}\u{1}é"] {
        let mut out = Vec::new();
        write_str(&mut out, s);
        assert_eq!(out, serde_json::to_vec(s).expect("writes"));
    }
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        any::<String>().prop_map(Value::String),
        "[ -~\t\n\"\\\\]{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::vec((any::<String>(), inner), 0..6)
                .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn any_json_value_is_written_as_serde_json_writes_it(value in value()) {
        let reference = serde_json::to_vec(&value).expect("writes");
        prop_assert_eq!(ours(&value), reference);
    }

    #[test]
    fn any_string_is_written_as_serde_json_writes_it(s in any::<String>(), t in "[\\x00-\\x7f]{0,40}") {
        prop_assert_eq!(ours(&s), serde_json::to_vec(&s).expect("writes"));
        prop_assert_eq!(ours(&t), serde_json::to_vec(&t).expect("writes"));
    }
}
