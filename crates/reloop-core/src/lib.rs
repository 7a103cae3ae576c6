//! # reloop-core: the agent loop as a pure state machine
//!
//! The contract, in the manner of a sans-IO protocol core:
//!
//! * The loop is a [`State`] stepped by [`transition`]`(state, event) -> `[`Step`]. A step holds
//!   the next state, the [`Effect`]s the driver must execute, and — when the loop asks the model
//!   again or stops — the [`Reason`] with its evidence.
//! * Every outside fact (a model's content block, a tool's output, a failure, an abort) arrives as
//!   an [`Event`]. The core performs no I/O, reads no clock, draws no random numbers and never
//!   awaits, so the same events always produce the same steps: that is what makes a journaled
//!   session replayable byte for byte.
//! * The driver's run loop is: apply one event, journal the step, execute its effects, feed their
//!   outcomes back as events, until the state is [`State::Done`].
//!
//! History is a persistent list shared between states, so a turn costs O(new messages).

/// The engine's version, recorded in every session header so a replay can say which engine
/// wrote the journal it checks.
pub const ENGINE_VERSION: &str = env!("CARGO_PKG_VERSION");

pub mod compact;
pub mod config;
pub mod effect;
pub mod event;
pub mod flags;
pub mod history;
pub mod hook;
mod hook_flow;
pub mod message;
pub mod reason;
mod response;
mod retry;
pub mod state;
pub mod testkit;
pub mod tokens;
pub mod transition;

pub use config::{Config, Price};
pub use effect::{Effect, ModelCall, RetryWait};
pub use event::{Event, ModelError, StopReason, ToolOutcome};
pub use flags::Flags;
pub use history::History;
pub use message::{ContentBlock, Message, Role, ToolResult, ToolResultContent, ToolSpec, ToolUse, Usage};
pub use reason::{ContinueReason, Evidence, Reason, TerminalReason, ToolRef};
pub use response::{MALFORMED_TOOL_CALL_ERROR, MALFORMED_TOOL_CALL_MESSAGE, MAX_OUTPUT_TOKENS_RECOVERY_MESSAGE};
pub use retry::{retry_delay_ms, FALLBACK_TOOL_RESULT};
pub use state::{Loop, PermissionDenial, QueuedMessage, State, Terminal};
pub use transition::{transition, Step};
