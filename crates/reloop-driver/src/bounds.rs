//! The last line of defence for the journal's row cap: no event the driver applies can make a
//! step too big to journal.
//!
//! Tools and providers cap their own output far below this (issue 10, family 6); what gets
//! past them anyway — a tool without a cap, a hook printing megabytes, a server's huge error body —
//! must not leave a session unfinished with "string or blob too big" and a resume that runs the
//! same call again. So before an event is applied and journaled:
//!
//! * an outcome (tool result, hook output, summary, error message, text delta, prompt) whose
//!   JSON exceeds its share loses the tail of its longest strings, each ending in a note that
//!   says how much was left out; an image too big is replaced by such a note;
//! * a model response whose blocks together exceed the share is not applied: the request fails
//!   with a `response_too_large` model error that is not retried, because its tool calls cannot
//!   be cut without changing what they do.
//!
//! A step's row holds its event, its effects and its reason; the effects and the reason carry at
//! most one response's tool calls and one outcome's text, so a share of a quarter of
//! [`MAX_ROW_BYTES`] keeps every step under the cap.

use reloop_core::{Command, Effect, Event, ModelError};
use reloop_journal::MAX_ROW_BYTES;
use serde_json::Value;

/// The most one event may hold, as JSON.
pub const DEFAULT_EVENT_SHARE: usize = MAX_ROW_BYTES / 4;

/// Strings shorter than this are never cut (ids, names, enum tags stay intact).
const MIN_CUT: usize = 1024;

/// Cutting stops after this many strings; what is still too big is replaced whole.
const MAX_CUTS: usize = 64;

/// A kept event's JSON larger than this is not kept for the next: one long tool output would
/// otherwise stay allocated for the session's life.
const KEPT_MAX: usize = 64 << 10;

/// Bounds events to a share of the row cap and counts the response in flight.
#[derive(Debug)]
pub(crate) struct StepBounds {
    share: usize,
    /// JSON bytes of the blocks of the response in flight.
    response: usize,
    /// Where an event is written to be measured, when the journal takes the text
    /// ([`StepBounds::keep_json`]); else events are only counted.
    json: Option<Vec<u8>>,
    /// Whether `json` holds the event [`StepBounds::bound`] last returned, exactly.
    json_is_event: bool,
}

impl StepBounds {
    pub(crate) fn new(share: usize) -> Self {
        StepBounds { share, response: 0, json: None, json_is_event: false }
    }

    /// Keeps each measured event's JSON for its journal row ([`StepBounds::json`]): measuring an
    /// event writes all of its text, and the row would write it all again.
    pub(crate) fn keep_json(&mut self) {
        self.json = Some(Vec::new());
    }

    /// The JSON of the event [`StepBounds::bound`] last returned, when that very event was
    /// measured (not one it cut, replaced, or had no need to measure).
    pub(crate) fn json(&self) -> Option<&[u8]> {
        self.json.as_deref().filter(|_| self.json_is_event)
    }

    /// `event`'s JSON size, its text kept when [`StepBounds::keep_json`] asked for it and it fits
    /// in the share: an event too big to journal is only counted, never written out whole.
    fn measure(&mut self, event: &Event) -> usize {
        let share = self.share;
        let Some(buf) = self.json.as_mut() else { return json_size(event) };
        buf.clear();
        buf.shrink_to(KEPT_MAX);
        let mut measure = Measure { count: 0, kept: Some(buf), limit: share };
        // Events are plain data: serializing them cannot fail; if it did, nothing is kept.
        let written = serde_json::to_writer(&mut measure, event).is_ok();
        self.json_is_event = written && measure.kept.is_some();
        measure.count
    }

    /// The event as it may be applied and journaled.
    pub(crate) fn bound(&mut self, event: Event) -> Event {
        self.json_is_event = false;
        match event {
            Event::ModelBlock { request, .. } => {
                let size = self.measure(&event);
                self.response = self.response.saturating_add(size);
                if self.response > self.share {
                    self.json_is_event = false;
                    return Event::ModelFailed { error: too_large(self.response, self.share), request };
                }
                event
            }
            // Nothing from outside the process in these.
            Event::ToolStarted { .. }
            | Event::CompactRequested
            | Event::RetryReady { .. }
            | Event::Resumed
            | Event::Abort => event,
            event @ (Event::UserInput { .. }
            | Event::TextDelta { .. }
            | Event::ModelStarted { .. }
            | Event::ModelDone { .. }
            | Event::ModelFailed { .. }
            | Event::ToolDone(_)
            | Event::HookDone { .. }
            | Event::CompactDone { .. }
            | Event::CompactFailed { .. }
            | Event::QueuedInput { .. }
            | Event::SetModel { .. }
            | Event::SetPermissionMode { .. }
            | Event::CommandTools { .. }) => {
                if self.measure(&event) <= self.share {
                    return event;
                }
                self.json_is_event = false;
                shrink(event, self.share)
            }
        }
    }

    /// A new request starts a new response.
    pub(crate) fn after(&mut self, effects: &[Effect]) {
        if effects.iter().any(|e| matches!(e, Effect::Command(Command::CallModel(_) | Command::Summarize { .. }))) {
            self.response = 0;
        }
    }
}

/// The error that ends a response too big to journal. Not retried: the same request would
/// likely bring the same answer.
fn too_large(bytes: usize, share: usize) -> ModelError {
    let mut error = ModelError::new(
        None,
        "response_too_large",
        format!("the response grew past {share} bytes ({bytes} so far), more than reloop journals of one response"),
    );
    error.should_retry = Some(false);
    error
}

/// Counts the bytes written, keeping them in `kept` while the count stays within `limit`; past
/// it, what was kept is let go.
struct Measure<'a> {
    count: usize,
    kept: Option<&'a mut Vec<u8>>,
    limit: usize,
}

impl std::io::Write for Measure<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.count += buf.len();
        if self.count > self.limit {
            self.kept = None;
        } else if let Some(kept) = self.kept.as_mut() {
            kept.extend_from_slice(buf);
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Bytes of `value` as compact JSON, counted without building the text.
fn json_size(value: &impl serde::Serialize) -> usize {
    let mut count = Measure { count: 0, kept: None, limit: 0 };
    // Events are plain data: serializing them cannot fail.
    let _ = serde_json::to_writer(&mut count, value);
    count.count
}

/// `event` cut to `share` JSON bytes, or unchanged when it fits.
fn shrink(mut event: Event, share: usize) -> Event {
    if json_size(&event) <= share {
        return event;
    }
    // What the call did as data (a Read's text again, say) goes first: the model reads the
    // result, and only the caller's stream its data.
    if let Event::ToolDone(outcome) = &mut event {
        if outcome.tool_use_result.take().is_some() && json_size(&event) <= share {
            return event;
        }
    }
    let Ok(mut value) = serde_json::to_value(&event) else { return event };
    for _ in 0..MAX_CUTS {
        let size = json_size(&value);
        if size <= share {
            break;
        }
        let Some(path) = longest_string(&value) else { break };
        cut(&mut value, &path, size - share);
    }
    match serde_json::from_value::<Event>(value) {
        Ok(bounded) if json_size(&bounded) <= share => bounded,
        // Cutting strings could not make it fit (thousands of small ones): keep only the gist.
        _ => replacement(&event, share),
    }
}

/// A path into a JSON value: keys and indices.
#[derive(Debug, Clone)]
enum Step {
    Key(String),
    Index(usize),
}

/// The path of the longest string of at least [`MIN_CUT`] bytes.
fn longest_string(value: &Value) -> Option<Vec<Step>> {
    fn walk(value: &Value, path: &mut Vec<Step>, best: &mut Option<(usize, Vec<Step>)>) {
        match value {
            Value::String(s) if s.len() >= MIN_CUT && best.as_ref().is_none_or(|(len, _)| s.len() > *len) => {
                *best = Some((s.len(), path.clone()));
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    path.push(Step::Index(i));
                    walk(item, path, best);
                    path.pop();
                }
            }
            Value::Object(map) => {
                for (key, item) in map {
                    path.push(Step::Key(key.clone()));
                    walk(item, path, best);
                    path.pop();
                }
            }
            _ => {}
        }
    }
    let mut best = None;
    walk(value, &mut Vec::new(), &mut best);
    best.map(|(_, path)| path)
}

fn at_mut<'a>(value: &'a mut Value, path: &[Step]) -> Option<&'a mut Value> {
    path.iter().try_fold(value, |v, step| match step {
        Step::Key(k) => v.get_mut(k.as_str()),
        Step::Index(i) => v.get_mut(*i),
    })
}

/// Shortens the string at `path` by at least `excess` JSON bytes, ending it with a note. Image
/// data (`source.data`) cannot be cut and stay an image: the image block becomes a text note.
fn cut(value: &mut Value, path: &[Step], excess: usize) {
    let is_image_data =
        matches!(path, [.., Step::Key(source), Step::Key(data)] if source == "source" && data == "data");
    if is_image_data {
        if let Some(block) = at_mut(value, &path[..path.len() - 2]) {
            let size = json_size(block);
            *block =
                serde_json::json!({"type": "text", "text": format!("[an image of {size} bytes left out: {}]", WHY)});
            return;
        }
    }
    let Some(Value::String(text)) = at_mut(value, path) else { return };
    let note_room = 160;
    let keep = floor_char_boundary(text, text.len().saturating_sub(excess + note_room));
    let left_out = text.len() - keep;
    text.truncate(keep);
    text.push_str(&format!("\n… [{left_out} bytes left out: {WHY}]"));
}

/// Why something was left out, in every note.
const WHY: &str = "one journaled step holds at most a share of the journal's row cap";

fn floor_char_boundary(text: &str, at: usize) -> usize {
    (0..=at.min(text.len())).rev().find(|i| text.is_char_boundary(*i)).unwrap_or(0)
}

/// What is left of an event that no cutting made fit: its kind, ids and a note.
fn replacement(event: &Event, share: usize) -> Event {
    let note = format!("[{} bytes left out: {WHY} ({share} bytes)]", json_size(event));
    // The correlation id survives, so the replacement completes what the event completed.
    let request = event.request().unwrap_or_default();
    match event {
        Event::ToolDone(outcome) => Event::ToolDone(reloop_core::ToolOutcome {
            is_error: true,
            denied: outcome.denied,
            request,
            // What a subagent spent was spent, whatever became of its answer.
            agent_usage: outcome.agent_usage.clone(),
            ..reloop_core::ToolOutcome::new(outcome.tool_use_id.clone(), reloop_core::ToolResultContent::Text(note))
        }),
        Event::HookDone { hook_event, tool_use_id, .. } => Event::HookDone {
            hook_event: *hook_event,
            tool_use_id: tool_use_id.clone(),
            runs: vec![reloop_core::hook::HookRun {
                command: "(hooks)".into(),
                exit_code: Some(1),
                stdout: String::new(),
                stderr: note,
                timed_out: false,
            }],
            request,
        },
        Event::TextDelta { index, .. } => Event::TextDelta { index: *index, text: note, request },
        Event::ModelStarted { .. } => Event::ModelStarted { id: None, usage: None, request },
        Event::UserInput { .. } => Event::user_input(vec![reloop_core::ContentBlock::text(note)]),
        Event::QueuedInput { id, .. } => {
            Event::QueuedInput { id: id.clone(), content: vec![reloop_core::ContentBlock::text(note)] }
        }
        Event::CompactDone { usage, .. } => {
            Event::CompactDone { summary: note, usage: usage.clone(), request, given_back: None }
        }
        Event::CompactFailed { .. } => {
            Event::CompactFailed { error: ModelError::new(None, "invalid_stream", note), request }
        }
        Event::ModelDone { usage, .. } => {
            Event::ModelDone { id: None, model: None, stop_reason: None, usage: usage.clone(), request }
        }
        // Callers check names before they set them; one that still does not fit changes nothing.
        Event::SetModel { .. } => Event::SetModel { model: None, command: None },
        Event::SetPermissionMode { .. } => Event::SetPermissionMode { mode: "default".into() },
        // Rules that do not fit allow nothing more.
        Event::CommandTools { command, .. } => Event::CommandTools { command: command.clone(), allow: Vec::new() },
        Event::ModelBlock { .. }
        | Event::ModelFailed { .. }
        | Event::ToolStarted { .. }
        | Event::CompactRequested
        | Event::RetryReady { .. }
        | Event::Resumed
        | Event::Abort => Event::ModelFailed { error: too_large(json_size(event), share), request },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reloop_core::{ContentBlock, ToolOutcome, ToolResultContent};

    fn tool_done(content: ToolResultContent) -> Event {
        Event::ToolDone(ToolOutcome { request: 1, ..ToolOutcome::new("toolu_01", content) })
    }

    #[test]
    fn a_tool_result_over_its_share_keeps_its_head_and_says_what_was_left_out() {
        let share = 10_000;
        let bounded = StepBounds::new(share).bound(tool_done(ToolResultContent::Text("é".repeat(50_000))));
        assert!(json_size(&bounded) <= share, "{}", json_size(&bounded));
        let Event::ToolDone(outcome) = bounded else { panic!("{bounded:?}") };
        assert_eq!(outcome.tool_use_id, "toolu_01");
        let text = outcome.content.as_text();
        assert!(text.starts_with("éé"));
        assert!(text.contains("bytes left out: one journaled step holds at most"), "{}", &text[text.len() - 200..]);
    }

    #[test]
    fn events_that_fit_are_untouched() {
        let mut bounds = StepBounds::new(10_000);
        let small = tool_done(ToolResultContent::Text("x".repeat(9_000)));
        assert_eq!(bounds.bound(small.clone()), small);
        let block = Event::ModelBlock { index: 0, block: ContentBlock::text("hello"), request: 1 };
        assert_eq!(bounds.bound(block.clone()), block);
    }

    #[test]
    fn a_kept_json_is_the_returned_events_own_text_and_nothing_else_is_kept() {
        let mut counting = StepBounds::new(10_000);
        let small = tool_done(ToolResultContent::Text("x".repeat(9_000)));
        counting.bound(small.clone());
        assert_eq!(counting.json(), None, "only counted unless the journal takes the text");
        let mut bounds = StepBounds::new(10_000);
        bounds.keep_json();
        let block = Event::ModelBlock { index: 0, block: ContentBlock::text("hello \"you\""), request: 1 };
        for event in [small, block] {
            let bounded = bounds.bound(event);
            assert_eq!(bounds.json(), Some(serde_json::to_vec(&bounded).unwrap().as_slice()));
        }
        // A cut event is not the one measured; an event never measured has no text.
        let cut = bounds.bound(tool_done(ToolResultContent::Text("y".repeat(50_000))));
        assert!(json_size(&cut) <= 10_000);
        assert_eq!(bounds.json(), None);
        let kept = bounds.json.as_ref().map_or(0, Vec::capacity);
        assert!(kept < 50_000, "an event over the share is never written out whole ({kept} bytes kept)");
        bounds.bound(Event::Resumed);
        assert_eq!(bounds.json(), None);
        let input = serde_json::json!({"content": "z".repeat(12_000)});
        let failed = bounds.bound(Event::ModelBlock {
            index: 0,
            block: ContentBlock::tool_use("a", "Write", input),
            request: 2,
        });
        assert!(matches!(failed, Event::ModelFailed { .. }), "{failed:?}");
        assert_eq!(bounds.json(), None, "a response too large is replaced, its text not kept");
    }

    #[test]
    fn a_too_big_image_becomes_a_note_not_broken_base64() {
        let image = serde_json::json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "A".repeat(40_000)}});
        let blocks = vec![ContentBlock::text("a picture"), serde_json::from_value(image).unwrap()];
        let bounded = shrink(tool_done(ToolResultContent::Blocks(blocks)), 10_000);
        let Event::ToolDone(outcome) = bounded else { panic!() };
        let ToolResultContent::Blocks(blocks) = outcome.content else { panic!() };
        assert_eq!(blocks[0], ContentBlock::text("a picture"));
        assert!(matches!(&blocks[1], ContentBlock::Text(t) if t.text.starts_with("[an image of ")), "{:?}", blocks[1]);
    }

    #[test]
    fn a_response_over_its_share_fails_without_retry_and_the_next_request_starts_afresh() {
        let mut bounds = StepBounds::new(10_000);
        let input = serde_json::json!({"content": "z".repeat(6_000)});
        let block = |id: &str| Event::ModelBlock {
            index: 0,
            block: ContentBlock::tool_use(id, "Write", input.clone()),
            request: 1,
        };
        assert!(matches!(bounds.bound(block("a")), Event::ModelBlock { .. }));
        let Event::ModelFailed { error, .. } = bounds.bound(block("b")) else {
            panic!("the second block should not fit")
        };
        assert_eq!((error.error_type.as_str(), error.should_retry), ("response_too_large", Some(false)));
        bounds.after(&[Command::CancelTools.into()]);
        assert!(matches!(bounds.bound(block("c")), Event::ModelFailed { .. }), "same response");
        let call: reloop_core::ModelCall =
            serde_json::from_value(serde_json::json!({"turn": 1, "request": 2, "message_count": 3})).unwrap();
        bounds.after(&[Command::CallModel(call).into()]);
        assert!(matches!(bounds.bound(block("d")), Event::ModelBlock { .. }), "a new request");
    }

    #[test]
    fn hook_output_and_error_bodies_are_cut_too() {
        let run = reloop_core::hook::HookRun {
            command: "./noisy".into(),
            exit_code: Some(2),
            stdout: "o".repeat(30_000),
            stderr: "e".repeat(30_000),
            timed_out: false,
        };
        let hooks = Event::HookDone {
            hook_event: reloop_core::hook::HookEventName::Stop,
            tool_use_id: None,
            runs: vec![run],
            request: 1,
        };
        let bounded = shrink(hooks, 10_000);
        assert!(json_size(&bounded) <= 10_000);
        let Event::HookDone { runs, .. } = bounded else { panic!() };
        assert_eq!((runs[0].command.as_str(), runs[0].exit_code), ("./noisy", Some(2)));
        let failed =
            Event::ModelFailed { error: ModelError::new(Some(500), "api_error", "<html>".repeat(10_000)), request: 1 };
        assert!(json_size(&shrink(failed, 10_000)) <= 10_000);
    }
}
