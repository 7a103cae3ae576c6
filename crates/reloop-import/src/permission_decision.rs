//! Claude Code 2.1.332's `permissionDecision` on a tool result's line of the session file: how
//! the permission check ruled on the call. It is the ruling the stream's `tool_result_meta` entry
//! carries (journaled on the outcome from flag 12 on), written in the session file's words, so
//! the file says nothing the journal does not. 2.1.197 writes no such field (none of its
//! recordings holds one).
//!
//! Each pairing below is one the recordings show, stream entry beside file field
//! (tests/print/recorded/2.1.332/, crates/reloop-import/tests/recorded/2.1.332/). A rule's
//! ruling names the rule's origin, which the outcome keeps beside the entry from flag 37 on
//! (`rule_sources/`): `ruleSource` (`userSettings`, `cliArg`, …), and for a refusal, a deny
//! rule's or an ask rule's with nobody to ask, the reason code `rule:<source>`. Not written,
//! because the journal does not say it: the reason code of an ask that nobody could answer when
//! something else than a rule or "no rule allows it" asked (a Bash command too complex to judge,
//! `bashMiss:too-complex`): reloop's entry reads `unknown` there, which Claude Code writes for
//! the rest.

use reloop_core::RuleSource;
use serde_json::{json, Value};

/// The session file's `permissionDecision` for a `tool_result_meta` entry and the origin of
/// the rule behind it, or `None` when the entry holds no permission decision.
pub(crate) fn from_meta(meta: &Value, rule: Option<RuleSource>) -> Option<Value> {
    let ruling = meta.get("permission_decision")?;
    let decision = ruling.get("decision")?.as_str()?;
    let source = ruling.get("source")?.as_str()?;
    let reason = ruling.get("reason_type").and_then(Value::as_str);
    let kind = meta.get("non_execution_kind").and_then(Value::as_str);
    let mut out = json!({"decision": decision, "source": source});
    if let Some(reason) = reason {
        out["reasonType"] = json!(reason);
    }
    // tests/sdk/recorded/can_use_tool*: the user's answer to the permission prompt, an allow
    // granted once; the file gives no reason for either answer.
    if source == "user_temporary" {
        out["grantScope"] = json!("once");
        out["reasonCode"] = json!("unknown");
    }
    if let Some(rule) = rule {
        out["ruleSource"] = json!(rule.as_str());
        if decision == "reject" {
            out["reasonCode"] = json!(format!("rule:{}", rule.as_str()));
        }
    } else if decision == "reject" {
        let code = match (kind, reason) {
            // tool_results/dont_ask: `dontAsk` refused what would have been asked.
            (Some("permission-rule"), Some("mode")) => Some("mode:dontAsk"),
            // tool_results/hook_rulings: a PreToolUse hook's deny.
            (Some("permission-rule"), Some("hook")) => Some("hook:PreToolUse"),
            // permission_denied/default_mode: an ask in print mode, with nobody to ask; and the
            // user's no to the permission prompt (can_use_tool).
            (Some("user-rejected"), None) => Some("unknown"),
            (Some("permission-rule"), None) if source == "user_reject" => Some("unknown"),
            _ => None,
        };
        if let Some(code) = code {
            out["reasonCode"] = json!(code);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(text: &str) -> Option<Value> {
        from_meta(&serde_json::from_str(text).unwrap(), None)
    }

    fn ruled(text: &str, rule: RuleSource) -> Option<Value> {
        from_meta(&serde_json::from_str(text).unwrap(), Some(rule))
    }

    #[test]
    fn each_recorded_ruling_reads_as_the_session_file_writes_it() {
        // Stream entries and file fields of the same calls, from the 2.1.332 recordings.
        let pairs = [
            (
                r#"{"id":"t","permission_decision":{"decision":"accept","source":"config","reason_type":"mode"}}"#,
                r#"{"decision":"accept","source":"config","reasonType":"mode"}"#,
            ),
            (
                r#"{"id":"t","permission_decision":{"decision":"accept","source":"config","reason_type":"subcommandResults"}}"#,
                r#"{"decision":"accept","source":"config","reasonType":"subcommandResults"}"#,
            ),
            (
                r#"{"id":"t","permission_decision":{"decision":"accept","source":"config"}}"#,
                r#"{"decision":"accept","source":"config"}"#,
            ),
            (
                r#"{"id":"t","permission_decision":{"decision":"accept","source":"hook","reason_type":"hook"}}"#,
                r#"{"decision":"accept","source":"hook","reasonType":"hook"}"#,
            ),
            (
                r#"{"id":"t","non_execution_kind":"permission-rule","permission_decision":{"decision":"reject","source":"config","reason_type":"mode"}}"#,
                r#"{"decision":"reject","source":"config","reasonType":"mode","reasonCode":"mode:dontAsk"}"#,
            ),
            (
                r#"{"id":"t","non_execution_kind":"permission-rule","permission_decision":{"decision":"reject","source":"hook","reason_type":"hook"}}"#,
                r#"{"decision":"reject","source":"hook","reasonType":"hook","reasonCode":"hook:PreToolUse"}"#,
            ),
            (
                r#"{"id":"t","non_execution_kind":"user-rejected","permission_decision":{"decision":"reject","source":"config"}}"#,
                r#"{"decision":"reject","source":"config","reasonCode":"unknown"}"#,
            ),
            // tests/sdk/recorded/can_use_tool.jsonl and its .transcript.jsonl.
            (
                r#"{"id":"t","permission_decision":{"decision":"accept","source":"user_temporary"}}"#,
                r#"{"decision":"accept","source":"user_temporary","grantScope":"once","reasonCode":"unknown"}"#,
            ),
            (
                r#"{"id":"t","non_execution_kind":"permission-rule","permission_decision":{"decision":"reject","source":"user_reject"}}"#,
                r#"{"decision":"reject","source":"user_reject","reasonCode":"unknown"}"#,
            ),
        ];
        for (meta, field) in pairs {
            let want: Value = serde_json::from_str(field).unwrap();
            assert_eq!(entry(meta), Some(want), "{meta}");
        }
    }

    #[test]
    fn a_rules_ruling_names_the_rules_origin() {
        // crates/reloop-import/tests/recorded/2.1.332/rule_sources/: stream entry, origin, field.
        let cases = [
            (
                r#"{"id":"t","permission_decision":{"decision":"accept","source":"user_permanent","reason_type":"rule"}}"#,
                RuleSource::LocalSettings,
                r#"{"decision":"accept","source":"user_permanent","reasonType":"rule","ruleSource":"localSettings"}"#,
            ),
            (
                r#"{"id":"t","permission_decision":{"decision":"accept","source":"config","reason_type":"rule"}}"#,
                RuleSource::Command,
                r#"{"decision":"accept","source":"config","reasonType":"rule","ruleSource":"command"}"#,
            ),
            (
                r#"{"id":"t","non_execution_kind":"permission-rule","permission_decision":{"decision":"reject","source":"config","reason_type":"subcommandResults"}}"#,
                RuleSource::UserSettings,
                r#"{"decision":"reject","source":"config","reasonType":"subcommandResults","ruleSource":"userSettings","reasonCode":"rule:userSettings"}"#,
            ),
            (
                r#"{"id":"t","permission_decision":{"decision":"reject","source":"user_reject","reason_type":"rule"}}"#,
                RuleSource::LocalSettings,
                r#"{"decision":"reject","source":"user_reject","reasonType":"rule","ruleSource":"localSettings","reasonCode":"rule:localSettings"}"#,
            ),
            // An ask rule's ask, with nobody to ask: its code is the rule's, not `unknown`.
            (
                r#"{"id":"t","non_execution_kind":"user-rejected","permission_decision":{"decision":"reject","source":"config"}}"#,
                RuleSource::ProjectSettings,
                r#"{"decision":"reject","source":"config","ruleSource":"projectSettings","reasonCode":"rule:projectSettings"}"#,
            ),
        ];
        for (meta, rule, field) in cases {
            let want: Value = serde_json::from_str(field).unwrap();
            assert_eq!(ruled(meta, rule), Some(want), "{meta}");
        }
    }

    #[test]
    fn a_rules_ruling_is_written_without_the_source_the_journal_does_not_hold() {
        let allowed = entry(r#"{"permission_decision":{"decision":"accept","source":"config","reason_type":"rule"}}"#);
        assert_eq!(allowed, Some(json!({"decision": "accept", "source": "config", "reasonType": "rule"})));
        let denied = entry(
            r#"{"non_execution_kind":"permission-rule","permission_decision":{"decision":"reject","source":"config","reason_type":"rule"}}"#,
        );
        assert_eq!(denied, Some(json!({"decision": "reject", "source": "config", "reasonType": "rule"})));
    }

    #[test]
    fn an_entry_without_a_ruling_gives_no_field() {
        assert_eq!(entry(r#"{"id":"t"}"#), None);
        assert_eq!(entry(r#"{"permission_decision":{"decision":7}}"#), None);
        assert_eq!(entry("[]"), None);
    }
}
