//! The exact request a session sent, rebuilt from its journal (`reloop show --turn N`).
//!
//! The journal records only what a request was (turn, number, message count, model, limit), not
//! its bytes: the messages are the state's history at that step, the system prompt and tools are
//! in the session header. Rebuilding them here, with the provider's own body builder, shows what
//! went over the wire without having stored it.

use reloop_core::{Command, Effect, ModelCall, State};
use reloop_journal::{SessionHeader, StepRecord};
use reloop_model::{ModelRequest, SystemBlock};
use reloop_tools::ToolRegistry;
use serde::Serialize;
use serde_json::Value;

use reloop_core::Fold;
use reloop_driver::{wire_style, RunConfig, DEFAULT_SYSTEM_PROMPT};

/// Which request to rebuild.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RequestAt {
    /// The first request of this turn (turns count from 1 in each query).
    Turn(u32),
    /// The request with this 1-based number.
    Number(u32),
}

/// A rebuilt request.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct RebuiltRequest {
    /// The step whose `call_model` effect sent it.
    pub seq: u64,
    /// The turn of its query it was sent in.
    pub turn: u32,
    /// Its 1-based number in the session.
    pub request: u32,
    /// `anthropic` or `openai`: whose wire format `body` is in (scripted sessions are shown as
    /// Anthropic requests, the format their cassettes answer).
    pub format: &'static str,
    /// The request's JSON body, in `format`'s wire shape.
    pub body: Value,
}

/// Rebuilds the request, or `None` when the session sent no such request.
pub fn request_at(header: &SessionHeader, steps: &[StepRecord], at: RequestAt) -> Option<RebuiltRequest> {
    let mut finder = RequestFinder::new(header, at);
    steps.iter().find_map(|record| finder.step(record))
}

/// [`request_at`] a step at a time, so `show --turn` reads a session of any length in the
/// memory of its state: feed the steps in order until one gives the request.
pub struct RequestFinder<'a> {
    header: &'a SessionHeader,
    run: Option<RunConfig>,
    at: RequestAt,
    /// Dropped once the request is found: a later query's turn of the same number is not it.
    fold: Option<Fold>,
}

impl<'a> RequestFinder<'a> {
    /// A search for the request `at` of the session `header` describes.
    pub fn new(header: &'a SessionHeader, at: RequestAt) -> Self {
        let run = serde_json::from_value(header.run_config.clone()).ok();
        RequestFinder { header, run, at, fold: Some(Fold::new(&header.core_config)) }
    }

    /// The request, if the step `record` (the next, in order) sent it.
    pub fn step(&mut self, record: &StepRecord) -> Option<RebuiltRequest> {
        let (header, run, at) = (self.header, self.run.as_ref(), self.at);
        let found = self.fold.as_mut()?.push(record.seq, record.event.clone(), |step| {
            let call = step.effects.iter().find_map(|e| match e {
                Effect::Command(Command::CallModel(c)) if matches_at(c, at) => Some(c.clone()),
                _ => None,
            })?;
            let provider = header.run_config.get("provider").and_then(Value::as_str).unwrap_or_default();
            let request = build(run, &header.core_config.model, &call, &step.state);
            let (format, body) = match provider {
                "openai" => ("openai", reloop_model::openai_request_body(&request)),
                _ => ("anthropic", reloop_model::request_body(&request)),
            };
            Some(RebuiltRequest { seq: record.seq, turn: call.turn, request: call.request, format, body })
        })??;
        self.fold = None;
        Some(found)
    }
}

fn matches_at(call: &ModelCall, at: RequestAt) -> bool {
    match at {
        RequestAt::Turn(turn) => call.turn == turn,
        RequestAt::Number(n) => call.request == n,
    }
}

/// The request as the driver's run loop assembles it: the same system prompt, system context,
/// tools (the builtin registry's, in its order, limited to those the session offered, then the
/// recorded others), model,
/// limit and thinking.
fn build(run: Option<&RunConfig>, core_model: &str, call: &ModelCall, state: &State) -> ModelRequest {
    let system = run.map_or_else(|| vec![SystemBlock::cached(DEFAULT_SYSTEM_PROMPT)], RunConfig::system_blocks);
    let model = match (call.model.is_empty(), run) {
        (false, _) => call.model.clone(),
        (true, Some(r)) => r.model.clone(),
        (true, None) => core_model.to_string(),
    };
    let max_tokens = match (call.max_tokens, run) {
        (0, Some(r)) => r.max_output_tokens,
        (n, _) => n,
    };
    let offered: Vec<String> = run.map(|r| r.tools.clone()).unwrap_or_default();
    let mut tools: Vec<_> = ToolRegistry::builtin().specs().into_iter().filter(|s| offered.contains(&s.name)).collect();
    // Tools that are not built in (MCP servers') were offered after them, as recorded.
    tools.extend(run.iter().flat_map(|r| r.tool_specs.iter().filter(|s| offered.contains(&s.name)).cloned()));
    let rules = state.context().config().rules();
    let style = wire_style(rules, &model, call.stream);
    let switches = run.map(|r| r.thinking_switches).unwrap_or_default();
    let child = run.is_some_and(|r| r.agent.is_some());
    let thinking = reloop_driver::thinking(rules, &model, max_tokens, run.and_then(|r| r.thinking), switches, child);
    let thinking = reloop_core::profile::shed_thinking(thinking, call.shed);
    ModelRequest::new(model.clone(), max_tokens, reloop_core::sent_messages(state, &model), call.request)
        .with_stream(call.stream)
        .with_style(style)
        .with_system(system)
        .with_tools(tools)
        .with_thinking(thinking)
        .with_shed(call.shed)
        .with_tool_search(!run.is_some_and(|r| r.tool_search_off))
}
