//! Issue 36's SDK features through the CLI under each Claude Code profile, against a fake
//! Anthropic server on 127.0.0.1, compared with what the real versions did in the same scenario
//! (`crates/reloop-import/tests/recorded/VERSION/{model_alias,...}/`, recorded by
//! scripts/record-claude-code with scenarios_sdkfeat.py).

mod common;

use std::path::PathBuf;

use common::compat::{answer, run};
use common::text;
use serde_json::Value;

const VERSIONS: [&str; 2] = ["2.1.197", "2.1.332"];

fn recorded(version: &str, scenario: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("crates/reloop-import/tests/recorded").join(version).join(scenario)
}

/// The bodies of the requests a recording's fake server received.
fn recorded_requests(version: &str, scenario: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(recorded(version, scenario).join("requests.jsonl")).unwrap();
    text.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()["body"].clone()).collect()
}

#[test]
fn model_aliases_reach_the_api_as_the_ids_each_version_sends() {
    let aliases = [
        ("opus", "opus"),
        ("sonnet", "sonnet"),
        ("haiku", "haiku"),
        ("opusplan", "opusplan"),
        ("opus[1m]", "opus_1m"),
        ("sonnet[1m]", "sonnet_1m"),
        ("best", "best"),
        ("default", "default"),
    ];
    for version in VERSIONS {
        for (alias, folder) in aliases {
            let real = &recorded_requests(version, &format!("model_alias/{folder}"))[0];
            let profile = format!("claude-code-{version}");
            let r = run(&profile, vec![answer("m1", text("done"), "end_turn")], &["--model", alias], |_| Vec::new());
            let sent = &r.requests[0].body;
            assert_eq!(
                (&sent["model"], &sent["max_tokens"]),
                (&real["model"], &real["max_tokens"]),
                "{version} --model {alias}"
            );
            assert_eq!(r.result()["is_error"], false);
            assert!(r.replays_identical(), "{version} --model {alias}");
        }
    }
}
