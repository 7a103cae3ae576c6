//! The driver of the transition table's paths: a session played from `idle` the way a real
//! driver plays it. Each fact answers what is in flight (the model's blocks name the request
//! sent, a tool result names a call of this turn, `retry_ready` the retry awaited), and every
//! step is recorded as an edge of the machine: the phase it left, the event's kind, and what
//! the step did.

use reloop_core::hook::{HookEventName, HookRun};
use reloop_core::testkit::{Trace, TraceStep};
use reloop_core::{
    transition, Config, ContentBlock, Effect, Event, Ignored, ModelError, Reason, State, Step, StopReason, ToolOutcome,
    Usage,
};
use serde_json::json;

/// What one step did: the phase it went to, what it asked for, the reason it decided, or why it
/// ignored the event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub to: &'static str,
    pub effects: Vec<&'static str>,
    /// The continue or terminal reason's name.
    pub reason: Option<&'static str>,
    pub terminal: bool,
    pub ignored: Option<&'static str>,
}

impl Outcome {
    pub fn of(step: &Step) -> Self {
        Outcome::new(step.state.phase(), &step.effects, step.reason.as_ref(), step.ignored.as_ref())
    }

    /// The outcome of a step the testkit's simulation recorded.
    pub fn of_trace(step: &TraceStep) -> Self {
        Outcome::new(step.phase, &step.effects, step.reason.as_ref(), step.ignored.as_ref())
    }

    fn new(to: &'static str, effects: &[Effect], reason: Option<&Reason>, ignored: Option<&Ignored>) -> Self {
        Outcome {
            to,
            effects: effects.iter().map(Effect::name).collect(),
            reason: reason.map(Reason::name),
            terminal: reason.is_some_and(Reason::is_terminal),
            ignored: ignored.map(Ignored::name),
        }
    }

    /// The outcome in a few words, as the table shows it: `→ running_tools [run_tools]`,
    /// `stays [call_model] continue: max_output_tokens_recovery`, `ignored: stale_request`.
    pub fn render(&self, from: &str) -> String {
        if let Some(why) = self.ignored {
            return format!("ignored: {why}");
        }
        // A stop is never `stays`: from `done`, a new prompt that stops at once ends a new query.
        let mut text = if self.to == from && !self.terminal { "stays".to_string() } else { format!("→ {}", self.to) };
        if !self.effects.is_empty() {
            text.push_str(&format!(" [{}]", self.effects.join(", ")));
        }
        match self.reason {
            Some(reason) if self.terminal => text.push_str(&format!(" stop: {reason}")),
            Some(reason) => text.push_str(&format!(" continue: {reason}")),
            None => {}
        }
        text
    }
}

/// One step of a session: from a phase, on an event of a kind, to an outcome.
#[derive(Debug, Clone)]
pub struct Edge {
    pub from: &'static str,
    pub kind: &'static str,
    pub outcome: Outcome,
}

impl Edge {
    /// The edge without the detail of its effects: where it goes and why, or why it is ignored.
    pub fn key(&self) -> (&'static str, &'static str, &'static str, &'static str, &'static str) {
        let o = &self.outcome;
        (self.from, self.kind, o.to, o.reason.unwrap_or(""), o.ignored.unwrap_or(""))
    }
}

/// What the Stop hooks say.
#[derive(Debug, Clone, Copy)]
pub enum Verdict {
    /// Exit 0, nothing said.
    Pass,
    /// Exit 2 with a message on stderr: the turn may not end.
    Block,
    /// `{"continue": false}`: the run ends.
    Prevent,
}

pub fn hook_runs(verdict: Verdict) -> Vec<HookRun> {
    let (exit_code, stdout, stderr) = match verdict {
        Verdict::Pass => (0, "", ""),
        Verdict::Block => (2, "", "tests fail"),
        Verdict::Prevent => (0, r#"{"continue": false, "stopReason": "enough"}"#, ""),
    };
    let run = HookRun {
        command: "./check.sh".into(),
        exit_code: Some(exit_code),
        stdout: stdout.into(),
        stderr: stderr.into(),
        timed_out: false,
    };
    vec![run]
}

/// A session played step by step; each method feeds the fact it is named after.
pub struct Session {
    pub name: &'static str,
    config: Config,
    /// Every state the session was in, `idle` first.
    pub states: Vec<State>,
    pub edges: Vec<Edge>,
    steps: Vec<TraceStep>,
}

impl Session {
    pub fn new(name: &'static str, config: Config) -> Self {
        let idle = State::new(config.clone());
        Session { name, config, states: vec![idle], edges: Vec::new(), steps: Vec::new() }
    }

    pub fn state(&self) -> &State {
        self.states.last().expect("a session has a state")
    }

    /// The request in flight (or the last one sent).
    fn request(&self) -> u32 {
        self.state().context().requests()
    }

    /// Feeds one event and records the step.
    pub fn feed(mut self, event: Event) -> Self {
        let from = self.state().phase();
        let step = transition(self.state().clone(), event.clone());
        self.edges.push(Edge { from, kind: event.kind(), outcome: Outcome::of(&step) });
        self.steps.push(TraceStep {
            event,
            digest: step.state.digest(),
            phase: step.state.phase(),
            turn: step.state.context().turn_count(),
            effects: step.effects,
            reason: step.reason,
            ignored: step.ignored,
        });
        self.states.push(step.state);
        self
    }

    /// The session is now in `phase`: a path states where it is, so a change of the machine
    /// that sends it elsewhere fails here, by name, instead of quietly changing the table.
    pub fn now(self, phase: &str) -> Self {
        assert_eq!(self.state().phase(), phase, "path {:?}, after {} steps", self.name, self.steps.len());
        self
    }

    /// The loop has stopped with `reason`.
    pub fn ends(self, reason: &str) -> Self {
        let got = self.state().terminal().map(|t| t.reason().as_str());
        assert_eq!(got, Some(reason), "path {:?}, after {} steps", self.name, self.steps.len());
        self
    }

    /// The session up to its first stop, as the testkit's simulation records a run: its
    /// invariants (tool pairing, guards, queue, replay) then hold for the path too.
    pub fn trace(&self) -> Trace {
        let end = self.steps.iter().position(|s| s.phase == "done").map_or(self.steps.len(), |i| i + 1);
        Trace {
            steps: self.steps[..end].to_vec(),
            final_state: self.states[end].clone(),
            config: self.config.clone(),
            gave_up: false,
        }
    }

    // The user and the caller.

    pub fn prompt(self, text: &str) -> Self {
        self.feed(Event::user_input(vec![ContentBlock::text(text)]))
    }

    pub fn queue(self, id: &str) -> Self {
        self.feed(Event::QueuedInput { id: id.into(), content: vec![ContentBlock::text("and this")] })
    }

    pub fn abort(self) -> Self {
        self.feed(Event::Abort)
    }

    /// The process restarted and the driver resumes the journal.
    pub fn resume(self) -> Self {
        self.feed(Event::Resumed)
    }

    pub fn compact(self) -> Self {
        self.feed(Event::CompactRequested)
    }

    pub fn set_model(self, model: &str) -> Self {
        self.feed(Event::SetModel { model: Some(model.into()), command: None })
    }

    pub fn set_mode(self, mode: &str) -> Self {
        self.feed(Event::SetPermissionMode { mode: mode.into() })
    }

    // The model.

    fn next_index(&self) -> usize {
        self.state().streaming().map_or(0, |streaming| streaming.blocks().len())
    }

    /// The model streams a text block.
    pub fn streams(self, text: &str) -> Self {
        let (index, request) = (self.next_index(), self.request());
        self.feed(Event::TextDelta { index, text: text.into(), request }).feed(Event::ModelBlock {
            index,
            block: ContentBlock::text(text),
            request,
        })
    }

    /// The model streams a `tool_use` block per id.
    pub fn calls(mut self, ids: &[&str]) -> Self {
        for id in ids {
            let (index, request) = (self.next_index(), self.request());
            let block = ContentBlock::tool_use(*id, "Read", json!({"file_path": "/x"}));
            self = self.feed(Event::ModelBlock { index, block, request });
        }
        self
    }

    /// The response ends with `stop` and reports `usage`.
    pub fn ends_with(self, stop: StopReason, usage: Usage) -> Self {
        let request = self.request();
        self.feed(Event::ModelDone { id: None, model: None, stop_reason: Some(stop), usage, request })
    }

    /// A text answer that ends the turn.
    pub fn answers(self, text: &str) -> Self {
        self.streams(text).ends_with(StopReason::EndTurn, usage(100, 20))
    }

    /// A response that asks for these tools.
    pub fn asks_for(self, ids: &[&str]) -> Self {
        self.calls(ids).ends_with(StopReason::ToolUse, usage(100, 20))
    }

    /// The request in flight fails.
    pub fn fails(self, error: ModelError) -> Self {
        let request = self.request();
        self.feed(Event::ModelFailed { error, request })
    }

    /// A fact of the request before the one in flight arrives late.
    pub fn late_block(self) -> Self {
        let request = self.request() - 1;
        self.feed(Event::ModelBlock { index: 0, block: ContentBlock::text("late"), request })
    }

    /// The driver's wait for the retry is over.
    pub fn retry_ready(self) -> Self {
        let attempt = reloop_core::testkit::retry_attempt(self.state());
        self.feed(Event::RetryReady { attempt })
    }

    // The tools and hooks.

    /// Every call not answered yet starts and returns its result, in order.
    pub fn tools_run(mut self) -> Self {
        let Some(tools) = self.state().tools() else {
            panic!("path {:?}: no tools run in {}", self.name, self.state().phase())
        };
        let pending: Vec<String> = tools
            .calls()
            .iter()
            .zip(tools.outcomes())
            .filter(|(_, o)| o.is_none())
            .map(|(c, _)| c.id.clone())
            .collect();
        for id in pending {
            self = self.tool_started(&id).tool_done(&id);
        }
        self
    }

    pub fn tool_started(self, id: &str) -> Self {
        let request = self.request();
        self.feed(Event::ToolStarted { tool_use_id: id.into(), request })
    }

    pub fn tool_done(self, id: &str) -> Self {
        let mut outcome = ToolOutcome::error(id, "contents of /x");
        outcome.is_error = false;
        outcome.request = self.request();
        self.feed(Event::ToolDone(outcome))
    }

    /// A tool hook (`PreToolUse`, `PostToolUse`) of call `id` reports.
    pub fn tool_hook(self, hook_event: HookEventName, id: &str, verdict: Verdict) -> Self {
        let (runs, request) = (hook_runs(verdict), self.request());
        self.feed(Event::HookDone { hook_event, tool_use_id: Some(id.into()), runs, request })
    }

    /// The Stop hooks report.
    pub fn stop_hooks(self, verdict: Verdict) -> Self {
        let (runs, request) = (hook_runs(verdict), self.request());
        self.feed(Event::HookDone { hook_event: HookEventName::Stop, tool_use_id: None, runs, request })
    }

    // Compaction.

    /// The summary request in flight returns its summary.
    pub fn summary(self) -> Self {
        let request = self.request();
        self.feed(Event::CompactDone {
            summary: "<summary>s</summary>".into(),
            usage: usage(100, 20),
            request,
            given_back: None,
        })
    }

    /// The summary request in flight fails.
    pub fn summary_fails(self) -> Self {
        let request = self.request();
        self.feed(Event::CompactFailed { error: ModelError::new(Some(500), "api_error", "boom"), request })
    }
}

pub fn usage(input_tokens: u64, output_tokens: u64) -> Usage {
    Usage { input_tokens, output_tokens, ..Usage::default() }
}

pub fn overloaded() -> ModelError {
    ModelError::new(Some(529), "overloaded_error", "Overloaded")
}

pub fn server_error() -> ModelError {
    ModelError::new(Some(500), "api_error", "Internal server error")
}

pub fn too_long() -> ModelError {
    ModelError::new(Some(400), "invalid_request_error", "prompt is too long: 300000 tokens > 200000 maximum")
}
