//! Permission rules over MCP tools (`mcp__<server>__<tool>`), as Claude Code reads them:
//! `mcp__server` and `mcp__server__*` name every tool of the server, `mcp__server__tool` one;
//! an MCP tool asks even when its server calls it read-only.

use std::sync::Arc;

use reloop_tools::{
    Decision, PermissionContext, PermissionMode, PermissionRules, Tool, ToolContext, ToolOutput, ToolRegistry,
    Workspace,
};
use serde_json::{json, Value};

struct McpLike {
    name: &'static str,
    read_only: bool,
}

impl Tool for McpLike {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        "A tool as an MCP server would offer it."
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }
    fn is_read_only(&self, _: &Value) -> bool {
        self.read_only
    }
    fn is_concurrency_safe(&self, _: &Value) -> bool {
        self.read_only
    }
    fn call(&self, _: &Value, _: &ToolContext) -> ToolOutput {
        ToolOutput::ok("done")
    }
}

fn registry() -> ToolRegistry {
    let mut registry = ToolRegistry::builtin();
    registry.register(Arc::new(McpLike { name: "mcp__github__create_issue", read_only: false }));
    registry.register(Arc::new(McpLike { name: "mcp__github__search", read_only: true }));
    registry.register(Arc::new(McpLike { name: "mcp__githubber__search", read_only: true }));
    registry
}

fn decide(mode: PermissionMode, allow: &[&str], deny: &[&str], tool: &str) -> Decision {
    let dir = tempfile::tempdir().expect("tempdir");
    let ctx = PermissionContext::new(
        mode,
        PermissionRules::parse(allow, deny, &[]).expect("rules"),
        Workspace::new(dir.path(), &[]).expect("workspace"),
        Vec::new(),
    )
    .expect("context");
    ctx.check(&registry(), tool, &json!({}))
}

fn not_granted(tool: &str) -> Decision {
    Decision::Deny { message: format!("Claude requested permissions to use {tool}, but you haven't granted it yet.") }
}

#[test]
fn an_mcp_tool_asks_in_default_mode_even_when_its_server_says_it_only_reads() {
    for tool in ["mcp__github__create_issue", "mcp__github__search"] {
        assert_eq!(decide(PermissionMode::Default, &[], &[], tool), not_granted(tool));
    }
    assert_eq!(decide(PermissionMode::BypassPermissions, &[], &[], "mcp__github__create_issue"), Decision::Allow);
}

#[test]
fn a_server_rule_covers_all_its_tools_and_no_other_server() {
    for rule in ["mcp__github", "mcp__github__*"] {
        assert_eq!(
            decide(PermissionMode::Default, &[rule], &[], "mcp__github__create_issue"),
            Decision::Allow,
            "{rule}"
        );
        assert_eq!(decide(PermissionMode::Default, &[rule], &[], "mcp__github__search"), Decision::Allow, "{rule}");
        assert_eq!(
            decide(PermissionMode::Default, &[rule], &[], "mcp__githubber__search"),
            not_granted("mcp__githubber__search"),
            "{rule} must not reach a server whose name merely starts the same"
        );
    }
}

#[test]
fn a_tool_rule_covers_that_tool_only_and_deny_wins() {
    let allow = ["mcp__github__search"];
    assert_eq!(decide(PermissionMode::Default, &allow, &[], "mcp__github__search"), Decision::Allow);
    assert_eq!(
        decide(PermissionMode::Default, &allow, &[], "mcp__github__create_issue"),
        not_granted("mcp__github__create_issue")
    );
    let denied = decide(
        PermissionMode::BypassPermissions,
        &["mcp__github"],
        &["mcp__github__create_issue(x)"],
        "mcp__github__create_issue",
    );
    // A specifier on an MCP tool cannot be interpreted: such a rule matches nothing.
    assert_eq!(denied, Decision::Allow);
    let removed = decide(PermissionMode::BypassPermissions, &[], &["mcp__github"], "mcp__github__search");
    assert!(matches!(removed, Decision::Deny { .. }), "{removed:?}");
}
