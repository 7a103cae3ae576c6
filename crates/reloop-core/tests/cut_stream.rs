//! 2.1.332 after a stream that broke after part of the answer: the half answer is kept and the
//! model is asked to resume from it, each cut a retry of the request.

use reloop_core::profile::{ProfileId, CUT_STREAM_RESUME_TEXT};
use reloop_core::{
    transition, Command, Config, ContentBlock, Continue, Effect, Event, Flag, Flags, ModelError, Reason, Role, State,
    Step,
};

const HALF: &str = "部分回答";

fn config(flags: Flags) -> Config {
    Config::default().with_model("m").with_profile(ProfileId::ClaudeCode2_1_332).with_flags(flags)
}

/// One block of the answer, then the overload inside the 200 stream.
fn cut(state: State, request: u32) -> Step {
    let block = ContentBlock::text(HALF);
    let state = transition(state, Event::ModelBlock { index: 0, block, request }).state;
    let error = ModelError::new(None, "overloaded_error", "Overloaded");
    transition(state, Event::ModelFailed { error, request })
}

fn texts(state: &State) -> Vec<(Role, String)> {
    state
        .messages()
        .messages()
        .iter()
        .map(|m| {
            let text = m.content.iter().filter_map(|b| match b {
                ContentBlock::Text(t) => Some(t.text.clone()),
                _ => None,
            });
            (m.role, text.collect::<Vec<_>>().join(""))
        })
        .collect()
}

#[test]
fn the_half_answer_is_kept_and_the_model_asked_to_resume_until_the_retries_run_out() {
    let reminder = format!("<system-reminder>\n{CUT_STREAM_RESUME_TEXT}\n</system-reminder>");
    let go = Event::user_input(vec![ContentBlock::text("go")]);
    let mut state = transition(State::new(config(Flags::current()).with_max_retries(3)), go).state;
    for attempt in 1..=3 {
        let step = cut(state, attempt);
        assert_eq!(step.reason, Some(Reason::Continue(Continue::CutStreamResume { attempt, of: 3 })));
        assert_eq!(step.reason.as_ref().map(Reason::explain).unwrap_or_default(), format!("the stream broke after part of the answer; kept it and asked the model to resume (retry {attempt} of 3)"));
        // No wait: the next request goes at once, the half answer and the reminder appended.
        assert!(matches!(step.effects.last(), Some(Effect::Command(Command::CallModel(_)))), "{:?}", step.effects);
        let history = texts(&step.state);
        let tail = &history[history.len() - 2..];
        assert_eq!(tail, [(Role::Assistant, HALF.to_string()), (Role::User, reminder.clone())]);
        assert_eq!(history.len(), 1 + 2 * attempt as usize);
        state = step.state;
    }
    // A fourth cut: the retries are spent.
    let step = cut(state, 4);
    assert_eq!(step.state.terminal().and_then(|t| t.error.clone()).as_deref(), Some("API Error: Overloaded"));
}

#[test]
fn without_its_flag_the_cut_stream_is_retried_as_before() {
    let mut flags = Flags::current();
    flags.flip(Flag::CutStreamResume.number());
    let go = Event::user_input(vec![ContentBlock::text("go")]);
    let state = transition(State::new(config(flags)), go).state;
    let step = cut(state, 1);
    assert!(step.effects.iter().any(|e| matches!(e, Effect::Command(Command::WaitRetry(_)))), "{:?}", step.effects);
    assert_eq!(texts(&step.state).len(), 1, "the half answer withdrawn");
}
