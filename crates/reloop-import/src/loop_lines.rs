//! The lines Claude Code writes about its own loop rather than the conversation: Stop-hook
//! feedback and summaries, compaction boundaries, the max-turns attachment, the reminders it
//! appends after a cut or malformed answer. Each is read into the outside fact the core needs
//! (a hook's run, a limit) so that the core takes the step Claude Code took.

use reloop_core::hook::HookRun;
use reloop_core::profile::{
    unwrap_reminder, CUT_STREAM_RESUME_TEXT, HOOK_PROVENANCE_PREAMBLE, MALFORMED_RETRY_TEXT_2_1_197,
    MALFORMED_RETRY_TEXT_2_1_332, MAX_TOKENS_RESUME_TEXT,
};
use serde_json::{json, Map, Value};

/// How the text of a Stop hook's feedback message starts, in every version.
pub const STOP_HOOK_FEEDBACK_HEADER: &str = "Stop hook feedback:";

/// One blocking Stop hook, as its feedback line reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StopBlock {
    /// The hook's command: named by an exit-2 line, not by a JSON reason.
    pub command: Option<String>,
    /// What the model was told (stderr as written, or the JSON `reason`).
    pub message: String,
    /// The JSON form (`{"decision":"block","reason":R}`).
    pub from_json: bool,
}

impl StopBlock {
    /// The hook's run that gives this block: exit 2 with the stderr, or exit 0 with the JSON.
    pub fn run(&self, command: &str) -> HookRun {
        let (exit_code, stdout, stderr) = if self.from_json {
            (0, json!({"decision": "block", "reason": self.message}).to_string(), String::new())
        } else {
            (2, String::new(), self.message.clone())
        };
        HookRun { command: command.to_string(), exit_code: Some(exit_code), stdout, stderr, timed_out: false }
    }
}

/// The feedback of blocking Stop hooks, in either version's wording: 2.1.197's plain
/// `Stop hook feedback:\n[cmd]: stderr` (or the bare JSON reason), or 2.1.332's same text inside
/// a `<system-reminder>` after the hook provenance preamble. `None` for any other text.
pub(crate) fn stop_hook_feedback(text: &str) -> Option<Vec<StopBlock>> {
    let inner = unwrap_reminder(text);
    let inner =
        inner.strip_prefix(HOOK_PROVENANCE_PREAMBLE).map_or(inner, |rest| rest.strip_prefix('\n').unwrap_or(rest));
    let body = inner.strip_prefix(STOP_HOOK_FEEDBACK_HEADER)?.strip_prefix('\n')?;
    // A new hook's line starts `[command]: `; anything else continues the line before (stderr
    // may span lines).
    let mut starts = vec![0];
    let bytes = body.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'\n' && i + 1 < bytes.len() && is_command_line(&body[i + 1..]) {
            starts.push(i + 1);
        }
    }
    let mut blocks = Vec::new();
    for (k, &start) in starts.iter().enumerate() {
        let end = starts.get(k + 1).map_or(body.len(), |next| next - 1);
        let part = &body[start..end];
        blocks.push(match command_of(part) {
            Some((command, message)) => {
                StopBlock { command: Some(command.to_string()), message: message.to_string(), from_json: false }
            }
            None => StopBlock { command: None, message: part.to_string(), from_json: true },
        });
    }
    Some(blocks)
}

fn is_command_line(text: &str) -> bool {
    command_of(text).is_some()
}

/// `[command]: message` split, the command being the first line's text up to `]: `.
fn command_of(text: &str) -> Option<(&str, &str)> {
    let rest = text.strip_prefix('[')?;
    let first_line = rest.split('\n').next().unwrap_or(rest);
    let at = first_line.find("]: ")?;
    Some((&rest[..at], &rest[at + 3..]))
}

/// A `system` line of subtype `stop_hook_summary`: which Stop hooks ran, and whether one ended
/// the run (`preventedContinuation`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StopHookSummary {
    /// The hooks' commands, in order.
    pub commands: Vec<String>,
    /// A hook said `continue: false`.
    pub prevented: bool,
    /// Its `stopReason`.
    pub stop_reason: Option<String>,
    /// Hooks that failed without blocking, as the line words them.
    pub errors: Vec<String>,
}

impl StopHookSummary {
    pub fn read(line: &Map<String, Value>) -> Self {
        let commands = line
            .get("hookInfos")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|h| h.get("command").and_then(Value::as_str).map(str::to_string))
            .collect();
        let errors = line
            .get("hookErrors")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|e| e.as_str().map_or_else(|| e.to_string(), str::to_string))
            .collect();
        let stop_reason = line.get("stopReason").and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string);
        StopHookSummary {
            commands,
            prevented: line.get("preventedContinuation").and_then(Value::as_bool).unwrap_or(false),
            stop_reason,
            errors,
        }
    }

    /// The runs of hooks that let the turn end (or, `prevented`, ended the run): what the core
    /// reads as this summary's outcome. Hooks with an error exit 1 with it; a preventing hook
    /// (the first, as the line does not say which) prints `continue: false`.
    pub fn runs(&self) -> Vec<HookRun> {
        let mut runs: Vec<HookRun> = self
            .commands
            .iter()
            .map(|c| HookRun {
                command: c.clone(),
                exit_code: Some(0),
                stdout: String::new(),
                stderr: String::new(),
                timed_out: false,
            })
            .collect();
        for (run, error) in runs.iter_mut().zip(&self.errors) {
            run.exit_code = Some(1);
            run.stderr = error.clone();
        }
        if self.prevented {
            let stop = json!({"continue": false, "stopReason": self.stop_reason}).to_string();
            match runs.first_mut() {
                Some(run) => {
                    run.exit_code = Some(0);
                    run.stdout = stop;
                }
                None => runs.push(HookRun {
                    command: String::new(),
                    exit_code: Some(0),
                    stdout: stop,
                    stderr: String::new(),
                    timed_out: false,
                }),
            }
        }
        runs
    }
}

/// Text the core appends by itself after a response (the max-tokens resume, the malformed-call
/// reminder, the resume after a cut stream), in either version's wording: the import leaves it
/// to the core.
pub(crate) fn core_reminder(text: &str) -> Option<&'static str> {
    let inner = unwrap_reminder(text.trim_end_matches('\n'));
    [
        (MAX_TOKENS_RESUME_TEXT, "max_tokens_resume"),
        (MALFORMED_RETRY_TEXT_2_1_197, "malformed_tool_call_retry"),
        (MALFORMED_RETRY_TEXT_2_1_332, "malformed_tool_call_retry"),
        (CUT_STREAM_RESUME_TEXT, "cut_stream_resume"),
    ]
    .into_iter()
    .find(|(known, _)| inner == *known)
    .map(|(_, kind)| kind)
}

/// The model's own summary inside the message Claude Code opens a compacted history with: the
/// text after `Summary:` up to the words every version closes it with. `None` when the text does
/// not have that shape.
pub(crate) fn compact_summary(text: &str) -> Option<&str> {
    let start = text.find("Summary:\n")? + "Summary:\n".len();
    let rest = &text[start..];
    let end = [
        "\n\nIf you need specific details from before compaction",
        "\nContinue the conversation from where it left off",
        "\nPlease continue the conversation from where we left it off",
    ]
    .iter()
    .filter_map(|marker| rest.find(marker))
    .min()
    .unwrap_or(rest.len());
    Some(rest[..end].trim())
}

/// The output limit an error text names: `... exceeded the 64000 output token maximum ...`.
pub(crate) fn output_limit_in(text: &str) -> Option<u32> {
    let at = text.find(" output token maximum")?;
    let before = text[..at].trim_end();
    let digits = before.rsplit(|c: char| !c.is_ascii_digit()).next()?;
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_versions_feedback_reads_back_to_the_hook_s_words() {
        let plain = stop_hook_feedback("Stop hook feedback:\n[./hook.sh]: STOP-HOOK-FEEDBACK: check logout\n").unwrap();
        assert_eq!(
            plain,
            [StopBlock {
                command: Some("./hook.sh".into()),
                message: "STOP-HOOK-FEEDBACK: check logout\n".into(),
                from_json: false
            }]
        );
        let wrapped = reloop_core::profile::CLAUDE_CODE_2_1_332
            .stop_hook_feedback("Stop hook feedback:\n[./hook.sh]: STOP-HOOK-FEEDBACK: check logout\n");
        assert_eq!(stop_hook_feedback(&wrapped).unwrap(), plain);
        let json = stop_hook_feedback("Stop hook feedback:\nJSON-STOP-HOOK-REASON: also check logout.ts").unwrap();
        assert_eq!(json[0].command, None);
        assert!(json[0].from_json);
        let two = stop_hook_feedback("Stop hook feedback:\n[a]: one\nmore\n\n[b]: two").unwrap();
        assert_eq!(two.iter().map(|b| b.message.as_str()).collect::<Vec<_>>(), ["one\nmore\n", "two"]);
        assert_eq!(stop_hook_feedback("Please check the stop hook feedback"), None);
    }

    #[test]
    fn the_summary_is_read_out_of_either_version_s_message() {
        let cc = "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\n<system-reminder>\n<tools-used-before-summary>Read</tools-used-before-summary>\n</system-reminder>\nSummary:\nFAKE COMPACT SUMMARY: the user asked.\n\nIf you need specific details from before compaction (like exact code snippets), read the full transcript at: /t.jsonl\nContinue the conversation from where it left off without asking the user any further questions.";
        assert_eq!(compact_summary(cc), Some("FAKE COMPACT SUMMARY: the user asked."));
        let rule = reloop_core::profile::CLAUDE_CODE_2_1_332.compact;
        let ours = reloop_core::compact::shape::summary_text("S1\nS2", &["Read"], Some("/t.jsonl"), rule.kept_note);
        assert_eq!(compact_summary(&ours), Some("S1\nS2"));
        assert_eq!(compact_summary("no summary here"), None);
    }

    #[test]
    fn the_output_limit_is_read_from_the_error() {
        let text = "API Error: Claude's response exceeded the 64000 output token maximum. To configure this behavior, set the CLAUDE_CODE_MAX_OUTPUT_TOKENS environment variable.";
        assert_eq!(output_limit_in(text), Some(64_000));
        assert_eq!(output_limit_in("API Error: 500"), None);
    }
}
