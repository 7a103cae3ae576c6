//! A tool input as Claude Code holds it: JavaScript's `JSON.parse` of what the model streamed,
//! which is what it sends back to the model, prints to SDK apps and hands to its tools.
//!
//! Recorded from 2.1.197 and 2.1.332 (`tests/print/recorded/*/tool_inputs/`): keys that are
//! array indices (`"2"`, `"10"`) come first in ascending order, the rest keep their order; a
//! repeated key keeps its first place and its last value; every number is a double, so `15.0`
//! is `15`, `-0.0` is `0` and `12345678901234567890` is `12345678901234567000`. A Bash input is
//! rebuilt with `command`, `description`, `timeout` first.
//!
//! serde_json (with `preserve_order`) already keeps the order and the last of a repeated key;
//! numbers are rewritten here as the integers JavaScript prints where it prints an integer
//! below 2^64. A fraction keeps serde_json's spelling (the same as JavaScript's between 1e-5 and
//! 2^53); integers of 2^64 and more stay doubles (`1e21` where JavaScript writes `1e+21`).

use serde_json::{Map, Number, Value};

/// Beyond this, a JavaScript number is no longer an exact integer.
const EXACT: u64 = 1 << 53;

/// `value` as JavaScript's `JSON.parse` holds it, for the tool `name`.
pub(crate) fn tool_input(name: &str, value: Value) -> Value {
    let value = js_value(value);
    match value {
        Value::Object(map) if name == "Bash" && map.get("command").is_some_and(Value::is_string) => {
            Value::Object(first_keys(map, &["command", "description", "timeout"]))
        }
        other => other,
    }
}

/// The value after a JavaScript round trip.
pub(crate) fn js_value(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(js_object(map)),
        Value::Array(items) => Value::Array(items.into_iter().map(js_value).collect()),
        Value::Number(n) => Value::Number(js_number(n)),
        other => other,
    }
}

fn js_object(map: Map<String, Value>) -> Map<String, Value> {
    if !map.keys().any(|k| array_index(k).is_some()) {
        return map.into_iter().map(|(k, v)| (k, js_value(v))).collect();
    }
    let (mut indexed, named): (Vec<_>, Vec<_>) = map.into_iter().partition(|(k, _)| array_index(k).is_some());
    indexed.sort_by_key(|(k, _)| array_index(k));
    indexed.into_iter().chain(named).map(|(k, v)| (k, js_value(v))).collect()
}

/// The number of an array-index key: the canonical decimal of an integer below 2^32 - 1.
fn array_index(key: &str) -> Option<u32> {
    let n: u32 = key.parse().ok()?;
    (n != u32::MAX && n.to_string() == key).then_some(n)
}

fn js_number(n: Number) -> Number {
    if n.as_u64().is_some_and(|u| u <= EXACT) || n.as_i64().is_some_and(|i| i.unsigned_abs() <= EXACT) {
        return n;
    }
    let Some(x) = n.as_f64() else { return n };
    if x == 0.0 {
        return Number::from(0u64);
    }
    if x.fract() != 0.0 || x.abs() >= 18_446_744_073_709_551_616.0 {
        return n;
    }
    // An integral double below 2^64: JavaScript prints its shortest digits, then zeros.
    let digits = shortest_integer(x.abs());
    let number = if x < 0.0 {
        digits.parse::<i64>().ok().and_then(|i| i.checked_neg()).map(Number::from)
    } else {
        digits.parse::<u64>().ok().map(Number::from)
    };
    number.unwrap_or(n)
}

/// The decimal JavaScript prints for an integral double below 2^64: the shortest digits that
/// read back as it (as Rust's `{:e}` finds them), padded with zeros.
fn shortest_integer(x: f64) -> String {
    let sci = format!("{x:e}");
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exponent: usize = exponent.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let mut out = digits.clone();
    while out.len() < exponent + 1 {
        out.push('0');
    }
    out
}

fn first_keys(mut map: Map<String, Value>, order: &[&str]) -> Map<String, Value> {
    let mut out = Map::new();
    for key in order {
        if let Some(v) = map.shift_remove(*key) {
            out.insert((*key).to_string(), v);
        }
    }
    out.extend(map);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn js(raw: &str) -> String {
        serde_json::to_string(&js_value(serde_json::from_str(raw).unwrap())).unwrap()
    }

    #[test]
    fn as_claude_code_sent_the_recorded_odd_input_back() {
        // tests/print/recorded/*/tool_inputs/spelling, the NoSuchTool call: raw, then as sent.
        let raw = r#"{"zeta": 15.0, "2": "two", "alpha": [1.50, -0.0, 1E3, 2.5e-3], "1": {"b": 2.0, "a": 1}, "big": 12345678901234567890, "small": 1e-7, "dup": 1, "dup": 2}"#;
        assert_eq!(
            js(raw),
            r#"{"1":{"b":2,"a":1},"2":"two","zeta":15,"alpha":[1.5,0,1000,0.0025],"big":12345678901234567000,"small":1e-7,"dup":2}"#
        );
    }

    #[test]
    fn only_canonical_indices_move_first() {
        assert_eq!(
            js(r#"{"b":1,"01":2,"10":3,"2":4,"-1":5,"4294967295":6}"#),
            r#"{"2":4,"10":3,"b":1,"01":2,"-1":5,"4294967295":6}"#
        );
    }

    #[test]
    fn negative_and_exact_integers() {
        assert_eq!(js("[-9007199254740993, 9007199254740992, -5.0, 3]"), "[-9007199254740992,9007199254740992,-5,3]");
    }

    #[test]
    fn bash_input_is_rebuilt_command_first() {
        let v = tool_input("Bash", serde_json::json!({"description": "d", "timeout": 60000.0, "command": "echo hi"}));
        assert_eq!(v.to_string(), r#"{"command":"echo hi","description":"d","timeout":60000}"#);
        let v = tool_input("Read", serde_json::json!({"limit": 5.0, "file_path": "/a"}));
        assert_eq!(v.to_string(), r#"{"limit":5,"file_path":"/a"}"#);
    }
}
