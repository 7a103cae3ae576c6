//! MCP servers' tools in a session: where `reloop-mcp` (which speaks MCP) meets `reloop-tools`
//! (which runs tools), neither knowing the other.
//!
//! The servers are started before the session (the Agent SDK's in-process ones once its control
//! channel is up, before the first prompt), each failure said once on stderr; their tools are
//! registered after the built-in ones; their starts and tool lists go into the session header
//! (`run_config.mcp_servers`, `run_config.tool_specs`), so a replay, `why` and `show` need no
//! server, and a resumed session offers the same tools.

use std::path::Path;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use reloop_core::ContentBlock;
use reloop_mcp::{CallOutput, McpSet, McpTool, Options, SdkChannel, ServerRecord, Sources};
use reloop_tools::{Tool, ToolContext, ToolOutput, ToolRegistry};
use serde_json::Value;

use crate::error::CliError;
use crate::term::errln;

/// How often a waiting call looks at its cancel flag.
const CANCEL_POLL: Duration = Duration::from_millis(20);

/// Starts the servers `--mcp-config` (and, unless `strict`, the project's `.mcp.json`)
/// configure. A configuration that cannot be read is bad input; a server that fails to start is
/// reported and recorded, and the session goes on without its tools, as in Claude Code.
pub(crate) async fn start(
    flags: &[String],
    strict: bool,
    cwd: &Path,
    settings: &serde_json::Map<String, Value>,
) -> Result<McpSet, CliError> {
    Ok(start_deferring_sdk(flags, strict, cwd, settings, false).await?.0)
}

/// As [`start`]; with `defer_sdk` the Agent SDK's in-process servers (`"type": "sdk"`) are not
/// started but named, for [`start_sdk`] once the SDK's control channel is up. Without it they
/// fail to start like any unreachable server.
pub(crate) async fn start_deferring_sdk(
    flags: &[String],
    strict: bool,
    cwd: &Path,
    settings: &serde_json::Map<String, Value>,
    defer_sdk: bool,
) -> Result<(McpSet, Vec<String>), CliError> {
    // A file named on the command line is relative to where the command was typed.
    let here = std::env::current_dir().unwrap_or_else(|_| cwd.to_path_buf());
    let flags = flags
        .iter()
        .map(|f| if f.trim_start().starts_with('{') { f.clone() } else { here.join(f.trim()).display().to_string() })
        .collect();
    let approval = reloop_mcp::Approval::from_settings(settings);
    let sources = Sources { flags, strict, project: cwd.to_path_buf(), approval };
    let loaded = sources.load().map_err(|e| CliError::Usage(e.to_string()))?;
    for name in &loaded.unapproved {
        errln!(
            "reloop: the project's .mcp.json server {name:?} is not started: approve it in the --settings file              (\"enabledMcpjsonServers\": [{name:?}] or \"enableAllProjectMcpServers\": true)"
        );
    }
    let (sdk, configs): (Vec<_>, Vec<_>) =
        loaded.servers.into_iter().partition(|c| defer_sdk && c.transport == reloop_mcp::Transport::Sdk);
    let sdk = sdk.into_iter().map(|c| c.name).collect();
    if configs.is_empty() {
        return Ok((McpSet::default(), sdk));
    }
    let mut options = Options::from_env();
    options.removed_env = reloop_tools::CREDENTIAL_VARS.iter().map(|v| v.to_string()).collect();
    let set = McpSet::start(&configs, cwd, &options).await;
    report(&set);
    Ok((set, sdk))
}

/// Starts the Agent SDK's in-process servers `names` over its control channel, a server's calls
/// bounded by its `timeouts` entry if the SDK gave one, else `MCP_TOOL_TIMEOUT`; failures are
/// reported and recorded as for any server.
pub(crate) async fn start_sdk(
    names: &[String],
    timeouts: &[(String, Duration)],
    channel: Arc<dyn SdkChannel>,
) -> McpSet {
    if names.is_empty() {
        return McpSet::default();
    }
    let servers: Vec<(String, Options)> = names
        .iter()
        .map(|name| {
            let mut options = Options::from_env();
            if let Some((_, timeout)) = timeouts.iter().find(|(n, _)| n == name) {
                options.call_timeout = *timeout;
            }
            (name.clone(), options)
        })
        .collect();
    let set = McpSet::start_sdk(&servers, channel).await;
    report(&set);
    set
}

/// Says on stderr which servers failed and which tools are left out.
fn report(set: &McpSet) {
    for (_, error) in set.failures() {
        errln!("reloop: {error}");
    }
    for warning in set.warnings() {
        errln!("reloop: warning: {warning}");
    }
}

/// Adds the servers' tools to `tools`, after the ones already there.
pub(crate) fn register(set: &McpSet, tools: &mut ToolRegistry) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
    for tool in set.tools() {
        tools.register(Arc::new(McpToolAdapter { tool: tool.clone(), runtime: runtime.clone() }));
    }
}

/// The servers' starts as the header records them.
pub(crate) fn records(set: &McpSet) -> Vec<Value> {
    set.records().iter().filter_map(|r| serde_json::to_value(r).ok()).collect()
}

/// The servers as the Agent SDK sees them (`system/init`'s `mcp_servers`, `mcp_status`):
/// `{"name", "status"}`, with `error` for a server that failed.
pub(crate) fn status(set: &McpSet) -> Vec<Value> {
    set.records()
        .iter()
        .map(|r| {
            let mut line = serde_json::json!({"name": r.name, "status": r.status});
            if let Some(error) = &r.error {
                line["error"] = Value::String(error.clone());
            }
            line
        })
        .collect()
}

/// The tools a session's header recorded, with no server behind them (`reloop resume`, `fork`):
/// offered as they were; a call answers that the server is not connected.
pub(crate) fn register_recorded(recorded: &[Value], tools: &mut ToolRegistry) {
    let records: Vec<ServerRecord> = recorded.iter().filter_map(|r| serde_json::from_value(r.clone()).ok()).collect();
    if records.is_empty() {
        return;
    }
    register(&McpSet::from_records(records), tools);
}

/// An MCP tool as a reloop tool. Tool calls are synchronous (the driver runs them in
/// `spawn_blocking`): the call runs on the runtime and this thread waits for it, looking at the
/// cancel flag, so an abort stops waiting at once (dropping the call cancels it on the server).
#[path = "mcp_images.rs"]
mod images;

struct McpToolAdapter {
    tool: McpTool,
    runtime: tokio::runtime::Handle,
}

impl Tool for McpToolAdapter {
    fn name(&self) -> &str {
        self.tool.name()
    }

    fn description(&self) -> &str {
        &self.tool.record.description
    }

    fn input_schema(&self) -> Value {
        self.tool.record.input_schema.clone()
    }

    fn is_read_only(&self, _input: &Value) -> bool {
        self.tool.record.read_only
    }

    /// Only a tool its server calls read-only (`readOnlyHint`) runs next to others.
    fn is_concurrency_safe(&self, _input: &Value) -> bool {
        self.tool.record.read_only
    }

    fn call(&self, input: &Value, ctx: &ToolContext) -> ToolOutput {
        let (tool, input) = (self.tool.clone(), input.clone());
        let (tx, rx) = mpsc::channel();
        let task = self.runtime.spawn(async move {
            let _ = tx.send(tool.call(&input).await);
        });
        let output = loop {
            match rx.recv_timeout(CANCEL_POLL) {
                Ok(output) => break output,
                Err(mpsc::RecvTimeoutError::Timeout) if ctx.is_cancelled() => {
                    task.abort();
                    return ToolOutput::error("Interrupted by user");
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    break CallOutput::server_failure(format!(
                        "the call to {} ended without an answer",
                        self.tool.name()
                    ))
                }
            }
        };
        if output.server_failed {
            errln!("reloop: {}", output.text());
        }
        let mut output = output;
        if let (Some(dir), false) = (&ctx.results_dir, output.plain) {
            output.blocks = images::saved(std::mem::take(&mut output.blocks), dir, self.tool.server_name());
        }
        let structured = ctx.structured_results.then(|| shown(&output, self.tool.server_name())).flatten();
        ToolOutput { structured, ..to_output(output) }
    }
}

/// What a call answered as data, Claude Code 2.1.332's `tool_use_result` for an MCP tool
/// (tests/print/recorded/2.1.332/sdk_wire/mcp_*): the content as the model got it, the server's
/// `serverInfo` under `_meta`, then its `structuredContent` or its resource links. 2.1.197's
/// is cut from it when printed. `None` for a failure, which keeps its error text instead.
fn shown(output: &CallOutput, server: &str) -> Option<Value> {
    if output.is_error {
        return None;
    }
    let content = if output.plain { Value::String(output.text()) } else { Value::Array(output.blocks.clone()) };
    let info = output.server_info.clone().unwrap_or_else(|| serde_json::json!({"name": server, "version": ""}));
    let mut shown = serde_json::Map::new();
    shown.insert("content".into(), content);
    shown.insert("_meta".into(), serde_json::json!({ MCP_SERVER_INFO: info }));
    if let Some(structured) = &output.structured_content {
        shown.insert("structuredContent".into(), structured.clone());
    }
    if !output.resource_links.is_empty() {
        shown.insert("resourceLinks".into(), Value::Array(output.resource_links.clone()));
    }
    Some(Value::Object(shown))
}

/// The `_meta` key under which 2.1.332 names the server that answered.
pub(crate) const MCP_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// As Claude Code sends it: a `structuredContent` answer (and reloop's failures) as a string,
/// any other as its blocks, even text alone (tests/print/recorded/*/sdk_wire/mcp_*).
fn to_output(output: CallOutput) -> ToolOutput {
    if output.plain {
        let text = output.text();
        return if output.is_error { ToolOutput::error(text) } else { ToolOutput::ok(text) };
    }
    let blocks: Vec<ContentBlock> =
        output.blocks.into_iter().filter_map(|block| serde_json::from_value(block).ok()).collect();
    ToolOutput::with_blocks(blocks, output.is_error)
}
