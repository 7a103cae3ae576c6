//! `/s/ID/events`: a session's steps as they are journaled, as server-sent events: `step`
//! (data: the last step's number) whenever it grows, `end` once the session has ended and
//! nobody writes it, after which the stream closes. The journal is polled at the server's
//! refresh interval, by the one connection the stream takes from the pool for each look.

use std::time::Duration;

use axum::extract::{Path, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::stream;

use crate::html::{journal_failure, Failure};

/// What one look at the journal found: the last step, and whether the session is over.
async fn look(state: &crate::State, id: &str) -> Result<(i64, bool), Failure> {
    let (state, id) = (state.clone(), id.to_string());
    tokio::task::spawn_blocking(move || {
        let found = state.index.run(|index| index.journal_state(&id)).map_err(Failure::internal)?;
        let Some((last, terminal)) = found else {
            return Err(Failure(axum::http::StatusCode::NOT_FOUND, format!("no session {id}")));
        };
        let writer = state.journals.run(|j| j.live_writer(&id)).map_err(Failure::internal)?;
        Ok((last, terminal.is_some() && writer.is_none()))
    })
    .await
    .map_err(|e| Failure::internal(e.to_string()))?
}

/// The stream's state between looks.
struct Follow {
    state: crate::State,
    id: String,
    sent: Option<i64>,
    over: bool,
    every: Duration,
}

pub(crate) async fn events(State(state): State<crate::State>, Path(selector): Path<String>) -> Response {
    let id = {
        let (state, selector) = (state.clone(), selector.clone());
        let resolved = tokio::task::spawn_blocking(move || state.journals.run(|j| j.resolve(&selector))).await;
        match resolved {
            Ok(Ok(id)) => id,
            Ok(Err(e)) => return journal_failure(e).into_response(),
            Err(e) => return Failure::internal(e.to_string()).into_response(),
        }
    };
    let every = state.config.refresh;
    let follow = Follow { state, id, sent: None, over: false, every };
    let events = stream::unfold(follow, |mut f| async move {
        if f.over {
            return None;
        }
        loop {
            if f.sent.is_some() {
                tokio::time::sleep(f.every).await;
            }
            let (last, over) = match look(&f.state, &f.id).await {
                Ok(found) => found,
                // A session gone, or a journal that cannot be read: the stream says so and ends.
                Err(e) => {
                    f.over = true;
                    return Some((Ok::<_, std::convert::Infallible>(Event::default().event("error").data(e.1)), f));
                }
            };
            if over {
                f.over = true;
                return Some((Ok(Event::default().event("end").data(last.to_string())), f));
            }
            if f.sent != Some(last) {
                f.sent = Some(last);
                return Some((Ok(Event::default().event("step").data(last.to_string())), f));
            }
        }
    });
    Sse::new(events).keep_alive(KeepAlive::default()).into_response()
}
