//! The `Agent` tool's setup for `run`, `resume` and `fork`: the project's agent definitions, the
//! prices of their models, and one cassette order for a scripted tree.

use std::path::Path;

use reloop_driver::agents::{AgentCatalog, AgentDefinition};
use reloop_driver::AgentSetup;

/// Crash tests: a subagent aborts the process right after journaling this step (as `kill -9`
/// would), so a test can stop a run inside a child.
const CRASH_ENV: &str = "RELOOP_CRASH_AFTER_AGENT_STEP";

/// The setup of a new session in `cwd`: the `Agent` tool is offered when the project defines
/// agents (`.claude/agents/`), when an SDK defined some (`sdk`, models resolved as the profile
/// resolves them), or in an SDK session under a Claude Code profile, which always offers it with
/// `general-purpose`; never when the flags removed it.
pub(crate) fn for_new_session(
    cwd: &Path,
    scripted: bool,
    removed: bool,
    sdk: Option<&SdkAgents>,
) -> Option<AgentSetup> {
    let always = sdk.is_some_and(|s| s.always || !s.definitions.is_empty());
    if removed || (!always && !cwd.join(".claude").join("agents").is_dir()) {
        return None;
    }
    let mut setup = setup(cwd, scripted);
    for definition in sdk.map(|s| s.definitions.clone()).unwrap_or_default() {
        setup.catalog.add(definition);
    }
    setup.prices = prices(&setup.catalog);
    Some(setup)
}

/// What an SDK session brings to the `Agent` tool.
pub(crate) struct SdkAgents {
    /// The app's definitions (`--agents`, `initialize`), their models resolved.
    pub definitions: Vec<AgentDefinition>,
    /// Offer `Agent` even with no definition (a Claude Code profile does).
    pub always: bool,
}

impl SdkAgents {
    /// The app's definitions as it sent them (`None`: none), under `profile`: an alias as a
    /// model (`haiku`) becomes the id that version sends, as Claude Code resolves it.
    pub(crate) fn parse(
        json: Option<&serde_json::Value>,
        profile: reloop_core::profile::ProfileId,
    ) -> Result<Self, String> {
        let mut definitions = match json {
            Some(value) => reloop_driver::agents::sdk_definitions(value)?,
            None => Vec::new(),
        };
        for d in &mut definitions {
            d.model = d.model.take().map(|m| crate::models::resolve(profile, &m));
        }
        Ok(SdkAgents { definitions, always: profile.profile().claude_code_version.is_some() })
    }
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
    let mut setup = setup(Path::new(cwd), scripted);
    // The app's definitions were journaled as given (models resolved): the app is not asked again.
    let sdk = run_config.get("sdk_agents").map(reloop_driver::agents::sdk_definitions);
    for definition in sdk.and_then(Result::ok).unwrap_or_default() {
        setup.catalog.add(definition);
    }
    setup.prices = prices(&setup.catalog);
    Some(setup)
}

/// The prices of the agents' models the table knows; a model it does not price gets none (its
/// cost is unknown), never the default's.
fn prices(catalog: &AgentCatalog) -> Vec<reloop_core::Price> {
    catalog.definitions().iter().filter_map(|d| d.model.as_deref()).filter_map(crate::models::known_price).collect()
}

fn setup(cwd: &Path, scripted: bool) -> AgentSetup {
    let catalog = AgentCatalog::load(cwd);
    for warning in &catalog.warnings {
        crate::term::errln!("reloop: warning: {warning}");
    }
    let prices = prices(&catalog);
    AgentSetup {
        catalog,
        prices,
        renumber_requests: scripted,
        crash_after_step: std::env::var(CRASH_ENV).ok().and_then(|v| v.trim().parse().ok()),
    }
}
