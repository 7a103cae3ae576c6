//! # reloop-hooks: Claude Code's settings-file hooks for reloop
//!
//! The contract:
//!
//! * [`Settings`] reads a Claude Code settings file (`--settings FILE`): the `hooks` of the events
//!   reloop knows ([`reloop_core::hook::HookEventName::parse`]), and the `permissions` rules.
//!   Hook events reloop does not know,
//!   hook types other than `command`, and unknown keys are kept or skipped, never an error, so a
//!   file written for a newer Claude Code still loads. A malformed file is a [`SettingsError`]
//!   naming the file and the JSON path of the bad value.
//! * [`HooksConfig::matching`] picks the hooks for an event and a tool: an empty or `*` matcher
//!   matches every tool, anything else is a regex over the whole tool name (SessionStart's over
//!   its source, the subagent events' over the agent type); Stop hooks ignore matchers. Hook
//!   order is file order.
//! * [`run_hook`] runs one command as `bash -c` in the session cwd, in its own process group,
//!   with the [`HookInput`] JSON on stdin. A timeout or a cancel kills the whole group. It always
//!   returns a [`HookRun`](reloop_core::hook::HookRun), the outside fact the driver journals; a
//!   hook that cannot even start is a run without an exit code, not an error. [`run_all`] runs an
//!   event's hooks in parallel and returns them in hook order, so the combined verdict does not
//!   depend on which hook finished first.
//! * A hook may instead be a callback the caller answers ([`HookCallbacks`], the Agent SDK's
//!   `hook_callback`): its answer is taken as a command's stdout with exit 0, so it is
//!   journaled, interpreted and replayed exactly like one.
//! * What a run means (pass, block, prevent, permission) is decided by the pure
//!   [`reloop_core::hook::interpret`] and [`reloop_core::hook::combine`], so replay re-derives it
//!   from the journal without running anything.

#![warn(missing_docs)]

mod config;
mod input;
mod run;
mod settings;

pub use config::{CallbackHook, HookCallbacks, HookCommand, HooksConfig, Matcher, MatcherGroup, DEFAULT_HOOK_TIMEOUT};
pub use input::{HookCommon, HookInput};
pub use run::{run_all, run_hook, run_hook_as, CANCELLED_NOTE, MAX_HOOK_OUTPUT_BYTES};
pub use settings::{PermissionRules, Settings, SettingsError};
