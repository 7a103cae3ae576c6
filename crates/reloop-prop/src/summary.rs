//! What a case's session did, in the terms properties are written in.

use std::collections::BTreeMap;

use reloop_core::testkit::Trace;
use reloop_core::{Command, ContinueReason, Effect, Event, Notice};
use serde::Serialize;

/// The summary of one simulated session: the variables a property's expression reads.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// Model requests (summary requests not counted).
    pub requests: u64,
    /// Turns: 1 + the `next_turn` continues.
    pub turns: u64,
    /// How the run ended (`completed`, `max_turns`, ...), or `""` when it did not.
    pub terminal_reason: String,
    /// What the run cost, in US dollars.
    pub cost_usd: f64,
    /// Input tokens over every response.
    pub input_tokens: u64,
    /// Output tokens over every response.
    pub output_tokens: u64,
    /// Stop-hook blocks that continued the loop.
    pub stop_hook_blocks: u64,
    /// Retries of failed requests.
    pub retries: u64,
    /// Compactions done (automatic or reactive).
    pub compactions: u64,
    /// Tool calls asked for, by tool name.
    pub tool_calls: BTreeMap<String, u64>,
    /// Tool calls refused (rules, the user, hooks).
    pub denials: u64,
    /// Tool calls that failed otherwise (an error, invalid input, a blocking PreToolUse hook).
    pub tool_errors: u64,
    /// Output-token recoveries and escalations.
    pub recoveries: u64,
    /// Events fed to the core.
    pub steps: u64,
}

impl Summary {
    /// The summary of `trace`.
    pub fn of(trace: &Trace) -> Summary {
        let mut s = Summary {
            requests: 0,
            turns: u64::from(trace.final_state.context().turn_count()),
            terminal_reason: trace.terminal().map(|t| t.as_str().to_string()).unwrap_or_default(),
            cost_usd: trace.final_state.context().cost_usd(),
            input_tokens: trace.final_state.context().usage().input_tokens,
            output_tokens: trace.final_state.context().usage().output_tokens,
            stop_hook_blocks: 0,
            retries: 0,
            compactions: 0,
            tool_calls: BTreeMap::new(),
            denials: 0,
            tool_errors: 0,
            recoveries: 0,
            steps: trace.steps.len() as u64,
        };
        for step in &trace.steps {
            if let Event::ToolDone(outcome) = &step.event {
                s.denials += u64::from(outcome.denied);
                s.tool_errors += u64::from(outcome.is_error && !outcome.denied);
            }
            match step.reason.as_ref().and_then(|r| r.continue_reason()) {
                Some(ContinueReason::StopHookBlocking) => s.stop_hook_blocks += 1,
                Some(ContinueReason::MaxOutputTokensRecovery | ContinueReason::MaxOutputTokensEscalate) => {
                    s.recoveries += 1
                }
                _ => {}
            }
            for effect in &step.effects {
                match effect {
                    Effect::Command(Command::CallModel(_)) => s.requests += 1,
                    Effect::Command(Command::WaitRetry(_)) => s.retries += 1,
                    Effect::Command(Command::RunTools { calls }) => {
                        for call in calls {
                            *s.tool_calls.entry(call.name.clone()).or_default() += 1;
                        }
                    }
                    Effect::Notice(Notice::CompactBoundary { .. }) => s.compactions += 1,
                    _ => {}
                }
            }
        }
        s
    }
}
