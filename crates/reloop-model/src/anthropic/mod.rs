//! The Anthropic Messages API: the stream assembler (shared with the scripted provider) and the
//! HTTP provider.

mod body;
pub(crate) mod http;
pub(crate) mod sse;

pub use http::{request_body, AnthropicConfig, AnthropicProvider};
pub use sse::{parse_anthropic_sse, AnthropicAssembler};
