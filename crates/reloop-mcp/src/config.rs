//! Claude Code's MCP configuration: `{"mcpServers": {"name": {...}}}` from `--mcp-config` (a file
//! or inline JSON, repeatable) and from the project's `.mcp.json` (skipped with
//! `--strict-mcp-config`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use crate::McpError;

/// How reloop reaches one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// A child process speaking JSON-RPC over its stdin and stdout.
    Stdio {
        /// The program to start, found on `PATH` when it is not a path.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables set for it on top of the environment it inherits.
        env: BTreeMap<String, String>,
    },
    /// A streamable-HTTP endpoint.
    Http {
        /// The endpoint; it may carry secrets, so messages show it through [`crate::redact_url`].
        url: String,
        /// Headers sent with every request (an `Authorization`, say).
        headers: BTreeMap<String, String>,
    },
    /// A server inside the Agent SDK's process (`"type": "sdk"`), reached through the SDK's
    /// control channel under the entry's name.
    Sdk,
}

/// One configured server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// The name in `mcpServers`, as the user wrote it (tool names use its normalized form).
    pub name: String,
    /// How to reach it.
    pub transport: Transport,
    /// Where the entry came from (`.mcp.json`, a file, `--mcp-config`), for messages.
    pub origin: String,
}

impl ServerConfig {
    /// `stdio`, `http` or `sdk`.
    pub fn kind(&self) -> &'static str {
        match self.transport {
            Transport::Stdio { .. } => "stdio",
            Transport::Http { .. } => "http",
            Transport::Sdk => "sdk",
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct File {
    #[serde(default)]
    mcp_servers: serde_json::Map<String, Value>,
}

#[derive(Deserialize)]
struct Entry {
    #[serde(rename = "type")]
    kind: Option<String>,
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
}

/// Where the servers of a session are configured.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    /// The `--mcp-config` values, in order: a path, or JSON text starting with `{`.
    pub flags: Vec<String>,
    /// `--strict-mcp-config`: the project's `.mcp.json` is not read.
    pub strict: bool,
    /// The project folder whose `.mcp.json` is read.
    pub project: PathBuf,
    /// Which `.mcp.json` servers the user approved: a repository's file alone never starts a
    /// command (Claude Code asks first; reloop, headless, needs the settings to say so).
    pub approval: Approval,
}

/// Claude Code's settings for project servers: `enableAllProjectMcpServers`,
/// `enabledMcpjsonServers`, `disabledMcpjsonServers`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Approval {
    /// `enableAllProjectMcpServers`: every project server may start.
    pub all: bool,
    /// `enabledMcpjsonServers`: the project servers that may start.
    pub enabled: Vec<String>,
    /// `disabledMcpjsonServers`: project servers that never start, even under `all`.
    pub disabled: Vec<String>,
}

impl Approval {
    /// Reads the three keys from a settings object; anything else is ignored.
    pub fn from_settings(settings: &serde_json::Map<String, Value>) -> Approval {
        let names = |key: &str| -> Vec<String> {
            settings
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        };
        Approval {
            all: settings.get("enableAllProjectMcpServers").and_then(Value::as_bool).unwrap_or(false),
            enabled: names("enabledMcpjsonServers"),
            disabled: names("disabledMcpjsonServers"),
        }
    }

    fn approves(&self, name: &str) -> bool {
        !self.disabled.iter().any(|d| d == name) && (self.all || self.enabled.iter().any(|e| e == name))
    }
}

/// The servers to start, and the project servers left out for want of approval.
#[derive(Debug, Clone, Default)]
pub struct Loaded {
    /// The servers to start, in configuration order.
    pub servers: Vec<ServerConfig>,
    /// The `.mcp.json` servers the settings did not approve, so the user can be told why their
    /// tools are missing.
    pub unapproved: Vec<String>,
}

impl Sources {
    /// The configured servers. A later source replaces a server of the same name, as the flags
    /// override the project in Claude Code. A source that cannot be read or parsed is an error:
    /// the user asked for it.
    pub fn load(&self) -> Result<Loaded, McpError> {
        let mut unapproved = Vec::new();
        let mut servers: BTreeMap<String, ServerConfig> = BTreeMap::new();
        let mut order: Vec<String> = Vec::new();
        let mut add = |list: Vec<ServerConfig>| {
            for server in list {
                if !order.contains(&server.name) {
                    order.push(server.name.clone());
                }
                servers.insert(server.name.clone(), server);
            }
        };
        if !self.strict {
            let project = self.project.join(".mcp.json");
            if project.is_file() {
                let (approved, left): (Vec<_>, Vec<_>) =
                    parse_file(&project)?.into_iter().partition(|s| self.approval.approves(&s.name));
                unapproved.extend(left.into_iter().map(|s| s.name));
                add(approved);
            }
        }
        for flag in &self.flags {
            let text = flag.trim();
            if text.starts_with('{') {
                add(parse(text, "--mcp-config")?);
            } else {
                add(parse_file(&self.project.join(text))?);
            }
        }
        let servers = order.into_iter().filter_map(|name| servers.remove(&name)).collect();
        Ok(Loaded { servers, unapproved })
    }

    /// The `--mcp-config` files (absolute), without inline JSON: what a resume may read again.
    pub fn files(&self) -> Vec<PathBuf> {
        self.flags
            .iter()
            .filter(|f| !f.trim().starts_with('{'))
            .map(|f| {
                let path = self.project.join(f.trim());
                std::fs::canonicalize(&path).unwrap_or(path)
            })
            .collect()
    }
}

/// The most a configuration file may hold; a bigger one is not a configuration.
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

fn parse_file(path: &Path) -> Result<Vec<ServerConfig>, McpError> {
    let origin = path.display().to_string();
    let bad = |problem: String| McpError::Config { origin: origin.clone(), problem };
    let meta = std::fs::metadata(path).map_err(|e| bad(format!("cannot read it: {e}")))?;
    if meta.len() > MAX_CONFIG_BYTES {
        return Err(bad(format!("{} bytes is more than a configuration may hold", meta.len())));
    }
    let text = std::fs::read_to_string(path).map_err(|e| bad(format!("cannot read it: {e}")))?;
    parse(&text, &origin)
}

/// Parses one configuration's text; `origin` names it in errors.
pub(crate) fn parse(text: &str, origin: &str) -> Result<Vec<ServerConfig>, McpError> {
    let bad = |problem: String| McpError::Config { origin: origin.to_string(), problem };
    let file: File = serde_json::from_str(text).map_err(|e| bad(format!("not an MCP configuration: {e}")))?;
    let mut out = Vec::new();
    for (name, value) in file.mcp_servers {
        if name.is_empty() {
            return Err(bad("a server has an empty name".into()));
        }
        let entry: Entry =
            serde_json::from_value(value).map_err(|e| bad(format!("server {name:?}: not a server entry: {e}")))?;
        let transport = match (entry.kind.as_deref(), entry.command, entry.url) {
            (None | Some("stdio"), Some(command), _) => Transport::Stdio {
                command: expand(&command),
                args: entry.args.iter().map(|a| expand(a)).collect(),
                env: entry.env.iter().map(|(k, v)| (k.clone(), expand(v))).collect(),
            },
            (Some("http"), _, Some(url)) | (None, None, Some(url)) => Transport::Http {
                url: expand(&url),
                headers: entry.headers.iter().map(|(k, v)| (k.clone(), expand(v))).collect(),
            },
            (Some("sdk"), _, _) => Transport::Sdk,
            (Some("sse"), _, _) => {
                return Err(bad(format!("server {name:?}: SSE servers are not supported (use \"type\": \"http\")")))
            }
            (Some("stdio") | None, None, _) => {
                return Err(bad(format!("server {name:?}: a stdio server needs \"command\"")))
            }
            (Some("http"), _, None) => return Err(bad(format!("server {name:?}: an http server needs \"url\""))),
            (Some(other), _, _) => return Err(bad(format!("server {name:?}: unknown type {other:?}"))),
        };
        out.push(ServerConfig { name, transport, origin: origin.to_string() });
    }
    Ok(out)
}

/// `${VAR}` and `${VAR:-default}` from the environment, as Claude Code expands `.mcp.json`
/// values; an unset variable without a default is left as written.
fn expand(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return out;
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        match (std::env::var(name).ok(), default) {
            (Some(value), _) => out.push_str(&value),
            (None, Some(default)) => out.push_str(default),
            (None, None) => out.push_str(&rest[start..start + 3 + end]),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stdio_and_http_entries_parse_as_claude_code_writes_them() {
        let servers = parse(
            r#"{"mcpServers": {
                "files": {"command": "python3", "args": ["server.py"], "env": {"A": "1"}},
                "web": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"X-Key": "k"}}
            }}"#,
            "test",
        )
        .unwrap();
        assert_eq!(servers.len(), 2);
        assert_eq!(servers[0].name, "files");
        assert_eq!(
            servers[0].transport,
            Transport::Stdio {
                command: "python3".into(),
                args: vec!["server.py".into()],
                env: [("A".to_string(), "1".to_string())].into()
            }
        );
        assert_eq!(servers[1].kind(), "http");
        // The Python Agent SDK names its in-process servers so; only the name matters.
        let sdk = parse(r#"{"mcpServers": {"calc": {"type": "sdk", "name": "calc"}}}"#, "--mcp-config").unwrap();
        assert_eq!((sdk[0].name.as_str(), &sdk[0].transport, sdk[0].kind()), ("calc", &Transport::Sdk, "sdk"));
    }

    #[test]
    fn bad_entries_say_which_server_and_what_is_wrong() {
        let err = parse(r#"{"mcpServers": {"x": {"type": "stdio"}}}"#, "f.json").unwrap_err().to_string();
        assert_eq!(err, "MCP configuration f.json: server \"x\": a stdio server needs \"command\"");
        let err = parse(r#"{"mcpServers": {"x": {"type": "sse", "url": "u"}}}"#, "f").unwrap_err().to_string();
        assert!(err.contains("SSE servers are not supported"), "{err}");
        let err = parse("[1]", "f").unwrap_err().to_string();
        assert!(err.starts_with("MCP configuration f: not an MCP configuration"), "{err}");
    }

    #[test]
    fn variables_expand_with_defaults_and_unset_ones_stay() {
        std::env::set_var("RELOOP_MCP_TEST_VAR", "v");
        assert_eq!(expand("a${RELOOP_MCP_TEST_VAR}b"), "avb");
        assert_eq!(expand("${RELOOP_MCP_UNSET_VAR:-d}"), "d");
        assert_eq!(expand("${RELOOP_MCP_UNSET_VAR}"), "${RELOOP_MCP_UNSET_VAR}");
        assert_eq!(expand("${open"), "${open");
    }

    #[test]
    fn flags_override_the_project_file_and_strict_skips_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(".mcp.json"),
            r#"{"mcpServers": {"a": {"command": "from-project"}, "b": {"command": "b"}}}"#,
        )
        .unwrap();
        let flag = r#"{"mcpServers": {"a": {"command": "from-flag"}}}"#.to_string();
        let approval = Approval { all: true, ..Approval::default() };
        let sources = Sources { flags: vec![flag.clone()], strict: false, project: dir.path().to_path_buf(), approval };
        let servers = sources.load().unwrap().servers;
        let names: Vec<_> = servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert!(matches!(&servers[0].transport, Transport::Stdio { command, .. } if command == "from-flag"));
        let strict = Sources { strict: true, ..sources.clone() };
        assert_eq!(strict.load().unwrap().servers.len(), 1);
    }

    #[test]
    fn project_servers_start_only_when_the_settings_approve_them() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(".mcp.json"),
            r#"{"mcpServers": {"a": {"command": "a"}, "b": {"command": "b"}, "c": {"command": "c"}}}"#,
        )
        .unwrap();
        let load = |settings: serde_json::Value| {
            let approval = Approval::from_settings(settings.as_object().unwrap());
            let loaded =
                Sources { flags: vec![], strict: false, project: dir.path().to_path_buf(), approval }.load().unwrap();
            (loaded.servers.into_iter().map(|s| s.name).collect::<Vec<_>>(), loaded.unapproved)
        };
        assert_eq!(load(serde_json::json!({})), (vec![], vec!["a".into(), "b".into(), "c".into()]));
        assert_eq!(
            load(serde_json::json!({"enabledMcpjsonServers": ["b"]})),
            (vec!["b".to_string()], vec!["a".into(), "c".into()])
        );
        assert_eq!(
            load(serde_json::json!({"enableAllProjectMcpServers": true, "disabledMcpjsonServers": ["c"]})),
            (vec!["a".to_string(), "b".into()], vec!["c".into()])
        );
    }
}
