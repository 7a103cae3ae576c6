//! Who may ask. On loopback (the default) anyone on this machine may, but only through a
//! loopback host name: a page of another site that points a name of its own at 127.0.0.1 (DNS
//! rebinding) is refused. Bound to anything else, the server must be told so
//! (`--allow-remote`) and given a token, and then every request must carry it: an
//! `Authorization: Bearer` header, the cookie a first `?token=` visit sets, or `?token=` itself.

use std::net::SocketAddr;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The shortest token accepted: long enough that guessing it over HTTP is hopeless.
pub const MIN_TOKEN: usize = 16;

/// The cookie a browser carries the token in after a `?token=` visit.
const COOKIE: &str = "reloop_token";

/// What every request is checked against.
#[derive(Clone, Debug)]
pub struct Access {
    /// The token every request must carry; `None`: none needed (loopback only).
    pub token: Option<String>,
}

/// The access for a server bound to `addr`: loopback needs nothing (a token given is checked
/// all the same); anything else needs `allow_remote` and a token of at least [`MIN_TOKEN`]
/// characters. `Err` says what is missing.
pub fn access_for(addr: SocketAddr, allow_remote: bool, token: Option<String>) -> Result<Access, String> {
    if let Some(t) = &token {
        if t.chars().count() < MIN_TOKEN || t.chars().any(|c| c.is_control() || c.is_whitespace()) {
            return Err(format!(
                "the token must be at least {MIN_TOKEN} characters, with no space or control character"
            ));
        }
    }
    if addr.ip().is_loopback() {
        return Ok(Access { token });
    }
    if !allow_remote {
        return Err(format!(
            "{addr} is not a loopback address: anyone who reaches it could read every session; \
             pass --allow-remote and a --token (or RELOOP_SERVE_TOKEN) to serve it"
        ));
    }
    match token {
        Some(token) => Ok(Access { token: Some(token) }),
        None => Err(format!("serving {addr} beyond this machine needs a --token (or RELOOP_SERVE_TOKEN)")),
    }
}

/// Equal, in time that does not depend on where they differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The token a request carries, and whether it came in the URL (then a cookie keeps it).
fn carried(headers: &HeaderMap, query: Option<&str>) -> (Option<String>, bool) {
    if let Some(bearer) =
        headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer "))
    {
        return (Some(bearer.trim().to_string()), false);
    }
    let from_query =
        query.and_then(|q| q.split('&').find_map(|pair| pair.strip_prefix("token=")).map(|t| t.replace('+', " ")));
    if let Some(t) = from_query {
        return (Some(percent_decode(&t)), true);
    }
    let cookie = headers.get_all(header::COOKIE).iter().filter_map(|v| v.to_str().ok()).find_map(|v| {
        v.split(';').find_map(|c| c.trim().strip_prefix(COOKIE).and_then(|c| c.strip_prefix('=')).map(str::to_string))
    });
    (cookie, false)
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1).and_then(|b| hex(*b)), bytes.get(i + 2).and_then(|b| hex(*b))) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Whether `host` (a Host header) names this machine's loopback.
fn loopback_host(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    matches!(name.to_ascii_lowercase().as_str(), "localhost" | "127.0.0.1" | "::1")
        || name.parse::<std::net::Ipv4Addr>().is_ok_and(|ip| ip.is_loopback())
}

/// The check every request goes through.
pub async fn check(State(access): State<Access>, request: Request, next: Next) -> Response {
    let Some(token) = &access.token else {
        let host = request.headers().get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or_default();
        if !loopback_host(host) {
            return crate::html::error(StatusCode::FORBIDDEN, "this server answers only to localhost or 127.0.0.1");
        }
        return next.run(request).await;
    };
    let (given, in_url) = carried(request.headers(), request.uri().query());
    if !given.is_some_and(|g| same(g.as_bytes(), token.as_bytes())) {
        let mut refused =
            crate::html::error(StatusCode::UNAUTHORIZED, "this server needs its token: open it with ?token=...");
        refused.headers_mut().insert(header::WWW_AUTHENTICATE, header::HeaderValue::from_static("Bearer"));
        return refused;
    }
    let mut response = next.run(request).await;
    if in_url {
        let cookie = format!("{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict");
        if let Ok(value) = header::HeaderValue::from_str(&cookie) {
            response.headers_mut().append(header::SET_COOKIE, value);
        }
    }
    response.into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_goes_without_a_token() {
        let local: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let remote: SocketAddr = "0.0.0.0:8787".parse().unwrap();
        assert!(access_for(local, false, None).unwrap().token.is_none());
        assert!(access_for(remote, false, Some("x".repeat(20))).unwrap_err().contains("--allow-remote"));
        assert!(access_for(remote, true, None).unwrap_err().contains("--token"));
        assert!(access_for(remote, true, Some("short".into())).unwrap_err().contains("at least 16"));
        assert_eq!(access_for(remote, true, Some("t".repeat(16))).unwrap().token, Some("t".repeat(16)));
    }

    #[test]
    fn hosts_and_tokens_are_read_as_sent() {
        for host in ["localhost:8787", "127.0.0.1", "[::1]:80", "LOCALHOST"] {
            assert!(loopback_host(host), "{host}");
        }
        for host in ["evil.example:8787", "", "localhost.evil.example", "[::2]"] {
            assert!(!loopback_host(host), "{host}");
        }
        let mut headers = HeaderMap::new();
        headers.insert(header::COOKIE, "a=b; reloop_token=abc".parse().unwrap());
        assert_eq!(carried(&headers, Some("page=2")), (Some("abc".into()), false));
        assert_eq!(carried(&headers, Some("token=a%2Fb")), (Some("a/b".into()), true));
        assert!(same(b"abc", b"abc") && !same(b"abc", b"abd") && !same(b"ab", b"abc"));
    }
}
