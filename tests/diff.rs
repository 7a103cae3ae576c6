//! `reloop diff A B`: where two sessions part ways (issue #15, item 2).

mod common;

use common::{cassette_path, stdout, Workspace};
use serde_json::{json, Value};

fn ids(ws: &Workspace) -> Vec<String> {
    let rows: Value = serde_json::from_str(&stdout(&ws.reloop(&["sessions", "--json"]))).unwrap();
    rows.as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap().to_string()).collect()
}

/// The seed cassette with its second response reading README.md instead of login.ts.
fn reads_readme(ws: &Workspace) -> std::path::PathBuf {
    let mut cassette: Value =
        serde_json::from_str(&std::fs::read_to_string(cassette_path("seed.json")).unwrap()).unwrap();
    cassette["responses"][1]["message"]["content"][1]["input"] = json!({"file_path": "{{cwd}}/README.md"});
    let path = ws.dir.path().join("reads_readme.json");
    std::fs::write(&path, cassette.to_string()).unwrap();
    path
}

#[test]
fn two_runs_of_one_prompt_part_ways_at_the_step_whose_tool_input_differs() {
    let ws = Workspace::seed();
    assert_eq!(ws.run("检查登录模块", "seed.json", &[]).status.code(), Some(0));
    let other = reads_readme(&ws);
    assert_eq!(ws.run("检查登录模块", other.to_str().unwrap(), &[]).status.code(), Some(0));
    let [a, b] = <[String; 2]>::try_from(ids(&ws)).unwrap();
    let out = ws.reloop(&["diff", &a, &b]);
    assert_eq!(out.status.code(), Some(1), "sessions that differ exit 1");
    let text = stdout(&out).replace(&a[..8], "AAAAAAAA").replace(&b[..8], "BBBBBBBB");
    common::settings().bind(|| insta::assert_snapshot!("diff_two_runs", text));

    let d: Value = serde_json::from_str(&stdout(&ws.reloop(&["diff", &a, &b, "--json"]))).unwrap();
    // Step 9 is the second response's tool_use block: the first step that differs.
    assert_eq!(d["first_difference"]["a"]["seq"], 9);
    assert_eq!(d["first_difference"]["a"]["event"], "tool_use Read src/auth/login.ts");
    assert_eq!(d["first_difference"]["b"]["event"], "tool_use Read README.md");
    assert_eq!(d["first_difference"]["differs"], json!(["event"]));
    assert_eq!(d["after_a"]["terminal_reason"], "completed");

    // The same cassette twice: nothing to show, exit 0.
    assert_eq!(ws.run("检查登录模块", "seed.json", &[]).status.code(), Some(0));
    let same = ws.reloop(&["diff", &a, "last"]);
    assert_eq!(same.status.code(), Some(0));
    assert!(stdout(&same).contains("take the same"), "{}", stdout(&same));
    // The compared steps and the uncompared ones add up to the count `sessions` shows.
    let d: Value = serde_json::from_str(&stdout(&ws.reloop(&["diff", &a, "last", "--json"]))).unwrap();
    let listed: Value = serde_json::from_str(&stdout(&ws.reloop(&["sessions", "--json"]))).unwrap();
    let steps = listed.as_array().unwrap().iter().find(|s| s["id"] == a.as_str()).unwrap()["steps"].as_u64().unwrap();
    let (same_steps, uncompared) = (d["same_steps"].as_u64().unwrap(), d["uncompared_steps_a"].as_u64().unwrap());
    assert!(uncompared > 0, "{d}");
    assert_eq!(same_steps + uncompared, steps, "{d}");
    assert!(
        stdout(&same).contains(&format!("take the same {same_steps} steps ({uncompared} more, ")),
        "{}",
        stdout(&same)
    );
}

#[test]
fn a_fork_is_compared_with_its_parent_from_the_fork_point() {
    let ws = Workspace::seed();
    assert_eq!(ws.run("检查登录模块", "seed.json", &[]).status.code(), Some(0));
    let parent = ids(&ws)[0].clone();
    // Step 7 sends the second request; the fork's cassette answers it with a final text.
    let script = cassette_path("fork_answer.json");
    let fork = ws.reloop(&["fork", &parent, "--at", "7", "--script", script.to_str().unwrap()]);
    assert_eq!(fork.status.code(), Some(0), "{}", common::stderr(&fork));
    let d: Value = serde_json::from_str(&stdout(&ws.reloop(&["diff", &parent, "last", "--json"]))).unwrap();
    assert_eq!(d["fork_point"], 7);
    assert_eq!(d["same_steps"], 0);
    let (x, y) = (&d["first_difference"]["a"], &d["first_difference"]["b"]);
    assert_eq!(x["seq"], 8);
    assert!(x["event"].as_str().unwrap().starts_with("text \"找到了"), "{d}");
    assert_eq!(y["event"], "text \"A different ending, from the fork.\"");
    assert_eq!(d["after_a"]["tools"], json!({"Read": 1}));
    assert_eq!(d["after_b"]["tools"], json!({}));
    // Either order names the fork point.
    let text = stdout(&ws.reloop(&["diff", "last", &parent]));
    assert!(
        text.starts_with(&format!("A {} and B {}: one forks the other at step 7", &ids(&ws)[1][..8], &parent[..8])),
        "{text}"
    );
}

#[test]
fn an_imported_claude_code_session_and_a_reloop_run_of_its_prompt_line_up() {
    let ws = Workspace::seed();
    let file = "/work/shared/fixtures/real/marot-spotter/tool_heavy.jsonl";
    assert_eq!(ws.reloop(&["import", "claude-code", file]).status.code(), Some(0));
    // reloop asked the same model for the same prompt, and the model asked for something else.
    let responses = vec![
        common::response(
            "msg_1",
            json!([{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "mix phx.server &"}}]),
            "tool_use",
            20,
        ),
        common::response("msg_2", common::text("Started."), "end_turn", 5),
    ];
    let run = ws.run_responses("start phoenix in background", responses, &["--model", "claude-opus-4-6"]);
    assert_eq!(run.status.code(), Some(0), "{}", common::stderr(&run));
    let d: Value = serde_json::from_str(&stdout(&ws.reloop(&["diff", &ids(&ws)[0], "last", "--json"]))).unwrap();
    // The prompt and its request line up; the model's first block is where they part ways.
    assert!(d["same_steps"].as_u64().unwrap() >= 1, "{d}");
    let (x, y) = (&d["first_difference"]["a"], &d["first_difference"]["b"]);
    assert_eq!(x["event"], "tool_use Bash mix phx.server", "{d}");
    assert_eq!(y["event"], "tool_use Bash mix phx.server &", "{d}");
    assert_eq!(d["after_a"]["terminal_reason"], "aborted_streaming");
    assert_eq!(d["after_b"]["terminal_reason"], "completed");
    // Claude Code's side ran claude-opus-4-6, which data/models.json does not price: its cost
    // is unknown, and the text says so once on stderr.
    assert_eq!(d["after_a"]["cost_usd"], Value::Null, "{d}");
    assert_eq!(d["after_a"]["unpriced_models"], json!(["claude-opus-4-6"]));
    let text = ws.reloop(&["diff", &ids(&ws)[0], "last"]);
    assert!(stdout(&text).contains(" cost      cost unknown  "), "{}", stdout(&text));
    assert_eq!(
        common::stderr(&text),
        "reloop: warning: no price for model claude-opus-4-6 (data/models.json does not list it): its cost is shown as unknown\n"
    );
}
