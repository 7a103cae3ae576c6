//! The scripted provider: answers from a cassette, so reloop runs with no API key and tests
//! are deterministic.
//!
//! A cassette is `{"responses": [R, ...]}`, optionally with `"tool_results"` (tool name → the
//! results its calls give, in call order, `[{"content": "...", "is_error": false}]`, which
//! `reloop run --script` answers those tools' calls with instead of running them) and
//! `"not_reproduced"` (notes on what a run of the cassette does not reproduce, printed by
//! `reloop run`); the provider reads only the responses ([`EXTRA_KEYS`]). Response k (1-based) answers the request whose
//! `request_number` is k: indexing by the request, not by an internal counter, lets a resumed
//! or forked session pick up where it was. R is one of
//! `{"message": <Messages API response>}`, `{"error": {"status", "headers"?, "body"?}}` or
//! `{"sse": "<raw SSE body>"}`, each with an optional `"delay_ms"`. Every response is validated
//! when the cassette is loaded (an error names the response at fault), but turned into stream
//! events only when its request comes. A cassette loaded from a regular file is never held
//! whole: it is streamed through at load, keeping only where each response lies in it, and the
//! response is read again when its request comes. A 10,000-response cassette costs 16 bytes a
//! response, neither its text (3.4 MB) nor its parsed values, at load or after. A cassette given
//! as text, or read from a pipe, keeps each response's text.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use futures::stream::{self, BoxStream, StreamExt};
use reloop_core::ModelError;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::cassette::{parse_response, strip_position, unknown_key, validate_response, Replace, EXTRA_KEYS};
use crate::error::ScriptError;
use crate::provider::{ModelProvider, ModelRequest, StreamEvent};

/// The largest cassette reloop reads: about 400,000 scripted turns. A path to an endless or
/// enormous file (`/dev/zero`) is refused with an error instead of filling memory.
pub const MAX_CASSETTE_BYTES: u64 = 128 << 20;

/// A pipe's or a device's text, refused past [`MAX_CASSETTE_BYTES`] (an error of kind
/// `InvalidData` that says so).
fn read_capped(file: File) -> std::io::Result<String> {
    let mut text = String::new();
    file.take(MAX_CASSETTE_BYTES + 1).read_to_string(&mut text)?;
    if text.len() as u64 > MAX_CASSETTE_BYTES {
        return Err(too_long());
    }
    Ok(text)
}

fn too_long() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!("a cassette is at most {} MiB; this one is longer", MAX_CASSETTE_BYTES >> 20),
    )
}

/// Answers model requests from a cassette.
#[derive(Debug, Clone)]
pub struct ScriptedProvider {
    responses: Responses,
}

/// Where the validated responses are.
#[derive(Debug, Clone)]
enum Responses {
    /// Each response's JSON text.
    Text(Vec<Box<RawValue>>),
    /// Each response's place in a regular file (offset, length in bytes), read when its request
    /// comes.
    File { path: PathBuf, file: Arc<Mutex<File>>, spans: Vec<(u64, u32)>, replace: Option<Replace> },
}

impl Responses {
    fn len(&self) -> usize {
        match self {
            Responses::Text(texts) => texts.len(),
            Responses::File { spans, .. } => spans.len(),
        }
    }

    /// Response `i`'s JSON text; `None` past the end. A file that changed or went away since the
    /// cassette was loaded is an error, reported as the response's.
    fn text(&self, i: usize) -> Option<Result<String, String>> {
        match self {
            Responses::Text(texts) => texts.get(i).map(|raw| Ok(raw.get().to_string())),
            Responses::File { path, file, spans, replace } => {
                let &(offset, len) = spans.get(i)?;
                let read = || -> std::io::Result<String> {
                    let mut file = file.lock().map_err(|_| std::io::Error::other("the cassette's lock is poisoned"))?;
                    file.seek(SeekFrom::Start(offset))?;
                    let mut bytes = vec![0; len as usize];
                    file.read_exact(&mut bytes)?;
                    let text = String::from_utf8(bytes).map_err(std::io::Error::other)?;
                    Ok(match replace.as_ref().map(|r| r.apply(&text)) {
                        Some(std::borrow::Cow::Owned(replaced)) => replaced,
                        _ => text,
                    })
                };
                Some(read().map_err(|e| format!("reading it again from {}: {e}", path.display())))
            }
        }
    }
}

impl ScriptedProvider {
    /// Loads a cassette from text. Errors name the response at fault.
    pub fn from_json(text: &str) -> Result<Self, ScriptError> {
        let raws = Self::parse(text, "cassette")?;
        Ok(ScriptedProvider { responses: Responses::Text(raws.into_iter().map(RawValue::to_owned).collect()) })
    }

    /// Loads a cassette file. Errors name the file, and for bad JSON the line and column.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, ScriptError> {
        let path = path.as_ref();
        Self::from_file_replacing(path, None).map_err(|err| err.in_file(path))
    }

    /// Loads a cassette file, with every `from` in a response's text read as `to` when
    /// `replace` is `Some((from, to))`. Validated as [`ScriptedProvider::from_json`] validates
    /// a text, with its errors (their origin is "cassette", for the caller to name the file;
    /// a file that cannot be read is [`ScriptError::Read`]). A regular file is never held:
    /// streamed through twice at load, then read again for each response when its request
    /// comes (see the module docs). If the file changes meanwhile, the responses it no longer
    /// holds answer with an error. A pipe or a device is read once, up to
    /// [`MAX_CASSETTE_BYTES`], and its responses kept as text.
    pub fn from_file_replacing(path: &Path, replace: Option<(&str, &str)>) -> Result<Self, ScriptError> {
        let read_error = |source| ScriptError::Read { path: path.to_path_buf(), source };
        let file = File::open(path).map_err(read_error)?;
        let replace = replace.map(|(from, to)| Replace::new(from, to));
        let metadata = file.metadata().map_err(read_error)?;
        if !metadata.is_file() {
            let text = read_capped(file).map_err(read_error)?;
            return match &replace {
                Some(replace) => Self::from_json(&replace.apply(&text)),
                None => Self::from_json(&text),
            };
        }
        if metadata.len() > MAX_CASSETTE_BYTES {
            return Err(read_error(too_long()));
        }
        let spans = crate::cassette_file::response_spans(path, &file, MAX_CASSETTE_BYTES, replace.as_ref())?;
        let file = Arc::new(Mutex::new(file));
        Ok(ScriptedProvider { responses: Responses::File { path: path.to_path_buf(), file, spans, replace } })
    }

    /// How many responses the cassette holds.
    pub fn len(&self) -> usize {
        self.responses.len()
    }

    /// Whether the cassette holds no response: every request would find none.
    pub fn is_empty(&self) -> bool {
        self.responses.len() == 0
    }

    /// The validated responses of a cassette's text, as slices of it.
    fn parse<'t>(text: &'t str, origin: &str) -> Result<Vec<&'t RawValue>, ScriptError> {
        let json_error = |err: serde_json::Error| ScriptError::Json {
            origin: origin.to_string(),
            line: err.line(),
            column: err.column(),
            message: strip_position(&err.to_string()),
        };
        // The syntax of the whole text first, so a JSON error names its line and column.
        let whole: &RawValue = serde_json::from_str(text).map_err(json_error)?;
        let shape = |message: &str| ScriptError::Shape { origin: origin.to_string(), message: message.to_string() };
        let Ok(mut root) = serde_json::from_str::<std::collections::BTreeMap<String, &RawValue>>(whole.get()) else {
            return Err(shape("expected an object {\"responses\": [...]}"));
        };
        let Some(responses) = root.remove("responses") else {
            return Err(shape("expected a \"responses\" array"));
        };
        if let Some(key) = root.keys().find(|k| !EXTRA_KEYS.contains(&k.as_str())) {
            return Err(shape(&unknown_key(key)));
        }
        let Ok(responses) = serde_json::from_str::<Vec<&RawValue>>(responses.get()) else {
            return Err(shape("expected a \"responses\" array"));
        };
        for (i, raw) in responses.iter().enumerate() {
            // Validated now, one at a time, and dropped: the events are built again when the
            // response's request comes.
            validate_response(raw.get(), None).map_err(|message| ScriptError::Response {
                origin: origin.to_string(),
                response: i + 1,
                message,
            })?;
        }
        Ok(responses)
    }
}

impl ModelProvider for ScriptedProvider {
    /// The script is this process's memory: a request shows nothing outside it.
    fn in_process(&self) -> bool {
        true
    }

    fn name(&self) -> &str {
        "scripted"
    }

    fn stream(&self, request: ModelRequest) -> BoxStream<'static, StreamEvent> {
        let number = request.request_number;
        let found = usize::try_from(number).ok().and_then(|k| k.checked_sub(1)).and_then(|i| self.responses.text(i));
        let response = found.map(|text| {
            text.and_then(|text| serde_json::from_str::<Value>(&text).map_err(|e| e.to_string()))
                .and_then(parse_response)
        });
        let response = match response {
            Some(Ok(response)) => Some(response),
            // Validated when the cassette was loaded; answered, never a panic, all the same.
            Some(Err(message)) => {
                let message = format!("response {number} of the script is invalid: {message}");
                return stream::iter([StreamEvent::Failed(ModelError::new(None, "invalid_stream", message))]).boxed();
            }
            None => None,
        };
        let Some(response) = response else {
            let message =
                format!("the script has no response for model request {number} (it holds {})", self.responses.len());
            return stream::iter([StreamEvent::Failed(ModelError::new(None, "script_exhausted", message))]).boxed();
        };
        let answer = async move {
            if let Some(delay) = response.delay {
                tokio::time::sleep(delay).await;
            }
            stream::iter(response.events)
        };
        stream::once(answer).flatten().boxed()
    }
}
