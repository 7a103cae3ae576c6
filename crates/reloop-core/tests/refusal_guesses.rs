//! 2.1.332 after a 400 it has no words for: the request is sent again at once without the next
//! thing it guesses the API refused, each guess kept for the rest of the session, and the run
//! ends when the request carries nothing left to guess (flag 41;
//! `error_endings/invalid_request_no_tool_search`, `…_healed`).

use reloop_core::profile::{ProfileId, RequestGuess};
use reloop_core::{transition, Command, Config, ContentBlock, Effect, Event, Flag, Flags, ModelError, State, Step};

const LADDER: [RequestGuess; 2] = [RequestGuess::TokenCountBeta, RequestGuess::ThinkingDisplay];

fn started(profile: ProfileId, flags: Flags) -> State {
    let config = Config::default().with_model("m").with_profile(profile).with_flags(flags);
    transition(State::new(config), Event::user_input(vec![ContentBlock::text("go")])).state
}

/// The request `request` refused with `status`, the driver noting what it carried.
fn refused(state: State, request: u32, status: u16, carried: &[RequestGuess]) -> Step {
    let error = ModelError::new(Some(status), "invalid_request_error", "MAIN-REFUSED: the request is invalid")
        .with_sheddable(carried.iter().copied().collect());
    transition(state, Event::ModelFailed { error, request })
}

fn sent_without(step: &Step) -> Option<Vec<RequestGuess>> {
    step.effects.iter().find_map(|e| match e {
        Effect::Command(Command::CallModel(call)) => Some(Vec::<RequestGuess>::from(call.shed)),
        _ => None,
    })
}

#[test]
fn each_refusal_takes_one_more_guess_until_none_is_left() {
    let state = started(ProfileId::ClaudeCode2_1_332, Flags::current());
    let step = refused(state, 1, 400, &LADDER);
    assert_eq!(sent_without(&step), Some(vec![RequestGuess::TokenCountBeta]), "{:?}", step.effects);
    assert!(!step.effects.iter().any(|e| matches!(e, Effect::Command(Command::WaitRetry(_)))), "sent at once");
    // The second try carries the display alone (the beta is gone already).
    let step = refused(step.state, 2, 422, &[RequestGuess::ThinkingDisplay]);
    assert_eq!(sent_without(&step), Some(LADDER.to_vec()));
    let step = refused(step.state, 3, 400, &[]);
    assert_eq!(sent_without(&step), None);
    let error = step.state.terminal().and_then(|t| t.error.clone());
    assert_eq!(error.as_deref(), Some("API Error: 400 MAIN-REFUSED: the request is invalid"));
}

/// `invalid_request_healed`: the request that went through and every later one go without the
/// guess taken.
#[test]
fn a_guess_taken_stays_for_the_later_requests() {
    let state = started(ProfileId::ClaudeCode2_1_332, Flags::current());
    let step = refused(state, 1, 400, &LADDER);
    let done = Event::ModelDone { id: None, model: None, stop_reason: None, usage: Default::default(), request: 2 };
    let read = ContentBlock::tool_use("toolu_1", "Read", serde_json::json!({"file_path": "/a"}));
    let state = transition(step.state, Event::ModelBlock { index: 0, block: read, request: 2 }).state;
    let step = transition(state, done);
    let text = reloop_core::ToolResultContent::Text("text".into());
    let outcome = reloop_core::ToolOutcome { request: 2, ..reloop_core::ToolOutcome::new("toolu_1", text) };
    let step = transition(step.state, Event::ToolDone(outcome));
    assert_eq!(sent_without(&step), Some(vec![RequestGuess::TokenCountBeta]), "{:?}", step.effects);
}

#[test]
fn nothing_is_guessed_without_the_flag_under_2_1_197_or_for_other_errors() {
    let mut flags = Flags::current();
    flags.flip(Flag::RefusalGuesses.number());
    for (profile, flags, status) in [
        (ProfileId::ClaudeCode2_1_332, flags, 400),
        (ProfileId::ClaudeCode2_1_197, Flags::current(), 400),
        (ProfileId::Reloop, Flags::current(), 400),
        (ProfileId::ClaudeCode2_1_332, Flags::current(), 403),
    ] {
        let step = refused(started(profile, flags.clone()), 1, status, &LADDER);
        assert_eq!(sent_without(&step), None, "{profile:?} {status}");
        assert!(step.state.terminal().is_some(), "{profile:?} {status}: the run ends");
    }
}
