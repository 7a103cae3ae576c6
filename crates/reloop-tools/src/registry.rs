//! The set of tools a session offers the model, and the one door through which calls go.

use std::sync::Arc;

use serde_json::Value;

use crate::tool::{Tool, ToolContext, ToolOutput};
use crate::validate::validate_input;

/// The tools offered to the model, in registration order.
///
/// Cloning shares the list (copy-on-write on [`ToolRegistry::register`]), so the driver can hand a
/// registry to every blocking task without copying tools. Each tool's input schema is built once,
/// at registration: every call is validated against it, several times (safety, read-only, run).
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: Arc<Vec<Arc<dyn Tool>>>,
    schemas: Arc<Vec<Value>>,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.tools.iter().map(|t| t.name().to_string())).finish()
    }
}

impl ToolRegistry {
    /// Claude Code's core tools: Read, Write, Edit, Glob, Grep, Bash.
    pub fn builtin() -> Self {
        let mut registry = ToolRegistry::empty();
        registry.register(Arc::new(crate::read::ReadTool));
        registry.register(Arc::new(crate::write_edit::WriteTool));
        registry.register(Arc::new(crate::write_edit::EditTool));
        registry.register(Arc::new(crate::glob::GlobTool));
        registry.register(Arc::new(crate::grep::GrepTool));
        registry.register(Arc::new(crate::bash::BashTool));
        registry
    }

    /// No tools at all, for a library user who wants only their own.
    pub fn empty() -> Self {
        ToolRegistry { tools: Arc::new(Vec::new()), schemas: Arc::new(Vec::new()) }
    }

    /// Adds a tool next to the others. A tool with the same name as an existing one replaces it in
    /// place, so a user can swap a built-in without changing the order the model sees.
    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        let schema = tool.input_schema();
        let (tools, schemas) = (Arc::make_mut(&mut self.tools), Arc::make_mut(&mut self.schemas));
        match tools.iter().position(|t| t.name() == tool.name()) {
            Some(i) => {
                tools[i] = tool;
                schemas[i] = schema;
            }
            None => {
                tools.push(tool);
                schemas.push(schema);
            }
        }
    }

    /// Keeps only the tools `keep` names, in order: a tool removed here is not offered to the
    /// model at all (`--tools`, a bare `--disallowedTools` name), not only refused when called.
    pub fn retain(&mut self, keep: impl Fn(&str) -> bool) {
        let (tools, schemas): (Vec<_>, Vec<_>) =
            self.tools.iter().cloned().zip(self.schemas.iter().cloned()).filter(|(t, _)| keep(t.name())).unzip();
        self.tools = Arc::new(tools);
        self.schemas = Arc::new(schemas);
    }

    /// The tool of that name.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.iter().find(|t| t.name() == name)
    }

    /// The tool of that name with its input schema, built once at registration.
    pub fn get_with_schema(&self, name: &str) -> Option<(&Arc<dyn Tool>, &Value)> {
        let i = self.tools.iter().position(|t| t.name() == name)?;
        Some((&self.tools[i], &self.schemas[i]))
    }

    /// Names in registration order.
    pub fn names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.name()).collect()
    }

    /// The tool definitions for the model request, in registration order.
    pub fn specs(&self) -> Vec<reloop_core::ToolSpec> {
        self.tools
            .iter()
            .zip(self.schemas.iter())
            .map(|(t, schema)| reloop_core::ToolSpec {
                name: t.name().to_string(),
                description: t.description().to_string(),
                input_schema: schema.clone(),
            })
            .collect()
    }

    /// The answer a call gets before it runs: `None` when no tool here has that name,
    /// `Some(Err(text))` with the exact `tool_result` text when the input breaks the tool's
    /// schema. A check of recorded sessions compares it with what the recording shows.
    pub fn check_input(&self, name: &str, input: &Value) -> Option<Result<(), String>> {
        let (tool, schema) = self.get_with_schema(name)?;
        if tool.validates_own_input() {
            return Some(Ok(()));
        }
        Some(validate_input(name, schema, input).map_err(|e| e.to_string()))
    }

    /// The tool, when `name` is known and `input` satisfies its schema.
    fn valid(&self, name: &str, input: &Value) -> Option<&Arc<dyn Tool>> {
        let (tool, schema) = self.get_with_schema(name)?;
        if !tool.validates_own_input() {
            validate_input(name, schema, input).ok()?;
        }
        Some(tool)
    }

    /// Whether the call may run next to other safe calls; false for an unknown tool or an invalid
    /// input, because the driver must then not reorder it.
    pub fn is_concurrency_safe(&self, name: &str, input: &Value) -> bool {
        self.valid(name, input).is_some_and(|tool| tool.is_concurrency_safe(input))
    }

    /// Whether the call only reads; false for an unknown tool or an invalid input.
    pub fn is_read_only(&self, name: &str, input: &Value) -> bool {
        self.valid(name, input).is_some_and(|tool| tool.is_read_only(input))
    }

    /// Whether the call answers at once ([`crate::Tool::is_instant`]); false for an unknown tool
    /// or an invalid input.
    pub fn is_instant(&self, name: &str, input: &Value) -> bool {
        self.valid(name, input).is_some_and(|tool| tool.is_instant(input))
    }

    /// Validates, then calls. An unknown tool, an invalid input and an input that never parsed
    /// (a `Value::String` of the raw text) become error outputs and the tool does not run.
    pub fn execute(&self, name: &str, input: &Value, ctx: &ToolContext) -> ToolOutput {
        let Some((tool, schema)) = self.get_with_schema(name) else {
            return ToolOutput::error(format!(
                "<tool_use_error>Error: No such tool available: {name}</tool_use_error>"
            ));
        };
        if !tool.validates_own_input() {
            if let Err(err) = validate_input(name, schema, input) {
                // The caller is told zod's issue list where Claude Code's is known.
                let issues = ctx.structured_results.then(|| crate::zod_issues::zod_issues(schema, input)).flatten();
                return ToolOutput::error(err.to_string()).with_structured(issues.map(Value::String));
            }
        }
        tool.call(input, ctx)
    }
}
