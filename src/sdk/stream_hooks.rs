//! Hook lines of the SDK stream: what a hook's `systemMessage` prints, per profile.

use serde_json::json;

use super::SdkStream;

impl SdkStream {
    /// A hook's `systemMessage` as 2.1.332 prints it: `EVENT says: MESSAGE`, the event of a tool
    /// hook named with its tool (`PreToolUse:Read`); a PostToolUse one after the results' line.
    pub(super) fn hook_system_message(
        &mut self,
        event: reloop_core::hook::HookEventName,
        call: Option<&str>,
        message: &str,
    ) {
        if !self.profile.profile().lines.hook_system_message {
            return;
        }
        let tool = call.and_then(|id| self.tool_names.get(id));
        let label = match tool {
            Some(tool) => format!("{}:{tool}", event.as_str()),
            None => event.as_str().to_string(),
        };
        let content = format!("{label} says: {message}");
        if tool.is_some() && event != reloop_core::hook::HookEventName::PreToolUse {
            self.after_results.push(content);
        } else if tool.is_some() && self.include_hook_events {
            // Recorded (`hooks_events/include_hook_events`): after the call's hook lines.
            self.before_results.push(content);
        } else {
            self.system_line("informational", json!({"content": content, "level": "notice"}));
        }
    }

    /// The PreToolUse messages held for just before the results' line.
    pub(super) fn flush_before_results(&mut self) {
        for content in std::mem::take(&mut self.before_results) {
            self.system_line("informational", json!({"content": content, "level": "notice"}));
        }
    }

    /// The PostToolUse messages held for after the results' line.
    pub(super) fn flush_after_results(&mut self) {
        for content in std::mem::take(&mut self.after_results) {
            self.system_line("informational", json!({"content": content, "level": "notice"}));
        }
    }
}
