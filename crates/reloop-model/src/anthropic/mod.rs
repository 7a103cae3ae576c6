//! The Anthropic Messages API: the stream assembler and the response object's reader (both
//! shared with the scripted provider, which sits above this module), and the HTTP provider.

mod body;
pub(crate) mod http;
mod merge;
pub(crate) mod message;
pub(crate) mod sse;

pub use body::api_model_id;
pub use http::{request_body, AnthropicConfig, AnthropicProvider};
pub use sse::{parse_anthropic_sse, AnthropicAssembler};
