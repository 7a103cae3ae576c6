//! Checks a tool input against the subset of JSON schema the tools use, and words the problems as
//! Claude Code does, so the model gets the feedback it was trained on.
//!
//! Supported: `type` (object, string, number, integer, boolean, array), `properties`, `required`,
//! `enum`, `items` and `additionalProperties: false`. Anything else in a schema is ignored rather
//! than rejected, because a library user's tool may carry keywords meant only for the model.

use serde_json::{Map, Value};

/// One problem with an input, in Claude Code's vocabulary.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) enum Issue {
    /// A `required` property is absent.
    Missing { param: String },
    /// A property not in `properties` was given while `additionalProperties` is false.
    Unexpected { param: String },
    /// A property has the wrong JSON type.
    WrongType { param: String, expected: String, provided: String },
    /// A property is not one of the schema's `enum` values.
    NotInEnum { param: String, allowed: Vec<String>, provided: String },
    /// The input itself is not a JSON object.
    NotAnObject { provided: String },
}

impl std::fmt::Display for Issue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Issue::Missing { param } => write!(f, "The required parameter `{param}` is missing"),
            Issue::Unexpected { param } => write!(f, "An unexpected parameter `{param}` was provided"),
            Issue::WrongType { param, expected, provided } => {
                write!(f, "The parameter `{param}` type is expected as `{expected}` but provided as `{provided}`")
            }
            Issue::NotInEnum { param, allowed, provided } => {
                let allowed: Vec<String> = allowed.iter().map(|a| format!("`{a}`")).collect();
                write!(f, "The parameter `{param}` must be one of {} but provided as `{provided}`", allowed.join(", "))
            }
            Issue::NotAnObject { provided } => {
                write!(f, "The input type is expected as `object` but provided as `{provided}`")
            }
        }
    }
}

/// Why the registry refused to run a tool; `Display` is the exact `tool_result` text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum InputError {
    /// The input does not satisfy the tool's schema.
    #[error("<tool_use_error>InputValidationError: {tool} failed due to the following {}:\n{}</tool_use_error>",
        if issues.len() > 1 { "issues" } else { "issue" },
        issues.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Invalid { tool: String, issues: Vec<Issue> },
    /// The model's output was cut before the input JSON closed; `raw` is what arrived.
    #[error("<tool_use_error>InputValidationError: {tool} was called with input that could not be parsed as JSON.\nYou sent (first {} of {} bytes): {}\nCommon causes: unescaped backslashes in file paths (use / or \\\\), unescaped control characters, or truncated output. Retry with valid JSON.</tool_use_error>",
        shown_prefix(raw).len(), raw.len(), shown_prefix(raw))]
    Unparseable { tool: String, raw: String },
}

/// How much of an unparseable input is echoed back: at most 200 bytes, cut at a char boundary.
const UNPARSEABLE_ECHO_BYTES: usize = 200;

fn shown_prefix(raw: &str) -> &str {
    let mut end = raw.len().min(UNPARSEABLE_ECHO_BYTES);
    while !raw.is_char_boundary(end) {
        end -= 1;
    }
    &raw[..end]
}

/// Validates `input` for the tool `tool` against `schema`.
///
/// A `Value::String` input is the driver's marker for JSON the model never finished, so it is
/// reported as unparseable rather than as a wrong type.
pub(crate) fn validate_input(tool: &str, schema: &Value, input: &Value) -> Result<(), InputError> {
    if let Value::String(raw) = input {
        return Err(InputError::Unparseable { tool: tool.to_string(), raw: raw.clone() });
    }
    let issues = check(schema, input);
    if issues.is_empty() {
        Ok(())
    } else {
        Err(InputError::Invalid { tool: tool.to_string(), issues })
    }
}

/// Lists every problem of `input` against `schema`, in Claude Code's order: missing parameters,
/// then unexpected ones, then wrong types and values.
pub(crate) fn check(schema: &Value, input: &Value) -> Vec<Issue> {
    let Value::Object(object) = input else {
        return vec![Issue::NotAnObject { provided: json_type(input).to_string() }];
    };
    let mut missing = Vec::new();
    let mut unexpected = Vec::new();
    let mut values = Vec::new();
    check_object(schema, object, "", &mut missing, &mut unexpected, &mut values);
    missing.into_iter().chain(unexpected).chain(values).collect()
}

fn check_object(
    schema: &Value,
    object: &Map<String, Value>,
    prefix: &str,
    missing: &mut Vec<Issue>,
    unexpected: &mut Vec<Issue>,
    values: &mut Vec<Issue>,
) {
    let empty = Map::new();
    let properties = schema.get("properties").and_then(Value::as_object).unwrap_or(&empty);
    let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
    if let Some(required) = schema.get("required").and_then(Value::as_array) {
        for name in required.iter().filter_map(Value::as_str) {
            if !object.contains_key(name) {
                missing.push(Issue::Missing { param: format!("{prefix}{name}") });
            }
        }
    }
    for (name, value) in object {
        let param = format!("{prefix}{name}");
        match properties.get(name) {
            Some(property) => check_value(property, value, &param, missing, unexpected, values),
            None if closed => unexpected.push(Issue::Unexpected { param }),
            None => {}
        }
    }
}

fn check_value(
    schema: &Value,
    value: &Value,
    param: &str,
    missing: &mut Vec<Issue>,
    unexpected: &mut Vec<Issue>,
    values: &mut Vec<Issue>,
) {
    if let Some(expected) = schema.get("type").and_then(Value::as_str) {
        if !has_type(value, expected) {
            values.push(Issue::WrongType {
                param: param.to_string(),
                expected: expected.to_string(),
                provided: json_type(value).to_string(),
            });
            return;
        }
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array) {
        if !allowed.contains(value) {
            values.push(Issue::NotInEnum {
                param: param.to_string(),
                allowed: allowed.iter().map(plain).collect(),
                provided: plain(value),
            });
            return;
        }
    }
    match value {
        Value::Object(object) => {
            check_object(schema, object, &format!("{param}."), missing, unexpected, values);
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    check_value(item_schema, item, &format!("{param}[{i}]"), missing, unexpected, values);
                }
            }
        }
        _ => {}
    }
}

/// Shows a value without JSON quotes when it is a string, as the error texts quote it themselves.
fn plain(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

pub(crate) fn has_type(value: &Value, expected: &str) -> bool {
    match expected {
        "object" => value.is_object(),
        "string" => value.is_string(),
        "number" => value.is_number(),
        // JSON schema counts 3.0 as an integer; models occasionally send one.
        "integer" => value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f.fract() == 0.0),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "null" => value.is_null(),
        // An unknown type keyword is the schema author's business, not the model's mistake.
        _ => true,
    }
}

pub(crate) fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read_schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "file_path": {"type": "string"},
                "offset": {"type": "integer"},
                "mode": {"type": "string", "enum": ["a", "b"]},
                "tags": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["file_path"],
            "additionalProperties": false
        })
    }

    fn message(input: Value) -> String {
        match validate_input("Read", &read_schema(), &input) {
            Ok(()) => String::from("ok"),
            Err(err) => err.to_string(),
        }
    }

    #[test]
    fn a_valid_input_passes() {
        assert_eq!(message(json!({"file_path": "/a", "offset": 3, "mode": "b", "tags": ["x"]})), "ok");
    }

    #[test]
    fn one_missing_parameter_is_one_issue() {
        assert_eq!(
            message(json!({})),
            "<tool_use_error>InputValidationError: Read failed due to the following issue:\n\
             The required parameter `file_path` is missing</tool_use_error>"
        );
    }

    #[test]
    fn several_problems_are_listed_one_a_line_missing_first() {
        assert_eq!(
            message(json!({"path": "/a"})),
            "<tool_use_error>InputValidationError: Read failed due to the following issues:\n\
             The required parameter `file_path` is missing\n\
             An unexpected parameter `path` was provided</tool_use_error>"
        );
    }

    #[test]
    fn a_wrong_type_names_expected_and_provided_types() {
        assert_eq!(
            message(json!({"file_path": 7})),
            "<tool_use_error>InputValidationError: Read failed due to the following issue:\n\
             The parameter `file_path` type is expected as `string` but provided as `number`</tool_use_error>"
        );
    }

    #[test]
    fn integers_reject_fractions_but_accept_whole_floats() {
        assert_eq!(
            check(&read_schema(), &json!({"file_path": "/a", "offset": 1.5})),
            vec![Issue::WrongType { param: "offset".into(), expected: "integer".into(), provided: "number".into() }]
        );
        assert!(check(&read_schema(), &json!({"file_path": "/a", "offset": 2.0})).is_empty());
    }

    #[test]
    fn enum_and_array_items_are_checked() {
        assert_eq!(
            check(&read_schema(), &json!({"file_path": "/a", "mode": "c", "tags": ["ok", 1]})),
            vec![
                Issue::NotInEnum { param: "mode".into(), allowed: vec!["a".into(), "b".into()], provided: "c".into() },
                Issue::WrongType { param: "tags[1]".into(), expected: "string".into(), provided: "number".into() },
            ]
        );
        assert_eq!(
            Issue::NotInEnum { param: "mode".into(), allowed: vec!["a".into(), "b".into()], provided: "c".into() }
                .to_string(),
            "The parameter `mode` must be one of `a`, `b` but provided as `c`"
        );
    }

    #[test]
    fn a_non_object_input_is_reported() {
        assert_eq!(check(&read_schema(), &json!([1])), vec![Issue::NotAnObject { provided: "array".into() }]);
    }

    #[test]
    fn an_unparseable_input_echoes_at_most_200_bytes_at_a_char_boundary() {
        const COMMON_CAUSES: &str = "Common causes: unescaped backslashes in file paths (use / or \\\\), unescaped control characters, or truncated output. Retry with valid JSON.";
        let short = message(Value::String("{\"file_path\": \"/a".into()));
        assert_eq!(
            short,
            format!(
                "<tool_use_error>InputValidationError: Read was called with input that could not be parsed as JSON.\n\
                 You sent (first 17 of 17 bytes): {{\"file_path\": \"/a\n{COMMON_CAUSES}</tool_use_error>"
            )
        );
        // 199 ASCII bytes then a 2-byte char straddling the 200 limit: the cut falls before it.
        let raw = format!("{}é{}", "x".repeat(199), "y".repeat(50));
        let long = message(Value::String(raw.clone()));
        let expected = format!(
            "<tool_use_error>InputValidationError: Read was called with input that could not be parsed as JSON.\n\
             You sent (first 199 of {} bytes): {}\n{COMMON_CAUSES}</tool_use_error>",
            raw.len(),
            "x".repeat(199)
        );
        assert_eq!(long, expected);
    }
}
