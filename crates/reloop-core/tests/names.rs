//! Every name the core gives an event, an effect, an ignored why, a reason, a compaction trigger
//! or a hook event is the serde tag the journal writes for it: the names are derived (strum)
//! beside the serde derive, so this holds the two derivations equal, variant by variant.

use reloop_core::compact::Trigger;
use reloop_core::hook::{HookEventName, HookRun};
use reloop_core::{
    Command, ContentBlock, ContinueReason, Event, IgnoreWhy, ModelCall, ModelError, Notice, RetryWait, TerminalReason,
    ToolOutcome, Usage, EVENT_KINDS, PHASES,
};

fn tag(value: &impl serde::Serialize, key: &str) -> String {
    let json = serde_json::to_value(value).expect("serializes");
    match key {
        "" => json.as_str().expect("a string").to_string(),
        key => json[key].as_str().expect("a tag").to_string(),
    }
}

fn error() -> ModelError {
    ModelError::new(Some(529), "overloaded_error", "busy")
}

#[test]
fn every_event_kind_is_its_serde_tag_in_declaration_order() {
    let events = vec![
        Event::user_input(vec![ContentBlock::text("go")]),
        Event::TextDelta { index: 0, text: "a".into(), request: 1 },
        Event::ModelStarted { id: Some("msg_1".into()), usage: None, request: 1 },
        Event::ModelBlock { index: 0, block: ContentBlock::text("a"), request: 1 },
        Event::ModelDone { id: None, model: None, stop_reason: None, usage: Usage::default(), request: 1 },
        Event::ModelFailed { error: error(), request: 1 },
        Event::ToolStarted { tool_use_id: "t".into(), request: 1 },
        Event::ToolDone(ToolOutcome::error("t", "x")),
        Event::HookDone {
            hook_event: HookEventName::Stop,
            tool_use_id: None,
            runs: vec![HookRun {
                command: "c".into(),
                exit_code: Some(0),
                stdout: String::new(),
                stderr: String::new(),
                timed_out: false,
            }],
            request: 1,
        },
        Event::CompactDone { summary: "s".into(), usage: Usage::default(), request: 1, given_back: None },
        Event::CompactFailed { error: error(), request: 1 },
        Event::QueuedInput { id: "q".into(), content: vec![] },
        Event::CompactRequested,
        Event::RetryReady { attempt: 1 },
        Event::Resumed,
        Event::Abort,
        Event::SetModel { model: None, command: None },
        Event::SetPermissionMode { mode: "plan".into() },
        Event::CommandTools { command: "fm".into(), allow: vec!["Bash(touch:*)".into()] },
    ];
    let kinds: Vec<&str> = events.iter().map(Event::kind).collect();
    assert_eq!(kinds, EVENT_KINDS, "one sample per kind, in declaration order");
    for event in &events {
        assert_eq!(event.kind(), tag(event, "kind"));
    }
}

#[test]
fn every_command_and_notice_name_is_its_serde_tag() {
    let call = ModelCall {
        turn: 1,
        request: 1,
        message_count: 1,
        model: "m".into(),
        max_tokens: 1,
        stream: true,
        shed: Default::default(),
    };
    let wait = RetryWait {
        attempt: 1,
        max_retries: 1,
        delay_ms: 1,
        error_status: None,
        error: "e".into(),
        retry_after_capped_from_ms: None,
        unrounded_delay_ms: None,
    };
    let commands = [
        Command::CallModel(call),
        Command::RunTools { calls: vec![] },
        Command::ResumeTools { calls: vec![], started: vec![] },
        Command::Summarize {
            trigger: "auto".into(),
            request: 1,
            summarize: 2,
            pre_tokens: 1,
            truncated: false,
            date_last: false,
            attempt: 0,
            give_back: Vec::new(),
        },
        Command::RunStopHooks { stop_hook_active: false, last_assistant_message: String::new() },
        Command::CancelHooks,
        Command::CancelModel,
        Command::CancelTools,
        Command::WaitRetry(wait),
    ];
    for command in &commands {
        assert_eq!(command.name(), tag(command, "effect"));
    }
    let notices = [
        Notice::CompactBoundary { trigger: "auto".into(), pre_tokens: 2, post_tokens: 1, kept: None },
        Notice::CompactionFailed { trigger: "auto".into(), failures: 1, breaker_open: false, message: "m".into() },
        Notice::CompactionRetried { trigger: "auto".into(), message: "m".into() },
        Notice::CompactionSkipped { trigger: "auto".into() },
        Notice::InputConsumed { ids: vec![] },
        Notice::Withdraw,
        Notice::SwitchModel { trigger: "overloaded".into(), from: "a".into(), to: "b".into() },
    ];
    for notice in &notices {
        assert_eq!(notice.name(), tag(notice, "effect"));
    }
}

#[test]
fn every_ignored_why_is_its_serde_tag() {
    let id = || "t".to_string();
    let whys = [
        IgnoreWhy::NotExpected,
        IgnoreWhy::Finished,
        IgnoreWhy::StaleRequest { expected: 2, got: 1 },
        IgnoreWhy::StaleAttempt { expected: 2, got: 1 },
        IgnoreWhy::UnknownToolCall { tool_use_id: id() },
        IgnoreWhy::AlreadyAnswered { tool_use_id: id() },
        IgnoreWhy::AlreadyStarted { tool_use_id: id() },
        IgnoreWhy::NotStopHooks { hook_event: HookEventName::PreToolUse },
        IgnoreWhy::NotToolHooks { hook_event: HookEventName::Stop },
        IgnoreWhy::NothingToCompact,
        IgnoreWhy::CompactionBlocked,
        IgnoreWhy::NothingInFlight,
        IgnoreWhy::AlreadySet,
    ];
    for why in whys {
        let ignored = reloop_core::Ignored { phase: "idle".into(), event_kind: "abort".into(), why };
        assert_eq!(ignored.name(), tag(&ignored.why, "why"));
    }
}

#[test]
fn every_reason_trigger_and_hook_event_name_is_its_serde_string() {
    use ContinueReason as C;
    use TerminalReason as T;
    for reason in [
        C::NextTurn,
        C::MaxOutputTokensEscalate,
        C::MaxOutputTokensRecovery,
        C::MalformedToolCallRetry,
        C::ReactiveCompactRetry,
        C::StopHookBlocking,
        C::TokenBudgetContinuation,
        C::QueuedInput,
        C::CutStreamResume,
    ] {
        assert_eq!(reason.as_str(), tag(&reason, ""));
    }
    for reason in [
        T::Completed,
        T::MaxTurns,
        T::AbortedStreaming,
        T::AbortedTools,
        T::PromptTooLong,
        T::BlockingLimit,
        T::ModelError,
        T::StopHookPrevented,
        T::HookStopped,
        T::MaxBudgetUsd,
        T::MalformedToolUseExhausted,
    ] {
        assert_eq!(reason.as_str(), tag(&reason, ""));
    }
    for trigger in [Trigger::Auto, Trigger::Reactive, Trigger::Manual] {
        assert_eq!(trigger.as_str(), tag(&trigger, ""));
    }
    let hooks =
        [HookEventName::Stop, HookEventName::PreToolUse, HookEventName::PostToolUse, HookEventName::PermissionRequest];
    for hook in hooks {
        assert_eq!(hook.as_str(), tag(&hook, ""));
    }
}

#[test]
fn the_phases_are_journaled_under_these_names() {
    // The journal stores a phase by its index in this list: neither names nor order may change.
    let phases =
        ["idle", "awaiting_model", "running_tools", "waiting_retry", "compacting", "running_stop_hooks", "done"];
    assert_eq!(PHASES, phases);
}
