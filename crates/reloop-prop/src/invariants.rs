//! The invariants every case must keep, whatever the user's properties say. Most are the
//! testkit's own ([`Trace::check`]); the rest need the configuration's limits.

use reloop_core::testkit::Trace;
use reloop_core::{Command, Effect, Event};

/// The built-in invariants, by the name a report gives them.
pub const NAMES: [&str; 9] = [
    "terminates",
    "tool_use_answered_once",
    "no_request_after_terminal",
    "stop_hook_blocks_within_cap",
    "retries_within_limit",
    "budget_passed_by_at_most_one_response",
    "compaction_never_loops",
    "replay_identical",
    "loop_guards",
];

/// A broken invariant: its name and what happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken {
    /// One of [`NAMES`].
    pub name: &'static str,
    /// What the case did.
    pub detail: String,
}

/// The first invariant `trace` breaks, if any.
pub fn check(trace: &Trace) -> Result<(), Broken> {
    if let Err(violation) = trace.check() {
        let detail = violation.0;
        let name = if detail.contains("did not stop") || detail.contains("without a terminal") {
            "terminates"
        } else if detail.contains("followed the terminal") {
            "no_request_after_terminal"
        } else if detail.contains("stop-hook") {
            "stop_hook_blocks_within_cap"
        } else if detail.contains("tool_use") || detail.contains("tool_result") {
            "tool_use_answered_once"
        } else if detail.contains("replay") {
            "replay_identical"
        } else {
            "loop_guards"
        };
        return Err(Broken { name, detail });
    }
    retries(trace)?;
    budget(trace)?;
    compaction(trace)
}

/// Retries of one request never exceed `max_retries`: the waits between two answered
/// responses are counted.
fn retries(trace: &Trace) -> Result<(), Broken> {
    let limit = trace.config.max_retries;
    let mut in_a_row = 0u32;
    for step in &trace.steps {
        if matches!(step.event, Event::ModelDone { .. }) {
            in_a_row = 0;
        }
        for effect in &step.effects {
            if let Effect::Command(Command::WaitRetry(wait)) = effect {
                in_a_row += 1;
                if in_a_row > limit {
                    return Err(Broken {
                        name: "retries_within_limit",
                        detail: format!("retry {in_a_row} (attempt {}) with max_retries {limit}", wait.attempt),
                    });
                }
            }
        }
    }
    Ok(())
}

/// No model request is made once the cost has reached `max_budget_usd`: the budget is passed
/// by at most the response that crossed it.
fn budget(trace: &Trace) -> Result<(), Broken> {
    let Some(limit) = trace.config.max_budget_usd else { return Ok(()) };
    let mut spent = 0.0;
    for step in &trace.steps {
        if let Event::ModelDone { model, usage, .. } = &step.event {
            spent += trace.config.cost(model.as_deref().unwrap_or(&trace.config.model), usage);
        }
        if spent >= limit && step.effects.iter().any(|e| matches!(e, Effect::Command(Command::CallModel(_)))) {
            return Err(Broken {
                name: "budget_passed_by_at_most_one_response",
                detail: format!("a request after ${spent:.4} was spent with max_budget_usd {limit}"),
            });
        }
    }
    Ok(())
}

/// Compaction never loops: between two model responses, at most three summary requests (the
/// automatic one, its retry, and a reactive one).
fn compaction(trace: &Trace) -> Result<(), Broken> {
    let mut in_a_row = 0u32;
    for step in &trace.steps {
        if matches!(step.event, Event::ModelDone { .. }) {
            in_a_row = 0;
        }
        in_a_row +=
            step.effects.iter().filter(|e| matches!(e, Effect::Command(Command::Summarize { .. }))).count() as u32;
        if in_a_row > 3 {
            return Err(Broken {
                name: "compaction_never_loops",
                detail: format!("{in_a_row} summary requests without a model response between them"),
            });
        }
    }
    Ok(())
}
