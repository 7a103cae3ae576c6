//! An invalid input as Claude Code's tools report it to the caller: the issue list of the zod
//! schema its tools are declared with, `JSON.stringify(issues, null, 2)` after
//! `InputValidationError: `, which both versions keep as the call's `tool_use_result` (the model
//! reads [`crate::validate`]'s sentences instead; `malformed_tool_call/schema_rejected`,
//! `tool_results/errors`).
//!
//! Only the kinds of issue a recording shows are written: a missing or mistyped top-level
//! parameter (`invalid_type`, `Invalid input: expected string, received undefined`) and the
//! parameters the schema does not know (`unrecognized_keys`). An input with any other kind (an
//! enum, an integer, a nested value) gets no list, and the caller keeps the model's text.

use serde_json::{json, Map, Value};

use crate::validate::{has_type, json_type};

/// The types zod names as JSON schema does.
const SAME_NAMES: &[&str] = &["string", "number", "boolean", "array", "object"];

/// `InputValidationError: [issues…]` for `input` against `schema`, or `None` when the input is
/// valid or an issue is of a kind no recording shows.
pub(crate) fn zod_issues(schema: &Value, input: &Value) -> Option<String> {
    let Value::Object(object) = input else { return None };
    let empty = Map::new();
    let properties = schema.get("properties").and_then(Value::as_object).unwrap_or(&empty);
    let required: Vec<&str> =
        schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    let mut issues = Vec::new();
    // zod reports the shape's keys in their order, then the unknown ones.
    for (name, property) in properties {
        let expected = property.get("type").and_then(Value::as_str);
        let received = match object.get(name) {
            None if required.contains(&name.as_str()) => "undefined",
            None => continue,
            Some(value) if expected.is_some_and(|t| !has_type(value, t)) => json_type(value),
            Some(value) => {
                // An issue inside the value (an enum, an item, a nested key): no recorded words.
                let alone = json!({"type": "object", "properties": {name.as_str(): property}});
                if !crate::validate::check(&alone, &json!({name.as_str(): value})).is_empty() {
                    return None;
                }
                continue;
            }
        };
        let expected = expected.filter(|t| SAME_NAMES.contains(t))?;
        issues.push(json!({
            "expected": expected,
            "code": "invalid_type",
            "path": [name],
            "message": format!("Invalid input: expected {expected}, received {received}"),
        }));
    }
    let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
    let unknown: Vec<&String> = object.keys().filter(|k| closed && !properties.contains_key(*k)).collect();
    if !unknown.is_empty() {
        let quoted: Vec<String> = unknown.iter().map(|k| Value::String((*k).clone()).to_string()).collect();
        let plural = if unknown.len() > 1 { "s" } else { "" };
        issues.push(json!({
            "code": "unrecognized_keys",
            "keys": unknown,
            "path": [],
            "message": format!("Unrecognized key{plural}: {}", quoted.join(", ")),
        }));
    }
    if issues.is_empty() {
        return None;
    }
    serde_json::to_string_pretty(&issues).ok().map(|list| format!("InputValidationError: {list}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "file_path": {"type": "string"},
                "offset": {"type": "integer"},
                "mode": {"type": "string", "enum": ["a", "b"]}
            },
            "required": ["file_path"],
            "additionalProperties": false
        })
    }

    /// The two recorded lists, as both versions keep them (`schema_rejected`).
    #[test]
    fn the_recorded_lists_are_written_as_claude_code_keeps_them() {
        let missing_and_unknown = zod_issues(&schema(), &json!({"path": "/a"})).unwrap();
        assert_eq!(
            missing_and_unknown,
            "InputValidationError: [\n  {\n    \"expected\": \"string\",\n    \"code\": \"invalid_type\",\n    \"path\": [\n      \"file_path\"\n    ],\n    \"message\": \"Invalid input: expected string, received undefined\"\n  },\n  {\n    \"code\": \"unrecognized_keys\",\n    \"keys\": [\n      \"path\"\n    ],\n    \"path\": [],\n    \"message\": \"Unrecognized key: \\\"path\\\"\"\n  }\n]"
        );
        let mistyped = zod_issues(&schema(), &json!({"file_path": 7})).unwrap();
        assert_eq!(
            mistyped,
            "InputValidationError: [\n  {\n    \"expected\": \"string\",\n    \"code\": \"invalid_type\",\n    \"path\": [\n      \"file_path\"\n    ],\n    \"message\": \"Invalid input: expected string, received number\"\n  }\n]"
        );
    }

    #[test]
    fn several_unknown_keys_are_one_issue() {
        let list = zod_issues(&schema(), &json!({"file_path": "/a", "x": 1, "y": 2})).unwrap();
        assert!(list.contains(r#""message": "Unrecognized keys: \"x\", \"y\"""#), "{list}");
    }

    #[test]
    fn a_valid_input_or_an_unrecorded_kind_of_issue_gives_no_list() {
        assert_eq!(zod_issues(&schema(), &json!({"file_path": "/a"})), None);
        assert_eq!(zod_issues(&schema(), &json!({"file_path": "/a", "mode": "c"})), None, "an enum");
        assert_eq!(zod_issues(&schema(), &json!({"file_path": "/a", "offset": 1.5})), None, "an integer");
        assert_eq!(zod_issues(&schema(), &json!([1])), None, "not an object");
    }
}
