//! The control protocol's requests, both ways.
//!
//! From the SDK: `initialize` (hook callbacks, the system prompt, in-process MCP servers),
//! `interrupt`, `set_model`, `set_permission_mode`, `get_context_usage`, `mcp_status`,
//! `mcp_message` (a server's notification); any other subtype is answered with an error naming
//! it. To the SDK: `can_use_tool` where the permission rules would ask ([`SdkPrompt`]),
//! `hook_callback` for the hooks `initialize` registered ([`SdkHooks`]) and `mcp_message` for
//! its in-process MCP servers ([`SdkMcp`]).
//! Their answers come back as events (a `PermissionRequest` or tool hook run), so they are
//! journaled and a replay needs no SDK.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use reloop_core::hook::HookEventName;
use reloop_driver::{PermissionPrompt, PromptRequest};
use reloop_hooks::{HookCallbacks, HookCommand, HookInput, HooksConfig, Matcher, MatcherGroup};
use reloop_mcp::SdkChannel;
use serde_json::{json, Value};

use super::protocol::Wire;

/// The longest model name `set_model` takes: a name is an identifier, not a payload.
pub const MAX_MODEL_NAME: usize = 256;

/// Asks the SDK through `can_use_tool`.
pub struct SdkPrompt(pub Wire);

impl PermissionPrompt for SdkPrompt {
    fn ask(&self, request: PromptRequest) -> BoxFuture<'static, Result<Value, String>> {
        let wire = self.0.clone();
        Box::pin(async move {
            // The prompt's text goes where Claude Code puts what its dialog shows.
            let ask = json!({
                "subtype": "can_use_tool",
                "tool_name": request.tool_name,
                "display_name": request.tool_name,
                "input": request.input,
                "description": request.message,
                "permission_suggestions": permission_suggestions(&request.tool_name),
                "tool_use_id": request.tool_use_id,
            });
            wire.request(ask).await
        })
    }
}

/// What Claude Code suggests the app could allow instead of asking again: for a file edit,
/// switching the session to `acceptEdits` (recorded from 2.1.197 with both SDKs,
/// `fixtures/real/claude-agent-sdk/*/can_use_tool_*`). Other tools get none: what Claude Code
/// suggests for them (rules) is not recorded here.
fn permission_suggestions(tool: &str) -> Value {
    match tool {
        "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => {
            json!([{"type": "setMode", "mode": "acceptEdits", "destination": "session"}])
        }
        _ => json!([]),
    }
}

/// Answers hook callbacks through `hook_callback`.
pub struct SdkHooks(pub Wire);

impl HookCallbacks for SdkHooks {
    fn call(&self, callback_id: &str, input: &HookInput) -> BoxFuture<'static, Result<Value, String>> {
        let wire = self.0.clone();
        let request = json!({
            "subtype": "hook_callback",
            "callback_id": callback_id,
            "input": input,
            "tool_use_id": input.tool_use_id,
        });
        Box::pin(async move { wire.request(request).await })
    }
}

/// Carries the MCP messages of the SDK's in-process servers: each is an `mcp_message` request
/// whose answer holds the server's reply in `mcp_response`. The MCP client is rmcp's
/// (`reloop_mcp::McpSet::start_sdk`); what it learns is journaled like any server's.
pub struct SdkMcp(pub Wire);

impl SdkChannel for SdkMcp {
    fn exchange(&self, server: &str, message: Value) -> BoxFuture<'static, Result<Value, String>> {
        let answer = self.0.send_request(json!({"subtype": "mcp_message", "server_name": server, "message": message}));
        Box::pin(async move {
            match answer.await? {
                Value::Object(mut response) => match response.remove("mcp_response") {
                    Some(reply @ Value::Object(_)) => Ok(reply),
                    _ => Err("the SDK answered mcp_message without an mcp_response object".into()),
                },
                _ => Err("the SDK answered mcp_message without an mcp_response object".into()),
            }
        })
    }
}

/// The answer to an `mcp_message` the SDK sends reloop (an in-process server's own notification,
/// such as `notifications/tools/list_changed`): reloop keeps the tool list it listed at start, so a
/// notification is acknowledged as the SDKs acknowledge one, and a request is refused.
pub fn mcp_message_from_sdk(request: &Value) -> Result<Value, String> {
    let message = request.get("message").filter(|m| m.is_object()).ok_or("mcp_message: no message object")?;
    let reply = match message.get("id").filter(|id| !id.is_null() && message.get("method").is_some()) {
        Some(id) => json!({"jsonrpc": "2.0", "id": id,
            "error": {"code": -32601, "message": "reloop serves no requests from an SDK MCP server"}}),
        None => json!({"jsonrpc": "2.0", "result": {}, "id": 0}),
    };
    Ok(json!({"mcp_response": reply}))
}

/// The most in-process servers `initialize` may name: each is started and journaled.
pub const MAX_SDK_SERVERS: usize = 64;
/// The longest in-process server name taken (it becomes part of tool names, at most 64 long).
const MAX_SDK_SERVER_NAME: usize = 256;

/// What `initialize` asked for.
#[derive(Default)]
pub struct Initialize {
    /// The system prompt the TypeScript SDK sends here (`systemPrompt`, a string or strings).
    pub system_prompt: Option<String>,
    pub append_system_prompt: Option<String>,
    /// Hook callbacks by event: (matcher, callback ids, timeout).
    pub hooks: Vec<(HookEventName, String, Vec<String>, Option<Duration>)>,
    /// The TypeScript SDK's in-process MCP servers (`sdkMcpServers`, names); the Python SDK
    /// names its own in `--mcp-config` (`"type": "sdk"`).
    pub sdk_mcp_servers: Vec<String>,
    /// A call timeout the TypeScript SDK set for one of them (`sdkMcpServerConfigs`, `timeout`
    /// in milliseconds, its `createSdkMcpServer` option); the others use `MCP_TOOL_TIMEOUT`.
    pub sdk_mcp_timeouts: Vec<(String, Duration)>,
    /// The agents the app defined (`agents`, name to definition), as it sent them.
    pub agents: Option<Value>,
    /// The schema of the app's structured output (`jsonSchema`, as `--json-schema`).
    pub json_schema: Option<Value>,
    /// `forwardSubagentText`: a subagent's text and thinking reach the app too, not only its
    /// prompt and tool calls.
    pub forward_subagent_text: bool,
    /// Fields reloop cannot honour, for a warning each.
    pub unhonoured: Vec<&'static str>,
}

impl Initialize {
    /// Reads an `initialize` request. A hook event reloop does not run is named in a warning.
    pub fn parse(request: &Value) -> Result<Self, String> {
        let system_prompt = match request.get("systemPrompt") {
            None | Some(Value::Null) => None,
            Some(Value::String(text)) => Some(text.clone()),
            Some(Value::Array(parts)) => {
                Some(parts.iter().filter_map(Value::as_str).filter(|p| !p.is_empty()).collect::<Vec<_>>().join("\n\n"))
            }
            Some(_) => return Err("initialize: systemPrompt must be a string or a list of strings".into()),
        };
        let mut init = Initialize { system_prompt, ..Initialize::default() };
        init.append_system_prompt = request.get("appendSystemPrompt").and_then(Value::as_str).map(str::to_string);
        if let Some(Value::Object(events)) = request.get("hooks") {
            for (name, groups) in events {
                let Some(event) = HookEventName::parse(name) else {
                    init.unhonoured.push("hooks of events reloop does not know");
                    continue;
                };
                for group in groups.as_array().map(Vec::as_slice).unwrap_or_default() {
                    let matcher = group.get("matcher").and_then(Value::as_str).unwrap_or_default().to_string();
                    let ids: Vec<String> = group
                        .get("hookCallbackIds")
                        .and_then(Value::as_array)
                        .map(|ids| ids.iter().filter_map(Value::as_str).map(str::to_string).collect())
                        .unwrap_or_default();
                    let timeout = group
                        .get("timeout")
                        .and_then(Value::as_f64)
                        .filter(|s| s.is_finite() && *s > 0.0)
                        .and_then(|s| Duration::try_from_secs_f64(s).ok());
                    init.hooks.push((event, matcher, ids, timeout));
                }
            }
        }
        match request.get("sdkMcpServers") {
            None | Some(Value::Null) => {}
            Some(Value::Array(names)) => {
                for name in names {
                    let name = name
                        .as_str()
                        .filter(|n| !n.is_empty() && n.len() <= MAX_SDK_SERVER_NAME)
                        .ok_or("initialize: sdkMcpServers must list server names")?;
                    if !init.sdk_mcp_servers.iter().any(|n| n == name) {
                        init.sdk_mcp_servers.push(name.to_string());
                    }
                }
                if init.sdk_mcp_servers.len() > MAX_SDK_SERVERS {
                    return Err(format!("initialize: more than {MAX_SDK_SERVERS} sdkMcpServers"));
                }
            }
            Some(_) => return Err("initialize: sdkMcpServers must be a list of names".into()),
        }
        if let Some(Value::Object(configs)) = request.get("sdkMcpServerConfigs") {
            for (name, config) in configs.iter().take(MAX_SDK_SERVERS) {
                let ms = config.get("timeout").and_then(Value::as_f64).filter(|ms| ms.is_finite() && *ms >= 1.0);
                if let Some(timeout) = ms.and_then(|ms| Duration::try_from_secs_f64(ms / 1000.0).ok()) {
                    init.sdk_mcp_timeouts.push((name.clone(), timeout));
                }
            }
        }
        init.agents = request.get("agents").filter(|v| v.as_object().is_some_and(|m| !m.is_empty())).cloned();
        init.json_schema = request.get("jsonSchema").filter(|v| v.is_object()).cloned();
        init.forward_subagent_text = request.get("forwardSubagentText").and_then(Value::as_bool).unwrap_or(false);
        Ok(init)
    }

    /// Adds the registered callbacks to `hooks`, answered over `wire`.
    pub fn register(&self, hooks: &mut HooksConfig, wire: &Wire) -> Result<(), String> {
        let handler: Arc<dyn HookCallbacks> = Arc::new(SdkHooks(wire.clone()));
        for (event, matcher, ids, timeout) in &self.hooks {
            let matcher = Matcher::new(matcher).map_err(|e| format!("initialize: hook matcher {matcher:?}: {e}"))?;
            let timeout = timeout.unwrap_or(reloop_hooks::DEFAULT_HOOK_TIMEOUT);
            let hooks_of_group =
                ids.iter().map(|id| HookCommand::callback(id.clone(), timeout, handler.clone())).collect();
            hooks.add_group(*event, MatcherGroup { matcher, hooks: hooks_of_group });
        }
        Ok(())
    }
}

/// The agents an SDK session has: the app's (`--agents` and `initialize`'s `agents`, the
/// latter winning a name both define) as one JSON object; `None` when it defined none.
pub fn sdk_agents(flag: Option<&str>, init: Option<&Value>) -> Result<Option<Value>, String> {
    let mut merged = serde_json::Map::new();
    if let Some(text) = flag {
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => merged.extend(map),
            _ => return Err("--agents: not a JSON object of name to definition".into()),
        }
    }
    if let Some(Value::Object(map)) = init {
        merged.extend(map.clone());
    }
    Ok((!merged.is_empty()).then_some(Value::Object(merged)))
}

/// The agents a session in `cwd` offers with the app's `sdk` ones: built-in, project files,
/// the app's, sorted by name as Claude Code lists them (case aside). Bad app definitions list
/// none of the app's (the session start says why).
pub fn agent_catalog(cwd: &std::path::Path, sdk: Option<&Value>) -> Vec<reloop_driver::agents::AgentDefinition> {
    let mut catalog = reloop_driver::agents::AgentCatalog::load(cwd);
    for definition in sdk.map(reloop_driver::agents::sdk_definitions).and_then(Result::ok).unwrap_or_default() {
        catalog.add(definition);
    }
    let mut all = catalog.definitions().to_vec();
    all.sort_by_key(|d| d.name.to_lowercase());
    all
}

/// The answer to `initialize`: what this CLI offers (`agents` as [`agent_catalog`] lists them,
/// `commands` as [`crate::slash::described`] does).
pub fn initialize_response(
    model: &str,
    agents: &[reloop_driver::agents::AgentDefinition],
    commands: Vec<Value>,
) -> Value {
    let agents: Vec<Value> = agents
        .iter()
        .map(|d| {
            let mut entry = json!({"name": d.name, "description": d.description});
            if let Some(model) = &d.model {
                entry["model"] = json!(model);
            }
            entry
        })
        .collect();
    json!({
        "commands": commands,
        "agents": agents,
        "output_style": "default",
        "available_output_styles": ["default"],
        "models": [{"value": model, "displayName": model, "description": "the model this session asks"}],
        "account": {},
        "pid": std::process::id(),
    })
}

/// A model name `set_model` may switch to: short and printable.
pub fn check_model_name(model: &str) -> Result<(), String> {
    if model.is_empty() || model.len() > MAX_MODEL_NAME || model.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(format!("set_model: not a model name ({} bytes)", model.len()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initialize_registers_hook_callbacks_and_the_system_prompt() {
        let request = json!({"subtype": "initialize",
            "hooks": {"PreToolUse": [{"matcher": "Read", "hookCallbackIds": ["hook_0"]}],
                      "Setup": [{"hookCallbackIds": ["hook_1"]}]},
            "systemPrompt": ["", "be brief"]});
        let init = Initialize::parse(&request).unwrap();
        assert_eq!(init.system_prompt.as_deref(), Some("be brief"));
        assert_eq!(init.hooks.len(), 1);
        assert_eq!(init.unhonoured.len(), 1);
        let mut hooks = HooksConfig::default();
        init.register(&mut hooks, &Wire::default()).unwrap();
        let found = hooks.matching(HookEventName::PreToolUse, Some("Read"));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].command, "callback:hook_0");
        assert!(hooks.matching(HookEventName::PreToolUse, Some("Bash")).is_empty());
    }

    #[test]
    fn initialize_names_the_typescript_sdk_s_in_process_servers_and_refuses_bad_lists() {
        let init = Initialize::parse(&json!({"sdkMcpServers": ["calc", "notes", "calc"],
            "sdkMcpServerConfigs": {"calc": {"timeout": 1500}, "notes": {"timeout": "soon"}}}))
        .unwrap();
        assert_eq!(init.sdk_mcp_servers, ["calc", "notes"]);
        assert_eq!(init.sdk_mcp_timeouts, [("calc".to_string(), Duration::from_millis(1500))]);
        assert!(init.unhonoured.is_empty());
        for bad in [json!({"sdkMcpServers": "calc"}), json!({"sdkMcpServers": [""]}), json!({"sdkMcpServers": [1]})] {
            assert!(Initialize::parse(&bad).is_err(), "{bad}");
        }
        let many: Vec<String> = (0..=MAX_SDK_SERVERS).map(|n| format!("s{n}")).collect();
        assert!(Initialize::parse(&json!({"sdkMcpServers": many})).is_err());
    }

    #[test]
    fn a_server_s_own_mcp_message_is_acknowledged_and_its_requests_refused() {
        let note = json!({"subtype": "mcp_message", "server_name": "calc",
            "message": {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}});
        assert_eq!(
            mcp_message_from_sdk(&note).unwrap(),
            json!({"mcp_response": {"jsonrpc": "2.0", "result": {}, "id": 0}})
        );
        let ask = json!({"subtype": "mcp_message", "server_name": "calc",
            "message": {"jsonrpc": "2.0", "id": 7, "method": "sampling/createMessage"}});
        let refused = mcp_message_from_sdk(&ask).unwrap();
        assert_eq!(refused["mcp_response"]["id"], 7);
        assert_eq!(refused["mcp_response"]["error"]["code"], -32601);
        assert!(mcp_message_from_sdk(&json!({"subtype": "mcp_message"})).is_err());
    }

    #[test]
    fn model_names_are_checked() {
        assert!(check_model_name("claude-haiku-4-5").is_ok());
        assert!(check_model_name("").is_err());
        assert!(check_model_name(&"x".repeat(MAX_MODEL_NAME + 1)).is_err());
        assert!(check_model_name("a b").is_err());
    }
}
