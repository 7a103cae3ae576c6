//! A cassette file's responses found and validated without holding its text: the file is read
//! twice as a stream, and what stays is each response's place in it (16 bytes a response).
//!
//! The usual layout, `{"responses": [R, ...]}`, is read in one pass ([`scan`]): the file goes
//! through a 64 KiB window, each response's extent is found by its brackets, and serde_json
//! reads that response alone, which checks its syntax and its shape. Anything else (another
//! layout, or a fault anywhere) goes to the exact reading, which says what a cassette given as
//! text would: its first pass checks the syntax of the whole file and the shape of its root, so
//! a JSON error names its line and column before anything else is said; its second walks the
//! `"responses"` array, validating each response on its own and noting where it lies. Held at
//! once: one response's text and parsed value, never the file's (a 100,000-turn cassette is
//! 34 MB). serde_json reads a file a byte at a time, about 170 instructions a byte here, so
//! the exact reading alone took 1.3 s where the text read whole took 0.7.

use std::cell::Cell;
use std::fmt;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;
use std::rc::Rc;

use serde::de::{self, DeserializeSeed, Deserializer as _, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use crate::cassette::{json_error, validate_response, Replace, ORIGIN};
use crate::error::ScriptError;

/// Where each response of the cassette file lies in it: (offset, length in bytes). The file's
/// cursor is left anywhere.
pub(crate) fn response_spans(
    path: &Path,
    file: &File,
    limit: u64,
    replace: Option<&Replace>,
) -> Result<Vec<(u64, u32)>, ScriptError> {
    match scan(file, limit, replace) {
        Ok(Some(spans)) => Ok(spans),
        Ok(None) => exact_spans(path, file, limit, replace),
        Err(source) => Err(ScriptError::Read { path: path.to_path_buf(), source }),
    }
}

/// The exact reading: two passes of serde_json over the file.
fn exact_spans(
    path: &Path,
    file: &File,
    limit: u64,
    replace: Option<&Replace>,
) -> Result<Vec<(u64, u32)>, ScriptError> {
    let shape = root_shape(path, file, limit)?;
    let (mut reader, count) = counted(path, file, limit)?;
    let mut walk = Walk { count, replace, spans: Vec::new(), fault: None };
    let mut de = serde_json::Deserializer::from_reader(&mut reader);
    let walked = (&mut de).deserialize_map(WalkRoot { walk: &mut walk, last: shape.responses });
    if let Some(fault) = walk.fault.take() {
        return Err(fault);
    }
    walked.map_err(|e| json_error(path, e))?;
    Ok(walk.spans)
}

/// The responses of a file laid out as `{"responses": [R, ...]}` (any whitespace) whose
/// every response is valid; `None` for anything else, for the exact reading to handle.
fn scan(file: &File, limit: u64, replace: Option<&Replace>) -> std::io::Result<Option<Vec<(u64, u32)>>> {
    let mut file = file;
    file.seek(SeekFrom::Start(0))?;
    let mut w = Window { file: file.take(limit), buf: Vec::with_capacity(WINDOW), at: 0, base: 0 };
    for expected in [b'{', b'"'] {
        if w.after_space()? != Some(expected) {
            return Ok(None);
        }
        w.at += 1;
    }
    for expected in b"responses\"" {
        if w.here()? != Some(*expected) {
            return Ok(None);
        }
        w.at += 1;
    }
    if w.after_space()? != Some(b':') {
        return Ok(None);
    }
    w.at += 1;
    if w.after_space()? != Some(b'[') {
        return Ok(None);
    }
    w.at += 1;
    let mut spans = Vec::new();
    if w.after_space()? == Some(b']') {
        w.at += 1;
    } else {
        loop {
            if w.after_space()? != Some(b'{') {
                return Ok(None);
            }
            let Some(end) = w.object_end()? else { return Ok(None) };
            let start = w.at;
            let text = std::str::from_utf8(&w.buf[start..end]);
            if !text.is_ok_and(|text| validate_response(text, replace).is_ok()) {
                return Ok(None);
            }
            let Ok(len) = u32::try_from(end - start) else { return Ok(None) };
            spans.push((w.base + start as u64, len));
            w.at = end;
            match w.after_space()? {
                Some(b',') => w.at += 1,
                Some(b']') => {
                    w.at += 1;
                    break;
                }
                _ => return Ok(None),
            }
        }
    }
    if w.after_space()? != Some(b'}') {
        return Ok(None);
    }
    w.at += 1;
    Ok(w.after_space()?.is_none().then_some(spans))
}

const WINDOW: usize = 64 << 10;

/// A window on the file: `buf` holds its bytes from offset `base`, `at` is the next to look at.
struct Window<'f> {
    file: std::io::Take<&'f File>,
    buf: Vec<u8>,
    at: usize,
    base: u64,
}

impl Window<'_> {
    /// The byte at index `i`, reading on as needed: bytes before `at` may be dropped then, and
    /// `at` and `i` move with the window.
    fn byte(&mut self, i: &mut usize) -> std::io::Result<Option<u8>> {
        if *i >= self.buf.len() {
            let dropped = self.at;
            self.buf.drain(..dropped);
            self.base += dropped as u64;
            self.at = 0;
            *i -= dropped;
            while self.buf.len() <= *i {
                let len = self.buf.len();
                self.buf.resize(len + WINDOW, 0);
                let read = loop {
                    match self.file.read(&mut self.buf[len..]) {
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                        other => break other,
                    }
                };
                self.buf.truncate(len + *read.as_ref().unwrap_or(&0));
                if read? == 0 {
                    break;
                }
            }
        }
        Ok(self.buf.get(*i).copied())
    }

    /// The byte at `at`.
    fn here(&mut self) -> std::io::Result<Option<u8>> {
        let mut i = self.at;
        let b = self.byte(&mut i)?;
        self.at = i;
        Ok(b)
    }

    /// Skips JSON whitespace; the byte after it.
    fn after_space(&mut self) -> std::io::Result<Option<u8>> {
        loop {
            match self.here()? {
                Some(b' ' | b'\n' | b'\r' | b'\t') => self.at += 1,
                other => return Ok(other),
            }
        }
    }

    /// Where the object opening at `at` ends (one past its closing bracket), by counting
    /// brackets outside strings; `None` if the file ends first. Whether it is JSON at all is
    /// serde_json's to say.
    fn object_end(&mut self) -> std::io::Result<Option<usize>> {
        let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
        let mut i = self.at;
        while let Some(b) = self.byte(&mut i)? {
            i += 1;
            if in_string {
                match b {
                    _ if escaped => escaped = false,
                    b'\\' => escaped = true,
                    b'"' => in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => in_string = true,
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return Ok(Some(i));
                    }
                }
                _ => {}
            }
        }
        Ok(None)
    }
}

/// What the first pass learned of a value: of the root, its shape; of the root's
/// `"responses"`, whether it is an array.
enum Probed {
    Object(Shape),
    Array,
    Other,
}

#[derive(Default)]
struct Shape {
    /// How many `"responses"` keys it has (the last one counts, as in a map).
    responses: usize,
    /// The last `"responses"` is an array.
    array: bool,
    /// The first other key, in sorted order.
    unknown: Option<String>,
}

/// The first pass: syntax, then the root's shape, with the errors a cassette given as text has.
fn root_shape(path: &Path, file: &File, limit: u64) -> Result<Shape, ScriptError> {
    let mut de = serde_json::Deserializer::from_reader(rewound(path, file, limit)?);
    let probed = Probe.deserialize(&mut de).and_then(|probed| de.end().map(|()| probed));
    let probed = probed.map_err(|e| json_error(path, e))?;
    let error = |message: &str| ScriptError::Shape { origin: ORIGIN.to_string(), message: message.to_string() };
    let Probed::Object(shape) = probed else {
        return Err(error("expected an object {\"responses\": [...]}"));
    };
    if shape.responses == 0 {
        return Err(error("expected a \"responses\" array"));
    }
    if let Some(key) = &shape.unknown {
        return Err(error(&crate::cassette::unknown_key(key)));
    }
    if !shape.array {
        return Err(error("expected a \"responses\" array"));
    }
    Ok(shape)
}

fn rewound<'f>(path: &Path, file: &'f File, limit: u64) -> Result<BufReader<std::io::Take<&'f File>>, ScriptError> {
    let mut file = file;
    file.seek(SeekFrom::Start(0)).map_err(|source| ScriptError::Read { path: path.to_path_buf(), source })?;
    Ok(BufReader::with_capacity(64 << 10, file.take(limit)))
}

/// The file from its start, counting the bytes serde_json takes.
fn counted<'f>(path: &Path, file: &'f File, limit: u64) -> Result<(Counted<'f>, Rc<Cell<u64>>), ScriptError> {
    let count = Rc::new(Cell::new(0));
    Ok((Counted { inner: rewound(path, file, limit)?, count: Rc::clone(&count) }, count))
}

struct Counted<'f> {
    inner: BufReader<std::io::Take<&'f File>>,
    count: Rc<Cell<u64>>,
}

impl Read for Counted<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.set(self.count.get() + n as u64);
        Ok(n)
    }
}

/// Reads a value through, learning what [`Probed`] says of it.
struct Probe;

impl<'de> DeserializeSeed<'de> for Probe {
    type Value = Probed;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Probed, D::Error> {
        d.deserialize_any(Probe)
    }
}

impl<'de> Visitor<'de> for Probe {
    type Value = Probed;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Probed, A::Error> {
        let mut shape = Shape::default();
        while let Some(key) = map.next_key::<String>()? {
            if key == "responses" {
                shape.responses += 1;
                shape.array = matches!(map.next_value_seed(Probe)?, Probed::Array);
            } else {
                map.next_value::<IgnoredAny>()?;
                if crate::cassette::EXTRA_KEYS.contains(&key.as_str()) {
                    continue;
                }
                if shape.unknown.as_ref().is_none_or(|first| key < *first) {
                    shape.unknown = Some(key);
                }
            }
        }
        Ok(Probed::Object(shape))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Probed, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Probed::Array)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Probed, E> {
        Ok(Probed::Other)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Probed, E> {
        Ok(Probed::Other)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Probed, E> {
        Ok(Probed::Other)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Probed, E> {
        Ok(Probed::Other)
    }

    fn visit_str<E>(self, _: &str) -> Result<Probed, E> {
        Ok(Probed::Other)
    }

    fn visit_unit<E>(self) -> Result<Probed, E> {
        Ok(Probed::Other)
    }
}

/// The second pass's findings, and the first response at fault (carried past serde, which
/// would flatten it into a message).
struct Walk<'r> {
    count: Rc<Cell<u64>>,
    replace: Option<&'r Replace>,
    spans: Vec<(u64, u32)>,
    fault: Option<ScriptError>,
}

/// The root, whose `last`-th `"responses"` is walked (the first pass made sure it is there).
struct WalkRoot<'w, 'r> {
    walk: &'w mut Walk<'r>,
    last: usize,
}

impl<'de> Visitor<'de> for WalkRoot<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object {\"responses\": [...]}")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = 0;
        while let Some(key) = map.next_key::<String>()? {
            if key == "responses" {
                seen += 1;
                if seen == self.last {
                    map.next_value_seed(WalkResponses { walk: &mut *self.walk })?;
                    continue;
                }
            }
            map.next_value::<IgnoredAny>()?;
        }
        Ok(())
    }
}

struct WalkResponses<'w, 'r> {
    walk: &'w mut Walk<'r>,
}

impl<'de> DeserializeSeed<'de> for WalkResponses<'_, '_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for WalkResponses<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a \"responses\" array")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let walk = self.walk;
        while let Some((offset, raw)) = seq.next_element_seed(Placed { count: &walk.count })? {
            let response = walk.spans.len() + 1;
            if let Err(message) = validate_response(raw.get(), walk.replace) {
                walk.fault = Some(ScriptError::Response { origin: ORIGIN.to_string(), response, message });
                return Err(de::Error::custom("a response is invalid"));
            }
            let span = offset.zip(u32::try_from(raw.get().len()).ok());
            let Some(span) = span else {
                walk.fault = Some(ScriptError::Response {
                    origin: ORIGIN.to_string(),
                    response,
                    message: "longer than 4 GiB".into(),
                });
                return Err(de::Error::custom("a response is too long"));
            };
            walk.spans.push(span);
        }
        Ok(())
    }
}

/// One response's text and where it starts. serde_json has taken its first byte from the
/// reader (to see that the array goes on) when it hands the element over, so that byte is the
/// last one counted.
struct Placed<'c> {
    count: &'c Cell<u64>,
}

impl<'de> DeserializeSeed<'de> for Placed<'_> {
    type Value = (Option<u64>, Box<RawValue>);

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        let offset = self.count.get().checked_sub(1);
        let raw = <Box<RawValue> as serde::Deserialize>::deserialize(d)?;
        Ok((offset, raw))
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use proptest::prelude::*;

    use super::*;

    const RESPONSES: [&str; 4] = [
        r#"{"message": {"content": "a \"{[\\"}}"#,
        r#"{"message": {"content": [{"type": "text", "text": "]}"}]}, "delay_ms": 1}"#,
        r#"{"error": {"status": 529}}"#,
        r#"{"sse": "event: ping\ndata: {}\n\n"}"#,
    ];

    type Spans = Vec<(u64, u32)>;

    /// The spans the scan finds (if it does), and the exact reading's.
    fn spans_both_ways(text: &[u8]) -> (Option<Spans>, Result<Spans, String>) {
        let mut file = tempfile::tempfile().expect("temp file");
        file.write_all(text).expect("write");
        let scanned = scan(&file, u64::MAX, None).expect("read");
        let exact = exact_spans(Path::new("c.json"), &file, u64::MAX, None).map_err(|e| e.to_string());
        (scanned, exact)
    }

    fn layout(gaps: &[&str], responses: &[usize]) -> String {
        let gap = |k: usize| gaps[k % gaps.len()];
        let items: Vec<String> =
            responses.iter().enumerate().map(|(k, r)| format!("{}{}", RESPONSES[*r], gap(k))).collect();
        format!(
            "{}{{{}\"responses\"{}:{}[{}{}]{}}}{}",
            gap(1),
            gap(2),
            gap(3),
            gap(4),
            gap(5),
            items.join(","),
            gap(6),
            gap(7)
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// The one-pass reading finds every response where the exact reading does, whatever
        /// the whitespace; on a file changed by a byte it finds the same or hands over.
        #[test]
        fn the_scan_agrees_with_the_exact_reading(
            gaps in prop::collection::vec(prop::sample::select(vec!["", " ", "\n", "\r\n\t", "   "]), 1..8),
            responses in prop::collection::vec(0..RESPONSES.len(), 0..12),
            edit in prop::option::of((any::<prop::sample::Index>(), 0u8..3, prop::sample::select(b"{}[]\",:\\ a0".to_vec()))),
        ) {
            let mut text = layout(&gaps, &responses).into_bytes();
            let whole = spans_both_ways(&text);
            prop_assert_eq!(whole.0.as_ref().map(Vec::len), Some(responses.len()));
            prop_assert_eq!(Ok(whole.0.clone().unwrap_or_default()), whole.1);
            if let Some((at, how, byte)) = edit {
                let i = at.index(text.len() + 1);
                match how {
                    0 if i < text.len() => text[i] = byte,
                    1 if i < text.len() => { text.remove(i); }
                    _ => text.insert(i, byte),
                }
                let (scanned, exact) = spans_both_ways(&text);
                if let Some(spans) = scanned {
                    prop_assert_eq!(Ok(spans), exact);
                }
            }
        }
    }

    #[test]
    fn a_response_across_many_windows_is_found_whole() {
        let long = format!(r#"{{"message": {{"content": "{}"}}}}"#, "x\\\"}".repeat(3 * WINDOW / 4));
        let text = format!("{{\"responses\": [{}, {long}, {}]}}", RESPONSES[0], RESPONSES[1]);
        let (scanned, exact) = spans_both_ways(text.as_bytes());
        let spans = scanned.expect("the usual layout");
        assert_eq!(spans[1].1 as usize, long.len());
        assert_eq!(Ok(spans), exact);
    }
}
