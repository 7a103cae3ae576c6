//! Errors of building a provider. Failures of a request are not errors here: they travel in the
//! stream as [`crate::StreamEvent::Failed`], because the driver journals them like any outcome.

use std::path::PathBuf;

/// A cassette that cannot be used. Says which file, and where in it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ScriptError {
    #[error("cannot read cassette {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{origin}: invalid JSON at line {line}, column {column}: {message}")]
    Json { origin: String, line: usize, column: usize, message: String },
    #[error("{origin}: {message}")]
    Shape { origin: String, message: String },
    #[error("{origin}: response {response}: {message}")]
    Response { origin: String, response: usize, message: String },
}

impl ScriptError {
    /// The same error, attributed to a file instead of an inline text.
    pub(crate) fn in_file(self, path: &std::path::Path) -> Self {
        let origin = format!("cassette {}", path.display());
        match self {
            ScriptError::Json { line, column, message, .. } => ScriptError::Json { origin, line, column, message },
            ScriptError::Shape { message, .. } => ScriptError::Shape { origin, message },
            ScriptError::Response { response, message, .. } => ScriptError::Response { origin, response, message },
            other => other,
        }
    }
}

/// A provider configuration that cannot be used. Never quotes the API key.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    #[error("invalid header name {name:?}")]
    HeaderName { name: String },
    #[error("invalid value for header {name:?} (it must be visible ASCII)")]
    HeaderValue { name: String },
    #[error("the API key is not a valid header value (it must be visible ASCII)")]
    ApiKey,
    #[error("base URL {url:?} must start with http:// or https://")]
    BaseUrl { url: String },
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
}
