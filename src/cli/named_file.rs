//! A session named by its file: `reloop replay tests/agent-sessions/fix-login.json`. Where a
//! command takes a session, a path to a session dump (`.json`), a Claude Code transcript
//! (`.jsonl`) or a journal (`.db`, its latest session) names the session it holds. The file is
//! read into a scratch journal that lives as long as the command, never into the working one,
//! so a CI job replays and reruns the sessions a repository keeps without importing them.

use std::path::{Path, PathBuf};

use reloop_journal::{DumpHead, Journal, JournalBackend, Writer};

use super::CliError;

/// Whether `selector` names a session file rather than an id: a file that exists, named
/// `*.json`, `*.jsonl` or `*.db` (an id never holds a `.`).
pub(crate) fn is_file(selector: &str) -> bool {
    let path = Path::new(selector);
    matches!(path.extension().and_then(|e| e.to_str()), Some("json" | "jsonl" | "db")) && path.is_file()
}

/// The scratch journal the named files were read into; removed when dropped.
pub(crate) struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    /// The scratch journal's path, for `--journal`.
    pub(crate) fn journal(&self) -> PathBuf {
        self.dir.path().join("journal.db")
    }
}

/// Reads every selector that names a file into one scratch journal and replaces it by the id
/// of the session it holds there; `None` when no selector names a file. When some do, the
/// others (ids, `last`) are sessions of the working SQLite journal `working`, copied into the
/// scratch one too, so a command reading one journal (`diff FILE last`) finds both.
pub(crate) fn load(selectors: &mut [&mut String], working: &Path) -> Result<Option<Scratch>, CliError> {
    if !selectors.iter().any(|s| is_file(s)) {
        return Ok(None);
    }
    let dir = tempfile::Builder::new()
        .prefix("reloop-session-file-")
        .tempdir()
        .map_err(|e| CliError::Io(format!("cannot make a scratch journal: {e}")))?;
    let scratch = Scratch { dir };
    let mut journal = Journal::create_or_open(&scratch.journal())?;
    let mut read: Vec<(PathBuf, String)> = Vec::new();
    for selector in selectors.iter_mut() {
        let id = if is_file(selector) {
            // The same file named twice (`diff FILE FILE`) is read once.
            let path = std::fs::canonicalize(selector.as_str()).unwrap_or_else(|_| PathBuf::from(selector.as_str()));
            match read.iter().find(|(p, _)| *p == path) {
                Some((_, id)) => id.clone(),
                None => {
                    let id = read_into(&mut journal, &path)?;
                    read.push((path, id.clone()));
                    id
                }
            }
        } else {
            let source = Journal::open_for_reading(working)?;
            let id = source.resolve(selector)?;
            copy(&source, &id, &mut journal)?;
            id
        };
        **selector = id;
    }
    Ok(Some(scratch))
}

/// Reads the session a dump or a journal `file` holds into `journal` (once: it keeps its id, and
/// is found there when read again), for a command that goes on from it (`fork FILE`): the new
/// session is its child there.
pub(crate) fn adopt(journal: &mut Journal, file: &Path) -> Result<String, CliError> {
    if file.extension().and_then(|e| e.to_str()) == Some("db") {
        let source = Journal::open_for_reading(file)?;
        let id = source.resolve("last")?;
        copy(&source, &id, journal)?;
        return Ok(id);
    }
    let cannot_read = |e: std::io::Error| CliError::Usage(format!("cannot read {}: {e}", file.display()));
    let dump = super::reread::Rereadable::open(file).map_err(cannot_read)?;
    let not_a_dump =
        |e: reloop_journal::JournalError| CliError::Usage(format!("{}: not a session dump: {e}", file.display()));
    let head = DumpHead::read(dump.read().map_err(cannot_read)?).map_err(not_a_dump)?;
    if journal.header(&head.header.id).is_ok() {
        return Ok(head.header.id);
    }
    read_into(journal, file)
}

/// Copies session `id` of `source` into `journal`, a step at a time.
fn copy(source: &Journal, id: &str, journal: &mut Journal) -> Result<(), CliError> {
    if journal.header(id).is_ok() {
        return Ok(());
    }
    let header = source.header(id)?;
    journal.create_session_from(&header, Writer::Leave, &mut |sink| {
        JournalBackend::visit_steps(source, id, &mut |step| sink(&step).map(|()| true)).map(|_| ())
    })?;
    Ok(())
}

/// Puts the session `file` holds into `journal`, and returns its id there.
fn read_into(journal: &mut Journal, file: &Path) -> Result<String, CliError> {
    let name = file.display();
    match file.extension().and_then(|e| e.to_str()) {
        Some("db") => {
            let source = Journal::open_for_reading(file)?;
            let id = source.resolve("last")?;
            copy(&source, &id, journal)?;
            Ok(id)
        }
        Some("jsonl") => {
            let text =
                std::fs::read_to_string(file).map_err(|e| CliError::Usage(format!("cannot read {name}: {e}")))?;
            let options = reloop_import::ImportOptions::default();
            let imported = reloop_import::parse_claude_code(&text, &name.to_string(), &options)
                .map_err(|e| CliError::Usage(format!("{name}: not an importable transcript: {e}")))?;
            let id = reloop_driver::new_session_id();
            let created = imported.at_ms.first().copied().unwrap_or(0);
            reloop_import::import_into(journal, &imported, &id, created)
                .map_err(|e| CliError::Usage(format!("{name}: {e}")))?;
            Ok(id)
        }
        _ => {
            let cannot_read = |e: std::io::Error| CliError::Usage(format!("cannot read {name}: {e}"));
            let dump = super::reread::Rereadable::open(file).map_err(cannot_read)?;
            let open = || dump.read().map_err(cannot_read);
            let not_a_dump =
                |e: reloop_journal::JournalError| CliError::Usage(format!("{name}: not a session dump: {e}"));
            let head = DumpHead::read(open()?).map_err(not_a_dump)?;
            Ok(reloop_journal::load_dump(journal, &head, open()?).map_err(not_a_dump)?)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_existing_session_file_is_a_file_and_an_id_stays_an_id() {
        let dir = tempfile::tempdir().unwrap();
        let dump = dir.path().join("fix-login.json");
        std::fs::write(&dump, "{}").unwrap();
        assert!(is_file(dump.to_str().unwrap()));
        assert!(!is_file(dir.path().join("gone.json").to_str().unwrap()));
        assert!(!is_file(dir.path().to_str().unwrap()));
        for id in ["last", "7a1bc1bf", "7a1bc1bf-0000-4000-8000-000000000000"] {
            assert!(!is_file(id));
        }
        let mut id = "last".to_string();
        assert!(load(&mut [&mut id], &dir.path().join("journal.db")).unwrap().is_none());
        assert_eq!(id, "last");
    }
}
