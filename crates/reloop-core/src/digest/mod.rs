//! The digest replay compares: a hash of the state's bytes, in the algorithm the session's
//! digest version fixes. Journaled digests depend on every byte of it.
//!
//! Up to version 3 a state's parts are mixed in as their JSON text (`crate::wire`, frozen);
//! from version 4 as typed fields (`typed`): numbers as numbers, strings and lists after their
//! length, so no JSON is written to digest a state.

use serde::Serialize;

pub(crate) mod typed;

pub(crate) use typed::{digest_block, digest_message, digest_tool_use};

/// The digest replay compares, in the form the session's digest version fixes: FNV-1a over
/// bytes up to version 2; from version 3 the same fold over 64-bit words, with a stronger
/// multiplier, a shift that carries the high bits down, and MurmurHash3's finalizer. Both are
/// stable across platforms and releases and enough to detect divergence (neither is a security
/// boundary). FNV takes one byte per multiply, which made it a fifth of a replay's work; words
/// take eight. Written here rather than taken from a hashing crate: the core depends on serde
/// alone, and a dozen lines over the FNV it already had do the job.
#[derive(Clone)]
pub struct Digest {
    kind: Kind,
    /// Bytes mixed in so far.
    written: u64,
    /// Values are mixed in as typed fields, not as their JSON (from [`TYPED_FROM`]).
    typed: bool,
}

#[derive(Clone)]
#[expect(
    clippy::large_enum_variant,
    reason = "a digest lives on the stack for one state's bytes; boxing the block is the allocation it avoids"
)]
enum Kind {
    Fnv(u64),
    /// The fold so far, and the bytes not yet folded: JSON arrives a few bytes per write, and
    /// putting words together across writes cost more per write (measured: a replay 1.4×
    /// slower) than gathering the bytes and folding them a block at a time. The block lives in
    /// the digest, not on the heap: a step digests a few hundred bytes, and allocating for them
    /// cost more than folding them.
    Words {
        h: u64,
        block: [u8; BLOCK],
        fill: usize,
    },
}

/// Bytes gathered before they are folded: a whole number of words.
const BLOCK: usize = 256;

/// The first digest version digested by words (and with usage as numbers, not JSON).
pub const WORDS_FROM: u32 = 3;

/// The first digest version whose input is typed fields rather than JSON text.
pub const TYPED_FROM: u32 = 4;

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;
/// 2^64 / φ: odd, with its bits spread, so one multiply mixes a whole word.
const WORD_MULTIPLIER: u64 = 0x9e37_79b9_7f4a_7c15;

impl Default for Digest {
    /// FNV-1a, as every digest before version 3 was.
    fn default() -> Self {
        Digest { kind: Kind::Fnv(FNV_OFFSET), written: 0, typed: false }
    }
}

impl Digest {
    /// The digest of a session of this digest version.
    pub fn for_version(version: u32) -> Self {
        if version >= WORDS_FROM {
            let kind = Kind::Words { h: FNV_OFFSET, block: [0; BLOCK], fill: 0 };
            Digest { kind, written: 0, typed: version >= TYPED_FROM }
        } else {
            Digest::default()
        }
    }

    /// Whether versions `a` and `b` digest the same messages alike.
    pub fn same_input(a: u32, b: u32) -> bool {
        let input = |v: u32| (v >= WORDS_FROM, v >= TYPED_FROM);
        input(a) == input(b)
    }

    /// Whether this digest takes usage as numbers where older versions took its JSON.
    pub fn takes_numbers(&self) -> bool {
        matches!(self.kind, Kind::Words { .. })
    }

    /// Whether this digest takes every value as typed fields, no JSON.
    pub fn is_typed(&self) -> bool {
        self.typed
    }

    /// How many bytes were mixed in so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Mixes in raw bytes. Inlined: most writes are a few bytes of known length (a number, a
    /// comma), copied without a call.
    #[inline]
    pub fn bytes(&mut self, bytes: &[u8]) {
        self.written += bytes.len() as u64;
        match &mut self.kind {
            Kind::Words { block, fill, .. } if *fill + bytes.len() < BLOCK => {
                block[*fill..*fill + bytes.len()].copy_from_slice(bytes);
                *fill += bytes.len();
            }
            _ => self.bytes_slowly(bytes),
        }
    }

    /// [`Digest::bytes`] into a block that fills up, or by FNV.
    #[inline(never)]
    fn bytes_slowly(&mut self, bytes: &[u8]) {
        match &mut self.kind {
            Kind::Fnv(h) => {
                for b in bytes {
                    *h ^= u64::from(*b);
                    *h = h.wrapping_mul(FNV_PRIME);
                }
            }
            Kind::Words { h, block, fill } => {
                let mut rest = bytes;
                loop {
                    let take = rest.len().min(BLOCK - *fill);
                    block[*fill..*fill + take].copy_from_slice(&rest[..take]);
                    *fill += take;
                    rest = &rest[take..];
                    if *fill < BLOCK {
                        break;
                    }
                    fold_words(h, block);
                    *fill = 0;
                }
            }
        }
    }

    /// Mixes in a number.
    #[inline]
    pub fn u64(&mut self, n: u64) {
        self.bytes(&n.to_le_bytes());
    }

    /// Mixes in numbers, as [`Digest::u64`] each: one write for a state's many counters.
    #[inline]
    pub fn u64s<const N: usize>(&mut self, numbers: [u64; N]) {
        let mut bytes = [[0u8; 8]; N];
        for (to, n) in bytes.iter_mut().zip(numbers) {
            *to = n.to_le_bytes();
        }
        self.bytes(bytes.as_flattened());
    }

    /// Mixes in a name: as its JSON string up to version 3 (for names serde writes as they are,
    /// no character in them escaped, without starting a serializer), as a string after.
    #[inline]
    pub fn name(&mut self, name: &str) {
        if self.typed {
            return self.str(name);
        }
        debug_assert!(!name.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20), "{name} needs escaping");
        self.bytes(b"\"");
        self.bytes(name.as_bytes());
        self.bytes(b"\"");
    }

    /// Mixes in a string, its length first so that neighbours cannot run together. Inlined,
    /// length and text copied in one go when both fit: names and keys, a few bytes each, are
    /// most of a typed digest's writes.
    #[inline]
    pub fn str(&mut self, s: &str) {
        let len = s.len();
        if let Kind::Words { block, fill, .. } = &mut self.kind {
            if *fill + 8 + len < BLOCK {
                block[*fill..*fill + 8].copy_from_slice(&(len as u64).to_le_bytes());
                block[*fill + 8..*fill + 8 + len].copy_from_slice(s.as_bytes());
                *fill += 8 + len;
                self.written += 8 + len as u64;
                return;
            }
        }
        self.u64(len as u64);
        self.bytes(s.as_bytes());
    }

    /// Mixes in a value: its JSON up to version 3, its typed fields after.
    pub fn value<T: Serialize + ?Sized>(&mut self, value: &T) {
        if self.typed {
            typed::value(self, value);
        } else if serde_json::to_writer(&mut *self, value).is_err() {
            // Serialization into a hasher cannot fail for our types; an error would only mean a
            // non-string map key, which our types do not have. Fold it in as a marker regardless.
            self.bytes(b"<unserializable>");
        }
    }

    /// Mixes in a list as [`Digest::value`] does: an empty one (most of the state's lists, at
    /// most steps) as the `[]` serde_json writes for it, without starting a serializer for it.
    pub fn list<T: Serialize>(&mut self, items: &[T]) {
        if items.is_empty() {
            // What serde writes for an empty list: `[]` as JSON, an empty list's tags typed.
            self.bytes(if self.typed { typed::EMPTY_LIST } else { b"[]" });
        } else {
            self.value(items);
        }
    }

    /// Mixes in an option as [`Digest::value`] does: `None` as the `null` serde_json writes.
    pub fn option<T: Serialize>(&mut self, value: &Option<T>) {
        match value {
            None => self.bytes(if self.typed { typed::NONE_BYTES } else { b"null" }),
            Some(_) => self.value(value),
        }
    }

    /// The digest so far.
    pub fn finish(self) -> u64 {
        match self.kind {
            Kind::Fnv(h) => h,
            Kind::Words { mut h, block, fill } => {
                let bytes = &block[..fill];
                let whole = fill - fill % 8;
                fold_words(&mut h, &bytes[..whole]);
                let rest = &bytes[whole..];
                if !rest.is_empty() {
                    let mut w = [0; 8];
                    w[..rest.len()].copy_from_slice(rest);
                    fold(&mut h, u64::from_le_bytes(w));
                }
                // The length tells a zero-padded last word from real zeros.
                fold(&mut h, self.written);
                fmix64(h)
            }
        }
    }
}

/// Folds `bytes`, a whole number of words, in order.
fn fold_words(h: &mut u64, bytes: &[u8]) {
    for word in bytes.chunks_exact(8) {
        let mut w = [0; 8];
        w.copy_from_slice(word);
        fold(h, u64::from_le_bytes(w));
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

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(!Digest::default().takes_numbers() && Digest::for_version(WORDS_FROM).takes_numbers());
        assert!(!Digest::for_version(WORDS_FROM).is_typed() && Digest::for_version(TYPED_FROM).is_typed());
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
    fn an_empty_list_and_none_digest_as_their_value() {
        for version in [1, WORDS_FROM, TYPED_FROM] {
            let digest = |write: &dyn Fn(&mut Digest)| {
                let mut d = Digest::for_version(version);
                write(&mut d);
                d.finish()
            };
            let (empty, some): (Vec<String>, Vec<String>) = (Vec::new(), vec!["a\"b".into()]);
            assert_eq!(digest(&|d| d.list(&empty)), digest(&|d| d.value(&empty)));
            assert_eq!(digest(&|d| d.list(&some)), digest(&|d| d.value(&some)));
            assert_eq!(digest(&|d| d.option(&None::<u32>)), digest(&|d| d.value(&None::<u32>)));
            assert_eq!(digest(&|d| d.option(&Some(7u32))), digest(&|d| d.value(&Some(7u32))));
        }
    }

    #[test]
    fn a_string_digests_as_its_length_then_its_bytes_wherever_the_block_stands() {
        let text = "x".repeat(BLOCK + 9);
        for before in [0, 1, BLOCK - 17, BLOCK - 9, BLOCK - 8, BLOCK - 1] {
            for len in [0, 1, 7, 8, BLOCK - 9, BLOCK] {
                let digest = |as_str: bool| {
                    let mut d = Digest::for_version(TYPED_FROM);
                    d.bytes(&text.as_bytes()[..before]);
                    if as_str {
                        d.str(&text[..len]);
                    } else {
                        d.u64(len as u64);
                        d.bytes(&text.as_bytes()[..len]);
                    }
                    (d.written(), d.finish())
                };
                assert_eq!(digest(true), digest(false), "{len} bytes after {before}");
            }
        }
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
        // Across the blocks the digest folds as they fill: writes of every size up to three
        // blocks, ending on and either side of each block's edge.
        let long: Vec<u8> = (0..3 * BLOCK + 11).map(|i| (i * 131 % 251) as u8).collect();
        for n in [BLOCK - 1, BLOCK, BLOCK + 1, 2 * BLOCK, 3 * BLOCK + 11] {
            for step in [1, 7, 8, 9, 63, BLOCK - 1, BLOCK, BLOCK + 5, 3 * BLOCK] {
                let mut d = Digest::for_version(WORDS_FROM);
                long[..n].chunks(step).for_each(|c| d.bytes(c));
                assert_eq!(d.written(), n as u64);
                assert_eq!(d.finish(), words_at_once(&long[..n]), "{n} bytes written {step} at a time");
            }
        }
        // A trailing zero is not the padding of a shorter input.
        assert_ne!(words_at_once(b"ab"), words_at_once(b"ab\0"));
    }
}
