//! The replay corpus (`tests/journals/*.json`), loaded for the unit tests that run over every
//! recorded session.

use reloop_journal::{Journal, SessionDump, SessionHeader, StepRecord};

/// Every session of the corpus, each loaded into a journal of its own: the journal's folder
/// (removed when dropped), the journal, the session's id.
pub(crate) fn journals() -> Vec<(tempfile::TempDir, Journal, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/journals");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("corpus") {
        let path = entry.expect("entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let dump = SessionDump::from_json(&std::fs::read_to_string(&path).expect("read")).expect("dump");
        let tmp = tempfile::tempdir().expect("tempdir");
        let mut journal = Journal::create_or_open(&tmp.path().join("j.db")).expect("journal");
        let id = journal.load_session(&dump).expect("load");
        out.push((tmp, journal, id));
    }
    assert!(out.len() >= 10, "the corpus holds sessions");
    out
}

/// Every session of the corpus: its header and steps, as a journal hands them back.
pub(crate) fn sessions() -> Vec<(SessionHeader, Vec<StepRecord>)> {
    journals()
        .into_iter()
        .map(|(_tmp, journal, id)| (journal.header(&id).expect("header"), journal.steps(&id).expect("steps")))
        .collect()
}
