//! A failed request: retry after a delay, switch to the fallback model, or stop.
//!
//! The delays are decided here, from the error and a seed stored in the session's config, so a
//! replay reproduces them exactly and performs none of them.

use crate::backoff::{jitter_below_base, retry_delay_ms};
use crate::compact::{Compaction, Trigger};
use crate::context::Loop;
use crate::effect::{Command, Effect, Notice, RetryWait};
use crate::event::{ModelError, ModelErrorKind, ToolOutcome};
use crate::flags::Flag;
use crate::message::Message;
use crate::profile::RetryAfter;
use crate::reason::{Continue, Failure, ModelFailure, Stop, TerminalReason, TooLong};
use crate::request::{begin_compaction, continue_with, proceed};
use crate::state::{Phase, Streaming, Terminal};
use crate::step::{done, Step};

/// Why a run ended after [`crate::profile::Profile::overload_stop`] 529s in a row.
pub const REPEATED_OVERLOADS: &str = "overloaded too many times in a row, with no fallback model";

/// Why a prompt too long ended the run when nothing before the last exchange could be summarised.
const SINGLE_EXCHANGE: &str = "a single exchange cannot be compacted";

/// The `tool_result` of a call received from an attempt abandoned for the fallback model.
pub const FALLBACK_TOOL_RESULT: &str = "Model fallback triggered";
/// Consecutive overloads after which the fallback model takes over.
pub const OVERLOADS_BEFORE_FALLBACK: u32 = 3;
/// The longest a server's `retry-after` may make the loop wait: 6 hours. A server asking for a
/// day (or for `1e300` seconds) would otherwise park the session for good; the providers cap
/// what they read at this and keep what was asked in
/// [`ModelError::retry_after_capped_from_ms`].
pub const MAX_RETRY_AFTER_MS: u64 = 6 * 60 * 60 * 1000;
/// Retries of a connection error to a model server on this machine (with
/// [`Flag::LocalConnectionFailsFast`]): enough for a server that is just starting (0.5 s, 1 s),
/// not the ten of a remote API with its minutes of backoff.
pub const LOCAL_CONNECTION_RETRIES: u32 = 2;

/// The request in flight failed.
pub(crate) fn failed(mut ctx: Box<Loop>, streaming: Streaming, error: ModelError) -> Step {
    let mut effects: Vec<Effect> = Vec::new();
    if error.is_prompt_too_long() {
        if streaming.streamed {
            effects.push(Notice::Withdraw.into());
        }
        // Compact once per turn and retry; has_attempted_reactive_compact survives stop-hook
        // continues, so compact → error → hook → compact cannot spiral.
        let summarizable = crate::compact::summarizable(&ctx.messages);
        let why = match (ctx.config.reactive_compact, ctx.turn.has_attempted_reactive_compact, summarizable) {
            (true, false, Some(summarize)) => {
                ctx.turn.has_attempted_reactive_compact = true;
                // The API's own count, when it gave one, beats the estimate.
                let pre_tokens = reported_tokens(&error.message).unwrap_or_else(|| crate::tokens::estimate(&ctx));
                let compaction = Compaction::new(Trigger::Reactive, pre_tokens, summarize);
                return begin_compaction(ctx, compaction, effects, None);
            }
            (false, _, _) => "reactive compaction is off",
            (true, true, _) => "still too long after compacting once this turn",
            (true, false, None) => SINGLE_EXCHANGE,
        };
        return give_up(ctx, error, TerminalReason::PromptTooLong, why, effects);
    }

    if let Some(trigger) = fallback_trigger(&ctx, &error) {
        let (from, to) = (ctx.config.model.clone(), ctx.config.fallback_model.clone().unwrap_or_default());
        ctx.session.fallback_active = true;
        ctx.request.retry_attempt = 0;
        ctx.request.consecutive_overloaded = 0;
        let streamed = streaming.streamed;
        let partial = Message::assistant(streaming.blocks);
        let orphans: Vec<String> = partial.tool_uses().map(|t| t.id.clone()).collect();
        if orphans.is_empty() {
            if streamed {
                effects.push(Notice::Withdraw.into());
            }
        } else {
            // Calls already received are answered, so no tool_use is left without a result.
            let results = orphans.iter().map(|id| ToolOutcome::error(id, FALLBACK_TOOL_RESULT).into_block()).collect();
            ctx.messages.push(partial);
            ctx.messages.push(Message::user(results));
        }
        effects.push(Notice::SwitchModel { trigger: trigger.to_string(), from, to }.into());
        return proceed(ctx, effects, None);
    }

    if error.status.is_none() && !streaming.blocks.is_empty() && ctx.config.streamed_error_final() {
        // The half answer stays, shown and in the history, as Claude Code keeps it.
        ctx.messages.push(Message::assistant(streaming.blocks));
        let why = "the stream broke after part of the answer arrived";
        return give_up(ctx, error, TerminalReason::ModelError, why, effects);
    }
    let resume = ctx.config.rules().cut_stream_resume.filter(|_| ctx.config.flag(Flag::CutStreamResume));
    if let (Some(resume), None, false) = (resume, error.status, streaming.blocks.is_empty()) {
        if ctx.request.retry_attempt >= ctx.config.max_retries {
            return give_up(ctx, error, TerminalReason::ModelError, "retries exhausted", effects);
        }
        // The half answer stays and the model is asked to go on from it; each cut is a retry.
        ctx.request.retry_attempt += 1;
        ctx.messages.push(Message::assistant(streaming.blocks));
        ctx.messages.push(Message::user_text(resume.render()));
        let decision = Continue::CutStreamResume { attempt: ctx.request.retry_attempt, of: ctx.config.max_retries };
        return continue_with(ctx, decision, effects);
    }
    if streaming.streamed {
        effects.push(Notice::Withdraw.into());
    }
    if error.is_overloaded() {
        ctx.request.consecutive_overloaded = ctx.request.consecutive_overloaded.saturating_add(1);
    } else {
        ctx.request.consecutive_overloaded = 0;
    }
    if let Some(guess) = refusal_guess(&ctx, &error) {
        // Sent again at once, without the next thing the profile guesses the API refused.
        ctx.session.shed = ctx.session.shed.with(guess);
        return proceed(ctx, effects, None);
    }
    if let Some(why) = not_retryable(&error) {
        return give_up(ctx, error, TerminalReason::ModelError, why, effects);
    }
    // Claude Code stops after a few 529s in a row when no fallback model can take over.
    let overload_stop = ctx.config.rules().overload_stop.filter(|_| ctx.config.flag(Flag::ClaudeCodeEndings));
    if overload_stop.is_some_and(|n| error.status.is_some() && ctx.request.consecutive_overloaded >= n) {
        return give_up(ctx, error, TerminalReason::ModelError, REPEATED_OVERLOADS, effects);
    }
    if ctx.request.retry_attempt >= ctx.config.max_retries {
        return give_up(ctx, error, TerminalReason::ModelError, "retries exhausted", effects);
    }
    let max_retries = if local_server_down(&ctx, &error) {
        ctx.config.max_retries.min(LOCAL_CONNECTION_RETRIES)
    } else {
        ctx.config.max_retries
    };
    if ctx.request.retry_attempt >= max_retries {
        let why = "nothing answers at the local model server";
        return give_up(ctx, error, TerminalReason::ModelError, why, effects);
    }
    ctx.request.retry_attempt += 1;
    if let Some(rule) = ctx.config.rules().whole_answer {
        // An overload inside a 200 stream: after `after` of them, the whole answer, at once.
        if error.status.is_none() && error.is_overloaded() {
            ctx.request.midstream_overloads = ctx.request.midstream_overloads.saturating_add(1);
            if ctx.request.midstream_overloads >= rule.after {
                ctx.request.whole = true;
                return proceed(ctx, effects, None);
            }
        } else {
            ctx.request.midstream_overloads = 0;
        }
    }
    let retry_after = error.retry_after_ms.filter(|_| ctx.config.flag(Flag::RetryAfterFloor));
    let (attempt, seed, request) = (ctx.request.retry_attempt, ctx.config.retry_seed, ctx.session.requests);
    let curve = ctx.config.rules().retry_curve.filter(|_| ctx.config.flag(Flag::ClaudeCodeRetryDelays));
    if curve.is_some() && retry_after.is_some_and(|after| after > crate::CLAUDE_CODE_MAX_RETRY_AFTER_MS) {
        return give_up(ctx, error, TerminalReason::ModelError, "retry-after over 60 s", effects);
    }
    let mut unrounded_delay_ms = None;
    let delay_ms = match (retry_after, ctx.config.rules().retry_after, curve) {
        (_, _, Some(curve)) => {
            let delay = crate::backoff::claude_code_delay(curve, attempt, retry_after, seed, request);
            unrounded_delay_ms = delay.unrounded;
            delay.ms
        }
        (Some(after), RetryAfter::Exact, None) => after,
        (Some(after), RetryAfter::PlusJitter, None) => after.saturating_add(jitter_below_base(attempt, seed, request)),
        (retry_after, RetryAfter::Floor | RetryAfter::Exact | RetryAfter::PlusJitter, None) => {
            retry_delay_ms(attempt, retry_after, seed, request)
        }
    };
    // A capped `retry-after` waits the cap, jitter included. Only errors read since the cap
    // carry `retry_after_capped_from_ms`, so older journals replay their delays unchanged.
    let capped_from = error.retry_after_capped_from_ms.filter(|_| retry_after.is_some());
    let delay_ms = if capped_from.is_some() { delay_ms.min(MAX_RETRY_AFTER_MS) } else { delay_ms };
    effects.push(
        Command::WaitRetry(RetryWait {
            attempt: ctx.request.retry_attempt,
            max_retries,
            delay_ms,
            error_status: error.status,
            error: category(&error).to_string(),
            retry_after_capped_from_ms: capped_from,
            unrounded_delay_ms,
        })
        .into(),
    );
    Step::with(Phase::WaitingRetry(ctx), effects)
}

/// The guess to send a refused request again without (flag 41): a 400 or 422 the profile has
/// no words for, and the first guess of its ladder the request carries and not yet taken.
fn refusal_guess(ctx: &Loop, error: &ModelError) -> Option<crate::profile::RequestGuess> {
    let ladder = ctx.config.rules().wire.betas.filter(|_| ctx.config.flag(Flag::RefusalGuesses))?.refusal_guesses();
    if !matches!(error.status, Some(400 | 422)) {
        return None;
    }
    ladder.iter().copied().find(|g| error.sheddable.contains(*g) && !ctx.session.shed.contains(*g))
}

/// `prompt is too long: 210000 tokens > 200000 maximum` → 210000.
fn reported_tokens(message: &str) -> Option<u64> {
    let after = message.split("prompt is too long:").nth(1)?;
    after.split_whitespace().next()?.parse().ok()
}

fn fallback_trigger(ctx: &Loop, error: &ModelError) -> Option<&'static str> {
    if ctx.config.fallback_model.is_none() || ctx.session.fallback_active || error.should_retry == Some(false) {
        return None;
    }
    if error.is_overloaded() {
        return (ctx.request.consecutive_overloaded.saturating_add(1) >= OVERLOADS_BEFORE_FALLBACK)
            .then_some("overloaded");
    }
    match error.status {
        Some(500..=599) => Some("server_error"),
        _ => None,
    }
}

/// Why an error is final, or `None` when it may be retried.
fn not_retryable(error: &ModelError) -> Option<&'static str> {
    match error.should_retry {
        Some(false) => return Some("x-should-retry: false"),
        Some(true) => return None,
        None => {}
    }
    let retryable = match error.status {
        Some(status) => matches!(status, 408 | 409 | 429 | 500..=599),
        // Connection errors and `error` events inside a 200 stream; not reloop's own verdicts.
        None => match error.kind() {
            ModelErrorKind::Overloaded
            | ModelErrorKind::RateLimit
            | ModelErrorKind::Api
            | ModelErrorKind::Connection
            | ModelErrorKind::Other => true,
            // A server that goes past the size max_tokens allows would do it again.
            ModelErrorKind::ScriptExhausted
            | ModelErrorKind::InvalidStream
            | ModelErrorKind::ResponseTooLarge
            | ModelErrorKind::RerunDiverged
            | ModelErrorKind::InvalidRequest
            | ModelErrorKind::Authentication
            | ModelErrorKind::Permission
            | ModelErrorKind::NotFound => false,
        },
    };
    (!retryable).then_some("not retryable")
}

/// A connection error (no HTTP answer) from a model server on this machine, under the flag that
/// makes it fail fast.
fn local_server_down(ctx: &Loop, error: &ModelError) -> bool {
    ctx.config.local_model_server
        && ctx.config.flag(Flag::LocalConnectionFailsFast)
        && error.status.is_none()
        && error.kind() == ModelErrorKind::Connection
}

/// The `error` field of the `api_retry` stream message.
fn category(error: &ModelError) -> &'static str {
    if error.is_overloaded() {
        return "overloaded";
    }
    match (error.status, error.kind()) {
        (Some(429), _) | (None, ModelErrorKind::RateLimit) => "rate_limit",
        (Some(408), _) => "timeout",
        (Some(409), _) => "conflict",
        (Some(500..=599), _) | (None, ModelErrorKind::Api) => "server_error",
        (None, ModelErrorKind::Connection) => "connection_error",
        _ => "unknown",
    }
}

fn give_up(ctx: Box<Loop>, error: ModelError, reason: TerminalReason, why: &str, effects: Vec<Effect>) -> Step {
    let single_exchange_text = ctx.config.rules().result.single_exchange_text
        && ctx.config.flag(Flag::SingleExchangeTooLongText)
        && why == SINGLE_EXCHANGE;
    let message = match (reason, error.status) {
        (TerminalReason::PromptTooLong, _) if single_exchange_text => {
            crate::too_long::single_exchange_text(&error.message, ctx.messages.messages())
        }
        (TerminalReason::PromptTooLong, _) => "Prompt is too long".to_string(),
        (_, Some(status)) => format!("API Error: {status} {}", error.message),
        (_, None) => format!("API Error: {}", error.message),
    };
    let failure = ModelFailure {
        status: error.status,
        error_type: error.error_type,
        message: error.message,
        retries: ctx.request.retry_attempt,
        why_final: why.to_string(),
        request_id: error.request_id,
    };
    let stop = match reason {
        TerminalReason::PromptTooLong => Stop::PromptTooLong(TooLong::Refused(failure)),
        _ => Stop::ModelError(Failure::Request(failure)),
    };
    let terminal = Terminal::failed(stop, message);
    done(ctx, terminal, effects)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::event::Event;
    use crate::message::{ContentBlock, Role};
    use crate::state::State;
    use crate::transition::transition;

    #[test]
    fn a_fallback_answers_the_calls_already_received() {
        let config = Config::default().with_model("big").with_fallback_model(Some("small".into()));
        let state = transition(State::new(config), Event::user_input(vec![ContentBlock::text("go")])).state;
        let call = ContentBlock::tool_use("toolu_1", "Read", serde_json::json!({"file_path": "/x"}));
        let state = transition(state, Event::ModelBlock { index: 0, block: call, request: 1 }).state;
        let step = transition(
            state,
            Event::ModelFailed { error: ModelError::new(Some(500), "api_error", "boom"), request: 1 },
        );
        assert!(step
            .effects
            .iter()
            .any(|e| matches!(e, Effect::Notice(Notice::SwitchModel { to, .. }) if to == "small")));
        assert!(matches!(step.effects.last(), Some(Effect::Command(Command::CallModel(c))) if c.model == "small"));
        let messages = step.state.messages().messages();
        let answer = messages.last().unwrap();
        assert_eq!(answer.role, Role::User);
        assert!(matches!(&answer.content[0],
            ContentBlock::ToolResult(r) if r.tool_use_id == "toolu_1" && r.is_error && r.content.as_text() == FALLBACK_TOOL_RESULT));
    }

    /// Requests a connection error fails until the loop gives up: the number of retries made.
    fn retries_of_a_refused_connection(config: Config) -> (u32, Vec<u32>) {
        let mut state = transition(State::new(config), Event::user_input(vec![ContentBlock::text("go")])).state;
        let (mut request, mut shown_max) = (1, Vec::new());
        loop {
            let error = ModelError::new(None, "connection_error", "nothing is listening at http://127.0.0.1:9");
            let step = transition(state, Event::ModelFailed { error, request });
            let wait = step.effects.iter().find_map(|e| match e {
                Effect::Command(Command::WaitRetry(w)) => Some(w.clone()),
                _ => None,
            });
            let Some(wait) = wait else {
                assert!(step.state.terminal().is_some(), "no retry and no end");
                return (request - 1, shown_max);
            };
            shown_max.push(wait.max_retries);
            state = transition(step.state, Event::RetryReady { attempt: wait.attempt }).state;
            request += 1;
        }
    }

    #[test]
    fn claude_code_stops_after_three_529s_in_a_row_under_its_flag_only() {
        let requests = |config: Config| {
            let mut state = transition(State::new(config), Event::user_input(vec![ContentBlock::text("go")])).state;
            for request in 1.. {
                let error = ModelError::new(Some(529), "overloaded_error", "Overloaded");
                let step = transition(state, Event::ModelFailed { error, request });
                let Some(attempt) = step.effects.iter().find_map(|e| match e {
                    Effect::Command(Command::WaitRetry(w)) => Some(w.attempt),
                    _ => None,
                }) else {
                    return (request, step.state.terminal().map(|t| t.evidence()));
                };
                state = transition(step.state, Event::RetryReady { attempt }).state;
            }
            unreachable!()
        };
        let cc = Config::default().with_model("m").with_profile(crate::profile::ProfileId::ClaudeCode2_1_332);
        let (sent, evidence) = requests(cc.clone());
        assert_eq!(sent, 3);
        assert!(matches!(evidence, Some(crate::Evidence::ModelFailure(f)) if f.why_final == REPEATED_OVERLOADS));
        let mut old = crate::flags::Flags::current();
        old.flip(Flag::ClaudeCodeEndings.number());
        assert_eq!(requests(cc.with_flags(old)).0, 11, "a journal without the flag: ten retries");
        assert_eq!(requests(Config::default().with_model("m")).0, 11, "reloop's own profile retries ten times");
    }

    #[test]
    fn a_local_server_that_is_down_is_retried_twice_under_its_flag_only() {
        let local = Config::default().with_model("m").with_local_model_server(true);
        assert_eq!(retries_of_a_refused_connection(local.clone()), (2, vec![2, 2]));
        let mut old = crate::flags::Flags::current();
        old.flip(Flag::LocalConnectionFailsFast.number());
        assert_eq!(retries_of_a_refused_connection(local.with_flags(old)).0, 10, "a journal without the flag");
        let remote = Config::default().with_model("m");
        assert_eq!(retries_of_a_refused_connection(remote).0, 10, "a remote API keeps its ten retries");
    }

    /// What one overload inside a 200 stream leads to, after `streamed` text blocks arrived:
    /// the retry's attempt, or the run's end (its error text).
    fn after_a_stream_overload(config: Config, streamed: usize) -> Result<u32, String> {
        let mut state = transition(State::new(config), Event::user_input(vec![ContentBlock::text("go")])).state;
        for index in 0..streamed {
            state =
                transition(state, Event::ModelBlock { index, block: ContentBlock::text("部分回答"), request: 1 }).state;
        }
        let error = ModelError::new(None, "overloaded_error", "Overloaded");
        let step = transition(state, Event::ModelFailed { error, request: 1 });
        let wait = step.effects.iter().find_map(|e| match e {
            Effect::Command(Command::WaitRetry(w)) => Some(w.attempt),
            _ => None,
        });
        match (wait, step.state.terminal()) {
            (Some(attempt), None) => Ok(attempt),
            (None, Some(t)) => Err(t.error.clone().unwrap_or_default()),
            other => panic!("neither one retry nor an end: {other:?}"),
        }
    }

    /// The history's roles after an overload that broke the stream after one block.
    fn kept_after_a_stream_overload(config: Config) -> Vec<Role> {
        let state = transition(State::new(config), Event::user_input(vec![ContentBlock::text("go")])).state;
        let block = ContentBlock::text("部分回答");
        let state = transition(state, Event::ModelBlock { index: 0, block, request: 1 }).state;
        let error = ModelError::new(None, "overloaded_error", "Overloaded");
        let step = transition(state, Event::ModelFailed { error, request: 1 });
        assert!(!step.effects.iter().any(|e| matches!(e, Effect::Notice(Notice::Withdraw))), "nothing withdrawn");
        step.state.messages().messages().iter().map(|m| m.role).collect()
    }

    #[test]
    fn under_2_1_197_a_stream_that_broke_after_part_of_the_answer_is_not_retried() {
        use crate::profile::ProfileId;
        let old = Config::default().with_model("m").with_profile(ProfileId::ClaudeCode2_1_197);
        assert_eq!(after_a_stream_overload(old.clone(), 1), Err("API Error: Overloaded".to_string()));
        assert_eq!(
            kept_after_a_stream_overload(old.clone()),
            vec![Role::User, Role::Assistant],
            "the half answer kept"
        );
        // Before any of the answer, the same error is retried (then the whole answer is asked).
        assert_eq!(after_a_stream_overload(old.clone(), 0), Ok(1));
        let mut flags = crate::flags::Flags::current();
        flags.flip(Flag::StreamedErrorFinal.number());
        assert_eq!(after_a_stream_overload(old.with_flags(flags), 1), Ok(1), "a journal without the flag");
        // 2.1.332 resumes instead (tests/cut_stream.rs); without that flag, it retries.
        let mut flags = crate::flags::Flags::current();
        flags.flip(Flag::CutStreamResume.number());
        let new = Config::default().with_model("m").with_profile(ProfileId::ClaudeCode2_1_332).with_flags(flags);
        assert_eq!(after_a_stream_overload(new, 1), Ok(1));
        assert_eq!(after_a_stream_overload(Config::default().with_model("m"), 1), Ok(1));
    }

    /// The wait the loop asks for after one failure with `error`, under `profile`.
    fn first_wait(profile: crate::profile::ProfileId, error: ModelError) -> RetryWait {
        // Claude Code's own delays (flag 15) give up on a `retry-after` over 60 s: crate::backoff.
        let mut flags = crate::flags::Flags::current();
        flags.flip(Flag::ClaudeCodeRetryDelays.number());
        let config = Config::default().with_model("m").with_profile(profile).with_flags(flags);
        let state = transition(State::new(config), Event::user_input(vec![ContentBlock::text("go")])).state;
        let step = transition(state, Event::ModelFailed { error, request: 1 });
        step.effects
            .iter()
            .find_map(|e| match e {
                Effect::Command(Command::WaitRetry(w)) => Some(w.clone()),
                _ => None,
            })
            .expect("a retry")
    }

    #[test]
    fn a_capped_retry_after_waits_the_cap_and_says_what_was_asked() {
        use crate::profile::ProfileId;
        let day = 86_400_000;
        let capped = || {
            let mut error = ModelError::new(Some(429), "rate_limit_error", "slow down")
                .with_retry_after_ms(Some(MAX_RETRY_AFTER_MS));
            error.retry_after_capped_from_ms = Some(day);
            error
        };
        // Every rule for `retry-after` (floor, exact, exact plus jitter) waits six hours, no more.
        for profile in ProfileId::ALL.iter().copied() {
            let wait = first_wait(profile, capped());
            assert_eq!(wait.delay_ms, MAX_RETRY_AFTER_MS, "{profile:?}");
            assert_eq!(wait.retry_after_capped_from_ms, Some(day), "{profile:?}");
        }
        // A journal written before the cap holds the day itself, and replays it unchanged.
        let old = ModelError::new(Some(429), "rate_limit_error", "slow down").with_retry_after_ms(Some(day));
        let wait = first_wait(ProfileId::Reloop, old);
        assert_eq!((wait.delay_ms, wait.retry_after_capped_from_ms), (day, None));
    }
}
