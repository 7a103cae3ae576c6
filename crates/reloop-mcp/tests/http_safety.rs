//! An HTTP MCP server's URL and credentials stay where they were configured: a token in the URL's
//! query never shows in a failure, and a redirect to another origin is not followed, so the
//! custom headers and the JSON-RPC body never reach it. No MCP SDK needed: the servers here
//! are bare sockets on 127.0.0.1.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use reloop_mcp::{McpSet, Options, ServerConfig, Transport};

const REDIRECT_HINT: &str = "; the server answered with a redirect, which is followed only when it is a 307 or \
     308 within the same origin (scheme, host, port), so neither the headers nor the request were sent where it \
     pointed: configure the URL that answers";

fn options() -> Options {
    Options {
        startup_timeout: Duration::from_secs(10),
        call_timeout: Duration::from_secs(5),
        removed_env: vec![],
        max_output_tokens: 25_000,
    }
}

fn http(url: String, headers: &[(&str, &str)]) -> ServerConfig {
    let headers = headers.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    ServerConfig { name: "web".into(), transport: Transport::Http { url, headers }, origin: "test".into() }
}

async fn failure_of(config: ServerConfig) -> String {
    let cwd = tempfile::tempdir().expect("tempdir");
    let set = McpSet::start(&[config], cwd.path(), &options()).await;
    let failures: Vec<(&str, &str)> = set.failures().collect();
    assert_eq!(failures.len(), 1, "{:?}", set.records());
    failures[0].1.to_string()
}

/// A server that answers every request with `status` and `location`; counts the requests.
fn redirecting(status: u16, location: String) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().map_while(Result::ok) {
            seen.fetch_add(1, Ordering::SeqCst);
            let mut reader = BufReader::new(&stream);
            let mut length = 0usize;
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                if let Some((name, value)) = line.split_once(':') {
                    if name.eq_ignore_ascii_case("content-length") {
                        length = value.trim().parse().unwrap_or(0);
                    }
                }
                line.clear();
            }
            let _ = reader.take(length as u64).read_to_end(&mut Vec::new());
            let mut out = &stream;
            let _ = write!(
                out,
                "HTTP/1.1 {status} Redirect\r\nlocation: {location}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            );
        }
    });
    (url, count)
}

#[tokio::test]
async fn a_redirect_to_another_origin_sends_it_nothing() {
    let (elsewhere, reached) = redirecting(500, String::new());
    for status in [301, 302, 303, 307, 308] {
        let (first, asked) = redirecting(status, format!("{elsewhere}/mcp"));
        let error = failure_of(http(format!("{first}/mcp"), &[("Authorization", "Bearer s3cr3t-header")])).await;
        assert!(asked.load(Ordering::SeqCst) >= 1, "the configured server was asked");
        assert!(error.starts_with("MCP server \"web\" failed to start:"), "{error}");
        assert!(!error.contains("s3cr3t-header"), "{error}");
        assert!(error.contains(&format!("HTTP {status} ")), "{error}");
        assert!(error.ends_with(REDIRECT_HINT), "{error}");
    }
    assert_eq!(reached.load(Ordering::SeqCst), 0, "the other origin received a request");
}

#[tokio::test]
async fn a_token_in_the_url_query_never_shows_in_a_failure() {
    // A port that was just free: nothing listens on it.
    let port = TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("port");
    let error = failure_of(http(format!("http://127.0.0.1:{port}/mcp?token=s3cr3t-query&v=2"), &[])).await;
    assert!(!error.contains("s3cr3t-query"), "{error}");
    assert!(error.contains(&format!("http://127.0.0.1:{port}/mcp?token=***&v=***")), "shown, redacted: {error}");
    assert!(error.starts_with("MCP server \"web\" failed to start:"), "{error}");
}

#[test]
fn the_url_as_shown_keeps_names_and_hides_values() {
    assert_eq!(reloop_mcp::redact_url("https://h/mcp?token=abc"), "https://h/mcp?token=***");
    assert_eq!(reloop_mcp::redact_url("https://u:p@h/mcp?k=v&x"), "https://***@h/mcp?k=***&x");
}
