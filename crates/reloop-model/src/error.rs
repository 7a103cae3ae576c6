//! Errors of building a provider. Failures of a request are not errors here: they travel in the
//! stream as [`crate::StreamEvent::Failed`], because the driver journals them like any outcome.

use std::path::PathBuf;

/// A cassette that cannot be used. Says which file, and where in it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ScriptError {
    /// The file could not be read (or is over the size a cassette may have).
    #[error("cannot read cassette {path}: {source}")]
    Read {
        /// The cassette file.
        path: PathBuf,
        /// Why it could not be read.
        #[source]
        source: std::io::Error,
    },
    /// The text is not JSON.
    #[error("{origin}: invalid JSON at line {line}, column {column}: {message}")]
    Json {
        /// The file (`cassette PATH`) or the inline text's name.
        origin: String,
        /// The 1-based line of the syntax error.
        line: usize,
        /// The 1-based column of the syntax error.
        column: usize,
        /// The parser's message, without its position.
        message: String,
    },
    /// The JSON is not a cassette: not `{"responses": [...]}`, or a key besides it.
    #[error("{origin}: {message}")]
    Shape {
        /// The file (`cassette PATH`) or the inline text's name.
        origin: String,
        /// What the shape lacks or has too much.
        message: String,
    },
    /// One response of the cassette is not one a provider could stream.
    #[error("{origin}: response {response}: {message}")]
    Response {
        /// The file (`cassette PATH`) or the inline text's name.
        origin: String,
        /// The 1-based response, the request number that would be answered with it.
        response: usize,
        /// What is wrong with it.
        message: String,
    },
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
    /// An extra header's name is not a valid HTTP header name.
    #[error("invalid header name {name:?}")]
    HeaderName {
        /// The name as configured.
        name: String,
    },
    /// An extra header's value is not a valid HTTP header value; the value is not quoted, since
    /// it may be a credential.
    #[error("invalid value for header {name:?} (it must be visible ASCII)")]
    HeaderValue {
        /// The header's name.
        name: String,
    },
    /// The API key cannot be sent as a header.
    #[error("the API key is not a valid header value (it must be visible ASCII)")]
    ApiKey,
    /// The base URL is not an HTTP one.
    #[error("base URL {url:?} must start with http:// or https://")]
    BaseUrl {
        /// The base URL, its user information redacted.
        url: String,
    },
    /// The TLS stack or the client could not be set up.
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
}
