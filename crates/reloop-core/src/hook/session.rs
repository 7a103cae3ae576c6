//! The session events' hooks (SessionStart, UserPromptSubmit): what their runs mean, worded as
//! Claude Code words it. Recorded with both versions in `tests/print/recorded/*/hooks_events/`
//! (`context`, `plain`, `prompt_block`, `prompt_exit2`, `prompt_stop`).

use serde_json::Value;

use super::{outcome, HookEventName, HookRun};

/// What a prompt's UserPromptSubmit hooks decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptVerdict {
    /// The prompt goes on, with what the hooks add to the context (each already worded, in hook
    /// order; see [`additional_contexts`]).
    Pass {
        /// The added context texts.
        contexts: Vec<String>,
    },
    /// A hook blocked the prompt (exit 2, or `decision: "block"`): it never joins the
    /// conversation and no request is made.
    Blocked {
        /// The hook that blocked.
        command: String,
        /// The reason as the hook gave it (trimmed), for `prompt_submit_outcome.reason`.
        reason: String,
        /// The reason as shown: the JSON reason, or `[COMMAND]: STDERR` with stderr as written.
        shown: String,
    },
    /// A hook said `continue: false`: the prompt joins the conversation, but no request is made.
    Stopped {
        /// The hook that stopped.
        command: String,
        /// Its `stopReason` (empty when it gave none).
        reason: String,
    },
    /// A callback hook answered for another event ([`rejected_answer`]): the session ends.
    Rejected {
        /// The hook (`callback:<id>`).
        command: String,
        /// Claude Code's error text.
        error: String,
    },
}

impl PromptVerdict {
    /// The text shown for a prompt that goes no further (the `system/informational` line's
    /// `content` and the result's `result`), as both versions print it; `None` for a pass.
    pub fn text(&self, prompt: &str) -> Option<String> {
        match self {
            PromptVerdict::Pass { .. } => None,
            PromptVerdict::Blocked { shown, .. } => {
                Some(format!("UserPromptSubmit operation blocked by hook:\n{shown}\n\nOriginal prompt: {prompt}"))
            }
            PromptVerdict::Stopped { reason, .. } => Some(format!("Operation stopped by hook: {reason}")),
            PromptVerdict::Rejected { error, .. } => Some(error.clone()),
        }
    }

    /// 2.1.332's `prompt_submit_outcome` on that line: `kind`, `prompt_kept`, `reason`.
    pub fn submit_outcome(&self) -> Option<Value> {
        let (kind, kept, reason) = match self {
            PromptVerdict::Pass { .. } | PromptVerdict::Rejected { .. } => return None,
            PromptVerdict::Blocked { reason, .. } => ("blocked_by_hook", false, reason),
            PromptVerdict::Stopped { reason, .. } => ("stopped_by_hook", true, reason),
        };
        Some(serde_json::json!({"kind": kind, "prompt_kept": kept, "reason": reason}))
    }
}

/// Reads a prompt's UserPromptSubmit runs: a callback's answer for another event ends the
/// session when `callbacks_checked` ([`crate::Flag::CallbackEventNameChecked`]), then
/// `continue: false` wins, then the first block, else the prompt passes with the hooks' added
/// context (`checked`: [`crate::Flag::HookEventNameChecked`]).
pub fn prompt_verdict(runs: &[HookRun], checked: bool, callbacks_checked: bool) -> PromptVerdict {
    if let Some((command, error)) = rejected_answer(HookEventName::UserPromptSubmit, runs).filter(|_| callbacks_checked)
    {
        return PromptVerdict::Rejected { command, error };
    }
    let combined = outcome(HookEventName::UserPromptSubmit, runs);
    if let Some(prevented) = combined.prevent {
        return PromptVerdict::Stopped {
            command: prevented.command,
            reason: prevented.stop_reason.unwrap_or_default(),
        };
    }
    if let Some(block) = combined.blocks.into_iter().next() {
        // Exit 2 shows stderr as the hook wrote it (the recorded text keeps its newline).
        let shown = if block.from_json {
            block.message.clone()
        } else {
            let raw = runs.iter().find(|r| r.command == block.command).map_or(block.message.as_str(), |r| &r.stderr);
            let raw = if raw.trim().is_empty() { block.message.as_str() } else { raw };
            format!("[{}]: {raw}", block.command)
        };
        return PromptVerdict::Blocked { command: block.command, reason: block.message, shown };
    }
    PromptVerdict::Pass { contexts: additional_contexts(HookEventName::UserPromptSubmit, runs, checked) }
}

/// What SessionStart or UserPromptSubmit hooks add to the model's context, one text per hook
/// that said something on exit 0, in hook order: `hookSpecificOutput.additionalContext` as
/// `EVENT hook additional context: CTX`, plain stdout as `EVENT hook success: TEXT` (SessionStart
/// names its source: `SessionStart:startup hook success: TEXT`). Both versions open their
/// context message with these, each followed by a blank line (`hooks_events/context`, `plain`).
/// When `checked` ([`crate::Flag::HookEventNameChecked`]), an answer whose
/// `hookSpecificOutput.hookEventName` names another event adds nothing: Claude Code refuses it as
/// an error of the hook (`hooks_events/prompt_wrong_event`, both versions).
pub fn additional_contexts(event: HookEventName, runs: &[HookRun], checked: bool) -> Vec<String> {
    let name = event.as_str();
    let success = match event {
        HookEventName::SessionStart => "SessionStart:startup".to_string(),
        _ => name.to_string(),
    };
    runs.iter()
        .filter(|run| run.exit_code == Some(0))
        .filter_map(|run| {
            let text = run.stdout.trim();
            if text.is_empty() {
                return None;
            }
            if !text.starts_with('{') {
                return Some(format!("{success} hook success: {text}"));
            }
            let context = answered_context(text, checked.then_some(name))?;
            Some(format!("{name} hook additional context: {context}"))
        })
        .collect()
}

/// The first callback hook (the Agent SDK's, `callback:<id>`) whose answer's `hookSpecificOutput`
/// names another event than `event` (or none), with Claude Code's error:
/// `Hook returned incorrect event name: expected 'EVENT' but got 'NAME'. Full stdout: JSON`, the
/// answer indented by two spaces. Both versions throw it and end the session, where a command
/// hook's such answer is only its error (Python SDK `examples/hooks.py`; tests/sdk/recorded/
/// hook_wrong_event*.jsonl); an answer that also blocks drops its `hookSpecificOutput` instead,
/// as Claude Code's reading does.
pub fn rejected_answer(event: HookEventName, runs: &[HookRun]) -> Option<(String, String)> {
    let expected = event.as_str();
    runs.iter().filter(|run| run.command.starts_with("callback:") && run.exit_code == Some(0)).find_map(|run| {
        let answer: Value = serde_json::from_str(run.stdout.trim()).ok()?;
        let specific = answer.get("hookSpecificOutput")?;
        let named = specific.get("hookEventName");
        if named.and_then(Value::as_str) == Some(expected) || answer.get("decision") == Some(&Value::from("block")) {
            return None;
        }
        // As JavaScript puts a value in a template: a string as it is, a missing one `undefined`.
        let got = match named {
            None => "undefined".to_string(),
            Some(Value::String(name)) => name.clone(),
            Some(other) => other.to_string(),
        };
        let stdout = serde_json::to_string_pretty(&answer).ok()?;
        let error =
            format!("Hook returned incorrect event name: expected '{expected}' but got '{got}'. Full stdout: {stdout}");
        Some((run.command.clone(), error))
    })
}

/// A hook's JSON answer's `hookSpecificOutput.additionalContext`; with `event`, only when the
/// answer names that event or none (an answer naming another is the hook's error in Claude Code).
fn answered_context(stdout: &str, event: Option<&str>) -> Option<String> {
    let value: Value = serde_json::from_str(stdout.trim()).ok()?;
    let specific = value.get("hookSpecificOutput")?;
    let named = specific.get("hookEventName");
    if event.is_some_and(|event| named.is_some_and(|n| n.as_str() != Some(event))) {
        return None;
    }
    specific.get("additionalContext")?.as_str().map(str::to_string)
}

/// What a call's PostToolUse hooks add to the model's context, one text per hook that answered
/// `hookSpecificOutput.additionalContext` on exit 0, in hook order:
/// `PostToolUse:TOOL hook additional context: CTX` (both versions, `hooks_events/context`).
/// Plain stdout is not context here, nor an answer naming another event.
pub fn tool_contexts(tool: &str, runs: &[HookRun]) -> Vec<String> {
    runs.iter()
        .filter(|run| run.exit_code == Some(0))
        .filter_map(|run| {
            let context = answered_context(&run.stdout, Some("PostToolUse"))?;
            Some(format!("PostToolUse:{tool} hook additional context: {context}"))
        })
        .collect()
}

/// The text SessionStart hooks put before the session's system context: each of
/// [`additional_contexts`] followed by a blank line (empty when none said anything).
pub fn session_start_context(runs: &[HookRun], checked: bool) -> String {
    additional_contexts(HookEventName::SessionStart, runs, checked).iter().map(|c| format!("{c}\n\n")).collect()
}

/// What a compaction by hand's PreCompact hooks add to its `Compacted ` note, one line per hook
/// in hook order: `PreCompact [COMMAND] completed successfully` for a hook that exited 0 with
/// nothing to say (2.1.332, `settings_slash/stream_compact`); a hook's trimmed output follows
/// `: `, and a hook that failed reads `failed` (not recorded: Claude Code's wording of the
/// same note). Empty when no hook ran.
pub fn pre_compact_note(runs: &[HookRun]) -> String {
    let lines: Vec<String> = runs
        .iter()
        .map(|run| {
            let ok = run.exit_code == Some(0);
            let said = if ok { run.stdout.trim() } else { run.stderr.trim() };
            let verdict = if ok { "completed successfully" } else { "failed" };
            match said {
                "" => format!("PreCompact [{}] {verdict}", run.command),
                said => format!("PreCompact [{}] {verdict}: {said}", run.command),
            }
        })
        .collect();
    lines.join("\n")
}

/// What a PreCompact hook that blocked (exit 2, or `decision: "block"`) says: `Compaction blocked
/// by PreCompact hook: [COMMAND]: REASON` (2.1.332, `settings_slash/stream_compact_hooks`; the
/// first block, as Claude Code stops at it). `None` when no hook blocked.
pub fn pre_compact_block(runs: &[HookRun]) -> Option<String> {
    let block = outcome(HookEventName::PreCompact, runs).blocks.into_iter().next()?;
    Some(format!("Compaction blocked by PreCompact hook: [{}]: {}", block.command, block.message))
}

/// The prompt as a hook and the blocked text quote it: the prompt's text blocks, less the
/// `<system-reminder>` context blocks reloop puts before it.
pub fn prompt_text(content: &[crate::message::ContentBlock]) -> String {
    let texts: Vec<&str> = content
        .iter()
        .filter_map(|b| match b {
            crate::message::ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .filter(|t| !t.starts_with("<system-reminder>"))
        .collect();
    texts.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(command: &str, exit: i32, stdout: &str, stderr: &str) -> HookRun {
        HookRun {
            command: command.into(),
            exit_code: Some(exit),
            stdout: stdout.into(),
            stderr: stderr.into(),
            timed_out: false,
        }
    }

    const CMD: &str = "/tmp/reloop-cc-hooks/ev.sh UserPromptSubmit s exit2";

    #[test]
    fn blocks_and_stops_read_as_both_recorded_versions_print_them() {
        let block = prompt_verdict(
            &[run("h", 0, "{\"decision\":\"block\",\"reason\":\"BLOCK-REASON-UserPromptSubmit-s\"}\n", "")],
            true,
            true,
        );
        assert_eq!(
            block.text("检查登录模块").unwrap(),
            "UserPromptSubmit operation blocked by hook:\nBLOCK-REASON-UserPromptSubmit-s\n\nOriginal prompt: 检查登录模块"
        );
        assert_eq!(
            block.submit_outcome().unwrap(),
            serde_json::json!({"kind": "blocked_by_hook", "prompt_kept": false, "reason": "BLOCK-REASON-UserPromptSubmit-s"})
        );
        let exit2 = prompt_verdict(&[run(CMD, 2, "", "EXIT2-STDERR-UserPromptSubmit-s\n")], true, true);
        assert_eq!(
            exit2.text("检查登录模块").unwrap(),
            format!("UserPromptSubmit operation blocked by hook:\n[{CMD}]: EXIT2-STDERR-UserPromptSubmit-s\n\n\nOriginal prompt: 检查登录模块")
        );
        assert_eq!(exit2.submit_outcome().unwrap()["reason"], "EXIT2-STDERR-UserPromptSubmit-s");
        let stop = prompt_verdict(
            &[run("h", 0, "{\"continue\":false,\"stopReason\":\"STOP-REASON-UserPromptSubmit-s\"}", "")],
            true,
            true,
        );
        assert_eq!(stop.text("x").unwrap(), "Operation stopped by hook: STOP-REASON-UserPromptSubmit-s");
        assert_eq!(stop.submit_outcome().unwrap()["kind"], "stopped_by_hook");
        assert_eq!(stop.submit_outcome().unwrap()["prompt_kept"], true);
    }

    #[test]
    fn context_comes_from_additional_context_or_plain_stdout_and_not_from_failures() {
        let ctx = "{\"systemMessage\":\"S\",\"hookSpecificOutput\":{\"hookEventName\":\"UserPromptSubmit\",\"additionalContext\":\"CTX-UserPromptSubmit-s\"}}\n";
        let verdict =
            prompt_verdict(&[run("a", 0, ctx, ""), run("b", 0, "PLAIN\n", ""), run("c", 1, "LOST", "")], true, true);
        assert_eq!(
            verdict,
            PromptVerdict::Pass {
                contexts: vec![
                    "UserPromptSubmit hook additional context: CTX-UserPromptSubmit-s".into(),
                    "UserPromptSubmit hook success: PLAIN".into()
                ]
            }
        );
        assert_eq!(verdict.text("x"), None);
        // The recorded system texts' heads (2.1.332 and 2.1.197 alike).
        let start = "{\"hookSpecificOutput\":{\"hookEventName\":\"SessionStart\",\"additionalContext\":\"CTX-SessionStart-s\"}}";
        assert_eq!(
            session_start_context(&[run("s", 0, start, "")], true),
            "SessionStart hook additional context: CTX-SessionStart-s\n\n"
        );
        assert_eq!(
            session_start_context(&[run("s", 0, "PLAIN-STDOUT-SessionStart-s\n", "")], true),
            "SessionStart:startup hook success: PLAIN-STDOUT-SessionStart-s\n\n"
        );
        assert_eq!(session_start_context(&[run("s", 0, "", "")], true), "");
    }

    /// `hooks_events/prompt_wrong_event`, both versions: a UserPromptSubmit answer naming
    /// SessionStart adds nothing (flag 39); before the flag it counted.
    #[test]
    fn an_answer_naming_another_event_adds_no_context() {
        let wrong =
            "{\"hookSpecificOutput\":{\"hookEventName\":\"SessionStart\",\"additionalContext\":\"WRONG-CTX\"}}\n";
        let unnamed = "{\"hookSpecificOutput\":{\"additionalContext\":\"UNNAMED-CTX\"}}\n";
        let runs = [run("w", 0, wrong, ""), run("u", 0, unnamed, "")];
        let contexts = |checked| match prompt_verdict(&runs, checked, true) {
            PromptVerdict::Pass { contexts } => contexts,
            other => panic!("{other:?}"),
        };
        assert_eq!(contexts(true), ["UserPromptSubmit hook additional context: UNNAMED-CTX"]);
        assert_eq!(contexts(false).len(), 2);
        assert_eq!(tool_contexts("Read", &runs), ["PostToolUse:Read hook additional context: UNNAMED-CTX"]);
    }

    #[test]
    fn pre_compact_note_names_each_hook() {
        assert_eq!(pre_compact_note(&[run("s", 0, "", "")]), "PreCompact [s] completed successfully");
        assert_eq!(
            pre_compact_note(&[run("a", 0, "KEEP X\n", ""), run("b", 1, "", "BAD\n")]),
            "PreCompact [a] completed successfully: KEEP X\nPreCompact [b] failed: BAD"
        );
        assert_eq!(pre_compact_note(&[]), "");
    }

    #[test]
    fn a_pre_compact_block_is_worded_as_claude_code_words_it() {
        let block = "{\"decision\":\"block\",\"reason\":\"BLOCK-REASON-PreCompact-b\"}\n";
        assert_eq!(
            pre_compact_block(&[run("p", 0, "PLAIN\n", ""), run("b", 0, block, "")]).as_deref(),
            Some("Compaction blocked by PreCompact hook: [b]: BLOCK-REASON-PreCompact-b")
        );
        assert_eq!(pre_compact_block(&[run("p", 0, "PLAIN\n", "")]), None);
    }

    /// The Python SDK's `examples/hooks.py`: a UserPromptSubmit callback answering as a
    /// SessionStart hook ends the session, in both versions' words (tests/sdk/recorded/
    /// hook_wrong_event*.jsonl); a command hook's same answer only loses its context, and an
    /// answer that also blocks is not rejected.
    #[test]
    fn a_callbacks_answer_for_another_event_ends_the_session() {
        let answer = "{\"hookSpecificOutput\":{\"hookEventName\":\"SessionStart\",\"additionalContext\":\"My favorite color is hot pink\"}}";
        let want = "Hook returned incorrect event name: expected 'UserPromptSubmit' but got 'SessionStart'. Full stdout: {\n  \"hookSpecificOutput\": {\n    \"hookEventName\": \"SessionStart\",\n    \"additionalContext\": \"My favorite color is hot pink\"\n  }\n}";
        let rejected = prompt_verdict(&[run("callback:hook_0", 0, answer, "")], true, true);
        assert_eq!(rejected, PromptVerdict::Rejected { command: "callback:hook_0".into(), error: want.into() });
        assert_eq!(rejected.text("x").as_deref(), Some(want));
        assert_eq!(rejected.submit_outcome(), None);
        // Before flag 40, and for a command hook, the prompt goes on without the context.
        let passes = PromptVerdict::Pass { contexts: vec![] };
        assert_eq!(prompt_verdict(&[run("callback:hook_0", 0, answer, "")], true, false), passes);
        assert_eq!(prompt_verdict(&[run("/bin/hook", 0, answer, "")], true, true), passes);
        // No event named is JavaScript's `undefined`; the right event passes.
        let unnamed = "{\"hookSpecificOutput\":{\"additionalContext\":\"C\"}}";
        let Some((_, error)) = rejected_answer(HookEventName::UserPromptSubmit, &[run("callback:h", 0, unnamed, "")])
        else {
            panic!("an answer naming no event was taken")
        };
        assert!(
            error.starts_with("Hook returned incorrect event name: expected 'UserPromptSubmit' but got 'undefined'."),
            "{error}"
        );
        let right = "{\"hookSpecificOutput\":{\"hookEventName\":\"UserPromptSubmit\",\"additionalContext\":\"C\"}}";
        assert_eq!(rejected_answer(HookEventName::UserPromptSubmit, &[run("callback:h", 0, right, "")]), None);
        let blocks =
            "{\"decision\":\"block\",\"reason\":\"R\",\"hookSpecificOutput\":{\"hookEventName\":\"SessionStart\"}}";
        assert_eq!(rejected_answer(HookEventName::UserPromptSubmit, &[run("callback:h", 0, blocks, "")]), None);
    }
}
