//! The pages' common parts: escaping, the layout every page shares (its CSS and JS are served
//! from the binary, nothing from elsewhere), numbers and times as people read them, errors.

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};

/// What a handler failed with: the status and the words shown.
#[derive(Debug)]
pub(crate) struct Failure(pub StatusCode, pub String);

impl Failure {
    pub(crate) fn bad(words: impl Into<String>) -> Failure {
        Failure(StatusCode::BAD_REQUEST, words.into())
    }

    pub(crate) fn internal(words: impl Into<String>) -> Failure {
        Failure(StatusCode::INTERNAL_SERVER_ERROR, words.into())
    }
}

impl IntoResponse for Failure {
    fn into_response(self) -> Response {
        error(self.0, &self.1)
    }
}

/// A journal's error as a failure: a session that is not there is a 404.
pub(crate) fn journal_failure(words: String) -> Failure {
    if words.contains("no session") || words.contains("No session") || words.contains("matches no session") {
        Failure(StatusCode::NOT_FOUND, words)
    } else if words.contains("ambiguous") || words.contains("sessions start with") {
        Failure::bad(words)
    } else {
        Failure::internal(words)
    }
}

/// `text` escaped for HTML text and attribute values.
pub(crate) fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `text` escaped for a URL's query value.
pub(crate) fn url(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => out.push(b as char),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// A whole page: the layout around `body`.
pub(crate) fn page(title: &str, body: &str) -> Response {
    let html = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title} · reloop</title><link rel=\"stylesheet\" href=\"/assets/app.css\">\
         <script src=\"/assets/app.js\" defer></script></head><body>\
         <nav><a href=\"/\" class=\"brand\">reloop</a><a href=\"/\">sessions</a><a href=\"/diff\">diff</a></nav>\
         <main>{body}</main></body></html>",
        title = esc(title)
    );
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; style-src 'self'; script-src 'self'; connect-src 'self'; img-src data:; \
                 frame-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
            ),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::REFERRER_POLICY, "no-referrer"),
        ],
        html,
    )
        .into_response()
}

/// An error page with its status.
pub(crate) fn error(status: StatusCode, words: &str) -> Response {
    let mut response = page(
        status.canonical_reason().unwrap_or("error"),
        &format!("<h1>{status}</h1><p class=\"err\" id=\"error\">{}</p>", esc(words)),
    );
    *response.status_mut() = status;
    response
}

/// `12,345`.
pub(crate) fn num(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 {
        out.insert(0, '-');
    }
    out
}

/// `$0.0123`, or `cost unknown` for a model with no price.
pub(crate) fn usd(cost: Option<f64>) -> String {
    cost.map_or_else(|| "cost unknown".to_string(), |c| format!("${c:.4}"))
}

/// `2026-01-02 03:04:05 UTC`: one clock for everyone who opens a shared link.
pub(crate) fn time(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms)
        .map(|t| t.strftime("%Y-%m-%d %H:%M:%S UTC").to_string())
        .unwrap_or_else(|_| "?".to_string())
}

/// The first eight characters of an id.
pub(crate) fn short(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_numbers_grouped() {
        assert_eq!(esc("<a href='x'>&\"</a>"), "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;");
        assert_eq!(url("a b/é"), "a%20b%2F%C3%A9");
        assert_eq!((num(0), num(1234567), num(-1000)), ("0".into(), "1,234,567".into(), "-1,000".into()));
        assert_eq!(usd(None), "cost unknown");
        assert_eq!(time(0), "1970-01-01 00:00:00 UTC");
    }
}
