//! Numbers that don't mislead, in every view of a session: the model a request asked for and the
//! model that answered it are told apart (the demo asks `claude-opus-5-5`, its cassette answers
//! as `claude-sonnet-4-6`; every view said Sonnet), every view prices a response at the model
//! that answered it (`show` priced the demo at Opus's), and a turn's time holds the wait for its
//! model (turns 2 and 3 of a run with a 0.7 s model showed 1 ms).

mod common;

use common::{stdout, Workspace};
use serde_json::{json, Value};

fn ok(ws: &Workspace, args: &[&str]) -> String {
    let out = ws.reloop(args);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", common::stderr(&out));
    stdout(&out)
}

fn json_of(ws: &Workspace, args: &[&str]) -> Value {
    serde_json::from_str(&ok(ws, args)).unwrap()
}

/// The page's embedded data (`reloop view`).
fn page_data(ws: &Workspace) -> Value {
    let page = ws.dir.path().join("page.html");
    ok(ws, &["view", "last", "-o", page.to_str().unwrap()]);
    let html = std::fs::read_to_string(&page).unwrap();
    let rest = &html[html.find(r#"<script id="data" type="application/json">"#).expect("the page's data")..];
    let (open, close) = (rest.find('>').unwrap() + 1, rest.find("</script>").unwrap());
    serde_json::from_str(&rest[open..close]).unwrap()
}

#[test]
fn the_demo_names_the_model_it_asked_and_the_one_that_answered_in_every_view() {
    let ws = Workspace::seed();
    ok(&ws, &["run", "--demo"]);
    let both = "claude-opus-5-5 (answered by claude-sonnet-4-6)";

    let listed = ok(&ws, &["sessions"]);
    let row = listed.lines().next().unwrap();
    assert!(row.contains(&format!("completed  {both}  <- last")), "{listed}");
    let rows = json_of(&ws, &["sessions", "--json"]);
    assert_eq!(rows[0]["requested_model"], "claude-opus-5-5");
    assert_eq!(rows[0]["answered_models"], json!(["claude-sonnet-4-6"]));
    assert_eq!(rows[0]["model"], "claude-sonnet-4-6", "`model` stays the answering one");

    let shown = ok(&ws, &["show", "last"]);
    assert_eq!(shown.lines().nth(2), Some(format!("model {both}").as_str()), "{shown}");
    let shown = json_of(&ws, &["show", "last", "--json"]);
    assert_eq!(shown["models"], json!({"requested": ["claude-opus-5-5"], "answered": ["claude-sonnet-4-6"]}));

    let why = ok(&ws, &["why", "last"]);
    assert_eq!(why.lines().nth(1), Some(format!("model: {both}").as_str()), "{why}");

    let data = page_data(&ws);
    assert_eq!(data["session"]["models"], both);
    assert_eq!(data["session"]["requested_models"], json!(["claude-opus-5-5"]));
    let requests = data["requests"].as_array().unwrap();
    assert_eq!(requests.len(), 3);
    for r in requests {
        assert_eq!(
            (r["requested_model"].as_str(), r["model"].as_str()),
            (Some("claude-opus-5-5"), Some("claude-sonnet-4-6"))
        );
    }

    // One price for one session: each response at the model that answered it, in every view.
    let cost = rows[0]["cost_usd"].as_f64().unwrap();
    assert!((shown["usage"]["cost_usd"].as_f64().unwrap() - cost).abs() < 1e-12, "show: {}", shown["usage"]);
    assert!((data["session"]["cost_usd"].as_f64().unwrap() - cost).abs() < 1e-12, "view: {}", data["session"]);
    assert_eq!(format!("${cost:.4}"), "$0.0201");
    // The run's own result prices as the model asked (as Claude Code's does): every view that
    // shows the cost tells that figure beside it, labelled, never a silent other number.
    let reported = "reported by the run: $0.0268, priced as the model asked";
    let text = ok(&ws, &["show", "last"]);
    assert!(text.lines().last().unwrap().ends_with(&format!(", $0.0201 ({reported})")), "{text}");
    assert_eq!(
        why.lines().nth(2),
        Some(format!("cost: $0.0201, priced at the model that answered; {reported}").as_str())
    );
    assert_eq!(data["session"]["reported_cost"], reported);
    common::settings().bind(|| insta::assert_snapshot!("numbers_demo_why", why));

    // The page's header, as a browser shows it (when chromium is installed; tests/view.rs says
    // when it is required).
    if let Some(dom) = rendered(&ws.dir.path().join("page.html")) {
        assert!(dom.contains(&format!(r#"<span data-field="model">model <b>{both}</b></span>"#)), "{dom}");
    }
}

/// The page's DOM after its script ran, by headless chromium; `None` without one.
fn rendered(page: &std::path::Path) -> Option<String> {
    let chromium = ["chromium", "chromium-browser"].iter().find_map(|name| {
        std::env::var_os("PATH")?
            .to_str()?
            .split(':')
            .map(|dir| std::path::Path::new(dir).join(name))
            .find(|p| p.is_file())
    })?;
    let profile = tempfile::tempdir().unwrap();
    let out = std::process::Command::new("timeout")
        .arg("120")
        .arg(chromium)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"])
        .args(["--disable-component-update", "--disable-sync", "--dump-dom"])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(out.status.success(), "chromium failed: {}", common::stderr(&out));
    let dom = stdout(&out);
    assert!(dom.contains(r#"id="status" data-state="ok">ok<"#), "the page's script did not finish");
    Some(dom)
}

#[test]
fn a_session_answered_by_the_model_it_asked_names_it_once() {
    let ws = Workspace::seed();
    ok(&ws, &["run", "--demo", "--model", "claude-sonnet-4-6"]);
    let listed = ok(&ws, &["sessions"]);
    assert!(listed.lines().next().unwrap().contains("completed  claude-sonnet-4-6  <- last"), "{listed}");
    assert!(!listed.contains("answered by"), "{listed}");
    let why = ok(&ws, &["why", "last"]);
    assert!(!why.contains("model:"), "nothing to tell apart: {why}");
    assert!(ok(&ws, &["show", "last"]).contains("\nmodel claude-sonnet-4-6\n"));
}

/// The milliseconds of each `turn N:` line of `why`.
fn turn_times(why: &str) -> Vec<u64> {
    why.lines()
        .filter(|l| l.trim_start().starts_with("turn ") && !l.contains("->"))
        .map(|l| {
            let time = l.rsplit(", ").next().unwrap();
            match time.split_once(' ') {
                Some((ms, "ms")) => ms.parse().unwrap(),
                Some((s, "s")) => (s.parse::<f64>().unwrap() * 1000.0) as u64,
                _ => panic!("a turn's time: {l}"),
            }
        })
        .collect()
}

#[test]
fn each_turn_counts_its_own_wait_for_the_model() {
    let ws = Workspace::seed();
    let mut cassette: Value = serde_json::from_str(include_str!("../src/demo/cassette.json")).unwrap();
    for response in cassette["responses"].as_array_mut().unwrap() {
        response["delay_ms"] = json!(400);
    }
    let path = ws.dir.path().join("slow.json");
    std::fs::write(&path, cassette.to_string()).unwrap();
    let started = std::time::Instant::now();
    let cwd = ws.cwd();
    ok(&ws, &["run", "检查登录模块", "--script", path.to_str().unwrap(), "--cwd", cwd.to_str().unwrap()]);
    let wall = started.elapsed().as_millis() as u64;
    let times = turn_times(&ok(&ws, &["why", "last"]));
    assert_eq!(times.len(), 3);
    assert!(times.iter().all(|t| *t >= 400), "every turn waited 0.4 s for its model: {times:?}");
    assert!(times.iter().sum::<u64>() <= wall, "no turn counts time the run did not take: {times:?}, {wall} ms");
    let data = page_data(&ws);
    let turns: Vec<u64> =
        data["turns"].as_array().unwrap().iter().map(|t| t["duration_ms"].as_u64().unwrap()).collect();
    assert_eq!(turns, times, "the page and why agree");
    // Each request's own time is its wait too.
    for r in data["requests"].as_array().unwrap() {
        assert!(r["duration_ms"].as_u64().unwrap() >= 400, "{r}");
    }
}

/// The run's own result, as `--output-format json` prints it.
fn result_of(ws: &Workspace, args: &[&str]) -> (Option<i32>, Value) {
    let out = ws.reloop(args);
    (out.status.code(), serde_json::from_str(&stdout(&out)).expect("one JSON result"))
}

/// The model usage keys of a result.
fn usage_keys(result: &Value) -> Vec<&String> {
    result["modelUsage"].as_object().expect("modelUsage").keys().collect()
}

#[test]
fn the_run_keys_and_prices_its_usage_by_the_model_asked_as_claude_code_does() {
    // Recorded: Claude Code asked for its default model and answered as claude-sonnet-4-6 keys
    // `modelUsage` by the model asked and prices it there.
    let fixture = "crates/reloop-import/tests/recorded/2.1.332/model_fallback/answered_by_other_model/stdout.jsonl";
    let recorded = std::fs::read_to_string(fixture).unwrap();
    let recorded: Value = serde_json::from_str(recorded.lines().last().unwrap()).unwrap();
    assert_eq!(usage_keys(&recorded), ["claude-opus-5-5"]);

    let ws = Workspace::seed();
    let (code, result) = result_of(&ws, &["run", "--demo", "--output-format", "json"]);
    assert_eq!(code, Some(0), "{result}");
    assert_eq!(usage_keys(&result), ["claude-opus-5-5"], "{result}");
    // Opus 5.5's $4/$20 per million (data/models.json, the price 2.1.332's results show) on
    // 5,123 input and 315 output tokens.
    assert!((result["total_cost_usd"].as_f64().unwrap() - 0.026792).abs() < 1e-9, "{result}");
}

#[test]
fn the_budget_stops_the_run_at_the_asked_models_price() {
    let ws = Workspace::seed();
    // $0.007: the first answer costs $0.0073 at Opus 5.5's price (it would be $0.005475 at
    // Sonnet's), so the second request never goes.
    let (code, result) = result_of(&ws, &["run", "--demo", "--output-format", "json", "--max-budget-usd", "0.007"]);
    assert_eq!(code, Some(1), "{result}");
    assert_eq!(result["terminal_reason"], "max_budget_usd", "{result}");
    assert_eq!(result["num_turns"], 1, "{result}");
    assert!((result["total_cost_usd"].as_f64().unwrap() - 0.0073).abs() < 1e-9, "{result}");
}
