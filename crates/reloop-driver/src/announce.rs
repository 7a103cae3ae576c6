//! The `Started` event a session would send first, for a caller that answers a prompt without
//! running it: print mode answers some slash commands locally (`/compact` with no conversation,
//! 2.1.197's `Unknown command`), and Claude Code still prints `system/init` for them.

use crate::run::{RunEvent, Session};

impl Session {
    /// What [`RunEvent::Started`] would say of this session under `session_id`: its model,
    /// working directory, tools (the `Agent` tool too, when agents are set up), permission mode,
    /// provider and profile. Nothing is journaled or run.
    pub fn started_event(&self, session_id: &str) -> RunEvent {
        let mut tools: Vec<String> = self.tools.names().into_iter().map(str::to_string).collect();
        if let Some(agents) = &self.agents {
            let tool = agents.catalog.tool(self.core.background_agents());
            if !tools.iter().any(|t| t == tool.name()) {
                tools.push(tool.name().to_string());
            }
        }
        RunEvent::Started {
            session_id: session_id.to_string(),
            model: self.run.model.clone(),
            cwd: self.run.cwd.clone(),
            tools,
            permission_mode: self.permissions.as_ref().map_or("default".to_string(), |p| p.mode.as_str().to_string()),
            provider: self.run.provider.clone(),
            profile: self.core.profile,
        }
    }

    /// The id the session will take: `--session-id`'s, when given.
    pub fn chosen_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }
}
