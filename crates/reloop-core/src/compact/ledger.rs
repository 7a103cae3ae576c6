//! The order in which a compaction gives files back, as Claude Code's read-file cache leaves it.
//!
//! Both recorded versions sort the files their cache holds by the modification time each Read
//! saw, newest first, and take the first five. Files changed in the same millisecond (a
//! checkout, a generator) keep the cache's own order, which the recordings pin down: a Read
//! moves its file to the front, and each time Claude Code looks for changed files (after a
//! round of tool results, and when a prompt reaches the model) it walks the cache from the
//! front, touching each entry, which turns the order around (`settings_slash/
//! stream_compact_six_reads`: reads of a to f give back e, c, a, b, d).

use std::collections::VecDeque;

use crate::flags::Flag;
use crate::message::ToolUse;

/// The file a call's outcome puts in the ledger, and the input to read it again with: a
/// Read's (flag 45), a Write's or an Edit's (flag 47), as Claude Code's cache holds them.
pub(crate) fn noted<'a>(config: &crate::Config, call: &'a ToolUse) -> Option<(&'a str, String)> {
    let path = call.input.get("file_path")?.as_str()?;
    let written = || config.flag(Flag::GivenBackFromDisk);
    match call.name.as_str() {
        _ if !config.flag(Flag::GivenBackByChange) => None,
        "Read" => Some((path, call.input.to_string())),
        "Write" | "Edit" if written() => Some((path, serde_json::json!({ "file_path": path }).to_string())),
        _ => None,
    }
}

/// The files the session has read (or written), front first, with the modification time each
/// call saw and the input a Read of it would be given again.
#[derive(Debug, Clone, Default)]
pub(crate) struct ReadLedger {
    /// Front first.
    entries: VecDeque<Entry>,
}

#[derive(Debug, Clone)]
struct Entry {
    /// As the model gave it.
    path: String,
    /// Milliseconds since the epoch.
    changed_ms: u64,
    /// The Read's input as JSON (its part of the file, if it asked for one); a written file's
    /// `{"file_path": …}`.
    input: String,
}

impl ReadLedger {
    /// A call saw `path` last changed at `changed_ms`: it moves to the front.
    pub(crate) fn read(&mut self, path: &str, changed_ms: u64, input: String) {
        self.entries.retain(|e| e.path != path);
        self.entries.push_front(Entry { path: path.to_string(), changed_ms, input });
    }

    /// Claude Code looked for changed files: the order turns around.
    pub(crate) fn looked(&mut self) {
        self.entries.make_contiguous().reverse();
    }

    /// The files in the order a compaction gives them back: newest change first, ties in the
    /// ledger's order (the sort is stable, as JavaScript's is).
    pub(crate) fn given_back_order(&self) -> Vec<&str> {
        self.in_order().map(|e| e.path.as_str()).collect()
    }

    /// The files to read again, in that order, as `(path, Read input)`.
    pub(crate) fn to_read_again(&self) -> impl Iterator<Item = (&str, &str)> {
        self.in_order().map(|e| (e.path.as_str(), e.input.as_str()))
    }

    fn in_order(&self) -> impl Iterator<Item = &Entry> {
        let mut order: Vec<&Entry> = self.entries.iter().collect();
        order.sort_by_key(|e| std::cmp::Reverse(e.changed_ms));
        order.into_iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One Read a turn, each turn's results looked through before the next request.
    fn one_a_turn(reads: &[(&str, u64)]) -> ReadLedger {
        let mut ledger = ReadLedger::default();
        for (path, changed) in reads {
            ledger.read(path, *changed, String::new());
            ledger.looked();
        }
        ledger
    }

    #[test]
    fn files_changed_together_come_back_in_the_order_claude_code_leaves_them() {
        // `settings_slash/stream_compact_two_reads` and `compaction/auto`, both versions.
        let ledger = one_a_turn(&[("login", 7), ("logout", 7), ("README", 7)]);
        assert_eq!(ledger.given_back_order(), ["logout", "login", "README"]);
        // `…_read_order`.
        let ledger = one_a_turn(&[("README", 7), ("logout", 7), ("login", 7)]);
        assert_eq!(ledger.given_back_order(), ["logout", "README", "login"]);
        // `…_six_reads`: the first five of these.
        let six: Vec<(&str, u64)> = ["a", "b", "c", "d", "e", "f"].iter().map(|p| (*p, 7)).collect();
        assert_eq!(one_a_turn(&six).given_back_order(), ["e", "c", "a", "b", "d", "f"]);
        // `…_later_query`: a prompt answered without tools before the compaction.
        let mut ledger = one_a_turn(&[("login", 7), ("logout", 7), ("README", 7)]);
        ledger.looked();
        assert_eq!(ledger.given_back_order(), ["README", "login", "logout"]);
    }

    #[test]
    fn the_newest_change_comes_first_whenever_it_was_read() {
        // `…_mtimes`: c newest, then d, b, f, e, a.
        let changed = [("a", 1), ("b", 4), ("c", 6), ("d", 5), ("e", 2), ("f", 3)];
        assert_eq!(one_a_turn(&changed).given_back_order(), ["c", "d", "b", "f", "e", "a"]);
    }

    #[test]
    fn a_file_read_again_keeps_one_entry_with_its_latest_time() {
        let mut ledger = ReadLedger::default();
        ledger.read("a", 1, "first".into());
        ledger.read("b", 2, String::new());
        ledger.read("a", 3, "again".into());
        assert_eq!(ledger.given_back_order(), ["a", "b"]);
        assert_eq!(ledger.to_read_again().next(), Some(("a", "again")));
    }
}
