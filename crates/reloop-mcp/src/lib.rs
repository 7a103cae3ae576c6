//! # reloop-mcp: MCP servers' tools for reloop
//!
//! The contract:
//!
//! * This crate speaks MCP (through the official Rust SDK, `rmcp`) and nothing else of reloop: it
//!   knows neither the core, nor the tool registry, nor the journal. It reads Claude Code's
//!   configuration ([`Sources`]), starts every server at once ([`McpSet::start`]; the Agent SDK's
//!   in-process servers with [`McpSet::start_sdk`] over the [`SdkChannel`] the caller provides,
//!   the same rmcp client over another transport), and hands out
//!   [`McpTool`]s: a name (`mcp__<server>__<tool>`), a description, an input schema, a read-only
//!   hint, and an async [`McpTool::call`]. Whoever builds the session (the `reloop` binary) wraps
//!   them as its own tools and decides what to journal.
//! * What a session must keep is plain data: [`ServerRecord`] (the start, ok or failed, and the
//!   tools offered), serializable, so a header can hold it and [`McpSet::from_records`] can offer
//!   the same tools again with no server at all.
//! * Nothing waits forever and nothing panics: starting is bounded by `MCP_TIMEOUT`, each call by
//!   `MCP_TOOL_TIMEOUT` ([`Options::from_env`]); a server that fails to start is a
//!   [`ServerRecord`] with `status: "failed"` and its error; a call that times out, loses its
//!   server or gets garbage is a [`CallOutput`] with `is_error` and a sentence for the model.
//! * Inputs are checked against the server's JSON schema (the `jsonschema` crate, no remote
//!   `$ref`s) before the server sees them; results are mapped to Anthropic content blocks as
//!   Claude Code maps them and capped at `MAX_MCP_OUTPUT_TOKENS`.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod channel;
mod config;
mod content;
mod server;
mod tools;
mod url;

use std::path::Path;
use std::sync::Arc;

pub use channel::SdkChannel;
pub use config::{Approval, Loaded, ServerConfig, Sources, Transport};
pub use content::{CallOutput, MAX_OUTPUT_TOKENS};
pub use server::Options;
pub use tools::{McpTool, ServerRecord, ToolRecord};
pub use url::redact_url;

use server::{connect, connect_sdk, Server};
use tools::record_of;

/// What can go wrong before a session starts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// A configuration source cannot be read or is not a configuration.
    #[error("MCP configuration {origin}: {problem}")]
    Config {
        /// The source: a file's path, `--mcp-config`, or `.mcp.json`.
        origin: String,
        /// What is wrong with it, in a sentence.
        problem: String,
    },
    /// A server did not start (spawn, initialize or tools/list failed, or took too long).
    #[error("MCP server {server:?} failed to start: {problem}")]
    Start {
        /// The server's name in `mcpServers`.
        server: String,
        /// Why it did not start, with the tail of its stderr when it had one.
        problem: String,
    },
}

/// The servers of one session and their tools.
#[derive(Debug, Default)]
pub struct McpSet {
    servers: Vec<Arc<Server>>,
    records: Vec<ServerRecord>,
    tools: Vec<McpTool>,
    /// Tools left out, with why.
    warnings: Vec<String>,
}

/// The longest tool name the model APIs take (`^[a-zA-Z0-9_-]{1,64}$`): a longer one would make
/// every request of the session fail, so such a tool is not offered.
const MAX_TOOL_NAME_CHARS: usize = 64;

impl McpSet {
    /// Starts every configured server at once and lists its tools. A server that fails is
    /// recorded as failed (see [`McpSet::failures`]); the others go on.
    pub async fn start(configs: &[ServerConfig], cwd: &Path, options: &Options) -> McpSet {
        let starts = configs.iter().map(|config| connect(config, cwd, options));
        let results = futures::future::join_all(starts).await;
        let mut set = McpSet::default();
        for (config, result) in configs.iter().zip(results) {
            set.add(&config.name, config.kind(), result);
        }
        set
    }

    /// Starts the host's in-process servers (the Agent SDK's `"type": "sdk"` servers), each named
    /// with its own options (the SDK may set a server's call timeout), at once over `channel`, as
    /// [`McpSet::start`] starts the others.
    pub async fn start_sdk(servers: &[(String, Options)], channel: Arc<dyn SdkChannel>) -> McpSet {
        let starts = servers.iter().map(|(name, options)| connect_sdk(name, channel.clone(), options));
        let results = futures::future::join_all(starts).await;
        let mut set = McpSet::default();
        for ((name, _), result) in servers.iter().zip(results) {
            set.add(name, "sdk", result);
        }
        set
    }

    /// Adds `other`'s servers and tools after this set's.
    pub fn extend(&mut self, other: McpSet) {
        self.servers.extend(other.servers);
        self.records.extend(other.records);
        self.tools.extend(other.tools);
        self.warnings.extend(other.warnings);
    }

    /// Records one server's start and offers its tools (those a model can take, once each).
    fn add(&mut self, name: &str, transport: &str, result: Result<(Server, Vec<serde_json::Value>), McpError>) {
        let (server, listed) = match result {
            Ok(started) => started,
            Err(e) => {
                self.records.push(ServerRecord {
                    name: name.to_string(),
                    transport: transport.to_string(),
                    status: "failed".into(),
                    error: Some(e.to_string()),
                    tools: Vec::new(),
                });
                return;
            }
        };
        let server = Arc::new(server);
        let mut records: Vec<ToolRecord> = Vec::new();
        for record in listed.iter().filter_map(|t| record_of(name, t)) {
            if record.name.len() > MAX_TOOL_NAME_CHARS {
                self.warnings.push(format!(
                    "MCP server {name:?}: tool {:?} is left out: its name {} is longer than the {MAX_TOOL_NAME_CHARS} characters a model accepts",
                    record.server_tool, record.name
                ));
            } else if !records.iter().any(|r| r.name == record.name) {
                records.push(record);
            }
        }
        self.tools.extend(records.iter().map(|r| McpTool::new(r.clone(), name, Some(server.clone()))));
        self.records.push(ServerRecord {
            name: name.to_string(),
            transport: transport.to_string(),
            status: "connected".into(),
            error: None,
            tools: records,
        });
        self.servers.push(server);
    }

    /// The tools `records` list, with no server behind them: offered as they were, and each call
    /// answers that its server is not connected.
    pub fn from_records(records: Vec<ServerRecord>) -> McpSet {
        let tools = records
            .iter()
            .flat_map(|server| server.tools.iter().map(|t| McpTool::new(t.clone(), &server.name, None)))
            .collect();
        McpSet { servers: Vec::new(), records, tools, warnings: Vec::new() }
    }

    /// Each server's start and tools, for the journal.
    pub fn records(&self) -> &[ServerRecord] {
        &self.records
    }

    /// The tools of the connected servers, server by server, in listing order.
    pub fn tools(&self) -> &[McpTool] {
        &self.tools
    }

    /// Tools that were listed but are not offered, with why.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The servers that failed to start, with why.
    pub fn failures(&self) -> impl Iterator<Item = (&str, &str)> {
        self.records.iter().filter_map(|r| r.error.as_deref().map(|e| (r.name.as_str(), e)))
    }
}

/// HTTP servers go through rustls with ring as its crypto (the workspace's model providers
/// already build ring); installed once per process, a second install is a no-op.
fn install_crypto() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}
