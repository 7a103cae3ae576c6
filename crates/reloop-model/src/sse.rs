//! The one code path from response bytes to [`StreamEvent`]s, shared by the HTTP providers, the
//! scripted provider and the tests: bytes → `eventsource-stream` (SSE framing) → an assembler.

use std::collections::VecDeque;
use std::fmt::Display;

use bytes::Bytes;
use eventsource_stream::{EventStream, EventStreamError};
use futures::stream::{self, BoxStream, Stream, StreamExt};
use futures::FutureExt;
use reloop_core::ModelError;

use crate::provider::StreamEvent;

/// Turns SSE events of one provider's wire format into [`StreamEvent`]s. Pure and synchronous,
/// so it can be fed directly in tests.
pub trait SseAssembler: Send + 'static {
    /// One SSE event in (its `event:` name, `"message"` when absent, and its `data:`), zero or
    /// more stream events out.
    fn on_event(&mut self, event_name: &str, data: &str) -> Vec<StreamEvent>;

    /// The body ended: flush what is still open and say how the response ended.
    fn finish(&mut self) -> Vec<StreamEvent>;
}

/// Reads an SSE body through `assembler`. The output obeys the [`StreamEvent`] order: it stops
/// right after the first `Done` or `Failed`, dropping (and so cancelling) the body.
pub fn sse_events<S, B, E, A>(body: S, assembler: A) -> BoxStream<'static, StreamEvent>
where
    S: Stream<Item = Result<B, E>> + Send + Unpin + 'static,
    B: AsRef<[u8]> + Send + 'static,
    E: Display + Send + 'static,
    A: SseAssembler,
{
    struct State<S, A> {
        events: Option<EventStream<S>>,
        assembler: A,
        pending: VecDeque<StreamEvent>,
    }

    fn queue<S, A>(state: &mut State<S, A>, produced: Vec<StreamEvent>) {
        for event in produced {
            let terminal = event.is_terminal();
            state.pending.push_back(event);
            if terminal {
                // Nothing may follow a terminal event; dropping the body cancels the request.
                state.events = None;
                return;
            }
        }
    }

    let state = State { events: Some(EventStream::new(body)), assembler, pending: VecDeque::new() };
    stream::unfold(state, |mut state| async move {
        loop {
            if let Some(event) = state.pending.pop_front() {
                return Some((event, state));
            }
            let events = state.events.as_mut()?;
            let produced = match events.next().await {
                Some(Ok(event)) => state.assembler.on_event(&event.event, &event.data),
                Some(Err(err)) => {
                    let failed = transport_failure(err);
                    state.events = None;
                    vec![failed]
                }
                None => {
                    state.events = None;
                    let mut out = state.assembler.finish();
                    if !out.iter().any(StreamEvent::is_terminal) {
                        // An assembler must end the stream; say so rather than end silently.
                        out.push(StreamEvent::invalid_stream("the stream ended without a result"));
                    }
                    out
                }
            };
            queue(&mut state, produced);
        }
    })
    .boxed()
}

fn transport_failure<E: Display>(err: EventStreamError<E>) -> StreamEvent {
    match err {
        EventStreamError::Transport(err) => StreamEvent::Failed(ModelError::new(
            None,
            "connection_error",
            format!("the connection failed while reading the response: {err}"),
        )),
        EventStreamError::Utf8(err) => {
            StreamEvent::invalid_stream(format!("the response body is not valid UTF-8: {err}"))
        }
        EventStreamError::Parser(err) => {
            StreamEvent::invalid_stream(format!("the response body is not a valid event stream: {err:?}"))
        }
    }
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
