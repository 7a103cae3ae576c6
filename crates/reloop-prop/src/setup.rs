//! The configuration under test: the core's rules, the tools offered and the hooks configured.

use reloop_core::Config;
use serde_json::{json, Value};

/// A tool the model may call, with the schema its inputs are drawn from and whether hooks
/// match it.
#[derive(Debug, Clone, PartialEq)]
pub struct OfferedTool {
    /// The tool's name.
    pub name: String,
    /// Its input's JSON schema (`{"type":"object","properties":...,"required":[...]}`).
    pub schema: Value,
    /// PreToolUse hooks match it: each call draws their verdict.
    pub pre_hooks: bool,
    /// PostToolUse hooks match it.
    pub post_hooks: bool,
    /// A deny rule names the whole tool: every call is refused.
    pub denied: bool,
}

impl OfferedTool {
    /// A tool with this schema and no hooks.
    pub fn new(name: impl Into<String>, schema: Value) -> Self {
        OfferedTool { name: name.into(), schema, pre_hooks: false, post_hooks: false, denied: false }
    }
}

/// What a run would use, as the simulation needs it.
#[derive(Debug, Clone)]
pub struct Setup {
    /// The core's rules (limits, budgets, compaction, profile).
    pub config: Config,
    /// The tools offered.
    pub tools: Vec<OfferedTool>,
    /// Stop hooks are configured: each end of a turn draws their verdict.
    pub stop_hooks: bool,
    /// The longest script a case draws (model answers).
    pub max_responses: usize,
    /// Values shown to properties as `config.*` besides the core's own (e.g. `compat`).
    pub extra: serde_json::Map<String, Value>,
}

impl Setup {
    /// The configuration `config`, offering a `Read` and a `Bash` tool, with no hooks.
    pub fn new(config: Config) -> Self {
        Setup {
            config,
            tools: vec![
                OfferedTool::new(
                    "Read",
                    json!({"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}),
                ),
                OfferedTool::new(
                    "Bash",
                    json!({"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}),
                ),
            ],
            stop_hooks: false,
            max_responses: 20,
            extra: serde_json::Map::new(),
        }
    }

    /// The configuration a recorded session ran under: the core's rules of its header, and the
    /// tools it offered, their schemas looked up in `specs` (the built-in tools' and any
    /// others') and in the header's own `tool_specs` (an MCP server's, recorded at the start).
    /// Hooks are not in a header: set [`Setup::stop_hooks`] and each tool's from the settings.
    pub fn from_header(header: &reloop_journal::SessionHeader, specs: &[(String, Value)]) -> Setup {
        let run = &header.run_config;
        let mut known: Vec<(String, Value)> = specs.to_vec();
        if let Some(recorded) = run.get("tool_specs").and_then(Value::as_array) {
            for spec in recorded {
                if let (Some(name), Some(schema)) = (spec.get("name").and_then(Value::as_str), spec.get("input_schema"))
                {
                    known.push((name.to_string(), schema.clone()));
                }
            }
        }
        let offered: Vec<&str> = run
            .get("tools")
            .and_then(Value::as_array)
            .map(|t| t.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut setup = Setup::new(header.core_config.clone());
        setup.tools = known
            .into_iter()
            .filter(|(name, _)| offered.contains(&name.as_str()))
            .map(|(name, schema)| OfferedTool::new(name, schema))
            .collect();
        setup.stop_hooks = header.core_config.stop_hooks;
        setup.extra.insert("compat".into(), json!(header.core_config.profile.name()));
        setup.extra.insert("from".into(), json!(header.id));
        setup
    }

    /// The steps a case of `responses` model answers may take before it counts as a loop that
    /// does not stop: every answer may bring retries (each a failure and a wait), its calls
    /// with their hooks, a compaction and a stop-hook round, and each injected input its own.
    pub fn step_bound(&self, responses: usize) -> usize {
        let per_response = 2 * (self.config.max_retries as usize + 1) + 8 * 4 + 8;
        200 + (responses + 1) * per_response + 4 * self.config.stop_hook_block_cap as usize
    }

    /// The configuration's values, as properties see them under `config`.
    pub fn values(&self) -> Value {
        let c = &self.config;
        let mut map = serde_json::Map::new();
        map.insert("max_turns".into(), json!(c.max_turns));
        map.insert("max_budget_usd".into(), json!(c.max_budget_usd));
        map.insert("token_budget".into(), json!(c.token_budget));
        map.insert("max_retries".into(), json!(c.max_retries));
        map.insert("stop_hook_block_cap".into(), json!(c.stop_hook_block_cap));
        map.insert("context_window".into(), json!(c.context_window));
        map.insert("auto_compact".into(), json!(c.auto_compact));
        map.insert("model".into(), json!(c.model));
        map.insert("max_output_tokens".into(), json!(c.max_output_tokens));
        map.insert("stop_hooks".into(), json!(self.stop_hooks));
        map.insert("tools".into(), json!(self.tools.iter().map(|t| t.name.clone()).collect::<Vec<_>>()));
        for (k, v) in &self.extra {
            map.insert(k.clone(), v.clone());
        }
        Value::Object(map)
    }
}
