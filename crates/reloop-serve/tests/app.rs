//! The server's routes and its index as a library: the index reads only what the journal added
//! since its last refresh, and the list fills a queue column from a `QueueStatus` when one is
//! given (none without).

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use reloop_driver::SessionJournal;
use reloop_journal::{Journal, SessionDump};
use reloop_serve::index::{Filter, Index};
use reloop_serve::{auth::Access, Config, IndexPlace, OpenJournal, PriceTable, QueueStatus};
use tower::ServiceExt;

fn dump(name: &str) -> SessionDump {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/journals").join(name);
    SessionDump::from_json(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn no_prices() -> PriceTable {
    Arc::new(|_, _| None)
}

#[test]
fn a_refresh_reads_only_the_sessions_the_journal_added_since_the_last() {
    let dir = tempfile::tempdir().unwrap();
    let (path, index) = (dir.path().join("j.db"), dir.path().join("j.db.serve-index"));
    let mut journal = Journal::create_or_open(&path).unwrap();
    let first = journal.load_session(&dump("scripted_seed.json")).unwrap();
    let place = IndexPlace::Sqlite { journal: path.clone(), index };
    let mut idx = Index::open(&place).unwrap();
    assert_eq!(idx.refresh(&no_prices(), &|_| None).unwrap(), 1);
    assert_eq!(idx.refresh(&no_prices(), &|_| None).unwrap(), 0, "an ended session is not read again");
    let second = journal.load_session(&dump("scripted_max_turns.json")).unwrap();
    assert_eq!(idx.refresh(&no_prices(), &|_| None).unwrap(), 1, "only the new one");
    let listed = idx.list(&Filter::default()).unwrap();
    assert_eq!(listed.total, 2);
    let ids: Vec<&str> = listed.rows.iter().map(|r| r.id.as_str()).collect();
    assert!(ids.contains(&first.as_str()) && ids.contains(&second.as_str()));
    let row = listed.rows.iter().find(|r| r.id == second).unwrap();
    // Priced at the prices the session recorded, though the table here knows none.
    assert_eq!((row.terminal_reason.as_deref(), row.cost_usd), (Some("max_turns"), Some(0.0015)));
    // A session a writer takes up again (a resume, a new query) is read again, and listed as
    // running while it is written.
    journal.lock_session(&first).unwrap();
    let live = |id: &str| journal.writer(id).ok().flatten().map(|pid| format!("pid {pid}"));
    assert_eq!(idx.refresh(&no_prices(), &live).unwrap(), 1);
    let running = idx.list(&Filter { status: Some(reloop_serve::index::Status::Running), ..Filter::default() });
    assert_eq!(running.unwrap().rows[0].id, first);
}

struct Queue;

impl QueueStatus for Queue {
    fn statuses(&self, ids: &[String]) -> Result<HashMap<String, String>, String> {
        Ok(ids.iter().take(1).map(|id| (id.clone(), "claimed by worker-7".to_string())).collect())
    }
}

async fn get(router: &axum::Router, uri: &str) -> (StatusCode, String) {
    let request = Request::get(uri).header("host", "localhost").body(Body::empty()).unwrap();
    let response = router.clone().oneshot(request).await.unwrap();
    let status = response.status();
    (status, String::from_utf8_lossy(&response.into_body().collect().await.unwrap().to_bytes()).into_owned())
}

#[tokio::test(flavor = "multi_thread")]
async fn the_list_shows_a_queue_column_only_when_given_a_queue() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.db");
    let id = Journal::create_or_open(&path).unwrap().load_session(&dump("scripted_seed.json")).unwrap();
    let config = |queue: Option<Arc<dyn QueueStatus>>| {
        let path = path.clone();
        let open: OpenJournal = Arc::new(move || Journal::open_for_reading(&path).map(SessionJournal::Sqlite));
        Config {
            index: IndexPlace::Sqlite { journal: dir.path().join("j.db"), index: dir.path().join("index") },
            journal: open,
            prices: no_prices(),
            access: Access { token: None },
            refresh: Duration::from_secs(60),
            queue,
        }
    };
    let plain = tokio::task::block_in_place(|| reloop_serve::app(config(None))).unwrap();
    let (status, html) = get(&plain, "/").await;
    assert_eq!(status, StatusCode::OK);
    assert!(!html.contains("<th>queue</th>") && html.contains(&id));
    let queued = tokio::task::block_in_place(|| reloop_serve::app(config(Some(Arc::new(Queue))))).unwrap();
    let (_, html) = get(&queued, "/").await;
    assert!(html.contains("<th>queue</th>") && html.contains("<td class=\"queue\">claimed by worker-7</td>"), "{html}");
    let (_, json) = get(&queued, "/sessions.json").await;
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["queue"][&id], "claimed by worker-7");
    let (status, _) = get(&queued, "/?per=abc").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

/// The list's totals are the session's own: for every journal of the corpus, the index's tokens
/// and cost are what a session's page (and `show`, `why`) count from the same steps. The list
/// once said 300 input tokens where the page said 0 (a journal without correlation ids).
#[test]
fn the_list_and_a_sessions_page_count_the_same_totals_for_every_corpus_journal() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.db");
    let mut journal = Journal::create_or_open(&path).unwrap();
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/journals");
    let mut names: Vec<String> = std::fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    assert!(names.len() > 20, "{names:?}");
    let table: PriceTable =
        Arc::new(|model, usage| (model != "claude-haiku-4-5").then_some(usage.output_tokens as f64 * 1e-6));
    let place = IndexPlace::Sqlite { journal: path.clone(), index: dir.path().join("index") };
    let mut idx = Index::open(&place).unwrap();
    let mut ids = Vec::new();
    for name in &names {
        ids.push((name.clone(), journal.load_session(&dump(name)).unwrap()));
    }
    idx.refresh(&table, &|_| None).unwrap();
    let rows = idx.rows(&ids.iter().map(|(_, id)| id.clone()).collect::<Vec<_>>()).unwrap();
    for (name, id) in &ids {
        let (header, steps) = (journal.header(id).unwrap(), journal.steps(id).unwrap());
        let price =
            |model: &str, usage: &reloop_core::Usage| match header.core_config.prices.iter().find(|p| p.model == model)
            {
                Some(p) => Some(p.cost(usage)),
                None => table(model, usage),
            };
        let spend = reloop_inspect::timeline::Facts::gather(&header, &steps, &price).totals();
        let row = rows.iter().find(|r| &r.id == id).unwrap();
        let listed = (row.input_tokens as u64, row.output_tokens as u64, row.cache_read_tokens as u64);
        let own = (spend.all_input_tokens(), spend.output_tokens, spend.cache_read_input_tokens);
        assert_eq!(listed, own, "{name}: the list's tokens against the page's");
        match (row.cost_usd, spend.cost_usd()) {
            (Some(a), Some(b)) => assert!((a - b).abs() < 1e-9, "{name}: listed ${a}, the page ${b}"),
            (a, b) => assert_eq!(a, b, "{name}: the list's cost against the page's"),
        }
    }
}

/// A session answered by another model than it asked: its page prices each response at the
/// model that answered, as the list does, and tells the run's own figure (priced as asked)
/// beside it, labelled.
#[tokio::test(flavor = "multi_thread")]
async fn a_sessions_page_tells_the_runs_own_cost_when_it_differs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.db");
    let id = Journal::create_or_open(&path).unwrap().load_session(&dump("digest_v3_auto_compact.json")).unwrap();
    let open: OpenJournal = {
        let path = path.clone();
        Arc::new(move || Journal::open_for_reading(&path).map(SessionJournal::Sqlite))
    };
    let config = Config {
        index: IndexPlace::Sqlite { journal: path.clone(), index: dir.path().join("index") },
        journal: open,
        prices: Arc::new(|_, usage| Some(usage.output_tokens as f64 * 1e-6)),
        access: Access { token: None },
        refresh: Duration::from_secs(60),
        queue: None,
    };
    let router = tokio::task::block_in_place(|| reloop_serve::app(config)).unwrap();
    let (status, page) = get(&router, &format!("/s/{id}")).await;
    assert_eq!(status, StatusCode::OK);
    // Three answers by claude-sonnet-4-6 at the table's price, a summary at the session's own
    // claude-opus-5-5 price: $0.0026; all at the opus price the session asked: $0.0487.
    let (_, json) = get(&router, "/sessions.json").await;
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    let listed = json["sessions"][0]["cost_usd"].as_f64().unwrap();
    assert!(
        page.contains(&format!(
            "${listed:.4} <span id=\"reported-cost\">(reported by the run: $0.0487, priced as the model asked)</span>"
        )),
        "{page}"
    );
}
