//! The Anthropic Messages API: the stream assembler (shared with the scripted provider) and the
//! HTTP provider.

mod body;
pub mod http;
pub mod sse;

pub use http::{request_body, AnthropicConfig, AnthropicProvider, DEFAULT_ANTHROPIC_BASE_URL};
pub use sse::{parse_anthropic_sse, AnthropicAssembler};
