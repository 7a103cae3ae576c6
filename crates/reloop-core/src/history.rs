//! The conversation history, shared between states.
//!
//! A persistent append-only list: every state that holds a [`History`] shares the prefix with
//! its predecessors, so appending a message costs O(1) whatever the length of the session, and a
//! model request can hold the history without copying it. Each node carries a rolling digest so
//! the state digest that replay compares is O(1) per step too.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::message::{ContentBlock, Message, ToolResultContent};

/// The digest replay compares, in the form the session's digest version fixes: FNV-1a over
/// bytes up to version 2; from version 3 the same fold over 64-bit words, with a stronger
/// multiplier, a shift that carries the high bits down, and MurmurHash3's finalizer. Both are
/// stable across platforms and releases and enough to detect divergence (neither is a security
/// boundary). FNV takes one byte per multiply, which made it a fifth of a replay's work; words
/// take eight. Written here rather than taken from a hashing crate: the core depends on serde
/// alone, and a dozen lines over the FNV it already had do the job.
#[derive(Clone)]
pub struct Digest(Kind);

#[derive(Clone)]
enum Kind {
    Fnv(u64),
    /// The bytes, folded at the end: JSON arrives a few bytes per write, and putting words
    /// together across writes cost more per write (measured: a replay 1.4× slower) than
    /// gathering the bytes and folding them in one pass.
    Words(Vec<u8>),
}

/// The first digest version digested by words (and with usage as numbers, not JSON).
pub const WORDS_FROM: u32 = 3;

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;
/// 2^64 / φ: odd, with its bits spread, so one multiply mixes a whole word.
const WORD_MULTIPLIER: u64 = 0x9e37_79b9_7f4a_7c15;

impl Default for Digest {
    /// FNV-1a, as every digest before version 3 was.
    fn default() -> Self {
        Digest(Kind::Fnv(FNV_OFFSET))
    }
}

impl Digest {
    /// The digest of a session of this digest version.
    pub fn for_version(version: u32) -> Self {
        if version >= WORDS_FROM {
            Digest(Kind::Words(Vec::with_capacity(512)))
        } else {
            Digest::default()
        }
    }

    /// Whether this digest takes numbers as numbers where older versions took their JSON.
    pub fn is_typed(&self) -> bool {
        matches!(self.0, Kind::Words(_))
    }

    /// Mixes in raw bytes.
    pub fn bytes(&mut self, bytes: &[u8]) {
        match &mut self.0 {
            Kind::Fnv(h) => {
                for b in bytes {
                    *h ^= u64::from(*b);
                    *h = h.wrapping_mul(FNV_PRIME);
                }
            }
            Kind::Words(buf) => buf.extend_from_slice(bytes),
        }
    }

    /// Mixes in a number.
    pub fn u64(&mut self, n: u64) {
        self.bytes(&n.to_le_bytes());
    }

    /// Mixes in a string, its length first so that neighbours cannot run together.
    pub fn str(&mut self, s: &str) {
        self.u64(s.len() as u64);
        self.bytes(s.as_bytes());
    }

    /// Mixes in a value's JSON.
    pub fn json<T: Serialize>(&mut self, value: &T) {
        // Serialization into a hasher cannot fail for our types; an error would only mean a
        // non-string map key, which our types do not have. Fold it in as a marker regardless.
        if serde_json::to_writer(&mut *self, value).is_err() {
            self.bytes(b"<unserializable>");
        }
    }

    /// The digest so far.
    pub fn finish(self) -> u64 {
        match self.0 {
            Kind::Fnv(h) => h,
            Kind::Words(bytes) => {
                let mut h = FNV_OFFSET;
                let mut words = bytes.chunks_exact(8);
                for word in &mut words {
                    let mut w = [0; 8];
                    w.copy_from_slice(word);
                    fold(&mut h, u64::from_le_bytes(w));
                }
                let rest = words.remainder();
                if !rest.is_empty() {
                    let mut w = [0; 8];
                    w[..rest.len()].copy_from_slice(rest);
                    fold(&mut h, u64::from_le_bytes(w));
                }
                // The length tells a zero-padded last word from real zeros.
                fold(&mut h, bytes.len() as u64);
                fmix64(h)
            }
        }
    }
}

/// One word into the fold: FNV-1a's xor and multiply, then the high bits shifted down so the
/// next multiply carries them on.
fn fold(h: &mut u64, word: u64) {
    *h = (*h ^ word).wrapping_mul(WORD_MULTIPLIER);
    *h ^= *h >> 29;
}

/// MurmurHash3's 64-bit finalizer: every input bit reaches every output bit.
fn fmix64(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

impl std::io::Write for Digest {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.bytes(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

struct Node {
    message: Message,
    prev: Option<Arc<Node>>,
    len: usize,
    digest: u64,
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
    pub fn push(&mut self, mut message: Message) {
        // Kept for the session's life: spare capacity left by building the blocks would be held
        // as long (a long session's memory is mostly its history).
        message.content.shrink_to_fit();
        message.content.iter_mut().for_each(shrink_block);
        let mut digest = Digest::for_version(self.digest_version);
        digest.u64(self.digest());
        digest.json(&message);
        let len = self.len() + 1;
        let node = Node { message, prev: self.head.take(), len, digest: digest.finish() };
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
        ContentBlock::ToolUse(t) => shrink_value(&mut t.input),
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
            && if (self.digest_version >= WORDS_FROM) == (other.digest_version >= WORDS_FROM) {
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
    fn each_digest_version_keeps_its_algorithm() {
        // Journaled digests depend on these: FNV-1a 64 (versions 1 and 2) and the word fold
        // (version 3) of known inputs.
        let of = |version: u32, bytes: &[u8]| {
            let mut d = Digest::for_version(version);
            d.bytes(bytes);
            d.finish()
        };
        assert_eq!(of(1, b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(of(2, b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(of(WORDS_FROM, b""), WORDS_OF_EMPTY);
        assert_eq!(of(WORDS_FROM, b"a"), WORDS_OF_A);
        assert!(!Digest::default().is_typed() && Digest::for_version(WORDS_FROM).is_typed());
    }

    // Computed apart from this code, from the definition (a few lines of Python).
    const WORDS_OF_EMPTY: u64 = 0xc8e0_3b70_9c05_22f5;
    const WORDS_OF_A: u64 = 0x1ad2_9818_b359_190d;

    /// The word fold over all the bytes at once, written out as its definition reads.
    fn words_at_once(bytes: &[u8]) -> u64 {
        let mut h = FNV_OFFSET;
        for chunk in bytes.chunks(8) {
            let mut word = [0; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            fold(&mut h, u64::from_le_bytes(word));
        }
        fold(&mut h, bytes.len() as u64);
        fmix64(h)
    }

    #[test]
    fn words_put_together_across_writes_digest_as_the_bytes_at_once() {
        let text: Vec<u8> = (0u8..41).map(|i| i.wrapping_mul(37)).collect();
        for n in 0..=text.len() {
            let whole = words_at_once(&text[..n]);
            for cut in 0..=n {
                for second in cut..=n {
                    let mut d = Digest::for_version(WORDS_FROM);
                    d.bytes(&text[..cut]);
                    d.bytes(&text[cut..second]);
                    d.bytes(&text[second..n]);
                    assert_eq!(d.finish(), whole, "{n} bytes cut at {cut} and {second}");
                }
            }
        }
        // A trailing zero is not the padding of a shorter input.
        assert_ne!(words_at_once(b"ab"), words_at_once(b"ab\0"));
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
