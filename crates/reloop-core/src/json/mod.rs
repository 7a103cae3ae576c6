//! serde_json's compact JSON, written with less work a value.
//!
//! Replay serializes every step's effects and reason to compare them with the journal's, and
//! the state's blocks and outcomes for its digest: most of a replay's work was serde_json
//! writing small objects, a hundred and fifty instructions a key (each string scanned byte by
//! byte through a table, each piece a separate `io::Write` call). [`write`] writes the same
//! bytes straight into a buffer: a string with nothing to escape is copied whole, numbers by
//! `itoa`, floats by serde_json itself. It covers what the engine's own types serialize
//! to; anything else (a non-string map key, serde_json's raw values) makes it give up, and serde_json writes the
//! value instead, so the bytes are serde_json's whatever the value. The tests hold it to
//! serde_json on every form.

use std::fmt;

use serde::ser::{self, Serialize};

mod key;
mod serializer;
#[cfg(test)]
mod tests;

use serializer::Json;

/// Writes `value` as `serde_json::to_writer` would, appending to `out`.
pub fn write<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) -> Result<(), serde_json::Error> {
    let len = out.len();
    if try_write(out, value) {
        return Ok(());
    }
    out.truncate(len);
    // serde_json leaves what it wrote before an error; nothing of a failed value is kept.
    let written = serde_json::to_writer(&mut *out, value);
    if written.is_err() {
        out.truncate(len);
    }
    written
}

/// Writes `value` into `out` if it takes only the forms written here; `false` when it does not
/// (`out` then holds part of it: the caller puts it back as it was).
pub(crate) fn try_write<S: Sink + ?Sized, T: Serialize + ?Sized>(out: &mut S, value: &T) -> bool {
    value.serialize(Json { out }).is_ok()
}

/// Appends `s` as a JSON string, escaped as serde_json escapes it.
pub fn write_str(out: &mut Vec<u8>, s: &str) {
    string(out, s);
}

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
            (None, None, Some(f)) => {
                // A finite float: serde_json writes it, into a buffer on the stack.
                let _ = serializer::float(out, f);
            }
            (None, None, None) => out.put(b"null"),
        },
        Value::String(s) => string(out, s),
        Value::Array(items) => {
            out.put(b"[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.put(b",");
                }
                value(out, item);
            }
            out.put(b"]");
        }
        Value::Object(map) => object(out, map),
    }
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

/// The value takes a form left to serde_json.
#[derive(Debug)]
pub(super) struct Unsupported;

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("left to serde_json")
    }
}

impl std::error::Error for Unsupported {}

impl ser::Error for Unsupported {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Unsupported
    }
}

pub(super) type Res<T = ()> = std::result::Result<T, Unsupported>;

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
