//! `docs/profiles.md` holds the table rule × profile; it is generated from the profiles' data,
//! so the documented rules are the code's. `RELOOP_BLESS=1` rewrites it.

use reloop_core::profile::{
    AskRuleText, CompactStatusLines, FallbackWording, Profile, ProfileId, Reattach, RestoredDate, RetryAfter,
    RetryCurve, SummaryShape, TranscriptNote, DEFAULT_MAX_TOKENS, TEXT_ONLY,
};

const START: &str = "<!-- profiles-table:start -->\n";
const END: &str = "<!-- profiles-table:end -->";

fn table() -> String {
    let mut out = String::from("| rule |");
    for id in ProfileId::ALL {
        out.push_str(&format!(" `{}` |", id.name()));
    }
    out.push_str("\n|---|");
    out.push_str(&"---|".repeat(ProfileId::ALL.len()));
    out.push('\n');
    let columns: Vec<Vec<(&str, String)>> = ProfileId::ALL.iter().map(|id| rules(id.profile())).collect();
    for (row, (rule, _)) in columns[0].iter().enumerate() {
        out.push_str(&format!("| {rule} |"));
        for column in &columns {
            assert_eq!(column[row].0, *rule, "every profile lists the same rules in the same order");
            out.push_str(&format!(" {} |", column[row].1.replace('|', "\\|").replace('\n', "\\n")));
        }
        out.push('\n');
    }
    out
}

#[test]
fn the_documented_profile_table_is_the_code_s() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/profiles.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let (head, rest) = doc.split_once(START).expect("the start marker");
    let (current, tail) = rest.split_once(END).expect("the end marker");
    let wanted = table();
    if std::env::var("RELOOP_BLESS").as_deref() == Ok("1") {
        std::fs::write(&path, format!("{head}{START}{wanted}{END}{tail}")).unwrap();
        return;
    }
    assert_eq!(current, wanted, "docs/profiles.md's table is stale: run with RELOOP_BLESS=1");
}

/// The rule × value rows `docs/profiles.md` shows for a profile.
fn rules(p: &Profile) -> Vec<(&'static str, String)> {
    let yes_no = |b: bool| if b { "yes" } else { "no" }.to_string();
    vec![
        ("max-tokens resume wrapped in `<system-reminder>`", yes_no(p.max_tokens_resume.reminder)),
        ("max-tokens resume echoed as a synthetic `user` line", yes_no(p.echo_resume)),
        ("malformed tool call: retries", p.malformed.retries.to_string()),
        (
            "malformed tool call: bad message retracted, reminder appended to the last user message (stdout: a synthetic line with `retracted_message_uuids`, the next answer `supersedes` it)",
            yes_no(p.malformed.retract),
        ),
        ("malformed tool call: retry text", format!("`{}`", p.malformed.reminder.text)),
        (
            "malformed tool call: own terminal reason `malformed_tool_use_exhausted`",
            yes_no(p.malformed.own_terminal_reason),
        ),
        ("Stop-hook feedback wrapped with the hook provenance preamble", yes_no(p.stop_hook_preamble.is_some())),
        ("Stop-hook stderr fed back as written (trailing newline kept)", yes_no(p.stop_hook_raw_stderr)),
        (
            "Stop hook blocking in its JSON form: a `role: \"system\"` message after the feedback",
            p.stop_hook_json_system.map_or("none".to_string(), |t| format!("`{t}`")),
        ),
        (
            "result line in Claude Code's words (an API error ends `completed` or `api_error`, not `model_error`)",
            yes_no(p.claude_code_version.is_some()),
        ),
        (
            "result: `terminal_reason: \"api_error\"` and `api_error_type` on API errors",
            yes_no(p.result.api_error_terminal),
        ),
        (
            "result: `api_error: \"max_output_tokens\"` when output tokens run out",
            yes_no(p.result.max_output_tokens_api_error),
        ),
        ("result: max-tokens resumes count in `num_turns`", yes_no(p.result.resumes_count_as_turns)),
        (
            "Write/Edit refuse a file not read first (`File has not been read yet`)",
            yes_no(p.tools.edit_requires_read),
        ),
        ("... before hooks and permissions, and not as a permission denial", yes_no(p.tools.read_check_first)),
        (
            "Bash writing inside the working directories (default mode)",
            p.tools
                .bash_write
                .map_or("`This command requires approval`".to_string(), |t| format!("`{}`", t.create)),
        ),
        ("`--disallowedTools` text", format!("`{}`", p.tools.disallowed)),
        (
            "a second Read of the same part of an unchanged file",
            p.tools.unchanged_read.map_or("the content again".to_string(), |t| format!("`{t}` (not an error)")),
        ),
        (
            "the end of a Write's and an Edit's result (not an Edit of a file never read), and a `replace_all` Edit's `… has been updated. All occurrences were successfully replaced.` (flag 24)",
            p.tools.written_note.map_or("none; `… has been updated successfully.`".to_string(), |t| format!("`{t}`")),
        ),
        (
            "`dontAsk` denial (also `permission_denied.message`)",
            p.tools.dont_ask.map_or("reloop's own: `… reloop is running in don't ask mode. Approve it or add it to the allowed tools to continue.`".to_string(), |t| format!("`{t}`")),
        ),
        (
            "the answer to a call an interrupt stopped while it ran (flag 28; stream-json and the session file then say `User rejected tool use`)",
            p.tools.interrupted.map_or(format!("`{}`", reloop_core::INTERRUPTED_TOOL_RESULT), |t| format!("`{t}`")),
        ),
        (
            "a PreToolUse hook's deny with a reason, as the model reads it (flag 29)",
            p.tools.hook_denied.map_or("the reason".to_string(), |t| format!("`{t}`")),
        ),
        (
            "a PreToolUse hook's ask with a reason, nobody to ask: the call refused with the reason (flag 29)",
            yes_no(p.tools.hook_ask_refuses),
        ),
        (
            "a failed Bash command's result (flag 30)",
            (if p.tools.exit_code_first { "`Exit code N`, then the output" } else { "the output, then `Exit code N`" }).to_string(),
        ),
        (
            "a Read whose path a deny rule matches",
            p.tools.read_path_denied.map_or("as any deny rule: `Permission to use Read has been denied.`".to_string(), |r| {
                format!("`{}`{}", r.text, if r.denial { ", a permission denial" } else { ", no permission denial" })
            }),
        ),
        (
            "an ask rule's refusal, nobody to ask",
            match p.tools.ask_rule {
                AskRuleText::AsAsked => "the question the call would raise without the rule".to_string(),
                AskRuleText::UseTool => "`Claude requested permissions to use TOOL, but you haven't granted it yet.`".to_string(),
                AskRuleText::UseToolButFiles => {
                    "`Claude requested permissions to use TOOL, but you haven't granted it yet.`; a file tool's names its path".to_string()
                }
            },
        ),
        (
            "stdout: `system/notification` after the first Stop-hook feedback",
            p.lines.stop_hook_notification.map_or("none".to_string(), |t| format!("`{t}`")),
        ),
        (
            "stdout: the Stop-hook block cap reported (`system/informational`, `system/notification`)",
            yes_no(p.lines.block_cap),
        ),
        ("stdout: a `system/permission_denied` line per denied call", yes_no(p.lines.permission_denied)),
        (
            "stdout: the `model_fallback` line's words",
            match p.lines.fallback {
                FallbackWording::Ids => "the models' ids".to_string(),
                FallbackWording::DisplayNames => {
                    "display names, `(1M context)`; `[1m]` ids here, on `system/init` and in `modelUsage`".to_string()
                }
                FallbackWording::DisplayNamesAndWindow => {
                    "display names and the context window's change".to_string()
                }
            },
        ),
        (
            "a numeric `retry-after` sets the delay (before flag 15)",
            match p.retry_after {
                RetryAfter::Floor => "at least it (the larger of it and the backoff)",
                RetryAfter::Exact => "exactly",
                RetryAfter::PlusJitter => "it plus a jitter below the backoff base",
            }
            .to_string(),
        ),
        (
            "a retry's delay (flag 15 `claude_code_retry_delays`; before it, the row above and reloop's backoff)",
            match p.retry_curve {
                None => "min(500 ms × 2^(n−1), 32 s) plus up to 25 % jitter, whole ms; `retry-after` as above".to_string(),
                Some(RetryCurve::Unrounded) => "min(500 ms × 2^(n−1), 32 s) × (1 + U × 25 %), unrounded (`retry_delay_ms` \
                    516.6710495928262), or `retry-after` when larger; `retry-after` over 60 s: no retry"
                    .to_string(),
                Some(RetryCurve::Rounded) => "min(500 ms × 2^(n−1), 32 s) × (1 + U × 25 %), rounded, or `retry-after` × \
                    (1 + U × 25 %), rounded, when larger; `retry-after` over 60 s: no retry"
                    .to_string(),
            },
        ),
        (
            "a single exchange too long to compact: the result (flag 20)",
            if p.result.single_exchange_text {
                "`Prompt is too long · the request is ~{N} tokens (limit {M}) but this conversation is only ~{E} tokens — …` \
                 (N, M: the API's error; E: Claude Code's estimate)"
            } else {
                "`Prompt is too long`"
            }
            .to_string(),
        ),
        (
            "a `role: \"system\"` reminder after tool turns",
            p.nudge.map_or("none".to_string(), |n| {
                let who = n.models.map_or(String::new(), |m| format!(" ({m} models)"));
                let counted = if n.silent_only { "consecutive tool turns without text" } else { "tool turns" };
                format!("every {} {counted}{who}: `{}`", n.every, n.text.trim_end())
            }),
        ),
        (
            "after streams broke off with an overload, one request for the whole answer",
            p.whole_answer.map_or("no".to_string(), |w| {
                let cap = w.max_tokens_cap.map_or(String::new(), |c| format!(", max_tokens at most {c}"));
                format!("after {} in a row, at once{cap}", w.after)
            }),
        ),
        (
            "an error inside a 200 stream after part of the answer arrived (flag 8 `streamed_error_final`)",
            if p.streamed_error_final {
                "final: the half answer kept, the run ends `API Error: …`".to_string()
            } else {
                "retried like an error before any of it".to_string()
            },
        ),
        (
            "... kept, and the model asked to resume from it, each cut a retry (flag 9 `cut_stream_resume`)",
            p.cut_stream_resume.map_or("no".to_string(), |r| format!("`{}`", r.render().replace('\n', "\\n"))),
        ),
        (
            "529s in a row, no fallback model, that end the run (`Repeated 529 Overloaded errors`; flag 19)",
            p.overload_stop.map_or("none: the retries run out".to_string(), |n| n.to_string()),
        ),
        (
            "... the result's `api_error_status` then",
            if p.overload_stop.is_none() {
                "-"
            } else if p.result.overload_stop_status {
                "529"
            } else {
                "`null`"
            }
            .to_string(),
        ),
        (
            "the response that reached `--max-budget-usd`: its tool calls (flag 11 `budget_before_tools`)",
            if p.budget_before_tools { "not run: the run ends at once" } else { "run, then the run ends" }.to_string(),
        ),
        (
            "compaction: the summary request has the main requests' system prompt and tools, its instruction appended to the last user message",
            yes_no(p.compact.in_place),
        ),
        (
            "compaction: the instruction opens with `CRITICAL: Respond with TEXT ONLY. Do NOT call any tools.`",
            yes_no(p.compact.instruction.starts_with(TEXT_ONLY)),
        ),
        (
            "compaction: the summary names the tools used before it; says the kept messages follow",
            format!("{}; {}", yes_no(p.compact.tools_used), yes_no(p.compact.kept_note)),
        ),
        (
            "compaction: files read before it shown again",
            match p.compact.reattach {
                Reattach::None => "no",
                Reattach::SystemMessage => "a `role: \"system\"` message after the kept tail",
                Reattach::ReminderBlocks => "`<system-reminder>` blocks on the kept tail's last user message",
            }
            .to_string(),
        ),
        (
            "compaction: today's date given back",
            match p.compact.date {
                RestoredDate::None => "no",
                RestoredDate::ContextBlock => "the context reminder opens the summary message",
                RestoredDate::SystemMessage => "`Today's date is …` as a `role: \"system\"` message",
            }
            .to_string(),
        ),
        (
            "compaction: a summary request that is too long is sent again with its head cut",
            yes_no(p.compact.truncated_retry),
        ),
        (
            "... the shapes sent while it is too long, each a request (flag 18)",
            p.compact
                .too_long_shapes
                .iter()
                .map(|s| match s {
                    SummaryShape::Full => "full",
                    SummaryShape::HeadCut => "head cut",
                    SummaryShape::HeadCutDateLast => "head cut (date last)",
                })
                .collect::<Vec<_>>()
                .join(", "),
        ),
        (
            "compaction: the summary names the transcript file (flag 18)",
            match p.compact.transcript {
                TranscriptNote::Never => "no",
                TranscriptNote::Always => "yes, written or not",
                TranscriptNote::WhenWritten => "when it is written",
            }
            .to_string(),
        ),
        (
            "compaction: too little to summarise reported as `compact_error: \"too_few_groups\"` (flag 18)",
            yes_no(p.compact.report_too_few),
        ),
        (
            "request: a compaction's summary message a plain string",
            yes_no(p.wire.summary_as_string),
        ),
        (
            "stdout: `system/status` lines around a compaction",
            match p.lines.compact_status {
                CompactStatusLines::None => "none",
                CompactStatusLines::Plain => "`compacting`, then `compact_result`",
                CompactStatusLines::WithOutputChars => "`compacting` (with `compact_output_chars`), then `compact_result`",
            }
            .to_string(),
        ),
        (
            "request: `output_config.effort` (models in `EFFORT_MODELS`, and those named otherwise)",
            p.wire.effort.map_or("none".to_string(), |e| {
                let except: Vec<String> = e.except.iter().map(|(m, x)| format!("{m} `{x}`")).collect();
                if except.is_empty() { format!("`{}`", e.effort) } else { format!("`{}`; {}", e.effort, except.join(", ")) }
            }),
        ),
        (
            "request: the whole-answer request's `stream` key",
            if p.wire.whole_stream_key { "`\"stream\": false`" } else { "none" }.to_string(),
        ),
        (
            "request: `X-Stainless-Timeout` header, streamed / whole answer",
            p.wire.stainless_timeout.map_or("none".to_string(), |(s, w)| format!("{s} / {w}")),
        ),
        (
            "a tool input held as JavaScript parses it (integer-like keys first, `15.0` as `15`, Bash's `command` first)",
            yes_no(p.wire.js_tool_inputs),
        ),
        (
            "... with an Edit sent without `replace_all` held as `{\"replace_all\": false, …}` (flag 25)",
            yes_no(p.wire.js_tool_inputs),
        ),
        (
            "request: every `role: \"system\"` message a plain string, the cache breakpoint on the last other message",
            yes_no(p.wire.system_as_string),
        ),
        (
            "request: `thinking` with no budget given / `MAX_THINKING_TOKENS=0`",
            p.thinking.map_or("none / none (a budget given: `enabled` with it)".to_string(), |t| {
                let display = t.display.map_or(String::new(), |d| format!(", `display: \"{d}\"`"));
                let refusing = if t.rejects_disabled.is_empty() {
                    String::new()
                } else {
                    format!(" (adaptive on {})", t.rejects_disabled.join(", "))
                };
                format!(
                    "adaptive{display}, but a budget of max_tokens − 1 on {} / `disabled`{refusing}",
                    t.budget_models.join(", ")
                )
            }),
        ),
        (
            "request: the request's `output_config` repeated on its first `role: \"system\"` message",
            yes_no(p.wire.output_config_on_first_system),
        ),
        (
            "request: a run of user messages sent as one (`\\n` after a text block a text block follows, tool results first)",
            yes_no(p.wire.merge_user_messages),
        ),
        (
            "a concurrent batch's tool results sent in the order they completed (flag 13)",
            yes_no(p.wire.results_as_completed),
        ),
        (
            "`<total_tokens>N tokens left</total_tokens>` reminder on tool results and the first message",
            p.total_tokens.map_or("none".to_string(), |t| {
                let ids = |ids: &[&str]| ids.iter().map(|i| format!("`{i}`")).collect::<Vec<_>>().join(", ");
                format!(
                    "{} models (and `{}` ones, flag 26; also {}, never {}, flag 32): N = {} less the last response's tokens",
                    t.models,
                    t.also,
                    ids(t.older),
                    ids(t.newer),
                    t.budget
                )
            }),
        ),
        (
            "`You are powered by the model named …` on the first tool result of a command's model (flag 26)",
            match p.model_identities {
                [] => "none".to_string(),
                known => known.iter().map(|i| format!("`{}`", i.id)).collect::<Vec<_>>().join(", "),
            },
        ),
        (
            "default model",
            p.default_model.map_or("reloop's (`claude-sonnet-4-6`)".to_string(), |m| format!("`{m}`")),
        ),
        (
            "`max_tokens`: Opus / other models (after a fallback: the fallback model's)",
            format!("{} / {DEFAULT_MAX_TOKENS}", p.opus_max_tokens),
        ),
        (
            "`max_tokens` of the models whose own limit the version knows",
            match p.output_limits {
                [] => "none".to_string(),
                known => known.iter().map(|(m, n)| format!("`{m}` {n}")).collect::<Vec<_>>().join(", "),
            },
        ),
    ]
}
