//! The stream idle timer, on paused time: only content is progress. Pings, unknown events and
//! bytes that never complete an event do not hold a response open.

use std::time::Duration;

use futures::stream::{self, StreamExt};
use reloop_core::ModelError;
use reloop_model::sse::{IDLE_NO_CHUNKS, IDLE_PARTIAL};
use reloop_model::{sse_events_with, AnthropicAssembler, ResponseLimits, StreamEvent};

const START: &str = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m1\"}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n";
const DELTA: &str = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n";
const PING: &str = "event: ping\ndata: {\"type\":\"ping\"}\n\n";
const END: &str = "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";

const IDLE: Duration = Duration::from_secs(90);

/// A body that sends `pieces` in order, each after its delay, then ends (or, with `forever`,
/// repeats the last piece forever).
fn body(pieces: Vec<(u64, String)>, forever: bool) -> impl futures::Stream<Item = Result<Vec<u8>, String>> + Unpin {
    let last = pieces.last().cloned();
    let repeated = stream::iter(forever.then_some(last).flatten()).flat_map(stream::repeat);
    Box::pin(stream::iter(pieces).chain(repeated).then(|(delay, piece)| async move {
        tokio::time::sleep(Duration::from_secs(delay)).await;
        Ok(piece.into_bytes())
    }))
}

async fn run(pieces: Vec<(u64, String)>, forever: bool) -> (Vec<StreamEvent>, Duration) {
    let started = tokio::time::Instant::now();
    let events = sse_events_with(
        body(pieces, forever),
        AnthropicAssembler::with_limits(ResponseLimits::for_max_tokens(1000)),
        ResponseLimits::for_max_tokens(1000),
        Some(IDLE),
    )
    .collect()
    .await;
    (events, started.elapsed())
}

fn idle_error(message: &str) -> StreamEvent {
    StreamEvent::Failed(ModelError::new(None, "connection_error", message))
}

#[tokio::test(start_paused = true)]
async fn pings_every_ten_seconds_are_not_progress() {
    let (events, took) = run(vec![(0, START.to_string()), (10, PING.to_string())], true).await;
    assert_eq!(events.last(), Some(&idle_error(IDLE_PARTIAL)));
    assert!(took >= IDLE && took < IDLE + Duration::from_secs(11), "{took:?}");
}

#[tokio::test(start_paused = true)]
async fn a_byte_every_two_seconds_is_not_progress() {
    let trickle: Vec<(u64, String)> = DELTA.chars().map(|c| (2, c.to_string())).collect();
    let mut pieces = vec![(0, START.to_string())];
    pieces.extend(trickle.into_iter().cycle().take(200));
    let (events, took) = run(pieces, false).await;
    assert_eq!(events.last(), Some(&idle_error(IDLE_PARTIAL)));
    assert!(took >= IDLE && took <= IDLE + Duration::from_secs(2), "{took:?}");
}

#[tokio::test(start_paused = true)]
async fn a_silent_server_has_sent_no_chunks() {
    let (events, took) = run(vec![(1_000_000, START.to_string())], false).await;
    assert_eq!(events, vec![idle_error(IDLE_NO_CHUNKS)]);
    assert_eq!(took, IDLE);
}

#[tokio::test(start_paused = true)]
async fn content_inside_every_idle_period_keeps_a_slow_response_going() {
    let mut pieces = vec![(0, START.to_string())];
    pieces.extend((0..5).map(|_| (80, DELTA.to_string())));
    pieces.push((80, END.to_string()));
    let (events, took) = run(pieces, false).await;
    assert!(matches!(events.last(), Some(StreamEvent::Done { .. })), "{events:?}");
    assert_eq!(took, Duration::from_secs(480));
}
