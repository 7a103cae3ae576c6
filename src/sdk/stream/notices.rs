//! Claude Code's notices in the stream, each where the profile's version prints it: the switch
//! to a fallback model, the Stop-hook notification and block cap, and 2.1.332's
//! `permission_denied` line before a denied call's result.

use reloop_core::hook::{HookEventName, Permission};
use reloop_core::profile::{self, FallbackWording};
use serde_json::{json, Map, Value};

use super::SdkStream;

impl SdkStream {
    /// The switch to the fallback model, worded as the profile's version words it.
    pub(super) fn model_fallback(&mut self, trigger: &str, from: &str, to: &str) {
        let (from_window, to_window) = (crate::models::context_window(from), crate::models::context_window(to));
        let (from_name, to_name) = (crate::models::display_name(from), crate::models::display_name(to));
        let (original, content) = match self.profile.profile().lines.fallback {
            FallbackWording::Ids => (from.to_string(), format!("Switched to {to} due to high demand for {from}")),
            FallbackWording::DisplayNames => {
                // The 1M-context variant is named so (`claude-opus-4-8[1m]`, the `default`).
                let note = if from.ends_with("[1m]") { " (1M context)" } else { "" };
                (from.to_string(), format!("Switched to {to_name} due to high demand for {from_name}{note}"))
            }
            FallbackWording::DisplayNamesAndWindow => {
                let mut content = format!("Switched to {to_name} due to high demand for {from_name}");
                if from_window != to_window {
                    content.push_str(&format!(
                        " · context window {} → {} tokens",
                        tokens(from_window),
                        tokens(to_window)
                    ));
                }
                (from.to_string(), content)
            }
        };
        self.system_line(
            "model_fallback",
            json!({"trigger": trigger, "original_model": original, "fallback_model": to, "content": content}),
        );
    }

    /// Claude Code's notice after the first Stop-hook feedback of a query.
    pub(super) fn stop_hook_notification(&mut self) {
        let Some(text) = self.profile.profile().lines.stop_hook_notification.filter(|_| !self.notified) else { return };
        self.notified = true;
        self.system_line("notification", json!({"key": "stop-hook-error", "text": text, "priority": "immediate"}));
    }

    /// 2.1.332 reports the Stop-hook block cap before the result.
    pub(super) fn block_cap(&mut self, cap: u32) {
        if !self.profile.profile().lines.block_cap {
            return;
        }
        let text = profile::BLOCK_CAP_TEXT.replace("{n}", &(cap.saturating_add(1)).to_string());
        self.system_line("informational", json!({"content": text, "level": "warning"}));
        self.system_line(
            "notification",
            json!({"key": "stop-hook-block-cap", "text": text, "priority": "high", "color": "warning"}),
        );
    }

    /// 2.1.332's line before a denied call's result, with the reason's type where it has one.
    pub(super) fn permission_denied(&mut self, outcome: &reloop_core::ToolOutcome) {
        if !self.profile.profile().lines.permission_denied {
            return;
        }
        let message = outcome.content.as_text();
        let tool = self.tool_names.get(&outcome.tool_use_id).cloned().unwrap_or_default();
        // What the call's PreToolUse hooks ruled (tool_results/hook_rulings, flag 29): 2.1.332
        // prints no line for a deny it words as a hook error, and names the hook for an ask.
        let runs = self.pre_tool_use.remove(&outcome.tool_use_id).unwrap_or_default();
        let combined = reloop_core::hook::outcome(HookEventName::PreToolUse, &runs);
        let hook = combined.permission;
        let reason = hook.as_ref().and_then(|p| p.reason.as_deref()).map(str::trim).unwrap_or_default();
        let decided = |decision: Permission| hook.as_ref().is_some_and(|p| p.decision == decision);
        let ruled = |decision: Permission| decided(decision) && !reason.is_empty();
        let worded =
            self.profile.profile().tools.hook_denied.map(|t| t.replace("{tool}", &tool).replace("{reason}", reason));
        if ruled(Permission::Deny) && worded.as_deref() == Some(message.as_str()) {
            return;
        }
        // A deny or an ask with no reason, worded as the version words them (flag 34,
        // `tool_results/hook_no_reason`): 2.1.332 prints no line for the deny, and names the
        // hook, with an empty reason, for the ask.
        let bare = self.profile.bare_hook_texts();
        let bare_said = |text: Option<&str>| text.is_some_and(|t| t.replace("{tool}", &tool) == message);
        let bare_ruling = |decision: Permission| decided(decision) && reason.is_empty();
        if bare_ruling(Permission::Deny) && bare_said(bare.denied) {
            return;
        }
        let bare_ask = bare_ruling(Permission::Ask) && bare_said(bare.asked);
        // A hook's exit 2, which 2.1.332 names as the hook's ruling and prints no line for
        // (`tool_results/hook_exit2`; an outcome journaled before flag 33 names none).
        // The ruling's source, as the outcome's entry names it (none before flag 12).
        let source = outcome.tool_result_meta.as_ref().and_then(|m| m["permission_decision"]["source"].as_str());
        if !combined.blocks.is_empty() && source == Some("hook") {
            return;
        }
        // A refusal the tool's own input check words (a Read a path rule denies,
        // tool_results/deny_rules) is printed as no permission check's; nor is the user's own
        // answer to the permission prompt (the SDK's `can_use_tool`, tests/sdk/recorded/
        // can_use_tool.jsonl), which the outcome's entry names.
        if message.starts_with("<tool_use_error>") || source == Some("user_reject") {
            return;
        }
        let mut fields = Map::new();
        fields.insert("tool_name".into(), json!(tool));
        fields.insert("tool_use_id".into(), json!(outcome.tool_use_id));
        if ruled(Permission::Ask) && message == reason {
            fields.insert("decision_reason_type".into(), json!("hook"));
            fields.insert("decision_reason".into(), json!(message));
        } else if bare_ask {
            fields.insert("decision_reason_type".into(), json!("hook"));
            fields.insert("decision_reason".into(), json!(""));
        } else if message.contains("don't ask mode") {
            fields.insert("decision_reason_type".into(), json!("mode"));
        } else if message.starts_with("Permission to use Bash with command ") {
            // A Bash deny rule, judged on the command's parts (tool_results/deny_rules).
            fields.insert("decision_reason_type".into(), json!("subcommandResults"));
        } else if outcome.rule_source.is_some() && message.starts_with("Claude requested permissions to use ") {
            // An ask rule's refusal, with nobody to ask (rule_sources/ask; a rule's origin is
            // journaled from flag 37 on).
            fields.insert("decision_reason_type".into(), json!("rule"));
        } else if message == "This command requires approval" {
            fields.insert("decision_reason_type".into(), json!("other"));
            fields.insert("decision_reason".into(), json!(message));
        }
        fields.insert("message".into(), json!(message));
        self.system_line("permission_denied", Value::Object(fields));
    }
}

/// A context window as Claude Code writes it: `1M`, `200K`.
fn tokens(window: u64) -> String {
    match window {
        w if w >= 1_000_000 && w.is_multiple_of(1_000_000) => format!("{}M", w / 1_000_000),
        w if w >= 1_000 && w.is_multiple_of(1_000) => format!("{}K", w / 1_000),
        w => w.to_string(),
    }
}
