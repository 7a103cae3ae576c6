//! The queue as an operator reads it ([`PgJournal::queue_entries`]), on a real PostgreSQL: each
//! session's state (queued, claimed, failed, done), who holds it, since when, and why.

mod support;

use reloop_core::{Config, ContentBlock, Event};
use reloop_journal::{JournalBackend, SessionHeader, StepRecord, ENGINE_VERSION};
use reloop_journal_pg::{LeaseTimes, PgJournal, QueueEntry, QueueState};
use support::TestDb;

fn header(id: &str) -> SessionHeader {
    SessionHeader {
        id: id.into(),
        created_at_ms: 1_700_000_000_000,
        engine_version: ENGINE_VERSION.into(),
        core_config: Config::default(),
        run_config: serde_json::json!({"provider": "scripted", "model": "m", "cwd": "/w"}),
        parent: None,
    }
}

fn said(text: &str) -> StepRecord {
    StepRecord {
        seq: 1,
        at_ms: 1_700_000_000_001,
        event: Event::user_input(vec![ContentBlock::text(text)]),
        from_phase: "idle".into(),
        to_phase: "awaiting_model".into(),
        turn_before: 1,
        turn_after: 1,
        reason: None,
        ignored: None,
        effects: serde_json::json!([]),
        digest: 1,
    }
}

fn entry<'a>(entries: &'a [QueueEntry], session: &str) -> &'a QueueEntry {
    entries.iter().find(|e| e.session == session).unwrap_or_else(|| panic!("{session} in {entries:?}"))
}

#[test]
fn each_queued_session_reads_as_queued_claimed_failed_or_done_with_who_since_when_and_why() {
    let Some(db) = TestDb::new("each_queued_session_reads_as_queued_claimed_failed_or_done") else { return };
    let mut producer = PgJournal::connect(&db.url, LeaseTimes::default()).unwrap();
    assert_eq!(producer.queue_entries().unwrap(), [], "an empty queue");
    let before = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64;
    for id in ["done", "failed", "model_error", "claimed", "waiting", "given_up"] {
        producer.create_session(&header(id), &[said(id)]).unwrap();
        producer.enqueue(id).unwrap();
    }
    let mut worker = PgJournal::connect(&db.url, LeaseTimes::default()).unwrap();
    for (id, outcome) in [("done", "completed"), ("failed", "error: no key"), ("model_error", "model_error")] {
        assert_eq!(worker.claim().unwrap().as_deref(), Some(id));
        worker.finish_queued(id, outcome).unwrap();
        worker.release_session(id).unwrap();
    }
    assert_eq!(worker.claim().unwrap().as_deref(), Some("claimed"));
    let mut raw = db.client();
    raw.execute("UPDATE reloop.queue SET attempts = 5 WHERE session_id = 'given_up'", &[]).unwrap();
    raw.execute("UPDATE reloop.queue SET attempts = 1 WHERE session_id = 'waiting'", &[]).unwrap();

    let entries = producer.queue_entries().unwrap();
    assert_eq!(entries.len(), 6);
    let holder = Some(worker.holder().to_string());
    let done = entry(&entries, "done");
    assert_eq!((done.state, &done.worker, done.reason.as_deref()), (QueueState::Done, &holder, Some("completed")));
    let failed = entry(&entries, "failed");
    assert_eq!((failed.state, failed.reason.as_deref()), (QueueState::Failed, Some("error: no key")));
    assert_eq!(failed.worker, holder, "who ran it last");
    // A terminal reason `run` exits 1 on is a failure too.
    assert_eq!(entry(&entries, "model_error").state, QueueState::Failed);
    let claimed = entry(&entries, "claimed");
    assert_eq!((claimed.state, &claimed.worker, &claimed.reason), (QueueState::Claimed, &holder, &None));
    let waiting = entry(&entries, "waiting");
    assert_eq!((waiting.state, &waiting.worker), (QueueState::Queued, &None));
    assert!(waiting.reason.as_deref().unwrap().contains("claimed once before"), "{waiting:?}");
    let given_up = entry(&entries, "given_up");
    assert_eq!(given_up.state, QueueState::Failed);
    assert!(given_up.reason.as_deref().unwrap().contains("given up after 5 claims"), "{given_up:?}");
    for e in &entries {
        assert!(
            e.since_ms + 1_000 >= before && e.since_ms < before + 60_000,
            "since when, by the database's clock: {e:?}"
        );
    }
    assert!(
        entry(&entries, "claimed").since_ms >= entry(&entries, "waiting").since_ms,
        "claimed after it was enqueued"
    );
    // In the order they were enqueued.
    let order: Vec<&str> = entries.iter().map(|e| e.session.as_str()).collect();
    assert_eq!(order, ["done", "failed", "model_error", "claimed", "waiting", "given_up"]);
    let json = serde_json::to_value(entry(&entries, "failed")).unwrap();
    assert_eq!(json["state"], "failed");
}

#[test]
fn an_outcome_is_done_unless_run_would_exit_1_on_it() {
    assert_eq!(QueueState::of_outcome("completed"), QueueState::Done);
    assert_eq!(QueueState::of_outcome("hook_stopped"), QueueState::Done);
    assert_eq!(QueueState::of_outcome("max_turns"), QueueState::Failed);
    assert_eq!(QueueState::of_outcome("error: the script is gone"), QueueState::Failed);
    assert_eq!(QueueState::Claimed.as_str(), "claimed");
}
