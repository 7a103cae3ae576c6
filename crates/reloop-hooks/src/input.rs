//! The JSON a hook reads on stdin, field for field as Claude Code sends it.

use reloop_core::hook::HookEventName;
use serde::Serialize;
use serde_json::Value;

/// The fields every hook input carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookCommon {
    /// The session the hook runs in, so a hook can keep state per session.
    pub session_id: String,
    /// Where the session's transcript is, for a hook that reads the conversation.
    pub transcript_path: String,
    /// The session's working directory (the hook runs there too).
    pub cwd: String,
    /// `default`, `acceptEdits`, `plan` or `bypassPermissions`.
    pub permission_mode: String,
}

/// A hook's stdin. Build it with [`HookInput::stop`], [`HookInput::pre_tool_use`] or
/// [`HookInput::post_tool_use`], so each event carries exactly its own fields; the others are
/// left out of the JSON rather than sent as `null`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct HookInput {
    /// As [`HookCommon::session_id`].
    pub session_id: String,
    /// As [`HookCommon::transcript_path`].
    pub transcript_path: String,
    /// As [`HookCommon::cwd`].
    pub cwd: String,
    /// As [`HookCommon::permission_mode`]; SessionStart, SessionEnd and SubagentStart inputs
    /// carry none, as Claude Code sends them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permission_mode: Option<String>,
    /// SubagentStart and SubagentStop: the subagent's id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// SubagentStart and SubagentStop: the subagent's type (`general-purpose`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_type: Option<String>,
    /// Which event fired, so one script can serve several.
    pub hook_event_name: HookEventName,
    /// PreCompact only: what asked for the compaction (`manual` for `/compact`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trigger: Option<String>,
    /// PreCompact only: the instructions typed after `/compact`, `null` when none (the outer
    /// `None` leaves the key out for every other event).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub custom_instructions: Option<Option<String>>,
    /// SessionStart only: why the session starts (`startup`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// SessionStart after a compaction only: the model, as Claude Code names it
    /// (`claude-opus-4-8[1m]` in 2.1.197), recorded in `sdk36/auto_compact_hooks`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// UserPromptSubmit only: the prompt as the user wrote it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// SessionEnd only: why the session ends (`other` when a print-mode run is over).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Stop only: the turn already continues because a Stop hook blocked it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_hook_active: Option<bool>,
    /// SubagentStop only: where the subagent's own transcript is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_transcript_path: Option<String>,
    /// Stop only: the text of the turn's last assistant message, when it had one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_assistant_message: Option<String>,
    /// Tool events only: the tool called, as the model named it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// Tool events only: the call's input.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_input: Option<Value>,
    /// PostToolUse only: what the tool answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_response: Option<Value>,
    /// Tool events only: the `tool_use` id, tying the PreToolUse and PostToolUse of one call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    /// PostToolUseFailure only: the failed call's result text (`Exit code 1` for a Bash exit 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// PostToolUseFailure only: whether the call failed because it was interrupted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_interrupt: Option<bool>,
    /// PostToolUseFailure only: how long the call ran, in milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
}

impl HookInput {
    fn common(common: HookCommon, event: HookEventName) -> Self {
        HookInput {
            session_id: common.session_id,
            transcript_path: common.transcript_path,
            cwd: common.cwd,
            permission_mode: Some(common.permission_mode),
            agent_id: None,
            agent_type: None,
            hook_event_name: event,
            trigger: None,
            custom_instructions: None,
            source: None,
            model: None,
            prompt: None,
            reason: None,
            stop_hook_active: None,
            agent_transcript_path: None,
            last_assistant_message: None,
            tool_name: None,
            tool_input: None,
            tool_response: None,
            tool_use_id: None,
            error: None,
            is_interrupt: None,
            duration_ms: None,
        }
    }

    /// `stop_hook_active` tells a hook that the turn is already continuing because of a stop
    /// hook, so it can avoid blocking forever. `last_assistant_message` is left out when `None`.
    pub fn stop(common: HookCommon, stop_hook_active: bool, last_assistant_message: Option<String>) -> Self {
        HookInput {
            stop_hook_active: Some(stop_hook_active),
            last_assistant_message,
            ..HookInput::common(common, HookEventName::Stop)
        }
    }

    /// Before a tool call runs: the hook may block it or decide its permission.
    pub fn pre_tool_use(common: HookCommon, tool_name: &str, tool_input: Value, tool_use_id: &str) -> Self {
        HookInput {
            tool_name: Some(tool_name.to_string()),
            tool_input: Some(tool_input),
            tool_use_id: Some(tool_use_id.to_string()),
            ..HookInput::common(common, HookEventName::PreToolUse)
        }
    }

    /// After a tool call ran, with its `tool_response`: the hook may give the model feedback.
    pub fn post_tool_use(
        common: HookCommon,
        tool_name: &str,
        tool_input: Value,
        tool_use_id: &str,
        tool_response: Value,
    ) -> Self {
        HookInput {
            tool_response: Some(tool_response),
            hook_event_name: HookEventName::PostToolUse,
            ..HookInput::pre_tool_use(common, tool_name, tool_input, tool_use_id)
        }
    }

    /// After a tool call ran and failed, in Claude Code's field order (recorded in
    /// `tests/print/recorded/*/hooks_events/all_log`): the call, then `error` (its result text),
    /// `is_interrupt` and `duration_ms`.
    pub fn post_tool_use_failure(
        common: HookCommon,
        tool_name: &str,
        tool_input: Value,
        tool_use_id: &str,
        error: &str,
        duration_ms: u64,
    ) -> Self {
        HookInput {
            error: Some(error.to_string()),
            is_interrupt: Some(false),
            duration_ms: Some(duration_ms),
            hook_event_name: HookEventName::PostToolUseFailure,
            ..HookInput::pre_tool_use(common, tool_name, tool_input, tool_use_id)
        }
    }

    /// A new session starts, before its first prompt (`source`: `startup`): field for field as
    /// both recorded versions send it, without `permission_mode`.
    pub fn session_start(common: HookCommon, source: &str) -> Self {
        HookInput {
            permission_mode: None,
            source: Some(source.to_string()),
            ..HookInput::common(common, HookEventName::SessionStart)
        }
    }

    /// A prompt is submitted, before it joins the conversation.
    pub fn user_prompt_submit(common: HookCommon, prompt: &str) -> Self {
        HookInput { prompt: Some(prompt.to_string()), ..HookInput::common(common, HookEventName::UserPromptSubmit) }
    }

    /// The session ends (`reason`: `other` for a print-mode run that is over), without
    /// `permission_mode`.
    pub fn session_end(common: HookCommon, reason: &str) -> Self {
        HookInput {
            permission_mode: None,
            reason: Some(reason.to_string()),
            ..HookInput::common(common, HookEventName::SessionEnd)
        }
    }

    /// A compaction is about to run, without `permission_mode`: what asked for it and the
    /// instructions given with it (2.1.332, `settings_slash/stream_compact`).
    pub fn pre_compact(common: HookCommon, trigger: &str, custom_instructions: Option<&str>) -> Self {
        HookInput {
            permission_mode: None,
            trigger: Some(trigger.to_string()),
            custom_instructions: Some(custom_instructions.map(str::to_string)),
            ..HookInput::common(common, HookEventName::PreCompact)
        }
    }

    /// A subagent starts: its id and type, without `permission_mode`.
    pub fn subagent_start(common: HookCommon, agent_id: &str, agent_type: &str) -> Self {
        HookInput {
            permission_mode: None,
            agent_id: Some(agent_id.to_string()),
            agent_type: Some(agent_type.to_string()),
            ..HookInput::common(common, HookEventName::SubagentStart)
        }
    }

    /// A subagent's loop would end: like [`HookInput::stop`], with the subagent's id, type and
    /// transcript.
    pub fn subagent_stop(
        common: HookCommon,
        agent: (&str, &str),
        agent_transcript_path: &str,
        stop_hook_active: bool,
        last_assistant_message: Option<String>,
    ) -> Self {
        HookInput {
            agent_id: Some(agent.0.to_string()),
            agent_type: Some(agent.1.to_string()),
            agent_transcript_path: Some(agent_transcript_path.to_string()),
            hook_event_name: HookEventName::SubagentStop,
            ..HookInput::stop(common, stop_hook_active, last_assistant_message)
        }
    }

    /// The event this input is for.
    pub fn event(&self) -> HookEventName {
        self.hook_event_name
    }
}
