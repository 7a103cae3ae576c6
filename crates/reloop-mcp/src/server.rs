//! One connected server: start it (stdio child or streamable HTTP), list its tools, call them,
//! each step under a timeout.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;
use tokio::io::AsyncReadExt;

use crate::channel::{ChannelTransport, SdkChannel};
use crate::config::{ServerConfig, Transport};
use crate::content::{map_result, CallOutput};
use crate::McpError;

/// Claude Code's default startup timeout (`MCP_TIMEOUT`), in milliseconds.
pub(crate) const DEFAULT_STARTUP_TIMEOUT_MS: u64 = 30_000;
/// reloop's default for one call (`MCP_TOOL_TIMEOUT`), in milliseconds: ten minutes, Bash's
/// longest. Claude Code's is about 28 hours, which is a hang by another name.
pub(crate) const DEFAULT_CALL_TIMEOUT_MS: u64 = 600_000;
/// How much of a stdio server's stderr is kept for messages.
const STDERR_TAIL_BYTES: usize = 2048;

/// Timeouts and limits for every server of a session.
#[derive(Debug, Clone)]
pub struct Options {
    /// Connecting, initializing and listing the tools.
    pub startup_timeout: Duration,
    /// One `tools/call`.
    pub call_timeout: Duration,
    /// Environment variables a stdio server does not inherit (reloop's own credentials), unless
    /// its configuration sets them.
    pub removed_env: Vec<String>,
    /// The cap on one result, in tokens.
    pub max_output_tokens: usize,
}

impl Options {
    /// `MCP_TIMEOUT` and `MCP_TOOL_TIMEOUT` (milliseconds, Claude Code's names) and
    /// `MAX_MCP_OUTPUT_TOKENS`, else the defaults.
    pub fn from_env() -> Self {
        let ms = |name: &str, default: u64| {
            let ms = std::env::var(name).ok().and_then(|v| v.trim().parse::<u64>().ok()).filter(|n| *n > 0);
            Duration::from_millis(ms.unwrap_or(default))
        };
        Options {
            startup_timeout: ms("MCP_TIMEOUT", DEFAULT_STARTUP_TIMEOUT_MS),
            call_timeout: ms("MCP_TOOL_TIMEOUT", DEFAULT_CALL_TIMEOUT_MS),
            removed_env: Vec::new(),
            max_output_tokens: crate::content::max_output_tokens(),
        }
    }
}

/// The last bytes a stdio server wrote to stderr, and how many it wrote in all.
#[derive(Clone, Default)]
struct StderrTail(Arc<Mutex<(Vec<u8>, u64)>>);

impl StderrTail {
    fn push(&self, bytes: &[u8]) {
        let mut guard = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let (tail, total) = &mut *guard;
        tail.extend_from_slice(bytes);
        *total += bytes.len() as u64;
        if tail.len() > STDERR_TAIL_BYTES {
            let drop = tail.len() - STDERR_TAIL_BYTES;
            tail.drain(..drop);
        }
    }

    /// How many bytes the server has written so far.
    fn mark(&self) -> u64 {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).1
    }

    /// ` (stderr: …)` with what the server wrote since `mark`, when it wrote anything.
    fn suffix_since(&self, mark: u64) -> String {
        let guard = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let (tail, total) = &*guard;
        let new = usize::try_from(total.saturating_sub(mark)).unwrap_or(usize::MAX).min(tail.len());
        let text = String::from_utf8_lossy(&tail[tail.len() - new..]);
        let text = text.trim();
        if text.is_empty() {
            String::new()
        } else {
            format!(" (stderr: {text})")
        }
    }

    fn suffix(&self) -> String {
        self.suffix_since(0)
    }
}

/// A server that answered `initialize` and `tools/list`.
pub(crate) struct Server {
    name: String,
    service: RunningService<RoleClient, ()>,
    stderr: StderrTail,
    options: Options,
    /// An HTTP server's URL, scrubbed from the failures of its calls ([`crate::url::scrub`]).
    url: Option<String>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").field("name", &self.name).finish()
    }
}

/// Starts `config`'s server and lists its tools, all within [`Options::startup_timeout`].
pub(crate) async fn connect(
    config: &ServerConfig,
    cwd: &std::path::Path,
    options: &Options,
) -> Result<(Server, Vec<Value>), McpError> {
    let failed = |problem: String| McpError::Start { server: config.name.clone(), problem };
    let stderr = StderrTail::default();
    let start = async {
        let service = match &config.transport {
            Transport::Stdio { command, args, env } => {
                let mut cmd = tokio::process::Command::new(command);
                cmd.args(args).current_dir(cwd).kill_on_drop(true);
                for name in &options.removed_env {
                    if !env.contains_key(name) {
                        cmd.env_remove(name);
                    }
                }
                cmd.envs(env);
                let (transport, err) = TokioChildProcess::builder(cmd)
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .map_err(|e| failed(format!("cannot run {command:?}: {e}")))?;
                if let Some(mut err) = err {
                    let tail = stderr.clone();
                    tokio::spawn(async move {
                        let mut buf = [0u8; 1024];
                        while let Ok(n) = err.read(&mut buf).await {
                            if n == 0 {
                                break;
                            }
                            tail.push(&buf[..n]);
                        }
                    });
                }
                ().serve(transport).await.map_err(|e| failed(format!("initialize failed: {e}")))?
            }
            Transport::Http { url, headers } => {
                crate::install_crypto();
                let mut custom = std::collections::HashMap::new();
                for (name, value) in headers {
                    let name = reqwest_header_name(name).ok_or_else(|| failed(format!("bad header name {name:?}")))?;
                    let value = http::HeaderValue::from_str(value)
                        .map_err(|_| failed(format!("bad value for header {name}")))?;
                    custom.insert(name, value);
                }
                let config = StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(custom);
                let transport = StreamableHttpClientTransport::from_config(config);
                ().serve(transport).await.map_err(|e| failed(format!("initialize failed: {e}")))?
            }
            Transport::Sdk => return Err(failed(NO_SDK_CHANNEL.into())),
        };
        let tools = service.peer().list_all_tools().await.map_err(|e| failed(format!("tools/list failed: {e}")))?;
        let tools: Vec<Value> = tools.iter().filter_map(|t| serde_json::to_value(t).ok()).collect();
        Ok::<_, McpError>((service, tools))
    };
    let url = match &config.transport {
        Transport::Http { url, .. } => Some(url.clone()),
        _ => None,
    };
    let (service, tools) = match tokio::time::timeout(options.startup_timeout, start).await {
        Ok(Ok(started)) => started,
        Ok(Err(McpError::Start { server, problem })) => {
            // The error may quote the URL (reqwest's does), with a token in its query.
            let problem = match &url {
                Some(url) => crate::url::scrub(&problem, url) + redirect_hint(&problem),
                None => problem,
            };
            return Err(McpError::Start { server, problem: format!("{problem}{}", stderr.suffix()) });
        }
        Ok(Err(other)) => return Err(other),
        Err(_) => {
            return Err(failed(format!(
                "no answer within {} ms (MCP_TIMEOUT){}",
                options.startup_timeout.as_millis(),
                stderr.suffix()
            )))
        }
    };
    let server = Server { name: config.name.clone(), service, stderr, options: options.clone(), url: url.clone() };
    Ok((server, tools))
}

/// Why an in-process server cannot start where no Agent SDK carries its messages.
const NO_SDK_CHANNEL: &str = "an in-process server of the Agent SDK (\"type\": \"sdk\") is reachable only when the SDK runs reloop (print mode with --input-format stream-json)";

/// Starts the in-process server `name` over the host's `channel` and lists its tools, all within
/// [`Options::startup_timeout`]; a call is bounded by [`Options::call_timeout`] as for any server.
pub(crate) async fn connect_sdk(
    name: &str,
    channel: Arc<dyn SdkChannel>,
    options: &Options,
) -> Result<(Server, Vec<Value>), McpError> {
    let failed = |problem: String| McpError::Start { server: name.to_string(), problem };
    // Past the callers' own timeouts (which word the failure), only to forget a lost request.
    let bound = options.startup_timeout.max(options.call_timeout) + Duration::from_secs(1);
    let start = async {
        let transport = ChannelTransport::new(name, channel, bound);
        let service = ().serve(transport).await.map_err(|e| failed(format!("initialize failed: {e}")))?;
        let tools = service.peer().list_all_tools().await.map_err(|e| failed(format!("tools/list failed: {e}")))?;
        let tools: Vec<Value> = tools.iter().filter_map(|t| serde_json::to_value(t).ok()).collect();
        Ok::<_, McpError>((service, tools))
    };
    let (service, tools) = tokio::time::timeout(options.startup_timeout, start)
        .await
        .map_err(|_| failed(format!("no answer within {} ms (MCP_TIMEOUT)", options.startup_timeout.as_millis())))??;
    let server =
        Server { name: name.to_string(), service, stderr: StderrTail::default(), options: options.clone(), url: None };
    Ok((server, tools))
}

/// Why a redirect stopped the start, for an error rmcp words as a bare 3xx response: its client
/// follows only a 307 or 308 within the origin, so the custom headers (credentials) and the
/// JSON-RPC body never reach another origin, and says no more than the status.
fn redirect_hint(problem: &str) -> &'static str {
    if problem.contains("unexpected server response: HTTP 3") {
        "; the server answered with a redirect, which is followed only when it is a 307 or 308 within the same \
         origin (scheme, host, port), so neither the headers nor the request were sent where it pointed: \
         configure the URL that answers"
    } else {
        ""
    }
}

fn reqwest_header_name(name: &str) -> Option<http::HeaderName> {
    http::HeaderName::from_bytes(name.as_bytes()).ok()
}

impl Server {
    /// Calls `tool` (the server's own name) with `arguments`. Every failure — the timeout, a
    /// closed connection, a protocol error, a garbled answer — is an error output worded for the
    /// model; none is a panic or a hang.
    pub async fn call(&self, tool: &str, arguments: &Value) -> CallOutput {
        let Value::Object(arguments) = arguments.clone() else {
            return CallOutput::error("MCP tool input must be a JSON object");
        };
        let mut params = CallToolRequestParams::new(tool.to_string());
        params.arguments = Some(arguments);
        let mark = self.stderr.mark();
        let call = self.service.peer().call_tool(params);
        match tokio::time::timeout(self.options.call_timeout, call).await {
            Ok(Ok(result)) => match serde_json::to_value(&result) {
                Ok(value) => {
                    let mut output = map_result(&self.name, &value, self.options.max_output_tokens);
                    output.server_info = self
                        .service
                        .peer_info()
                        .and_then(|info| info.server_info.clone())
                        .map(|s| serde_json::json!({"name": s.name, "version": s.version}));
                    output
                }
                Err(e) => {
                    CallOutput::error(format!("MCP server {:?} answered a result reloop cannot read: {e}", self.name))
                }
            },
            Ok(Err(e)) => {
                let e = e.to_string();
                let e = self.url.as_deref().map_or_else(|| e.clone(), |url| crate::url::scrub(&e, url));
                CallOutput::server_failure(format!(
                    "MCP server {:?} failed the call to {tool} ({e}): the server may have stopped{}",
                    self.name,
                    self.stderr.suffix_since(mark)
                ))
            }
            Err(_) => CallOutput::server_failure(format!(
                "MCP server {:?} did not answer {tool} within {} ms (MCP_TOOL_TIMEOUT)",
                self.name,
                self.options.call_timeout.as_millis()
            )),
        }
    }
}
