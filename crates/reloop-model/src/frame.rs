//! Server-sent events framing (the WHATWG `text/event-stream` rules), in time linear in the
//! bytes received however they are cut into chunks, and in bounded memory.
//!
//! `eventsource-stream`, used before, parsed its whole buffer again from the start on every
//! chunk while a line was incomplete, and copied the rest of the buffer after each line: one
//! 16 MB `data:` line cost 22 s of CPU. Here each byte is searched once for a line end, and
//! consumed bytes are dropped in amortized linear time.
//!
//! The one behaviour kept from `eventsource-stream` on purpose: at the end of the body an
//! unfinished line or event (no blank line after it) is dropped, as the standard says.

use crate::limits::ResponseLimits;

/// One dispatched event: its `event:` name (`message` when absent) and its `data:` lines
/// joined by `\n`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    pub name: String,
    pub data: String,
}

/// Why a body cannot be framed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum FrameError {
    #[error("one line or event is over {limit} bytes")]
    TooLarge { limit: usize },
    #[error("the response body is not valid UTF-8: {0}")]
    NotUtf8(#[from] std::str::Utf8Error),
}

/// Bytes in, events out.
#[derive(Debug)]
pub(crate) struct SseFramer {
    buffer: Vec<u8>,
    /// The first byte of `buffer` not yet consumed.
    start: usize,
    /// Bytes from `start` on already searched and known to hold no line end.
    searched: usize,
    /// Whether the first line was seen (a byte order mark may open the stream).
    started: bool,
    name: String,
    data: String,
    max_event_bytes: usize,
    /// Bytes searched for a line end plus bytes moved when dropping consumed ones: the work
    /// done, which must stay linear in the bytes pushed. Only tests read it.
    #[cfg_attr(not(test), allow(dead_code))]
    work: u64,
}

impl SseFramer {
    pub fn new(limits: &ResponseLimits) -> Self {
        SseFramer {
            buffer: Vec::new(),
            start: 0,
            searched: 0,
            started: false,
            name: String::new(),
            data: String::new(),
            max_event_bytes: limits.event_bytes,
            work: 0,
        }
    }

    /// The work done so far (see the field), for the linearity test.
    #[cfg(test)]
    pub fn work(&self) -> u64 {
        self.work
    }

    /// Appends received bytes. Consumed bytes are dropped once they are at least half the
    /// buffer, so each byte is moved a bounded number of times.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.start > 0 && self.start >= self.buffer.len() / 2 {
            self.work += (self.buffer.len() - self.start) as u64;
            self.buffer.drain(..self.start);
            self.start = 0;
        }
        self.buffer.extend_from_slice(bytes);
    }

    /// The next complete event, `None` when more bytes are needed.
    pub fn next_event(&mut self) -> Result<Option<SseEvent>, FrameError> {
        loop {
            let from = self.start + self.searched;
            let found = memchr::memchr2(b'\n', b'\r', &self.buffer[from..]);
            self.work += found.map_or(self.buffer.len() - from, |offset| offset + 1) as u64;
            let Some(offset) = found else {
                self.searched = self.buffer.len() - self.start;
                if self.searched > self.max_event_bytes {
                    return Err(FrameError::TooLarge { limit: self.max_event_bytes });
                }
                return Ok(None);
            };
            let end = from + offset;
            let terminator = match (self.buffer[end], self.buffer.get(end + 1)) {
                (b'\r', Some(b'\n')) => 2,
                // A CR at the end of what arrived may be the first half of a CRLF: wait.
                (b'\r', None) => {
                    self.searched = end - self.start;
                    return Ok(None);
                }
                _ => 1,
            };
            if end - self.start > self.max_event_bytes {
                return Err(FrameError::TooLarge { limit: self.max_event_bytes });
            }
            let line_start = self.start;
            self.start = end + terminator;
            self.searched = 0;
            if let Some(event) = self.line(line_start, end)? {
                return Ok(Some(event));
            }
        }
    }

    /// One line (without its terminator): a field, a comment, or the blank line that
    /// dispatches the event.
    fn line(&mut self, from: usize, to: usize) -> Result<Option<SseEvent>, FrameError> {
        let mut line = std::str::from_utf8(&self.buffer[from..to])?;
        if !self.started {
            self.started = true;
            line = line.strip_prefix('\u{feff}').unwrap_or(line);
        }
        if line.is_empty() {
            return Ok(self.dispatch());
        }
        if line.starts_with(':') {
            return Ok(None);
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "event" => {
                self.name.clear();
                self.name.push_str(value);
            }
            "data" => {
                if self.data.len() + value.len() + 1 > self.max_event_bytes {
                    return Err(FrameError::TooLarge { limit: self.max_event_bytes });
                }
                self.data.push_str(value);
                self.data.push('\n');
            }
            // `id` and `retry` only matter to a reconnecting EventSource, which this is not.
            _ => {}
        }
        Ok(None)
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let mut name = std::mem::take(&mut self.name);
        let mut data = std::mem::take(&mut self.data);
        if data.is_empty() {
            return None;
        }
        data.pop();
        if name.is_empty() {
            name.push_str("message");
        }
        Some(SseEvent { name, data })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(chunks: &[&[u8]]) -> Result<Vec<(String, String)>, FrameError> {
        let mut framer = SseFramer::new(&ResponseLimits::framing_only());
        let mut out = Vec::new();
        for chunk in chunks {
            framer.push(chunk);
            while let Some(event) = framer.next_event()? {
                out.push((event.name, event.data));
            }
        }
        Ok(out)
    }

    fn pair(name: &str, data: &str) -> (String, String) {
        (name.to_string(), data.to_string())
    }

    #[test]
    fn the_standards_examples() {
        let body = b"data: first\n\ndata: second, it\ndata: has two lines.\n\n: comment\nevent: add\ndata:73857293\n\ndata\n\ndata\ndata\n\ndata:\n\n";
        assert_eq!(
            frame(&[body]),
            Ok(vec![
                pair("message", "first"),
                pair("message", "second, it\nhas two lines."),
                pair("add", "73857293"),
                pair("message", ""),
                pair("message", "\n"),
                pair("message", ""),
            ])
        );
    }

    #[test]
    fn every_line_ending_and_every_cut() {
        let body = "\u{feff}event: a\r\ndata: x\r\rdata: y\n\r\nid: 1\nretry: 5\ndata: 中文\n\n";
        let whole = frame(&[body.as_bytes()]);
        assert_eq!(whole, Ok(vec![pair("a", "x"), pair("message", "y"), pair("message", "中文")]));
        let bytes = body.as_bytes();
        for cut in 0..=bytes.len() {
            let (a, b) = bytes.split_at(cut);
            assert_eq!(frame(&[a, b]), whole, "cut at {cut}");
        }
    }

    #[test]
    fn an_unfinished_event_at_the_end_is_dropped() {
        assert_eq!(frame(&[b"data: a\n\ndata: b\n"]), Ok(vec![pair("message", "a")]));
        assert_eq!(frame(&[b"data: a\n\ndata: b"]), Ok(vec![pair("message", "a")]));
    }

    #[test]
    fn a_long_line_or_event_is_refused_before_it_is_whole() {
        let mut framer = SseFramer::new(&ResponseLimits::framing_only().with_event_bytes(8));
        framer.push(b"data: 12");
        assert_eq!(framer.next_event(), Ok(None));
        framer.push(b"3");
        assert_eq!(framer.next_event(), Err(FrameError::TooLarge { limit: 8 }));

        let mut framer = SseFramer::new(&ResponseLimits::framing_only().with_event_bytes(8));
        framer.push(b"data: 1234\ndata: 5678\n");
        assert_eq!(framer.next_event(), Err(FrameError::TooLarge { limit: 8 }));
    }

    /// The work to frame one `data:` line of `size` bytes arriving in 16 KiB pieces, as from
    /// a socket, followed by a thousand small events.
    fn work_for_line(size: usize) -> u64 {
        let mut body = format!("data: {}\n\n", "x".repeat(size)).into_bytes();
        body.extend("event: ping\ndata: {}\n\n".repeat(1000).bytes());
        let mut framer = SseFramer::new(&ResponseLimits::framing_only());
        let mut events = 0;
        for piece in body.chunks(16 << 10) {
            framer.push(piece);
            while let Ok(Some(_)) = framer.next_event() {
                events += 1;
            }
        }
        assert_eq!(events, 1001);
        framer.work()
    }

    #[test]
    fn framing_is_linear_in_the_length_of_a_line() {
        // Each byte is searched once and moved at most once more: eventsource-stream's
        // re-parse on every piece made this 1024 × 16 MiB / 2 for the long line.
        for size in [1 << 20, 16 << 20] {
            let bytes = (size + 8 + 24_000) as u64;
            let work = work_for_line(size);
            assert!(work <= 2 * bytes, "{work} units of work for {bytes} bytes");
        }
        let ratio = work_for_line(16 << 20) as f64 / work_for_line(1 << 20) as f64;
        assert!((14.0..=17.0).contains(&ratio), "16 MiB costs {ratio} times 1 MiB");
    }

    #[test]
    fn invalid_utf8_is_an_error() {
        assert!(matches!(frame(&[b"data: \xff\n\n"]), Err(FrameError::NotUtf8(_))));
    }
}
