//! serde_json is the reference: every piece written here must be its bytes.

use proptest::prelude::*;
use serde_json::{json, Map, Value};

use super::*;

/// `v` written here, after bytes the buffer held already (which stay).
fn ours(v: &Value) -> Vec<u8> {
    let mut out = b"kept".to_vec();
    value(&mut out, v);
    assert_eq!(&out[..4], b"kept", "what the buffer held stays");
    out.split_off(4)
}

fn same(v: &Value) {
    let reference = serde_json::to_vec(v).expect("serde_json writes it");
    assert_eq!(String::from_utf8_lossy(&ours(v)), String::from_utf8_lossy(&reference));
}

#[test]
fn every_character_is_escaped_as_serde_json_escapes_it() {
    for c in (0u32..0x300).chain([0x2028, 0x2029, 0xfeff, 0x1f600]).filter_map(char::from_u32) {
        same(&Value::String(format!("a{c}b{c}")));
        same(&Value::String(c.to_string()));
        same(&json!({ format!("k{c}"): c.to_string() }));
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
                let s = Value::String(String::from_utf8(bytes).expect("utf-8"));
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
    same(&json!([i64::MIN, -1, 0, 1, i64::MAX, u64::MAX]));
    same(&json!([0.0, -0.0, 1.0, 0.1, 1e300, -2.5e-308, f64::MIN_POSITIVE, 1.5f32]));
    same(&json!({"n": 1, "f": 1.0, "neg": -3, "nested": [{}, [], {"a": [null, true, false]}]}));
}

#[test]
fn a_string_is_written_alone_as_serde_json_writes_it() {
    for s in ["", "plain", "tab\there", "quote\"back\\slash", "\u{7f}\u{1}é"] {
        let mut out = Vec::new();
        string(&mut out, s);
        assert_eq!(out, serde_json::to_vec(s).expect("writes"));
    }
}

/// Any JSON value, with strings of every kind (the block writer's tests draw from it too).
pub(crate) fn arbitrary_value() -> impl Strategy<Value = Value> {
    let text = || prop_oneof![any::<String>(), "[ -~\t\n\"\\\\\u{1}é]{0,12}"];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, move |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::vec((text(), inner), 0..6)
                .prop_map(|entries| Value::Object(entries.into_iter().collect::<Map<String, Value>>())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn any_json_value_is_written_as_serde_json_writes_it(v in arbitrary_value()) {
        prop_assert_eq!(ours(&v), serde_json::to_vec(&v).expect("writes"));
    }

    #[test]
    fn any_string_is_written_as_serde_json_writes_it(s in any::<String>(), t in "[\\x00-\\x7f]{0,40}") {
        for s in [s, t] {
            let mut out = Vec::new();
            string(&mut out, &s);
            prop_assert_eq!(out, serde_json::to_vec(&s).expect("writes"));
        }
    }
}
