//! A Messages API response object, the non-streaming answer: read into the events a stream of
//! it would have given, so the HTTP provider's whole-answer requests and the scripted
//! provider's `message` responses reach the driver exactly as a streamed answer does.

use reloop_core::{ContentBlock, StopReason, Usage};
use serde::Deserialize;
use serde_json::Value;

use crate::anthropic::sse::merge_usage;
use crate::provider::StreamEvent;

/// A Messages API response object (non-streaming shape).
#[derive(Deserialize)]
struct ResponseObject {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(deserialize_with = "reloop_core::content_from_string_or_blocks")]
    content: Vec<ContentBlock>,
    #[serde(default)]
    stop_reason: Option<StopReason>,
    #[serde(default)]
    usage: Option<Value>,
}

/// A Messages API response object as the events a stream of it would have given.
pub(crate) fn message_events(body: Value) -> Result<Vec<StreamEvent>, String> {
    let response: ResponseObject =
        serde_json::from_value(body).map_err(|err| format!("\"message\" is not a Messages API response: {err}"))?;
    let blocks = response.content;
    let mut events = Vec::new();
    for (index, block) in blocks.into_iter().enumerate() {
        if let ContentBlock::Text(text) = &block {
            if !text.text.is_empty() {
                events.push(StreamEvent::TextDelta { index, text: text.text.clone() });
            }
        }
        events.push(StreamEvent::Block { index, block });
    }
    let mut usage = Usage::default();
    if let Some(value) = &response.usage {
        merge_usage(&mut usage, value);
    }
    events.push(StreamEvent::Done { id: response.id, model: response.model, stop_reason: response.stop_reason, usage });
    Ok(events)
}
