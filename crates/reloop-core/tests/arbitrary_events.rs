//! Arbitrary event sequences fed to every phase: whatever a driver, a race or a corrupt journal
//! sends, the core never panics, every step is either applied/decided or a typed `Ignored` that
//! changes nothing, and replaying the journaled (serialized) events reproduces every step.
//!
//! The generator is a bounded driver: each event is drawn as a spec (its kind and how its ids
//! relate to what is in flight: the current request, one before, one after) and resolved
//! against the state at the moment it is fed, so sequences reach deep into every phase instead
//! of being rejected at the first step.

use proptest::prelude::*;
use reloop_core::hook::{HookEventName, HookRun};
use reloop_core::local_lines::LocalLine;
use reloop_core::profile::{ProfileId, RequestGuess};
use reloop_core::{transition, Config, ContentBlock, Event, ModelError, State, StopReason, ToolOutcome, Usage};
use serde_json::json;

#[derive(Debug, Clone)]
struct Spec {
    kind: u8,
    /// The request an event names, relative to the one in flight.
    offset: i8,
    /// Which tool id, hook event, stop reason or error variant.
    variant: u8,
}

fn spec() -> impl Strategy<Value = Spec> {
    (0u8..18, prop_oneof![4 => Just(0i8), 1 => Just(-1i8), 1 => Just(1i8)], 0u8..6)
        .prop_map(|(kind, offset, variant)| Spec { kind, offset, variant })
}

fn config(hooks: bool, budget: bool) -> Config {
    let mut config = Config::default().with_max_turns(Some(4)).with_max_retries(2).with_context_window(40_000);
    if hooks {
        config = config.with_stop_hooks(true).with_stop_hook_block_cap(2);
    }
    if budget {
        config = config.with_token_budget(Some(2_000));
    }
    config
}

fn run(code: i32) -> Vec<HookRun> {
    let stdout = if code == 3 { r#"{"continue": false}"#.to_string() } else { String::new() };
    let exit_code = Some(if code == 3 { 0 } else { code });
    vec![HookRun { command: "./h".into(), exit_code, stdout, stderr: "no".into(), timed_out: false }]
}

/// The spec as an event, given the state it is fed to.
fn resolve(spec: &Spec, state: &State) -> Event {
    let current = state.context().requests();
    let request = u32::try_from(i64::from(current) + i64::from(spec.offset)).unwrap_or(0);
    let ids = ["t0", "t1", "t9"];
    let id = ids[usize::from(spec.variant) % ids.len()].to_string();
    let v = spec.variant;
    match spec.kind {
        // A prompt, or one after a built-in command's lines.
        0 if v.is_multiple_of(2) => Event::user_input(vec![ContentBlock::text("go")]),
        0 => Event::UserInput {
            content: vec![ContentBlock::text("go")],
            origin: None,
            local: vec![
                LocalLine::said("<command-name>/clear</command-name>"),
                LocalLine::output("<local-command-stdout></local-command-stdout>"),
            ],
        },
        1 => Event::TextDelta { index: 0, text: "x".into(), request },
        2 => {
            let block = if v.is_multiple_of(2) {
                ContentBlock::text("some text")
            } else {
                ContentBlock::tool_use(id, if v == 5 { "Bash" } else { "Read" }, json!({"file_path": "/x"}))
            };
            Event::ModelBlock { index: usize::from(v), block, request }
        }
        3 => {
            let stop = [StopReason::EndTurn, StopReason::ToolUse, StopReason::MaxTokens, StopReason::Refusal]
                [usize::from(v) % 4]
                .clone();
            let usage = Usage { input_tokens: u64::from(v) * 9_000, output_tokens: 300, ..Usage::default() };
            Event::ModelDone { id: None, model: None, stop_reason: Some(stop), usage, request }
        }
        4 => {
            let error = match v % 5 {
                0 => ModelError::new(Some(529), "overloaded_error", "Overloaded"),
                1 => ModelError::new(Some(500), "api_error", "boom"),
                2 => ModelError::new(Some(400), "invalid_request_error", "prompt is too long: 50000 tokens > 40000"),
                // A refusal 2.1.332 guesses about (flag 41), the request carrying both guesses.
                3 => ModelError::new(Some(400), "invalid_request_error", "refused").with_sheddable(
                    [RequestGuess::TokenCountBeta, RequestGuess::ThinkingDisplay].into_iter().collect(),
                ),
                _ => ModelError::new(Some(401), "authentication_error", "bad key"),
            };
            Event::ModelFailed { error, request }
        }
        5 => Event::ToolStarted { tool_use_id: id, request },
        6 => {
            let mut outcome = ToolOutcome::error(&id, "result");
            outcome.is_error = v == 4;
            outcome.denied = v == 3;
            outcome.request = request;
            Event::ToolDone(outcome)
        }
        7 => {
            let hook_event =
                [HookEventName::Stop, HookEventName::PreToolUse, HookEventName::PostToolUse][usize::from(v) % 3];
            let tool_use_id = (hook_event != HookEventName::Stop).then_some(id);
            Event::HookDone { hook_event, tool_use_id, runs: run(i32::from(v % 4)), request }
        }
        8 => Event::CompactDone {
            summary: "<summary>s</summary>".into(),
            usage: Usage::default(),
            request,
            given_back: None,
        },
        9 => Event::CompactFailed { error: ModelError::new(Some(500), "api_error", "no"), request },
        10 => Event::QueuedInput { id: format!("q{v}"), content: vec![ContentBlock::text("more")] },
        11 => Event::CompactRequested,
        12 => {
            let awaited = reloop_core::testkit::retry_attempt(state);
            Event::RetryReady { attempt: u32::try_from(i64::from(awaited) + i64::from(spec.offset)).unwrap_or(0) }
        }
        13 => Event::Resumed,
        14 => Event::Abort,
        15 => Event::SetModel { model: v.is_multiple_of(2).then(|| format!("model-{v}")), command: None },
        16 => Event::ModelStarted { id: Some(format!("msg_{v}")), usage: Some(json!({"input_tokens": v})), request },
        _ => Event::SetPermissionMode { mode: ["default", "plan", "acceptEdits"][usize::from(v) % 3].into() },
    }
}

/// A prefix that brings a fresh session to each phase (or near it).
fn prefix(start: u8) -> Vec<Spec> {
    let s = |kind, variant| Spec { kind, offset: 0, variant };
    match start % 7 {
        0 => vec![],
        1 => vec![s(0, 0)],
        2 => vec![s(0, 0), s(2, 1), s(3, 1)],
        3 => vec![s(0, 0), s(4, 0)],
        4 => vec![s(0, 0), s(2, 0), s(3, 0), s(11, 0)],
        5 => vec![s(0, 0), s(2, 0), s(3, 0)],
        _ => vec![s(0, 0), s(14, 0)],
    }
}

struct Recorded {
    event: String,
    effects: String,
    reason: String,
    ignored: String,
    digest: u64,
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 384, ..ProptestConfig::default() })]

    #[test]
    fn any_event_in_any_phase_is_decided_or_ignored_and_replays(
        start in 0u8..7,
        hooks in any::<bool>(),
        budget in any::<bool>(),
        profile in 0usize..3,
        specs in proptest::collection::vec(spec(), 0..48),
    ) {
        let config = config(hooks, budget).with_profile(ProfileId::ALL[profile]);
        let mut state = State::new(config.clone());
        let mut journal: Vec<Recorded> = Vec::new();
        for spec in prefix(start).iter().chain(&specs) {
            let event = resolve(spec, &state);
            let (phase_before, digest_before) = (state.phase(), state.digest());
            let kind = event.kind();
            let step = transition(state, event.clone());
            let digest = step.state.digest();
            match &step.ignored {
                Some(ignored) => {
                    prop_assert!(step.effects.is_empty(), "ignored {kind} asked for {:?}", step.effects);
                    prop_assert!(step.reason.is_none(), "ignored {kind} decided {:?}", step.reason);
                    prop_assert_eq!(digest, digest_before, "ignored {} changed the state", kind);
                    prop_assert_eq!(step.state.phase(), phase_before);
                    prop_assert_eq!(&ignored.phase, phase_before);
                    prop_assert_eq!(&ignored.event_kind, kind);
                }
                None => {
                    // An applied event changes something, but for a delta after the first and a
                    // response's head (both journaled for the stream) and a tool hook that had
                    // nothing to file.
                    let changed = digest != digest_before || !step.effects.is_empty() || step.reason.is_some();
                    prop_assert!(changed || matches!(kind, "text_delta" | "model_started" | "hook_done"),
                        "{} in {} was neither applied nor ignored", kind, phase_before);
                }
            }
            journal.push(Recorded {
                event: serde_json::to_string(&event).unwrap(),
                effects: serde_json::to_string(&step.effects).unwrap(),
                reason: serde_json::to_string(&step.reason).unwrap(),
                ignored: serde_json::to_string(&step.ignored).unwrap(),
                digest,
            });
            state = step.state;
        }
        // Replay from the journaled text alone.
        let mut replayed = State::new(config);
        for (i, row) in journal.iter().enumerate() {
            let event: Event = serde_json::from_str(&row.event).unwrap();
            let step = transition(replayed, event);
            prop_assert_eq!(&serde_json::to_string(&step.effects).unwrap(), &row.effects, "effects of step {}", i);
            prop_assert_eq!(&serde_json::to_string(&step.reason).unwrap(), &row.reason, "reason of step {}", i);
            prop_assert_eq!(&serde_json::to_string(&step.ignored).unwrap(), &row.ignored, "ignored of step {}", i);
            prop_assert_eq!(step.state.digest(), row.digest, "digest of step {}", i);
            replayed = step.state;
        }
    }
}
