//! An HTTP server's URL as it may be shown and journaled. Gateways take credentials in the URL:
//! as user information (`https://user:token@host/mcp`) or as a query parameter
//! (`https://host/mcp?token=abc`, `?api_key=`), so both are replaced by `***` (the same mark
//! reloop puts on a base URL's user information) wherever a URL reaches a message, since a
//! failure's text goes to stderr and into the session's header.

/// What stands for a secret part of a URL.
const REDACTED: &str = "***";
/// The shortest value scrubbed from a message wherever it appears (the whole URL always is).
const MIN_SECRET_CHARS: usize = 4;

/// `url` with its user information and every query parameter's value replaced by `***`; the
/// parameter names, the host and the path stay, so the URL can still be recognized.
pub fn redact_url(url: &str) -> String {
    let mut out = String::with_capacity(url.len());
    let (before_query, query, fragment) = split(url);
    match userinfo(before_query) {
        Some((from, to)) => {
            out.push_str(&before_query[..from]);
            out.push_str(REDACTED);
            out.push_str(&before_query[to..]);
        }
        None => out.push_str(before_query),
    }
    if let Some(query) = query {
        out.push('?');
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((name, value)) if !value.is_empty() => format!("{name}={REDACTED}"),
                _ => pair.to_string(),
            })
            .collect();
        out.push_str(&pairs.join("&"));
    }
    if let Some(fragment) = fragment {
        out.push('#');
        out.push_str(fragment);
    }
    out
}

/// The secret parts of `url` as written (user information, its password, each query value), so
/// a message that quotes them some other way (an error echoing the request) can be scrubbed.
pub(crate) fn url_secrets(url: &str) -> Vec<String> {
    let (before_query, query, _) = split(url);
    let mut secrets = Vec::new();
    if let Some((from, to)) = userinfo(before_query) {
        let info = &before_query[from..to];
        secrets.push(info.to_string());
        if let Some((_, password)) = info.split_once(':') {
            secrets.push(password.to_string());
        }
    }
    for pair in query.into_iter().flat_map(|q| q.split('&')) {
        if let Some((_, value)) = pair.split_once('=') {
            secrets.push(value.to_string());
        }
    }
    // Longest first, so a secret that contains another is replaced whole. A value of a few
    // characters (`?page=2`) is no secret, and replacing it everywhere would garble the text.
    secrets.retain(|s| s.len() >= MIN_SECRET_CHARS);
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    secrets
}

/// `text` with `url` (as written, and any secret in it) replaced by its redacted form.
pub(crate) fn scrub(text: &str, url: &str) -> String {
    let mut text = text.replace(url, &redact_url(url));
    for secret in url_secrets(url) {
        text = text.replace(&secret, REDACTED);
    }
    text
}

/// `url` cut into what comes before the query, the query and the fragment.
fn split(url: &str) -> (&str, Option<&str>, Option<&str>) {
    let (rest, fragment) = match url.split_once('#') {
        Some((rest, fragment)) => (rest, Some(fragment)),
        None => (url, None),
    };
    match rest.split_once('?') {
        Some((before, query)) => (before, Some(query), fragment),
        None => (rest, None, fragment),
    }
}

/// The byte span of `user:password` in `scheme://user:password@host/...` (no query in `url`).
fn userinfo(url: &str) -> Option<(usize, usize)> {
    let from = url.find("://")? + 3;
    let rest = &url[from..];
    let authority = &rest[..rest.find('/').unwrap_or(rest.len())];
    let at = authority.rfind('@')?;
    Some((from, from + at))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_values_and_user_information_never_show() {
        assert_eq!(redact_url("https://h/mcp?token=abc"), "https://h/mcp?token=***");
        assert_eq!(redact_url("https://h/mcp?a=1&key=s3cret&flag"), "https://h/mcp?a=***&key=***&flag");
        assert_eq!(redact_url("https://u:pw@h:8443/mcp?t=x#frag"), "https://***@h:8443/mcp?t=***#frag");
        assert_eq!(redact_url("http://127.0.0.1:9/mcp"), "http://127.0.0.1:9/mcp");
        assert_eq!(redact_url("https://h/mcp?empty="), "https://h/mcp?empty=");
        assert_eq!(redact_url("not a url"), "not a url");
    }

    #[test]
    fn a_message_loses_the_secrets_however_it_quotes_them() {
        let url = "http://me:pw@127.0.0.1:9/mcp?token=s3cr3t&page=2";
        let text = format!("error sending request for url ({url}): refused; token s3cr3t; user me:pw; page 2");
        assert_eq!(
            scrub(&text, url),
            "error sending request for url (http://***@127.0.0.1:9/mcp?token=***&page=***): refused; token ***; \
             user ***; page 2"
        );
    }
}
