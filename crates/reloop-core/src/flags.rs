//! Behaviour flags: which of the core's behaviours a session was recorded with.
//!
//! When the engine changes what it does with the same facts (a message worded or grouped
//! differently, a delay computed differently), old journals would stop replaying identically.
//! So each such behaviour gets a flag: a number, given once and never reused, that names it.
//! Every session header records its flags (inside `core_config`), and the core consults them
//! where its behaviour depends on them, so today's engine can replay yesterday's journal under
//! yesterday's behaviour — and a journal whose flags differ from what the engine would do now
//! shows exactly where the change bites (`reloop replay --flip-flag N`).
//!
//! Rules: a new behaviour gets the next free number and joins [`CURRENT`]; a retired behaviour
//! keeps its number (listed in `RETIRED`) so no new flag takes it; a journal holding a number
//! this engine does not know is reported by replay as `RELOOP-D004`.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

/// A behaviour this engine knows, by its number. The discriminants are the journaled numbers:
/// a number is given once and never reused, and a retired behaviour's number stays in
/// the retired list forever.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::FromRepr, strum::VariantArray)]
#[repr(u32)]
pub enum Flag {
    /// The interrupt text (`[Request interrupted by user…]`) goes in the same user message as the
    /// interrupted calls' `tool_result`s, as Claude Code sends it. Off: results first, then the
    /// interrupt text as a user message of its own.
    InterruptInResultsMessage = 1,
    /// A numeric `retry-after` is a floor on the retry delay (the delay is the larger of the
    /// two). Off: the backoff alone decides, and `retry-after` is ignored.
    RetryAfterFloor = 2,
    /// A connection error to a model server on this machine ([`crate::Config::local_model_server`])
    /// is retried at most `LOCAL_CONNECTION_RETRIES` times: nothing listening
    /// on loopback is not a blip that waiting cures. Off: it gets `max_retries` like any other.
    LocalConnectionFailsFast = 3,
    /// Under a Claude Code profile, a compaction is shaped as that version shapes it: the files
    /// read and today's date given back, the summary message's extra words, 2.1.332's head-cut
    /// retry ([`crate::profile::CompactRule`]). Off: reloop's own shape in every profile.
    ClaudeCodeCompaction = 4,
    /// Under 2.1.332, a Stop hook blocking in its JSON form also leaves a `role: "system"`
    /// message. Off: only the feedback message.
    JsonStopHookSystemMessage = 5,
    /// Under 2.1.332 with a Sonnet model, tool results and the session's first message carry the
    /// `<total_tokens>` reminder ([`crate::profile::TotalTokens`]). Off: they do not.
    TotalTokensReminder = 6,
    /// A compaction asked for while a request awaits its answer, before any of it arrived,
    /// withdraws that request and compacts first (an importer marks where Claude Code did).
    /// Off: the request is not expected then, and ignored.
    CompactBeforeRequest = 7,
    /// Under a profile whose [`crate::profile::Profile::streamed_error_final`] is set (2.1.197),
    /// an error inside a 200 stream after part of the answer arrived ends the run: no retry, no
    /// whole answer. Off: it is retried like an error before any of the answer.
    StreamedErrorFinal = 8,
    /// Under a profile with [`crate::profile::Profile::cut_stream_resume`] (2.1.332), an error
    /// inside a 200 stream after part of the answer arrived keeps the half answer and asks the
    /// model to resume. Off: the half answer is withdrawn and the request retried.
    CutStreamResume = 9,
    /// The session events' hooks run: SessionStart before the first prompt (its context opens
    /// the system context), UserPromptSubmit before each prompt (it may block or stop the prompt,
    /// or add context after it, [`crate::hook::session`]), SessionEnd when the session ends,
    /// SubagentStart and SubagentStop around a subagent, PreCompact before a compaction by hand
    /// (a block cancels it), as Claude Code runs them in print mode.
    /// Off: settings' hooks of those events are never fired.
    SessionEventHooks = 10,
    /// Under a profile with [`crate::profile::Profile::budget_before_tools`] (Claude Code), the
    /// response whose cost reached `--max-budget-usd` ends the run at the budget: before its
    /// tool calls run, or once shown when it asks for none. Off: the calls run, the loop stops
    /// before the next request, and a last answer completes the run.
    BudgetBeforeTools = 11,
    /// Under a profile with [`crate::profile::WireRule::results_as_completed`] (Claude Code), a
    /// turn's tool results go back in the order their outcomes arrived, as Claude Code sends a
    /// concurrent batch's. Off: in the order of the calls.
    ResultsAsCompleted = 13,
    /// What Claude Code's stream-json says beyond the model's messages: a tool call's outcome
    /// keeps what the call did as data (its `tool_use_result`, printed on the result's `user`
    /// line under a Claude Code profile), and a `compact_boundary` line carries the version's
    /// whole `compact_metadata` (dropped tokens, duration, the kept messages' lines). Off: the
    /// outcome holds the text alone, and the boundary its trigger and token counts (the driver
    /// and the printer decide; the core never reads it).
    StreamDetails = 12,
    /// Under a profile with the `<total_tokens>` reminder, the first message's reminder block
    /// goes before the prompt, as 2.1.332 places it among its context blocks. Off: after it.
    TotalTokensBeforePrompt = 14,
    /// Under a profile with a [`crate::profile::RetryCurve`] (Claude Code), a retry waits as that
    /// version reckons it: 2.1.197 the backoff unrounded (and printed so) or `retry-after` when
    /// larger, 2.1.332 the backoff rounded to the millisecond or `retry-after` × (1 + up to 25 %)
    /// when larger, and a `retry-after` over 60 s ends the run in both. Off: reloop's backoff
    /// and the profile's [`crate::profile::RetryAfter`] rule.
    ClaudeCodeRetryDelays = 15,
    /// A tool call that ran and failed fires the PostToolUseFailure hooks instead of the
    /// PostToolUse ones, as Claude Code does (the driver decides; the core files either the same
    /// way). Off: a failed call runs its PostToolUse hooks like any other.
    PostToolUseFailureHooks = 16,
    /// A hook's `systemMessage` is shown to the caller (a `system/informational` line under a
    /// profile whose version prints one). Off: it is dropped, as before, so an old journal's
    /// replayed stream prints what its live run printed.
    HookSystemMessage = 17,
    /// Under a Claude Code profile, a compaction ends as that version's does: a too-long summary
    /// request is sent again in the shapes of [`crate::profile::CompactRule::too_long_shapes`],
    /// an auto-compaction with too little to summarise is reported as failed, the summary
    /// message names the transcript file ([`crate::profile::CompactRule::transcript`]), the
    /// files given back read as joined lines, and the stream says the compaction succeeded
    /// before its boundary. Off: one head-cut retry at most (of the summarised messages' last
    /// exchange), nothing reported, no transcript named.
    ClaudeCodeCompactionEnds = 18,
    /// Under a Claude Code profile, a run ends as that version's does: the Stop hooks' feedback at
    /// the block cap, which the model is never sent, is shown to the caller (a synthetic `user`
    /// line, counted in `num_turns`), and [`crate::profile::Profile::overload_stop`] 529s in a
    /// row with no fallback model end the run. Off: the run ends at the cap without the
    /// feedback, and 529s are retried until the retries run out.
    ClaudeCodeEndings = 19,
    /// Under a profile with [`crate::profile::ResultRule::single_exchange_text`] (Claude Code), a
    /// single exchange too long to compact ends with that version's text: the request's size
    /// and limit from the API's error and Claude Code's estimate of the conversation
    /// ([`crate::too_long`]). Off: `Prompt is too long`.
    SingleExchangeTooLongText = 20,
    /// A compaction runs the hooks Claude Code runs around it (recorded, `sdk36/auto_compact_hooks`
    /// and `settings_slash/stream_compact`): an automatic one's PreCompact hooks
    /// (`trigger: "auto"`) before its summary request, and every successful one's SessionStart
    /// hooks (`source: "compact"`) before its summary is applied, each journaled as a `hook_done`
    /// the compaction waits through. Off: only `/compact`'s PreCompact hooks run (flag 10).
    CompactionHooks = 21,
    /// Under a profile with [`crate::profile::CompactRule::by_hand_too_few`] (2.1.197), a
    /// `/compact` of a single exchange (one prompt, one answer) is not made: the caller is told
    /// it was skipped (`compaction_skipped`, trigger `manual`), in that version's words
    /// (`sdk36/queued_compact`). Off: the exchange is summarised.
    SingleExchangeNotCompacted = 22,
    /// Under a profile with [`crate::profile::ToolTexts::written_note`] (Claude Code), a Write's
    /// and an Edit's result end with that version's note that the model's view of the file is
    /// current (not after an Edit of a file never read), and an Edit with `replace_all` says
    /// `All occurrences were successfully replaced.`, as recorded in `tool_results/success`.
    /// Off: `… has been updated successfully.` and no note.
    WrittenFileTexts = 24,
    /// Under a profile that holds tool inputs as Claude Code parses them
    /// ([`crate::profile::WireRule::js_tool_inputs`]), an Edit the model sent without
    /// `replace_all` is held as `{"replace_all": false, …}`, as both versions show it on stdout
    /// and in the history (the driver rewrites the block before it is journaled, so a replay
    /// reads it as held). Off: as the model sent it.
    ToolInputDefaults = 25,
    /// Under a Claude Code profile, a compaction by hand of a conversation that ends with an
    /// answer summarises what came before it and keeps the answer after the summary, as both
    /// versions do (`sdk_wire/stream_compact`), and the boundary counts the messages the
    /// compaction kept ([`crate::Notice::CompactBoundary`]'s `kept`). Off: the answer is
    /// summarised with the rest, and the driver counts the messages after the summary.
    ByHandCompactionKeepsAnswer = 27,
    /// Under a profile with [`crate::profile::Profile::model_identities`] (2.1.332), a query
    /// asked of another model than the one the conversation last named (a command file's
    /// `model`) tells it so on its first tool result, `You are powered by the model named …`
    /// before the `<total_tokens>` reminder, which Haiku 4.5 gets too
    /// ([`crate::profile::TotalTokens::also`]), as `sdk_wire/command_frontmatter` records; the
    /// session's first message reminds with the session's own model, not the command's. Off:
    /// no identity reminder, the budget reminder for Sonnet alone.
    ModelIdentityReminder = 26,
    /// Under a profile with [`crate::profile::ToolTexts::interrupted`] (Claude Code), a call the
    /// user's interrupt stopped while the tools ran is answered with that version's rejection
    /// text, and the caller is told the user rejected it (`User rejected tool use`, with
    /// 2.1.332's `user-rejected` entry), as `interrupt/during_tool` records. Off: `Interrupted by
    /// user`, and nothing more is said of the call.
    InterruptedCallRejected = 28,
    /// Under a Claude Code profile, a PreToolUse hook's rulings read as that version's do
    /// ([`crate::profile::ToolTexts::hook_denied`], [`crate::profile::ToolTexts::hook_ask_refuses`]):
    /// 2.1.332 tells the model a deny with a reason as `PreToolUse:TOOL hook error: REASON`, and
    /// both refuse a call a hook asks about, with its reason, when nobody can be asked
    /// (`tool_results/hook_rulings`). Off: the reason alone, and the ask decides nothing.
    ClaudeCodeHookRulings = 29,
    /// Under a profile with [`crate::profile::ToolTexts::exit_code_first`] (Claude Code), a Bash
    /// command that failed is answered `Exit code N` first, its output after it, as both
    /// versions word it (`tool_error`, `tool_results/errors`). Off: the output, then the code.
    ExitCodeFirst = 30,
    /// Under a Claude Code profile, an `Agent` call's answer hands the subagent's report back in
    /// that version's words ([`crate::profile::ToolTexts::hand_back`]: the agent's id and what it
    /// spent after it, and 2.1.332's frame and tools note around it), and the call's
    /// `tool_use_result` is the child's summary, as `subagent/foreground` records. Off: the
    /// report and reloop's `agentId:` line, no summary.
    ClaudeCodeHandBack = 31,
    /// Under 2.1.332, the `<total_tokens>` reminder goes to the models its recordings show it
    /// reminding ([`crate::profile::TotalTokens::older`]: also Opus 4.5) and never to the newer
    /// ones ([`crate::profile::TotalTokens::newer`]: Sonnet 5.5), whatever their name holds
    /// (`env/disable_adaptive_thinking_*`). Off: by name alone (Sonnet, and Haiku 4 under flag 26).
    TotalTokensByModel = 32,
    /// Under a Claude Code profile, a PreToolUse hook's exit 2 refuses the call with its stderr as
    /// written, trailing newline included, as both versions do (`tool_results/hook_exit2`;
    /// [`crate::profile::Profile::stop_hook_raw_stderr`]). Off: trimmed.
    PreToolUseRawStderr = 33,
    /// Under a Claude Code profile, a PreToolUse hook's deny or ask that gives no reason refuses
    /// the call in that version's words ([`crate::profile::ProfileId::bare_hook_texts`]:
    /// `tool_results/hook_no_reason`). Off: reloop's own deny text, and such an ask decides
    /// nothing.
    BareHookRulings = 34,
    /// Under a Claude Code profile, an `Agent` call whose subagent ended on a failed request is
    /// answered in that version's words ([`crate::profile::HandBack::on_api_error`]): 2.1.197
    /// hands the error text back as the child's report, 2.1.332 answers `Agent terminated early
    /// due to an API error: …` (`subagent/failed`). Off: `Agent 'TYPE' stopped before it
    /// finished (model_error): …`.
    ChildApiErrorHandBack = 35,
    /// A PostToolUse hook's `additionalContext` reaches the model after the call's results,
    /// `PostToolUse:TOOL hook additional context: CTX`, where the profile puts it
    /// ([`crate::profile::ProfileId::tool_context_placement`]: 2.1.197's `<system-reminder>` in
    /// the results' message, 2.1.332's `role: "system"` message after it; `hooks_events/context`).
    /// Off: the model is not told.
    PostToolUseContext = 36,
    /// Under `claude-code-2.1.332`, a call an allow, deny or ask rule decided names the rule's
    /// origin ([`crate::RuleSource`]), as `rule_sources/` records: the outcome keeps it
    /// ([`crate::ToolOutcome::rule_source`]) for the session file's `ruleSource` and `rule:<source>`
    /// code, the stream's `source` reads `user_permanent` (or `user_reject`) for a rule of the
    /// user's or the local settings, and an ask rule's refusal has its `tool_result_meta` entry.
    /// Off: no origin, `config` for every rule, no entry for an ask rule.
    RuleSources = 37,
    /// A session a stream-json `/clear` begins starts at the `/clear`, before any message: its
    /// SessionStart hooks run then (`SessionStart:clear`, before the `/clear`'s `system/init`
    /// and `result`), and so does a first prompt's `/clear` for both its sessions (`startup`
    /// and `SessionEnd` `clear` for the first), as both versions do (`settings_slash/clear`,
    /// `settings_slash/stream_clear`). Read by the printer, which puts the `/clear`'s lines after
    /// the session's SessionStart steps. Off: the session starts with its first message.
    ClearStartsSession = 38,
    /// A hook's `additionalContext` counts only when its `hookSpecificOutput` names the event the
    /// hook ran for (or none): Claude Code takes an answer naming another event as the hook's
    /// error and adds nothing (`hooks_events/prompt_wrong_event`, both versions). Off: the context
    /// counts whatever event the answer names.
    HookEventNameChecked = 39,
    /// An Agent SDK callback hook whose answer names another event than the one it ran for ends
    /// the session before its prompt is asked ([`crate::Stop::HookAnswerRejected`]), as both
    /// versions crash on it (Python SDK `examples/hooks.py`; tests/sdk/recorded/
    /// hook_wrong_event*.jsonl); a command hook's such answer stays the hook's error (flag 39).
    /// Off: the prompt goes on.
    CallbackEventNameChecked = 40,
    /// Under a profile whose betas guess ([`crate::profile::BetaRule::refusal_guesses`],
    /// 2.1.332), a request refused with a 400 or 422 it has no words for is sent again at once
    /// without the next guess the request carries (the `thinking-token-count` beta, then the
    /// thinking's `display`), each guess kept for the rest of the session, before the run
    /// ends on the error (`error_endings/invalid_request_no_tool_search`, `…_healed`). Off: the
    /// run ends on the first such refusal.
    RefusalGuesses = 41,
    /// Under a profile that gives files back as a `role: "system"` message (2.1.197's
    /// [`crate::profile::Reattach::SystemMessage`]), a compaction by hand between queries holds
    /// that message until the next prompt and puts it after it, as 2.1.197 sends it
    /// (`settings_slash/stream_compact`, `sdk_wire/stream_compact`). Off: it follows the kept
    /// answer, before the prompt.
    GivenBackAfterPrompt = 42,
    /// Under a profile that gives the date back as a `role: "system"` message after a
    /// compaction (2.1.332's [`crate::profile::RestoredDate::SystemMessage`]), a compaction by
    /// hand between queries gives none back, as 2.1.332's request after it has an empty system
    /// message there, which it does not send (`settings_slash/stream_compact`,
    /// `sdk_wire/stream_compact`). Off: the date follows the summary as after any compaction.
    ByHandCompactionUndated = 43,
    /// Under a profile that runs agents in the background ([`crate::profile::HandBack::in_background`],
    /// 2.1.332), an `Agent` call without `run_in_background: false` is answered at once
    /// ([`crate::profile::async_launched`]), its subagent runs on, and when the query has
    /// ended, each agent's end starts a query of its own with its task notification
    /// (`subagent/default`). Off: every agent runs in the foreground.
    BackgroundAgents = 44,
    /// Under a profile that gives files back after a compaction, they are given back in the
    /// order both versions give them: by the modification time each Read saw, newest first, ties
    /// as Claude Code's read-file cache leaves them (`compact::ledger`); the Read
    /// tool journals that time with its outcome (`settings_slash/stream_compact_mtimes`,
    /// `…_six_reads`, `…_read_order`, `…_later_query`). Off: the newest read first.
    GivenBackByChange = 45,
    /// Under a profile that gives files back as reminder blocks (2.1.332's
    /// [`crate::profile::Reattach::ReminderBlocks`]), a compaction by hand between queries sends
    /// the first file's `Called the Read tool …` reminder as a user message of its own, a plain
    /// string, and the rest with the next prompt, as 2.1.332 does
    /// (`settings_slash/stream_compact`, `…_two_reads`). Off: all with the next prompt.
    FirstGivenBackAlone = 46,
    /// Under a profile that gives files back after a compaction, they are the files the session
    /// read, wrote or edited, read again from disk as the compaction ends (the summary request's
    /// `give_back`, their texts journaled with its `compact_done`), as both versions give them
    /// back (`settings_slash/stream_compact_written`). Off: what each Read returned, of the
    /// files read.
    GivenBackFromDisk = 47,
}

/// Numbers of behaviours that were retired, reserved so no new flag takes them. Empty so far.
#[cfg(test)]
const RETIRED: &[u32] = &[];

impl Flag {
    /// The journaled number.
    pub const fn number(self) -> u32 {
        self as u32
    }

    /// The flag of a journaled number, if this engine knows it.
    pub fn from_number(number: u32) -> Option<Flag> {
        Flag::from_repr(number)
    }
}

/// The flags new sessions get: every behaviour this engine has.
pub const CURRENT: &[Flag] = &[
    Flag::InterruptInResultsMessage,
    Flag::RetryAfterFloor,
    Flag::LocalConnectionFailsFast,
    Flag::ClaudeCodeCompaction,
    Flag::JsonStopHookSystemMessage,
    Flag::TotalTokensReminder,
    Flag::CompactBeforeRequest,
    Flag::StreamedErrorFinal,
    Flag::CutStreamResume,
    Flag::SessionEventHooks,
    Flag::BudgetBeforeTools,
    Flag::StreamDetails,
    Flag::ResultsAsCompleted,
    Flag::TotalTokensBeforePrompt,
    Flag::PostToolUseFailureHooks,
    Flag::HookSystemMessage,
    Flag::ClaudeCodeCompactionEnds,
    Flag::ClaudeCodeEndings,
    Flag::ClaudeCodeRetryDelays,
    Flag::SingleExchangeTooLongText,
    Flag::CompactionHooks,
    Flag::SingleExchangeNotCompacted,
    Flag::WrittenFileTexts,
    Flag::ToolInputDefaults,
    Flag::ByHandCompactionKeepsAnswer,
    Flag::ModelIdentityReminder,
    Flag::InterruptedCallRejected,
    Flag::ClaudeCodeHookRulings,
    Flag::ExitCodeFirst,
    Flag::ClaudeCodeHandBack,
    Flag::TotalTokensByModel,
    Flag::PreToolUseRawStderr,
    Flag::BareHookRulings,
    Flag::ChildApiErrorHandBack,
    Flag::PostToolUseContext,
    Flag::RuleSources,
    Flag::ClearStartsSession,
    Flag::HookEventNameChecked,
    Flag::CallbackEventNameChecked,
    Flag::RefusalGuesses,
    Flag::GivenBackAfterPrompt,
    Flag::ByHandCompactionUndated,
    Flag::BackgroundAgents,
    Flag::GivenBackByChange,
    Flag::FirstGivenBackAlone,
    Flag::GivenBackFromDisk,
];

/// The flags of a journal written before flags were recorded: the behaviours the engine had
/// when flags were introduced. Never changes.
pub const BASELINE: &[Flag] = &[Flag::InterruptInResultsMessage, Flag::RetryAfterFloor];

/// A session's set of flags, journaled as a sorted array of numbers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Flags(BTreeSet<u32>);

impl Default for Flags {
    fn default() -> Self {
        Flags::current()
    }
}

impl Flags {
    /// Every behaviour this engine has.
    pub fn current() -> Self {
        CURRENT.iter().map(|f| f.number()).collect()
    }

    /// What journals from before flags get.
    pub fn baseline() -> Self {
        BASELINE.iter().map(|f| f.number()).collect()
    }

    /// Every flag this engine knows, whether on or off by default: a journal naming another is
    /// from a newer engine.
    pub fn known() -> Self {
        <Flag as strum::VariantArray>::VARIANTS.iter().map(|f| f.number()).collect()
    }

    /// No flag at all.
    pub fn none() -> Self {
        Flags(BTreeSet::new())
    }

    /// Whether the flag numbered `flag` is on.
    pub fn has(&self, flag: u32) -> bool {
        self.0.contains(&flag)
    }

    /// Turns a flag on if it was off and off if it was on.
    pub fn flip(&mut self, flag: u32) {
        if !self.0.remove(&flag) {
            self.0.insert(flag);
        }
    }

    /// The numbers that are on, ascending.
    pub fn numbers(&self) -> impl Iterator<Item = u32> + '_ {
        self.0.iter().copied()
    }

    /// Numbers this engine does not know (a journal from a newer engine).
    pub fn unknown(&self) -> Vec<u32> {
        self.0.iter().copied().filter(|n| Flag::from_number(*n).is_none()).collect()
    }
}

impl FromIterator<u32> for Flags {
    fn from_iter<I: IntoIterator<Item = u32>>(iter: I) -> Self {
        Flags(iter.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_unique_and_no_flag_reuses_a_retired_one() {
        // The discriminants are the numbers: the compiler refuses one given twice.
        let known = Flags::known();
        for flag in <Flag as strum::VariantArray>::VARIANTS {
            assert!(!RETIRED.contains(&flag.number()), "{flag:?} reuses a retired number");
            assert_eq!(Flag::from_number(flag.number()), Some(*flag));
        }
        assert_eq!(
            known.numbers().collect::<Vec<_>>(),
            [
                1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 24, 25, 26, 27, 28, 29,
                30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47
            ]
        );
        assert_eq!(Flag::from_number(23), None);
        for flag in CURRENT.iter().chain(BASELINE) {
            assert!(known.has(flag.number()), "{flag:?} is not known");
        }
    }

    #[test]
    fn flags_are_journaled_as_sorted_numbers_and_old_journals_get_the_baseline() {
        let mut flags = Flags::current();
        flags.flip(Flag::RetryAfterFloor.number());
        flags.flip(99);
        assert_eq!(
            serde_json::to_string(&flags).unwrap(),
            "[1,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,99]"
        );
        assert_eq!(flags.unknown(), vec![99]);
        let old: crate::Config = serde_json::from_str(r#"{"model": "m"}"#).unwrap();
        assert_eq!(old.flags, Flags::baseline());
    }

    /// A session under `config` whose one Bash call is interrupted while it runs.
    fn interrupted(config: crate::Config) -> crate::State {
        use crate::{transition, ContentBlock, Event, State, StopReason, ToolUse, Usage};
        let mut state = State::new(config);
        let call =
            ToolUse { id: "t1".into(), name: "Bash".into(), input: serde_json::json!({}), extra: Default::default() };
        let events = [
            Event::user_input(vec![ContentBlock::text("go")]),
            Event::ModelBlock { index: 0, block: ContentBlock::ToolUse(call.into()), request: 1 },
            Event::ModelDone {
                id: None,
                model: None,
                stop_reason: Some(StopReason::ToolUse),
                usage: Usage::default(),
                request: 1,
            },
            Event::Abort,
        ];
        for event in events {
            state = transition(state, event).state;
        }
        state
    }

    #[test]
    fn the_interrupt_flag_decides_whether_the_interrupt_text_joins_the_results() {
        let run = |flags: Flags| {
            let state = interrupted(crate::Config::default().with_flags(flags));
            state.messages().messages().into_iter().skip(2).map(|m| m.content.len()).collect::<Vec<_>>()
        };
        assert_eq!(run(Flags::current()), vec![2], "result and text in one message");
        assert_eq!(run(Flags::none()), vec![1, 1], "result, then the text alone");
    }

    #[test]
    fn a_call_an_interrupt_stops_is_answered_in_the_profile_s_words_under_flag_28() {
        use crate::profile::{ProfileId, REJECTED_CLAUDE_CODE, STOPPED_WHILE_RUNNING};
        use crate::{ContentBlock, ToolResultContent};
        let answer = |profile: ProfileId, flags: Flags| {
            let mut config = crate::Config::default().with_flags(flags);
            config.profile = profile;
            let state = interrupted(config);
            match &state.messages().messages()[2].content[0] {
                ContentBlock::ToolResult(result) => match &result.content {
                    ToolResultContent::Text(text) => text.clone(),
                    other => panic!("{other:?}"),
                },
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(answer(ProfileId::ClaudeCode2_1_332, Flags::current()), STOPPED_WHILE_RUNNING);
        assert_eq!(answer(ProfileId::ClaudeCode2_1_197, Flags::current()), REJECTED_CLAUDE_CODE);
        assert_eq!(answer(ProfileId::Reloop, Flags::current()), crate::INTERRUPTED_TOOL_RESULT);
        let mut off = Flags::current();
        off.flip(Flag::InterruptedCallRejected.number());
        assert_eq!(answer(ProfileId::ClaudeCode2_1_332, off), crate::INTERRUPTED_TOOL_RESULT, "old journals");
    }
}
