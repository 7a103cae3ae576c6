//! The model requests of a live run: the main request of each turn and a compaction's summary
//! request, assembled from the state and the run's config and streamed back as events.

use std::time::Instant;

use futures::StreamExt;
use reloop_core::{ContentBlock, Event, ModelCall, ModelError, State};
use reloop_model::{ModelRequest, StreamEvent};

use super::Runner;

impl Runner {
    /// The summary request of a compaction, to the same model: shaped as the profile says (the
    /// main requests' tools too when it is shaped like them), its answer read as text only. Once
    /// it is in, the files `give_back` names are read again ([`crate::given_back`]).
    pub(super) fn summarize(
        &mut self,
        request: u32,
        summarize: usize,
        shape: reloop_core::profile::SummaryShape,
        attempt: u32,
        give_back: &[String],
        state: &State,
    ) {
        let ctx = state.context();
        let rule = ctx.config().compact_rule();
        let latest = ctx.config().flag(reloop_core::Flag::ClaudeCodeCompactionEnds);
        let history = reloop_core::compact::shape::summary_request(state.messages(), summarize, shape, &rule, latest);
        let model =
            if ctx.current_model().is_empty() { self.run.model.clone() } else { ctx.current_model().to_string() };
        let mut model_request =
            ModelRequest::new(model, ctx.max_tokens(), history, request).with_system(self.run.system_blocks());
        if rule.in_place {
            let style = crate::config::wire_style(ctx.config().rules(), &model_request.model, true);
            // Claude Code caches the conversation up to the message before its instruction.
            let thinking = self.thinking(ctx.config().rules(), &model_request.model, model_request.max_tokens);
            // Each shape is sent twice at most, the first time with 2.1.332's fallback-credit beta.
            model_request = model_request
                .with_tools(self.tool_specs.clone())
                .with_style(style)
                .with_cache_from_end(1)
                .with_thinking(reloop_core::profile::shed_thinking(thinking, state.shed()))
                .with_fallback_credit(attempt.is_multiple_of(2));
        }
        let model_request = model_request.with_shed(state.shed()).with_tool_search(!self.run.tool_search_off);
        let mut stream = self.provider.stream(model_request);
        let inbox = self.inbox.clone();
        let reread = (!give_back.is_empty()).then(|| (self.tools_in_flight.env().clone(), give_back.to_vec()));
        self.model_task = Some(tokio::spawn(async move {
            let mut summary = String::new();
            while let Some(item) = stream.next().await {
                let event = match item {
                    StreamEvent::Block { block: ContentBlock::Text(t), .. } => {
                        summary.push_str(&t.text);
                        continue;
                    }
                    StreamEvent::Done { usage, .. } => {
                        let given_back = match reread {
                            Some((env, inputs)) => Some(
                                tokio::task::spawn_blocking(move || crate::given_back::read_again(&env, &inputs))
                                    .await
                                    .unwrap_or_default(),
                            ),
                            None => None,
                        };
                        Event::CompactDone { summary, usage, request, given_back }
                    }
                    StreamEvent::Failed(error) => Event::CompactFailed { error, request },
                    _ => continue,
                };
                let _ = inbox.send(event);
                return;
            }
            let error = ModelError::new(None, "invalid_stream", "the provider's stream ended without a result");
            let _ = inbox.send(Event::CompactFailed { error, request });
        }));
    }

    /// The `thinking` a request to `model` asks for ([`crate::config::thinking`]).
    fn thinking(
        &self,
        rules: &reloop_core::profile::Profile,
        model: &str,
        max_tokens: u32,
    ) -> Option<serde_json::Value> {
        let child = self.run.agent.as_ref().is_some_and(|agent| !agent.background);
        crate::config::thinking(rules, model, max_tokens, self.run.thinking, self.run.thinking_switches, child)
    }

    pub(super) fn call_model(&mut self, call: &ModelCall, state: &State) {
        // Whatever streaming started for an abandoned attempt is forgotten.
        self.tools_in_flight.new_response();
        let system = self.run.system_blocks();
        let model = if call.model.is_empty() { self.run.model.clone() } else { call.model.clone() };
        let max_tokens = if call.max_tokens == 0 { self.run.max_output_tokens } else { call.max_tokens };
        let rules = state.context().config().rules();
        let style = crate::config::wire_style(rules, &model, call.stream);
        let thinking = reloop_core::profile::shed_thinking(self.thinking(rules, &model, max_tokens), call.shed);
        let request =
            ModelRequest::new(model.clone(), max_tokens, reloop_core::sent_messages(state, &model), call.request)
                .with_stream(call.stream)
                .with_style(style)
                .with_system(system)
                .with_tools(self.tool_specs.clone())
                .with_thinking(thinking)
                .with_shed(call.shed)
                .with_tool_search(!self.run.tool_search_off);
        // What a refusal's guesses (flag 41) read of this request, worked out only if refused.
        let display = request.thinking.as_ref().is_some_and(|t| t.get("display").is_some());
        let guessing = request.betas.map(|rule| (rule, model, display, call.shed));
        let mut stream = self.provider.stream(request);
        let inbox = self.inbox.clone();
        let request = call.request;
        let api_ms = self.api_ms.clone();
        let js_inputs = state.context().config().rules().wire.js_tool_inputs;
        let held = Held {
            js_inputs,
            defaults: js_inputs && state.context().config().flag(reloop_core::Flag::ToolInputDefaults),
        };
        self.model_task = Some(tokio::spawn(async move {
            let asked = Instant::now();
            let waited = move || {
                let ms = u64::try_from(asked.elapsed().as_millis()).unwrap_or(u64::MAX);
                api_ms.fetch_add(ms, std::sync::atomic::Ordering::Relaxed);
            };
            while let Some(item) = stream.next().await {
                let (event, last) = match item {
                    StreamEvent::Started { id, usage } => (started(id, usage, request), false),
                    StreamEvent::TextDelta { index, text } => (Event::TextDelta { index, text, request }, false),
                    StreamEvent::Block { index, block } => {
                        (Event::ModelBlock { index, block: as_held(block, held), request }, false)
                    }
                    StreamEvent::Done { id, model, stop_reason, usage } => {
                        (Event::ModelDone { id, model, stop_reason, usage, request }, true)
                    }
                    // Only a refusal the guesses answer carries them (so the journal of any
                    // other failure reads as before).
                    StreamEvent::Failed(error) if matches!(error.status, Some(400 | 422)) => {
                        let sheddable =
                            guessing.as_ref().map_or_else(Default::default, |(rule, model, display, shed)| {
                                reloop_core::profile::sheddable(*rule, model, *display, *shed)
                            });
                        (Event::ModelFailed { error: error.with_sheddable(sheddable), request }, true)
                    }
                    StreamEvent::Failed(error) => (Event::ModelFailed { error, request }, true),
                    _ => continue,
                };
                if last {
                    waited();
                }
                if inbox.send(event).is_err() || last {
                    return;
                }
            }
            waited();
            let error = ModelError::new(None, "invalid_stream", "the provider's stream ended without a result");
            let _ = inbox.send(Event::ModelFailed { error, request });
        }));
    }
}

/// The most of a response's head kept: an id or a `usage` object bigger than this is a server's
/// oddity, shown as absent rather than journaled.
const MAX_HEAD_BYTES: usize = 4096;

/// The response's head as journaled, bounded ([`MAX_HEAD_BYTES`]).
fn started(id: Option<String>, usage: Option<serde_json::Value>, request: u32) -> Event {
    let id = id.filter(|id| id.len() <= MAX_HEAD_BYTES);
    let usage = usage.filter(|u| u.is_object() && u.to_string().len() <= MAX_HEAD_BYTES);
    Event::ModelStarted { id, usage, request }
}

/// How the profile's version holds a tool call's input once parsed.
#[derive(Debug, Clone, Copy)]
struct Held {
    /// As JavaScript parses it (the profile's `js_tool_inputs`).
    js_inputs: bool,
    /// With the defaults Claude Code fills in (flag 25, [`crate::input_defaults`]).
    defaults: bool,
}

/// A tool call's input as the profile's version holds it once parsed (Claude Code: as
/// JavaScript parses it). Done here, before the event is journaled, so the journal, the
/// history, the tools and the stream all see the one value, and a replay needs no rule.
fn as_held(block: ContentBlock, held: Held) -> ContentBlock {
    match block {
        // An input that never parsed is kept as its raw string.
        ContentBlock::ToolUse(mut call) if held.js_inputs && !call.input.is_string() => {
            // The block was just assembled from the stream: nothing shares it yet.
            let call_mut = std::sync::Arc::make_mut(&mut call);
            let input = std::mem::take(&mut call_mut.input);
            let input = crate::js_json::tool_input(&call_mut.name, input);
            call_mut.input =
                if held.defaults { crate::input_defaults::with_defaults(&call_mut.name, input) } else { input };
            ContentBlock::ToolUse(call)
        }
        other => other,
    }
}
