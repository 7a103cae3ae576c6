//! The `StructuredOutput` tool of `--json-schema` (and the SDKs' `output_format`): the model
//! answers by calling it with an input the schema describes. Its description, success text and
//! error wording are Claude Code's (its bundled code and the recordings under
//! `crates/reloop-import/tests/recorded/*/structured_output/`): an invalid input is answered
//! `Output does not match required schema: ` and the errors as Ajv words them, so the model
//! corrects itself as it would under Claude Code. What a call means for the loop (the turn
//! ends, or the run after five failures) is the core's (`reloop_core::structured`).

use std::sync::Arc;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use reloop_tools::{Tool, ToolContext, ToolOutput};
use serde_json::Value;

/// Claude Code's description of the tool, verbatim.
const DESCRIPTION: &str = "Use this tool to return your final response in the requested structured format. You MUST \
call this tool exactly once at the end of your response to provide the structured output.";

/// What a valid call is answered.
pub const SUCCESS: &str = "Structured output provided successfully";

/// The longest schema taken: it goes to the model with every request.
const MAX_SCHEMA_BYTES: usize = 256 * 1024;

/// The tool for `schema`, or why the schema is refused (not an object schema, not valid JSON
/// Schema, too large).
pub fn tool(schema: &Value) -> Result<Arc<dyn Tool>, String> {
    if schema.to_string().len() > MAX_SCHEMA_BYTES {
        return Err(format!("the JSON schema is over {MAX_SCHEMA_BYTES} bytes"));
    }
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err("the root schema must declare type: 'object' (the API rejects any other root type for a \
             tool input schema); wrap arrays or primitives in an object property"
            .into());
    }
    let validator = jsonschema::validator_for(schema).map_err(|e| format!("not a valid JSON schema: {e}"))?;
    Ok(Arc::new(StructuredOutput { schema: schema.clone(), validator }))
}

/// The schema `--json-schema` gives: inline JSON.
pub fn parse_schema(text: &str) -> Result<Value, String> {
    serde_json::from_str(text).map_err(|e| format!("--json-schema: not JSON: {e}"))
}

struct StructuredOutput {
    schema: Value,
    validator: jsonschema::Validator,
}

impl Tool for StructuredOutput {
    fn name(&self) -> &str {
        reloop_core::structured::TOOL
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn input_schema(&self) -> Value {
        self.schema.clone()
    }

    fn is_read_only(&self, _input: &Value) -> bool {
        true
    }

    fn is_concurrency_safe(&self, _input: &Value) -> bool {
        true
    }

    fn is_instant(&self, _input: &Value) -> bool {
        true
    }

    fn validates_own_input(&self) -> bool {
        true
    }

    fn call(&self, input: &Value, _ctx: &ToolContext) -> ToolOutput {
        match check(&self.validator, input) {
            // Claude Code keeps its answer's text as the call's `tool_use_result` too.
            None => ToolOutput::ok(SUCCESS).with_structured(Some(Value::String(SUCCESS.to_string()))),
            Some(errors) => ToolOutput::error(format!("Output does not match required schema: {errors}")),
        }
    }
}

/// The errors of `input`, as Claude Code lists them (`PATH: MESSAGE, ...`), or `None` if valid.
fn check(validator: &jsonschema::Validator, input: &Value) -> Option<String> {
    let errors: Vec<String> = validator
        .iter_errors(input)
        .take(32)
        .map(|e| {
            let path = e.instance_path().to_string();
            let path = if path.is_empty() { "root".to_string() } else { path };
            format!("{path}: {}", ajv_message(e.kind(), &e.to_string(), at(input, &path)))
        })
        .collect();
    (!errors.is_empty()).then(|| errors.join(", "))
}

/// The value at a JSON pointer of `input` (for the `(got N)` notes).
fn at<'a>(input: &'a Value, path: &str) -> Option<&'a Value> {
    if path == "root" {
        Some(input)
    } else {
        input.pointer(path)
    }
}

/// Ajv's message for an error, with the notes Claude Code adds; jsonschema's own text for a
/// keyword without a rule here.
fn ajv_message(kind: &ValidationErrorKind, fallback: &str, value: Option<&Value>) -> String {
    let got = |n: Option<usize>| n.map(|n| format!(" (got {n})")).unwrap_or_default();
    match kind {
        ValidationErrorKind::Required { property } => {
            format!("must have required property '{}'", property.as_str().unwrap_or_default())
        }
        ValidationErrorKind::Type { kind } => match kind {
            TypeKind::Single(t) => format!("must be {t}"),
            TypeKind::Multiple(set) => {
                format!("must be {}", set.iter().map(|t| t.as_str()).collect::<Vec<_>>().join(","))
            }
        },
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let base = "must NOT have additional properties".to_string();
            match unexpected.first() {
                Some(name) => format!("{base} ('{name}' is not allowed)"),
                None => base,
            }
        }
        ValidationErrorKind::Enum { options } => {
            format!("must be equal to one of the allowed values: {options}")
        }
        ValidationErrorKind::Constant { expected_value } => format!("must be equal to constant: {expected_value}"),
        ValidationErrorKind::Minimum { limit } => format!("must be >= {limit}"),
        ValidationErrorKind::Maximum { limit } => format!("must be <= {limit}"),
        ValidationErrorKind::ExclusiveMinimum { limit } => format!("must be > {limit}"),
        ValidationErrorKind::ExclusiveMaximum { limit } => format!("must be < {limit}"),
        ValidationErrorKind::MinLength { limit } => format!(
            "must NOT have fewer than {limit} characters{}",
            got(value.and_then(Value::as_str).map(|s| s.chars().count()))
        ),
        ValidationErrorKind::MaxLength { limit } => format!(
            "must NOT have more than {limit} characters{}",
            got(value.and_then(Value::as_str).map(|s| s.chars().count()))
        ),
        ValidationErrorKind::MinItems { limit } => {
            format!("must NOT have fewer than {limit} items{}", got(value.and_then(Value::as_array).map(Vec::len)))
        }
        ValidationErrorKind::MaxItems { limit } => {
            format!("must NOT have more than {limit} items{}", got(value.and_then(Value::as_array).map(Vec::len)))
        }
        ValidationErrorKind::MinProperties { limit } => format!(
            "must NOT have fewer than {limit} properties{}",
            got(value.and_then(Value::as_object).map(serde_json::Map::len))
        ),
        ValidationErrorKind::MaxProperties { limit } => format!(
            "must NOT have more than {limit} properties{}",
            got(value.and_then(Value::as_object).map(serde_json::Map::len))
        ),
        ValidationErrorKind::Pattern { pattern } => format!("must match pattern \"{pattern}\""),
        ValidationErrorKind::AnyOf { .. } => "must match a schema in anyOf".to_string(),
        ValidationErrorKind::OneOfNotValid { .. } | ValidationErrorKind::OneOfMultipleValid { .. } => {
            "must match exactly one schema in oneOf".to_string()
        }
        ValidationErrorKind::Not { .. } => "must NOT be valid".to_string(),
        ValidationErrorKind::UniqueItems => "must NOT have duplicate items".to_string(),
        _ => fallback.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn answer(schema: Value, input: Value) -> ToolOutput {
        tool(&schema).unwrap().call(&input, &ToolContext::new(std::env::temp_dir()))
    }

    #[test]
    fn errors_read_as_claude_code_s() {
        let schema = json!({"type": "object", "properties": {"file": {"type": "string"}, "issues": {"type": "integer"}},
            "required": ["file", "issues"]});
        // Recorded from both versions for this schema and input.
        let out = answer(schema.clone(), json!({"file": "login.ts"}));
        assert!(out.is_error);
        assert_eq!(out.content, "Output does not match required schema: root: must have required property 'issues'");
        let out = answer(schema.clone(), json!({"file": "login.ts", "issues": 1}));
        assert_eq!((out.content.as_str(), out.is_error), (SUCCESS, false));
        let out = answer(schema, json!({"file": 3, "issues": 1}));
        assert_eq!(out.content, "Output does not match required schema: /file: must be string");
        let closed = json!({"type": "object", "properties": {"a": {"type": "string", "minLength": 3}},
            "additionalProperties": false});
        let out = answer(closed, json!({"a": "xy", "b": 1}));
        assert!(
            out.content.contains("root: must NOT have additional properties ('b' is not allowed)"),
            "{}",
            out.content
        );
        assert!(out.content.contains("/a: must NOT have fewer than 3 characters (got 2)"), "{}", out.content);
    }

    #[test]
    fn a_schema_that_is_no_object_schema_is_refused() {
        assert!(tool(&json!({"type": "array"})).err().unwrap().contains("type: 'object'"));
        assert!(tool(&json!({"type": "object", "properties": {"a": {"type": 5}}})).is_err());
        assert!(parse_schema("{nope").is_err());
    }
}
