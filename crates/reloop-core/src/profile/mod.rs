//! Claude Code's loop rules as profiles: data the core (and the driver, the tools and the
//! stream) read, chosen per session and recorded in its header (`core_config.profile`), so a
//! session replays under the rules of the version that recorded it.
//!
//! A profile holds texts, limits and which rule applies; code asks the session's profile
//! ([`crate::Config::profile`]) rather than branching on a version. `docs/profiles.md` is the
//! table rule × profile, generated from this data by `tests/profiles_table.rs`.

use serde::{Deserialize, Serialize};

mod api_error;
mod background;
mod betas;
mod compact_texts;
mod hand_back;
mod hook_texts;
mod identity;
mod models;
mod refusal;
mod rules;
mod thinking;
mod tool_texts;

pub use api_error::*;
pub use background::*;
pub use betas::*;
pub use compact_texts::*;
pub use hand_back::*;
pub use hook_texts::*;
pub use identity::*;
pub use models::*;
pub use refusal::*;
pub use rules::*;
pub use thinking::*;
pub use tool_texts::*;
use tool_texts::{BASH_WRITE_2_1_197, BASH_WRITE_2_1_332, DISALLOWED_2_1_197, DISALLOWED_2_1_332};

/// Which rules a session runs under. Journals written before profiles existed have none and run
/// under [`ProfileId::Reloop`], the rules reloop had then.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum ProfileId {
    /// reloop's own rules before profiles: Claude Code 2.1.197's loop, as reloop first
    /// reproduced it. Every journal from before profiles replays under it.
    #[default]
    #[serde(rename = "reloop")]
    Reloop,
    /// Claude Code 2.1.197 (npm `@anthropic-ai/claude-code`).
    #[serde(rename = "claude-code-2.1.197")]
    ClaudeCode2_1_197,
    /// Claude Code 2.1.332 (the version the Agent SDK bundles): the default for new sessions.
    #[serde(rename = "claude-code-2.1.332")]
    ClaudeCode2_1_332,
}

impl ProfileId {
    /// Every profile, oldest first.
    pub const ALL: [ProfileId; 3] = [ProfileId::Reloop, ProfileId::ClaudeCode2_1_197, ProfileId::ClaudeCode2_1_332];

    /// The profile's name, as `--compat` and the journal spell it.
    pub fn name(self) -> &'static str {
        self.profile().name
    }

    /// The rules.
    pub fn profile(self) -> &'static Profile {
        match self {
            ProfileId::Reloop => &RELOOP,
            ProfileId::ClaudeCode2_1_197 => &CLAUDE_CODE_2_1_197,
            ProfileId::ClaudeCode2_1_332 => &CLAUDE_CODE_2_1_332,
        }
    }

    /// The profile of a name.
    pub fn parse(name: &str) -> Option<ProfileId> {
        ProfileId::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The profile for a transcript Claude Code `version` wrote: the known version nearest to
    /// it (by major, minor, patch), and whether it was an exact match.
    pub fn nearest(version: &str) -> Option<(ProfileId, bool)> {
        let wanted = parse_version(version)?;
        ProfileId::ALL
            .into_iter()
            .filter_map(|p| Some((p, parse_version(p.profile().claude_code_version?)?)))
            .min_by_key(|(_, v)| distance(*v, wanted))
            .map(|(p, v)| (p, v == wanted))
    }
}

fn parse_version(text: &str) -> Option<(u64, u64, u64)> {
    let mut parts = text.trim().split(|c: char| !c.is_ascii_digit()).filter(|p| !p.is_empty());
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

fn distance(a: (u64, u64, u64), b: (u64, u64, u64)) -> (u64, u64, u64) {
    (a.0.abs_diff(b.0), a.1.abs_diff(b.1), a.2.abs_diff(b.2))
}

/// One profile: the rules of one Claude Code version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Profile {
    /// Which profile.
    pub id: ProfileId,
    /// Its name (`--compat`).
    pub name: &'static str,
    /// The Claude Code version it reproduces (`None`: reloop's own).
    pub claude_code_version: Option<&'static str>,
    /// The user message after a response cut by the output-token limit.
    pub max_tokens_resume: Injected,
    /// The stream echoes each resume as a synthetic `user` line (2.1.332).
    pub echo_resume: bool,
    /// The malformed-call rule.
    pub malformed: MalformedRule,
    /// Stop-hook feedback is wrapped as a reminder after this provenance preamble (2.1.332).
    pub stop_hook_preamble: Option<&'static str>,
    /// A Stop hook that blocked in its JSON form also gets a `role: "system"` message after the
    /// feedback (2.1.332): `{command}` and `{reason}` are filled in.
    pub stop_hook_json_system: Option<&'static str>,
    /// An exit-2 Stop hook's stderr is fed back as written, trailing newline included (Claude
    /// Code), and a PreToolUse hook's under flag 33; reloop's own rules trimmed it.
    pub stop_hook_raw_stderr: bool,
    /// The result line's rules.
    pub result: ResultRule,
    /// Tool refusal texts.
    pub tools: ToolTexts,
    /// The model a session asks when none is named (`None`: reloop's own default).
    pub default_model: Option<&'static str>,
    /// Lines the stream prints that the model never sees.
    pub lines: StreamLines,
    /// How a numeric `retry-after` sets a retry's delay.
    pub retry_after: RetryAfter,
    /// How the version reckons a retry's delay (`None`: reloop's backoff and [`Self::retry_after`]).
    pub retry_curve: Option<RetryCurve>,
    /// A `role: "system"` reminder after the results of long runs of tool turns.
    pub nudge: Option<Nudge>,
    /// After this many streams in a row broke off with an overload, the next request asks for
    /// the whole answer at once, without a wait.
    pub whole_answer: Option<WholeAnswer>,
    /// After this many 529s in a row, with no fallback model to switch to, the run ends
    /// (Claude Code's `Repeated 529 Overloaded errors`, whatever `CLAUDE_CODE_MAX_RETRIES` says;
    /// under [`crate::Flag::ClaudeCodeEndings`]).
    pub overload_stop: Option<u32>,
    /// An error inside a 200 stream after part of the answer arrived is final: Claude Code
    /// 2.1.197 keeps the half answer and ends with the error, where an error before any of it
    /// is retried (under [`crate::Flag::StreamedErrorFinal`]).
    pub streamed_error_final: bool,
    /// The response whose cost reached `--max-budget-usd` ends the run before its tool calls
    /// run, as both recorded Claude Code versions do (`tests/recorded_sdk/*/budget/`); off, the
    /// calls run and the loop stops before the next request (under
    /// [`crate::Flag::BudgetBeforeTools`]).
    pub budget_before_tools: bool,
    /// After an error inside a 200 stream that broke it after part of the answer, the half
    /// answer is kept and this text asks the model to resume (2.1.332), each cut counting as a
    /// retry (under [`crate::Flag::CutStreamResume`]).
    pub cut_stream_resume: Option<Injected>,
    /// `max_tokens` of an Opus model's requests (other models: [`DEFAULT_MAX_TOKENS`]), unless
    /// `output_limits`, `CLAUDE_CODE_MAX_OUTPUT_TOKENS` or a flag says otherwise.
    pub opus_max_tokens: u32,
    /// The models whose own limit the version knows, by id (`OUTPUT_LIMITS_*`).
    pub output_limits: &'static [(&'static str, u32)],
    /// How a compaction is asked for and what follows it.
    pub compact: CompactRule,
    /// Request details worded per version.
    pub wire: WireRule,
    /// The `<total_tokens>` reminder on tool results (2.1.332, Sonnet).
    pub total_tokens: Option<TotalTokens>,
    /// The models the conversation is told it is powered by, when a query is asked of another
    /// model than the one it last named (2.1.332; empty: never told).
    pub model_identities: &'static [ModelIdentity],
    /// The `thinking` each model is asked for (`None`: reloop's rule, a budget when given).
    pub thinking: Option<ThinkingRule>,
}

/// reloop's rules before profiles.
pub const RELOOP: Profile = Profile {
    id: ProfileId::Reloop,
    name: "reloop",
    claude_code_version: None,
    max_tokens_resume: Injected { text: MAX_TOKENS_RESUME_TEXT, reminder: false },
    echo_resume: false,
    malformed: MalformedRule {
        retries: 1,
        retract: false,
        reminder: Injected { text: MALFORMED_RETRY_TEXT_2_1_197, reminder: false },
        own_terminal_reason: false,
    },
    stop_hook_preamble: None,
    stop_hook_json_system: None,
    stop_hook_raw_stderr: false,
    result: ResultRule {
        api_error_terminal: false,
        max_output_tokens_api_error: false,
        resumes_count_as_turns: false,
        echo_origin: false,
        overload_stop_status: false,
        single_exchange_text: false,
    },
    tools: ToolTexts {
        disallowed: DISALLOWED_2_1_197,
        edit_requires_read: true,
        read_check_first: false,
        bash_write: None,
        unchanged_read: None,
        dont_ask: None,
        mcp_image_saved: false,
        written_note: None,
        bash_rule_denied: None,
        interrupted: None,
        hook_denied: None,
        hook_ask_refuses: false,
        exit_code_first: false,
        read_path_denied: None,
        hand_back: HandBack::Reloop,
        ask_rule: AskRuleText::AsAsked,
    },
    default_model: None,
    lines: StreamLines {
        stop_hook_notification: None,
        block_cap: false,
        permission_denied: false,
        fallback: FallbackWording::Ids,
        compact_status: CompactStatusLines::None,
        hook_system_message: false,
        prompt_submit_outcome: false,
    },
    retry_after: RetryAfter::Floor,
    retry_curve: None,
    nudge: None,
    whole_answer: None,
    overload_stop: None,
    streamed_error_final: false,
    budget_before_tools: false,
    cut_stream_resume: None,
    opus_max_tokens: DEFAULT_MAX_TOKENS,
    output_limits: &[],
    compact: CompactRule {
        in_place: false,
        instruction: COMPACT_INSTRUCTION,
        tools_used: false,
        kept_note: false,
        reattach: Reattach::None,
        date: RestoredDate::None,
        truncated_retry: false,
        too_long_shapes: &[SummaryShape::Full],
        transcript: TranscriptNote::Never,
        report_too_few: false,
        by_hand_too_few: None,
    },
    wire: WireRule {
        effort: None,
        whole_stream_key: true,
        stainless_timeout: None,
        js_tool_inputs: false,
        results_as_completed: false,
        system_as_string: false,
        summary_as_string: false,
        output_config_on_first_system: false,
        merge_user_messages: false,
        betas: None,
    },
    total_tokens: None,
    model_identities: &[],
    thinking: None,
};

/// Claude Code 2.1.197.
pub const CLAUDE_CODE_2_1_197: Profile = Profile {
    id: ProfileId::ClaudeCode2_1_197,
    name: "claude-code-2.1.197",
    claude_code_version: Some("2.1.197"),
    stop_hook_raw_stderr: true,
    result: ResultRule { single_exchange_text: true, ..RELOOP.result },
    tools: ToolTexts {
        disallowed: DISALLOWED_2_1_197,
        edit_requires_read: true,
        read_check_first: true,
        bash_write: Some(BASH_WRITE_2_1_197),
        unchanged_read: Some(WASTED_READ_2_1_197),
        dont_ask: Some(DONT_ASK_CLAUDE_CODE),
        mcp_image_saved: false,
        written_note: Some(WRITTEN_NOTE_CLAUDE_CODE),
        bash_rule_denied: Some(BASH_RULE_DENIED_CLAUDE_CODE),
        interrupted: Some(REJECTED_CLAUDE_CODE),
        hook_denied: None,
        hook_ask_refuses: true,
        exit_code_first: true,
        read_path_denied: Some(ReadPathDenied { text: READ_PATH_DENIED_CLAUDE_CODE, denial: false }),
        hand_back: HandBack::Trailer,
        ask_rule: AskRuleText::UseTool,
    },
    default_model: Some("claude-opus-4-8[1m]"),
    lines: StreamLines {
        stop_hook_notification: Some("Stop hook error occurred · ctrl+o to see"),
        block_cap: false,
        permission_denied: false,
        fallback: FallbackWording::DisplayNames,
        compact_status: CompactStatusLines::Plain,
        hook_system_message: false,
        prompt_submit_outcome: false,
    },
    retry_after: RetryAfter::Exact,
    retry_curve: Some(RetryCurve::Unrounded),
    nudge: Some(Nudge { every: 10, silent_only: false, models: Some("opus"), text: TASK_TOOLS_REMINDER }),
    whole_answer: Some(WholeAnswer { after: 3, max_tokens_cap: None }),
    overload_stop: Some(3),
    streamed_error_final: true,
    budget_before_tools: true,
    cut_stream_resume: None,
    opus_max_tokens: 64_000,
    output_limits: OUTPUT_LIMITS_2_1_197,
    compact: CompactRule {
        in_place: true,
        instruction: COMPACT_INSTRUCTION_2_1_197,
        tools_used: false,
        kept_note: false,
        reattach: Reattach::SystemMessage,
        date: RestoredDate::ContextBlock,
        truncated_retry: false,
        too_long_shapes: &[SummaryShape::Full],
        transcript: TranscriptNote::Always,
        report_too_few: true,
        by_hand_too_few: Some("Not enough messages to compact."),
    },
    wire: WireRule {
        effort: Some(EffortRule { effort: "high", except: &[] }),
        whole_stream_key: false,
        stainless_timeout: Some((600, 300)),
        js_tool_inputs: true,
        results_as_completed: true,
        system_as_string: true,
        summary_as_string: false,
        output_config_on_first_system: false,
        merge_user_messages: true,
        betas: Some(BetaRule::V2_1_197),
    },
    thinking: Some(ThinkingRule {
        budget_models: BUDGET_THINKING_MODELS,
        rejects_disabled: &[],
        omits_disabled: &["claude-opus-5-5"],
        display: None,
        min_budget: 0,
        child: ChildThinking::Disabled,
    }),
    ..RELOOP
};

/// Claude Code 2.1.332.
pub const CLAUDE_CODE_2_1_332: Profile = Profile {
    id: ProfileId::ClaudeCode2_1_332,
    name: "claude-code-2.1.332",
    claude_code_version: Some("2.1.332"),
    max_tokens_resume: Injected { text: MAX_TOKENS_RESUME_TEXT, reminder: true },
    echo_resume: true,
    malformed: MalformedRule {
        retries: 2,
        retract: true,
        reminder: Injected { text: MALFORMED_RETRY_TEXT_2_1_332, reminder: true },
        own_terminal_reason: true,
    },
    stop_hook_preamble: Some(HOOK_PROVENANCE_PREAMBLE),
    stop_hook_json_system: Some(STOP_HOOK_JSON_SYSTEM_2_1_332),
    stop_hook_raw_stderr: true,
    result: ResultRule {
        api_error_terminal: true,
        max_output_tokens_api_error: true,
        resumes_count_as_turns: true,
        echo_origin: true,
        overload_stop_status: true,
        single_exchange_text: true,
    },
    tools: ToolTexts {
        disallowed: DISALLOWED_2_1_332,
        edit_requires_read: false,
        read_check_first: false,
        bash_write: Some(BASH_WRITE_2_1_332),
        unchanged_read: None,
        dont_ask: Some(DONT_ASK_CLAUDE_CODE),
        mcp_image_saved: true,
        written_note: Some(WRITTEN_NOTE_CLAUDE_CODE),
        bash_rule_denied: Some(BASH_RULE_DENIED_CLAUDE_CODE),
        interrupted: Some(STOPPED_WHILE_RUNNING),
        hook_denied: Some(HOOK_DENIED_2_1_332),
        hook_ask_refuses: true,
        exit_code_first: true,
        read_path_denied: Some(ReadPathDenied { text: READ_PATH_DENIED_CLAUDE_CODE, denial: true }),
        hand_back: HandBack::Framed,
        ask_rule: AskRuleText::UseToolButFiles,
    },
    default_model: Some("claude-opus-5-5"),
    lines: StreamLines {
        stop_hook_notification: Some("stop hook problem · ctrl+o to see"),
        block_cap: true,
        permission_denied: true,
        fallback: FallbackWording::DisplayNamesAndWindow,
        compact_status: CompactStatusLines::WithOutputChars,
        hook_system_message: true,
        prompt_submit_outcome: true,
    },
    retry_after: RetryAfter::PlusJitter,
    retry_curve: Some(RetryCurve::Rounded),
    nudge: Some(Nudge { every: 5, silent_only: true, models: None, text: QUIET_REMINDER }),
    whole_answer: Some(WholeAnswer { after: 3, max_tokens_cap: Some(64_000) }),
    overload_stop: Some(3),
    streamed_error_final: false,
    budget_before_tools: true,
    cut_stream_resume: Some(Injected { text: CUT_STREAM_RESUME_TEXT, reminder: true }),
    opus_max_tokens: 128_000,
    output_limits: OUTPUT_LIMITS_2_1_332,
    compact: CompactRule {
        in_place: true,
        instruction: COMPACT_INSTRUCTION_2_1_332,
        tools_used: true,
        kept_note: true,
        reattach: Reattach::ReminderBlocks,
        date: RestoredDate::SystemMessage,
        truncated_retry: true,
        too_long_shapes: &[
            SummaryShape::Full,
            SummaryShape::Full,
            SummaryShape::HeadCut,
            SummaryShape::HeadCut,
            SummaryShape::HeadCutDateLast,
            SummaryShape::HeadCutDateLast,
        ],
        transcript: TranscriptNote::WhenWritten,
        report_too_few: true,
        by_hand_too_few: None,
    },
    wire: WireRule {
        effort: Some(EffortRule { effort: "high", except: EFFORT_MEDIUM_5_5 }),
        whole_stream_key: true,
        stainless_timeout: Some((600, 300)),
        js_tool_inputs: true,
        results_as_completed: true,
        system_as_string: false,
        summary_as_string: true,
        output_config_on_first_system: true,
        merge_user_messages: true,
        betas: Some(BetaRule::V2_1_332),
    },
    total_tokens: Some(TOTAL_TOKENS_2_1_332),
    model_identities: IDENTITIES_2_1_332,
    thinking: Some(ThinkingRule {
        budget_models: BUDGET_THINKING_MODELS,
        rejects_disabled: &["claude-haiku-5-5", "claude-opus-5-5", "claude-sonnet-5-5"],
        omits_disabled: &[],
        display: Some("updates"),
        min_budget: 1024,
        child: ChildThinking::Display("omitted"),
    }),
};

impl Profile {
    /// The Stop-hook feedback message as the model sees it.
    pub fn stop_hook_feedback(&self, feedback: &str) -> String {
        match self.stop_hook_preamble {
            Some(preamble) => system_reminder(&format!("{preamble}\n{feedback}")),
            None => feedback.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_old_headers_get_reloop_s_rules() {
        for id in ProfileId::ALL {
            assert_eq!(ProfileId::parse(id.name()), Some(id));
            let json = serde_json::to_string(&id).unwrap();
            assert_eq!(json, format!("\"{}\"", id.name()));
        }
        assert_eq!(ProfileId::default(), ProfileId::Reloop);
    }

    #[test]
    fn a_transcript_version_picks_the_nearest_profile() {
        assert_eq!(ProfileId::nearest("2.1.197"), Some((ProfileId::ClaudeCode2_1_197, true)));
        assert_eq!(ProfileId::nearest("2.1.332"), Some((ProfileId::ClaudeCode2_1_332, true)));
        assert_eq!(ProfileId::nearest("2.1.300"), Some((ProfileId::ClaudeCode2_1_332, false)));
        assert_eq!(ProfileId::nearest("2.0.14"), Some((ProfileId::ClaudeCode2_1_197, false)));
        assert_eq!(ProfileId::nearest("1.0.98"), Some((ProfileId::ClaudeCode2_1_197, false)));
        assert_eq!(ProfileId::nearest("nonsense"), None);
    }

    #[test]
    fn texts_are_claude_code_s() {
        let fed = CLAUDE_CODE_2_1_332.stop_hook_feedback("Stop hook feedback:\n[c]: X\n");
        assert!(fed.starts_with("<system-reminder>\nThe text below is the output of a hook"));
        assert!(fed.ends_with("from the user.\nStop hook feedback:\n[c]: X\n\n</system-reminder>"));
        assert_eq!(CLAUDE_CODE_2_1_197.stop_hook_feedback("Stop hook feedback:\nR"), "Stop hook feedback:\nR");
        assert_eq!(
            CLAUDE_CODE_2_1_332.max_tokens_resume.render(),
            format!("<system-reminder>\n{MAX_TOKENS_RESUME_TEXT}\n</system-reminder>")
        );
        assert_eq!(unwrap_reminder(&CLAUDE_CODE_2_1_332.max_tokens_resume.render()), MAX_TOKENS_RESUME_TEXT);
    }
}
