//! Rows copied out of SQLite so another thread can read them: `reloop replay` reads and decodes
//! rows on one thread while another steps the core, and a [`ReplayRow`] borrows from the statement
//! that produced it, so it cannot cross. A batch keeps its rows' text in one buffer it reuses, so
//! a replay that recycles its batches allocates nothing per row for text.

use std::ops::Range;

use rusqlite::types::ValueRef;

use crate::rows::ReplayRow;

/// Up to [`RowBatch::ROWS`] rows, or about [`RowBatch::BYTES`] of their text, owned.
#[derive(Debug, Default)]
pub struct RowBatch {
    text: String,
    /// The effects and reasons, kept as bytes as the row holds them (see [`ReplayRow`]).
    json: Vec<u8>,
    rows: Vec<OwnedRow>,
}

#[derive(Debug)]
struct OwnedRow {
    seq: u64,
    event: Range<usize>,
    to_phase: OwnedPhase,
    reason_kind: Option<Range<usize>>,
    reason_json: Option<Range<usize>>,
    effects: Range<usize>,
    digest: u64,
    outcome: Option<u64>,
    with_text: bool,
}

/// A stored phase: its number, its name (a phase this journal's reader does not number), or a
/// value of another type, kept so the reader reports it as [`ReplayRow::to_phase`] does.
#[derive(Debug)]
enum OwnedPhase {
    Number(i64),
    Text(Range<usize>),
    Null,
    Real(f64),
    Blob(Range<usize>),
}

impl RowBatch {
    /// Rows per batch: enough that handing a batch between threads costs nothing per row, few
    /// enough that the batches in flight stay small next to the replayed state.
    pub const ROWS: usize = 128;
    /// Text per batch before it is handed on early: a batch of huge rows (a long tool result
    /// each) stays bounded in memory.
    pub const BYTES: usize = 256 << 10;

    /// Copies `row` in.
    pub fn push(&mut self, row: &ReplayRow<'_>) {
        let event = self.keep(row.event);
        let to_phase = self.phase(row.to_phase);
        let reason_kind = row.reason_kind.map(|k| self.keep(k));
        let reason_json = row.reason_json.map(|j| self.keep_json(j));
        let effects = self.keep_json(row.effects);
        self.rows.push(OwnedRow {
            seq: row.seq,
            event,
            to_phase,
            reason_kind,
            reason_json,
            effects,
            digest: row.digest,
            outcome: row.outcome,
            with_text: row.with_text,
        });
    }

    /// Whether the batch should be handed on.
    pub fn is_full(&self) -> bool {
        self.rows.len() >= Self::ROWS || self.text.len() + self.json.len() >= Self::BYTES
    }

    /// How many rows the batch holds.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether the batch holds no row, so there is nothing to hand on.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Empties the batch for reuse; a buffer a huge row grew is given back.
    pub fn clear(&mut self) {
        self.text.clear();
        self.text.shrink_to(Self::BYTES * 2);
        self.json.clear();
        self.json.shrink_to(Self::BYTES * 2);
        self.rows.clear();
    }

    /// Row `i`, as the journal handed it.
    pub fn row(&self, i: usize) -> Option<ReplayRow<'_>> {
        let r = self.rows.get(i)?;
        Some(ReplayRow {
            seq: r.seq,
            event: &self.text[r.event.clone()],
            to_phase: self.value(&r.to_phase),
            reason_kind: r.reason_kind.clone().map(|k| &self.text[k]),
            reason_json: r.reason_json.clone().map(|j| &self.json[j]),
            effects: &self.json[r.effects.clone()],
            digest: r.digest,
            outcome: r.outcome,
            with_text: r.with_text,
        })
    }

    fn keep(&mut self, text: &str) -> Range<usize> {
        let start = self.text.len();
        self.text.push_str(text);
        start..self.text.len()
    }

    fn keep_json(&mut self, json: &[u8]) -> Range<usize> {
        let start = self.json.len();
        self.json.extend_from_slice(json);
        start..self.json.len()
    }

    fn phase(&mut self, value: ValueRef<'_>) -> OwnedPhase {
        match value {
            ValueRef::Integer(n) => OwnedPhase::Number(n),
            ValueRef::Null => OwnedPhase::Null,
            ValueRef::Real(x) => OwnedPhase::Real(x),
            // Text is UTF-8 by the time SQLite hands it over as a phase name; anything else is
            // kept as bytes, so the reader's error names it as it would have.
            ValueRef::Text(bytes) => match std::str::from_utf8(bytes) {
                Ok(text) => OwnedPhase::Text(self.keep(text)),
                Err(_) => OwnedPhase::Blob(self.keep_bytes(bytes)),
            },
            ValueRef::Blob(bytes) => OwnedPhase::Blob(self.keep_bytes(bytes)),
        }
    }

    /// Bytes that are not text are kept hex-encoded (they only ever reach an error message).
    fn keep_bytes(&mut self, bytes: &[u8]) -> Range<usize> {
        let start = self.text.len();
        for b in bytes {
            self.text.push_str(&format!("{b:02x}"));
        }
        start..self.text.len()
    }

    fn value(&self, phase: &OwnedPhase) -> ValueRef<'_> {
        match phase {
            OwnedPhase::Number(n) => ValueRef::Integer(*n),
            OwnedPhase::Text(r) => ValueRef::Text(self.text[r.clone()].as_bytes()),
            OwnedPhase::Null => ValueRef::Null,
            OwnedPhase::Real(x) => ValueRef::Real(*x),
            OwnedPhase::Blob(r) => ValueRef::Blob(self.text[r.clone()].as_bytes()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_hands_back_each_row_as_it_was_read() {
        let row = ReplayRow {
            seq: 7,
            event: r#"{"kind":"text_delta","request":1,"text":"héllo"}"#,
            to_phase: ValueRef::Text(b"some_new_phase"),
            reason_kind: Some("continue"),
            reason_json: Some(br#"{"kind":"next_turn"}"#),
            effects: b"[]",
            digest: u64::MAX,
            outcome: None,
            with_text: true,
        };
        let mut batch = RowBatch::default();
        batch.push(&row);
        batch.push(&ReplayRow { seq: 8, reason_kind: None, reason_json: None, ..row });
        let first = batch.row(0).expect("row 0");
        assert_eq!(format!("{first:?}"), format!("{row:?}"));
        assert_eq!(first.to_phase().expect("phase"), "some_new_phase");
        let second = batch.row(1).expect("row 1");
        assert_eq!((second.seq, second.reason_kind, second.reason_json), (8, None, None));
        assert!(batch.row(2).is_none());
        batch.clear();
        assert!(batch.is_empty());
    }

    #[test]
    fn a_batch_is_full_by_rows_or_by_bytes() {
        let big = "x".repeat(RowBatch::BYTES);
        let row = ReplayRow {
            seq: 1,
            event: &big,
            to_phase: ValueRef::Integer(1),
            reason_kind: None,
            reason_json: None,
            effects: b"[]",
            digest: 0,
            outcome: None,
            with_text: true,
        };
        let mut batch = RowBatch::default();
        batch.push(&row);
        assert!(batch.is_full(), "one row of a megabyte fills a batch");
        let mut small = RowBatch::default();
        for _ in 0..RowBatch::ROWS - 1 {
            small.push(&ReplayRow { event: "{}", ..row });
        }
        assert!(!small.is_full());
        small.push(&ReplayRow { event: "{}", ..row });
        assert!(small.is_full());
    }
}
