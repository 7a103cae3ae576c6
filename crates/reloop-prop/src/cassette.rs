//! A counterexample as a cassette `reloop run --script` turns into the same session: the
//! model's answers, one a request in request order (a summary request answered with a
//! summary), the results of the calls that ran (`"tool_results"`, which the run answers those
//! tools' calls with instead of running them), and what a run does not reproduce
//! (`"not_reproduced"`: drawn hook verdicts, queued input, aborts, an MCP tool's results).
//! Permission decisions need nothing: the run judges each call by the same settings file.

use std::collections::{BTreeMap, BTreeSet};

use reloop_core::{Command, Effect, Event, StopReason};
use serde_json::{json, Value};

use crate::{HookRunner, ModelOutcome, Setup, ToolResult, World};

/// The cassette of `world` played under `setup`, the hooks' runs asked of `hooks` first.
pub fn cassette(world: &World, setup: &Setup, hooks: &dyn HookRunner) -> Value {
    let played = world.play(setup, hooks);
    let trace = &played.trace;
    let model = &setup.config.model;
    let summaries: BTreeSet<u32> = trace
        .steps
        .iter()
        .flat_map(|s| s.effects.iter())
        .filter_map(|e| match e {
            Effect::Command(Command::Summarize { request, .. }) => Some(*request),
            _ => None,
        })
        .collect();
    let responses: Vec<Value> = world
        .script
        .iter()
        .enumerate()
        .map(|(i, outcome)| {
            let request = i as u32 + 1;
            match summaries.contains(&request) && !fails(outcome) {
                true => message(request, model, vec![text("<summary>what happened</summary>")], "end_turn", 10, 5),
                false => response(request, outcome, model),
            }
        })
        .collect();
    let mut notes = Vec::new();
    let mut results: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    let asked: BTreeMap<&str, &str> = trace
        .steps
        .iter()
        .flat_map(|s| s.effects.iter())
        .filter_map(|e| match e {
            Effect::Command(Command::RunTools { calls }) => Some(calls),
            _ => None,
        })
        .flatten()
        .map(|c| (c.id.as_str(), c.name.as_str()))
        .collect();
    for id in &played.ran {
        // An invalid input never reaches the tool: the run's validation answers it.
        if call_of(world, id).is_some_and(|c| c.result == ToolResult::Invalid) {
            continue;
        }
        let (Some(name), Some((content, is_error))) = (asked.get(id.as_str()), outcome_of(trace, id)) else { continue };
        if name.starts_with("mcp__") {
            notes.push(format!("the result of {name} ({id}): a run calls its server"));
            continue;
        }
        results.entry(name.to_string()).or_default().push(json!({"content": content, "is_error": is_error}));
    }
    notes.extend(unreproduced(trace));
    let mut cassette = json!({ "responses": responses });
    if !results.is_empty() {
        cassette["tool_results"] = json!(results);
    }
    if !notes.is_empty() {
        cassette["not_reproduced"] = json!(notes);
    }
    cassette
}

/// What a `reloop run` of the cassette cannot do as the simulated session did.
fn unreproduced(trace: &reloop_core::testkit::Trace) -> Vec<String> {
    let mut notes = Vec::new();
    let mut hooks: Vec<String> = Vec::new();
    for (i, step) in trace.steps.iter().enumerate() {
        match &step.event {
            Event::HookDone { runs, .. } => {
                for run in runs {
                    if !hooks.contains(&run.command) {
                        hooks.push(run.command.clone());
                    }
                }
            }
            Event::QueuedInput { .. } => {
                notes.push(format!("the message queued at step {}: a run from a cassette queues none", i + 1))
            }
            Event::Abort => notes.push(format!("the abort at step {}: a run from a cassette is not aborted", i + 1)),
            _ => {}
        }
    }
    if !hooks.is_empty() {
        notes.insert(
            0,
            format!(
                "the verdicts of the hooks {}: a run runs the settings file's hooks, which may decide otherwise",
                hooks.join(", ")
            ),
        );
    }
    notes
}

/// The call of `world` with this `tool_use` id (`toolu_{request}_{index}`).
fn call_of<'w>(world: &'w World, id: &str) -> Option<&'w crate::Call> {
    let (request, index) = id.strip_prefix("toolu_")?.split_once('_')?;
    let (request, index): (usize, usize) = (request.parse().ok()?, index.parse().ok()?);
    match world.script.get(request.checked_sub(1)?)? {
        ModelOutcome::Calls { calls, .. } => calls.get(index),
        _ => None,
    }
}

/// The result the session gave the call `id`.
fn outcome_of(trace: &reloop_core::testkit::Trace, id: &str) -> Option<(String, bool)> {
    trace.steps.iter().find_map(|s| match &s.event {
        Event::ToolDone(o) if o.tool_use_id == id => Some((o.content.as_text(), o.is_error)),
        _ => None,
    })
}

/// The outcomes a summary request fails with in the simulation.
fn fails(outcome: &ModelOutcome) -> bool {
    matches!(
        outcome,
        ModelOutcome::Error
            | ModelOutcome::Fatal
            | ModelOutcome::PromptTooLong
            | ModelOutcome::RateLimited { .. }
            | ModelOutcome::StreamCut
    )
}

fn message(request: u32, model: &str, content: Vec<Value>, stop: &str, input: u64, output: u64) -> Value {
    json!({"message": {
        "id": format!("msg_prop_{request}"), "type": "message", "role": "assistant", "model": model,
        "content": content, "stop_reason": stop,
        "usage": {"input_tokens": input, "output_tokens": output},
    }})
}

fn error(status: u16, error_type: &str, message: &str, headers: Value) -> Value {
    json!({"error": {
        "status": status, "headers": headers,
        "body": {"type": "error", "error": {"type": error_type, "message": message}},
    }})
}

fn text(t: &str) -> Value {
    json!({"type": "text", "text": t})
}

fn tool_use(request: u32, i: usize, name: &str, input: &Value) -> Value {
    json!({"type": "tool_use", "id": format!("toolu_{request}_{i}"), "name": name, "input": input})
}

fn response(request: u32, outcome: &ModelOutcome, model: &str) -> Value {
    match outcome {
        ModelOutcome::Text => message(request, model, vec![text("done")], "end_turn", 10, 5),
        ModelOutcome::Tools(n) => {
            let calls = (0..*n).map(|i| tool_use(request, i, "Read", &json!({"file_path": "/x"}))).collect();
            message(request, model, calls, "tool_use", 10, 5)
        }
        ModelOutcome::Error => error(500, "api_error", "Internal server error", json!({})),
        ModelOutcome::Overloaded => error(529, "overloaded_error", "Overloaded", json!({})),
        ModelOutcome::Fatal => error(400, "invalid_request_error", "bad request", json!({})),
        ModelOutcome::MaxTokens => message(request, model, vec![text("half a thou")], "max_tokens", 10, 5),
        ModelOutcome::MissingToolCall => message(request, model, vec![text("let me call")], "tool_use", 10, 5),
        ModelOutcome::TextTokens(n) => message(request, model, vec![text("work")], "end_turn", 10, *n),
        ModelOutcome::Large { input_tokens, tools } => {
            let content = if *tools == 0 {
                vec![text("big")]
            } else {
                (0..*tools).map(|i| tool_use(request, i, "Read", &json!({"file_path": "/x"}))).collect()
            };
            let stop = if *tools == 0 { "end_turn" } else { "tool_use" };
            message(request, model, content, stop, *input_tokens, 50)
        }
        ModelOutcome::PromptTooLong => {
            error(400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum", json!({}))
        }
        ModelOutcome::RateLimited { retry_after_ms } => {
            let headers = match retry_after_ms {
                Some(ms) => json!({"retry-after-ms": ms.to_string()}),
                None => json!({}),
            };
            error(429, "rate_limit_error", "Rate limited", headers)
        }
        ModelOutcome::StreamCut => json!({"sse": format!(
            "event: message_start\ndata: {{\"type\":\"message_start\",\"message\":{{\"id\":\"msg_prop_{request}\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"{model}\",\"content\":[],\"stop_reason\":null,\"usage\":{{\"input_tokens\":10,\"output_tokens\":1}}}}}}\n\n\
             event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{{\"type\":\"text\",\"text\":\"\"}}}}\n\n\
             event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"text_delta\",\"text\":\"half a sen\"}}}}\n\n"
        )}),
        ModelOutcome::Stopped(stop) => {
            let reason = match stop {
                StopReason::Other(s) => s.clone(),
                other => other.as_str().to_string(),
            };
            message(request, model, vec![text("stopped")], &reason, 10, 5)
        }
        ModelOutcome::Calls { calls, input_tokens } => {
            if calls.is_empty() {
                return message(request, model, vec![text("nothing to call")], "end_turn", *input_tokens, 20);
            }
            let content = calls.iter().enumerate().map(|(i, c)| tool_use(request, i, &c.name, &c.input)).collect();
            message(request, model, content, "tool_use", *input_tokens, 20)
        }
    }
}
