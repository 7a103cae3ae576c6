//! A journal replayed on two threads: one reads rows and decodes their events (but text deltas',
//! left to the other: `left_to_step`), the other steps the core and compares. Reading and decoding cost about as much as stepping and comparing, so
//! on two cores a replay takes about half the time; in memory it holds at most a few batches of
//! rows ([`RowBatch`], bounded in rows and in bytes) whatever the session's length.

use std::sync::mpsc;

use reloop_core::Event;
use reloop_journal::{Journal, JournalError, ReplayRow, RowBatch};

use crate::Replayer;

/// Batches in flight between the threads, besides the two being filled and replayed: enough
/// that neither thread waits on the other while both keep pace.
const IN_FLIGHT: usize = 2;

/// A batch of rows with their events decoded, but for the text deltas ([`left_to_step`]).
#[derive(Default)]
struct Decoded {
    rows: RowBatch,
    events: Vec<Option<Result<Event, serde_json::Error>>>,
}

/// Whether the reading thread leaves a row's event for the stepping thread to decode: a text
/// delta's, the cheapest to decode and most rows of a streamed answer. Reading and decoding a
/// row cost about what stepping it does, but a delta barely steps, so in a session of streamed
/// answers the stepping thread waited on the reader (callgrind, 10,000 turns of 20 deltas: 910M
/// instructions reading, 593M stepping); decoding the deltas there evens the two out. Only where
/// the decoding happens depends on this: the event is decoded by the same function either way.
fn left_to_step(event: &str) -> bool {
    event.starts_with(r#"{"kind":"text_delta","#)
}

impl Decoded {
    fn clear(&mut self) {
        self.rows.clear();
        self.events.clear();
    }
}

/// Replays the rows `read` hands over (`read` calls its argument once per row, in order, and
/// stops when it returns `false`) through `replayer`. `read` runs on a thread of its own, so it
/// must be `Send`: a SQLite journal is, moved in by `&mut`. Returns how many rows were replayed;
/// the verdict is `replayer`'s. An error reading a row, or a row that cannot be decoded, stops
/// the replay and is returned.
pub fn replay_rows<R>(replayer: &mut Replayer, session: &str, read: R) -> Result<usize, JournalError>
where
    R: FnOnce(&mut dyn FnMut(&ReplayRow<'_>) -> Result<bool, JournalError>) -> Result<usize, JournalError> + Send,
{
    replay_in_batches(replayer, session, RowBatch::ROWS, read)
}

/// [`replay_rows`] with batches of at most `rows_per_batch` rows (tests cross many batches with
/// a short session).
fn replay_in_batches<R>(
    replayer: &mut Replayer,
    session: &str,
    rows_per_batch: usize,
    read: R,
) -> Result<usize, JournalError>
where
    R: FnOnce(&mut dyn FnMut(&ReplayRow<'_>) -> Result<bool, JournalError>) -> Result<usize, JournalError> + Send,
{
    let (full_tx, full_rx) = mpsc::sync_channel::<Decoded>(IN_FLIGHT);
    let (empty_tx, empty_rx) = mpsc::channel::<Decoded>();
    std::thread::scope(|scope| {
        let reader = scope.spawn(move || {
            let mut batch = Decoded::default();
            let hand_on = |batch: &mut Decoded| -> bool {
                let next = empty_rx.try_recv().unwrap_or_default();
                full_tx.send(std::mem::replace(batch, next)).is_ok()
            };
            let read_rows = read(&mut |row| {
                batch.events.push((!left_to_step(row.event)).then(|| reloop_journal::read_event(row.event)));
                batch.rows.push(row);
                // The replay stopped (it diverged, or failed): so does the reading.
                let full = batch.rows.is_full() || batch.rows.len() >= rows_per_batch;
                Ok(!full || hand_on(&mut batch))
            });
            if !batch.rows.is_empty() {
                hand_on(&mut batch);
            }
            read_rows
        });
        let mut replayed = 0;
        let mut stepped: Result<(), JournalError> = Ok(());
        'batches: for mut batch in full_rx.iter() {
            for (i, event) in batch.events.drain(..).enumerate() {
                let Some(row) = batch.rows.row(i) else { break };
                let event = event.unwrap_or_else(|| reloop_journal::read_event(row.event));
                match replayer.feed_decoded(&row, event, session) {
                    Ok(true) => replayed += 1,
                    Ok(false) => break 'batches,
                    Err(e) => {
                        stepped = Err(e);
                        break 'batches;
                    }
                }
            }
            batch.clear();
            // The reader may have stopped already; then the batch is simply dropped.
            let _ = empty_tx.send(batch);
        }
        // Dropping the receiver tells a reader still reading that nobody listens any more.
        drop(full_rx);
        let read = reader.join().map_err(|_| JournalError::Database {
            place: "replay".into(),
            detail: "the thread reading the journal stopped unexpectedly".into(),
        })?;
        stepped?;
        read?;
        Ok(replayed)
    })
}

/// Replays `session` from a SQLite journal through `replayer` with [`replay_rows`]: the journal
/// is lent to the reading thread for the replay's length. Rows are read without the text of what
/// their step did where their hash answers for it ([`Journal::visit_hashed_rows`]); a step that
/// differs has its row read again whole to report how, and should it not differ after all the
/// replay goes on after it.
pub fn replay_journal(journal: &mut Journal, session: &str, replayer: &mut Replayer) -> Result<usize, JournalError> {
    let mut replayed = 0;
    let mut from = 0;
    loop {
        let lent = &mut *journal;
        replayed += replay_rows(replayer, session, move |visit| lent.visit_hashed_rows(session, from, visit))?;
        let Some(seq) = replayer.text_needed() else { return Ok(replayed) };
        let mut goes_on = false;
        journal.visit_replay_row(session, seq, |row| {
            goes_on = replayer.resolve(row, session)?;
            Ok(())
        })?;
        if !goes_on {
            return Ok(replayed);
        }
        replayed += 1;
        from = seq + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_corpus::journals as corpus;

    fn one_thread(journal: &Journal, id: &str) -> crate::ReplayReport {
        let header = journal.header(id).expect("header");
        let mut replayer = Replayer::new(&header, &[]);
        journal.visit_replay_rows(id, |row| replayer.feed_row(row, id)).expect("rows");
        replayer.finish()
    }

    fn two_threads(journal: &mut Journal, id: &str, rows_per_batch: usize, flips: &[u32]) -> crate::ReplayReport {
        let header = journal.header(id).expect("header");
        let mut replayer = Replayer::new(&header, flips);
        replay_in_batches(&mut replayer, id, rows_per_batch, move |visit| journal.visit_replay_rows(id, visit))
            .expect("rows");
        replayer.finish()
    }

    #[test]
    fn two_threads_replay_every_corpus_session_as_one_does() {
        for (_tmp, mut journal, id) in corpus() {
            let expected = one_thread(&journal, &id);
            assert!(expected.divergence.is_none(), "{id} replays identical");
            for rows_per_batch in [1, 3, RowBatch::ROWS] {
                assert_eq!(two_threads(&mut journal, &id, rows_per_batch, &[]), expected, "{id}, {rows_per_batch}");
            }
        }
    }

    #[test]
    fn a_divergence_stops_both_threads_at_the_same_step_as_one_thread_and_is_reported_from_the_row_read_whole() {
        let (mut diverged, mut without_text) = (0, 0);
        for (_tmp, mut journal, id) in corpus() {
            let header = journal.header(&id).expect("header");
            // Flipping a flag the session was recorded with makes most sessions diverge somewhere.
            let Some(flag) = header.core_config.flags.numbers().next() else { continue };
            let mut replayer = Replayer::new(&header, &[flag]);
            journal.visit_replay_rows(&id, |row| replayer.feed_row(row, &id)).expect("rows");
            let expected = replayer.finish();
            if expected.divergence.is_some() {
                diverged += 1;
            }
            for rows_per_batch in [1, 2, 7] {
                assert_eq!(two_threads(&mut journal, &id, rows_per_batch, &[flag]), expected, "{id}, {rows_per_batch}");
            }
            // Rows read without the text of what their step did, as `reloop replay` reads them.
            let mut replayer = Replayer::new(&header, &[flag]);
            let (lent, session) = (&mut journal, id.as_str());
            replay_rows(&mut replayer, session, move |visit| lent.visit_hashed_rows(session, 0, visit)).expect("rows");
            without_text += usize::from(replayer.text_needed().is_some());
            let mut replayer = Replayer::new(&header, &[flag]);
            let replayed = replay_journal(&mut journal, &id, &mut replayer).expect("rows");
            assert_eq!((replayed, replayer.finish()), (expected.steps, expected), "{id}");
        }
        assert!(diverged > 0, "some flipped replay diverges, so the stop is exercised");
        assert!(without_text > 0, "some divergence falls on a row read without its text");
    }

    #[test]
    fn a_row_whose_hash_alone_differs_replays_on_as_its_text_says() {
        let (tmp, mut journal, id) = corpus().into_iter().next().expect("a session");
        let conn = rusqlite::Connection::open(tmp.path().join("j.db")).expect("the journal's file");
        let changed = conn
            .execute(
                "UPDATE steps SET outcome = outcome + 1
                 WHERE key = (SELECT key FROM steps WHERE outcome IS NOT NULL ORDER BY key LIMIT 1 OFFSET 2)",
                [],
            )
            .expect("a hash changed");
        assert_eq!(changed, 1);
        let expected = one_thread(&journal, &id);
        assert!(expected.divergence.is_none(), "the row's text says what the engine did");
        let mut replayer = Replayer::new(&journal.header(&id).expect("header"), &[]);
        let replayed = replay_journal(&mut journal, &id, &mut replayer).expect("rows");
        assert_eq!((replayed, replayer.finish()), (expected.steps, expected));
    }

    #[test]
    fn a_row_that_cannot_be_decoded_and_a_failing_reader_are_errors() {
        let (_tmp, mut journal, id) = corpus().into_iter().next().expect("a session");
        let header = journal.header(&id).expect("header");
        let id = id.as_str();
        // Decoded by the reading thread, and (a text delta's) by the stepping one.
        for bad in ["{not json", r#"{"kind":"text_delta","index":"#] {
            let mut replayer = Replayer::new(&header, &[]);
            let lent = &mut journal;
            let garbled = replay_in_batches(&mut replayer, id, 2, move |visit| {
                lent.visit_replay_rows(id, |row| {
                    let mut garbled = *row;
                    garbled.event = bad;
                    visit(&garbled)
                })
            });
            assert!(matches!(garbled, Err(JournalError::Decode { what: "event", .. })), "{bad}: {garbled:?}");
        }

        let mut replayer = Replayer::new(&header, &[]);
        let lent = &mut journal;
        let failing = replay_in_batches(&mut replayer, id, 2, move |visit| {
            let mut seen = 0;
            lent.visit_replay_rows(id, |row| {
                seen += 1;
                if seen == 4 {
                    return Err(JournalError::Empty);
                }
                visit(row)
            })
        });
        assert!(matches!(failing, Err(JournalError::Empty)), "{failing:?}");
    }
}
