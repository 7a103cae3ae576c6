//! # reloop-core: the agent loop as a pure state machine
//!
//! The contract, in the manner of a sans-IO protocol core:
//!
//! * The loop is a [`State`] stepped by [`transition()`]`(state, event) -> `[`Step`]. A step holds
//!   the next state, the [`Effect`]s the driver must execute, and — when the loop asks the model
//!   again or stops — the [`Reason`] with its evidence.
//! * Every outside fact (a model's content block, a tool's output, a failure, an abort) arrives as
//!   an [`Event`]. The core performs no I/O, reads no clock, draws no random numbers and never
//!   awaits, so the same events always produce the same steps: that is what makes a journaled
//!   session replayable byte for byte.
//! * The driver's run loop is: apply one event, journal the step, execute its effects, feed their
//!   outcomes back as events, until the state is done ([`State::is_done`]).
//!
//! * Every state × event pair is decided: each phase's module matches every event kind with no
//!   wildcard, and an event a phase does not expect (a stale request's block, a duplicate tool
//!   result) is an [`Ignored`] step, typed by why, journaled and compared by replay — never a
//!   silent no-op.
//! * Completion events carry the number of what they complete, so a stale one cannot be applied.
//! * The rules a session runs under ([`Config`], its behaviour [`Flags`], its digest version and
//!   its [`profile`] — whose Claude Code version's texts, limits and rules apply) are journaled
//!   in its header: a session replays under the rules that recorded it. Code asks the profile's
//!   data ([`Config::rules`]) rather than branching on a version.
//!
//! History is a persistent list shared between states, so a turn costs O(new messages).
//!
//! Modules are layered, with no cycle: data (`message`, `event`, `effect`, `reason`, `profile`,
//! `config`, `context`, `state`), then `step` (the step constructors), `request` (the way to the next
//! request), the rules (`response`, `retry`, `end_of_turn`, `abort`), one module per phase, and
//! the dispatcher `transition` on top. Below everything, `wire`: which of serde_json's bytes
//! define behaviour (what digest versions 1–3 hash and the token estimate counts); from version 4
//! the digest takes typed fields (`digest`). Journal rows are read and written by
//! `reloop-journal`, through serde: the core writes no other JSON by hand.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

/// The engine's version, recorded in every session header so a replay can say which engine
/// wrote the journal it checks.
pub const ENGINE_VERSION: &str = env!("CARGO_PKG_VERSION");

// The public surface is what an embedder needs: the state and its transition, events, steps,
// commands and notices, reasons, the config and the messages, all re-exported here at the root.
// Every other module is private, and `State` and its context are opaque, so a caller can neither
// build a state the machine never reached nor depend on how the core is laid out. A few modules
// stay public because their items read better under a namespace than at the root: `hook` (the
// hook protocol the hook runner and the permission decision speak), `profile` (each Claude Code
// version's texts, limits and rules), `compact` (the shape of a compaction's summary request),
// `structured` (the final-answer tool), `too_long` (the prompt-too-long texts), `local_lines`
// (what a built-in command leaves for the next prompt), and `testkit` (a simulation driver and
// invariants, behind the `testkit` feature).
mod abort;
mod backoff;
pub mod compact;
mod config;
mod context;
mod digest;
mod effect;
mod end_of_turn;
mod event;
mod extra;
mod flags;
mod fold;
mod history;
pub mod hook;
mod identity;
pub mod local_lines;
mod message;
mod model_error;
mod outcome;
mod phase;
pub mod profile;
mod prompt_hooks;
mod reason;
mod request;
mod response;
mod retry;
mod rule_source;
mod settings;
mod state;
mod step;
pub mod structured;
#[cfg(feature = "testkit")]
pub mod testkit;
mod tokens;
pub mod too_long;
mod tool_outcome;
mod transition;
mod wire;

pub use abort::{INTERRUPTED_TOOL_RESULT, INTERRUPT_MESSAGE_FOR_TOOL_USE};
pub use backoff::retry_delay_ms;
pub use backoff::CLAUDE_CODE_MAX_RETRY_AFTER_MS;
pub use config::{Config, Price, DIGEST_VERSION};
pub use context::{Loop, PermissionDenial, QueuedMessage};
pub use digest::{Digest, TYPED_FROM};
pub use effect::{Command, Effect, ModelCall, Notice, RetryWait};
pub use end_of_turn::DIMINISHING_TOKENS;
pub use event::{Event, ModelError, ModelErrorKind, StopReason, ToolOutcome, EVENT_KINDS};
pub use flags::{Flag, Flags};
pub use fold::{Before, Fold};
pub use history::History;
pub use identity::sent_messages;
pub use message::{
    content_from_string_or_blocks, AgentUsage, ContentBlock, Extra, Message, RedactedThinking, Role, Text, Thinking,
    ToolResult, ToolResultContent, ToolSpec, ToolUse, Usage,
};
pub use phase::running_stop_hooks::stop_hook_message;
pub use reason::{
    compacted_line, compaction_failure_line, thousands, CompactionFailure, Completion, Continue, ContinueReason,
    Evidence, Failure, HookPrevented, ModelFailure, Reason, Stop, TerminalReason, TooLong, ToolRef,
};
pub use request::UNRUN_TOOL_RESULT;
pub use response::MALFORMED_TOOL_CALL_ERROR;
pub use retry::{FALLBACK_TOOL_RESULT, MAX_RETRY_AFTER_MS, REPEATED_OVERLOADS};
pub use rule_source::{RuleSource, SourcedRule};
pub use state::{State, Streaming, Terminal, Tools, PHASES};
pub use step::{IgnoreWhy, Ignored, Step};
pub use transition::transition;
