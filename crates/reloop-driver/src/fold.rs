//! A session's state rebuilt from its journal, through the core's one fold
//! ([`reloop_core::Fold`]): what resume and the subagents start from.

use reloop_core::{Config, Fold, State};
use reloop_journal::{JournalBackend, JournalError};

/// A session's state rebuilt from its journal ([`rebuild`]).
#[derive(Debug)]
pub struct Rebuilt {
    /// The state its journaled events lead to.
    pub state: State,
    /// How many steps it has.
    pub steps: usize,
    /// The last step's number (0 for none).
    pub last_seq: u64,
}

/// Rebuilds session `id`'s state under `core`: the events are folded through the core as the
/// journal hands them over.
pub fn rebuild(journal: &dyn JournalBackend, id: &str, core: &Config) -> Result<Rebuilt, JournalError> {
    let mut fold = Fold::new(core);
    let steps = journal.visit_steps(id, &mut |record| {
        fold.push(record.seq, record.event, |_| ());
        Ok(true)
    })?;
    Ok(Rebuilt { last_seq: fold.last_seq(), state: fold.into_state(), steps })
}
