//! The one code path from response bytes to [`StreamEvent`]s, shared by the HTTP providers, the
//! scripted provider and the tests: bytes → `SseFramer` (`frame.rs`: SSE framing, linear,
//! capped) → an assembler, with the response's caps and, over the network, an idle timer.

use std::collections::VecDeque;
use std::fmt::Display;
use std::time::Duration;

use bytes::Bytes;
use futures::stream::{self, BoxStream, Stream, StreamExt};
use futures::FutureExt;
use reloop_core::ModelError;

use crate::frame::{FrameError, SseFramer};
use crate::limits::ResponseLimits;
use crate::provider::StreamEvent;

/// Turns SSE events of one provider's wire format into [`StreamEvent`]s. Pure and synchronous,
/// so it can be fed directly in tests.
pub trait SseAssembler: Send + 'static {
    /// One SSE event in (its `event:` name, `"message"` when absent, and its `data:`), zero or
    /// more stream events out.
    fn on_event(&mut self, event_name: &str, data: &str) -> Vec<StreamEvent>;

    /// The body ended: flush what is still open and say how the response ended.
    fn finish(&mut self) -> Vec<StreamEvent>;

    /// Bytes of content taken in so far (text, thinking, tool input). Its growth is progress
    /// for the idle timer; pings and other events that add nothing are not.
    fn content_bytes(&self) -> u64;
}

/// `Stream idle timeout`, Claude Code's words, when no byte at all arrived.
pub const IDLE_NO_CHUNKS: &str = "Stream idle timeout - no chunks received";
/// `Stream idle timeout`, Claude Code's words, when something arrived but then nothing useful.
pub const IDLE_PARTIAL: &str = "Stream idle timeout - partial response received";

/// Reads an SSE body through `assembler`, with only the one-event cap and no idle timer (a
/// body in memory, or a test).
pub fn sse_events<S, B, E, A>(body: S, assembler: A) -> BoxStream<'static, StreamEvent>
where
    S: Stream<Item = Result<B, E>> + Send + Unpin + 'static,
    B: AsRef<[u8]> + Send + 'static,
    E: Display + Send + 'static,
    A: SseAssembler,
{
    sse_events_with(body, assembler, ResponseLimits::framing_only(), None)
}

/// Reads an SSE body through `assembler` under `limits`. The output obeys the [`StreamEvent`]
/// order: it stops right after the first `Done` or `Failed`, dropping (and so cancelling) the
/// body.
///
/// With `idle` set (it needs a tokio runtime), the response fails with a retryable
/// `connection_error` when that long passes without progress: content taken in by the
/// assembler, or a stream event out. Pings, unknown events and bytes that do not complete an
/// event do not count, so a server that trickles a byte at a time cannot hold the run.
pub fn sse_events_with<S, B, E, A>(
    body: S,
    assembler: A,
    limits: ResponseLimits,
    idle: Option<Duration>,
) -> BoxStream<'static, StreamEvent>
where
    S: Stream<Item = Result<B, E>> + Send + Unpin + 'static,
    B: AsRef<[u8]> + Send + 'static,
    E: Display + Send + 'static,
    A: SseAssembler,
{
    struct State<S, A> {
        body: Option<S>,
        framer: SseFramer,
        assembler: A,
        pending: VecDeque<StreamEvent>,
        limits: ResponseLimits,
        wire_bytes: u64,
        idle: Option<Duration>,
        last_progress: Option<tokio::time::Instant>,
    }

    impl<S, A: SseAssembler> State<S, A> {
        fn queue(&mut self, produced: Vec<StreamEvent>) {
            for event in produced {
                let terminal = event.is_terminal();
                self.pending.push_back(event);
                if terminal {
                    // Nothing may follow a terminal event; dropping the body cancels the request.
                    self.body = None;
                    return;
                }
            }
        }

        fn fail(&mut self, error: ModelError) {
            self.queue(vec![StreamEvent::Failed(error)]);
        }

        /// Hands every complete event to the assembler, until one produces output or the
        /// stream is over.
        fn drain_framer(&mut self) {
            while self.body.is_some() && self.pending.is_empty() {
                match self.framer.next_event() {
                    Ok(Some(event)) => {
                        let before = self.assembler.content_bytes();
                        let produced = self.assembler.on_event(&event.name, &event.data);
                        if !produced.is_empty() || self.assembler.content_bytes() > before {
                            self.last_progress = self.idle.map(|_| tokio::time::Instant::now());
                        }
                        self.queue(produced);
                    }
                    Ok(None) => return,
                    Err(FrameError::TooLarge { .. }) => {
                        let error = self.limits.event_exceeded();
                        self.fail(error);
                    }
                    Err(err @ FrameError::NotUtf8(_)) => self.queue(vec![StreamEvent::invalid_stream(err.to_string())]),
                }
            }
        }
    }

    let last_progress = idle.map(|_| tokio::time::Instant::now());
    let state = State {
        body: Some(body),
        framer: SseFramer::new(&limits),
        assembler,
        pending: VecDeque::new(),
        limits,
        wire_bytes: 0,
        idle,
        last_progress,
    };
    stream::unfold(state, |mut state| async move {
        loop {
            if let Some(event) = state.pending.pop_front() {
                return Some((event, state));
            }
            state.body.as_ref()?;
            state.drain_framer();
            if !state.pending.is_empty() {
                continue;
            }
            let deadline = state.idle.zip(state.last_progress).map(|(idle, since)| since + idle);
            // Checked before reading too: a body that is always ready (a flood of pings) would
            // otherwise never let the timer fire.
            if deadline.is_some_and(|deadline| tokio::time::Instant::now() >= deadline) {
                state.fail(idle_timeout(state.wire_bytes));
                continue;
            }
            let Some(body) = state.body.as_mut() else { continue };
            let next = match deadline {
                Some(deadline) => match tokio::time::timeout_at(deadline, body.next()).await {
                    Ok(next) => next,
                    Err(_) => {
                        state.fail(idle_timeout(state.wire_bytes));
                        continue;
                    }
                },
                None => body.next().await,
            };
            match next {
                Some(Ok(bytes)) => {
                    let bytes = bytes.as_ref();
                    state.wire_bytes = state.wire_bytes.saturating_add(bytes.len() as u64);
                    if state.wire_bytes > state.limits.wire_bytes {
                        let error = state.limits.wire_exceeded();
                        state.fail(error);
                        continue;
                    }
                    state.framer.push(bytes);
                }
                Some(Err(err)) => state.fail(ModelError::new(
                    None,
                    "connection_error",
                    format!("the connection failed while reading the response: {err}"),
                )),
                None => {
                    let mut out = state.assembler.finish();
                    if !out.iter().any(StreamEvent::is_terminal) {
                        // An assembler must end the stream; say so rather than end silently.
                        out.push(StreamEvent::invalid_stream("the stream ended without a result"));
                    }
                    state.queue(out);
                }
            }
        }
    })
    .boxed()
}

/// The idle timer fired: retryable, like a dropped connection.
fn idle_timeout(wire_bytes: u64) -> ModelError {
    ModelError::new(None, "connection_error", if wire_bytes == 0 { IDLE_NO_CHUNKS } else { IDLE_PARTIAL })
}

/// Runs a whole in-memory body through `assembler`.
pub(crate) fn sse_events_from_bytes<A: SseAssembler>(body: &[u8], assembler: A) -> Vec<StreamEvent> {
    let chunks = stream::iter([Ok::<Bytes, std::convert::Infallible>(Bytes::copy_from_slice(body))]);
    // Every poll of an in-memory source is ready, so this never yields `None`; `now_or_never`
    // (not `block_on`) keeps it callable from inside any executor.
    sse_events(chunks, assembler)
        .collect::<Vec<_>>()
        .now_or_never()
        .unwrap_or_else(|| vec![StreamEvent::invalid_stream("the in-memory body did not complete")])
}

/// The first `max` characters of `text`, for error messages that quote a server.
pub(crate) fn excerpt(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}
