//! Rerunning a recorded session: its model answers come from the journal, request by request,
//! while tools, hooks and permissions run live against today's workspace.
//!
//! Before answering request N, the [`RecordedProvider`] compares the messages reloop would send
//! now with the ones the recorded session sent as request N (rebuilt from its journal). The first
//! difference stops the rerun with a typed [`RerunDivergence`] — a tool result changed, a call was
//! refused otherwise, an injected text differs, the conversation took another shape, or the rerun
//! asked for more than the recording holds — unless a live provider takes over from there
//! (`--then-live`). Tools named as recorded (`--recorded-tools Bash`) are not run again: each call
//! gets the result its tool gave in the recording, in order ([`RecordedTool`]).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use futures::stream::{self, BoxStream, StreamExt};
use reloop_core::compact::shape::summary_request;
use reloop_core::Fold;
use reloop_core::{Command, ContentBlock, Effect, Event, History, Message, ModelError, Role};
use reloop_journal::{JournalBackend, JournalError, SessionHeader, StepRecord};
use reloop_model::{ModelProvider, ModelRequest, StreamEvent};
use reloop_tools::{Tool, ToolContext, ToolOutput};
use serde::Serialize;
use serde_json::Value;

/// The error type a rerun's model failure carries when it stops at a divergence.
pub(crate) const RERUN_DIVERGED: &str = "rerun_diverged";

/// The code of a rerun's divergence (`RELOOP-R001`) when `stop` is one: the journal records
/// it as a failed model request of type `rerun_diverged` (so journals written before reruns
/// existed, and since, replay as they were), but it is the rerun's own verdict, and is told so.
pub fn diverged_code(stop: &reloop_core::Stop) -> Option<&str> {
    match stop {
        reloop_core::Stop::ModelError(reloop_core::Failure::Request(f)) if f.error_type == RERUN_DIVERGED => {
            Some(f.message.split_once(": ").map_or(f.message.as_str(), |(code, _)| code))
        }
        _ => None,
    }
}

/// A rerun's stop at a divergence in its own words, the step `seq` that took it named:
/// `rerun diverged: RELOOP-R001 at step 5: message 3 (user), block 1: the result of toolu_read
/// changed`. `None` for any other stop.
pub fn diverged_words(stop: &reloop_core::Stop, seq: u64) -> Option<String> {
    let reloop_core::Stop::ModelError(reloop_core::Failure::Request(f)) = stop else { return None };
    let code = diverged_code(stop)?;
    let what = f.message.split_once(": ").map_or("", |(_, what)| what);
    Some(match what {
        "" => format!("rerun diverged: {code} at step {seq}"),
        what => format!("rerun diverged: {code} at step {seq}: {what}"),
    })
}

/// What a recorded session holds for a rerun.
#[derive(Debug, Clone, Default)]
pub struct Recording {
    /// Request number → the messages it carried (histories share their messages).
    requests: HashMap<u32, History>,
    /// Request number → what the model streamed back.
    answers: HashMap<u32, Vec<StreamEvent>>,
    /// Tool name → its results in call order (content, is_error).
    tool_results: HashMap<String, VecDeque<(String, bool)>>,
    /// The prompts of the recorded queries, in order.
    pub prompts: Vec<Vec<ContentBlock>>,
    /// What local commands said before each prompt ([`Event::UserInput`]'s `local`), sent
    /// with it again so its requests carry them as the recorded ones did.
    pub local_lines: Vec<Vec<reloop_core::local_lines::LocalLine>>,
    /// The compactions asked for by hand between queries (`/compact`): how many went before
    /// each prompt (`[i]`), and after the last (`[prompts.len()]`).
    pub compactions: Vec<u32>,
}

impl Recording {
    /// How many compactions by hand went before prompt `n` (`n` = the prompts' count: after the
    /// last one).
    pub fn compactions_before(&self, n: usize) -> u32 {
        self.compactions.get(n).copied().unwrap_or(0)
    }
}

impl Recording {
    /// Reads recorded session `id` as `journal` hands its steps over, none held: the core
    /// replays it to learn what each request carried.
    pub fn read(journal: &dyn JournalBackend, header: &SessionHeader, id: &str) -> Result<Self, JournalError> {
        let mut reader = RecordingReader::new(header);
        journal.visit_steps(id, &mut |record| {
            reader.push(&record);
            Ok(true)
        })?;
        Ok(reader.finish())
    }

    fn answer(&mut self, request: u32) -> &mut Vec<StreamEvent> {
        self.answers.entry(request).or_default()
    }

    /// The recording as if it had been made where `map` puts its roots: every request's
    /// messages, every answer (the model's tool calls name today's paths), every recorded
    /// tool result, and the prompts (a prompt naming a file names today's, as the recorded
    /// requests it starts now do).
    pub fn map_paths(&mut self, map: &crate::rerun_paths::PathMap) {
        if map.is_empty() {
            return;
        }
        for prompt in &mut self.prompts {
            *prompt = prompt.iter().map(|block| map.item(block)).collect();
        }
        for history in self.requests.values_mut() {
            let messages: Vec<Message> = history.messages().into_iter().map(|m| map.item(m)).collect();
            *history = history.empty_like().extended(messages);
        }
        for answer in self.answers.values_mut() {
            for event in answer.iter_mut() {
                match event {
                    StreamEvent::Block { block, .. } => *block = map.item(block),
                    StreamEvent::TextDelta { text, .. } => *text = map.text(text),
                    _ => {}
                }
            }
        }
        for results in self.tool_results.values_mut() {
            for (content, _) in results.iter_mut() {
                *content = map.text(content);
            }
        }
    }

    /// The recorded results of `tool`'s calls, in order.
    pub fn tool_results(&self, tool: &str) -> VecDeque<(String, bool)> {
        self.tool_results.get(tool).cloned().unwrap_or_default()
    }
}

/// A recording read a step at a time.
struct RecordingReader {
    recording: Recording,
    fold: Fold,
    names: HashMap<String, String>,
}

impl RecordingReader {
    fn new(header: &SessionHeader) -> Self {
        RecordingReader { recording: Recording::default(), fold: Fold::new(&header.core_config), names: HashMap::new() }
    }

    fn push(&mut self, record: &StepRecord) {
        let (recording, names) = (&mut self.recording, &mut self.names);
        match &record.event {
            Event::UserInput { content, local, .. } => {
                recording.prompts.push(content.clone());
                recording.local_lines.push(local.clone());
                recording.compactions.resize(recording.prompts.len() + 1, 0);
            }
            // A `/compact` typed between queries that compacted (one refused is not asked again).
            Event::CompactRequested if record.from_phase == "done" && record.to_phase == "compacting" => {
                let after = recording.prompts.len();
                recording.compactions.resize(after + 1, 0);
                recording.compactions[after] += 1;
            }
            Event::ModelBlock { index, block, request } => {
                if let ContentBlock::ToolUse(call) = block {
                    names.insert(call.id.clone(), call.name.clone());
                }
                recording.answer(*request).push(StreamEvent::Block { index: *index, block: block.clone() });
            }
            Event::TextDelta { index, text, request } => {
                recording.answer(*request).push(StreamEvent::TextDelta { index: *index, text: text.clone() });
            }
            Event::ModelDone { id, model, stop_reason, usage, request } => {
                recording.answer(*request).push(StreamEvent::Done {
                    id: id.clone(),
                    model: model.clone(),
                    stop_reason: stop_reason.clone(),
                    usage: usage.clone(),
                });
            }
            Event::ModelFailed { error, request } | Event::CompactFailed { error, request } => {
                recording.answer(*request).push(StreamEvent::Failed(error.clone()))
            }
            // A compaction's summary came back as one text, read so again.
            Event::CompactDone { summary, usage, request, .. } => {
                let answer = recording.answer(*request);
                answer.push(StreamEvent::Block { index: 0, block: ContentBlock::text(summary.clone()) });
                answer.push(StreamEvent::Done { id: None, model: None, stop_reason: None, usage: usage.clone() });
            }
            Event::ToolDone(outcome) => {
                if let Some(name) = names.get(&outcome.tool_use_id) {
                    let result = (outcome.content.as_text(), outcome.is_error);
                    recording.tool_results.entry(name.clone()).or_default().push_back(result);
                }
            }
            _ => {}
        }
        self.fold.push(record.seq, record.event.clone(), |step| {
            for effect in &step.effects {
                match effect {
                    Effect::Command(Command::CallModel(call)) => {
                        recording.requests.insert(call.request, step.state.messages().clone());
                    }
                    // The summary request carries what the driver shapes from the history.
                    Effect::Command(Command::Summarize { request, summarize, truncated, date_last, .. }) => {
                        let rule = step.state.context().config().compact_rule();
                        let shape = reloop_core::compact::shape::shape_of(*truncated, *date_last);
                        let latest = step.state.context().config().flag(reloop_core::Flag::ClaudeCodeCompactionEnds);
                        let messages = summary_request(step.state.messages(), *summarize, shape, &rule, latest);
                        recording.requests.insert(*request, messages);
                    }
                    _ => {}
                }
            }
        });
    }

    fn finish(self) -> Recording {
        let mut recording = self.recording;
        // A failed attempt's blocks were abandoned: only what followed its last failure counts.
        for events in recording.answers.values_mut() {
            if let Some(last_failure) = events.iter().rposition(|e| matches!(e, StreamEvent::Failed(_))) {
                if last_failure + 1 < events.len() {
                    events.drain(..=last_failure);
                }
            }
        }
        recording
    }
}

/// Where and how a rerun parted from the recording.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RerunDivergence {
    /// `RELOOP-R001` a tool result changed, `-R002` a call was refused (or let through)
    /// otherwise, `-R003` an injected text differs (a hook's feedback, a reminder), `-R004` the
    /// conversation has another shape, `-R005` the recording holds no such request.
    pub code: &'static str,
    /// The request that would have been sent.
    pub request: u32,
    /// One line.
    pub summary: String,
    /// The difference, `diff`-style (`- recorded`, `+ now`).
    pub diff: Vec<String>,
}

/// Compares what request `request` carries now with what it carried in the recording.
pub(crate) fn compare(request: u32, recorded: &[&Message], now: &[&Message]) -> Option<RerunDivergence> {
    let shape = |m: &[&Message]| m.iter().map(|m| (m.role, m.content.len())).collect::<Vec<_>>();
    for (i, (was, is)) in recorded.iter().zip(now).enumerate() {
        if was == is {
            continue;
        }
        if was.role != is.role || was.content.len() != is.content.len() {
            break;
        }
        for (j, (a, b)) in was.content.iter().zip(&is.content).enumerate() {
            if a == b {
                continue;
            }
            let at = format!("message {} ({}), block {}", i + 1, role(was.role), j + 1);
            return Some(match (a, b) {
                (ContentBlock::ToolResult(x), ContentBlock::ToolResult(y)) if x.is_error != y.is_error => {
                    RerunDivergence {
                        code: "RELOOP-R002",
                        request,
                        summary: format!(
                            "{at}: the call {} was {} and now is {}",
                            x.tool_use_id,
                            verdict(x.is_error),
                            verdict(y.is_error)
                        ),
                        diff: lines(&x.content.as_text(), &y.content.as_text()),
                    }
                }
                (ContentBlock::ToolResult(x), ContentBlock::ToolResult(y)) => RerunDivergence {
                    code: "RELOOP-R001",
                    request,
                    summary: format!("{at}: the result of {} changed", x.tool_use_id),
                    diff: lines(&x.content.as_text(), &y.content.as_text()),
                },
                (ContentBlock::Text(x), ContentBlock::Text(y)) => RerunDivergence {
                    code: "RELOOP-R003",
                    request,
                    summary: format!("{at}: the text differs"),
                    diff: lines(&x.text, &y.text),
                },
                _ => shape_divergence(request, &at),
            });
        }
    }
    (shape(recorded) != shape(now)).then(|| {
        let at = format!("{} messages recorded, {} now", recorded.len(), now.len());
        shape_divergence(request, &at)
    })
}

fn shape_divergence(request: u32, at: &str) -> RerunDivergence {
    RerunDivergence {
        code: "RELOOP-R004",
        request,
        summary: format!("the conversation took another shape: {at}"),
        diff: Vec::new(),
    }
}

fn role(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::System => "system",
    }
}

fn verdict(is_error: bool) -> &'static str {
    if is_error {
        "refused or failed"
    } else {
        "answered"
    }
}

/// A line diff of two texts: the lines that differ, at most 40 of them.
fn lines(recorded: &str, now: &str) -> Vec<String> {
    let (a, b): (Vec<&str>, Vec<&str>) = (recorded.lines().collect(), now.lines().collect());
    let mut out = Vec::new();
    for i in 0..a.len().max(b.len()) {
        match (a.get(i), b.get(i)) {
            (Some(x), Some(y)) if x == y => {}
            (x, y) => {
                out.extend(x.map(|x| format!("- {x}")));
                out.extend(y.map(|y| format!("+ {y}")));
            }
        }
        if out.len() >= 40 {
            out.push("  …".to_string());
            break;
        }
    }
    out
}

/// Answers requests from a recording while they match it; then stops the run (or hands over to
/// a live provider).
pub struct RecordedProvider {
    recording: Arc<Recording>,
    live: Option<Arc<dyn ModelProvider>>,
    /// The first divergence met.
    pub divergence: Arc<Mutex<Option<RerunDivergence>>>,
    /// Requests answered from the recording.
    pub matched: Arc<std::sync::atomic::AtomicU32>,
}

impl RecordedProvider {
    /// Answers from `recording`; at the first divergence hands over to `live`, or (with none)
    /// stops the run.
    pub fn new(recording: Arc<Recording>, live: Option<Arc<dyn ModelProvider>>) -> Self {
        RecordedProvider {
            recording,
            live,
            divergence: Arc::new(Mutex::new(None)),
            matched: Arc::new(std::sync::atomic::AtomicU32::new(0)),
        }
    }
}

impl ModelProvider for RecordedProvider {
    fn name(&self) -> &str {
        "rerun"
    }

    fn stream(&self, request: ModelRequest) -> BoxStream<'static, StreamEvent> {
        let number = request.request_number;
        let parted = self.divergence.lock().unwrap_or_else(|p| p.into_inner()).is_some();
        let found = if parted {
            None
        } else {
            match (self.recording.requests.get(&number), self.recording.answers.get(&number)) {
                // Equal digests are equal histories; only a difference is looked at message by message.
                (Some(recorded), Some(answer)) if recorded.digest() == request.messages.digest() => {
                    Some(answer.clone())
                }
                (Some(recorded), Some(answer)) => {
                    match compare(number, &recorded.messages(), &request.messages.messages()) {
                        None => Some(answer.clone()),
                        Some(divergence) => {
                            *self.divergence.lock().unwrap_or_else(|p| p.into_inner()) = Some(divergence);
                            None
                        }
                    }
                }
                _ => {
                    let divergence = RerunDivergence {
                        code: "RELOOP-R005",
                        request: number,
                        summary: format!(
                            "the recorded session made no request {number}: the rerun goes further than it went"
                        ),
                        diff: Vec::new(),
                    };
                    *self.divergence.lock().unwrap_or_else(|p| p.into_inner()) = Some(divergence);
                    None
                }
            }
        };
        if let Some(answer) = found {
            self.matched.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            return stream::iter(answer).boxed();
        }
        match &self.live {
            Some(live) => live.stream(request),
            None => {
                let message = self
                    .divergence
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .as_ref()
                    .map_or_else(String::new, |d| format!("{}: {}", d.code, d.summary));
                stream::iter([StreamEvent::Failed(ModelError::new(None, RERUN_DIVERGED, message))]).boxed()
            }
        }
    }
}

/// A tool whose calls are answered from the recording instead of run: the k-th call gets the
/// k-th recorded result of that tool. Everything else (schema, safety) is the real tool's.
pub struct RecordedTool {
    inner: Arc<dyn Tool>,
    results: Mutex<VecDeque<(String, bool)>>,
}

impl RecordedTool {
    /// Wraps the real tool `inner`, answering its calls from `results` (text, is-error) in order
    /// (see [`Recording::tool_results`]).
    pub fn new(inner: Arc<dyn Tool>, results: VecDeque<(String, bool)>) -> Self {
        RecordedTool { inner, results: Mutex::new(results) }
    }
}

impl Tool for RecordedTool {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn description(&self) -> &str {
        self.inner.description()
    }
    fn input_schema(&self) -> Value {
        self.inner.input_schema()
    }
    fn is_read_only(&self, input: &Value) -> bool {
        self.inner.is_read_only(input)
    }
    fn is_concurrency_safe(&self, input: &Value) -> bool {
        self.inner.is_concurrency_safe(input)
    }
    fn call(&self, _input: &Value, _ctx: &ToolContext) -> ToolOutput {
        match self.results.lock().unwrap_or_else(|p| p.into_inner()).pop_front() {
            Some((content, false)) => ToolOutput::ok(content),
            Some((content, true)) => ToolOutput::error(content),
            None => ToolOutput::error(format!(
                "<tool_use_error>the recording holds no more results of {}: it was not run again</tool_use_error>",
                self.inner.name()
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_tool_result_is_named_with_its_lines() {
        let result = |text: &str, err: bool| {
            Message::user(vec![reloop_core::ToolOutcome {
                is_error: err,
                ..reloop_core::ToolOutcome::error("t1", text)
            }
            .into_block()])
        };
        let recorded = [Message::user_text("go"), result("1\told\n2\tsame", false)];
        let now = [Message::user_text("go"), result("1\tnew\n2\tsame", false)];
        let (recorded, now): (Vec<&Message>, Vec<&Message>) = (recorded.iter().collect(), now.iter().collect());
        let d = compare(3, &recorded, &now).unwrap();
        assert_eq!(d.code, "RELOOP-R001");
        assert_eq!(d.diff, vec!["- 1\told", "+ 1\tnew"]);
        let refused = [Message::user_text("go"), result("denied", true)];
        assert_eq!(compare(3, &recorded, &refused.iter().collect::<Vec<_>>()).unwrap().code, "RELOOP-R002");
        assert_eq!(compare(3, &recorded, &recorded[..1]).unwrap().code, "RELOOP-R004");
        assert!(compare(3, &recorded, &recorded).is_none());
    }
}
