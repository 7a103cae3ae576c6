//! The configuration under test: the core's rules, the tools offered, the hooks configured
//! and the permission rules that decide each call.

use std::path::Path;

use reloop_core::hook::HookEventName;
use reloop_core::Config;
use reloop_hooks::Settings;
use reloop_tools::{PermissionContext, PermissionMode, PermissionRules, ToolRegistry, Workspace};
use serde_json::{json, Value};

/// A tool the model may call, with the schema its inputs are drawn from and the hooks that
/// match it.
#[derive(Debug, Clone, PartialEq)]
pub struct OfferedTool {
    /// The tool's name.
    pub name: String,
    /// Its input's JSON schema (`{"type":"object","properties":...,"required":[...]}`).
    pub schema: Value,
    /// The PreToolUse hooks matching it, by command: each call draws a verdict for each.
    pub pre_hooks: Vec<String>,
    /// The PostToolUse hooks matching it, by command.
    pub post_hooks: Vec<String>,
    /// Strings its first required string input is sometimes drawn from besides a plain one:
    /// what the permission rules naming it match (`rm x` for `Bash(rm:*)`), so rules on an
    /// input are met.
    pub samples: Vec<String>,
}

impl OfferedTool {
    /// A tool with this schema and no hooks.
    pub fn new(name: impl Into<String>, schema: Value) -> Self {
        OfferedTool { name: name.into(), schema, pre_hooks: Vec::new(), post_hooks: Vec::new(), samples: Vec::new() }
    }
}

/// The permission rules and mode a run would judge each call by, with the tools they judge
/// (schemas, which calls only read).
#[derive(Debug, Clone)]
pub struct Permissions {
    /// The rules, the mode and the workspace.
    pub context: PermissionContext,
    /// The tools as a run registers them.
    pub registry: ToolRegistry,
}

/// A settings file or a session header that cannot be read as a configuration.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The settings file does not parse.
    #[error(transparent)]
    Settings(#[from] reloop_hooks::SettingsError),
    /// A permission rule, the mode or the workspace is invalid.
    #[error("permissions: {0}")]
    Permissions(#[from] reloop_tools::PermissionError),
}

/// What a run would use, as the simulation needs it.
#[derive(Debug, Clone)]
pub struct Setup {
    /// The core's rules (limits, budgets, compaction, profile).
    pub config: Config,
    /// The tools offered.
    pub tools: Vec<OfferedTool>,
    /// The Stop hooks configured, by command: each end of a turn draws a verdict for each.
    pub stop_hooks: Vec<String>,
    /// The rules that decide each call as a non-interactive run would (an `ask` refuses, with
    /// the prompt's text). `None`: no rules, and calls are refused only by a drawn denial.
    pub permissions: Option<Permissions>,
    /// The longest script a case draws (model answers).
    pub max_responses: usize,
    /// Values shown to properties as `config.*` besides the core's own (e.g. `compat`).
    pub extra: serde_json::Map<String, Value>,
}

impl Setup {
    /// The configuration `config`, offering a `Read` and a `Bash` tool, with no hooks and no
    /// permission rules.
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
            stop_hooks: Vec::new(),
            permissions: None,
            max_responses: 20,
            extra: serde_json::Map::new(),
        }
    }

    /// The configuration `config` with a settings file read as `reloop run --settings FILE`
    /// reads it, for a session in `cwd`: every built-in tool offered, the file's hooks matched
    /// to each, its permission rules judging each call in the default mode.
    pub fn from_settings_file(config: Config, path: &Path, cwd: &Path) -> Result<Setup, SetupError> {
        let settings = Settings::from_file(path)?;
        let mut setup = Setup::new(config);
        setup.tools = ToolRegistry::builtin()
            .specs()
            .into_iter()
            .map(|spec| OfferedTool::new(spec.name, spec.input_schema))
            .collect();
        setup.with_settings(&settings, PermissionMode::Default, cwd)
    }

    /// This configuration under `settings`: their hooks matched to the tools offered and to
    /// Stop, their rules judging each call in `mode` with `cwd` the workspace, on this
    /// machine's sandbox as a run would be (without one, Bash commands need approval).
    pub fn with_settings(self, settings: &Settings, mode: PermissionMode, cwd: &Path) -> Result<Setup, SetupError> {
        let p = &settings.permissions;
        let texts = |rules: &[reloop_core::SourcedRule]| rules.iter().map(|r| r.text.clone()).collect::<Vec<_>>();
        Ok(self.with_rules(mode, &texts(&p.allow), &texts(&p.deny), &texts(&p.ask), &[], cwd)?.with_hooks(settings))
    }

    /// This configuration with the hooks of `settings`: their Stop hooks, and each tool
    /// offered with the PreToolUse and PostToolUse hooks whose matchers match it.
    pub fn with_hooks(mut self, settings: &Settings) -> Setup {
        self.stop_hooks = commands(settings, HookEventName::Stop, None);
        for tool in &mut self.tools {
            tool.pre_hooks = commands(settings, HookEventName::PreToolUse, Some(&tool.name));
            tool.post_hooks = commands(settings, HookEventName::PostToolUse, Some(&tool.name));
        }
        self
    }

    /// This configuration with these permission rules (as typed in a settings file or on the
    /// command line, `disallowed` as `--disallowed-tools`) judging each call in `mode`.
    pub fn with_rules(
        mut self,
        mode: PermissionMode,
        allow: &[String],
        deny: &[String],
        ask: &[String],
        disallowed: &[String],
        cwd: &Path,
    ) -> Result<Setup, SetupError> {
        let rules = PermissionRules::parse(allow, deny, ask)?;
        let sandbox = match reloop_tools::sandbox::Sandbox::probe() {
            reloop_tools::sandbox::Availability::Available(s) => Some(s.clone()),
            reloop_tools::sandbox::Availability::Unavailable(_) => None,
        };
        let context = PermissionContext::new(mode, rules, Workspace::new(cwd, &[])?, disallowed.to_vec())?
            .with_texts(self.config.profile.profile().tools)
            .with_sandbox(sandbox, false);
        let registry = self.permissions.take().map_or_else(ToolRegistry::builtin, |p| p.registry);
        for tool in &mut self.tools {
            tool.samples =
                allow.iter().chain(deny).chain(ask).chain(disallowed).filter_map(|r| sample(r, &tool.name)).collect();
        }
        self.permissions = Some(Permissions { context, registry });
        Ok(self)
    }

    /// The configuration a recorded session ran under: the core's rules of its header, the
    /// tools it offered, their schemas looked up in `specs` (the built-in tools' and any
    /// others') and in the header's own `tool_specs` (an MCP server's, recorded at the start),
    /// and the permissions it ran with (headless default mode when it recorded none, as a
    /// rerun does). Hooks are not in a header: apply its settings file with
    /// [`Setup::with_hooks`], or name the Stop hooks; until then a session that ran Stop
    /// hooks draws the verdicts of one, named as such.
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
        if header.core_config.stop_hooks {
            setup.stop_hooks = vec!["(the recorded session's Stop hooks)".into()];
        }
        // A rule is journaled as its text, or with its origin as `{"rule", "source"}`.
        let strings = |v: Option<&Value>| -> Vec<String> {
            v.and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|s| serde_json::from_value::<reloop_core::SourcedRule>(s.clone()).ok())
                        .map(|rule| rule.text)
                        .collect()
                })
                .unwrap_or_default()
        };
        let permissions = run.get("permissions").filter(|p| p.is_object());
        let field = |name: &str| strings(permissions.and_then(|p| p.get(name)));
        let mode = permissions
            .and_then(|p| p.get("mode"))
            .and_then(Value::as_str)
            .and_then(|m| m.parse().ok())
            .unwrap_or(PermissionMode::Default);
        let cwd = run.get("cwd").and_then(Value::as_str).map_or_else(|| Path::new(".").to_path_buf(), Into::into);
        let judged =
            setup.clone().with_rules(mode, &field("allow"), &field("deny"), &field("ask"), &field("disallowed"), &cwd);
        // A header whose rules no longer parse (an older engine's) is tested without them.
        if let Ok(judged) = judged {
            setup = judged;
        }
        setup.extra.insert("compat".into(), json!(header.core_config.profile.name()));
        setup.extra.insert("from".into(), json!(header.id));
        setup
    }

    /// The tool offered under `name`.
    pub fn tool(&self, name: &str) -> Option<&OfferedTool> {
        self.tools.iter().find(|t| t.name == name)
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
        map.insert("stop_hooks".into(), json!(!self.stop_hooks.is_empty()));
        map.insert("tools".into(), json!(self.tools.iter().map(|t| t.name.clone()).collect::<Vec<_>>()));
        for (k, v) in &self.extra {
            map.insert(k.clone(), v.clone());
        }
        Value::Object(map)
    }
}

/// The commands of the hooks `settings` run for `event` (on `tool`), in order.
fn commands(settings: &Settings, event: HookEventName, tool: Option<&str>) -> Vec<String> {
    settings.hooks.matching(event, tool).into_iter().map(|h| h.command).collect()
}

/// A string the rule `Tool(specifier)` matches, when it names `tool` with a specifier: the
/// prefix of `cmd:*` with an argument, globs filled in.
fn sample(rule: &str, tool: &str) -> Option<String> {
    let spec = rule.trim().strip_prefix(tool)?.strip_prefix('(')?.strip_suffix(')')?;
    let text = match spec.strip_suffix(":*") {
        Some(prefix) => format!("{prefix} x"),
        None => spec.replace("**", "a/b").replace('*', "x"),
    };
    (!text.is_empty()).then_some(text)
}
