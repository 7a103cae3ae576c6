//! `/diff?a=ID&b=ID`: where two sessions part ways (`reloop diff`'s comparison), the two ids in
//! the URL so a link shares it.

use std::collections::BTreeMap;
use std::fmt::Write;

use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use reloop_journal::{JournalError, StepRecord};

use crate::html::{esc, journal_failure, page as layout, url, Failure};

/// Compares `a` with `b` in `journal`: the comparison, and its text.
fn compare(
    journal: &reloop_driver::SessionJournal,
    a: &str,
    b: &str,
    table: &crate::PriceTable,
) -> Result<reloop_inspect::diff::SessionDiff, JournalError> {
    let (id_a, id_b) = (journal.resolve(a)?, journal.resolve(b)?);
    let (header_a, header_b) = (journal.header(&id_a)?, journal.header(&id_b)?);
    let pricer = |header: &reloop_journal::SessionHeader| {
        let prices = header.core_config.prices.clone();
        let table = table.clone();
        move |model: &str, usage: &reloop_core::Usage| match prices.iter().find(|p| p.model == model) {
            Some(p) => Some(p.cost(usage)),
            None => table(model, usage),
        }
    };
    let (price_a, price_b) = (pricer(&header_a), pricer(&header_b));
    let walker = |id: String| {
        move |visit: &mut dyn FnMut(&StepRecord) -> bool| journal.visit_steps(&id, &mut |s| Ok(visit(&s))).map(|_| ())
    };
    let (mut walk_a, mut walk_b) = (walker(id_a), walker(id_b));
    let mut side_a = reloop_inspect::diff::Side { header: &header_a, price: &price_a, walk: &mut walk_a };
    let mut side_b = reloop_inspect::diff::Side { header: &header_b, price: &price_b, walk: &mut walk_b };
    reloop_inspect::diff::diff(&mut side_a, &mut side_b)
}

pub(crate) async fn page(State(state): State<crate::State>, Query(query): Query<BTreeMap<String, String>>) -> Response {
    if let Some(k) = query.keys().find(|k| !["a", "b", "token"].contains(&k.as_str())) {
        return Failure::bad(format!("unknown parameter {k:?} (known: a, b)")).into_response();
    }
    let get = |k: &str| query.get(k).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
    let (a, b) = (get("a"), get("b"));
    for v in [&a, &b].into_iter().flatten() {
        if v.len() > 200 {
            return Failure::bad("a session id is at most 200 characters").into_response();
        }
    }
    let mut body = String::from("<h1>Diff</h1><form method=\"get\" action=\"/diff\" id=\"diff-form\" class=\"card\">");
    let _ = write!(
        body,
        "<label>A <input name=\"a\" id=\"f-a\" value=\"{}\" size=\"40\"></label> \
         <label>B <input name=\"b\" id=\"f-b\" value=\"{}\" size=\"40\"></label> <button type=\"submit\" id=\"compare\">compare</button></form>",
        esc(a.as_deref().unwrap_or_default()),
        esc(b.as_deref().unwrap_or_default())
    );
    if let (Some(a), Some(b)) = (a, b) {
        let state = state.clone();
        let compared = tokio::task::spawn_blocking(move || {
            let table = state.config.prices.clone();
            let mut found = None;
            let ran = state.journals.run(|j| {
                found = Some(compare(j, &a, &b, &table));
                Ok::<_, String>(())
            });
            ran.map_err(Failure::internal)?;
            found.unwrap_or_else(|| Err(JournalError::Empty)).map_err(|e| journal_failure(e.to_string()))
        })
        .await;
        let d = match compared {
            Ok(Ok(d)) => d,
            Ok(Err(e)) => return e.into_response(),
            Err(e) => return Failure::internal(e.to_string()).into_response(),
        };
        let verdict = if d.first_difference.is_some() { "they differ" } else { "the same, step for step" };
        let _ = write!(
            body,
            "<section class=\"card\"><h2 id=\"verdict\">{verdict}</h2><p><a href=\"/s/{ua}\">A: {a}</a> · <a href=\"/s/{ub}\">B: {b}</a></p>\
             <pre id=\"diff\">{text}</pre></section>",
            ua = url(&d.a),
            ub = url(&d.b),
            a = esc(&d.a),
            b = esc(&d.b),
            text = esc(&reloop_inspect::diff::text(&d)),
        );
    }
    layout("diff", &body)
}
