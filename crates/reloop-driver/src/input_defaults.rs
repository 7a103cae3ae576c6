//! The defaults Claude Code fills into a tool call's input when it parses it, so its history,
//! its stream and its transcript show them although the model never sent them (flag 25).
//!
//! Evidence: both recorded versions (`tests/print/recorded/*/tool_results/{success,errors}`)
//! show every Edit the model sent without `replace_all` as `{"replace_all":false,…}`, the
//! default first, on stdout's `assistant` line and in every later request's history, whether
//! the Edit then succeeded or failed. No recording shows an Edit that sent `replace_all` itself
//! or an input that fails validation; both are kept as sent.

use serde_json::{Map, Value};

/// `input` of a call of `tool` with the defaults Claude Code fills in.
pub(crate) fn with_defaults(tool: &str, input: Value) -> Value {
    match input {
        Value::Object(map) if tool == "Edit" && is_edit(&map) && !map.contains_key("replace_all") => {
            let mut filled = Map::with_capacity(map.len() + 1);
            filled.insert("replace_all".to_string(), Value::Bool(false));
            filled.extend(map);
            Value::Object(filled)
        }
        other => other,
    }
}

/// Whether an Edit input carries its three required strings (what Claude Code's parse needs
/// before it fills in a default).
fn is_edit(map: &Map<String, Value>) -> bool {
    ["file_path", "old_string", "new_string"].iter().all(|key| map.get(*key).is_some_and(Value::is_string))
}

#[cfg(test)]
mod tests {
    use super::with_defaults;
    use serde_json::json;

    #[test]
    fn an_edit_without_replace_all_gets_it_first_as_recorded() {
        let v = with_defaults("Edit", json!({"file_path": "/a", "old_string": "beta", "new_string": "BETA"}));
        assert_eq!(v.to_string(), r#"{"replace_all":false,"file_path":"/a","old_string":"beta","new_string":"BETA"}"#);
    }

    #[test]
    fn a_given_replace_all_an_invalid_edit_and_other_tools_are_kept() {
        for (tool, input) in [
            ("Edit", json!({"file_path": "/a", "old_string": "o", "new_string": "n", "replace_all": true})),
            ("Edit", json!({"file_path": "/a", "old_string": "o"})),
            ("Edit", json!({"file_path": 7, "old_string": "o", "new_string": "n"})),
            ("Edit", json!("raw")),
            ("Write", json!({"file_path": "/a", "content": "x"})),
            ("MultiEdit", json!({"file_path": "/a", "old_string": "o", "new_string": "n"})),
        ] {
            assert_eq!(with_defaults(tool, input.clone()), input, "{tool}");
        }
    }
}
