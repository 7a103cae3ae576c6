//! One module per phase, each owning its handlers: `on(…, event)` matches every event kind
//! exhaustively, with no wildcard, so each phase × event pair is a decision a reader can find.
//! The dispatcher ([`crate::transition`]) only picks the phase.

pub(crate) mod awaiting_model;
pub(crate) mod compacting;
pub(crate) mod done;
pub(crate) mod idle;
pub(crate) mod running_stop_hooks;
pub(crate) mod running_tools;
pub(crate) mod waiting_retry;
