//! # reloop-model: model providers for the reloop driver
//!
//! The contract:
//!
//! * A [`ModelProvider`] turns one [`ModelRequest`] into a stream of [`StreamEvent`]s: any
//!   `TextDelta`s (live output) and `Block`s (one per *completed* content block), then exactly
//!   one `Done` or one `Failed`, then the end of the stream. A failed request is an event, not an
//!   `Err`: the driver journals it like any other outcome and decides whether to retry.
//! * Dropping the stream cancels the request promptly; nothing keeps running behind it.
//! * Providers never put a secret in an event, an error message or `Debug` output.
//! * Wire formats are assembled by pure, synchronous assemblers ([`AnthropicAssembler`],
//!   [`OpenAiAssembler`]) fed by one linear SSE framer, so the HTTP providers, the scripted
//!   provider and the tests share one code path, and malformed input of any kind ends in
//!   `Failed`, never in a panic.
//! * Unknown content block types (server tools, future additions) are kept whole as
//!   `ContentBlock::Other`.
//! * Every response is bounded ([`limits`]): its content by its `max_tokens`, its bytes on the
//!   wire, each event, and over HTTP the wait for headers and between events.
//!
//! Providers: [`ScriptedProvider`] (cassettes; the default, needs no key),
//! [`AnthropicProvider`] (Messages API, SSE), [`OpenAiProvider`] (chat completions, SSE).

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod anthropic;
mod cassette;
mod cassette_file;
mod error;
mod frame;
mod http;
pub mod limits;
mod openai;
mod provider;
mod retry_after;
mod scripted;
pub mod sse;

pub use anthropic::{
    api_model_id, parse_anthropic_sse, request_body, AnthropicAssembler, AnthropicConfig, AnthropicProvider,
};
pub use cassette::EXTRA_KEYS;
pub use error::{ConfigError, ScriptError};
pub use http::{is_local_url, is_redacted_url, redact_url};
pub use limits::{ResponseLimits, Timeouts, RESPONSE_TOO_LARGE};
pub use openai::{openai_request_body, parse_openai_sse, OpenAiAssembler, OpenAiConfig, OpenAiProvider};
pub use provider::{ModelProvider, ModelRequest, StreamEvent, SystemBlock, WireStyle};
pub use scripted::{ScriptedProvider, MAX_CASSETTE_BYTES};
pub use sse::{sse_events, sse_events_with, SseAssembler};
