//! The events of a response read by hand, in the exact form the journal writes them: a model
//! block (text or a tool call), a response's end and a tool's result. With the text deltas
//! (`super::text_delta`), these are nearly every step of every session, and read
//! through serde they were half of a replay's reading thread.
//!
//! Only the writer's own form is taken: its keys, in its order, each once, with nothing else
//! between them. A string with an escape is handed to serde_json whole, so it means what it
//! always meant; a tool's input is read by serde_json as the ordinary reading reads it. Anything
//! else (another order, a key more, a number with a sign or a fraction, a nesting deep enough to
//! meet serde_json's limit) returns `None`, and the ordinary reading decides, so what is
//! accepted, and as what, does not change: the tests hold the two readings to each other.

use serde_json::Value;

use reloop_core::{ContentBlock, Event, StopReason, ToolOutcome, ToolResultContent, Usage};

/// The event `json` holds, when it is in the writer's form of a kind read here.
pub(crate) fn written(json: &str) -> Option<Event> {
    let mut s = Scan(json);
    s.lit(r#"{"kind":""#)?;
    let event = if s.opt(r#"model_block","index":"#) {
        model_block(&mut s)?
    } else if s.opt(r#"tool_done","tool_use_id":"#) {
        tool_done(&mut s)?
    } else if s.opt(r#"model_done""#) {
        model_done(&mut s)?
    } else {
        return None;
    };
    s.0.is_empty().then_some(event)
}

fn model_block(s: &mut Scan<'_>) -> Option<Event> {
    let index = usize::try_from(s.uint()?).ok()?;
    s.lit(r#","block":{"type":""#)?;
    let block = if s.opt(r#"text","text":"#) {
        ContentBlock::text(s.string()?)
    } else if s.opt(r#"tool_use","id":"#) {
        let id = s.string()?;
        s.lit(r#","name":"#)?;
        let name = s.string()?;
        s.lit(r#","input":"#)?;
        ContentBlock::tool_use(id, name, s.value()?)
    } else {
        return None;
    };
    s.lit("}")?;
    Some(Event::ModelBlock { index, block, request: s.request_and_end()? })
}

fn tool_done(s: &mut Scan<'_>) -> Option<Event> {
    let tool_use_id = s.string()?;
    s.lit(r#","content":"#)?;
    let content = ToolResultContent::Text(s.string()?);
    let is_error = s.opt(r#","is_error":true"#);
    let denied = s.opt(r#","denied":true"#);
    let request = s.request_and_end()?;
    Some(Event::ToolDone(ToolOutcome { is_error, denied, request, ..ToolOutcome::new(tool_use_id, content) }))
}

fn model_done(s: &mut Scan<'_>) -> Option<Event> {
    let id = if s.opt(r#","id":"#) { Some(s.string()?) } else { None };
    let model = if s.opt(r#","model":"#) { Some(s.string()?) } else { None };
    let stop_reason = if s.opt(r#","stop_reason":"#) { Some(StopReason::parse(&s.string()?)) } else { None };
    s.lit(r#","usage":{"input_tokens":"#)?;
    let mut usage = Usage { input_tokens: s.uint()?, ..Usage::default() };
    s.lit(r#","output_tokens":"#)?;
    usage.output_tokens = s.uint()?;
    if s.opt(r#","cache_creation_input_tokens":"#) {
        usage.cache_creation_input_tokens = s.uint()?;
    }
    if s.opt(r#","cache_read_input_tokens":"#) {
        usage.cache_read_input_tokens = s.uint()?;
    }
    s.lit("}")?;
    Some(Event::ModelDone { id, model, stop_reason, usage, request: s.request_and_end()? })
}

/// A non-negative integer as JSON writes it (no sign, no leading zero, no fraction), and the
/// text after it.
pub(crate) fn number(text: &str) -> Option<(u64, &str)> {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    let (number, rest) = text.split_at(digits);
    if digits == 0 || (digits > 1 && number.starts_with('0')) || rest.starts_with(['.', 'e', 'E']) {
        return None;
    }
    // Digits alone, so a digit at a time with overflow checked is `parse` without its sign
    // handling.
    let mut n: u64 = 0;
    for b in number.bytes() {
        n = n.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
    }
    Some((n, rest))
}

/// The text not read yet.
struct Scan<'a>(&'a str);

impl<'a> Scan<'a> {
    /// Takes `text`, which must come next.
    fn lit(&mut self, text: &str) -> Option<()> {
        self.0 = self.0.strip_prefix(text)?;
        Some(())
    }

    /// Takes `text` if it comes next.
    fn opt(&mut self, text: &str) -> bool {
        self.lit(text).is_some()
    }

    /// A non-negative integer as JSON writes it.
    fn uint(&mut self) -> Option<u64> {
        let (n, rest) = number(self.0)?;
        self.0 = rest;
        Some(n)
    }

    /// A string: its text as it stands when it holds no escape, else decoded by serde_json.
    fn string(&mut self) -> Option<String> {
        let rest = self.0.strip_prefix('"')?;
        let bytes = rest.as_bytes();
        let end = first_escaped(bytes)?;
        if bytes[end] == b'"' {
            self.0 = &rest[end + 1..];
            return Some(rest[..end].to_string());
        }
        // An escape: find the closing quote past every escaped character, and let serde_json
        // read the whole string (it refuses what it always refused).
        let mut i = end;
        while let Some(&b) = bytes.get(i) {
            match b {
                b'\\' => i += 2,
                b'"' => break,
                _ => i += 1,
            }
        }
        let quoted = self.0.get(..i + 2)?;
        let text = serde_json::from_str::<String>(quoted).ok()?;
        self.0 = &self.0[quoted.len()..];
        Some(text)
    }

    /// Any JSON value, as serde_json reads it, and not so deeply nested that serde_json's
    /// limit, met sooner inside the event, would have refused it there.
    fn value(&mut self) -> Option<Value> {
        let start = self.0;
        if let Some(value) = self.compact(0) {
            return Some(value);
        }
        self.0 = start;
        let mut values = serde_json::Deserializer::from_str(self.0).into_iter::<Value>();
        let value = values.next()?.ok()?;
        let read = values.byte_offset();
        if depth(&value) > MAX_DEPTH {
            return None;
        }
        self.0 = &self.0[read..];
        Some(value)
    }

    /// A value in the form the writer gives it (no space; integers that are not negative), built
    /// as serde_json builds it; `None` for any other form (a float, a negative or huge number,
    /// space, an escape serde_json refuses) and for nesting past [`MAX_DEPTH`], which
    /// [`Scan::value`] then leaves to serde_json. `level` counts the containers around it.
    fn compact(&mut self, level: usize) -> Option<Value> {
        match *self.0.as_bytes().first()? {
            b'"' => self.string().map(Value::String),
            b'0'..=b'9' => self.uint().map(Value::from),
            b't' => self.lit("true").map(|()| Value::Bool(true)),
            b'f' => self.lit("false").map(|()| Value::Bool(false)),
            b'n' => self.lit("null").map(|()| Value::Null),
            b'[' if level < MAX_DEPTH => {
                self.lit("[")?;
                let mut items = Vec::new();
                if !self.opt("]") {
                    loop {
                        items.push(self.compact(level + 1)?);
                        if !self.opt(",") {
                            break;
                        }
                    }
                    self.lit("]")?;
                }
                Some(Value::Array(items))
            }
            b'{' if level < MAX_DEPTH => {
                self.lit("{")?;
                let mut map = serde_json::Map::new();
                if !self.opt("}") {
                    loop {
                        let key = self.string()?;
                        self.lit(":")?;
                        let item = self.compact(level + 1)?;
                        map.insert(key, item);
                        if !self.opt(",") {
                            break;
                        }
                    }
                    self.lit("}")?;
                }
                Some(Value::Object(map))
            }
            _ => None,
        }
    }

    /// The optional `request` and the event's closing brace.
    fn request_and_end(&mut self) -> Option<u32> {
        let request = if self.opt(r#","request":"#) { u32::try_from(self.uint()?).ok()? } else { 0 };
        self.lit("}")?;
        Some(request)
    }
}

/// Nesting read here, well inside serde_json's limit of 128 counted from the event's start.
const MAX_DEPTH: usize = 100;

/// How deeply `value` nests (a scalar is 0); counting stops past [`MAX_DEPTH`].
fn depth(value: &Value) -> usize {
    fn at(value: &Value, d: usize) -> usize {
        if d > MAX_DEPTH {
            return d;
        }
        match value {
            Value::Array(items) => items.iter().map(|v| at(v, d + 1)).max().unwrap_or(d + 1),
            Value::Object(map) => map.values().map(|v| at(v, d + 1)).max().unwrap_or(d + 1),
            _ => d,
        }
    }
    at(value, 0)
}

/// Where the first byte a JSON string escapes (a quote, a backslash, a control character) stands
/// in `bytes`: eight bytes at a time, by the word tricks for "has a byte less than" and "has a
/// byte equal to" (a tool's output is long, and a byte at a time was six instructions a byte).
/// The tricks can flag a byte after a true match (a borrow carries up), never one before it, so
/// the lowest flag is the first match. The tail is padded with spaces, which nothing escapes.
fn first_escaped(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    fn flags(w: u64) -> u64 {
        let control = w.wrapping_sub(ONES * 0x20) & !w;
        let quote = w ^ (ONES * u64::from(b'"'));
        let quote = quote.wrapping_sub(ONES) & !quote;
        let backslash = w ^ (ONES * u64::from(b'\\'));
        let backslash = backslash.wrapping_sub(ONES) & !backslash;
        (control | quote | backslash) & HIGH
    }
    let word = |chunk: &[u8]| {
        let mut w = [b' '; 8];
        w[..chunk.len()].copy_from_slice(chunk);
        flags(u64::from_le_bytes(w))
    };
    bytes.chunks(8).enumerate().find_map(|(i, chunk)| {
        let f = word(chunk);
        (f != 0).then(|| i * 8 + (f.trailing_zeros() / 8) as usize)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn ordinary(json: &str) -> Option<Event> {
        serde_json::from_str(json).ok()
    }

    #[test]
    fn a_tool_input_is_built_as_serde_json_builds_it_whatever_its_numbers_and_nesting() {
        let deep = |n: usize| format!("{}1{}", "[".repeat(n), "]".repeat(n));
        let inputs = [
            "{}".to_string(),
            "[]".into(),
            r#"{"a":{},"b":[],"c":[[],{}],"d":"","e":true,"f":false,"g":null}"#.into(),
            r#"{"k":1,"k":2,"j":3}"#.into(),
            "[0,18446744073709551615,18446744073709551616,1.0,1e5,-0,-1]".into(),
            "[01]".into(),
            r#"{"a":"x\u0000y","b\n":"\ud83d\ude00"}"#.into(),
            "[1, 2]".into(),
            "{ }".into(),
            "[tru]".into(),
            "[1,]".into(),
            deep(99),
            deep(100),
            deep(101),
        ];
        for (i, input) in inputs.into_iter().enumerate() {
            let json = format!(
                r#"{{"kind":"model_block","index":1,"block":{{"type":"tool_use","id":"t","name":"n","input":{input}}},"request":1}}"#
            );
            let read = written(&json);
            // The writer's forms are read here; the others may be left to serde_json.
            assert!(i >= 4 || read.is_some(), "{input}");
            if read.is_some() {
                assert_eq!(read, ordinary(&json), "{input}");
            }
            assert_eq!(super::super::read_event(&json).ok(), ordinary(&json), "{input}");
        }
    }

    #[test]
    fn the_writers_forms_are_read_here_as_the_ordinary_reading_reads_them() {
        for json in [
            r#"{"kind":"model_block","index":0,"block":{"type":"text","text":"Checking the next file."},"request":21}"#,
            r#"{"kind":"model_block","index":1,"block":{"type":"tool_use","id":"toolu_21","name":"Noop","input":{"n":21}},"request":21}"#,
            r#"{"kind":"model_block","index":1,"block":{"type":"tool_use","id":"t","name":"R","input":{"a":[1,2.5,null,{"b":"\n"}],"a":3}}}"#,
            r#"{"kind":"model_block","index":0,"block":{"type":"text","text":"line\none \"quoted\" \u00e9 \ud83d\ude00"},"request":2}"#,
            r#"{"kind":"model_done","id":"msg_21","model":"bench","stop_reason":"tool_use","usage":{"input_tokens":1021,"output_tokens":20},"request":21}"#,
            r#"{"kind":"model_done","stop_reason":"something_new","usage":{"input_tokens":1,"output_tokens":2,"cache_creation_input_tokens":3,"cache_read_input_tokens":4}}"#,
            r#"{"kind":"model_done","usage":{"input_tokens":0,"output_tokens":0}}"#,
            r#"{"kind":"tool_done","tool_use_id":"toolu_20","content":"ok 20","request":20}"#,
            r#"{"kind":"tool_done","tool_use_id":"t","content":"a\tb\\c","is_error":true,"denied":true,"request":4294967295}"#,
            r#"{"kind":"tool_done","tool_use_id":"t","content":""}"#,
        ] {
            let read = written(json);
            assert!(read.is_some(), "read here: {json}");
            assert_eq!(read, ordinary(json), "{json}");
            assert_eq!(super::super::read_event(json).ok(), ordinary(json));
        }
    }

    #[test]
    fn other_forms_are_left_to_the_ordinary_reading() {
        let deep = format!(
            r#"{{"kind":"model_block","index":0,"block":{{"type":"tool_use","id":"t","name":"R","input":{}1{}}}}}"#,
            "[".repeat(126),
            "]".repeat(126)
        );
        for json in [
            r#"{"kind":"model_block","block":{"type":"text","text":"x"},"index":0}"#,
            r#"{"kind":"model_block","index":0,"block":{"type":"text","text":"x","citations":null}}"#,
            r#"{"kind":"model_block","index":0,"block":{"text":"x","type":"text"}}"#,
            r#"{"kind":"model_block","index":-1,"block":{"type":"text","text":"x"}}"#,
            r#"{"kind":"model_block","index":0,"block":{"type":"thinking","thinking":"x"}}"#,
            r#"{"kind":"model_block","index":0,"block":{"type":"tool_use","id":"t","name":"R","input":{}},"request":1,"x":2}"#,
            r#"{"kind":"model_block","index":0,"block":{"type":"text","text":"x"},"request":4294967296}"#,
            r#"{"kind":"model_block","index":0,"block":{"type":"text","text":"x"}} "#,
            r#"{"kind":"tool_done","tool_use_id":"t","content":[{"type":"text","text":"x"}],"request":1}"#,
            r#"{"kind":"tool_done","tool_use_id":"t","content":"x","is_error":false}"#,
            r#"{"kind":"tool_done","tool_use_id":"t","content":"x","request":1,"agent_usage":{"cost_usd":1.0,"model_usage":{}}}"#,
            r#"{"kind":"model_done","usage":{"output_tokens":2,"input_tokens":1}}"#,
            r#"{"kind":"model_done","id":null,"usage":{"input_tokens":1,"output_tokens":2}}"#,
            r#"{"kind":"model_done","usage":{"input_tokens":1.0,"output_tokens":2}}"#,
            r#"{"kind":"model_done"}"#,
            &deep,
        ] {
            assert_eq!(written(json), None, "{json}");
            assert_eq!(super::super::read_event(json).ok(), ordinary(json), "{json}");
        }
    }

    /// Strings with every kind of character, and inputs of every shape.
    fn text() -> impl Strategy<Value = String> {
        "(\\PC|[\"\\\\\u{0}-\u{1f}\u{7f}é✓])*"
    }

    fn input() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(Value::from),
            text().prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::vec(("[a-z\"]{0,3}", inner), 0..4)
                    .prop_map(|entries| Value::Object(entries.into_iter().collect())),
            ]
        })
    }

    fn event() -> impl Strategy<Value = Event> {
        let request = prop_oneof![Just(0u32), any::<u32>()];
        prop_oneof![
            (any::<usize>(), text(), request.clone()).prop_map(|(index, t, request)| Event::ModelBlock {
                index,
                block: ContentBlock::text(t),
                request
            }),
            (any::<usize>(), text(), text(), input(), request.clone()).prop_map(|(index, id, name, input, request)| {
                Event::ModelBlock { index, block: ContentBlock::tool_use(id, name, input), request }
            }),
            (text(), text(), any::<bool>(), any::<bool>(), request.clone()).prop_map(
                |(tool_use_id, content, is_error, denied, request)| {
                    Event::ToolDone(ToolOutcome {
                        is_error,
                        denied,
                        request,
                        ..ToolOutcome::new(tool_use_id, ToolResultContent::Text(content))
                    })
                }
            ),
            (
                proptest::option::of(text()),
                proptest::option::of(text()),
                proptest::option::of(prop_oneof![Just("end_turn".to_string()), Just("tool_use".to_string()), text()]),
                any::<[u64; 4]>(),
                request,
            )
                .prop_map(|(id, model, stop, [i, o, c, r], request)| Event::ModelDone {
                    id,
                    model,
                    stop_reason: stop.map(|s| StopReason::parse(&s)),
                    usage: Usage {
                        input_tokens: i,
                        output_tokens: o,
                        cache_creation_input_tokens: c % 3,
                        cache_read_input_tokens: r,
                    },
                    request,
                }),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        /// Every event of these kinds, as the journal writes it, is read here, as written.
        #[test]
        fn a_written_event_is_read_here_as_it_was(event in event()) {
            let json = serde_json::to_string(&event).expect("writes");
            prop_assert_eq!(written(&json), Some(event.clone()), "{}", json);
            prop_assert_eq!(ordinary(&json), Some(event));
        }

        /// Whatever is read here, the ordinary reading reads the same: any written event with
        /// one byte replaced, inserted or taken out anywhere.
        #[test]
        fn what_is_read_here_the_ordinary_reading_reads_the_same(
            event in event(),
            at in any::<prop::sample::Index>(),
            edit in 0..3u8,
            byte in prop_oneof![Just(b'"'), Just(b'\\'), Just(b'0'), Just(b'9'), Just(b','), Just(b'{'), Just(b'}'), Just(b'['), Just(b' '), Just(b'.'), Just(b'e'), Just(b'-'), Just(b'u'), Just(0x1fu8)],
        ) {
            let json = serde_json::to_string(&event).expect("writes");
            let Some(edited) = crate::event_read::tests::one_byte_edit(json, at, edit, byte) else { return Ok(()) };
            if let Some(read) = written(&edited) {
                prop_assert_eq!(ordinary(&edited), Some(read), "{}", edited);
            }
        }
    }

    #[test]
    fn a_nested_input_is_measured() {
        assert_eq!(depth(&json!(1)), 0);
        assert_eq!(depth(&json!({"a": [1, {"b": []}]})), 4);
        assert_eq!(depth(&json!([])), 1);
    }
}
