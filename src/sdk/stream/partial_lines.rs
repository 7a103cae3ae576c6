//! Where the partial-message events ([`crate::sdk::partial`]) go among the stream's lines.

use reloop_core::ContentBlock;
use serde_json::Value;

use super::SdkStream;
use crate::sdk::partial::Partial;

impl SdkStream {
    /// Prints `stream_event` lines.
    pub(super) fn stream_events(&mut self, events: Vec<Value>) {
        for event in events {
            self.stream_event(event);
        }
    }

    /// With partial messages, the events before block `index`'s `assistant` line.
    pub(super) fn partial_before(&mut self, model: &str, id: &str, index: usize, block: &ContentBlock) {
        if self.partial {
            let events = self.streaming.before_block(model, id, index, block);
            self.stream_events(events);
        }
    }

    /// With partial messages, the block's `content_block_stop` after its `assistant` line.
    pub(super) fn partial_after(&mut self, index: usize) {
        if self.partial {
            self.stream_event(Partial::after_block(index));
        }
    }

    /// With partial messages, the events that end the response.
    pub(super) fn partial_end(&mut self, model: &str, id: &str) {
        if self.partial {
            let (stop, tokens) = (self.stop_reason.clone(), self.response_usage.output_tokens);
            let events = self.streaming.end(model, id, stop.as_deref(), tokens);
            self.stream_events(events);
        }
    }
}
