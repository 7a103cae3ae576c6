//! `reloop view`: the session page, rendered in a real headless browser (Debian's `chromium`)
//! (issue #15, item 1). Without chromium the tests say so and pass, unless
//! `RELOOP_REQUIRE_BROWSER=1` (scripts/test.sh sets it and installs chromium).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{cassette_path, stdout, Workspace};

/// The browser, or `None` (with a notice) when it is absent and not required.
fn chromium() -> Option<PathBuf> {
    let found = ["chromium", "chromium-browser"].iter().find_map(|name| {
        std::env::var_os("PATH")?.to_str()?.split(':').map(|dir| Path::new(dir).join(name)).find(|p| p.is_file())
    });
    if found.is_none() {
        assert!(
            std::env::var("RELOOP_REQUIRE_BROWSER").as_deref() != Ok("1"),
            "RELOOP_REQUIRE_BROWSER=1 but no chromium on PATH (apt-get install -y chromium)"
        );
        eprintln!(
            "NOTICE: chromium is not installed; the page is not checked in a browser (apt-get install -y chromium)"
        );
    }
    found
}

/// What headless chromium made of a page: the DOM after its scripts ran, and its log.
struct Rendered {
    dom: String,
    log: String,
}

fn browser(chromium: &Path, profile: &Path, args: &[&str], url: &str) -> std::process::Output {
    // `timeout` bounds a browser that would hang, so the test fails instead of stalling CI.
    Command::new("timeout")
        .arg("120")
        .arg(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .output()
        .unwrap()
}

fn render(chromium: &Path, page: &Path, hash: &str) -> Rendered {
    let profile = tempfile::tempdir().unwrap();
    let url = format!("file://{}{hash}", page.display());
    let out = browser(chromium, profile.path(), &["--dump-dom"], &url);
    assert!(out.status.success(), "chromium failed: {}", common::stderr(&out));
    Rendered { dom: stdout(&out), log: common::stderr(&out) }
}

/// Where test artifacts (the pages, the screenshots) are kept: under `target/`.
fn artifacts() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("view");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn assert_loaded_cleanly(r: &Rendered) {
    assert!(r.dom.contains(r#"id="status" data-state="ok">ok<"#), "the page's script did not finish:\n{}", r.log);
    for line in r.log.lines() {
        // The page logs nothing: any console line (chromium logs them all as `:CONSOLE`) is a fault.
        assert!(!line.contains("Uncaught") && !line.contains(":CONSOLE"), "console output: {line}");
    }
}

#[test]
fn a_fork_renders_as_a_timeline_with_its_path_its_steps_and_its_parent() {
    let ws = Workspace::seed();
    assert_eq!(ws.run("find the login bug", "seed.json", &[]).status.code(), Some(0));
    let rows: serde_json::Value = serde_json::from_str(&stdout(&ws.reloop(&["sessions", "--json"]))).unwrap();
    let parent = rows[0]["id"].as_str().unwrap().to_string();
    let script = cassette_path("fork_answer.json");
    assert_eq!(ws.reloop(&["fork", &parent, "--at", "7", "--script", script.to_str().unwrap()]).status.code(), Some(0));
    let dir = artifacts();
    let (parent_page, fork_page) = (dir.join("parent.html"), dir.join("fork.html"));
    let out = ws.reloop(&["view", &parent, "-o", parent_page.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", common::stderr(&out));
    assert_eq!(ws.reloop(&["view", "last", "-o", fork_page.to_str().unwrap()]).status.code(), Some(0));

    // Self-contained: nothing is fetched from anywhere.
    let html = std::fs::read_to_string(&parent_page).unwrap();
    for outside in ["https://", "src=\"", "<link", "@import", "url("] {
        assert!(!html.contains(outside), "the page refers to something outside it: {outside}");
    }
    assert_eq!(
        html.matches("http://").count(),
        html.matches("http://www.w3.org/2000/svg").count(),
        "only the SVG namespace"
    );

    let Some(chromium) = chromium() else { return };
    // Step 9 is the parent's second tool call (Read): the hash selects it as a click does.
    let r = render(&chromium, &parent_page, "#step-9");
    assert_loaded_cleanly(&r);
    let dom = &r.dom;
    assert!(dom.contains("Prompt 1 · #1 · find the login bug"), "{dom}");
    assert_eq!(dom.matches("class=\"item request\"").count(), 3, "three requests");
    assert!(dom.contains("\"login|auth\" in src") && dom.contains("src/auth/login.ts"), "tool inputs that matter");
    assert!(dom.contains("<summary>result (") && dom.contains("export"), "a folded tool result");
    assert!(dom.contains("next_turn</b>: the model asked for Grep"), "a continue reason with its words");
    assert!(dom.contains("completed</b>: the model asked for no tool"), "the terminal reason");
    assert!(dom.contains("<svg id=\"path\"") && dom.matches("class=\"dot").count() == 14, "one dot per step");
    assert!(
        dom.contains("Step #9 · model_block") && dom.contains(r#"id="detail-event">{"#),
        "the clicked step's event"
    );
    assert!(dom.contains(r#"id="detail-effects">"#), "its effects");
    let shot = dir.join("parent.png");
    let profile = tempfile::tempdir().unwrap();
    let url = format!("file://{}#step-11", parent_page.display());
    let out = browser(
        &chromium,
        profile.path(),
        &[&format!("--screenshot={}", shot.display()), "--window-size=1280,900"],
        &url,
    );
    assert!(out.status.success(), "{}", common::stderr(&out));
    assert!(std::fs::read(&shot).unwrap().starts_with(b"\x89PNG"), "a screenshot is kept at {}", shot.display());

    // The fork names its parent and links to the parent's page; the path marks the fork point.
    let r = render(&chromium, &fork_page, "#step-11");
    assert_loaded_cleanly(&r);
    assert!(r.dom.contains(&format!("reloop view {parent}")), "{}", r.dom);
    assert!(r.dom.contains(&format!("href=\"reloop-{}.html\"", &parent[..8])));
    assert!(r.dom.contains("id=\"fork-point\"") && r.dom.contains("fork point @7"));
    assert!(r.dom.contains("Step #11 · model_done") && r.dom.contains("detail-reason"), "{}", r.dom);
}

#[test]
fn an_imported_session_shows_each_prompt_retries_and_what_was_inferred() {
    let ws = Workspace::seed();
    let file = "/work/shared/fixtures/real/marot-spotter/subagent.jsonl";
    assert_eq!(ws.reloop(&["import", "claude-code", file]).status.code(), Some(0));
    let page = artifacts().join("imported.html");
    assert_eq!(ws.reloop(&["view", "last", "-o", page.to_str().unwrap()]).status.code(), Some(0));
    let Some(chromium) = chromium() else { return };
    let r = render(&chromium, &page, "");
    assert_loaded_cleanly(&r);
    assert_eq!(r.dom.matches("class=\"card prompt\"").count(), 2, "two prompts");
    assert!(r.dom.contains("class=\"item decision inferred\""), "the importer's inference is marked");
    assert!(r.dom.contains("aborted_streaming"), "the first query's end");
    assert!(
        r.dom.contains(">WebFetch<") && r.dom.contains("https://github.com/bradleygolden/claude-marketplace-elixir")
    );
    // Tokens by kind, and claude-opus-4-6's cost as unknown: data/models.json has no price for it.
    assert!(r.dom.contains(" cache read · ") && r.dom.contains(" cache write · "), "tokens apart");
    assert!(r.dom.contains("cost unknown (no price for claude-opus-4-6)"), "the session's cost");
}

/// The page's data: the JSON of its script element (whose `\u` escapes JSON reads back).
fn data_of(html: &str) -> serde_json::Value {
    let start = html.find(r#"<script id="data" type="application/json">"#).expect("the data element");
    let rest = &html[start..];
    let (open, close) = (rest.find('>').unwrap() + 1, rest.find("</script>").unwrap());
    serde_json::from_str(&rest[open..close]).expect("the data is JSON")
}

#[test]
fn the_page_holds_every_step_and_no_text_of_the_session_leaves_its_script_element() {
    let ws = Workspace::seed();
    let prompt = "find the bug </script><script>alert(1)</script> & <!-- here";
    assert_eq!(ws.run(prompt, "seed.json", &[]).status.code(), Some(0));
    let page = ws.dir.path().join("page.html");
    let out = ws.reloop(&["view", "last", "-o", page.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", common::stderr(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("</script>").count(), 2, "the data's element and the page's own script end");
    assert!(!html.contains("alert(1)</"), "the prompt's markup is escaped");

    let data = data_of(&html);
    let steps: serde_json::Value = serde_json::from_str(&stdout(&ws.reloop(&["sessions", "--json"]))).unwrap();
    let count = steps[0]["steps"].as_u64().unwrap();
    assert_eq!(data["session"]["steps"].as_u64(), Some(count));
    let seqs: Vec<u64> = data["steps"].as_array().unwrap().iter().map(|s| s["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, (1..=count).collect::<Vec<_>>(), "every step, in order");
    assert_eq!(data["prompts"][0]["text"], prompt, "the prompt reads back whole");
    let blocks = data["steps"][0]["event"]["content"].as_array().unwrap();
    assert!(blocks.iter().any(|b| b["text"] == prompt), "the first step's event holds it: {blocks:?}");
    assert_eq!(data["session"]["terminal"], "completed");
    let keys: Vec<&str> = data.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["session", "prompts", "turns", "requests", "tools", "decisions", "steps"]);
    assert!(data["decisions"].as_array().unwrap().iter().any(|d| d["reason"] == "completed"));
}

#[test]
fn a_page_that_cannot_be_written_is_an_error_and_removes_nothing_it_did_not_write() {
    let ws = Workspace::seed();
    assert_eq!(ws.run("find the login bug", "seed.json", &[]).status.code(), Some(0));
    // A device that refuses every write: the error names it, and the device stays.
    let out = ws.reloop(&["view", "last", "-o", "/dev/full"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(common::stderr(&out).contains("cannot write /dev/full"), "{}", common::stderr(&out));
    assert!(Path::new("/dev/full").exists(), "a device is never removed");

    // A reader that goes away early is a normal end.
    let mut child = ws
        .command(&["view", "last", "-o", "/dev/stdout"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", common::stderr(&out));

    let missing = ws.dir.path().join("no/such/dir/page.html");
    let out = ws.reloop(&["view", "last", "-o", missing.to_str().unwrap()]);
    assert_ne!(out.status.code(), Some(0));
    assert!(common::stderr(&out).contains("cannot write"), "{}", common::stderr(&out));
    assert!(!missing.exists());
}
