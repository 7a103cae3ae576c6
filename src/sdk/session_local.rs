//! Prompts answered without a run (`crate::sdk::local_answer`): deciding, and printing the
//! answer as the session's lines.

use reloop_core::profile::ProfileId;
use reloop_core::ContentBlock;

use super::Setup;
use crate::error::CliError;
use crate::sdk::local_answer::{classify, Local};
use crate::sdk::protocol::Wire;
use crate::sdk::stream::SdkStream;

impl Setup {
    /// Whether Claude Code answers `content` itself; `empty`: the conversation has no message
    /// yet (a resumed session always has).
    pub(super) fn local(&self, content: &[ContentBlock], empty: bool) -> Result<Option<Local>, CliError> {
        let Some(profile) = ProfileId::parse(&self.args.compat) else { return Ok(None) };
        let sources = crate::settings::Sources::parse(self.args.setting_sources.as_deref())?;
        let user_dir = crate::settings::user_dir();
        let custom = crate::slash::list(&self.cwd, user_dir.as_deref(), &sources);
        Ok(classify(content, profile, empty, &custom))
    }

    /// Whether the session starts from nothing (no `--resume` or `--continue`).
    pub(super) fn starts_empty(&self) -> bool {
        self.args.resume.is_none() && !self.args.r#continue
    }

    /// Prints the answer to the session's first prompt, as session lines of the id the session
    /// is given (`--session-id`'s, else a new one); returns that id, which the session's first
    /// run then takes.
    pub(super) fn answer_first(&self, wire: &Wire, answer: &Local, stream: &mut SdkStream) -> Result<String, CliError> {
        let session = self.session(wire, "", false)?;
        let id = session.chosen_id().map(str::to_string).unwrap_or_else(reloop_driver::new_session_id);
        stream.answer_locally(answer, None, Some(&session.started_event(&id)));
        Ok(id)
    }
}
