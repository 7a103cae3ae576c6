//! The conversation history, shared between states.
//!
//! A persistent append-only list: every state that holds a [`History`] shares the prefix with
//! its predecessors, so appending a message costs O(1) whatever the length of the session, and a
//! model request can hold the history without copying it. Each node carries a rolling digest so
//! the state digest that replay compares is O(1) per step too.

use std::fmt;
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::digest::Digest;
use crate::message::{ContentBlock, Message, ToolResultContent};

struct Node {
    message: Message,
    prev: Option<Arc<Node>>,
    len: usize,
    digest: u64,
    /// The length of the message's JSON, which the token estimate counts: written by its digest
    /// up to version 3, measured the first time an estimate needs it after (most messages, a
    /// response covered by its usage, never are), and kept so no request measures it again.
    json_len: OnceLock<u64>,
}

/// An append-only, structurally shared list of messages.
#[derive(Clone, Default)]
pub struct History {
    head: Option<Arc<Node>>,
    /// The digest version its digest follows; a history made from it (a prefix, a compacted
    /// one) keeps it.
    digest_version: u32,
}

impl History {
    /// An empty history, digested as before digest version 3.
    pub fn new() -> Self {
        History { head: None, digest_version: 0 }
    }

    /// An empty history digested under `digest_version`.
    pub fn with_digest_version(digest_version: u32) -> Self {
        History { head: None, digest_version }
    }

    /// An empty history digested as this one is.
    pub fn empty_like(&self) -> Self {
        History::with_digest_version(self.digest_version)
    }

    /// This history's messages followed by `messages`'s.
    pub fn extended(mut self, messages: impl IntoIterator<Item = Message>) -> Self {
        for m in messages {
            self.push(m);
        }
        self
    }

    /// How many messages it holds.
    pub fn len(&self) -> usize {
        self.head.as_ref().map_or(0, |n| n.len)
    }

    /// It holds no message.
    pub fn is_empty(&self) -> bool {
        self.head.is_none()
    }

    /// A digest of every message in order.
    pub fn digest(&self) -> u64 {
        self.head.as_ref().map_or(0, |n| n.digest)
    }

    /// The newest message.
    pub fn last(&self) -> Option<&Message> {
        self.head.as_deref().map(|n| &n.message)
    }

    /// Appends a message; the old value stays valid and shares everything with the new one.
    pub fn push(&mut self, message: Message) {
        let mut digest = Digest::for_version(self.digest_version);
        digest.u64(self.digest());
        let json_len = OnceLock::new();
        if digest.is_typed() {
            crate::digest::digest_message(&mut digest, &message);
        } else {
            // Up to version 3 the digest takes the message's JSON: its length comes with it.
            let before = digest.written();
            digest.value(&message);
            let _ = json_len.set(digest.written() - before);
        }
        self.append(message, digest.finish(), json_len);
    }

    fn append(&mut self, mut message: Message, digest: u64, json_len: OnceLock<u64>) {
        // Kept for the session's life: spare capacity left by building the blocks would be held
        // as long (a long session's memory is mostly its history).
        message.content.shrink_to_fit();
        message.content.iter_mut().for_each(shrink_block);
        let len = self.len() + 1;
        let node = Node { message, prev: self.head.take(), len, digest, json_len };
        self.head = Some(Arc::new(node));
    }

    /// Takes the newest message off (a copy of it, when another history shares it).
    pub fn pop(&mut self) -> Option<Message> {
        let node = self.head.take()?;
        match Arc::try_unwrap(node) {
            Ok(mut owned) => {
                self.head = owned.prev.take();
                Some(owned.message)
            }
            Err(shared) => {
                self.head = shared.prev.clone();
                Some(shared.message.clone())
            }
        }
    }

    /// The first `n` messages, sharing everything with this history (nothing is cloned); all of
    /// it when `n` is at least its length.
    pub fn prefix(&self, n: usize) -> History {
        let mut node = self.head.as_ref();
        while let Some(m) = node.filter(|m| m.len > n) {
            node = m.prev.as_ref();
        }
        History { head: node.cloned(), digest_version: self.digest_version }
    }

    /// The messages, oldest first. O(n) in references; nothing is cloned.
    pub fn messages(&self) -> Vec<&Message> {
        let mut out = Vec::with_capacity(self.len());
        let mut node = self.head.as_deref();
        while let Some(n) = node {
            out.push(&n.message);
            node = n.prev.as_deref();
        }
        out.reverse();
        out
    }

    /// The last `n` messages, oldest first.
    pub fn tail(&self, n: usize) -> Vec<&Message> {
        let mut out = Vec::with_capacity(n.min(self.len()));
        let mut node = self.head.as_deref();
        while let Some(m) = node {
            if out.len() == n {
                break;
            }
            out.push(&m.message);
            node = m.prev.as_deref();
        }
        out.reverse();
        out
    }

    /// The length of the JSON of each of the last `n` messages, newest first: what
    /// `crate::tokens::estimate_message` counts, without serializing them again.
    pub fn tail_json_lens(&self, n: usize) -> impl Iterator<Item = u64> + '_ {
        let mut node = self.head.as_deref();
        std::iter::from_fn(move || {
            let m = node?;
            node = m.prev.as_deref();
            Some(*m.json_len.get_or_init(|| crate::wire::json_len(&m.message)))
        })
        .take(n)
    }

    /// The messages, oldest first, copied out.
    pub fn to_vec(&self) -> Vec<Message> {
        self.messages().into_iter().cloned().collect()
    }
}

/// Gives back a block's spare capacity: a tool's output is built by appending, and a parsed
/// object's map keeps room for three entries where the usual tool input has one or two (a
/// third of a tool turn's memory, measured).
fn shrink_block(block: &mut ContentBlock) {
    match block {
        ContentBlock::Text(t) => t.text.shrink_to_fit(),
        // Not shared yet when it joins the history: the calls are taken from it once it is in.
        ContentBlock::ToolUse(t) => {
            if let Some(t) = Arc::get_mut(t) {
                shrink_value(&mut t.input);
            }
        }
        ContentBlock::ToolResult(r) => match &mut r.content {
            ToolResultContent::Text(text) => text.shrink_to_fit(),
            ToolResultContent::Blocks(blocks) => {
                blocks.shrink_to_fit();
                blocks.iter_mut().for_each(shrink_block);
            }
        },
        _ => {}
    }
}

fn shrink_value(value: &mut Value) {
    match value {
        Value::String(s) => s.shrink_to_fit(),
        Value::Array(items) => {
            items.shrink_to_fit();
            items.iter_mut().for_each(shrink_value);
        }
        Value::Object(map) => {
            // A map has no `shrink_to_fit`; collected anew it is sized to what it holds, in the
            // same order.
            let mut exact: Map<String, Value> = std::mem::take(map).into_iter().collect();
            exact.values_mut().for_each(shrink_value);
            *map = exact;
        }
        _ => {}
    }
}

impl Drop for History {
    // A long list would otherwise be dropped recursively, one stack frame per message.
    fn drop(&mut self) {
        let mut next = self.head.take();
        while let Some(node) = next {
            match Arc::try_unwrap(node) {
                Ok(mut owned) => next = owned.prev.take(),
                Err(_) => break,
            }
        }
    }
}

impl fmt::Debug for History {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.messages()).finish()
    }
}

impl PartialEq for History {
    fn eq(&self, other: &Self) -> bool {
        // Digests of different versions differ for the same messages: those are compared.
        self.len() == other.len()
            && if Digest::same_input(self.digest_version, other.digest_version) {
                self.digest() == other.digest()
            } else {
                self.messages() == other.messages()
            }
    }
}

impl FromIterator<Message> for History {
    fn from_iter<I: IntoIterator<Item = Message>>(iter: I) -> Self {
        let mut history = History::new();
        for m in iter {
            history.push(m);
        }
        history
    }
}

impl Serialize for History {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.messages())
    }
}

impl<'de> Deserialize<'de> for History {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Vec::<Message>::deserialize(d)?.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::digest::WORDS_FROM;

    #[test]
    fn appending_shares_the_prefix() {
        let mut a = History::new();
        a.push(Message::user_text("one"));
        let mut b = a.clone();
        b.push(Message::user_text("two"));
        assert_eq!(a.len(), 1);
        assert_eq!(b.len(), 2);
        assert_eq!(b.messages()[0].text(), "one");
        assert_eq!(b.tail(1)[0].text(), "two");
        assert_ne!(a.digest(), b.digest());
    }

    #[test]
    fn a_prefix_is_the_same_nodes_not_a_copy() {
        let h: History = ["a", "b", "c"].into_iter().map(Message::user_text).collect();
        let two = h.prefix(2);
        assert_eq!(two.messages().iter().map(|m| m.text()).collect::<Vec<_>>(), ["a", "b"]);
        assert!(std::ptr::eq(two.messages()[1], h.messages()[1]), "shared, not cloned");
        let shorter: History = ["a", "b"].into_iter().map(Message::user_text).collect();
        assert_eq!(two.digest(), shorter.digest());
        assert_eq!(h.prefix(9).len(), 3);
        assert!(h.prefix(0).is_empty());
    }

    #[test]
    fn digest_depends_on_content_and_order() {
        let ab: History = [Message::user_text("a"), Message::user_text("b")].into_iter().collect();
        let ba: History = [Message::user_text("b"), Message::user_text("a")].into_iter().collect();
        assert_ne!(ab.digest(), ba.digest());
        let ab2: History = [Message::user_text("a"), Message::user_text("b")].into_iter().collect();
        assert_eq!(ab.digest(), ab2.digest());
    }

    #[test]
    fn a_history_made_from_another_keeps_its_digest_version() {
        let messages = || ["a", "b", "c"].into_iter().map(Message::user_text);
        let old: History = messages().collect();
        let new = History::with_digest_version(WORDS_FROM).extended(messages());
        assert_ne!(old.digest(), new.digest(), "the versions digest differently");
        assert_eq!(old.digest(), History::with_digest_version(2).extended(messages()).digest());
        let two = History::with_digest_version(WORDS_FROM).extended(messages().take(2));
        assert_eq!(new.prefix(2).digest(), two.digest());
        assert_eq!(new.empty_like().extended(messages()).digest(), new.digest());
        assert_eq!(old, new, "the same messages are the same history whatever their digest");
        assert_ne!(old, History::with_digest_version(WORDS_FROM).extended(messages().rev()));
    }

    #[test]
    fn a_long_history_drops_without_recursion() {
        let history: History = (0..200_000).map(|i| Message::user_text(i.to_string())).collect();
        assert_eq!(history.len(), 200_000);
        drop(history);
    }
}
