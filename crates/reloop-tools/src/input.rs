//! Typed access to a validated tool input.
//!
//! The registry has already checked types against the schema, so these accessors only decide
//! defaults; a wrong type seen here (a direct `Tool::call` bypassing the registry) is reported,
//! never panicked on.

use serde_json::Value;

use crate::error::ToolError;

pub(crate) fn string<'a>(input: &'a Value, key: &str) -> Result<&'a str, ToolError> {
    input
        .get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::InvalidArgument(format!("The required parameter `{key}` is missing")))
}

pub(crate) fn opt_string<'a>(input: &'a Value, key: &str) -> Option<&'a str> {
    input.get(key).and_then(Value::as_str)
}

/// An integer, accepting whole floats like `3.0` as the validator does.
pub(crate) fn opt_int(input: &Value, key: &str) -> Option<i64> {
    let value = input.get(key)?;
    value.as_i64().or_else(|| value.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
}

pub(crate) fn opt_bool(input: &Value, key: &str) -> Option<bool> {
    input.get(key).and_then(Value::as_bool)
}
