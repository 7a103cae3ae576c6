//! The `Agent` tool's setup for `run`, `resume` and `fork`: the project's agent definitions, the
//! prices of their models, and one cassette order for a scripted tree.

use std::path::Path;

use reloop_driver::agents::AgentCatalog;
use reloop_driver::AgentSetup;

/// Crash tests: a subagent aborts the process right after journaling this step (as `kill -9`
/// would), so a test can stop a run inside a child.
const CRASH_ENV: &str = "RELOOP_CRASH_AFTER_AGENT_STEP";

/// The setup of a new session in `cwd`: the `Agent` tool is offered when the project defines
/// agents (`.claude/agents/`) and the flags did not remove it.
pub(crate) fn for_new_session(cwd: &Path, scripted: bool, removed: bool) -> Option<AgentSetup> {
    if removed || !cwd.join(".claude").join("agents").is_dir() {
        return None;
    }
    Some(setup(cwd, scripted))
}

/// The setup of a journaled session that offered the tool, or is itself a subagent (whose
/// requests then keep the tree's cassette order).
pub(crate) fn for_journaled(run_config: &serde_json::Value) -> Option<AgentSetup> {
    let offered = run_config
        .get("tools")
        .and_then(|t| t.as_array())
        .is_some_and(|tools| tools.iter().any(|t| t.as_str() == Some(reloop_driver::agents::AGENT_TOOL)));
    let child = run_config.get("agent").is_some_and(|a| !a.is_null());
    if !offered && !child {
        return None;
    }
    let cwd = run_config.get("cwd").and_then(|c| c.as_str()).unwrap_or_default();
    let scripted = run_config.get("provider").and_then(|p| p.as_str()) == Some("scripted");
    Some(setup(Path::new(cwd), scripted))
}

fn setup(cwd: &Path, scripted: bool) -> AgentSetup {
    let catalog = AgentCatalog::load(cwd);
    for warning in &catalog.warnings {
        crate::term::errln!("reloop: warning: {warning}");
    }
    // A model the table does not price gets none (its cost is unknown), never the default's.
    let prices = catalog
        .definitions()
        .iter()
        .filter_map(|d| d.model.as_deref())
        .filter_map(crate::models::known_price)
        .collect();
    AgentSetup {
        catalog,
        prices,
        renumber_requests: scripted,
        crash_after_step: std::env::var(CRASH_ENV).ok().and_then(|v| v.trim().parse().ok()),
    }
}
