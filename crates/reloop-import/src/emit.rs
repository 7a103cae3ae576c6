//! Items to events, with the real core in the loop: every event is applied to
//! [`reloop_core::transition`] as it is chosen, so the choice can follow the phase the core is
//! actually in, and an import can only produce events the core accepts.

use std::collections::BTreeMap;

use reloop_core::{Config, ContentBlock, Event, Fold, State, ToolOutcome, ToolResultContent};

use crate::items::{is_cancellation, Item, PromptKind, Response};
use crate::ImportSummary;

/// The `tool_result` text given to calls the transcript never answered when the conversation
/// went on regardless (the core's own text for interrupted calls).
const UNANSWERED: &str = reloop_core::INTERRUPTED_TOOL_RESULT;

pub(crate) struct Emitter {
    /// The events so far, folded through the core: the phase the next line meets.
    fold: Fold,
    pub events: Vec<Event>,
    pub at_ms: Vec<u64>,
    now: u64,
    pending_prompt: Vec<ContentBlock>,
    /// When the pending prompt was typed: its first line's time.
    pending_at: Option<u64>,
    hidden: Vec<(ContentBlock, &'static str)>,
    hidden_at: Option<u64>,
    pub summary: ImportSummary,
    /// Events no line of the transcript held, by their 1-based step number, with what the
    /// import did: `why` marks them.
    pub inferred: Vec<(u64, String)>,
}

impl Emitter {
    pub fn new(config: Config) -> Self {
        Emitter {
            fold: Fold::new(&config),
            events: Vec::new(),
            at_ms: Vec::new(),
            now: 0,
            pending_prompt: Vec::new(),
            pending_at: None,
            hidden: Vec::new(),
            hidden_at: None,
            summary: ImportSummary::default(),
            inferred: Vec::new(),
        }
    }

    pub fn phase(&self) -> &'static str {
        self.fold.state().map_or("done", State::phase)
    }

    fn apply(&mut self, event: Event, at_ms: Option<u64>) {
        if let Some(t) = at_ms {
            self.now = t;
        }
        // Each outcome names the request in flight, as the live driver's do.
        let event = match self.fold.state() {
            Some(state) => event.correlated(state.context().requests()),
            None => event,
        };
        let seq = self.events.len() as u64 + 1;
        self.fold.push(seq, event.clone(), |_| ());
        self.events.push(event);
        self.at_ms.push(self.now);
    }

    /// Marks the event just applied as the import's inference.
    fn infer(&mut self, what: impl Into<String>) {
        self.inferred.push((self.events.len() as u64, what.into()));
    }

    fn skip(&mut self, kind: &str) {
        *self.summary.skipped.entry(kind.to_string()).or_default() += 1;
    }

    /// The calls of the batch in flight and whether each is answered, in tool_use order.
    fn open_calls(&self) -> Vec<(String, bool)> {
        match self.fold.state().and_then(State::tools) {
            Some(tools) => {
                tools.calls().iter().zip(tools.outcomes()).map(|(c, o)| (c.id.clone(), o.is_some())).collect()
            }
            None => Vec::new(),
        }
    }

    /// Stops whatever runs so that a new prompt can start a query: the transcript went on
    /// without the response or results the core waits for.
    fn stop_for_prompt(&mut self, at_ms: Option<u64>) {
        if !matches!(self.phase(), "idle" | "done") {
            let phase = self.phase();
            self.apply(Event::Abort, at_ms);
            self.summary.synthesized_aborts += 1;
            self.infer(format!("the transcript goes on to a new prompt while {phase}; the import aborts the query"));
        }
    }

    fn flush_prompt(&mut self, at_ms: Option<u64>) {
        if self.pending_prompt.is_empty() {
            return;
        }
        for (_, kind) in std::mem::take(&mut self.hidden) {
            self.skip(kind);
        }
        let at_ms = self.pending_at.take().or(at_ms);
        self.stop_for_prompt(at_ms);
        let content = std::mem::take(&mut self.pending_prompt);
        self.apply(Event::UserInput { content }, at_ms);
        self.summary.prompts += 1;
    }

    /// Brings the core to `awaiting_model` for a response or an API error; false when the
    /// transcript shows a response that answers nothing the core could have asked.
    fn await_model(&mut self, at_ms: Option<u64>) -> bool {
        match self.phase() {
            "awaiting_model" => true,
            "running_tools" => {
                for (id, answered) in self.open_calls() {
                    if !answered {
                        let outcome = ToolOutcome {
                            tool_use_id: id,
                            content: ToolResultContent::Text(UNANSWERED.to_string()),
                            is_error: true,
                            denied: false,
                            request: 0,
                            agent_usage: None,
                        };
                        self.apply(Event::ToolDone(outcome.clone()), at_ms);
                        self.summary.synthesized_tool_results += 1;
                        self.infer(format!(
                            "the transcript holds no result for {}; the import answers it \"{UNANSWERED}\"",
                            outcome.tool_use_id
                        ));
                    }
                }
                self.phase() == "awaiting_model"
            }
            "idle" | "done" if !self.hidden.is_empty() => {
                let content = std::mem::take(&mut self.hidden).into_iter().map(|(b, _)| b).collect();
                let at = self.hidden_at.take().or(at_ms);
                self.apply(Event::UserInput { content }, at);
                self.summary.meta_prompts += 1;
                self.infer("a response answers meta or command text: the import takes that text as the prompt");
                true
            }
            _ => false,
        }
    }

    fn response(&mut self, response: Response) {
        let first_at = response.blocks.first().and_then(|(_, t)| *t).or(response.last_at_ms);
        if !self.await_model(first_at) {
            self.skip("orphan_response");
            return;
        }
        for (index, (block, at_ms)) in response.blocks.into_iter().enumerate() {
            self.apply(Event::ModelBlock { index, block, request: 0 }, at_ms);
            self.summary.model_blocks += 1;
        }
        let done = Event::ModelDone {
            id: response.id,
            model: response.model,
            stop_reason: response.stop_reason,
            usage: response.usage,
            request: 0,
        };
        self.apply(done, response.last_at_ms);
        self.summary.responses += 1;
        self.drop_hidden();
    }

    fn drop_hidden(&mut self) {
        for (_, kind) in std::mem::take(&mut self.hidden) {
            self.skip(kind);
        }
    }

    /// Files one batch of results under the calls in flight, in tool_use order. When an
    /// interrupt-for-tool-use follows, the results that interrupt produced are left to the
    /// core's abort, and at least one call stays open so the abort lands while tools run.
    fn tool_results(&mut self, results: Vec<ToolOutcome>, at_ms: Option<u64>, interrupt_follows: bool) {
        let open = self.open_calls();
        let mut taken: Vec<(usize, ToolOutcome)> = Vec::new();
        for outcome in results {
            match open.iter().position(|(id, _)| *id == outcome.tool_use_id) {
                Some(i) if !open[i].1 && !taken.iter().any(|(j, _)| *j == i) => taken.push((i, outcome)),
                _ => self.skip("orphan_tool_result"),
            }
        }
        taken.sort_by_key(|(i, _)| *i);
        if interrupt_follows && self.phase() == "running_tools" {
            let before = taken.len();
            taken.retain(|(_, o)| !is_cancellation(o));
            let unanswered = open.iter().filter(|(_, answered)| !answered).count();
            if !taken.is_empty() && taken.len() == unanswered {
                taken.pop();
            }
            self.summary.withheld_tool_results += before - taken.len();
        }
        for (_, outcome) in taken {
            self.apply(Event::ToolDone(outcome), at_ms);
            self.summary.tool_results += 1;
        }
    }

    /// Emits the events for all items, then closes a batch of calls the transcript left open.
    pub fn run(&mut self, items: Vec<Item>) {
        let mut items: Vec<Option<Item>> = items.into_iter().map(Some).collect();
        for i in 0..items.len() {
            let Some(item) = items[i].take() else { continue };
            match item {
                Item::Prompt { content, kind, at_ms } => {
                    match kind {
                        PromptKind::Prompt => {}
                        PromptKind::StopHookFeedback => self.summary.stop_hook_feedback += 1,
                        PromptKind::CompactSummary => self.summary.compact_summaries += 1,
                    }
                    if self.pending_prompt.is_empty() {
                        self.pending_at = at_ms;
                    }
                    // Consecutive user texts reach the model as one message, as Claude Code
                    // merges them; they become one prompt.
                    self.pending_prompt.extend(content);
                }
                Item::Hidden { content, kind, at_ms } => {
                    if self.pending_prompt.is_empty() {
                        if self.hidden.is_empty() {
                            self.hidden_at = at_ms;
                        }
                        self.hidden.extend(content.into_iter().map(|b| (b, kind)));
                    } else {
                        self.skip(kind);
                    }
                }
                Item::CompactBoundary => self.summary.compactions += 1,
                Item::Response(response) => {
                    self.flush_prompt(response.blocks.first().and_then(|(_, t)| *t));
                    self.response(response);
                }
                Item::ToolResults { mut results, at_ms } => {
                    self.flush_prompt(at_ms);
                    self.drop_hidden();
                    // Results of one batch may be spread over several lines, with meta lines
                    // between them: take them together.
                    let mut j = i + 1;
                    let mut interrupt_follows = false;
                    while j < items.len() {
                        match &items[j] {
                            Some(Item::ToolResults { .. }) => {
                                if let Some(Item::ToolResults { results: more, .. }) = items[j].take() {
                                    results.extend(more);
                                }
                            }
                            Some(Item::Hidden { .. } | Item::CompactBoundary) | None => {}
                            Some(Item::Interrupt { for_tool_use, .. }) => {
                                interrupt_follows = *for_tool_use;
                                break;
                            }
                            Some(_) => break,
                        }
                        j += 1;
                    }
                    self.tool_results(results, at_ms, interrupt_follows);
                }
                Item::Interrupt { at_ms, .. } => {
                    self.flush_prompt(at_ms);
                    self.drop_hidden();
                    if matches!(self.phase(), "idle" | "done") {
                        self.skip("interrupt_after_stop");
                    } else {
                        self.apply(Event::Abort, at_ms);
                        self.summary.interrupts += 1;
                    }
                }
                Item::ApiError { error, at_ms } => {
                    self.flush_prompt(at_ms);
                    if self.await_model(at_ms) {
                        self.apply(Event::ModelFailed { error, request: 0 }, at_ms);
                        self.summary.api_errors += 1;
                        self.drop_hidden();
                    } else {
                        self.skip("orphan_api_error");
                    }
                }
            }
        }
        self.flush_prompt(None);
        self.drop_hidden();
        // Calls never answered (the session was killed while they ran): closed as interrupted,
        // so the history stays well-formed.
        if self.phase() == "running_tools" {
            self.apply(Event::Abort, None);
            self.summary.synthesized_aborts += 1;
            self.infer("the transcript ends with tool calls unanswered; the import aborts them");
        }
        self.summary.final_phase = self.phase().to_string();
    }

    pub fn skipped_mut(&mut self) -> &mut BTreeMap<String, usize> {
        &mut self.summary.skipped
    }
}
