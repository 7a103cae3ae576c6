//! The facts of a session a person debugs with, gathered once from its steps: which prompt each
//! step belongs to, every model request with its tokens, cost and duration, every tool call with
//! the input that matters and its result. `why`, `view` and `diff` all read the session through
//! this, so they agree on what a turn cost and what a call did.

use std::collections::BTreeMap;

use reloop_core::{Command, ContentBlock, Effect, Event, Usage};
use reloop_journal::{SessionHeader, StepRecord};
use serde::Serialize;
use serde_json::Value;

pub use crate::spend::{PriceFn, Spend};

/// One model request, retries and compaction summaries included.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RequestFacts {
    /// The request's number in the session (1-based, as the core counts them).
    pub number: u32,
    /// The prompt it served (1-based; 0 before any prompt).
    pub prompt: u32,
    /// The turn it belongs to.
    pub turn: u32,
    /// The step that asked for it.
    pub seq: u64,
    /// The step that answered it (a response, a failure or a summary).
    pub done_seq: Option<u64>,
    /// The model that answered it (its response's `model`), which its cost is priced at; until
    /// answered, or when the response named none, the model asked.
    pub model: String,
    /// The model the request asked for (a fallback shows here): a server may answer with
    /// another (a proxy routing elsewhere, a cassette recorded from another model).
    pub requested_model: String,
    /// How many messages it carried: how the history grew.
    pub message_count: usize,
    /// Its cap on output tokens.
    pub max_tokens: u32,
    /// What its response reported using (zero until it is answered).
    pub usage: Usage,
    /// What it cost at the binary's prices; `None` (`null`) when its model has none.
    pub cost_usd: Option<f64>,
    /// From the step that asked to the step that answered, by the journal's clock.
    pub duration_ms: Option<u64>,
    /// `end_turn`, `tool_use`, `failed: overloaded_error`, `summary`, `in flight`.
    pub outcome: String,
    /// A compaction's summary request rather than a turn's.
    pub summary: bool,
    /// What it cost priced at the model asked, as the run's own result counts it (Claude Code's
    /// `total_cost_usd`, and reloop's run after it); `None` when that model has no price.
    #[serde(skip)]
    pub asked_cost_usd: Option<f64>,
}

/// One tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCallFacts {
    /// The `tool_use` id that ties the call to its result.
    pub id: String,
    /// The tool called.
    pub name: String,
    /// The input the model gave it.
    pub input: Value,
    /// The input that matters, in a few words: the command, the path, the pattern.
    pub key: String,
    /// The prompt the call was made in.
    pub prompt: u32,
    /// The turn the call was made in.
    pub turn: u32,
    /// The step whose `model_block` held the call.
    pub seq: u64,
    /// The step whose `tool_done` answered it.
    pub done_seq: Option<u64>,
    /// The result's text (`None` until answered, or when gathered without payloads).
    pub result: Option<String>,
    /// Whether the result is an error the model was shown.
    pub is_error: bool,
    /// Whether the call was refused rather than run.
    pub denied: bool,
    /// From the call to its result, by the journal's clock.
    pub duration_ms: Option<u64>,
}

/// What one turn of one prompt cost.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TurnFacts {
    /// The prompt the turn belongs to.
    pub prompt: u32,
    /// The turn's number within its prompt.
    pub turn: u32,
    /// The turn's first step.
    pub first_seq: u64,
    /// The turn's last step.
    pub last_seq: u64,
    /// Model requests the turn made, retries included.
    pub requests: u32,
    /// Requests that failed (retried, fallen back from, or final).
    pub failed: u32,
    /// The tokens the turn's requests used, by kind, and what they cost at the binary's prices.
    #[serde(flatten)]
    pub spend: Spend,
    /// The turn's own time, by the journal's clock: from the step that began it (the one that
    /// ended the turn before and asked this turn's model, or the prompt) to its last step, less
    /// any time the session stood still inside it (a resume, a fork, a queue's wait).
    pub duration_ms: u64,
}

/// One prompt (a query): the user's text and where it starts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PromptFacts {
    /// The prompt's number in the session, from 1.
    pub number: u32,
    /// The step that took it in.
    pub seq: u64,
    /// What the user wrote.
    pub text: String,
}

/// Everything above for one session, plus what step belongs to which prompt.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Facts {
    /// The session's prompts, in order.
    pub prompts: Vec<PromptFacts>,
    /// Its model requests, in the order they were asked for.
    pub requests: Vec<RequestFacts>,
    /// Its tool calls, in the order the model made them.
    pub tools: Vec<ToolCallFacts>,
    /// Its turns, in order.
    pub turns: Vec<TurnFacts>,
    /// The prompt of each step, by its index in the steps given.
    #[serde(skip)]
    pub(crate) prompt_of: Vec<u32>,
    /// Steps the importer inferred (no line of the transcript held them), with what it did.
    pub inferred: BTreeMap<u64, String>,
    /// Where the first and the latest call of each id are in `tools`, and each turn in `turns`:
    /// `why` looks one up per line, and a search through them made it quadratic in the
    /// session's length.
    #[serde(skip)]
    tool_at: BTreeMap<String, (usize, usize)>,
    #[serde(skip)]
    turn_at: BTreeMap<(u32, u32), usize>,
    /// An import: its transcript says which model answered, not which was asked.
    #[serde(skip)]
    pub(crate) imported: bool,
}

impl Facts {
    /// Gathers the facts of `steps` (a whole session, in order).
    pub fn gather(header: &SessionHeader, steps: &[StepRecord], price: PriceFn<'_>) -> Facts {
        let mut gatherer = FactsGatherer::new(header, price);
        for step in steps {
            gatherer.step(step);
        }
        gatherer.finish()
    }

    /// The tool call with this id.
    pub(crate) fn tool(&self, id: &str) -> Option<&ToolCallFacts> {
        self.tool_at.get(id).and_then(|&(first, _)| self.tools.get(first))
    }

    /// The turn facts of one prompt's turn.
    pub fn turn(&self, prompt: u32, turn: u32) -> Option<&TurnFacts> {
        self.turn_at.get(&(prompt, turn)).and_then(|&i| self.turns.get(i))
    }

    /// Tokens and cost of the whole session.
    pub fn totals(&self) -> Spend {
        let mut spend = Spend::default();
        for r in &self.requests {
            spend.add(&r.model, &r.usage, r.cost_usd);
        }
        spend
    }

    /// The session's responses priced at the model each asked, as the run's own result counts
    /// them; `None` when such a model has no price.
    pub fn asked_cost_usd(&self) -> Option<f64> {
        self.requests.iter().map(|r| if r.usage == Usage::default() { Some(0.0) } else { r.asked_cost_usd }).sum()
    }

    /// When the run's own result said another cost than `shown` (this session's, priced at the
    /// models that answered, plus whatever else the view adds, a subagent's): the words saying
    /// so, for every view that shows the cost, so none disagrees with the run's result silently.
    pub fn reported_cost_words(&self, shown: Option<f64>) -> Option<String> {
        let shown = shown?;
        let reported = shown - self.totals().cost_usd()? + self.asked_cost_usd()?;
        (format!("{reported:.4}") != format!("{shown:.4}"))
            .then(|| format!("reported by the run: ${reported:.4}, priced as the model asked"))
    }
}

/// [`Facts::gather`] a step at a time, so `why` reads a session of any length without holding
/// its steps: what it keeps of each step is a few numbers (its prompt and turn).
pub struct FactsGatherer<'a> {
    facts: Facts,
    header: &'a SessionHeader,
    cwd: &'a str,
    price: PriceFn<'a>,
    prompt: u32,
    request_index: BTreeMap<u32, usize>,
    /// When each call last started (by `tools`' index): for its duration.
    started_at: Vec<Option<u64>>,
    /// When each request was asked (by `requests`' index): for its duration.
    asked_at: Vec<u64>,
    /// When each turn's first step was (by `turns`' index): for its duration.
    turn_first_at: Vec<u64>,
    /// Per turn (as `turn_first_at`), the time the session stood still inside it: from the step
    /// before a restart (`Resumed`: a resume, a fork point, a worker claiming a queued session) to
    /// the restart. A fork's copied steps keep the parent's times and a queued session's prompt
    /// its enqueuing's, so without it a first turn counts the wait before the fork or the claim.
    turn_paused: Vec<u64>,
    /// The time of the step before this one.
    last_at: Option<u64>,
    /// The turn the last step began by ending the one before (its prompt and number), and when:
    /// that turn's time starts there, with its model request, not at its first step of its own
    /// (the answer's first event), which would leave out the wait for the model.
    opened: Option<(u32, u32, u64)>,
    /// Tool calls keep their input and result (see [`FactsGatherer::without_payloads`]).
    payloads: bool,
}

impl<'a> FactsGatherer<'a> {
    /// A gathering of the facts of the session `header` describes, priced by `price`.
    pub fn new(header: &'a SessionHeader, price: PriceFn<'a>) -> Self {
        FactsGatherer {
            facts: Facts { inferred: inferred_steps(header), imported: source(header) == "import", ..Facts::default() },
            header,
            cwd: header.run_config.get("cwd").and_then(Value::as_str).unwrap_or_default(),
            price,
            prompt: 0,
            request_index: BTreeMap::new(),
            started_at: Vec::new(),
            asked_at: Vec::new(),
            turn_first_at: Vec::new(),
            turn_paused: Vec::new(),
            last_at: None,
            opened: None,
            payloads: true,
        }
    }

    /// Tool calls keep neither their input nor their result (`input` is null, `result` none;
    /// `done_seq` still says whether a call was answered): for a reader that names calls but
    /// shows no payload (`why`), whose memory would otherwise hold every output of the session.
    pub fn without_payloads(mut self) -> Self {
        self.payloads = false;
        self
    }

    /// The next step of the session, in order.
    pub fn step(&mut self, step: &StepRecord) {
        // The request in flight when this step came: a legacy answer's (see `answer` below);
        // this step's own effects may ask the next.
        let in_flight = self.facts.requests.len().checked_sub(1);
        let mut starts_prompt = false;
        if let Event::UserInput { content, origin, .. } = &step.event {
            if matches!(step.from_phase.as_str(), "idle" | "done") && step.ignored.is_none() {
                self.prompt += 1;
                let text = prompt_text(content, origin.as_ref());
                self.facts.prompts.push(PromptFacts { number: self.prompt, seq: step.seq, text });
                starts_prompt = true;
            }
        }
        self.facts.prompt_of.push(self.prompt);
        self.turn_step(step, starts_prompt);
        let effects: Vec<Effect> = serde_json::from_value(step.effects.clone()).unwrap_or_default();
        for effect in &effects {
            match effect {
                Effect::Command(Command::CallModel(call)) => {
                    // A request asked again after a restart (a resume, a fork point) is
                    // the same request: the earlier asking was never answered.
                    if let Some(earlier) =
                        self.request_index.get(&call.request).and_then(|&i| self.facts.requests.get_mut(i))
                    {
                        earlier.outcome = format!("asked again at #{}", step.seq);
                    }
                    self.request_index.insert(call.request, self.facts.requests.len());
                    self.asked_at.push(step.at_ms);
                    let asked =
                        if call.model.is_empty() { self.header.core_config.model.clone() } else { call.model.clone() };
                    self.facts.requests.push(RequestFacts {
                        number: call.request,
                        prompt: self.prompt,
                        turn: call.turn,
                        seq: step.seq,
                        model: asked.clone(),
                        requested_model: asked,
                        message_count: call.message_count,
                        max_tokens: call.max_tokens,
                        outcome: "in flight".to_string(),
                        cost_usd: Some(0.0),
                        ..RequestFacts::default()
                    });
                }
                Effect::Command(Command::Summarize { request, .. }) => {
                    self.request_index.insert(*request, self.facts.requests.len());
                    self.asked_at.push(step.at_ms);
                    self.facts.requests.push(RequestFacts {
                        number: *request,
                        prompt: self.prompt,
                        turn: step.turn_after,
                        seq: step.seq,
                        model: self.header.core_config.model.clone(),
                        requested_model: self.header.core_config.model.clone(),
                        outcome: "in flight".to_string(),
                        cost_usd: Some(0.0),
                        summary: true,
                        ..RequestFacts::default()
                    });
                }
                Effect::Command(Command::RunTools { calls } | Command::ResumeTools { calls, .. }) => {
                    for call in calls {
                        let latest = self.facts.tool_at.get(&call.id).map(|&(_, latest)| latest);
                        if let Some(started) = latest.and_then(|i| self.started_at.get_mut(i)) {
                            *started = Some(step.at_ms);
                        }
                    }
                }
                _ => {}
            }
        }
        if step.ignored.is_some() {
            return;
        }
        let mut answer = |request: u32, outcome: String, usage: Option<&Usage>, model: Option<&String>| {
            // A journal written before correlation ids (digest version 1) answers with request
            // 0: the one in flight, the latest asked before this step. Dropping it left such a
            // session's page at 0 tokens while the list, which sums the answers, said 300.
            let found = match request {
                0 => in_flight,
                n => self.request_index.get(&n).copied(),
            };
            let Some(i) = found else { return };
            let (Some(r), Some(&asked)) = (self.facts.requests.get_mut(i), self.asked_at.get(i)) else { return };
            if let Some(model) = model {
                r.model = model.clone();
            }
            if let Some(usage) = usage {
                r.usage = usage.clone();
                // A response that used nothing cost nothing, whatever its model's price.
                r.cost_usd = if *usage == Usage::default() { Some(0.0) } else { (self.price)(&r.model, usage) };
                r.asked_cost_usd =
                    if *usage == Usage::default() { Some(0.0) } else { (self.price)(&r.requested_model, usage) };
            }
            r.outcome = outcome;
            r.done_seq = Some(step.seq);
            r.duration_ms = step.at_ms.checked_sub(asked);
        };
        match &step.event {
            Event::ModelDone { model, stop_reason, usage, request, .. } => {
                let outcome = stop_reason.as_ref().map_or("done".to_string(), |s| s.as_str().to_string());
                answer(*request, outcome, Some(usage), model.as_ref());
            }
            Event::ModelFailed { error, request } | Event::CompactFailed { error, request } => {
                answer(*request, format!("failed: {}", error.error_type), None, None);
            }
            Event::CompactDone { usage, request, .. } => answer(*request, "summary".to_string(), Some(usage), None),
            Event::ModelBlock { block: ContentBlock::ToolUse(call), .. } => {
                let at = self.facts.tools.len();
                self.facts.tool_at.entry(call.id.clone()).and_modify(|(_, latest)| *latest = at).or_insert((at, at));
                self.started_at.push(None);
                self.facts.tools.push(ToolCallFacts {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    key: relative(&tool_key(&call.name, &call.input), self.cwd),
                    input: if self.payloads { call.input.clone() } else { Value::Null },
                    prompt: self.prompt,
                    turn: step.turn_before,
                    seq: step.seq,
                    done_seq: None,
                    result: None,
                    is_error: false,
                    denied: false,
                    duration_ms: None,
                });
            }
            Event::ToolDone(outcome) => {
                let latest = self.facts.tool_at.get(&outcome.tool_use_id).map(|&(_, latest)| latest);
                if let Some(t) = latest.and_then(|i| self.facts.tools.get_mut(i)) {
                    let started = latest.and_then(|i| self.started_at.get(i).copied().flatten());
                    t.done_seq = Some(step.seq);
                    t.result = self.payloads.then(|| outcome.content.as_text());
                    t.is_error = outcome.is_error;
                    t.denied = outcome.denied;
                    t.duration_ms = started.and_then(|start| step.at_ms.checked_sub(start));
                }
            }
            _ => {}
        }
    }

    /// Puts the step in its turn (a turn is the steps of one prompt with one `turn_before`; a
    /// new prompt's step starts its first turn, it does not end the last query's), so a turn's
    /// first and last steps are known without keeping every step.
    fn turn_step(&mut self, step: &StepRecord, starts_prompt: bool) {
        let turn = if starts_prompt { step.turn_after } else { step.turn_before };
        let stood_still = match (&step.event, self.last_at.replace(step.at_ms)) {
            (Event::Resumed, Some(before)) => step.at_ms.saturating_sub(before),
            _ => 0,
        };
        let facts = &mut self.facts;
        match facts.turn_at.get(&(self.prompt, turn)).copied() {
            Some(at) => {
                if let Some(paused) = self.turn_paused.get_mut(at) {
                    *paused += stood_still;
                }
                let paused = self.turn_paused.get(at).copied().unwrap_or(0);
                if let (Some(t), Some(&first_at)) = (facts.turns.get_mut(at), self.turn_first_at.get(at)) {
                    t.last_seq = step.seq;
                    t.duration_ms = step.at_ms.saturating_sub(first_at).saturating_sub(paused);
                }
            }
            None => {
                // Begun by the step before (it ended the last turn and asked this one's model):
                // the turn's time starts there, and a restart between the two is inside it.
                let (first_at, paused) = match self.opened {
                    Some((prompt, opened, at)) if (prompt, opened) == (self.prompt, turn) && !starts_prompt => {
                        (at.min(step.at_ms), stood_still)
                    }
                    _ => (step.at_ms, 0),
                };
                facts.turn_at.insert((self.prompt, turn), facts.turns.len());
                facts.turns.push(TurnFacts {
                    prompt: self.prompt,
                    turn,
                    first_seq: step.seq,
                    last_seq: step.seq,
                    duration_ms: step.at_ms.saturating_sub(first_at).saturating_sub(paused),
                    ..TurnFacts::default()
                });
                self.turn_first_at.push(first_at);
                self.turn_paused.push(paused);
            }
        }
        self.opened = (step.turn_after != turn).then_some((self.prompt, step.turn_after, step.at_ms));
    }

    /// The facts of every step given: each turn's requests counted in it.
    pub fn finish(self) -> Facts {
        let mut facts = self.facts;
        for r in &facts.requests {
            let asked_again = r.outcome.starts_with("asked again");
            let at = facts.turn_at.get(&(r.prompt, r.turn)).copied().filter(|_| !asked_again);
            if let Some(t) = at.and_then(|at| facts.turns.get_mut(at)) {
                t.requests += 1;
                t.failed += u32::from(r.outcome.starts_with("failed"));
                t.spend.add(&r.model, &r.usage, r.cost_usd);
            }
        }
        facts
    }
}

/// Paths under the session's working directory, relative to it: shorter, and the same on
/// every machine.
fn relative(key: &str, cwd: &str) -> String {
    if cwd.is_empty() {
        return key.to_string();
    }
    key.replace(&format!("{}/", cwd.trim_end_matches('/')), "")
}

/// What a prompt says: its text ([`text_of`]), or for a background agent's notification (flag
/// 44, its `origin` naming the run), which is all reminders, what it tells.
pub fn prompt_text(content: &[ContentBlock], origin: Option<&Value>) -> String {
    let told = reloop_core::profile::notified_run(origin).and_then(|_| {
        content.iter().find_map(|b| match b {
            ContentBlock::Text(t) => reloop_core::profile::told_summary(&t.text),
            _ => None,
        })
    });
    match told {
        Some(told) => format!("(task notification) {told}"),
        None => text_of(content),
    }
}

/// The text of a prompt's blocks, joined; the context reloop or Claude Code puts before the
/// user's words (`<system-reminder>` blocks) is not what the person typed.
pub fn text_of(content: &[ContentBlock]) -> String {
    content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text(t) if !t.text.trim_start().starts_with("<system-reminder>") => Some(t.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The input of a call that tells a person what it did: Bash's command, a file tool's path,
/// a search's pattern (and where); for other tools, their first short string field.
pub(crate) fn tool_key(name: &str, input: &Value) -> String {
    let field = |k: &str| input.get(k).and_then(Value::as_str);
    let key = match name {
        "Bash" => field("command").map(str::to_string),
        "Read" | "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => {
            field("file_path").or_else(|| field("notebook_path")).map(str::to_string)
        }
        "Grep" | "Glob" => field("pattern").map(|p| match field("path") {
            Some(path) => format!("{p:?} in {path}"),
            None => format!("{p:?}"),
        }),
        "WebFetch" => field("url").map(str::to_string),
        "WebSearch" => field("query").map(str::to_string),
        "Task" | "Agent" => field("description").map(str::to_string),
        _ => None,
    };
    let key = key
        .or_else(|| input.as_object()?.values().find_map(|v| v.as_str().filter(|s| !s.is_empty()).map(str::to_string)));
    shorten(&key.unwrap_or_default(), 80)
}

/// One line of at most `most` characters, with an ellipsis when cut.
pub fn shorten(text: &str, most: usize) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(most) {
        Some((at, _)) => format!("{}…", &one_line[..at]),
        None => one_line,
    }
}

/// The importer's list of the steps it inferred (`run_config.inferred`: `[{seq, what}]`).
fn inferred_steps(header: &SessionHeader) -> BTreeMap<u64, String> {
    header
        .run_config
        .get("inferred")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter().filter_map(|i| Some((i.get("seq")?.as_u64()?, i.get("what")?.as_str()?.to_string()))).collect()
        })
        .unwrap_or_default()
}

/// `1.4 s`, `320 ms`, `2 min 5 s`.
pub(crate) fn duration(ms: u64) -> String {
    match ms {
        0..=999 => format!("{ms} ms"),
        1_000..=59_999 => format!("{:.1} s", ms as f64 / 1000.0),
        _ => format!("{} min {} s", ms / 60_000, (ms % 60_000) / 1000),
    }
}

/// Where a session came from: `run`, `fork`, `import`.
/// Whose rules decided the session's steps, in words: the profile, and for an import whether it
/// is the transcript's own Claude Code version or the nearest known one.
pub fn rules_words(header: &SessionHeader) -> String {
    let profile = header.core_config.profile;
    let version = header.run_config.get("version").and_then(Value::as_str).filter(|_| source(header) == "import");
    match version.map(|v| (v, reloop_core::profile::ProfileId::nearest(v))) {
        Some((v, Some((p, true)))) if p == profile => format!("{} (the transcript's Claude Code {v})", profile.name()),
        Some((v, Some((p, false)))) if p == profile => {
            format!("{}, the nearest known to the transcript's Claude Code {v}", profile.name())
        }
        Some((v, _)) => format!("{} (the transcript's Claude Code {v} has no profile)", profile.name()),
        None if source(header) == "import" => {
            format!("{}: the transcript names no Claude Code version", profile.name())
        }
        None => profile.name().to_string(),
    }
}

/// Where the session came from: `rerun` (of its parent, a recording), `fork`, `import` or `run`.
pub fn source(header: &SessionHeader) -> &'static str {
    let provider = header.run_config.get("provider").and_then(Value::as_str);
    if header.parent.is_some() && provider == Some("rerun") {
        "rerun"
    } else if header.parent.is_some() {
        "fork"
    } else if header.run_config.get("provider").and_then(Value::as_str) == Some("import") {
        "import"
    } else {
        "run"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With a second between steps, every second of a session is some turn's, except the
    /// wait before each prompt after the first (the session was idle, not working) and the
    /// time it stood still before a restart: a turn's time runs from the step that began it,
    /// its model request included.
    #[test]
    fn the_turns_times_add_up_to_the_sessions_time_at_work() {
        let price = |_: &str, _: &Usage| Some(0.0);
        let mut checked = 0;
        for (header, mut steps) in crate::test_corpus::sessions() {
            for (i, step) in steps.iter_mut().enumerate() {
                step.at_ms = 1_000 * i as u64;
            }
            let facts = Facts::gather(&header, &steps, &price);
            let restarts = steps.iter().filter(|s| matches!(s.event, Event::Resumed)).count() as u64;
            let prompts = facts.prompts.len().max(1) as u64;
            let whole = 1_000 * (steps.len() as u64 - 1);
            let counted: u64 = facts.turns.iter().map(|t| t.duration_ms).sum();
            assert_eq!(counted, whole - 1_000 * (prompts - 1 + restarts), "{}: {:?}", header.id, facts.turns);
            checked += 1;
        }
        assert!(checked >= 10);
    }

    /// The demo's second turn: asked at the first turn's last step (the tool's result), answered
    /// 700 ms later. Its time holds that wait; before, it began at the answer's first event.
    #[test]
    fn a_turn_holds_the_wait_for_its_model() {
        let price = |_: &str, _: &Usage| Some(0.0);
        let (header, mut steps) = crate::test_corpus::sessions()
            .into_iter()
            .find(|(_, steps)| steps.iter().filter(|s| s.turn_after != s.turn_before).count() >= 2)
            .expect("a session of three turns");
        let opener =
            steps.iter().position(|s| s.turn_after != s.turn_before && s.turn_before == 1).expect("turn 1 -> 2");
        let base = steps[0].at_ms;
        for (i, step) in steps.iter_mut().enumerate() {
            step.at_ms = base + if i > opener { 700 } else { 0 };
        }
        let facts = Facts::gather(&header, &steps, &price);
        let second = facts.turns.iter().find(|t| t.turn == 2).expect("turn 2");
        assert_eq!(second.duration_ms, 700, "{:?}", facts.turns);
        assert_eq!(facts.turns[0].duration_ms, 0);
    }
    /// Every answer's usage is counted once, journals written before correlation ids (whose
    /// answers name request 0) included: a summary's answer is its own request's, not the next
    /// one asked in the same step.
    #[test]
    fn the_totals_count_every_answers_usage_once() {
        let price = |_: &str, _: &Usage| Some(0.0);
        let mut legacy = 0;
        for (header, steps) in crate::test_corpus::sessions() {
            let (mut input, mut output) = (0, 0);
            for s in steps.iter().filter(|s| s.ignored.is_none()) {
                if let Event::ModelDone { usage, request, .. } | Event::CompactDone { usage, request, .. } = &s.event {
                    (input, output) = (input + usage.input_tokens, output + usage.output_tokens);
                    legacy += usize::from(*request == 0);
                }
            }
            let spend = Facts::gather(&header, &steps, &price).totals();
            assert_eq!((spend.input_tokens, spend.output_tokens), (input, output), "{}", header.id);
        }
        assert!(legacy > 0, "the corpus holds journals without correlation ids");
    }

    #[test]
    fn facts_without_payloads_are_the_facts_with_their_calls_inputs_and_results_left_out() {
        let price = |_: &str, u: &Usage| Some(u.output_tokens as f64 * 1e-6);
        let mut calls = 0;
        for (header, steps) in crate::test_corpus::sessions() {
            let mut lean = FactsGatherer::new(&header, &price).without_payloads();
            steps.iter().for_each(|s| lean.step(s));
            let lean = lean.finish();
            let mut whole = Facts::gather(&header, &steps, &price);
            assert!(lean.tools.iter().all(|t| t.input.is_null() && t.result.is_none()), "{}", header.id);
            calls += whole.tools.len();
            for t in &mut whole.tools {
                (t.input, t.result) = (Value::Null, None);
            }
            assert_eq!(lean, whole, "{}", header.id);
        }
        assert!(calls > 10, "the corpus calls tools ({calls})");
    }
}
