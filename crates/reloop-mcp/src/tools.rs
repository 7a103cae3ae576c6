//! The tools of the session's servers: their journaled records, their names as the model sees
//! them, their input schemas compiled once, and the calls.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::content::CallOutput;
use crate::server::Server;

/// Claude Code's cap on an MCP tool's description, in characters.
pub(crate) const MAX_DESCRIPTION_CHARS: usize = 2048;

/// A server as the session header records it: its start and the tools it offered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerRecord {
    /// The server's name in `mcpServers`.
    pub name: String,
    /// `stdio`, `http` or `sdk` (a server inside the Agent SDK's process).
    pub transport: String,
    /// `connected` or `failed`.
    pub status: String,
    /// Why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The tools offered to the model (none when it failed).
    #[serde(default)]
    pub tools: Vec<ToolRecord>,
}

/// One tool as offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolRecord {
    /// `mcp__<server>__<tool>`, normalized.
    pub name: String,
    /// The tool's name on its server.
    pub server_tool: String,
    /// The server's description, cut to Claude Code's cap.
    pub description: String,
    /// The JSON schema inputs are checked against, an object schema.
    pub input_schema: Value,
    /// The server's `readOnlyHint`: only then may the call run next to others.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub read_only: bool,
}

/// Claude Code's form of a server or tool name inside `mcp__…__…`: anything but ASCII letters,
/// digits, `_` and `-` becomes `_`.
pub(crate) fn normalize(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect()
}

/// `mcp__<server>__<tool>`.
pub(crate) fn tool_name(server: &str, tool: &str) -> String {
    format!("mcp__{}__{}", normalize(server), normalize(tool))
}

/// The record of one tool from its `tools/list` entry (JSON on the wire); `None` for an entry
/// without a name.
pub(crate) fn record_of(server: &str, tool: &Value) -> Option<ToolRecord> {
    let name = tool.get("name").and_then(Value::as_str).filter(|n| !n.is_empty())?;
    let description: String = tool
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .chars()
        .take(MAX_DESCRIPTION_CHARS)
        .collect();
    let mut input_schema = tool.get("inputSchema").cloned().filter(Value::is_object).unwrap_or_default();
    if input_schema.get("type").is_none() {
        // The Messages API wants an object schema; MCP's are objects by definition.
        input_schema["type"] = Value::String("object".into());
    }
    let read_only = tool.pointer("/annotations/readOnlyHint").and_then(Value::as_bool).unwrap_or(false);
    Some(ToolRecord {
        name: tool_name(server, name),
        server_tool: name.to_string(),
        description,
        input_schema,
        read_only,
    })
}

/// A tool the model may call; its server may be gone (a session resumed without it).
#[derive(Clone)]
pub struct McpTool {
    /// What the model is offered, as the session header records it.
    pub record: ToolRecord,
    server_name: String,
    server: Option<Arc<Server>>,
    validator: Result<Arc<jsonschema::Validator>, String>,
}

impl std::fmt::Debug for McpTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTool").field("name", &self.record.name).field("connected", &self.server.is_some()).finish()
    }
}

impl McpTool {
    /// The tool `record` on `server` (`None`: not connected; calls answer so).
    pub(crate) fn new(record: ToolRecord, server_name: &str, server: Option<Arc<Server>>) -> Self {
        let validator = jsonschema::validator_for(&record.input_schema).map(Arc::new).map_err(|e| e.to_string());
        McpTool { record, server_name: server_name.to_string(), server, validator }
    }

    /// The name the model calls it by, `mcp__<server>__<tool>`.
    pub fn name(&self) -> &str {
        &self.record.name
    }

    /// Checks `input` against the server's input schema; the error is the `tool_result` text.
    pub fn validate(&self, input: &Value) -> Result<(), String> {
        let name = &self.record.name;
        if let Value::String(raw) = input {
            let shown: String = raw.chars().take(200).collect();
            return Err(format!(
                "<tool_use_error>InputValidationError: {name} was called with input that could not be parsed as JSON.\nYou sent: {shown}</tool_use_error>"
            ));
        }
        let validator = self.validator.as_ref().map_err(|e| {
            format!("<tool_use_error>Error: the MCP server {:?} gave {name} an input schema that is not valid JSON schema: {e}</tool_use_error>", self.server_name)
        })?;
        let issues: Vec<String> = validator
            .iter_errors(input)
            .take(20)
            .map(|e| {
                let at = e.instance_path().as_str().to_string();
                if at.is_empty() {
                    e.to_string()
                } else {
                    format!("{at}: {e}")
                }
            })
            .collect();
        if issues.is_empty() {
            return Ok(());
        }
        Err(format!(
            "<tool_use_error>InputValidationError: {name} failed due to the following {}:\n{}</tool_use_error>",
            if issues.len() > 1 { "issues" } else { "issue" },
            issues.join("\n")
        ))
    }

    /// The server the tool belongs to, as configured (an MCP image's saved file names it).
    pub fn server_name(&self) -> &str {
        &self.server_name
    }

    /// Validates, then calls the server.
    pub async fn call(&self, input: &Value) -> CallOutput {
        if let Err(text) = self.validate(input) {
            return CallOutput::error(text);
        }
        match &self.server {
            Some(server) => server.call(&self.record.server_tool, input).await,
            None => CallOutput::server_failure(format!(
                "MCP server {:?} is not connected: {} cannot be called",
                self.server_name, self.record.name
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn names_follow_claude_codes_mcp_prefix_and_normalization() {
        assert_eq!(tool_name("my server", "get.thing"), "mcp__my_server__get_thing");
        assert_eq!(tool_name("a-b", "c_d"), "mcp__a-b__c_d");
    }

    #[test]
    fn a_listed_tool_keeps_its_schema_and_read_only_hint() {
        let record = record_of(
            "s",
            &json!({"name": "echo", "description": "Echoes.", "inputSchema": {"type": "object", "properties": {"t": {"type": "string"}}},
                    "annotations": {"readOnlyHint": true}}),
        )
        .unwrap();
        assert_eq!(record.name, "mcp__s__echo");
        assert!(record.read_only);
        assert_eq!(record.input_schema["properties"]["t"]["type"], "string");
        let plain = record_of("s", &json!({"name": "w", "inputSchema": {}})).unwrap();
        assert!(!plain.read_only);
        assert_eq!(plain.input_schema, json!({"type": "object"}));
        assert!(record_of("s", &json!({"description": "no name"})).is_none());
    }

    #[tokio::test]
    async fn inputs_are_checked_against_the_schema_before_the_server_is_asked() {
        let record = record_of(
            "s",
            &json!({"name": "add", "inputSchema": {"type": "object", "properties": {"a": {"type": "integer", "minimum": 0}}, "required": ["a"]}}),
        )
        .unwrap();
        let tool = McpTool::new(record, "s", None);
        let missing = tool.call(&json!({})).await;
        assert!(missing.is_error);
        assert_eq!(
            missing.text(),
            "<tool_use_error>InputValidationError: mcp__s__add failed due to the following issue:\n\"a\" is a required property</tool_use_error>"
        );
        let negative = tool.validate(&json!({"a": -1})).unwrap_err();
        assert!(negative.contains("/a: -1 is less than the minimum of 0"), "{negative}");
        // A valid input reaches the server, which is not connected here.
        let gone = tool.call(&json!({"a": 1})).await;
        assert_eq!(gone.text(), "MCP server \"s\" is not connected: mcp__s__add cannot be called");
    }
}
