//! Items to events, with the real core in the loop: every event is applied to
//! [`reloop_core::transition`] as it is chosen, so the choice can follow the phase the core is
//! actually in, and an import can only produce events the core accepts.

use std::collections::BTreeMap;

use reloop_core::hook::{HookEventName, HookRun};
use reloop_core::{
    Command, Config, ContentBlock, Continue, Effect, Event, Failure, Fold, Reason, State, Stop, ToolOutcome,
    ToolResultContent,
};

use crate::items::{is_cancellation, Item, PromptKind, Response};
use crate::loop_lines::{output_limit_in, StopBlock, StopHookSummary};
use crate::observed::{Decision, Interrupted, Observation};
use crate::skips::{item_line, Skip};
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
    /// What Claude Code was seen to decide.
    pub observed: Vec<Observation>,
    /// Where facts of the transcript were left out, in order.
    pub skips: Vec<Skip>,
    /// The line of the item being read, for [`Self::skips`].
    line: Option<usize>,
    /// Consecutive Stop-hook blocks the transcript shows in the turn under way.
    stop_blocks: u32,
    /// A stop of the query under way has been observed.
    query_stopped: bool,
    /// The line of the last response read.
    last_response_line: usize,
    /// The decision that led to the next response, as the lines before it show it.
    led_to_response: Option<(usize, Decision)>,
    /// A compaction summary no compaction of the core's produced is the pending prompt: its
    /// prompt is marked as the import's reading.
    summary_as_prompt: bool,
    /// The pending prompt is one Claude Code wrote itself.
    pending_from_claude_code: bool,
    /// The compaction the last boundary started: its trigger and Claude Code's count before it.
    compaction: Option<(Option<String>, Option<u64>)>,
    /// Retries of the request under way the transcript shows.
    retries: u32,
    /// The retries Claude Code allows a request (`maxRetries`), as the core is configured.
    pub max_retries: u32,
    /// What the import inferred about the output limit, when the transcript does not name it:
    /// every step whose decision rests on the limit is marked with it.
    pub limit_inferred: Option<String>,
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
            observed: Vec::new(),
            skips: Vec::new(),
            line: None,
            stop_blocks: 0,
            query_stopped: false,
            last_response_line: 0,
            led_to_response: None,
            limit_inferred: None,
            retries: 0,
            max_retries: config.max_retries,
            compaction: None,
            summary_as_prompt: false,
            pending_from_claude_code: false,
        }
    }

    pub fn phase(&self) -> &'static str {
        self.fold.state().map_or("done", State::phase)
    }

    fn apply(&mut self, event: Event, at_ms: Option<u64>) {
        self.apply_seen(event, at_ms);
    }

    /// [`Self::apply`], returning the retry the core planned, if it planned one.
    fn apply_seen(&mut self, event: Event, at_ms: Option<u64>) -> Option<u32> {
        if let Some(t) = at_ms {
            self.now = t;
        }
        // Each outcome names the request in flight, as the live driver's do.
        let event = match self.fold.state() {
            Some(state) => event.correlated(state.context().requests()),
            None => event,
        };
        let seq = self.events.len() as u64 + 1;
        let seen = self.fold.push(seq, event.clone(), |step| {
            let retry = step.effects.iter().find_map(|e| match e {
                Effect::Command(Command::WaitRetry(w)) => Some(w.attempt),
                _ => None,
            });
            (uses_output_limit(step.reason.as_ref()), retry)
        });
        self.events.push(event);
        self.at_ms.push(self.now);
        let (limited, retry) = seen.unwrap_or((false, None));
        if let (true, Some(what)) = (limited, &self.limit_inferred) {
            self.inferred.push((seq, what.clone()));
        }
        retry
    }

    /// The summary that opens the compacted history: the compaction's outcome. Its request's
    /// usage is not in the transcript (the request is not), and the counts the core reports are
    /// its own estimates: both are marked.
    fn compacted(&mut self, content: &[ContentBlock], at_ms: Option<u64>) {
        let text: String = content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n");
        let summary = crate::loop_lines::compact_summary(&text).unwrap_or(text.trim()).to_string();
        self.apply(Event::CompactDone { summary, usage: Default::default(), request: 0, given_back: None }, at_ms);
        let counted = match self.compaction.take() {
            Some((_, Some(pre))) => format!("Claude Code counted {pre} tokens before it"),
            _ => "the transcript gives no count".to_string(),
        };
        self.infer(format!(
            "the summary request is not in the transcript: its usage is taken as 0, and the token counts are reloop's estimates ({counted})"
        ));
    }

    /// A message the person queued while the loop ran, numbered in the order it came (the
    /// transcript's own ids do not survive an export).
    fn queue(&mut self, content: Vec<ContentBlock>, at_ms: Option<u64>) {
        self.summary.queued += 1;
        let id = format!("queued_{}", self.summary.queued);
        self.apply(Event::QueuedInput { id, content }, at_ms);
    }

    /// Marks the event just applied as the import's inference.
    fn infer(&mut self, what: impl Into<String>) {
        self.inferred.push((self.events.len() as u64, what.into()));
    }

    /// Records what Claude Code decided at `line`, against the step just applied.
    fn observe(&mut self, line: usize, decision: Decision) {
        let seq = (!self.events.is_empty()).then_some(self.events.len() as u64);
        self.observed.push(Observation { line, seq, decision });
    }

    /// The core's terminal reason, once it has stopped.
    fn terminal(&self) -> Option<&'static str> {
        self.fold.state().and_then(State::terminal).map(|t| t.reason().as_str())
    }

    /// The Stop hooks' outcome at the end of a turn: `runs` as the transcript shows them.
    fn stop_hooks_done(&mut self, runs: Vec<HookRun>, at_ms: Option<u64>) {
        let event = Event::HookDone { hook_event: HookEventName::Stop, tool_use_id: None, runs, request: 0 };
        self.apply(event, at_ms);
    }

    /// The core waits for Stop hooks the transcript shows no outcome of (it ends the turn or
    /// goes on to a new prompt): they let the turn end.
    fn close_stop_hooks(&mut self, at_ms: Option<u64>) {
        if self.phase() == "running_stop_hooks" {
            self.stop_blocks = 0;
            self.stop_hooks_done(Vec::new(), at_ms);
            self.infer("the transcript shows no Stop hook outcome for this turn; the import takes it that the hooks let it end");
        }
    }

    /// A Stop hooks' block: the hooks' runs rebuilt from the feedback (and the summary of the
    /// hooks that ran, when the transcript has one beside it).
    fn stop_hook_block(
        &mut self,
        blocks: Vec<StopBlock>,
        summary: Option<StopHookSummary>,
        at_ms: Option<u64>,
        line: usize,
    ) {
        let named: Vec<String> = blocks.iter().filter_map(|b| b.command.clone()).collect();
        let mut spare = summary.iter().flat_map(|s| s.commands.iter()).filter(|c| !named.contains(c)).cloned();
        let mut runs: Vec<HookRun> = Vec::new();
        for block in &blocks {
            let command = block.command.clone().or_else(|| spare.next()).unwrap_or_default();
            runs.push(block.run(&command));
        }
        runs.extend(spare.map(|command| HookRun {
            command,
            exit_code: Some(0),
            stdout: String::new(),
            stderr: String::new(),
            timed_out: false,
        }));
        self.stop_blocks += 1;
        self.summary.stop_hook_feedback += 1;
        self.stop_hooks_done(runs, at_ms);
        let block = self.stop_blocks;
        self.observe(line, Decision::StopHookBlocked { block });
        self.led_to_response = None;
    }

    fn skip(&mut self, kind: &str) {
        *self.summary.skipped.entry(kind.to_string()).or_default() += 1;
        let after_seq = self.events.len() as u64;
        self.skips.push(Skip { kind: kind.to_string(), line: self.line, after_seq });
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
        self.close_stop_hooks(at_ms);
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
        self.observe_end_of_query();
        self.stop_for_prompt(at_ms);
        let content = std::mem::take(&mut self.pending_prompt);
        self.apply(Event::user_input(content), at_ms);
        if std::mem::take(&mut self.pending_from_claude_code) {
            self.summary.prompts_from_claude_code += 1;
        } else {
            self.summary.prompts += 1;
        }
        if std::mem::take(&mut self.summary_as_prompt) {
            self.infer("a compaction summary where the core was compacting nothing: the import takes the summary as the prompt");
        }
        self.query_stopped = false;
        self.stop_blocks = 0;
        self.led_to_response = None;
    }

    /// The query under way ends here (a new prompt follows, or the transcript ends): when the
    /// model's last answer ended its turn, Claude Code completed it.
    fn observe_end_of_query(&mut self) {
        if self.query_stopped || self.events.is_empty() {
            return;
        }
        if self.phase() == "running_stop_hooks" || self.terminal() == Some("completed") {
            self.observe(self.last_response_line, Decision::Completed);
            self.query_stopped = true;
        }
    }

    fn observe_stop(&mut self, line: usize, decision: Decision) {
        self.observe(line, decision);
        self.query_stopped = true;
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
                            is_error: true,
                            ..ToolOutcome::new(id, ToolResultContent::Text(UNANSWERED.to_string()))
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
            "running_stop_hooks" => {
                let run = HookRun {
                    command: String::new(),
                    exit_code: Some(2),
                    stdout: String::new(),
                    stderr: String::new(),
                    timed_out: false,
                };
                self.stop_hooks_done(vec![run], at_ms);
                self.infer("the model answered again after the end of its turn with no Stop hook feedback in the transcript; the import takes it that a hook blocked");
                self.phase() == "awaiting_model"
            }
            "idle" | "done" if !self.hidden.is_empty() => {
                let content = std::mem::take(&mut self.hidden).into_iter().map(|(b, _)| b).collect();
                let at = self.hidden_at.take().or(at_ms);
                self.apply(Event::user_input(content), at);
                self.summary.meta_prompts += 1;
                self.infer("a response answers meta or command text: the import takes that text as the prompt");
                true
            }
            _ => false,
        }
    }

    /// A request is in flight and part of its answer has arrived.
    fn cut_streaming(&self) -> bool {
        self.fold.state().and_then(State::streaming).is_some_and(|s| !s.blocks().is_empty())
    }

    fn response(&mut self, response: Response, cut: bool) {
        let first_at = response.blocks.first().and_then(|(_, t)| *t).or(response.last_at_ms);
        if let Some((line, decision)) = self.led_to_response.take() {
            self.observe(line, decision);
        }
        if !self.await_model(first_at) {
            self.skip("orphan_response");
            return;
        }
        self.last_response_line = response.line;
        for (index, (block, at_ms)) in response.blocks.into_iter().enumerate() {
            self.apply(Event::ModelBlock { index, block, request: 0 }, at_ms);
            self.summary.model_blocks += 1;
        }
        if cut {
            return;
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
            self.line = item_line(&item);
            match item {
                Item::Prompt { content, kind, at_ms } => {
                    if kind == PromptKind::FromClaudeCode {
                        self.pending_from_claude_code = true;
                    }
                    if kind == PromptKind::CompactSummary {
                        self.summary.compact_summaries += 1;
                        if self.phase() == "compacting" {
                            self.compacted(&content, at_ms);
                            continue;
                        }
                        self.summary_as_prompt = true;
                    }
                    if self.pending_prompt.is_empty() {
                        self.pending_at = at_ms;
                    }
                    // Consecutive user texts reach the model as one message, as Claude Code
                    // merges them; they become one prompt.
                    self.pending_prompt.extend(content);
                }
                Item::Hidden { content, kind, at_ms } => {
                    match kind {
                        "max_tokens_resume" => {
                            self.led_to_response = Some((self.last_response_line, Decision::MaxTokensResume))
                        }
                        "malformed_tool_call_retry" => {
                            self.led_to_response = Some((self.last_response_line, Decision::MalformedToolCallRetry))
                        }
                        "cut_stream_resume" if self.cut_streaming() => {
                            // The error that broke the stream is in no line: the resume says it.
                            let error = reloop_core::ModelError::new(None, "overloaded_error", "Overloaded");
                            self.apply(Event::ModelFailed { error, request: 0 }, at_ms);
                            self.infer("the error that broke the stream is in no line; Claude Code's resume line says the stream broke (taken as an overload)");
                            self.led_to_response = Some((self.last_response_line, Decision::CutStreamResume));
                        }
                        _ => {}
                    }
                    if self.pending_prompt.is_empty() {
                        if self.hidden.is_empty() {
                            self.hidden_at = at_ms;
                        }
                        self.hidden.extend(content.into_iter().map(|b| (b, kind)));
                    } else {
                        self.skip(kind);
                    }
                }
                Item::CompactBoundary { trigger, pre_tokens, at_ms, line } => {
                    self.flush_prompt(at_ms);
                    self.drop_hidden();
                    self.summary.compactions += 1;
                    // Before a request the core is about to send, or (`/compact`) between prompts.
                    let by_hand = self.phase() == "done" && trigger.as_deref() == Some("manual");
                    let can =
                        self.fold.state().is_some_and(|s| reloop_core::compact::summarizable(s.messages()).is_some());
                    if (self.phase() == "awaiting_model" || by_hand) && can {
                        self.apply(Event::CompactRequested, at_ms);
                    } else {
                        self.skip("compact_boundary_not_followed");
                    }
                    self.compaction = Some((trigger.clone(), pre_tokens));
                    self.observe(line, Decision::Compacted { trigger, pre_tokens });
                }
                Item::StopHookFeedback { blocks, at_ms, line } => {
                    self.flush_prompt(at_ms);
                    if self.phase() == "running_stop_hooks" {
                        let summary = take_next(&mut items, i, |item| matches!(item, Item::StopHookSummary { .. }));
                        let summary = match summary {
                            Some(Item::StopHookSummary { summary, .. }) => Some(summary),
                            _ => None,
                        };
                        self.stop_hook_block(blocks, summary, at_ms, line);
                    } else {
                        // No turn is ending here: the feedback can only be read as what the
                        // model was sent next.
                        let text = blocks.iter().map(|b| b.message.clone()).collect::<Vec<_>>().join("\n");
                        self.pending_at = at_ms;
                        self.pending_prompt.push(ContentBlock::text(format!("Stop hook feedback:\n{text}")));
                        self.flush_prompt(at_ms);
                        self.infer("Stop hook feedback where no turn was ending; the import takes it as a prompt");
                    }
                }
                Item::StopHookSummary { summary, at_ms, line } => {
                    let feedback_follows = next_is(&items, i, |item| matches!(item, Item::StopHookFeedback { .. }));
                    if self.phase() == "running_stop_hooks" && !feedback_follows {
                        self.stop_blocks = 0;
                        let prevented = summary.prevented;
                        let stop_reason = summary.stop_reason.clone();
                        self.stop_hooks_done(summary.runs(), at_ms);
                        if prevented {
                            self.observe_stop(line, Decision::StopHookPrevented { stop_reason });
                        } else {
                            self.observe(line, Decision::StopHooksPassed);
                        }
                    } else if feedback_follows {
                        if let Some(Item::StopHookFeedback { blocks, at_ms, line }) =
                            take_next(&mut items, i, |item| matches!(item, Item::StopHookFeedback { .. }))
                        {
                            self.flush_prompt(at_ms);
                            if self.phase() == "running_stop_hooks" {
                                self.stop_hook_block(blocks, Some(summary), at_ms, line);
                            } else {
                                self.skip("stop_hook_feedback");
                            }
                        }
                    } else {
                        self.skip("system:stop_hook_summary");
                    }
                }
                Item::Retracted { at_ms, line } => {
                    self.flush_prompt(at_ms);
                    if self.phase() == "awaiting_model" {
                        let done = Event::ModelDone {
                            id: None,
                            model: None,
                            stop_reason: Some(reloop_core::StopReason::ToolUse),
                            usage: Default::default(),
                            request: 0,
                        };
                        self.apply(done, at_ms);
                        self.summary.responses += 1;
                        self.infer("the transcript keeps only the uuid of the answer Claude Code took back; the import takes it as the malformed call its reminder names (stop_reason tool_use, no call)");
                        self.last_response_line = line;
                    } else {
                        self.skip("retracted_answer");
                    }
                }
                Item::Queued { content, at_ms } => {
                    // Queued where no tools ran: it waits for the next request the core makes.
                    self.flush_prompt(at_ms);
                    if matches!(self.phase(), "idle" | "done") {
                        self.pending_at = at_ms;
                        self.pending_prompt.extend(content);
                    } else {
                        self.queue(content, at_ms);
                    }
                }
                Item::ModelFallback { at_ms, line, .. } => {
                    self.flush_prompt(at_ms);
                    // The overload that tipped the switch is in no line: the fallback line says it.
                    if self.phase() == "awaiting_model" {
                        let error = reloop_core::ModelError::new(Some(529), "overloaded_error", "Overloaded");
                        self.apply(Event::ModelFailed { error, request: 0 }, at_ms);
                        self.infer("the overload that made Claude Code switch models is in no line; its model_fallback line says it happened");
                        self.observe(line, Decision::ModelFallback);
                    } else {
                        self.skip("system:model_fallback");
                    }
                }
                Item::MaxTurns { max_turns, at_ms, line } => {
                    self.flush_prompt(at_ms);
                    self.observe_stop(line, Decision::MaxTurns { max_turns });
                }
                Item::Response(response) => {
                    self.flush_prompt(response.blocks.first().and_then(|(_, t)| *t));
                    // An answer with no stop_reason that an interrupt or an API error follows
                    // was cut while it streamed: its blocks arrived, its end never did (2.1.197
                    // keeps what streamed before an SSE `error` event this way).
                    // (2.1.332 writes `end_turn` on an answer it then asks to resume: its meta
                    // line says the stream broke.)
                    let resumed = matches!(
                        items[i + 1..].iter().flatten().next(),
                        Some(Item::Hidden { kind: "cut_stream_resume", .. })
                    );
                    let cut = resumed
                        || response.stop_reason.is_none()
                            && next_is(&items, i, |item| {
                                matches!(item, Item::Interrupt { for_tool_use: false, .. } | Item::ApiError { .. })
                            });
                    self.response(response, cut);
                }
                Item::ToolResults { mut results, at_ms, line } => {
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
                            Some(Item::Hidden { .. } | Item::CompactBoundary { .. }) | None => {}
                            Some(Item::Interrupt { for_tool_use, .. }) => {
                                interrupt_follows = *for_tool_use;
                                break;
                            }
                            Some(_) => break,
                        }
                        j += 1;
                    }
                    // A message queued while these tools ran joined their results.
                    if let Some(Item::Queued { content, .. }) =
                        take_next(&mut items, i, |item| matches!(item, Item::Queued { .. }))
                    {
                        self.queue(content, at_ms);
                    }
                    for outcome in &results {
                        let tool_use_id = outcome.tool_use_id.clone();
                        if outcome.denied {
                            self.observe(line, Decision::PermissionDenied { tool_use_id });
                        } else if outcome.is_error && crate::items::is_input_rejection(&outcome.content) {
                            self.observe(line, Decision::ToolInputRejected { tool_use_id });
                        }
                    }
                    self.tool_results(results, at_ms, interrupt_follows);
                    if self.phase() == "awaiting_model" {
                        self.led_to_response = Some((line, Decision::NextTurn));
                    }
                }
                Item::Interrupt { at_ms, line, for_tool_use } => {
                    self.flush_prompt(at_ms);
                    self.drop_hidden();
                    if matches!(self.phase(), "idle" | "done") {
                        self.skip("interrupt_after_stop");
                    } else {
                        self.apply(Event::Abort, at_ms);
                        self.summary.interrupts += 1;
                        let during = if for_tool_use { Interrupted::Tools } else { Interrupted::Streaming };
                        self.observe_stop(line, Decision::Interrupted { during });
                    }
                }
                Item::ApiRetry { error, attempt, max_retries, at_ms, line } => {
                    self.flush_prompt(at_ms);
                    let (status, error_type) = (error.status, error.error_type.clone());
                    if self.await_model(at_ms) {
                        let planned = self.apply_seen(Event::ModelFailed { error, request: 0 }, at_ms);
                        // Against the failure's step, where the core planned (or not) its retry.
                        self.observe(line, Decision::Retried { attempt, max_retries, status, error_type });
                        match planned {
                            Some(planned) => {
                                self.retries += 1;
                                self.apply(Event::RetryReady { attempt: planned }, at_ms);
                            }
                            None => self.skip("retry_the_core_did_not_plan"),
                        }
                    } else {
                        self.skip("orphan_api_retry");
                    }
                }
                Item::ApiError { mut error, text, at_ms, line } => {
                    self.flush_prompt(at_ms);
                    if let Some(limit) = output_limit_in(&text) {
                        self.observe_stop(line, Decision::OutputTokensExhausted { limit });
                    }
                    // The core's own end (the resumes or the malformed-call retries ran out):
                    // Claude Code writes it as an error line, the core has already stopped.
                    let own = self.fold.state().and_then(State::terminal).and_then(|t| t.error.as_deref());
                    if own.is_some_and(|own| {
                        own.trim() == text.trim()
                            || output_limit_in(own) == output_limit_in(&text) && output_limit_in(own).is_some()
                    }) {
                        if !self.query_stopped {
                            let reason = self.terminal().unwrap_or_default().to_string();
                            self.observe_stop(line, Decision::EndedWithError { reason });
                        }
                        self.skip("error_line_of_the_core_s_stop");
                        continue;
                    }
                    let (status, error_type) = (error.status, error.error_type.clone());
                    if self.await_model(at_ms) {
                        // Claude Code gave up on this request: the core must not retry it either.
                        // A stream cut after part of the answer is final by the profile's own
                        // rule (2.1.197), which needs no mark.
                        let cut_final = error.status.is_none()
                            && self.fold.state().is_some_and(|state| {
                                state.streaming().is_some_and(|s| !s.blocks().is_empty())
                                    && state.context().config().streamed_error_final()
                            });
                        let short = std::mem::take(&mut self.retries) < self.max_retries && !cut_final;
                        if short {
                            error = error.with_should_retry(Some(false));
                        }
                        self.apply(Event::ModelFailed { error: error.clone(), request: 0 }, at_ms);
                        // The core compacts after "prompt is too long", as Claude Code does;
                        // an error line where the retried answer would be says it failed.
                        // (A profile may send a failed summary request again: 2.1.332 six times
                        // in all under flag 18, `CompactRule::too_long_shapes`.)
                        for _ in 0..8 {
                            if self.phase() != "compacting" {
                                break;
                            }
                            self.apply(Event::CompactFailed { error: error.clone(), request: 0 }, at_ms);
                            self.infer("Claude Code's compaction after the prompt-too-long error left no line of its own; the error it ended with says the compaction failed");
                        }
                        if short {
                            self.infer("Claude Code gave up on this request before its retries ran out; the transcript does not say why, so the import marks the error not to be retried");
                        }
                        self.summary.api_errors += 1;
                        self.drop_hidden();
                        if !self.query_stopped {
                            self.observe_stop(line, Decision::ModelError { status, error_type });
                        }
                    } else {
                        self.skip("orphan_api_error");
                    }
                }
            }
        }
        self.line = None;
        self.flush_prompt(None);
        self.drop_hidden();
        self.observe_end_of_query();
        self.close_stop_hooks(None);
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

/// Whether the next item after `i` that is not meta text matches.
fn next_is(items: &[Option<Item>], i: usize, wanted: impl Fn(&Item) -> bool) -> bool {
    items[i + 1..].iter().flatten().find(|item| !matches!(item, Item::Hidden { .. })).is_some_and(wanted)
}

/// Takes the next item after `i` that is not meta text, when it matches.
fn take_next(items: &mut [Option<Item>], i: usize, wanted: impl Fn(&Item) -> bool) -> Option<Item> {
    let at =
        items[i + 1..].iter().position(|item| item.as_ref().is_some_and(|it| !matches!(it, Item::Hidden { .. })))?;
    let slot = &mut items[i + 1 + at];
    if slot.as_ref().is_some_and(wanted) {
        slot.take()
    } else {
        None
    }
}

/// A decision that names the output limit (a resume after a cut, or the end of the resumes).
fn uses_output_limit(reason: Option<&Reason>) -> bool {
    matches!(
        reason,
        Some(Reason::Continue(Continue::MaxOutputTokensRecovery { .. } | Continue::MaxOutputTokensEscalate { .. }))
            | Some(Reason::Terminal(Stop::ModelError(Failure::OutputTokensExhausted { .. })))
    )
}
