//! The digest replay compares: a hash of the state's bytes, in the algorithm the session's
//! digest version fixes. Journaled digests depend on every byte of it.

use serde::Serialize;

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

    /// Mixes in a list's JSON: an empty one (most of the state's lists, at most steps) as the
    /// `[]` serde_json writes for it, without starting a serializer for it.
    pub fn json_list<T: Serialize>(&mut self, items: &[T]) {
        if items.is_empty() {
            self.bytes(b"[]");
        } else {
            self.json(&items);
        }
    }

    /// Mixes in an option's JSON: `None` as the `null` serde_json writes for it.
    pub fn json_option<T: Serialize>(&mut self, value: &Option<T>) {
        match value {
            None => self.bytes(b"null"),
            Some(value) => self.json(value),
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
    fn an_empty_list_and_none_digest_as_their_json() {
        for version in [1, WORDS_FROM] {
            let digest = |write: &dyn Fn(&mut Digest)| {
                let mut d = Digest::for_version(version);
                write(&mut d);
                d.finish()
            };
            let (empty, some): (Vec<String>, Vec<String>) = (Vec::new(), vec!["a\"b".into()]);
            assert_eq!(digest(&|d| d.json_list(&empty)), digest(&|d| d.json(&empty)));
            assert_eq!(digest(&|d| d.json_list(&some)), digest(&|d| d.json(&some)));
            assert_eq!(digest(&|d| d.json_option(&None::<u32>)), digest(&|d| d.json(&None::<u32>)));
            assert_eq!(digest(&|d| d.json_option(&Some(7u32))), digest(&|d| d.json(&Some(7u32))));
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
        // A trailing zero is not the padding of a shorter input.
        assert_ne!(words_at_once(b"ab"), words_at_once(b"ab\0"));
    }
}
