//! JSON written straight into a sink, with serde_json's exact bytes: the pieces a message's
//! frozen JSON (`super::message`) is made of.
//!
//! Digests up to version 3 hash a message's JSON at every append, and the token estimate counts
//! its length. Through serde_json a small object cost about a hundred and
//! fifty instructions a key (each string scanned byte by byte through a table, each piece a
//! separate `io::Write` call); here a string with nothing to escape is found eight bytes at a
//! time and copied whole, integers go through `itoa`, and floats are serde_json's own. The
//! tests hold every piece to serde_json.

#[cfg(test)]
#[path = "json_tests.rs"]
pub(crate) mod tests;

/// A JSON value, straight: it cannot fail (its keys are strings) and needs no serializer.
pub(crate) fn value<S: Sink + ?Sized>(out: &mut S, v: &serde_json::Value) {
    use serde_json::Value;
    match v {
        Value::Null => out.put(b"null"),
        Value::Bool(true) => out.put(b"true"),
        Value::Bool(false) => out.put(b"false"),
        Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => integer(out, u),
            (None, Some(i), _) => integer(out, i),
            (None, None, Some(f)) => float(out, f),
            (None, None, None) => out.put(b"null"),
        },
        Value::String(s) => string(out, s),
        Value::Array(items) => array(out, items, |out, item| value(out, item)),
        Value::Object(map) => object(out, map),
    }
}

/// A JSON array of `items`, each written by `item`.
pub(crate) fn array<S: Sink + ?Sized, T>(out: &mut S, items: &[T], mut item: impl FnMut(&mut S, &T)) {
    out.put(b"[");
    for (i, it) in items.iter().enumerate() {
        if i > 0 {
            out.put(b",");
        }
        item(out, it);
    }
    out.put(b"]");
}

/// A JSON object, straight.
pub(crate) fn object<S: Sink + ?Sized>(out: &mut S, map: &serde_json::Map<String, serde_json::Value>) {
    out.put(b"{");
    for (i, (key, item)) in map.iter().enumerate() {
        if i > 0 {
            out.put(b",");
        }
        string(out, key);
        out.put(b":");
        value(out, item);
    }
    out.put(b"}");
}

/// Where the bytes go.
pub(crate) trait Sink {
    fn put(&mut self, bytes: &[u8]);
}

impl Sink for Vec<u8> {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

/// Whether serde_json escapes the byte: a quote, a backslash, a control character.
#[inline]
fn escaped(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// Where the first byte serde_json escapes (a quote, a backslash, a control character) stands
/// in `bytes`: eight bytes at a time, by the word tricks for "has a byte less than" and "has a
/// byte equal to" (a byte at a time was six instructions a byte). The tricks can flag a byte
/// after a true match (a borrow carries up), never one before it, so the lowest flag is the
/// first match. The tail is padded with spaces, which nothing escapes.
#[inline]
pub(crate) fn first_escaped(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    #[inline]
    fn flags(w: u64) -> u64 {
        let control = w.wrapping_sub(ONES * 0x20) & !w;
        let quote = w ^ (ONES * u64::from(b'"'));
        let quote = quote.wrapping_sub(ONES) & !quote;
        let backslash = w ^ (ONES * u64::from(b'\\'));
        let backslash = backslash.wrapping_sub(ONES) & !backslash;
        (control | quote | backslash) & HIGH
    }
    let first = |at: usize, flags: u64| at + (flags.trailing_zeros() / 8) as usize;
    let mut words = bytes.chunks_exact(8);
    let mut at = 0;
    for word in &mut words {
        let mut w = [0; 8];
        w.copy_from_slice(word);
        let f = flags(u64::from_le_bytes(w));
        if f != 0 {
            return Some(first(at, f));
        }
        at += 8;
    }
    let rest = words.remainder();
    if rest.is_empty() {
        return None;
    }
    let mut w = [b' '; 8];
    w[..rest.len()].copy_from_slice(rest);
    let f = flags(u64::from_le_bytes(w));
    (f != 0).then(|| first(at, f))
}

/// `s` as a JSON string.
#[inline]
pub(crate) fn string<S: Sink + ?Sized>(out: &mut S, s: &str) {
    let bytes = s.as_bytes();
    if first_escaped(bytes).is_none() {
        out.put(b"\"");
        out.put(bytes);
        out.put(b"\"");
    } else {
        string_escaping(out, bytes);
    }
}

/// A string with characters to escape, in runs between them, with serde_json's escapes.
#[inline(never)]
fn string_escaping<S: Sink + ?Sized>(out: &mut S, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.put(b"\"");
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if !escaped(b) {
            continue;
        }
        out.put(&bytes[start..i]);
        start = i + 1;
        match b {
            b'"' => out.put(b"\\\""),
            b'\\' => out.put(b"\\\\"),
            0x08 => out.put(b"\\b"),
            0x0c => out.put(b"\\f"),
            b'\n' => out.put(b"\\n"),
            b'\r' => out.put(b"\\r"),
            b'\t' => out.put(b"\\t"),
            _ => out.put(&[b'\\', b'u', b'0', b'0', HEX[usize::from(b >> 4)], HEX[usize::from(b & 0xf)]]),
        }
    }
    out.put(&bytes[start..]);
    out.put(b"\"");
}

#[inline]
fn integer<S: Sink + ?Sized, I: itoa::Integer>(out: &mut S, n: I) {
    out.put(itoa::Buffer::new().format(n).as_bytes());
}

/// A float as serde_json writes it (its formatter has changed between releases), into a
/// buffer on the stack.
fn float<S: Sink + ?Sized>(out: &mut S, f: f64) {
    let mut buf = [0u8; 40];
    let mut rest = &mut buf[..];
    // A float takes at most 24 bytes, and a `Value`'s is finite: this cannot fail.
    if serde_json::to_writer(&mut rest, &f).is_ok() {
        let written = 40 - rest.len();
        out.put(&buf[..written]);
    }
}
