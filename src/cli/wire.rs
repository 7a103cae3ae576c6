//! The model wire's timeouts, as flags with Claude Code's environment variable names.

use std::time::Duration;

use reloop_model::limits::{DEFAULT_API_TIMEOUT_MS, DEFAULT_STREAM_IDLE_TIMEOUT_MS};
use reloop_model::Timeouts;

#[derive(clap::Args, Debug, Clone)]
pub struct WireArgs {
    /// How long to wait for a response's headers (and an error's body) before giving up on the
    /// request and retrying it.
    #[arg(long, env = "API_TIMEOUT_MS", value_name = "MS", default_value_t = DEFAULT_API_TIMEOUT_MS,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub api_timeout_ms: u64,
    /// How long a streaming response may go without an event that brings content (pings do
    /// not count) before it is abandoned and retried.
    #[arg(long, env = "CLAUDE_STREAM_IDLE_TIMEOUT_MS", value_name = "MS",
          default_value_t = DEFAULT_STREAM_IDLE_TIMEOUT_MS, value_parser = clap::value_parser!(u64).range(1..))]
    pub stream_idle_timeout_ms: u64,
}

impl WireArgs {
    pub fn timeouts(&self) -> Timeouts {
        Timeouts::new(Duration::from_millis(self.api_timeout_ms), Duration::from_millis(self.stream_idle_timeout_ms))
    }
}
