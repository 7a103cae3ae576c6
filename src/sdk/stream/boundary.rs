//! Claude Code's `compact_boundary` line in full: besides the trigger and the token counts, the
//! tokens dropped so far in the session, how long the compaction took (from the journal's step
//! times, so a replay prints the live run's), the lines of the messages it kept (their uuids, as
//! this stream printed them, and the summary's as their anchor) and, in 2.1.332, the last line
//! before it as `logical_parent_uuid`. Recorded: tests/print/recorded/*/compaction/.

use std::collections::VecDeque;

use reloop_core::profile::ProfileId;
use serde_json::{json, Map, Value};

/// Messages whose line uuids are remembered: a compaction keeps the last exchange or so.
const REMEMBERED: usize = 256;

/// What the boundary line needs of the stream before it.
#[derive(Default)]
pub(super) struct Boundaries {
    /// When the step being printed was journaled.
    step_at_ms: u64,
    /// When the compaction in flight started (its summary request's step).
    started_at_ms: Option<u64>,
    /// Tokens the session's compactions dropped so far.
    dropped: u64,
    /// The line uuids of the main thread's latest messages, one entry a message (empty for a
    /// message not printed), oldest first.
    messages: VecDeque<Vec<String>>,
    /// The lines of the message being printed.
    collecting: Option<Vec<String>>,
    /// The next message is a compaction's summary: it opens the history, before what was kept.
    summary_next: bool,
}

/// One compaction as the core reported it.
pub(super) struct Compaction<'a> {
    pub(super) trigger: &'a str,
    pub(super) pre_tokens: u64,
    pub(super) post_tokens: u64,
    /// `None`: the session's journal predates these details (flag 12).
    pub(super) kept: Option<usize>,
}

impl Boundaries {
    /// A journal step starts.
    pub(super) fn step(&mut self, at_ms: u64) {
        self.step_at_ms = at_ms;
    }

    /// A compaction's summary request starts now.
    pub(super) fn compacting(&mut self) {
        self.started_at_ms = Some(self.step_at_ms);
    }

    /// A message's lines follow.
    pub(super) fn message_starts(&mut self) {
        self.collecting = Some(Vec::new());
    }

    /// A `user` or `assistant` line was printed with `uuid`.
    pub(super) fn line_printed(&mut self, uuid: &str) {
        if let Some(lines) = self.collecting.as_mut() {
            lines.push(uuid.to_string());
        }
    }

    /// The message's lines are out.
    pub(super) fn message_ends(&mut self) {
        if let Some(lines) = self.collecting.take() {
            if self.messages.len() == REMEMBERED {
                self.messages.pop_front();
            }
            if std::mem::take(&mut self.summary_next) {
                self.messages.push_front(lines);
            } else {
                self.messages.push_back(lines);
            }
        }
    }

    /// The `compact_metadata` of the boundary, whose summary line will be `anchor`, under
    /// `profile`; with 2.1.332's `logical_parent_uuid`, the line printed last before it.
    pub(super) fn metadata(&mut self, profile: ProfileId, c: &Compaction<'_>, anchor: &str) -> (Value, Option<Value>) {
        let claude_code = profile.profile().claude_code_version.is_some();
        if !claude_code {
            return (json!({"trigger": c.trigger, "pre_tokens": c.pre_tokens}), None);
        }
        // Claude Code calls a compaction the API asked for `auto` too.
        let trigger = if c.trigger == "reactive" { "auto" } else { c.trigger };
        let Some(kept) = c.kept else {
            return (json!({"trigger": trigger, "pre_tokens": c.pre_tokens, "post_tokens": c.post_tokens}), None);
        };
        self.dropped = self.dropped.saturating_add(c.pre_tokens.saturating_sub(c.post_tokens));
        let duration = self.started_at_ms.take().map_or(0, |start| self.step_at_ms.saturating_sub(start));
        let mut metadata = Map::new();
        metadata.insert("trigger".into(), json!(trigger));
        metadata.insert("pre_tokens".into(), json!(c.pre_tokens));
        metadata.insert("post_tokens".into(), json!(c.post_tokens));
        metadata.insert("cumulative_dropped_tokens".into(), json!(self.dropped));
        metadata.insert("duration_ms".into(), json!(duration));
        let skip = self.messages.len().saturating_sub(kept);
        let kept: Vec<&String> = self.messages.iter().skip(skip).flatten().collect();
        if let (Some(head), Some(tail)) = (kept.first(), kept.last()) {
            metadata.insert(
                "preserved_segment".into(),
                json!({"head_uuid": head, "anchor_uuid": anchor, "tail_uuid": tail}),
            );
            metadata
                .insert("preserved_messages".into(), json!({"anchor_uuid": anchor, "uuids": kept, "all_uuids": kept}));
        }
        let parent = self.messages.iter().rev().find_map(|lines| lines.last()).map(|uuid| json!(uuid));
        // The compacted history is the summary, then what was kept.
        self.messages.drain(..skip);
        self.summary_next = true;
        let parent = parent.filter(|_| profile == ProfileId::ClaudeCode2_1_332);
        (Value::Object(metadata), parent)
    }
}

impl super::SdkStream {
    /// Claude Code's boundary line: what the compaction dropped and kept, and how long it took.
    pub(super) fn compact_boundary(&mut self, compaction: &Compaction<'_>) {
        // The summary's line is printed next in this step: it anchors what was kept.
        let anchor = reloop_driver::line_uuid(&self.session_id, self.seq, self.line + 1);
        let (metadata, parent) = self.boundaries.metadata(self.profile, compaction, &anchor);
        let mut line = Map::new();
        line.insert("type".into(), json!("system"));
        line.insert("subtype".into(), json!("compact_boundary"));
        line.insert("compact_metadata".into(), metadata);
        let tail = parent.map(|p| ("logical_parent_uuid", p)).into_iter().collect();
        self.emit_with_tail(line, false, tail);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kept_messages_lines_and_the_time_taken_are_named() {
        let mut b = Boundaries::default();
        for lines in [vec!["a1", "a2"], vec![], vec!["u1"], vec!["a3"], vec!["u2"]] {
            b.message_starts();
            lines.iter().for_each(|l| b.line_printed(l));
            b.message_ends();
        }
        b.step(1_000);
        b.compacting();
        b.step(1_072);
        let c = Compaction { trigger: "reactive", pre_tokens: 12_466, post_tokens: 2_755, kept: Some(2) };
        let (metadata, parent) = b.metadata(ProfileId::ClaudeCode2_1_332, &c, "s");
        assert_eq!(
            metadata,
            json!({"trigger": "auto", "pre_tokens": 12_466, "post_tokens": 2_755, "cumulative_dropped_tokens": 9_711,
                   "duration_ms": 72, "preserved_segment": {"head_uuid": "a3", "anchor_uuid": "s", "tail_uuid": "u2"},
                   "preserved_messages": {"anchor_uuid": "s", "uuids": ["a3", "u2"], "all_uuids": ["a3", "u2"]}})
        );
        assert_eq!(parent, Some(json!("u2")));
        // A second compaction adds what it dropped; 2.1.197 names no logical parent.
        let c = Compaction { trigger: "manual", pre_tokens: 100, post_tokens: 40, kept: Some(0) };
        let (metadata, parent) = b.metadata(ProfileId::ClaudeCode2_1_197, &c, "t");
        assert_eq!(metadata["cumulative_dropped_tokens"], 9_771);
        assert_eq!(metadata["duration_ms"], 0);
        assert!(metadata.get("preserved_segment").is_none() && parent.is_none());
        // A journal from before flag 12 replays to the three keys it printed.
        let c = Compaction { trigger: "auto", pre_tokens: 100, post_tokens: 40, kept: None };
        let (metadata, parent) = b.metadata(ProfileId::ClaudeCode2_1_332, &c, "u");
        assert_eq!(metadata, json!({"trigger": "auto", "pre_tokens": 100, "post_tokens": 40}));
        assert!(parent.is_none());
    }
}
