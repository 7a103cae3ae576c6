//! Numbers that do not mislead (issue 34, item 4): tokens shown as input, cache reads, cache
//! writes and output apart with the cache hit rate, on a native session and on imported Claude
//! Code transcripts; a model with no known price costs "unknown" (a field in `--json`, one
//! warning line on stderr), never another model's price; and a budget that could not be
//! enforced is refused before the run starts.

mod common;

use common::{stderr, stdout, Workspace};
use serde_json::{json, Value};

const MAROT: &str = "/work/shared/fixtures/real/marot-spotter";
/// A Claude Code 2.0.74 session on claude-opus-4-5, which data/models.json prices.
const KFISCHER: &str =
    "/work/shared/fixtures/real/kfischer-claude-history/-Users-user-project/b3edadab-bca0-4054-9b41-f7ffa6941260.jsonl";

/// A response of `model` with every kind of token.
fn cached(id: &str, model: &str, content: Value, stop: &str, usage: [u64; 4]) -> Value {
    let [input, read, write, output] = usage;
    json!({"message": {
        "id": id, "type": "message", "role": "assistant", "model": model, "content": content, "stop_reason": stop,
        "usage": {"input_tokens": input, "cache_read_input_tokens": read, "cache_creation_input_tokens": write,
                  "output_tokens": output}
    }})
}

/// A Glob call, then an answer: the second request reads from the cache what the first wrote.
fn two_turns(model: &str) -> Vec<Value> {
    vec![
        cached(
            "msg_1",
            model,
            json!([common::call("toolu_1", "Glob", json!({"pattern": "**/*.ts"}))]),
            "tool_use",
            [100, 0, 2000, 50],
        ),
        cached("msg_2", model, common::text("done"), "end_turn", [10, 2000, 150, 20]),
    ]
}

fn json_of(out: &std::process::Output) -> Value {
    assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
    serde_json::from_str(&stdout(out)).unwrap_or_else(|e| panic!("{e}: {}", stdout(out)))
}

fn close(a: &Value, b: f64) -> bool {
    a.as_f64().is_some_and(|a| (a - b).abs() < 1e-9)
}

#[test]
fn a_native_session_shows_input_cache_reads_cache_writes_and_output_apart() {
    let ws = Workspace::seed();
    let out = ws.run_responses("check", two_turns("claude-sonnet-4-6"), &["--model", "claude-sonnet-4-6"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Sonnet 4.6: $3 input, $15 output, $3.75 cache writes, $0.30 cache reads per million.
    let (turn1, turn2) = (
        (100.0 * 3.0 + 50.0 * 15.0 + 2000.0 * 3.75) / 1e6,
        (10.0 * 3.0 + 20.0 * 15.0 + 2000.0 * 0.3 + 150.0 * 3.75) / 1e6,
    );
    let result = common::json_lines(&out).into_iter().find(|l| l["type"] == "result").unwrap();
    assert!(close(&result["total_cost_usd"], turn1 + turn2), "{result}");

    common::settings().bind(|| insta::assert_snapshot!("spend_native_why", ws.why()));
    let why = ws.reloop(&["why", "last"]);
    assert_eq!(stderr(&why), "", "a priced session warns of nothing");

    let lines = json_of(&ws.reloop(&["why", "last", "--json"]));
    let last = lines.as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["reason"], "completed");
    let usage = &last["turn_usage"];
    assert_eq!(
        (&usage["input_tokens"], &usage["cache_read_input_tokens"], &usage["cache_creation_input_tokens"]),
        (&json!(10), &json!(2000), &json!(150))
    );
    assert_eq!(usage["output_tokens"], 20);
    assert!(close(&usage["cache_hit_rate"], 2000.0 / 2160.0), "{usage}");
    assert!(close(&usage["cost_usd"], turn2), "{usage}");
    assert_eq!(usage["unpriced_models"], json!([]));

    let rows = json_of(&ws.reloop(&["sessions", "--json"]));
    let row = &rows[0];
    assert_eq!((&row["input_tokens"], &row["cache_read_input_tokens"]), (&json!(110), &json!(2000)));
    assert_eq!((&row["cache_creation_input_tokens"], &row["output_tokens"]), (&json!(2150), &json!(70)));
    assert!(close(&row["cache_hit_rate"], 2000.0 / 4260.0), "{row}");
    assert!(close(&row["cost_usd"], turn1 + turn2), "sessions prices as the run did: {row}");

    let show = stdout(&ws.reloop(&["show", "last"]));
    let usage_line = show.lines().last().unwrap();
    assert_eq!(
        usage_line,
        "usage: 110 in, 2,000 cache read, 2,150 cache write, 70 out tokens, cache hit 46.9%, $0.0100"
    );
    let shown = json_of(&ws.reloop(&["show", "last", "--json"]));
    assert_eq!(shown["usage"]["cache_creation_input_tokens"], 2150);
    assert!(close(&shown["usage"]["cost_usd"], turn1 + turn2));

    let page = ws.dir.path().join("page.html");
    assert_eq!(ws.reloop(&["view", "last", "-o", page.to_str().unwrap()]).status.code(), Some(0));
    let data = page_data(&page);
    assert_eq!(data["session"]["cache_read_input_tokens"], 2000);
    assert_eq!(data["turns"][1]["cache_creation_input_tokens"], 150);
    assert!(close(&data["requests"][0]["cost_usd"], turn1));
}

#[test]
fn an_imported_transcript_on_a_model_without_a_price_shows_its_cache_tokens_and_an_unknown_cost() {
    let ws = Workspace::seed();
    let file = format!("{MAROT}/short.jsonl");
    assert_eq!(ws.reloop(&["import", "claude-code", &file]).status.code(), Some(0));
    // Claude Code 2.1.38 ran claude-opus-4-6, which data/models.json does not list; the
    // transcript's one response read 11,515 tokens from the cache and wrote 13,835.
    let warning =
        "reloop: warning: no price for model claude-opus-4-6 (data/models.json does not list it): its cost is shown as unknown\n";
    let why = ws.reloop(&["why", "last"]);
    assert_eq!(stderr(&why), warning, "one line per unpriced model");
    common::settings().bind(|| insta::assert_snapshot!("spend_imported_unpriced_why", turn_lines(&why)));

    let lines = json_of(&ws.reloop(&["why", "last", "--json"]));
    let usage = &lines[0]["turn_usage"];
    assert_eq!(usage["cache_read_input_tokens"], 11_515);
    assert_eq!(usage["cache_creation_input_tokens"], 13_835);
    assert_eq!(usage["cost_usd"], Value::Null, "unknown, not another model's price");
    assert_eq!(usage["unpriced_models"], json!(["claude-opus-4-6"]));

    let list = ws.reloop(&["sessions"]);
    assert!(stdout(&list).contains("    8 steps  cost unknown  aborted_tools  claude-opus-4-6"), "{}", stdout(&list));
    assert_eq!(stderr(&list), warning);
    let rows = json_of(&ws.reloop(&["sessions", "--json"]));
    assert_eq!((&rows[0]["cost_usd"], &rows[0]["unpriced_models"]), (&Value::Null, &json!(["claude-opus-4-6"])));

    let show = ws.reloop(&["show", "last"]);
    assert!(stdout(&show).ends_with(
        "usage: 3 in, 11,515 cache read, 13,835 cache write, 13 out tokens, cache hit 45.4%, cost unknown\n"
    ));
    assert_eq!(stderr(&show), warning);

    let page = ws.dir.path().join("page.html");
    let view = ws.reloop(&["view", "last", "-o", page.to_str().unwrap()]);
    assert_eq!(stderr(&view), warning);
    let data = page_data(&page);
    assert_eq!(data["session"]["cost_usd"], Value::Null);
    assert_eq!(data["session"]["unpriced_models"], json!(["claude-opus-4-6"]));
    assert_eq!(data["requests"][0]["cost_usd"], Value::Null);
}

#[test]
fn an_imported_transcript_on_a_priced_model_is_priced_with_its_cache_reads_and_writes() {
    let ws = Workspace::seed();
    assert_eq!(ws.reloop(&["import", "claude-code", KFISCHER]).status.code(), Some(0));
    let why = ws.reloop(&["why", "last", "--prompt", "1"]);
    assert_eq!(stderr(&why), "");
    common::settings().bind(|| insta::assert_snapshot!("spend_imported_priced_why", turn_lines(&why)));
    let rows = json_of(&ws.reloop(&["sessions", "--json"]));
    let row = &rows[0];
    // The listing's totals (from the journal's responses) are the rebuilt session's (the
    // core's own accounting), cache reads and writes apart: 11 responses of the transcript's
    // latest branch, which read 202,817 tokens from the cache.
    let shown = json_of(&ws.reloop(&["show", "last", "--json"]))["usage"].clone();
    for k in ["input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens"] {
        assert_eq!(row[k], shown[k], "{k}: {row} vs {shown}");
    }
    assert_eq!(row["cache_read_input_tokens"], 202_817);
    let sum = |k: &str| row[k].as_u64().unwrap();
    // Opus 4.5: $5 input, $25 output, $6.25 cache writes, $0.50 cache reads per million.
    let cost = (sum("input_tokens") as f64 * 5.0
        + sum("output_tokens") as f64 * 25.0
        + sum("cache_creation_input_tokens") as f64 * 6.25
        + sum("cache_read_input_tokens") as f64 * 0.5)
        / 1e6;
    assert!(close(&row["cost_usd"], cost), "{row} vs {cost}");
}

#[test]
fn a_budget_set_on_replay_of_a_session_that_recorded_no_price_is_refused_not_answered_no_change() {
    let ws = Workspace::seed();
    // An import records no prices: its responses counted as costing 0, and a budget could never
    // stop it. The answer is not "no change" for a session that cost $0.32.
    assert_eq!(ws.reloop(&["import", "claude-code", KFISCHER]).status.code(), Some(0));
    let out = ws.reloop(&["replay", "last", "--set", "max_budget_usd=0.05"]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(
        stderr(&out).contains(
            "--set max_budget_usd cannot be answered: the session recorded no price for model claude-opus-4-5-20251101"
        ),
        "{}",
        stderr(&out)
    );
    // A run records its model's price: the budget is replayed at it ($0.00855 after turn 1).
    let out = ws.run_responses("check", two_turns("claude-sonnet-4-6"), &["--model", "claude-sonnet-4-6"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = ws.reloop(&["replay", "last", "--set", "max_budget_usd=0.005", "--json"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(report["would"].as_str().unwrap().starts_with("would have stopped with max_budget_usd"), "{report}");
}

#[test]
fn a_native_session_on_a_model_without_a_price_costs_unknown_and_warns_once_per_command() {
    let ws = Workspace::seed();
    let out = ws.run_responses("check", two_turns("my-local-model"), &["--model", "my-local-model"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out).matches("no price for model my-local-model").count(), 1, "{}", stderr(&out));
    let why = ws.reloop(&["why", "last"]);
    assert_eq!(stderr(&why).lines().count(), 1, "{}", stderr(&why));
    assert!(
        stdout(&why).contains("2,000 cache write, 50 out tokens, cache hit 0.0%, cost unknown"),
        "{}",
        stdout(&why)
    );
    let json = ws.reloop(&["why", "last", "--json"]);
    assert_eq!(stderr(&json), "", "--json says it in a field");
    assert_eq!(json_of(&json)[0]["turn_usage"]["unpriced_models"], json!(["my-local-model"]));
}

#[test]
fn a_budget_on_a_model_without_a_price_is_refused_unless_a_price_is_given() {
    let ws = Workspace::seed();
    let out =
        ws.run_responses("check", two_turns("my-local-model"), &["--model", "my-local-model", "--max-budget-usd", "1"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "reloop: --max-budget-usd cannot be enforced: no price for model my-local-model (data/models.json does not \
         list it); give its price with --price my-local-model=INPUT,OUTPUT[,CACHE_WRITE,CACHE_READ] (USD per \
         million tokens)\n"
    );
    assert!(!ws.journal().exists() || json_of(&ws.reloop(&["sessions", "--json"])) == json!([]), "nothing started");

    // The fallback model is asked too: it needs a price as well.
    let out = ws.run_responses(
        "check",
        two_turns("claude-sonnet-4-6"),
        &["--fallback-model", "my-local-model", "--max-budget-usd", "1"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("no price for model my-local-model"));

    // So is the print mode, with the same words.
    let out = ws
        .command(&["-p", "hi", "--model", "my-local-model", "--max-budget-usd", "1"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--max-budget-usd cannot be enforced: no price for model my-local-model"));

    // Priced by --price, the budget is enforced at that price: $3/$15 per million, cache writes
    // at 1.25 times input, so the first turn costs $0.00855 and the second request is not sent.
    let out = ws.run_responses(
        "check",
        two_turns("my-local-model"),
        &["--model", "my-local-model", "--max-budget-usd", "0.005", "--price", "my-local-model=3,15"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(stderr(&out), "", "a priced model is not warned about");
    let result = common::json_lines(&out).into_iter().find(|l| l["type"] == "result").unwrap();
    assert_eq!(result["terminal_reason"], "max_budget_usd");
    assert!(close(&result["total_cost_usd"], 0.00855), "{result}");
    // The price is the session's: the reading commands price it the same way.
    let rows = json_of(&ws.reloop(&["sessions", "--json"]));
    assert!(close(&rows[0]["cost_usd"], 0.00855), "{}", rows[0]);
    assert!(ws.replays_identical());

    // The print mode's `modelUsage` prices each model as the run did.
    let cassette = ws.dir.path().join("local.json");
    std::fs::write(&cassette, json!({"responses": two_turns("my-local-model")}).to_string()).unwrap();
    let out = ws
        .command(&[
            "-p",
            "hi",
            "--model",
            "my-local-model",
            "--output-format",
            "json",
            "--price",
            "my-local-model=3,15",
        ])
        .args(["--script", cassette.to_str().unwrap()])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let result: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    let cost = 0.00855 + (10.0 * 3.0 + 20.0 * 15.0 + 2000.0 * 0.3 + 150.0 * 3.75) / 1e6;
    assert!(close(&result["total_cost_usd"], cost), "{result}");
    assert!(close(&result["modelUsage"]["my-local-model"]["costUSD"], cost), "{result}");
}

#[test]
fn a_price_that_does_not_parse_is_a_usage_error() {
    let ws = Workspace::seed();
    for bad in ["my-local-model", "my-local-model=3", "my-local-model=3,x", "=3,15", "m=1,2,3"] {
        let out = ws.run_responses("check", two_turns("m"), &["--price", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", stderr(&out));
        assert!(stderr(&out).contains("MODEL=INPUT,OUTPUT[,CACHE_WRITE,CACHE_READ]"), "{bad}: {}", stderr(&out));
    }
}

/// The turn lines of `why`'s text, which say what each turn spent: an imported session's
/// decisions are the importer's to word.
fn turn_lines(why: &std::process::Output) -> String {
    stdout(why).lines().filter(|l| l.starts_with("  turn ")).map(|l| format!("{l}\n")).collect()
}

/// The page's data: the JSON of its script element.
fn page_data(page: &std::path::Path) -> Value {
    let html = std::fs::read_to_string(page).unwrap();
    let start = html.find(r#"<script id="data" type="application/json">"#).expect("the data element");
    let rest = &html[start..];
    let (open, close) = (rest.find('>').unwrap() + 1, rest.find("</script>").unwrap());
    serde_json::from_str(&rest[open..close]).expect("the data is JSON")
}
