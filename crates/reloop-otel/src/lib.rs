//! # reloop-otel: a session as an OpenTelemetry trace
//!
//! A journaled session becomes one trace: a root `invoke_agent reloop` span, a span per turn,
//! a `chat {model}` span per model request, an `execute_tool {name}` span per tool call and a
//! `hook {event}` span per hook event that ran, named and attributed after OpenTelemetry's
//! GenAI semantic conventions ([`semconv`]; the table in `docs/otel.md` is checked against it).
//!
//! Two layers, the lower one pure: [`SessionMapper`] turns a session's header and steps, fed in
//! order, into finished [`SpanRecord`]s, reading nothing but what the journal recorded (times
//! are the steps' `at_ms`, ids derive from the session id and step, [`ids`]), so an export of an
//! old session shows its real times and a re-export the same ids. [`otlp`] sends the records
//! with the `opentelemetry-otlp` exporter (HTTP/protobuf): once for `reloop export --format
//! otlp`, or as a run goes through the SDK's batch processor, whose bounded queue and own
//! thread keep a slow or dead endpoint away from the run loop.
//!
//! It knows the core's events and the journal's records, nothing of the driver or processes.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod error;
pub mod ids;
mod map;
pub mod otlp;
pub mod semconv;
mod span;

pub use error::OtelError;
pub use map::SessionMapper;
pub use span::{render_tree, AttrValue, SpanEvent, SpanKind, SpanRecord, SpanStatus};
