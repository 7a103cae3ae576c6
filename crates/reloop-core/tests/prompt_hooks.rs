//! A prompt's UserPromptSubmit runs (flag 10), journaled as a `hook_done` before its
//! `user_input`, decide the prompt: blocked (dropped, no request), stopped (kept, no request),
//! or passed on with the hooks' context as a `role: "system"` message after it.

use reloop_core::hook::{HookEventName, HookRun};
use reloop_core::{transition, Command, Config, ContentBlock, Effect, Event, Flag, Flags, Role, State, Stop};

fn run(exit: i32, stdout: &str, stderr: &str) -> HookRun {
    HookRun {
        command: "h".into(),
        exit_code: Some(exit),
        stdout: stdout.into(),
        stderr: stderr.into(),
        timed_out: false,
    }
}

/// Feeds the runs, then the prompt; returns the state and whether a request was asked for.
fn submit(flags: Flags, runs: Vec<HookRun>) -> (State, bool) {
    let mut state = State::new(Config::default().with_flags(flags));
    let held = transition(
        state,
        Event::HookDone { hook_event: HookEventName::UserPromptSubmit, tool_use_id: None, runs, request: 0 },
    );
    assert!(held.ignored.is_none(), "the runs are recorded, not ignored");
    state = held.state;
    let step = transition(state, Event::user_input(vec![ContentBlock::text("检查登录模块")]));
    let asks = step.effects.iter().any(|e| matches!(e, Effect::Command(Command::CallModel(_))));
    (step.state, asks)
}

#[test]
fn a_block_drops_the_prompt_and_ends_the_query_with_claude_code_s_text() {
    let (state, asks) = submit(Flags::current(), vec![run(0, r#"{"decision":"block","reason":"NO"}"#, "")]);
    assert!(!asks);
    assert_eq!(state.messages().len(), 0);
    let terminal = state.terminal().unwrap();
    assert!(
        matches!(&terminal.stop, Stop::HookStopped(h) if h.tool_use_id.is_none() && h.stop_reason.as_deref() == Some("NO"))
    );
    assert_eq!(
        terminal.error.as_deref(),
        Some("UserPromptSubmit operation blocked by hook:\nNO\n\nOriginal prompt: 检查登录模块")
    );
}

#[test]
fn a_stop_keeps_the_prompt_and_ends_the_query() {
    let (state, asks) = submit(Flags::current(), vec![run(0, r#"{"continue":false,"stopReason":"HALT"}"#, "")]);
    assert!(!asks);
    assert_eq!(state.messages().len(), 1);
    assert_eq!(state.terminal().unwrap().error.as_deref(), Some("Operation stopped by hook: HALT"));
}

#[test]
fn context_follows_the_prompt_as_a_system_message() {
    let ctx = r#"{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"CTX"}}"#;
    let (state, asks) = submit(Flags::current(), vec![run(0, ctx, "")]);
    assert!(asks);
    let messages = state.messages().messages();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[1].role, Role::System);
    assert_eq!(messages[1].text(), "UserPromptSubmit hook additional context: CTX");
    // A plain pass changes nothing.
    let (state, asks) = submit(Flags::current(), vec![run(0, "", "")]);
    assert!(asks);
    assert_eq!(state.messages().len(), 1);
}

#[test]
fn with_the_flag_off_the_runs_decide_nothing() {
    let mut off = Flags::current();
    off.flip(Flag::SessionEventHooks.number());
    let (state, asks) = submit(off, vec![run(2, "", "NO\n")]);
    assert!(asks && !state.is_done());
    assert_eq!(state.messages().len(), 1);
}

#[test]
fn session_start_and_end_runs_are_recorded_between_queries() {
    let state = State::new(Config::default());
    for hook_event in [HookEventName::SessionStart, HookEventName::SessionEnd, HookEventName::SubagentStart] {
        let step = transition(
            state.clone(),
            Event::HookDone { hook_event, tool_use_id: None, runs: vec![run(0, "x", "")], request: 0 },
        );
        assert!(step.ignored.is_none() && step.effects.is_empty(), "{hook_event:?}");
        assert_eq!(step.state.phase(), "idle");
    }
}
