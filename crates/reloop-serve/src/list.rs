//! `/`: the session list, its filters in the URL (a link shares them), a page at a time; and
//! `/sessions.json`, the same rows for tools.

use std::collections::BTreeMap;
use std::fmt::Write;

use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use axum::Json;

use crate::html::{esc, num, page as layout, short, time, url, usd, Failure};
use crate::index::filter::KINDS;
use crate::index::{Filter, Listing};

/// The query without the token (the access check's), parsed into a filter.
fn filter_of(query: &BTreeMap<String, String>) -> Result<(Filter, BTreeMap<String, String>), Failure> {
    let mut query = query.clone();
    query.remove("token");
    let filter = Filter::parse(&query).map_err(Failure::bad)?;
    Ok((filter, query))
}

/// The page of sessions `filter` asks for, with the queue's statuses when there is a queue,
/// and the filter form's choices.
struct Found {
    listing: Listing,
    queue: Option<std::collections::HashMap<String, String>>,
    queue_summary: Option<String>,
    models: Vec<String>,
    reasons: Vec<String>,
}

async fn find(state: &crate::State, filter: Filter) -> Result<Found, Failure> {
    let state = state.clone();
    tokio::task::spawn_blocking(move || {
        let (listing, (models, reasons)) = state
            .index
            .run(|i| Ok::<_, crate::index::IndexError>((i.list(&filter)?, i.choices()?)))
            .map_err(Failure::internal)?;
        // Only this page's sessions' statuses, and the queue's counts: never the queue whole.
        let (queue, queue_summary) = match &state.config.queue {
            Some(q) => {
                let ids: Vec<String> = listing.rows.iter().map(|r| r.id.clone()).collect();
                (Some(q.statuses(&ids).map_err(Failure::internal)?), q.summary().map_err(Failure::internal)?)
            }
            None => (None, None),
        };
        Ok(Found { listing, queue, queue_summary, models, reasons })
    })
    .await
    .map_err(|e| Failure::internal(e.to_string()))?
}

/// `/sessions.json`: the rows of the page, the total, and the queue's statuses if any.
pub(crate) async fn json(State(state): State<crate::State>, Query(query): Query<BTreeMap<String, String>>) -> Response {
    let (filter, _) = match filter_of(&query) {
        Ok(f) => f,
        Err(e) => return e.into_response(),
    };
    match find(&state, filter.clone()).await {
        Ok(found) => Json(serde_json::json!({
            "total": found.listing.total, "more": found.listing.more, "page": filter.page, "per": filter.per,
            "sessions": found.listing.rows, "queue": found.queue,
            "queue_summary": found.queue_summary,
        }))
        .into_response(),
        Err(e) => e.into_response(),
    }
}

/// The query string of `query` with `key` set to `value`.
pub(crate) fn with(query: &BTreeMap<String, String>, key: &str, value: &str) -> String {
    let mut q = query.clone();
    q.insert(key.to_string(), value.to_string());
    let pairs: Vec<String> =
        q.iter().filter(|(_, v)| !v.is_empty()).map(|(k, v)| format!("{}={}", url(k), url(v))).collect();
    format!("?{}", pairs.join("&"))
}

fn select(name: &str, label: &str, current: Option<&String>, options: &[(String, String)]) -> String {
    let mut s = format!("<label>{label} <select name=\"{name}\" id=\"f-{name}\"><option value=\"\">any</option>");
    for (value, words) in options {
        let sel = if current == Some(value) { " selected" } else { "" };
        let _ = write!(s, "<option value=\"{}\"{sel}>{}</option>", esc(value), esc(words));
    }
    s + "</select></label>"
}

fn input(name: &str, label: &str, query: &BTreeMap<String, String>, kind: &str, size: u32) -> String {
    let value = query.get(name).map(|v| esc(v)).unwrap_or_default();
    format!("<label>{label} <input type=\"{kind}\" name=\"{name}\" id=\"f-{name}\" value=\"{value}\" size=\"{size}\"></label>")
}

/// `/`: the list page.
pub(crate) async fn page(State(state): State<crate::State>, Query(query): Query<BTreeMap<String, String>>) -> Response {
    let (filter, query) = match filter_of(&query) {
        Ok(f) => f,
        Err(e) => return e.into_response(),
    };
    let found = match find(&state, filter.clone()).await {
        Ok(found) => found,
        Err(e) => return e.into_response(),
    };
    let mut body = String::from("<h1>Sessions</h1><form method=\"get\" action=\"/\" id=\"filters\" class=\"card\">");
    body += &input("q", "search", &query, "search", 28);
    body += &input("from", "from", &query, "text", 10);
    body += &input("to", "to", &query, "text", 10);
    let mut states: Vec<(String, String)> =
        ["running", "finished", "unfinished"].iter().map(|s| (s.to_string(), s.to_string())).collect();
    states.extend(found.reasons.iter().map(|r| (r.clone(), format!("ended: {r}"))));
    body += &select("status", "status", query.get("status"), &states);
    let models: Vec<(String, String)> = found.models.iter().map(|m| (m.clone(), m.clone())).collect();
    body += &select("model", "model", query.get("model"), &models);
    let kinds: Vec<(String, String)> = KINDS.iter().map(|k| (k.to_string(), k.to_string())).collect();
    body += &select("source", "source", query.get("source"), &kinds);
    body += &input("cost_min", "cost $", &query, "text", 5);
    body += &input("cost_max", "to $", &query, "text", 5);
    body += &input("tokens_min", "tokens", &query, "text", 7);
    body += &input("tokens_max", "to", &query, "text", 7);
    body += &input("parent", "parent", &query, "text", 10);
    body += "<button type=\"submit\" id=\"apply\">filter</button> <a href=\"/\">clear</a></form>";
    let Listing { rows, total, more } = &found.listing;
    let first = filter.offset() + 1;
    let _ = write!(
        body,
        "<p id=\"count\" data-total=\"{total}\"{}>{}{} session{} match{}",
        if *more { " data-more=\"true\"" } else { "" },
        num(*total),
        if *more { "+" } else { "" },
        if *total == 1 && !*more { "" } else { "s" },
        if rows.is_empty() {
            "".to_string()
        } else {
            format!("; {}–{} shown", num(first), num(first + rows.len() as i64 - 1))
        }
    );
    body += "</p>";
    if let Some(summary) = &found.queue_summary {
        let _ = write!(body, "<p id=\"queue-summary\">queue: {}</p>", esc(summary));
    }
    body += "<table id=\"sessions\"><thead><tr><th>session</th><th>created (UTC)</th><th>state</th>";
    if found.queue.is_some() {
        body += "<th>queue</th>";
    }
    body += "<th>source</th><th>model</th><th>steps</th><th>tokens in / out</th><th>cost</th><th>first prompt</th></tr></thead><tbody>";
    for r in rows {
        let state_class = if r.writer.is_some() {
            "running"
        } else if r.terminal_reason.is_some() {
            "ended"
        } else {
            "open"
        };
        let _ = write!(
            body,
            "<tr data-id=\"{id}\" class=\"{state_class}\"><td><a class=\"mono\" href=\"/s/{uid}\">{short}</a></td><td>{created}</td><td class=\"state\">{status}</td>",
            id = esc(&r.id),
            uid = url(&r.id),
            short = esc(short(&r.id)),
            created = time(r.created_at_ms).trim_end_matches(" UTC"),
            status = esc(&r.status()),
        );
        if let Some(q) = &found.queue {
            let _ = write!(body, "<td class=\"queue\">{}</td>", esc(q.get(&r.id).map_or("", String::as_str)));
        }
        let source = match &r.parent_id {
            Some(p) => format!("{} of <a class=\"mono\" href=\"/s/{}\">{}</a>", esc(&r.kind), url(p), esc(short(p))),
            None => esc(&r.kind),
        };
        let model = match (&r.model, &r.requested_model) {
            (Some(m), Some(asked)) if m != asked && !asked.is_empty() => format!("{} (asked {})", esc(m), esc(asked)),
            (Some(m), _) => esc(m),
            (None, Some(asked)) => esc(asked),
            (None, None) => "–".to_string(),
        };
        let snippet =
            r.snippet.as_ref().map(|s| format!("<div class=\"snippet\">{}</div>", mark(s))).unwrap_or_default();
        let _ = write!(
            body,
            "<td>{source}</td><td>{model}</td><td class=\"num\">{}</td><td class=\"num\">{} / {}</td><td class=\"num\">{}</td><td class=\"prompt\">{}{snippet}</td></tr>",
            num(r.steps),
            num(r.input_tokens),
            num(r.output_tokens),
            usd(r.cost_usd),
            esc(&r.first_prompt),
        );
    }
    body += "</tbody></table><p class=\"pages\">";
    if filter.page > 1 {
        let _ = write!(
            body,
            "<a id=\"prev\" href=\"/{}\">← newer</a> ",
            esc(&with(&query, "page", &(filter.page - 1).to_string()))
        );
    }
    if (*more && rows.len() as i64 == filter.per) || filter.offset() + (rows.len() as i64) < *total {
        let _ = write!(
            body,
            "<a id=\"next\" href=\"/{}\">older →</a>",
            esc(&with(&query, "page", &(filter.page + 1).to_string()))
        );
    }
    body += "</p>";
    layout("sessions", &body)
}

/// A snippet's «marks» as highlighted text, the rest escaped.
fn mark(snippet: &str) -> String {
    esc(snippet).replace('«', "<mark>").replace('»', "</mark>")
}
