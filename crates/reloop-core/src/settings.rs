//! `set_model` and `set_permission_mode`: the caller changes a setting mid-session (the Agent
//! SDK's control requests). Every phase takes them the same way: the setting is recorded in the
//! session context, nothing is asked for, and the phase stays as it was. A model switch applies
//! from the next request on; the request in flight keeps the model it was sent with. Setting a
//! value a setting already has changes nothing and is ignored as `already_set`.

use crate::event::Event;
use crate::state::State;
use crate::step::{IgnoreWhy, Step};

/// Records the model the next requests go to (`None`: the configured one). `by_command`: the
/// switch to a command file's model before its query, or back after it; the conversation goes
/// on naming the model it had before (flag 26, [`crate::identity`]).
pub(crate) fn set_model(state: impl Into<State>, model: Option<String>, by_command: bool) -> Step {
    let mut state = state.into();
    let model = model.filter(|m| !m.is_empty());
    if state.context().session.model == model {
        return Step::ignore(state, &Event::SetModel { model, command: None }, IgnoreWhy::AlreadySet);
    }
    let ctx = state.context_mut();
    match (by_command, ctx.session.in_command) {
        // To the command's model: the conversation was told of the one before it, unless a
        // reminder since named another.
        (true, false) => {
            if ctx.session.named_model.is_none() {
                ctx.session.named_model = Some(ctx.current_model().to_string());
            }
            ctx.session.in_command = true;
        }
        // Back after the command's query: the next prompt may name the session's model again.
        (true, true) => ctx.session.in_command = false,
        // The caller's own switch, which the conversation goes on with.
        (false, _) => ctx.session.named_model = None,
    }
    ctx.session.model = model;
    Step::stay(state)
}

/// Records the permission mode the driver now enforces.
pub(crate) fn set_permission_mode(state: impl Into<State>, mode: String) -> Step {
    let mut state = state.into();
    if state.context().session.permission_mode.as_deref() == Some(mode.as_str()) {
        return Step::ignore(state, &Event::SetPermissionMode { mode }, IgnoreWhy::AlreadySet);
    }
    state.context_mut().session.permission_mode = Some(mode);
    Step::stay(state)
}

#[cfg(test)]
mod tests {
    use crate::{transition, Config, ContentBlock, Event, State};

    #[test]
    fn a_model_switch_goes_to_the_next_request_and_back() {
        let config = Config::default().with_model("claude-opus-4-8".to_string());
        let state =
            transition(State::new(config), Event::SetModel { model: Some("claude-haiku-4-5".into()), command: None })
                .state;
        assert_eq!(state.context().current_model(), "claude-haiku-4-5");
        let step = transition(state, Event::user_input(vec![ContentBlock::text("hi")]));
        let call = step.effects.iter().find_map(|e| e.command()).expect("a request");
        assert!(matches!(call, crate::Command::CallModel(c) if c.model == "claude-haiku-4-5"));
        let state = transition(step.state, Event::SetModel { model: None, command: None }).state;
        assert_eq!(state.context().current_model(), "claude-opus-4-8");
    }

    #[test]
    fn a_setting_changes_the_digest_only_once_set() {
        let fresh = State::new(Config::default());
        let before = fresh.digest();
        let same = transition(fresh, Event::SetPermissionMode { mode: "plan".into() });
        assert!(same.ignored.is_none() && same.reason.is_none() && same.effects.is_empty());
        assert_ne!(same.state.digest(), before);
        assert_eq!(same.state.context().session.permission_mode.as_deref(), Some("plan"));
    }
}
