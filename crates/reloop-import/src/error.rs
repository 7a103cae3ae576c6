use reloop_journal::JournalError;

/// Why a transcript could not be imported. Each variant names the file (as the caller gave it)
/// and, where one line is at fault, its 1-based line number, so the person can open it there.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// A 0-byte file: a session opened and left before anything was said.
    #[error("{file}: the file is empty; Claude Code leaves 0-byte session files behind when a session is opened and nothing is said, so there is nothing to import")]
    Empty {
        /// The file, as the caller named it.
        file: String,
    },
    /// The file is JSON lines, but not Claude Code's (another tool's log, say).
    #[error("{file}:{line}: not a Claude Code transcript: {detail}")]
    NotClaudeCode {
        /// The file, as the caller named it.
        file: String,
        /// The 1-based line that gave it away.
        line: usize,
        /// What that line holds instead.
        detail: String,
    },
    /// A line is not JSON at all.
    #[error("{file}:{line}: the line is not valid JSON: {source}")]
    InvalidJson {
        /// The file, as the caller named it.
        file: String,
        /// The 1-based line.
        line: usize,
        /// The parser's error.
        source: serde_json::Error,
    },
    /// A line is JSON but not the shape its type needs (not an object, an `assistant` line
    /// without its `message`, say).
    #[error("{file}:{line}: {detail}")]
    MalformedLine {
        /// The file, as the caller named it.
        file: String,
        /// The 1-based line.
        line: usize,
        /// What is missing or wrong.
        detail: String,
    },
    /// The file holds no message at all: titles, snapshots, summaries only.
    #[error("{file}: no conversation to import: the file holds only {found}; Claude Code writes such files for session titles and file checkpoints")]
    NoConversation {
        /// The file, as the caller named it.
        file: String,
        /// What it holds instead, in words.
        found: String,
    },
    /// The chosen conversation has messages, but none that becomes an event.
    #[error("{file}: nothing to replay: the conversation ending at line {line} holds only {found}")]
    NothingToReplay {
        /// The file, as the caller named it.
        file: String,
        /// The 1-based line of the conversation's leaf.
        line: usize,
        /// What the conversation holds instead, by kind.
        found: String,
    },
    /// The `parentUuid` links loop, so the conversation has no first message.
    #[error("{file}:{line}: the `parentUuid` chain forms a cycle: it comes back to the line with uuid `{uuid}`, so the conversation has no first message; the transcript is corrupt (a well-formed one is a tree)")]
    ParentCycle {
        /// The file, as the caller named it.
        file: String,
        /// The 1-based line the chain comes back to.
        line: usize,
        /// That line's uuid.
        uuid: String,
    },
    /// [`ImportOptions::leaf`](crate::ImportOptions::leaf) names no line of the file.
    #[error("{file}: no line has the uuid `{uuid}` (given as the leaf)")]
    LeafNotFound {
        /// The file, as the caller named it.
        file: String,
        /// The uuid asked for.
        uuid: String,
    },
    /// An [`Imported`](crate::Imported) whose events and timestamps do not pair up: a caller
    /// edited one list and not the other.
    #[error("the import holds {events} events but {times} timestamps")]
    TimesMismatch {
        /// How many events.
        events: usize,
        /// How many timestamps.
        times: usize,
    },
    /// The core ignored an event while journaling, so the session would not replay; nothing
    /// was written.
    #[error("event {index} ({kind}) is not accepted by the core in phase {phase}")]
    RejectedEvent {
        /// The event's 0-based position in [`Imported::events`](crate::Imported::events).
        index: usize,
        /// The event's kind.
        kind: String,
        /// The phase the core was in.
        phase: String,
    },
    /// A value could not be turned into the JSON the journal stores.
    #[error("cannot encode {what}: {source}")]
    Encode {
        /// What was being encoded.
        what: &'static str,
        /// The encoder's error.
        source: serde_json::Error,
    },
    /// The journal refused the session; the import was rolled back.
    #[error("cannot journal the import: {0}")]
    Journal(#[from] JournalError),
}

/// Why a session could not be exported.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    /// A value could not be written as JSON.
    #[error("cannot encode {what}: {source}")]
    Encode {
        /// What was being encoded.
        what: &'static str,
        /// The encoder's error.
        source: serde_json::Error,
    },
    /// The output would not take the text (a closed pipe, a full disk).
    #[error("cannot write the export: {0}")]
    Write(#[from] std::io::Error),
}
