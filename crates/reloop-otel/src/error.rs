//! What can go wrong sending spans.

/// An export that could not be set up or sent.
#[derive(Debug, thiserror::Error)]
pub enum OtelError {
    /// The endpoint is no URL the exporter takes.
    #[error("the OTLP endpoint {endpoint:?} cannot be used: {why}")]
    Endpoint {
        /// The endpoint as given.
        endpoint: String,
        /// Why not.
        why: String,
    },
    /// The exporter could not be built.
    #[error("cannot build the OTLP exporter: {0}")]
    Build(String),
    /// The receiver refused the spans or could not be reached in time.
    #[error("sending spans to {endpoint} failed: {why}")]
    Send {
        /// Where they went.
        endpoint: String,
        /// What the exporter said.
        why: String,
    },
}
