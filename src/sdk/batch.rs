//! Messages the SDK sends while a query runs, answered as Claude Code answers them: when the
//! query ends, everything that queued meanwhile becomes the next query's one user message.
//!
//! tests/print/recorded/*/sdk_wire/queued (2.1.197 and 2.1.332 alike): three messages sent at
//! once gave two queries; the second request's last user message was one text block,
//! `SECOND-QUESTION\nTHIRD-QUESTION`. Messages of text alone are joined so, by newlines; a message
//! with an image or a document keeps its blocks, after the others' (no recording shows Claude
//! Code's order for those). The query takes the `origin` of the last message that carried one
//! (no recording shows a batch of stamped messages).

use std::collections::VecDeque;

use reloop_core::ContentBlock;
use serde_json::Value;

/// A message that waits: its content, the host's `origin` for it, and the uuid the host stamped
/// it with (what an interrupt's answer lists as still queued, 2.1.332).
pub(super) type Queued = (Vec<ContentBlock>, Option<Value>, Option<String>);

/// A query's message made of what waited, the `origin` it carries, and the uuids the host
/// stamped its messages with (their lifecycle, `crate::sdk::lifecycle`).
pub(super) type Batch = (Vec<ContentBlock>, Option<Value>, Vec<String>);

/// The one message the queued `waiting` ones make, in the order they came, with the last
/// `origin` given; `None` when none waits.
/// A queued `/compact` stays in the queue, for [`compact_next`], with what came after it. A
/// message `alone` says runs as its own query (a command asked with its file's model,
/// `sdk36/queued_command_model`) is taken by itself, and ends the batch before it.
pub(super) fn take(waiting: &mut VecDeque<Queued>, alone: impl Fn(&[ContentBlock]) -> bool) -> Option<Batch> {
    let (content, origin, stamp) = waiting.pop_front()?;
    if alone(&content) {
        return Some((content, origin, stamp.into_iter().collect()));
    }
    let upto =
        waiting.iter().position(|(content, _, _)| is_compact(content) || alone(content)).unwrap_or(waiting.len());
    if upto == 0 {
        return Some((content, origin, stamp.into_iter().collect()));
    }
    let mut stamps = Vec::new();
    let mut messages = Vec::new();
    let mut last_origin = None;
    for (content, origin, stamp) in std::iter::once((content, origin, stamp)).chain(waiting.drain(..upto)) {
        messages.push(content);
        last_origin = origin.or(last_origin);
        stamps.extend(stamp);
    }
    Some((join(messages), last_origin, stamps))
}

/// The uuids of the messages that wait, in order: Claude Code 2.1.332 answers an interrupt with
/// them (`still_queued`), as they still run after it.
pub(super) fn stamped(waiting: &VecDeque<Queued>) -> Vec<String> {
    waiting.iter().filter_map(|(_, _, uuid)| uuid.clone()).collect()
}

/// Whether the next queued message is `/compact`, which Claude Code runs as a compaction when
/// the query ends (`sdk36/queued_compact`, both versions) rather than sending it; taken from
/// the queue when it is, with the uuid the host stamped it with.
pub(super) fn compact_next(waiting: &mut VecDeque<Queued>) -> Option<Option<String>> {
    if !waiting.front().is_some_and(|(content, _, _)| is_compact(content)) {
        return None;
    }
    waiting.pop_front().map(|(_, _, stamp)| stamp)
}

fn is_compact(content: &[ContentBlock]) -> bool {
    super::clear::is_command(content, "/compact")
}

/// Every message's text, each message's texts joined by newlines and the messages too, as one
/// text block; other blocks follow it in order.
fn join(messages: Vec<Vec<ContentBlock>>) -> Vec<ContentBlock> {
    let mut texts: Vec<String> = Vec::new();
    let mut others: Vec<ContentBlock> = Vec::new();
    for message in messages {
        let mut text: Vec<String> = Vec::new();
        for block in message {
            match block {
                ContentBlock::Text(t) => text.push(t.text),
                other => others.push(other),
            }
        }
        if !text.is_empty() {
            texts.push(text.join("\n"));
        }
    }
    let mut out = Vec::with_capacity(others.len() + 1);
    if !texts.is_empty() {
        out.push(ContentBlock::text(texts.join("\n")));
    }
    out.extend(others);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(t: &str) -> Queued {
        (vec![ContentBlock::text(t)], None, None)
    }

    fn sent(t: &str) -> Option<Batch> {
        Some((vec![ContentBlock::text(t)], None, Vec::new()))
    }

    #[test]
    fn one_waiting_message_goes_as_it_came() {
        let mut waiting = VecDeque::from([text("only")]);
        assert_eq!(take(&mut waiting, |_| false), sent("only"));
        assert_eq!(take(&mut waiting, |_| false), None);
    }

    #[test]
    fn queued_texts_become_one_message_joined_by_newlines_as_claude_code_sends_them() {
        let mut waiting = VecDeque::from([text("SECOND-QUESTION"), text("THIRD-QUESTION")]);
        assert_eq!(take(&mut waiting, |_| false), sent("SECOND-QUESTION\nTHIRD-QUESTION"));
        assert!(waiting.is_empty());
    }

    #[test]
    fn a_queued_compact_is_taken_alone_and_ends_the_batch_before_it() {
        let mut waiting = VecDeque::from([text("a"), text("b"), text("/compact"), text("c")]);
        assert!(compact_next(&mut waiting).is_none());
        assert_eq!(take(&mut waiting, |_| false), sent("a\nb"));
        assert!(compact_next(&mut waiting).is_some());
        assert!(compact_next(&mut waiting).is_none());
        assert_eq!(take(&mut waiting, |_| false), sent("c"));
        assert_eq!(take(&mut waiting, |_| false), None);
    }

    #[test]
    fn a_message_that_runs_alone_is_its_own_query_and_ends_the_batch_before_it() {
        let alone = |content: &[ContentBlock]| matches!(content, [ContentBlock::Text(t)] if t.text.starts_with("/fm"));
        let mut waiting = VecDeque::from([text("a"), text("/fm A"), text("/fm B"), text("b"), text("c")]);
        assert_eq!(take(&mut waiting, alone), sent("a"));
        assert_eq!(take(&mut waiting, alone), sent("/fm A"));
        assert_eq!(take(&mut waiting, alone), sent("/fm B"));
        assert_eq!(take(&mut waiting, alone), sent("b\nc"));
    }

    #[test]
    fn a_batch_takes_the_last_origin_given() {
        let stamped =
            |t: &str, kind: &str| (vec![ContentBlock::text(t)], Some(serde_json::json!({"kind": kind})), None);
        let mut waiting = VecDeque::from([stamped("a", "human"), stamped("b", "bot"), text("c")]);
        assert_eq!(take(&mut waiting, |_| false).unwrap().1, Some(serde_json::json!({"kind": "bot"})));
        assert_eq!(take(&mut VecDeque::from([text("a"), text("b")]), |_| false).unwrap().1, None);
    }

    #[test]
    fn a_batch_names_the_uuids_of_the_messages_it_took_in_order() {
        let with = |t: &str, uuid: Option<&str>| (vec![ContentBlock::text(t)], None, uuid.map(str::to_string));
        let mut waiting =
            VecDeque::from([with("a", Some("u1")), with("b", None), with("c", Some("u3")), text("/compact")]);
        assert_eq!(take(&mut waiting, |_| false).unwrap().2, ["u1", "u3"]);
        let mut waiting = VecDeque::from([with("/compact", Some("u4"))]);
        assert_eq!(compact_next(&mut waiting), Some(Some("u4".to_string())));
    }

    #[test]
    fn the_stamped_messages_that_wait_are_listed_in_order() {
        let uuid = |t: &str, id: &str| (vec![ContentBlock::text(t)], None, Some(id.to_string()));
        let waiting = VecDeque::from([uuid("a", "u1"), text("b"), uuid("c", "u3")]);
        assert_eq!(stamped(&waiting), ["u1", "u3"]);
    }
}
