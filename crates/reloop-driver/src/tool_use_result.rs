//! Claude Code's `tool_use_result` on an outcome: what the call did as data, for the caller's
//! stream and transcript. A tool that ran and answered keeps its own ([`reloop_tools::ToolOutput`]'s
//! `structured`); a failure of any kind (the tool's, a denial, an unknown tool) is its text as
//! Claude Code words it there: `Error: …`, without the `<tool_use_error>` tags the model reads.
//! Only sessions with [`reloop_core::Flag::StreamDetails`] keep it, so an older journal replays
//! to the stream it printed.

use reloop_core::{Event, RuleSource, ToolOutcome, ToolUse};
use reloop_tools::{Answers, RuleStep, Ruling, Why};
use serde_json::{json, Value};

/// The error text Claude Code keeps as a failed call's `tool_use_result`.
fn error_text(outcome: &ToolOutcome) -> String {
    let text = outcome.content.as_text();
    let inner =
        text.strip_prefix("<tool_use_error>").and_then(|t| t.strip_suffix("</tool_use_error>")).unwrap_or(&text);
    // Input that was not JSON: Claude Code keeps the byte count alone.
    if let Some(bytes) = unparsed_bytes(inner) {
        return format!("InputValidationError: JSON parse failed ({bytes} bytes)");
    }
    if inner.starts_with("Error: ") || inner.starts_with("InputValidationError: ") {
        inner.to_string()
    } else {
        format!("Error: {inner}")
    }
}

/// The length of a call's input that could not be parsed, from the text the model reads
/// (`… could not be parsed as JSON.\nYou sent (first N of M bytes): …`).
fn unparsed_bytes(text: &str) -> Option<&str> {
    let rest = text.strip_prefix("InputValidationError: ")?;
    let (_, after) = rest.split_once(" was called with input that could not be parsed as JSON.\nYou sent (first ")?;
    let (_, of) = after.split_once(" of ")?;
    of.split_once(" bytes)").map(|(total, _)| total).filter(|t| t.chars().all(|c| c.is_ascii_digit()))
}

/// Gives a failed call's outcome its error text, when the session keeps these and the outcome
/// has none yet (a subagent's answer and an MCP tool's keep none).
pub(crate) fn fill(event: &mut Event, on: bool) {
    if let (true, Event::ToolDone(outcome)) = (on, event) {
        if outcome.is_error && outcome.tool_use_result.is_none() {
            outcome.tool_use_result = Some(Value::String(error_text(outcome)));
        }
    }
}

/// Claude Code 2.1.332's `tool_result_meta` entry for the ruling on `call`: what let it run
/// (an allow rule, the mode, a read-only command's parts, a PreToolUse hook) or kept it from
/// running (nobody to ask, `dontAsk`, a deny rule, a hook), as recorded in
/// tests/print/recorded/2.1.332/tool_results/, and the answer to the permission prompt as
/// tests/sdk/recorded/can_use_tool.jsonl records it. `None` where Claude Code has no such step
/// (a library embedder's own callback, which print mode never sets) or prints none (an unknown
/// tool, an invalid input, a removed tool). `rule`: the origin of the rule that ruled, where the
/// session names it (flag 37): a rule of the user's own settings then reads as the user's ruling,
/// and an ask rule's refusal has its entry (`rule_sources/`).
pub(crate) fn meta(call: &ToolUse, ruling: &Ruling, rule: Option<RuleSource>) -> Option<Value> {
    let (decision, kind, reason, source) = match ruling {
        // tool_results/hook_rulings: a hook's `permissionDecision` of allow or deny.
        Ruling::Run { why: Why::HookAllowed { .. }, .. } => ("accept", None, Some("hook"), "hook"),
        // A hook's exit 2 reads as its deny (tool_results/hook_exit2).
        Ruling::Refuse { why: Why::HookDenied { .. } | Why::HookBlocked { .. }, .. } => {
            ("reject", Some("permission-rule"), Some("hook"), "hook")
        }
        // tests/sdk/recorded/can_use_tool.jsonl: the answer to the permission prompt (the SDK's
        // `can_use_tool`, standing in for the person Claude Code would ask), the user's ruling.
        Ruling::Run { why: Why::PromptAllowed(_), .. } => ("accept", None, None, "user_temporary"),
        Ruling::Refuse { why: Why::PromptDenied(_), .. } => ("reject", Some("permission-rule"), None, "user_reject"),
        // tool_results/hook_rulings: a hook's ask with nobody to ask, as a rule's ask reads.
        Ruling::Refuse { why: Why::HookAsked { .. }, .. } => ("reject", Some("user-rejected"), None, "config"),
        // tool_results/deny_rules: a Bash command is judged by its parts; another tool's path
        // rule refuses it as its input's check does, with no non-execution kind.
        Ruling::Refuse { why: Why::Rules(RuleStep::DenyRule), .. } if call.name == "Bash" => {
            ("reject", Some("permission-rule"), Some("subcommandResults"), "config")
        }
        Ruling::Refuse { why: Why::Rules(RuleStep::DenyRule), .. } => {
            ("reject", None, Some("rule"), rule_decision_source(rule, false))
        }
        // hooks_events/all_log, structured_output/*: an `Agent` call and the final-answer tool
        // are let through by their own check, with no reason (the answer's schema is checked
        // in the call, so an answer that fails it was let through too).
        Ruling::Run { why: Why::Rules(_) | Why::NoRules, .. } if own_check(&call.name) => {
            ("accept", None, None, "config")
        }
        _ => return rules_meta(call, ruling, rule),
    };
    Some(entry(call, decision, kind, reason, source))
}

/// The origin of the rule behind `ruling`, when the rules gave it ([`Answers::rules`]).
pub(crate) fn rule_of(ruling: &Ruling, answers: &Answers) -> Option<RuleSource> {
    match ruling.why() {
        Why::Rules(_) => answers.rules.as_ref().and_then(|judgement| judgement.rule),
        _ => None,
    }
}

/// Claude Code 2.1.332's `source` of a decision a rule gave (its `reason_type` `rule`): a rule
/// of the user's own settings files is the user's lasting word (`user_permanent`, or
/// `user_reject` for a deny), any other rule `config` (`rule_sources/allow`, `rule_sources/deny`).
fn rule_decision_source(rule: Option<RuleSource>, accept: bool) -> &'static str {
    match rule {
        Some(RuleSource::UserSettings | RuleSource::LocalSettings) if accept => "user_permanent",
        Some(RuleSource::UserSettings | RuleSource::LocalSettings) => "user_reject",
        _ => "config",
    }
}

/// Whether Claude Code's permission check lets `tool` through on its own word: the `Agent` tool
/// and the final-answer tool ([`reloop_core::structured::TOOL`]).
fn own_check(tool: &str) -> bool {
    tool == crate::agents::AGENT_TOOL || tool == reloop_core::structured::TOOL
}

/// [`meta`] for the rest of the rules' rulings.
fn rules_meta(call: &ToolUse, ruling: &Ruling, rule: Option<RuleSource>) -> Option<Value> {
    let (decision, kind, reason) = match ruling {
        Ruling::Run { why: Why::Rules(RuleStep::AllowRule), .. } => {
            let source = rule_decision_source(rule, true);
            return Some(entry(call, "accept", None, Some("rule"), source));
        }
        Ruling::Run { why: Why::Rules(step), .. } => {
            let reason = match step {
                RuleStep::ReadOnly if call.name == "Bash" => "subcommandResults",
                RuleStep::ReadOnly | RuleStep::Bypass | RuleStep::AcceptEdits => "mode",
                _ => return None,
            };
            ("accept", None, Some(reason))
        }
        // rule_sources/ask: an ask rule's ask with nobody to ask reads as the rest of the
        // rules' asks, where the rule's origin is known (flag 37).
        Ruling::Refuse { why: Why::Rules(RuleStep::AskRule), denied: true, .. } if rule.is_some() => {
            ("reject", Some("user-rejected"), None)
        }
        Ruling::Refuse { why: Why::Rules(RuleStep::WouldAsk), denied: true, message } => {
            if message.contains("don't ask mode") {
                ("reject", Some("permission-rule"), Some("mode"))
            } else {
                ("reject", Some("user-rejected"), None)
            }
        }
        _ => return None,
    };
    Some(entry(call, decision, kind, reason, "config"))
}

/// One `tool_result_meta` entry: the call's id, what kept it from running if anything, and the
/// permission decision with where it came from.
fn entry(call: &ToolUse, decision: &str, kind: Option<&str>, reason: Option<&str>, source: &str) -> Value {
    let mut permission = json!({"decision": decision, "source": source});
    if let Some(reason) = reason {
        permission["reason_type"] = json!(reason);
    }
    let mut entry = serde_json::Map::new();
    entry.insert("id".into(), json!(call.id));
    if let Some(kind) = kind {
        entry.insert("non_execution_kind".into(), json!(kind));
    }
    entry.insert("permission_decision".into(), permission);
    Value::Object(entry)
}

/// Whether the tool refused the call's input before doing anything (its error wrapped in
/// `<tool_use_error>`: an Edit's string not found, a file not read first): Claude Code checks
/// that before asking for permission, so such a result has no `tool_result_meta`.
pub(crate) fn invalid(outcome: &ToolOutcome) -> bool {
    outcome.is_error && outcome.content.as_text().starts_with("<tool_use_error>")
}

/// Puts a ruling's `tool_result_meta` entry, and the origin of the rule that gave it, on a
/// refused call's outcome.
pub(crate) fn set_meta(event: &mut Event, meta: Option<Value>, rule: Option<RuleSource>) {
    if let Event::ToolDone(outcome) = event {
        outcome.rule_source = rule.filter(|_| meta.is_some());
        outcome.tool_result_meta = meta;
    }
}

/// Puts a ruling's entry and its rule's origin on the outcome of a call that ran, unless the
/// tool refused its input before any check ([`invalid`]).
pub(crate) fn attach(outcome: &mut ToolOutcome, meta: Option<Value>, rule: Option<RuleSource>) {
    outcome.tool_result_meta = meta.filter(|_| !invalid(outcome));
    outcome.rule_source = rule.filter(|_| outcome.tool_result_meta.is_some());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(text: &str) -> Option<Value> {
        let mut event = Event::ToolDone(ToolOutcome::error("t1", text));
        fill(&mut event, true);
        match event {
            Event::ToolDone(outcome) => outcome.tool_use_result,
            _ => None,
        }
    }

    #[test]
    fn a_rules_origin_names_whose_word_the_ruling_was() {
        // crates/reloop-import/tests/recorded/2.1.332/rule_sources/: the stream's entries.
        let call =
            |name: &str| ToolUse { id: "t".into(), name: name.into(), input: json!({}), extra: Default::default() };
        let run = Ruling::Run { input: json!({}), why: Why::Rules(RuleStep::AllowRule) };
        let refused = |step| Ruling::Refuse { message: "no".into(), denied: true, why: Why::Rules(step) };
        let source = |meta: Option<Value>| meta.map(|m| m["permission_decision"]["source"].clone());
        assert_eq!(source(meta(&call("Write"), &run, Some(RuleSource::UserSettings))), Some(json!("user_permanent")));
        assert_eq!(source(meta(&call("Bash"), &run, Some(RuleSource::LocalSettings))), Some(json!("user_permanent")));
        assert_eq!(source(meta(&call("Read"), &run, Some(RuleSource::CliArg))), Some(json!("config")));
        assert_eq!(source(meta(&call("Read"), &run, Some(RuleSource::ProjectSettings))), Some(json!("config")));
        assert_eq!(source(meta(&call("Read"), &run, None)), Some(json!("config")), "no origin: as before");
        let denied = refused(RuleStep::DenyRule);
        assert_eq!(source(meta(&call("Read"), &denied, Some(RuleSource::LocalSettings))), Some(json!("user_reject")));
        assert_eq!(source(meta(&call("Read"), &denied, Some(RuleSource::FlagSettings))), Some(json!("config")));
        // A Bash deny is the command's parts' ruling (`subcommandResults`), `config` whoever wrote it.
        assert_eq!(source(meta(&call("Bash"), &denied, Some(RuleSource::UserSettings))), Some(json!("config")));
        // An ask rule's refusal has its entry where the origin is known (flag 37), none before.
        let asked = refused(RuleStep::AskRule);
        let entry = meta(&call("Write"), &asked, Some(RuleSource::ProjectSettings));
        assert_eq!(
            entry,
            Some(json!({"id": "t", "non_execution_kind": "user-rejected",
                "permission_decision": {"decision": "reject", "source": "config"}}))
        );
        assert_eq!(meta(&call("Write"), &asked, None), None);
    }

    #[test]
    fn the_origin_goes_only_where_the_entry_goes() {
        let mut outcome = ToolOutcome::error("t1", "<tool_use_error>String to replace not found</tool_use_error>");
        attach(&mut outcome, Some(json!({"id": "t1"})), Some(RuleSource::CliArg));
        assert_eq!((outcome.tool_result_meta, outcome.rule_source), (None, None), "an input refused before the check");
        let mut event = Event::ToolDone(ToolOutcome::error("t1", "denied"));
        set_meta(&mut event, Some(json!({"id": "t1"})), Some(RuleSource::UserSettings));
        assert!(matches!(event, Event::ToolDone(ToolOutcome { rule_source: Some(RuleSource::UserSettings), .. })));
    }

    #[test]
    fn a_failure_reads_as_claude_code_keeps_it() {
        // tests/print/recorded/*/tool_results/errors.
        assert_eq!(failed("File does not exist."), Some(Value::from("Error: File does not exist.")));
        assert_eq!(
            failed("<tool_use_error>String to replace not found in file.\nString: x</tool_use_error>"),
            Some(Value::from("Error: String to replace not found in file.\nString: x"))
        );
        assert_eq!(
            failed("<tool_use_error>Error: No such tool available: NoSuchTool</tool_use_error>"),
            Some(Value::from("Error: No such tool available: NoSuchTool"))
        );
        let unparsed = "<tool_use_error>InputValidationError: Read was called with input that could not be parsed \
            as JSON.\nYou sent (first 44 of 44 bytes): {\"file_path\": \"/tmp/x\nCommon causes: …</tool_use_error>";
        assert_eq!(failed(unparsed), Some(Value::from("InputValidationError: JSON parse failed (44 bytes)")));
        let mut event = Event::ToolDone(ToolOutcome::error("t1", "x"));
        fill(&mut event, false);
        assert!(matches!(event, Event::ToolDone(ToolOutcome { tool_use_result: None, .. })), "off: nothing kept");
    }
}
