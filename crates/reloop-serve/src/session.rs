//! `/s/ID`: a session's page. Its facts (models asked and answering, times, cache hit rate,
//! system prompt, the model's text and final answer, `why`, the tree around it) are rendered
//! here; its timeline is `reloop view`'s page ([`crate::page`]), served at `/s/ID/timeline` and
//! shown in a frame. A running session's page follows it (`/s/ID/events`), re-reading its facts
//! (`/s/ID/facts`) and its timeline as steps are journaled.

use std::collections::BTreeMap;
use std::fmt::Write;

use axum::extract::{Path, Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use reloop_core::{ContentBlock, Event, Usage};
use reloop_driver::SessionJournal;
use reloop_inspect::explain::{why_step, Grouping, WhyFilter};
use reloop_inspect::timeline::FactsGatherer;
use reloop_journal::SessionHeader;

use crate::html::{esc, journal_failure, num, page as layout, short, time, url, usd, Failure};
use crate::index::{Index, ListRow, PriceTable};

/// The most of the model's text a page shows, and the most `why` lines: a huge session's page
/// stays a page (its timeline is windowed).
const MAX_TEXTS: usize = 200;
const MAX_TEXT_BYTES: usize = 256 * 1024;
const MAX_WHY: usize = 1000;
/// The timeline's default window, and its largest.
const TIMELINE_STEPS: usize = 2000;
const MAX_TIMELINE_STEPS: usize = 20_000;

/// The price of a response: the session's own, else the table's.
fn pricer<'a>(header: &'a SessionHeader, table: &'a PriceTable) -> impl Fn(&str, &Usage) -> Option<f64> + 'a {
    move |model, usage| match header.core_config.prices.iter().find(|p| p.model == model) {
        Some(p) => Some(p.cost(usage)),
        None => table(model, usage),
    }
}

/// What the page shows of a session, read in two walks of its steps.
pub(crate) struct Summary {
    pub id: String,
    pub steps: usize,
    /// Ended, and nobody writes it: nothing more will come.
    pub ended: bool,
    html: String,
}

/// Reads the session `selector` and renders its facts.
pub(crate) fn summary(
    journal: &SessionJournal,
    index: &mut Index,
    selector: &str,
    table: &PriceTable,
) -> Result<Summary, Failure> {
    let failed = |e: reloop_journal::JournalError| journal_failure(e.to_string());
    let id = journal.resolve(selector).map_err(failed)?;
    let header = journal.header(&id).map_err(failed)?;
    let price = pricer(&header, table);
    let mut gatherer = FactsGatherer::new(&header, &price).without_payloads();
    let mut finder = reloop_inspect::RequestFinder::new(&header, reloop_inspect::RequestAt::Turn(1));
    let (mut system, mut first_at, mut last_at, mut terminal) = (None, None, None, None);
    let (mut texts, mut text_bytes, mut answer, mut pending) = (Vec::new(), 0usize, None, Vec::new());
    let mut answering = std::collections::BTreeSet::new();
    let steps = journal
        .visit_steps(&id, &mut |s| {
            gatherer.step(&s);
            first_at.get_or_insert(s.at_ms);
            last_at = Some(s.at_ms);
            if system.is_none() {
                if let Some(found) = finder.step(&s) {
                    system = Some(found.body.get("system").cloned().unwrap_or_default());
                }
            }
            match &s.event {
                Event::ModelBlock { block: ContentBlock::Text(t), .. } => {
                    pending.push(t.text.clone());
                    if texts.len() < MAX_TEXTS && text_bytes < MAX_TEXT_BYTES {
                        text_bytes += t.text.len();
                        texts.push((s.seq, t.text.clone()));
                    }
                }
                Event::ModelDone { model, .. } => {
                    if let Some(m) = model {
                        answering.insert(m.clone());
                    }
                    // The final answer is the text of the last response that had any.
                    if !pending.is_empty() {
                        answer = Some(pending.join("\n"));
                    }
                    pending.clear();
                }
                Event::ModelFailed { .. } => pending.clear(),
                _ => {}
            }
            if let Some(r) = s.reason.as_ref().filter(|r| r.is_terminal()) {
                terminal = Some(r.name().to_string());
            }
            Ok(true)
        })
        .map_err(failed)?;
    let facts = gatherer.finish();
    let writer = journal.live_writer(&id).map_err(failed)?;
    let spend = facts.totals();
    let requested = &header.core_config.model;
    let mut h = String::new();
    let _ = write!(h, "<h1 id=\"title\">session <span class=\"mono\">{}</span></h1>", esc(&id));
    let state = match (&writer, &terminal) {
        (Some(w), _) => format!("running ({w})"),
        (None, Some(t)) => t.clone(),
        (None, None) => "unfinished".to_string(),
    };
    h += "<dl class=\"facts card\" id=\"facts-list\">";
    let mut row = |k: &str, v: String| {
        let _ = write!(h, "<dt>{k}</dt><dd data-field=\"{}\">{v}</dd>", k.replace(' ', "-"));
    };
    row("state", format!("<b id=\"state\">{}</b>", esc(&state)));
    row("source", esc(reloop_inspect::timeline::source(&header)));
    row("model asked", format!("<span id=\"requested-model\">{}</span>", esc(requested)));
    let answered: Vec<&str> = answering.iter().map(String::as_str).collect();
    row(
        "model answering",
        format!(
            "<span id=\"answering-model\">{}</span>",
            esc(&if answered.is_empty() { "–".into() } else { answered.join(", ") })
        ),
    );
    row("created", time(header.created_at_ms as i64));
    row("first step", first_at.map_or("–".into(), |t| time(t as i64)));
    row("last step", last_at.map_or("–".into(), |t| time(t as i64)));
    row("steps", num(steps as i64));
    row("tokens", esc(&spend.tokens_words()));
    row(
        "cache hit rate",
        format!(
            "<span id=\"cache-hit\">{}</span>",
            spend.cache_hit_rate().map_or("–".into(), reloop_inspect::spend::percent)
        ),
    );
    let reported = facts.reported_cost_words(spend.cost_usd());
    let reported = reported.map(|w| format!(" <span id=\"reported-cost\">({})</span>", esc(&w))).unwrap_or_default();
    row("cost", esc(&usd(spend.cost_usd())) + &reported);
    row("rules", esc(&reloop_inspect::timeline::rules_words(&header)));
    if let Some(cwd) = header.run_config.get("cwd").and_then(|c| c.as_str()) {
        row("cwd", format!("<code>{}</code>", esc(cwd)));
    }
    h += "</dl>";
    h += &tree(index, &id, &header)?;
    let system = match system {
        Some(serde_json::Value::String(s)) => s,
        Some(serde_json::Value::Null) | None => String::new(),
        Some(other) => other
            .as_array()
            .map(|blocks| {
                blocks.iter().filter_map(|b| b.get("text").and_then(|t| t.as_str())).collect::<Vec<_>>().join("\n\n")
            })
            .unwrap_or_else(|| other.to_string()),
    };
    let _ = write!(
        h,
        "<section class=\"card\"><h2>Final answer</h2><pre id=\"final-answer\">{}</pre></section>",
        esc(answer.as_deref().unwrap_or("(no answer yet)"))
    );
    h += "<section class=\"card\"><h2>The model's text</h2><div id=\"model-text\">";
    for (seq, text) in &texts {
        let _ = write!(
            h,
            "<div class=\"said\"><a class=\"seq mono\" href=\"?step={seq}\">#{seq}</a><pre>{}</pre></div>",
            esc(text)
        );
    }
    if texts.is_empty() {
        h += "<p class=\"muted\">(no text yet)</p>";
    }
    h += "</div></section>";
    let _ = write!(
        h,
        "<section class=\"card\"><details><summary>System prompt ({} characters)</summary><pre id=\"system-prompt\">{}</pre></details></section>",
        num(system.chars().count() as i64),
        esc(&system)
    );
    // `why`, the decisions in words, walked a second time over the facts.
    let filter = WhyFilter::default();
    let (mut grouping, mut lines, mut i) = (Grouping::default(), 0usize, 0usize);
    let mut why = String::new();
    journal
        .visit_steps(&id, &mut |s| {
            for line in why_step(i, &s, &facts, &filter) {
                why += &grouping.text(&line, &facts);
                lines += 1;
            }
            i += 1;
            Ok(i < steps && lines < MAX_WHY)
        })
        .map_err(failed)?;
    let _ = write!(
        h,
        "<section class=\"card\"><h2>Why</h2><pre id=\"why\">{}{}</pre></section>",
        esc(&why),
        if lines >= MAX_WHY { "\n(first lines only: reloop why shows all)" } else { "" }
    );
    Ok(Summary { id, steps, ended: writer.is_none() && terminal.is_some(), html: h })
}

/// The tree around `id`: its ancestors, and from the root every fork, rerun and subagent.
fn tree(index: &mut Index, id: &str, header: &SessionHeader) -> Result<String, Failure> {
    let failed = |e: crate::index::IndexError| Failure::internal(e.to_string());
    // Up to the root, bounded: a cycle of hand-made ids ends.
    let mut root = id.to_string();
    let agent_parent = header.run_config.get("agent").and_then(|a| a.get("parent")).and_then(|p| p.as_str());
    let mut up = header.parent.as_ref().map(|(p, _)| p.clone()).or(agent_parent.map(str::to_string));
    for _ in 0..32 {
        let Some(parent) = up.take() else { break };
        root = parent;
        up = index.rows(std::slice::from_ref(&root)).map_err(failed)?.into_iter().next().and_then(|r| r.parent_id);
    }
    let mut out = String::from("<section class=\"card\"><h2>Tree</h2><ul class=\"tree\" id=\"tree\">");
    let mut budget = 200;
    fn node(
        index: &mut Index,
        id: &str,
        row: Option<&ListRow>,
        here: &str,
        out: &mut String,
        budget: &mut i32,
    ) -> Result<(), crate::index::IndexError> {
        *budget -= 1;
        let me = if id == here { " class=\"here\"" } else { "" };
        let words = row.map_or(String::new(), |r| {
            format!(
                " · {} · {} · {}",
                r.kind,
                r.status(),
                &r.first_prompt[..crate::index::extract::floor_char(&r.first_prompt, 60)]
            )
            .chars()
            .take(120)
            .collect()
        });
        let _ = write!(out, "<li{me}><a class=\"mono\" href=\"/s/{}\">{}</a>{}", url(id), esc(short(id)), esc(&words));
        let children = index.children(id, 50)?;
        if !children.is_empty() && *budget > 0 {
            out.push_str("<ul>");
            for c in children.iter().rev() {
                if *budget <= 0 {
                    break;
                }
                node(index, &c.id, Some(c), here, out, budget)?;
            }
            out.push_str("</ul>");
        }
        out.push_str("</li>");
        Ok(())
    }
    let root_row = index.rows(std::slice::from_ref(&root)).map_err(failed)?.into_iter().next();
    node(index, &root, root_row.as_ref(), id, &mut out, &mut budget).map_err(failed)?;
    out += "</ul></section>";
    Ok(out)
}

async fn read(state: &crate::State, id: String) -> Result<Summary, Failure> {
    let state = state.clone();
    tokio::task::spawn_blocking(move || {
        let table = state.config.prices.clone();
        let mut found = None;
        let read = state.journals.run(|journal| {
            state.index.run(|index| {
                found = Some(summary(journal, index, &id, &table));
                Ok::<_, String>(())
            })
        });
        read.map_err(Failure::internal)?;
        found.unwrap_or_else(|| Err(Failure::internal("nothing read")))
    })
    .await
    .map_err(|e| Failure::internal(e.to_string()))?
}

/// A number of the query, checked.
fn number(query: &BTreeMap<String, String>, key: &str, most: usize) -> Result<Option<usize>, Failure> {
    match query.get(key).map(|v| v.trim()).filter(|v| !v.is_empty()) {
        None => Ok(None),
        Some(v) => v
            .parse::<usize>()
            .ok()
            .filter(|n| *n <= most)
            .map(Some)
            .ok_or_else(|| Failure::bad(format!("{key}: {v:?} is not a whole number from 0 to {most}"))),
    }
}

/// Refuses any key but `known` (and the token's).
fn only(query: &BTreeMap<String, String>, known: &[&str]) -> Result<(), Failure> {
    match query.keys().find(|k| *k != "token" && !known.contains(&k.as_str())) {
        Some(k) => Err(Failure::bad(format!("unknown parameter {k:?} (known: {})", known.join(", ")))),
        None => Ok(()),
    }
}

/// `/s/ID?step=N&start=S&limit=L`: the page.
pub(crate) async fn page(
    State(state): State<crate::State>,
    Path(id): Path<String>,
    Query(query): Query<BTreeMap<String, String>>,
) -> Response {
    let checked = (|| {
        only(&query, &["step", "start", "limit"])?;
        Ok::<_, Failure>((
            number(&query, "step", u32::MAX as usize)?,
            number(&query, "start", usize::MAX)?,
            number(&query, "limit", MAX_TIMELINE_STEPS)?,
        ))
    })();
    let (step, start, limit) = match checked {
        Ok(v) => v,
        Err(e) => return e.into_response(),
    };
    let s = match read(&state, id).await {
        Ok(s) => s,
        Err(e) => return e.into_response(),
    };
    // A step asked for shows in the window that holds it.
    let limit = limit.unwrap_or(TIMELINE_STEPS).max(1);
    let start = start.unwrap_or_else(|| step.map_or(0, |n| n.saturating_sub(1) / limit * limit));
    let hash = step.map(|n| format!("#step-{n}")).unwrap_or_default();
    let mut body = format!(
        "<div id=\"session\" data-id=\"{id}\" data-steps=\"{steps}\" data-live=\"{live}\">\
         <p class=\"live\" id=\"live\">{words}</p><div id=\"facts\">{facts}</div>",
        id = esc(&s.id),
        steps = s.steps,
        live = if s.ended { "ended" } else { "on" },
        words = if s.ended { "" } else { "following: new steps show as they are journaled" },
        facts = s.html,
    );
    let _ = write!(
        body,
        "<section class=\"card\"><h2>Timeline</h2><p><a href=\"/diff?a={uid}\">diff with another session…</a> · \
         <a href=\"/s/{uid}/timeline?start={start}&amp;limit={limit}\" target=\"_blank\">timeline alone</a></p>\
         <iframe id=\"timeline\" title=\"timeline\" src=\"/s/{uid}/timeline?start={start}&amp;limit={limit}{hash}\"></iframe></section></div>",
        uid = url(&s.id),
    );
    layout(&format!("session {}", short(&s.id)), &body)
}

/// `/s/ID/facts`: the facts alone, for a live page to swap in.
pub(crate) async fn facts(State(state): State<crate::State>, Path(id): Path<String>) -> Response {
    match read(&state, id).await {
        Ok(s) => (
            [(header::CONTENT_TYPE, "text/html; charset=utf-8"), (header::CACHE_CONTROL, "no-store")],
            [(axum::http::HeaderName::from_static("x-reloop-steps"), s.steps.to_string())],
            s.html,
        )
            .into_response(),
        Err(e) => e.into_response(),
    }
}

/// `/s/ID/timeline?start=S&limit=L`: `reloop view`'s page of a window of the steps.
pub(crate) async fn timeline(
    State(state): State<crate::State>,
    Path(id): Path<String>,
    Query(query): Query<BTreeMap<String, String>>,
) -> Response {
    let checked = (|| {
        only(&query, &["start", "limit"])?;
        Ok::<_, Failure>((number(&query, "start", usize::MAX)?, number(&query, "limit", MAX_TIMELINE_STEPS)?))
    })();
    let (start, limit) = match checked {
        Ok(v) => v,
        Err(e) => return e.into_response(),
    };
    let window =
        crate::page::Window { start: start.unwrap_or(0), limit: limit.unwrap_or(TIMELINE_STEPS).max(1), served: true };
    let state = state.clone();
    let written = tokio::task::spawn_blocking(move || {
        let table = state.config.prices.clone();
        let mut html = Vec::new();
        let mut failure = None;
        let ran = state.journals.run(|journal| {
            let failed = |e: reloop_journal::JournalError| journal_failure(e.to_string());
            let run = (|| {
                let id = journal.resolve(&id).map_err(failed)?;
                let header = journal.header(&id).map_err(failed)?;
                let price = pricer(&header, &table);
                crate::page::write_page(&mut html, journal, &id, &price, window)
                    .map_err(|e| journal_failure(e.to_string()))
            })();
            failure = run.err();
            Ok::<_, String>(())
        });
        match (ran, failure) {
            (Err(e), _) => Err(Failure::internal(e)),
            (_, Some(f)) => Err(f),
            _ => Ok(html),
        }
    })
    .await;
    match written {
        Ok(Ok(html)) => (
            [
                (header::CONTENT_TYPE, "text/html; charset=utf-8"),
                (header::CACHE_CONTROL, "no-store"),
                (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            ],
            [(
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; frame-ancestors 'self'",
            )],
            html,
        )
            .into_response(),
        Ok(Err(e)) => e.into_response(),
        Err(e) => Failure::internal(e.to_string()).into_response(),
    }
}
