//! Each profile's retry delays as the loop asks for them (flag 15): 2.1.197's unrounded, 2.1.332's
//! rounded, reloop's own and every journal's without the flag unchanged, and a `retry-after` over
//! a minute that Claude Code does not wait.

use reloop_core::profile::ProfileId;
use reloop_core::{
    transition, Command, Config, ContentBlock, Effect, Event, Flag, Flags, ModelError, RetryWait, State,
};

/// What the loop does after one failure with `error`: the wait it asks for, if any.
fn after_one_failure(profile: ProfileId, flag_on: bool, error: ModelError) -> Option<RetryWait> {
    let mut flags = Flags::current();
    if !flag_on {
        flags.flip(Flag::ClaudeCodeRetryDelays.number());
    }
    let config = Config::default().with_model("m").with_profile(profile).with_flags(flags).with_retry_seed(7);
    let state = transition(State::new(config), Event::user_input(vec![ContentBlock::text("go")])).state;
    let step = transition(state, Event::ModelFailed { error, request: 1 });
    step.effects.iter().find_map(|e| match e {
        Effect::Command(Command::WaitRetry(w)) => Some(w.clone()),
        _ => None,
    })
}

fn overloaded() -> ModelError {
    ModelError::new(Some(529), "overloaded_error", "Overloaded")
}

fn asked(after_ms: u64) -> ModelError {
    ModelError::new(Some(429), "rate_limit_error", "slow down").with_retry_after_ms(Some(after_ms))
}

#[test]
fn each_profile_waits_as_its_version_does_under_the_flag_only() {
    let old = after_one_failure(ProfileId::ClaudeCode2_1_197, true, overloaded()).unwrap();
    let exact = old.unrounded_delay_ms.expect("2.1.197's delay keeps its fraction");
    assert!((500.0..625.0).contains(&exact) && old.delay_ms == exact as u64, "{old:?}");
    let new = after_one_failure(ProfileId::ClaudeCode2_1_332, true, overloaded()).unwrap();
    assert!(new.unrounded_delay_ms.is_none() && (500..=625).contains(&new.delay_ms), "{new:?}");
    // reloop's own profile, and every journal without the flag, keep reloop's backoff.
    let ours = reloop_core::retry_delay_ms(1, None, 7, 1);
    for (profile, flag_on) in
        [(ProfileId::Reloop, true), (ProfileId::ClaudeCode2_1_197, false), (ProfileId::ClaudeCode2_1_332, false)]
    {
        let wait = after_one_failure(profile, flag_on, overloaded()).unwrap();
        assert_eq!((wait.delay_ms, wait.unrounded_delay_ms), (ours, None), "{profile:?}");
    }
    // `retry-after: 2` on the first retry: 2.1.197 waits it (as before), 2.1.332 scales it.
    let old = after_one_failure(ProfileId::ClaudeCode2_1_197, true, asked(2_000)).unwrap();
    assert_eq!((old.delay_ms, old.unrounded_delay_ms), (2_000, Some(2_000.0)));
    let new = after_one_failure(ProfileId::ClaudeCode2_1_332, true, asked(2_000)).unwrap();
    assert!((2_000..=2_500).contains(&new.delay_ms), "{new:?}");
}

#[test]
fn a_retry_after_over_a_minute_ends_the_run_in_claude_code_profiles() {
    for profile in [ProfileId::ClaudeCode2_1_197, ProfileId::ClaudeCode2_1_332] {
        assert!(after_one_failure(profile, true, asked(60_000)).is_some(), "{profile:?}: a minute is waited");
        assert_eq!(after_one_failure(profile, true, asked(60_001)), None, "{profile:?}");
        assert!(after_one_failure(profile, false, asked(60_001)).is_some(), "{profile:?} without the flag");
    }
    assert_eq!(after_one_failure(ProfileId::Reloop, true, asked(60_001)).unwrap().delay_ms, 60_001);
}
