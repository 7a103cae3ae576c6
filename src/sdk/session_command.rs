//! What a custom command's file sets for the query that runs it, and only for that query, as
//! both recorded versions do:
//! - `model` (`sdk_wire/command_frontmatter`, `sdk36/queued_command_model`): the query is asked
//!   with it (its `system/init` names it), then the session goes back to its model. Journaled
//!   as `set_model` events that name the command, so a replay asks the same and the stream
//!   echoes nothing for them.
//! - `allowed-tools` (`sdk36/command_allowed_tools`): those rules allow their calls during the
//!   query and not after it. Journaled as `command_tools` events (with the rules before the
//!   prompt, with none after the query), so `why` names them.

use reloop_core::Event;
use reloop_driver::AbortHandle;

use super::Setup;
use crate::error::CliError;
use crate::sdk::stream::SdkStream;

impl Setup {
    /// A user message that runs a custom slash command, expanded as Claude Code sends it to the
    /// model (`crate::slash`); one naming no command after 2.1.332's reminder; any other message
    /// unchanged.
    pub(super) fn commands(
        &self,
        content: Vec<reloop_core::ContentBlock>,
    ) -> Result<Vec<reloop_core::ContentBlock>, CliError> {
        let sources = crate::settings::Sources::parse(self.args.setting_sources.as_deref())?;
        let reminder = reloop_core::profile::ProfileId::parse(&self.args.compat)
            == Some(reloop_core::profile::ProfileId::ClaudeCode2_1_332);
        let user_dir = crate::settings::user_dir();
        Ok(crate::slash::expand_content(content, &self.cwd, user_dir.as_deref(), &sources, reminder))
    }
}

/// A command whose file sets a model or allowed tools for its query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct CommandQuery {
    /// The command (`fm` for `/fm`).
    pub name: String,
    /// Its model, resolved as `--model` resolves one.
    pub model: Option<String>,
    /// Its `allowed-tools` rules.
    pub allow: Vec<String>,
}

impl CommandQuery {
    /// The events that go before the command's prompt.
    pub(super) fn before(&self) -> Vec<Event> {
        let mut events = Vec::new();
        if let Some(model) = &self.model {
            events.push(Event::SetModel { model: Some(model.clone()), command: Some(self.name.clone()) });
        }
        if !self.allow.is_empty() {
            events.push(Event::CommandTools { command: self.name.clone(), allow: self.allow.clone() });
        }
        events
    }

    /// The stream prints the query's lines under the command's model.
    pub(super) fn show(&self, stream: &mut SdkStream) {
        if let Some(model) = &self.model {
            stream.command_model(model.clone());
        }
    }

    /// Before its prompt, in a running session: the switches, journaled by the driver.
    pub(super) fn begin(&self, control: &AbortHandle, stream: &mut SdkStream) {
        if let Some(model) = &self.model {
            control.set_model_for_command(Some(model.clone()), &self.name);
        }
        if !self.allow.is_empty() {
            control.set_tools_for_command(self.allow.clone(), &self.name);
        }
        self.show(stream);
    }

    /// Its query is over: back to `model` (the SDK's last `set_model`, `None` the configured
    /// one, `shown` its name) and to the session's own rules.
    pub(super) fn end(&self, control: &AbortHandle, stream: &mut SdkStream, model: Option<String>, shown: String) {
        if self.model.is_some() {
            control.set_model_for_command(model, &self.name);
            stream.command_model(shown);
        }
        if !self.allow.is_empty() {
            control.set_tools_for_command(Vec::new(), &self.name);
        }
    }
}

impl Setup {
    /// What a prompt's command file sets for its query, if it sets anything.
    pub(super) fn command_query(&self, prompt_text: &str) -> Result<Option<CommandQuery>, CliError> {
        let sources = crate::settings::Sources::parse(self.args.setting_sources.as_deref())?;
        let user_dir = crate::settings::user_dir();
        let Some(set) = crate::slash::query_settings(prompt_text, &self.cwd, user_dir.as_deref(), &sources) else {
            return Ok(None);
        };
        let model = set.model.map(|m| self.args.resolve_model(&m));
        Ok((model.is_some() || !set.allow.is_empty()).then_some(CommandQuery {
            name: set.name,
            model,
            allow: set.allow,
        }))
    }

    /// The command's switches, as the events that go before its prompt.
    pub(super) fn switch_for(&self, prompt_text: &str) -> Result<Vec<Event>, CliError> {
        Ok(self.command_query(prompt_text)?.map(|c| c.before()).unwrap_or_default())
    }
}
