//! How a version refuses a call a PreToolUse hook denied or asked about without giving a reason
//! (`tool_results/hook_no_reason`, recorded 2026-12-06). `{tool}` stands for the tool's name.
//! 2.1.197 never reached the ask there: the Edit's own check of a file not read first refused
//! the call before it.

use super::ProfileId;

/// A reasonless hook ruling's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BareHookTexts {
    /// A deny's refusal (`None`: reloop's own, `PreToolUse:{tool} hook denied this tool call`).
    pub denied: Option<&'static str>,
    /// An ask's refusal when nobody can be asked (`None`: the ask decides nothing).
    pub asked: Option<&'static str>,
}

/// 2.1.197's deny without a reason.
pub const HOOK_DENIED_BARE_2_1_197: &str = "Hook PreToolUse:{tool} denied this tool";
/// 2.1.332's: its hook-error form with its own reason.
pub const HOOK_DENIED_BARE_2_1_332: &str = "PreToolUse:{tool} hook error: Blocked by hook";
/// 2.1.332's ask without a reason.
pub const HOOK_ASKED_BARE_2_1_332: &str = "Hook PreToolUse:{tool} asked for confirmation for this tool";

/// Where a version puts what a call's PostToolUse hooks add to the context (`hooks_events/context`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolContextPlacement {
    /// 2.1.197 (and reloop's profile): a `<system-reminder>` text block after the results, in
    /// their message.
    Reminder,
    /// 2.1.332: a `role: "system"` message after the results' message.
    SystemMessage,
}

impl ProfileId {
    /// Where this version puts a PostToolUse hook's `additionalContext` (applied under
    /// [`crate::Flag::PostToolUseContext`]).
    pub fn tool_context_placement(self) -> ToolContextPlacement {
        match self {
            ProfileId::Reloop | ProfileId::ClaudeCode2_1_197 => ToolContextPlacement::Reminder,
            ProfileId::ClaudeCode2_1_332 => ToolContextPlacement::SystemMessage,
        }
    }

    /// This version's words for a hook's ruling without a reason (applied under
    /// [`crate::Flag::BareHookRulings`]).
    pub fn bare_hook_texts(self) -> BareHookTexts {
        match self {
            ProfileId::Reloop => BareHookTexts::default(),
            ProfileId::ClaudeCode2_1_197 => BareHookTexts { denied: Some(HOOK_DENIED_BARE_2_1_197), asked: None },
            ProfileId::ClaudeCode2_1_332 => {
                BareHookTexts { denied: Some(HOOK_DENIED_BARE_2_1_332), asked: Some(HOOK_ASKED_BARE_2_1_332) }
            }
        }
    }
}
