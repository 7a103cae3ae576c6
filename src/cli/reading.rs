//! What the reading commands share: the journal opened to read, a session's steps fed to a
//! replayer, ids and times as a person reads them, and what a response cost. `show`, `replay`,
//! `why`, `diff`, `view`, `sessions` and `import` sit on it.

use reloop_driver::SessionJournal;
use reloop_journal::SessionHeader;

use super::{current_dir, CliError, JournalArg};

/// Opens the journal to read it: the commands that call this never write.
pub(crate) fn open(journal: &JournalArg) -> Result<SessionJournal, CliError> {
    journal.open(&current_dir()?, crate::launch::journal::Open::Reading)
}

/// Feeds a session's steps to `replayer`: SQLite's rows undecoded (the fast path), any other
/// journal's steps as records.
/// Replays `id` through `replayer`: SQLite's rows are read and decoded on a second thread while
/// this one steps the core; another journal hands its steps decoded.
pub(crate) fn feed(
    journal: &mut SessionJournal,
    id: &str,
    replayer: &mut reloop_inspect::Replayer,
) -> Result<(), CliError> {
    match journal {
        SessionJournal::Sqlite(sqlite) => reloop_inspect::replay_journal(sqlite, id, replayer)?,
        SessionJournal::Shared(shared) => shared.visit_steps(id, &mut |record| Ok(replayer.feed(&record)))?,
    };
    Ok(())
}

/// The first eight characters of reloop's own ids (UUIDs, hex): unique enough to type, and any
/// unique prefix works. Any other id (from a dump someone handed over) is shown whole.
pub(crate) fn short(id: &str) -> &str {
    if id.chars().all(|c| c.is_ascii_hexdigit() || c == '-') {
        id.get(..8).unwrap_or(id)
    } else {
        id
    }
}

/// `2025-03-04 17:22` in this machine's time zone.
pub(crate) fn local_time(ms: u64) -> String {
    let Ok(at) = jiff::Timestamp::from_millisecond(ms as i64) else { return "?".to_string() };
    at.to_zoned(jiff::tz::TimeZone::system()).strftime("%Y-%m-%d %H:%M").to_string()
}

/// What a response cost: the session's own prices (as it ran, `--price` included), else the
/// bundled model table's; `None` for a model neither prices, whose cost is unknown.
pub(crate) fn price(header: &SessionHeader) -> impl Fn(&str, &reloop_core::Usage) -> Option<f64> + '_ {
    price_in(&header.core_config.prices)
}

pub(crate) use crate::models::price_in;

/// One warning line on stderr per model a text command found with no price: its cost is shown
/// as unknown, and this says why and how to give one.
pub(crate) fn warn_unpriced<'a>(models: impl IntoIterator<Item = &'a String>) {
    for model in models {
        crate::term::errln!("reloop: warning: {}: its cost is shown as unknown", crate::models::unpriced(model));
    }
}
