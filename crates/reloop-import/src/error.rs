use reloop_journal::JournalError;

/// Why a transcript could not be imported. Each variant names the file (as the caller gave it)
/// and, where one line is at fault, its 1-based line number, so the person can open it there.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    #[error("{file}: the file is empty; Claude Code leaves 0-byte session files behind when a session is opened and nothing is said, so there is nothing to import")]
    Empty { file: String },
    #[error("{file}:{line}: not a Claude Code transcript: {detail}")]
    NotClaudeCode { file: String, line: usize, detail: String },
    #[error("{file}:{line}: the line is not valid JSON: {source}")]
    InvalidJson { file: String, line: usize, source: serde_json::Error },
    #[error("{file}:{line}: {detail}")]
    MalformedLine { file: String, line: usize, detail: String },
    #[error("{file}: no conversation to import: the file holds only {found}; Claude Code writes such files for session titles and file checkpoints")]
    NoConversation { file: String, found: String },
    #[error("{file}: nothing to replay: the conversation ending at line {line} holds only {found}")]
    NothingToReplay { file: String, line: usize, found: String },
    #[error("{file}:{line}: the `parentUuid` chain forms a cycle: it comes back to the line with uuid `{uuid}`, so the conversation has no first message; the transcript is corrupt (a well-formed one is a tree)")]
    ParentCycle { file: String, line: usize, uuid: String },
    #[error("{file}: no line has the uuid `{uuid}` (given as the leaf)")]
    LeafNotFound { file: String, uuid: String },
    #[error("the import holds {events} events but {times} timestamps")]
    TimesMismatch { events: usize, times: usize },
    #[error("event {index} ({kind}) is not accepted by the core in phase {phase}")]
    RejectedEvent { index: usize, kind: String, phase: String },
    #[error("cannot encode {what}: {source}")]
    Encode { what: &'static str, source: serde_json::Error },
    #[error("cannot journal the import: {0}")]
    Journal(#[from] JournalError),
}

/// Why a session could not be exported.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    #[error("cannot encode {what}: {source}")]
    Encode { what: &'static str, source: serde_json::Error },
    /// The output would not take the text (a closed pipe, a full disk).
    #[error("cannot write the export: {0}")]
    Write(#[from] std::io::Error),
}
