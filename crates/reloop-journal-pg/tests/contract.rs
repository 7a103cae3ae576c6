//! The journal contract, as any backend must keep it, checked on SQLite and on a real
//! PostgreSQL server; then what only a shared database has to promise (leases, fencing,
//! content-addressed payloads, refusing a newer schema).

mod support;

use std::time::Duration;

use reloop_core::{Config, ContentBlock, Event, Reason, Stop};
use reloop_journal::{Journal, JournalBackend, JournalError, SessionHeader, StepRecord, Writer, ENGINE_VERSION};
use reloop_journal_pg::{LeaseTimes, PgJournal, BLOB_MIN_BYTES, SCHEMA_VERSION};
use support::TestDb;

type Open<'a> = &'a dyn Fn() -> Box<dyn JournalBackend>;

fn header(id: &str) -> SessionHeader {
    SessionHeader {
        id: id.into(),
        created_at_ms: 1_700_000_000_000,
        engine_version: ENGINE_VERSION.into(),
        core_config: Config::default().with_max_turns(Some(3)),
        run_config: serde_json::json!({"provider": "scripted", "model": "m", "cwd": "/w"}),
        parent: None,
    }
}

fn said(seq: u64, text: &str) -> StepRecord {
    StepRecord {
        seq,
        at_ms: 1_700_000_000_000 + seq,
        event: Event::user_input(vec![ContentBlock::text(text)]),
        from_phase: "idle".into(),
        to_phase: "awaiting_model".into(),
        turn_before: seq as u32,
        turn_after: seq as u32 + 1,
        reason: None,
        ignored: None,
        effects: serde_json::json!([{"effect": "cancel_model"}]),
        digest: 0xfeed_0000_0000_0000 | seq,
    }
}

fn ended(seq: u64) -> StepRecord {
    let mut step = said(seq, "bye");
    step.to_phase = "done".into();
    step.reason = Some(Reason::Terminal(Stop::MaxTurns { max_turns: 3, turn_count: 4 }));
    step.effects = serde_json::json!([]);
    step
}

// ---- the contract, for any backend ----

fn steps_read_back_as_written(open: Open) {
    let mut j = open();
    j.create_session(&header("s-round"), &[said(1, "first")]).unwrap();
    j.append("s-round", &said(2, "second")).unwrap();
    j.append_synced("s-round", &said(3, "a write tool starts")).unwrap();
    j.append("s-round", &ended(4)).unwrap();
    let written = vec![said(1, "first"), said(2, "second"), said(3, "a write tool starts"), ended(4)];
    // Another handle, as another process would read it.
    let reader = open();
    assert_eq!(reader.steps("s-round").unwrap(), written);
    assert_eq!(reader.header("s-round").unwrap(), header("s-round"));
    let listed = reader.sessions().unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!((listed[0].steps, listed[0].terminal_reason.as_deref()), (4, Some("max_turns")));
    // A walk stopped early hands no more.
    let mut seen = vec![];
    let handed = reader
        .visit_steps("s-round", &mut |s| {
            seen.push(s.seq);
            Ok(s.seq < 2)
        })
        .unwrap();
    assert_eq!((handed, seen), (2, vec![1, 2]));
    // A follower reads from a step on: only those, and none past the last.
    let from = |from: u64| {
        let mut seen = vec![];
        let handed = reader
            .visit_steps_from("s-round", from, &mut |s| {
                seen.push(s.seq);
                Ok(true)
            })
            .unwrap();
        (handed, seen)
    };
    assert_eq!(from(0), (4, vec![1, 2, 3, 4]));
    assert_eq!(from(3), (2, vec![3, 4]));
    assert_eq!(from(5), (0, vec![]));
    assert_eq!(from(u64::MAX), (0, vec![]));
}

fn a_deferred_group_is_committed_by_the_next_append_or_commit(open: Open) {
    let mut j = open();
    j.create_session(&header("s-group"), &[]).unwrap();
    for seq in 1..=3 {
        j.append_deferred("s-group", &said(seq, "delta")).unwrap();
    }
    assert_eq!(j.deferred(), 3);
    j.append("s-group", &said(4, "block")).unwrap();
    assert_eq!(j.deferred(), 0, "a durable append commits the group before it");
    assert_eq!(open().steps("s-group").unwrap().len(), 4);
    j.append_deferred("s-group", &said(5, "delta")).unwrap();
    j.commit().unwrap();
    assert_eq!(open().steps("s-group").unwrap().len(), 5);
    j.append_deferred("s-group", &said(6, "delta")).unwrap();
    drop(j);
    assert_eq!(open().steps("s-group").unwrap().len(), 6, "dropping the writer commits what it deferred");
}

fn selectors_resolve_and_sessions_list(open: Open) {
    let mut j = open();
    assert!(matches!(j.resolve("last"), Err(JournalError::Empty)));
    j.create_session(&header("abc123"), &[]).unwrap();
    let mut imported = header("abd456");
    imported.run_config = serde_json::json!({"provider": "import", "file": "/t.jsonl"});
    j.create_session(&imported, &[]).unwrap();
    assert_eq!(j.resolve("abc").unwrap(), "abc123");
    assert_eq!(j.resolve("abc123").unwrap(), "abc123");
    assert!(matches!(j.resolve("ab"), Err(JournalError::AmbiguousSession { count: 2, .. })));
    assert!(matches!(j.resolve("zz"), Err(JournalError::NoSuchSession(_))));
    assert_eq!(j.resolve("last").unwrap(), "abd456");
    let ids: Vec<String> = j.sessions().unwrap().into_iter().map(|s| s.id).collect();
    assert_eq!(ids, ["abc123", "abd456"]);
    assert_eq!(j.imports_of("/t.jsonl").unwrap(), vec![("abd456".to_string(), imported.run_config.clone())]);
    assert!(j.imports_of("/other.jsonl").unwrap().is_empty());
    assert!(matches!(j.header("nope"), Err(JournalError::NoSuchSession(_))));
    assert!(
        matches!(j.create_session(&header("abc123"), &[]), Err(JournalError::Duplicate(_))),
        "an id is journaled once"
    );
}

fn a_fork_reads_as_its_parents_prefix_and_its_own_steps(open: Open) {
    let mut j = open();
    j.create_session(&header("parent"), &[said(1, "a"), said(2, "b")]).unwrap();
    j.append("parent", &said(3, "c")).unwrap();
    let mut fork = header("fork");
    fork.parent = Some(("parent".into(), 2));
    j.create_session(&fork, &[said(1, "a"), said(2, "b"), said(3, "other c")]).unwrap();
    assert_eq!(j.steps("fork").unwrap(), vec![said(1, "a"), said(2, "b"), said(3, "other c")]);
    assert_eq!(j.steps("parent").unwrap(), vec![said(1, "a"), said(2, "b"), said(3, "c")]);
    j.append("fork", &said(4, "d")).unwrap();
    // Read from a step on, across where the parent's steps end and the fork's begin.
    for (from, want) in [(2u64, vec![2u64, 3, 4]), (3, vec![3, 4]), (4, vec![4])] {
        let mut seen = vec![];
        j.visit_steps_from("fork", from, &mut |s| {
            seen.push(s.seq);
            Ok(true)
        })
        .unwrap();
        assert_eq!(seen, want, "from {from}");
    }
    let steps = j.steps("fork").unwrap();
    let mut read = vec![];
    j.visit_steps_from("fork", 3, &mut |s| {
        read.push(s);
        Ok(true)
    })
    .unwrap();
    assert_eq!(read, steps[2..], "the same steps as a whole walk");
    let summary = j.sessions().unwrap().into_iter().find(|s| s.id == "fork").unwrap();
    assert_eq!((summary.steps, summary.parent), (4, Some(("parent".to_string(), 2))));
}

/// A response step: a model's answer using `input` tokens.
fn answered(seq: u64, input: u64) -> StepRecord {
    let mut step = said(seq, "unused");
    step.event = serde_json::from_value(serde_json::json!({"kind": "model_done", "id": format!("msg_{seq}"),
        "model": "m", "stop_reason": "end_turn", "usage": {"input_tokens": input, "output_tokens": 1}}))
    .unwrap();
    step
}

/// A fork's totals count the answers it inherited from its parent and its own, on every
/// journal (SQLite copies the prefix, PostgreSQL reads it from the parent): `sessions`,
/// `reloop serve`'s list and the session's views agree on a fork whatever holds it.
fn a_forks_totals_count_its_inherited_answers(open: Open) {
    let mut j = open();
    j.create_session(&header("p"), &[said(1, "a"), answered(2, 100)]).unwrap();
    j.append("p", &answered(3, 200)).unwrap();
    let mut fork = header("f");
    fork.parent = Some(("p".into(), 2));
    j.create_session(&fork, &[said(1, "a"), answered(2, 100), answered(3, 7)]).unwrap();
    let overview = j.overview().unwrap();
    let of = |id: &str| -> Vec<u64> {
        overview.iter().find(|s| s.id == id).unwrap().responses.iter().map(|(_, u)| u.input_tokens).collect()
    };
    assert_eq!(of("f"), [100, 7], "the inherited answer, then its own");
    assert_eq!(of("p"), [100, 200]);
}

fn a_dump_moves_a_session_verbatim(open: Open) {
    let mut j = open();
    j.create_session(&header("moved"), &[said(1, "x")]).unwrap();
    j.append("moved", &ended(2)).unwrap();
    let dump = j.dump_session("moved").unwrap();
    let text = dump.to_json().unwrap();
    let mut other = Journal::in_memory().unwrap();
    assert_eq!(
        JournalBackend::import_session(&mut other, &reloop_journal::SessionDump::from_json(&text).unwrap()).unwrap(),
        "moved"
    );
    assert_eq!(JournalBackend::steps(&other, "moved").unwrap(), j.steps("moved").unwrap());
    // And back into the backend under test, from SQLite's dump.
    let mut fresh = header("moved");
    fresh.id = "moved-again".into();
    let mut again = other.dump_session("moved").unwrap();
    again.header.id = fresh.id.clone();
    assert_eq!(j.import_session(&again).unwrap(), "moved-again");
    assert_eq!(j.steps("moved-again").unwrap(), j.steps("moved").unwrap());
    assert!(matches!(j.import_session(&again), Err(JournalError::Duplicate(_))));
}

fn a_session_written_from_a_fill_is_there_whole_or_not_at_all(open: Open) {
    let mut j = open();
    let steps = [said(1, "a"), said(2, "b"), ended(3)];
    // A fill that fails midway writes nothing, not even the header.
    let failed = j.create_session_from(&header("half"), Writer::Take, &mut |sink| {
        sink(&steps[0])?;
        Err(JournalError::Empty)
    });
    assert!(matches!(failed, Err(JournalError::Empty)), "{failed:?}");
    assert!(matches!(j.header("half"), Err(JournalError::NoSuchSession(_))));
    // Taken: this journal writes on; left: any may.
    j.create_session_from(&header("taken"), Writer::Take, &mut |sink| steps.iter().try_for_each(&mut *sink)).unwrap();
    j.append("taken", &said(4, "more")).unwrap();
    assert_eq!(j.steps("taken").unwrap().len(), 4);
    j.create_session_from(&header("left"), Writer::Leave, &mut |sink| steps.iter().try_for_each(&mut *sink)).unwrap();
    assert_eq!(j.steps("left").unwrap(), steps);
    assert_eq!(j.live_writer("left").unwrap(), None);
    let again = j.create_session_from(&header("left"), Writer::Leave, &mut |_| Ok(()));
    assert!(matches!(again, Err(JournalError::Duplicate(_))), "{again:?}");
    assert_eq!(j.steps("left").unwrap(), steps, "left unchanged");
}

fn a_step_over_the_row_cap_is_refused_and_nothing_written(open: Open) {
    let mut j = open();
    j.create_session(&header("big"), &[said(1, "ok")]).unwrap();
    let huge = said(2, &"x".repeat(reloop_journal::MAX_ROW_BYTES));
    assert!(matches!(j.append("big", &huge), Err(JournalError::RowTooLarge { seq: 2, .. })));
    assert!(matches!(j.append_deferred("big", &huge), Err(JournalError::RowTooLarge { seq: 2, .. })));
    j.commit().unwrap();
    assert_eq!(open().steps("big").unwrap(), vec![said(1, "ok")]);
}

fn child_of(parent: &str, id: &str) -> SessionHeader {
    let mut child = header(id);
    child.run_config["agent"] = serde_json::json!({"parent": parent, "tool_use_id": id, "agent_type": "explore"});
    child
}

fn listings_show_prompts_usage_and_subagents(open: Open) {
    let mut j = open();
    j.create_session(&header("parent"), &[said(1, "the first prompt"), said(2, "later")]).unwrap();
    let mut child = header("child");
    child.run_config["agent"] =
        serde_json::json!({"parent": "parent", "tool_use_id": "toolu_1", "agent_type": "explore"});
    j.create_session(&child, &[said(1, "look around")]).unwrap();
    let mut fork = header("fork");
    fork.parent = Some(("parent".into(), 1));
    j.create_session(&fork, &[said(1, "the first prompt")]).unwrap();
    let listed = j.overview().unwrap();
    let by_id = |id: &str| listed.iter().find(|o| o.id == id).unwrap().clone();
    assert_eq!(listed.len(), 3);
    assert_eq!(by_id("parent").steps, 2);
    assert_eq!(by_id("parent").first_prompt, Some(said(1, "the first prompt").event));
    assert_eq!(by_id("fork").first_prompt, Some(said(1, "the first prompt").event), "a fork's prompt is its parent's");
    assert_eq!(by_id("fork").parent, Some(("parent".into(), 1)));
    assert_eq!(by_id("child").run_config["agent"]["agent_type"], "explore");
    assert!(by_id("parent").responses.is_empty());
    let subs = j.subagents_of("parent").unwrap();
    assert_eq!(subs.len(), 1);
    assert_eq!(
        (subs[0].id.as_str(), subs[0].tool_use_id.as_str(), subs[0].agent_type.as_str()),
        ("child", "toolu_1", "explore")
    );
    assert!(j.subagents_of("child").unwrap().is_empty());
    j.create_session(&child_of("parent", "late-child"), &[said(1, "after the fork")]).unwrap();
    assert_eq!(j.resolve("last").unwrap(), "fork", "a subagent's session is never `last`");
}

/// A stream-json `/clear` begins a session whose header names the one it cleared; one no
/// query followed has no steps. Either is found from the cleared session, and listed.
fn sessions_a_clear_began_are_found_from_the_cleared_one(open: Open) {
    let mut j = open();
    j.create_session(&header("old"), &[said(1, "before the clear")]).unwrap();
    let cleared = |id: &str, from: &str| {
        let mut h = header(id);
        h.created_at_ms += 1;
        h.run_config["print"] =
            serde_json::json!({"cleared_from": {"session": from, "cost_usd": 0.0, "model_usage": {}}});
        h
    };
    j.create_session(&cleared("new", "old"), &[said(1, "after it")]).unwrap();
    j.create_session(&cleared("empty", "new"), &[]).unwrap();
    assert_eq!(j.cleared_from("old").unwrap(), vec!["new".to_string()]);
    assert_eq!(j.cleared_from("new").unwrap(), vec!["empty".to_string()]);
    assert!(j.cleared_from("empty").unwrap().is_empty());
    assert!(j.steps("empty").unwrap().is_empty());
    let listed = j.overview().unwrap();
    let empty = listed.iter().find(|o| o.id == "empty").unwrap();
    assert_eq!((empty.steps, empty.first_prompt.clone()), (0, None));
}

macro_rules! contract {
    ($($scenario:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[test]
                fn $scenario() {
                    let dir = tempfile::tempdir().unwrap();
                    let path = dir.path().join("journal.db");
                    super::$scenario(&|| Box::new(reloop_journal::Journal::create_or_open(&path).unwrap()));
                }
            )*
        }
        mod postgres {
            $(
                #[test]
                fn $scenario() {
                    let Some(db) = super::TestDb::new(stringify!($scenario)) else { return };
                    super::$scenario(&|| Box::new(super::pg(&db)));
                }
            )*
        }
    };
}

contract!(
    steps_read_back_as_written,
    a_deferred_group_is_committed_by_the_next_append_or_commit,
    selectors_resolve_and_sessions_list,
    a_fork_reads_as_its_parents_prefix_and_its_own_steps,
    a_forks_totals_count_its_inherited_answers,
    a_dump_moves_a_session_verbatim,
    a_session_written_from_a_fill_is_there_whole_or_not_at_all,
    a_step_over_the_row_cap_is_refused_and_nothing_written,
    listings_show_prompts_usage_and_subagents,
    sessions_a_clear_began_are_found_from_the_cleared_one,
);

#[test]
fn sqlite_has_no_queue_and_says_so() {
    let mut j = Journal::in_memory().unwrap();
    JournalBackend::create_session(&mut j, &header("s"), &[said(1, "hi")]).unwrap();
    let err = JournalBackend::enqueue(&mut j, "s").unwrap_err();
    assert!(matches!(err, JournalError::NeedsShared { .. }), "{err}");
    assert!(err.to_string().contains("postgres://"), "{err}");
    assert!(matches!(JournalBackend::claim(&mut j), Err(JournalError::NeedsShared { .. })));
}

#[test]
fn queued_sessions_are_claimed_once_each_and_a_dead_claimers_come_back() {
    let Some(db) = TestDb::new("queued_sessions_are_claimed_once_each_and_a_dead_claimers_come_back") else { return };
    let mut producer = pg(&db);
    for id in ["q1", "q2", "q3"] {
        producer.create_session(&header(id), &[said(1, "work")]).unwrap();
        producer.enqueue(id).unwrap();
    }
    assert_eq!(producer.live_writer("q1").unwrap(), None, "enqueueing gives the session up");
    // Three claimers at once: each session goes to exactly one.
    let claims: Vec<_> = (0..3)
        .map(|_| {
            let url = db.url.clone();
            std::thread::spawn(move || {
                let times = LeaseTimes { ttl: Duration::from_secs(30), heartbeat: None };
                let mut j = PgJournal::connect(&url, times).unwrap();
                let id = j.claim().unwrap().unwrap();
                (j, id)
            })
        })
        .collect();
    let mut claimed: Vec<(PgJournal, String)> = claims.into_iter().map(|t| t.join().unwrap()).collect();
    let mut ids: Vec<&str> = claimed.iter().map(|(_, id)| id.as_str()).collect();
    ids.sort();
    assert_eq!(ids, ["q1", "q2", "q3"]);
    let mut idle = pg(&db);
    assert_eq!(idle.claim().unwrap(), None, "every queued session has a live writer");
    // A claimer appends as the writer; finishing takes the session out of the queue for good.
    let (first, id) = &mut claimed[0];
    first.append(id, &said(2, "done")).unwrap();
    first.finish_queued(id, "completed").unwrap();
    let done = id.clone();
    // The claimers of the others die without a word (their leases lapse): the sessions return.
    let (finisher, _) = claimed.remove(0);
    drop(finisher);
    for (j, _) in claimed {
        std::mem::forget(j);
    }
    let mut next = pg_with(&db, 500, None);
    // Lapsed leases only come back after their ttl; a live default lease is 30 s.
    let mut raw = db.client();
    raw.execute("UPDATE reloop.leases SET expires_at = clock_timestamp() WHERE session_id <> $1", &[&done]).unwrap();
    let mut again = [next.claim().unwrap().unwrap(), next.claim().unwrap().unwrap()];
    again.sort();
    assert!(!again.contains(&done), "a finished session is never claimed again");
    assert_eq!(next.claim().unwrap(), None);
    let epochs: Vec<i64> = raw
        .query("SELECT epoch FROM reloop.leases WHERE session_id <> $1", &[&done])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    // Epoch 1 was the producer's, 2 the dead claimers', 3 the takeovers'.
    assert_eq!(epochs, [3, 3], "each takeover fences the dead claimer off");
    let attempts: i32 = raw.query_one("SELECT max(attempts) FROM reloop.queue", &[]).unwrap().get(0);
    assert_eq!(attempts, 2);
}

#[test]
fn a_session_given_back_unrun_is_claimable_at_once_and_its_claim_is_not_counted() {
    let Some(db) = TestDb::new("a_session_given_back_unrun_is_claimable_at_once") else { return };
    let mut producer = pg(&db);
    producer.create_session(&header("q"), &[said(1, "work")]).unwrap();
    producer.enqueue("q").unwrap();
    let mut raw = db.client();
    let attempts = |raw: &mut ::postgres::Client| -> i32 {
        raw.query_one("SELECT attempts FROM reloop.queue WHERE session_id = 'q'", &[]).unwrap().get(0)
    };
    let mut stopping = pg(&db);
    assert_eq!(stopping.claim().unwrap().as_deref(), Some("q"));
    assert_eq!(attempts(&mut raw), 1);
    stopping.unclaim("q").unwrap();
    assert_eq!(attempts(&mut raw), 0, "a claim given back unrun is no attempt");
    assert_eq!(stopping.live_writer("q").unwrap(), None, "its lease is over");
    assert!(stopping.append("q", &said(2, "late")).is_err(), "the giver is no longer the writer");
    // The next worker takes it without waiting for any lease to lapse, with a higher epoch.
    let mut next = pg(&db);
    assert_eq!(next.claim().unwrap().as_deref(), Some("q"));
    assert_eq!(attempts(&mut raw), 1);
    next.append("q", &said(2, "mine")).unwrap();
    // Giving back a claim another writer has since taken over leaves their claim counted.
    raw.execute("UPDATE reloop.leases SET expires_at = clock_timestamp()", &[]).unwrap();
    let mut third = pg(&db);
    assert_eq!(third.claim().unwrap().as_deref(), Some("q"));
    assert_eq!(attempts(&mut raw), 2);
    next.unclaim("q").unwrap();
    assert_eq!(attempts(&mut raw), 2, "the fenced-off claimer takes nothing back");
    assert!(third.live_writer("q").unwrap().is_some_and(|w| w.starts_with(third.holder())));
}

// ---- what a shared database promises beyond ----

fn pg(db: &TestDb) -> PgJournal {
    PgJournal::connect(&db.url, LeaseTimes::default()).unwrap()
}

fn pg_with(db: &TestDb, ttl_ms: u64, heartbeat_ms: Option<u64>) -> PgJournal {
    let times = LeaseTimes { ttl: Duration::from_millis(ttl_ms), heartbeat: heartbeat_ms.map(Duration::from_millis) };
    PgJournal::connect(&db.url, times).unwrap()
}

#[test]
fn a_second_writer_is_refused_while_the_lease_is_live() {
    let Some(db) = TestDb::new("a_second_writer_is_refused_while_the_lease_is_live") else { return };
    let mut first = pg(&db);
    first.create_session(&header("s"), &[said(1, "hi")]).unwrap();
    let mut second = pg(&db);
    let err = second.lock_session("s").unwrap_err();
    assert!(matches!(&err, JournalError::Leased { holder, .. } if holder.starts_with(first.holder())), "{err}");
    assert!(err.to_string().contains("is being written by"), "{err}");
    assert!(second.append("s", &said(2, "mine")).is_err(), "a journal that is not the writer cannot append");
    assert_eq!(second.live_writer("s").unwrap(), Some(format!("{} (epoch 1)", first.holder())));
    first.append("s", &said(2, "still mine")).unwrap();
    // Giving the session up lets the next writer in at once, with a higher epoch.
    first.release_session("s").unwrap();
    second.lock_session("s").unwrap();
    assert_eq!(second.live_writer("s").unwrap(), Some(format!("{} (epoch 2)", second.holder())));
    second.append("s", &said(3, "now mine")).unwrap();
    assert_eq!(second.steps("s").unwrap().len(), 3);
}

#[test]
fn heartbeats_keep_an_idle_writers_lease() {
    let Some(db) = TestDb::new("heartbeats_keep_an_idle_writers_lease") else { return };
    let mut writer = pg_with(&db, 800, Some(150));
    writer.create_session(&header("s"), &[]).unwrap();
    std::thread::sleep(Duration::from_millis(2_000));
    let mut other = pg(&db);
    assert!(matches!(other.lock_session("s"), Err(JournalError::Leased { .. })), "the lease was renewed");
    writer.append("s", &said(1, "after a long tool")).unwrap();
    // A writer that ends (drop) gives its sessions up at once, without waiting out the lease.
    drop(writer);
    other.lock_session("s").unwrap();
    assert_eq!(other.live_writer("s").unwrap(), Some(format!("{} (epoch 2)", other.holder())));
}

#[test]
fn an_expired_lease_is_taken_over_and_the_old_writer_is_fenced_off() {
    let Some(db) = TestDb::new("an_expired_lease_is_taken_over_and_the_old_writer_is_fenced_off") else { return };
    // A writer that stops renewing (paused, partitioned): no heartbeat, a short lease.
    let mut old = pg_with(&db, 300, None);
    old.create_session(&header("s"), &[said(1, "a")]).unwrap();
    old.append_deferred("s", &said(2, "b, deferred")).unwrap();
    std::thread::sleep(Duration::from_millis(600));
    let mut new = pg(&db);
    assert_eq!(new.live_writer("s").unwrap(), None, "an expired lease names no writer");
    new.lock_session("s").unwrap();
    new.append("s", &said(2, "b, by the new writer")).unwrap();
    // The old writer wakes up: its epoch is stale, so nothing it writes lands.
    let err = old.append("s", &said(3, "c, too late")).unwrap_err();
    assert!(matches!(err, JournalError::LeaseLost { epoch: 1, .. }), "{err}");
    assert!(err.to_string().contains("taken over"), "{err}");
    assert!(matches!(old.commit(), Ok(())), "the refused group was dropped with its append");
    assert!(matches!(old.lock_session("s"), Ok(())), "it still believes it holds the lease...");
    assert!(matches!(old.append("s", &said(3, "c")), Err(JournalError::LeaseLost { .. })), "...and is refused");
    drop(old);
    assert_eq!(new.steps("s").unwrap(), vec![said(1, "a"), said(2, "b, by the new writer")]);
    assert_eq!(new.live_writer("s").unwrap(), Some(format!("{} (epoch 2)", new.holder())));
}

#[test]
fn a_database_from_a_newer_reloop_is_refused_clearly_and_left_untouched() {
    let Some(db) = TestDb::new("a_database_from_a_newer_reloop_is_refused_clearly_and_left_untouched") else { return };
    drop(pg(&db));
    let mut raw = db.client();
    raw.execute(
        "INSERT INTO reloop.schema_migrations (version, engine_version) VALUES ($1, '99.0.0')",
        &[&(SCHEMA_VERSION + 1)],
    )
    .unwrap();
    let err = PgJournal::connect(&db.url, LeaseTimes::default()).unwrap_err();
    assert!(
        matches!(err, JournalError::SchemaTooNew { found, supported, .. } if found == SCHEMA_VERSION + 1 && supported == SCHEMA_VERSION),
        "{err}"
    );
    assert!(err.to_string().contains("written by a newer reloop"), "{err}");
    let versions: i64 = raw.query_one("SELECT count(*) FROM reloop.schema_migrations", &[]).unwrap().get(0);
    assert_eq!(versions, SCHEMA_VERSION + 1, "nothing was migrated");
}

#[test]
fn a_repeated_payload_is_stored_once() {
    let Some(db) = TestDb::new("a_repeated_payload_is_stored_once") else { return };
    let mut j = pg(&db);
    let result = "a tool result that repeats. ".repeat(BLOB_MIN_BYTES / 10);
    j.create_session(&header("one"), &[said(1, &result)]).unwrap();
    j.append("one", &said(2, &result)).unwrap();
    j.append("one", &said(3, "small")).unwrap();
    j.create_session(&header("two"), &[said(1, &result)]).unwrap();
    let mut raw = db.client();
    let blobs: i64 = raw.query_one("SELECT count(*) FROM reloop.blobs", &[]).unwrap().get(0);
    assert_eq!(blobs, 1, "three steps, one stored payload");
    let inline: i64 = raw.query_one("SELECT count(*) FROM reloop.steps WHERE event IS NOT NULL", &[]).unwrap().get(0);
    assert_eq!(inline, 1, "a small payload stays in its row");
    assert_eq!(j.steps("one").unwrap(), vec![said(1, &result), said(2, &result), said(3, "small")]);
    assert_eq!(j.steps("two").unwrap(), vec![said(1, &result)]);
}

/// A step's row holds exactly the text the shared row codec gives it, its event's kind included:
/// the columns pinned here are what PostgreSQL journals held before the codec was shared.
#[test]
fn a_step_s_row_holds_its_fields_as_text() {
    let Some(db) = TestDb::new("a_step_s_row_holds_its_fields_as_text") else { return };
    let mut j = pg(&db);
    j.create_session(&header("rows"), &[said(1, "hi"), ended(2)]).unwrap();
    let mut raw = db.client();
    let rows = raw
        .query(
            "SELECT kind, event, from_phase, to_phase, turn_before, turn_after, reason_kind, reason, reason_json,
                    effects, digest
             FROM reloop.steps WHERE session_id = 'rows' ORDER BY seq",
            &[],
        )
        .unwrap();
    type Columns =
        (String, String, String, String, i64, i64, Option<String>, Option<String>, Option<String>, Option<String>, i64);
    let columns = |r: &::postgres::Row| -> Columns {
        (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4), r.get(5), r.get(6), r.get(7), r.get(8), r.get(9), r.get(10))
    };
    let event = r#"{"kind":"user_input","content":[{"type":"text","text":"hi"}]}"#;
    assert_eq!(
        columns(&rows[0]),
        (
            "user_input".into(),
            event.into(),
            "idle".into(),
            "awaiting_model".into(),
            1,
            2,
            None,
            None,
            None,
            Some(r#"[{"effect":"cancel_model"}]"#.into()),
            (0xfeed_0000_0000_0001_u64) as i64
        )
    );
    let last = columns(&rows[1]);
    assert_eq!(
        (last.3.as_str(), last.6.as_deref(), last.7.as_deref(), last.9.as_deref()),
        ("done", Some("terminal"), Some("max_turns"), None)
    );
    let reason = serde_json::to_string(&Reason::Terminal(Stop::MaxTurns { max_turns: 3, turn_count: 4 })).unwrap();
    assert_eq!(last.8, Some(reason));
}

#[test]
fn a_fork_stores_only_its_own_steps() {
    let Some(db) = TestDb::new("a_fork_stores_only_its_own_steps") else { return };
    let mut j = pg(&db);
    j.create_session(&header("parent"), &[said(1, "a"), said(2, "b"), said(3, "c")]).unwrap();
    let mut fork = header("fork");
    fork.parent = Some(("parent".into(), 2));
    j.create_session(&fork, &[said(1, "a"), said(2, "b"), said(3, "other")]).unwrap();
    let mut fork2 = header("fork2");
    fork2.parent = Some(("fork".into(), 3));
    j.create_session(&fork2, &[said(1, "a"), said(2, "b"), said(3, "other")]).unwrap();
    let mut raw = db.client();
    let own = |raw: &mut ::postgres::Client, id: &str| -> i64 {
        raw.query_one("SELECT count(*) FROM reloop.steps WHERE session_id = $1", &[&id]).unwrap().get(0)
    };
    assert_eq!((own(&mut raw, "fork"), own(&mut raw, "fork2")), (1, 0));
    assert_eq!(j.steps("fork2").unwrap(), vec![said(1, "a"), said(2, "b"), said(3, "other")]);
    // A "fork" whose steps differ from its parent's is stored whole.
    let mut rewritten = header("rewritten");
    rewritten.parent = Some(("parent".into(), 2));
    j.create_session(&rewritten, &[said(1, "A"), said(2, "b")]).unwrap();
    assert_eq!(own(&mut raw, "rewritten"), 2);
    assert_eq!(j.steps("rewritten").unwrap(), vec![said(1, "A"), said(2, "b")]);
}

/// The driver calls the journal from tokio tasks: the journal must work there, on both kinds
/// of runtime, without entering a runtime of its own on the caller's thread.
async fn used_from_a_task(url: String, id: &'static str) {
    let mut j = PgJournal::connect(&url, LeaseTimes::default()).unwrap();
    j.create_session(&header(id), &[said(1, "in a task")]).unwrap();
    j.append(id, &said(2, "still")).unwrap();
    tokio::task::yield_now().await;
    assert_eq!(j.steps(id).unwrap().len(), 2);
}

#[test]
fn it_works_inside_a_multi_threaded_tokio_runtime() {
    // The test's database is made before the runtime: the test's own admin client is the
    // synchronous one that must not run on a runtime's thread.
    let Some(db) = TestDb::new("it_works_inside_a_multi_threaded_tokio_runtime") else { return };
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(async { tokio::spawn(used_from_a_task(db.url.clone(), "mt")).await.unwrap() });
}

#[test]
fn it_works_inside_a_current_thread_tokio_runtime() {
    let Some(db) = TestDb::new("it_works_inside_a_current_thread_tokio_runtime") else { return };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(used_from_a_task(db.url.clone(), "ct"));
}
