//! The pure mapping: a session's header and steps, fed in journal order, become finished spans.
//! Nothing here reads a clock or draws a number: every time is a step's `at_ms` (the header's
//! `created_at_ms` for the session's start) and every id comes from [`crate::ids`], so the same
//! journal always gives the same spans.

use std::collections::{BTreeMap, HashMap};

use opentelemetry::trace::{SpanId, TraceId};
use reloop_core::hook::{outcome, HookEventName, Permission};
use reloop_core::{Command, Effect, Event, Reason, Usage};
use reloop_journal::{SessionHeader, StepRecord};

use crate::ids;
use crate::semconv as k;
use crate::span::{AttrValue, SpanEvent, SpanKind, SpanRecord, SpanStatus};

/// A span begun and not yet ended.
#[derive(Debug)]
struct Open {
    span: SpanRecord,
}

impl Open {
    fn new(mapper: &SessionMapper, key: &str, parent: SpanId, name: String, kind: SpanKind, start_ms: u64) -> Self {
        let mut span = SpanRecord {
            trace_id: mapper.trace_id,
            span_id: ids::span_id(&mapper.session, key),
            parent: Some(parent),
            name,
            kind,
            start_ms,
            end_ms: start_ms,
            attributes: Vec::new(),
            events: Vec::new(),
            status: SpanStatus::Unset,
        };
        span.attributes.push((k::SESSION_ID, str(&mapper.session)));
        Open { span }
    }

    fn set(&mut self, key: &'static str, value: AttrValue) {
        match self.span.attributes.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => self.span.attributes.push((key, value)),
        }
    }

    fn end(mut self, end_ms: u64) -> SpanRecord {
        self.span.end_ms = end_ms.max(self.span.start_ms);
        self.span
    }
}

fn str(s: &str) -> AttrValue {
    AttrValue::Str(s.to_string())
}

fn int(n: impl TryInto<i64>) -> AttrValue {
    AttrValue::Int(n.try_into().unwrap_or(i64::MAX))
}

/// The turn in progress: which prompt and turn number it is, and its span.
#[derive(Debug)]
struct Turn {
    prompt: u32,
    number: u32,
    open: Open,
}

/// Turns a session's steps into spans, one step at a time: [`SessionMapper::step`] returns the
/// spans that step finished, [`SessionMapper::finish`] the ones still open and the root. A live
/// run feeds steps as they are journaled and sends each span as soon as it ends; an export feeds
/// the whole journal. Memory is what is open (the turn, the requests and tool calls in flight)
/// plus one small entry per tool call for the hooks that answer it later.
#[derive(Debug)]
pub struct SessionMapper {
    session: String,
    trace_id: TraceId,
    root: SpanId,
    created_at_ms: u64,
    provider: String,
    model: String,
    parent: Option<(String, u64)>,
    prompt: u32,
    turn: Option<Turn>,
    requests: BTreeMap<u32, Open>,
    tools: BTreeMap<String, Open>,
    /// Every tool call's span, kept for the hooks that run after it ended (PostToolUse).
    tool_spans: HashMap<String, (SpanId, u64, Option<u64>)>,
    stop_hooks_since: Option<u64>,
    last_at_ms: u64,
    steps: u64,
    terminal: Option<Reason>,
    usage: Usage,
}

impl SessionMapper {
    /// A mapper for the session `header` describes.
    pub fn new(header: &SessionHeader) -> Self {
        let provider = header.run_config.get("provider").and_then(|p| p.as_str()).unwrap_or("unknown");
        SessionMapper {
            session: header.id.clone(),
            trace_id: ids::trace_id(&header.id),
            root: ids::span_id(&header.id, "session"),
            created_at_ms: header.created_at_ms,
            provider: provider.to_string(),
            model: header.core_config.model.clone(),
            parent: header.parent.clone(),
            prompt: 0,
            turn: None,
            requests: BTreeMap::new(),
            tools: BTreeMap::new(),
            tool_spans: HashMap::new(),
            stop_hooks_since: None,
            last_at_ms: header.created_at_ms,
            steps: 0,
            terminal: None,
            usage: Usage::default(),
        }
    }

    /// The session's trace id.
    pub fn trace_id(&self) -> TraceId {
        self.trace_id
    }

    /// Reads one step (in journal order) and returns the spans it finished.
    pub fn step(&mut self, step: &StepRecord) -> Vec<SpanRecord> {
        let mut done = Vec::new();
        let at = step.at_ms.max(self.last_at_ms);
        self.last_at_ms = at;
        self.steps = self.steps.max(step.seq);
        // A step the state did not expect changed nothing: no span starts or ends on it.
        if step.ignored.is_some() {
            return done;
        }
        if matches!(step.event, Event::UserInput { .. }) && matches!(step.from_phase.as_str(), "idle" | "done") {
            self.prompt += 1;
            // A new prompt on a finished session: it goes on, no longer ended.
            self.terminal = None;
        }
        self.complete(step, at, &mut done);
        if let Some(reason) = &step.reason {
            self.decide(step, reason, at);
        }
        // The turn the step leaves the loop in: a new prompt or a new turn number ends the
        // current turn here and opens the next one, whose work the step's effects begin.
        let leaves_turn = self.turn.as_ref().is_some_and(|t| (t.prompt, t.number) != (self.prompt, step.turn_after));
        if leaves_turn || step.to_phase == "done" {
            if let Some(turn) = self.turn.take() {
                done.push(turn.open.end(at));
            }
        }
        if step.to_phase != "done" && self.turn.is_none() && self.prompt > 0 {
            let key = format!("turn/{}", step.seq);
            let mut open =
                Open::new(self, &key, self.root, format!("turn {}", step.turn_after), SpanKind::Internal, at);
            open.set(k::OPENINFERENCE_KIND, str("CHAIN"));
            open.set(k::PROMPT, int(self.prompt));
            open.set(k::TURN, int(step.turn_after));
            self.turn = Some(Turn { prompt: self.prompt, number: step.turn_after, open });
        }
        self.begin(step, at);
        done
    }

    /// Ends what is still open at the last step's time (marked `reloop.unfinished`) and returns
    /// it with the session's root span, which spans the whole session.
    pub fn finish(mut self) -> Vec<SpanRecord> {
        let at = self.last_at_ms;
        let mut done = Vec::new();
        let open: Vec<Open> = std::mem::take(&mut self.requests)
            .into_values()
            .chain(std::mem::take(&mut self.tools).into_values())
            .chain(self.turn.take().map(|t| t.open))
            .collect();
        for mut span in open {
            span.set(k::UNFINISHED, AttrValue::Bool(true));
            done.push(span.end(at));
        }
        let mut root = SpanRecord {
            trace_id: self.trace_id,
            span_id: self.root,
            parent: None,
            name: format!("invoke_agent {}", k::AGENT),
            kind: SpanKind::Internal,
            start_ms: self.created_at_ms,
            end_ms: at.max(self.created_at_ms),
            attributes: vec![
                (k::OPERATION_NAME, str("invoke_agent")),
                (k::AGENT_NAME, str(k::AGENT)),
                (k::PROVIDER_NAME, str(&self.provider)),
                (k::REQUEST_MODEL, str(&self.model)),
                (k::CONVERSATION_ID, str(&self.session)),
                (k::SESSION_ID, str(&self.session)),
                (k::OPENINFERENCE_KIND, str("AGENT")),
                (k::SESSION_STEPS, int(self.steps)),
                (k::USAGE_INPUT_TOKENS, int(input_tokens(&self.usage))),
                (k::USAGE_OUTPUT_TOKENS, int(self.usage.output_tokens)),
            ],
            events: Vec::new(),
            status: SpanStatus::Unset,
        };
        if let Some((parent, seq)) = &self.parent {
            root.attributes.push((k::SESSION_PARENT, str(parent)));
            root.attributes.push((k::SESSION_FORK_SEQ, int(*seq)));
        }
        match self.terminal.as_ref().and_then(Reason::terminal_reason) {
            Some(reason) => {
                root.attributes.push((k::TERMINAL_REASON, str(reason.as_str())));
                if reason.is_error() {
                    root.status = SpanStatus::Error(reason.as_str().to_string());
                }
            }
            None => root.attributes.push((k::UNFINISHED, AttrValue::Bool(true))),
        }
        done.push(root);
        done
    }

    /// Ends the spans whose work the step's event completes.
    fn complete(&mut self, step: &StepRecord, at: u64, done: &mut Vec<SpanRecord>) {
        match &step.event {
            Event::ModelDone { id, model, stop_reason, usage, request } => {
                let Some(mut open) = self.take_request(*request) else { return };
                if let Some(model) = model {
                    open.set(k::RESPONSE_MODEL, str(model));
                }
                if let Some(id) = id {
                    open.set(k::RESPONSE_ID, str(id));
                }
                if let Some(reason) = stop_reason {
                    open.set(k::FINISH_REASONS, AttrValue::StrArray(vec![reason.as_str().to_string()]));
                }
                self.usage(&mut open, usage);
                done.push(open.end(at));
            }
            Event::CompactDone { usage, request, .. } => {
                let Some(mut open) = self.take_request(*request) else { return };
                self.usage(&mut open, usage);
                done.push(open.end(at));
            }
            Event::ModelFailed { error, request } | Event::CompactFailed { error, request } => {
                let Some(mut open) = self.take_request(*request) else { return };
                open.set(k::ERROR_TYPE, str(&error.error_type));
                if let Some(status) = error.status {
                    open.set(k::ERROR_STATUS, int(status));
                }
                open.span.status = SpanStatus::Error(clip(&error.message));
                done.push(open.end(at));
            }
            Event::ToolDone(outcome) => {
                let Some(mut open) = self.tools.remove(&outcome.tool_use_id) else { return };
                if let Some(entry) = self.tool_spans.get_mut(&outcome.tool_use_id) {
                    entry.2 = Some(at);
                }
                if outcome.denied {
                    open.set(k::TOOL_DENIED, AttrValue::Bool(true));
                }
                if outcome.is_error {
                    open.set(k::ERROR_TYPE, str("tool_error"));
                    open.span.status = SpanStatus::Error(clip(&outcome.content.as_text()));
                }
                done.push(open.end(at));
            }
            Event::HookDone { hook_event, tool_use_id, runs, .. } => {
                done.push(self.hook(step.seq, *hook_event, tool_use_id.as_deref(), runs, at));
            }
            Event::Abort => {
                // The requests and calls in flight were cancelled with the session.
                let cancelled: Vec<Open> = std::mem::take(&mut self.requests)
                    .into_values()
                    .chain(std::mem::take(&mut self.tools).into_values())
                    .collect();
                for mut open in cancelled {
                    open.span.status = SpanStatus::Error("aborted".into());
                    done.push(open.end(at));
                }
            }
            _ => {}
        }
    }

    /// The request span a completion answers: by its number, or for a journal written before
    /// correlation ids (number 0) the request in flight, the latest one.
    fn take_request(&mut self, request: u32) -> Option<Open> {
        match request {
            0 => self.requests.pop_last().map(|(_, open)| open),
            n => self.requests.remove(&n),
        }
    }

    fn usage(&mut self, open: &mut Open, usage: &Usage) {
        self.usage.add(usage);
        open.set(k::USAGE_INPUT_TOKENS, int(input_tokens(usage)));
        open.set(k::USAGE_OUTPUT_TOKENS, int(usage.output_tokens));
        if usage.cache_read_input_tokens > 0 {
            open.set(k::USAGE_CACHE_READ, int(usage.cache_read_input_tokens));
        }
        if usage.cache_creation_input_tokens > 0 {
            open.set(k::USAGE_CACHE_CREATION, int(usage.cache_creation_input_tokens));
        }
    }

    /// The span of one hook event's runs: under its tool call for tool hooks, else under the
    /// turn; begun when its work was (the tool call, or the Stop hooks' start).
    fn hook(
        &mut self,
        seq: u64,
        event: HookEventName,
        tool: Option<&str>,
        runs: &[reloop_core::hook::HookRun],
        at: u64,
    ) -> SpanRecord {
        let turn = self.turn.as_ref().map(|t| t.open.span.span_id).unwrap_or(self.root);
        let (parent, start) = match tool.and_then(|id| self.tool_spans.get(id)) {
            // PostToolUse hooks run once the call is done; the others before it runs.
            Some((span, _, Some(end))) if event == HookEventName::PostToolUse => (*span, *end),
            Some((span, start, _)) => (*span, *start),
            None if event == HookEventName::Stop => (turn, self.stop_hooks_since.take().unwrap_or(at)),
            None => (turn, at),
        };
        let mut open = Open::new(
            self,
            &format!("hook/{seq}"),
            parent,
            format!("hook {}", event.as_str()),
            SpanKind::Internal,
            start,
        );
        open.set(k::OPENINFERENCE_KIND, str("CHAIN"));
        open.set(k::HOOK_EVENT, str(event.as_str()));
        if let Some(id) = tool {
            open.set(k::TOOL_CALL_ID, str(id));
        }
        open.set(k::HOOK_COMMANDS, AttrValue::StrArray(runs.iter().map(|r| r.command.clone()).collect()));
        let combined = outcome(event, runs);
        let decision = if combined.prevent.is_some() {
            "prevent"
        } else if !combined.blocks.is_empty() {
            "block"
        } else {
            match combined.permission.map(|p| p.decision) {
                Some(Permission::Allow) => "allow",
                Some(Permission::Ask) => "ask",
                Some(Permission::Deny) => "deny",
                None => "pass",
            }
        };
        open.set(k::HOOK_DECISION, str(decision));
        if runs.iter().any(|r| r.timed_out) {
            open.set(k::HOOK_TIMED_OUT, AttrValue::Bool(true));
        }
        open.end(at)
    }

    /// Records a decision on the turn it ends or continues (a span event, and the turn's and
    /// session's reason attributes).
    fn decide(&mut self, step: &StepRecord, reason: &Reason, at: u64) {
        let key = match reason.terminal_reason() {
            Some(_) => k::TERMINAL_REASON,
            None => k::CONTINUE_REASON,
        };
        if reason.is_terminal() {
            self.terminal = Some(reason.clone());
        }
        let event = SpanEvent {
            name: k::DECISION_EVENT,
            at_ms: at,
            attributes: vec![
                (key, str(reason.name())),
                (k::REASON_EXPLAIN, str(&reason.explain())),
                (k::STEP, int(step.seq)),
            ],
        };
        if let Some(turn) = &mut self.turn {
            turn.open.set(key, str(reason.name()));
            turn.open.span.events.push(event);
        }
    }

    /// Begins the spans of the work the step's effects ask for, under the turn now in progress.
    fn begin(&mut self, step: &StepRecord, at: u64) {
        let Some(effects) = step.effects.as_array() else { return };
        let parent = self.turn.as_ref().map(|t| t.open.span.span_id).unwrap_or(self.root);
        for (index, effect) in effects.iter().enumerate() {
            // An effect this build cannot read (a newer engine's) starts no span.
            let Ok(Effect::Command(command)) = serde_json::from_value::<Effect>(effect.clone()) else { continue };
            let key = format!("{}/{index}", step.seq);
            match command {
                Command::CallModel(call) if !self.requests.contains_key(&call.request) => {
                    let model = if call.model.is_empty() { self.model.clone() } else { call.model };
                    let mut open = self.chat(&key, parent, &model, call.request, at);
                    if call.max_tokens > 0 {
                        open.set(k::REQUEST_MAX_TOKENS, int(call.max_tokens));
                    }
                    self.requests.insert(call.request, open);
                }
                Command::Summarize { trigger, request, .. } if !self.requests.contains_key(&request) => {
                    let model = self.model.clone();
                    let mut open = self.chat(&key, parent, &model, request, at);
                    open.set(k::REQUEST_PURPOSE, str("compaction"));
                    open.set(k::COMPACTION_TRIGGER, str(&trigger));
                    self.requests.insert(request, open);
                }
                Command::RunTools { calls } | Command::ResumeTools { calls, .. } => {
                    for (n, call) in calls.into_iter().enumerate() {
                        if self.tools.contains_key(&call.id) {
                            continue;
                        }
                        let name = format!("execute_tool {}", call.name);
                        let mut open = Open::new(self, &format!("{key}/{n}"), parent, name, SpanKind::Internal, at);
                        open.set(k::OPERATION_NAME, str("execute_tool"));
                        open.set(k::OPENINFERENCE_KIND, str("TOOL"));
                        open.set(k::TOOL_NAME, str(&call.name));
                        open.set(k::TOOL_CALL_ID, str(&call.id));
                        open.set(k::TOOL_TYPE, str("function"));
                        self.tool_spans.insert(call.id.clone(), (open.span.span_id, at, None));
                        self.tools.insert(call.id.clone(), open);
                    }
                }
                Command::RunStopHooks { .. } => self.stop_hooks_since = Some(at),
                _ => {}
            }
        }
    }

    fn chat(&self, key: &str, parent: SpanId, model: &str, request: u32, at: u64) -> Open {
        let mut open = Open::new(self, key, parent, format!("chat {model}"), SpanKind::Client, at);
        open.set(k::OPERATION_NAME, str("chat"));
        open.set(k::PROVIDER_NAME, str(&self.provider));
        open.set(k::REQUEST_MODEL, str(model));
        open.set(k::OPENINFERENCE_KIND, str("LLM"));
        open.set(k::REQUEST, int(request));
        open
    }
}

/// Every input token: the convention counts cached ones in, Anthropic's usage does not.
fn input_tokens(usage: &Usage) -> u64 {
    usage.input_tokens.saturating_add(usage.cache_read_input_tokens).saturating_add(usage.cache_creation_input_tokens)
}

/// A status message short enough for any backend: a tool's error can be a whole file.
fn clip(text: &str) -> String {
    const MAX: usize = 1024;
    if text.len() <= MAX {
        return text.to_string();
    }
    let mut end = MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &text[..end])
}
