//! What becomes of the messages a host stamped with a uuid, against the real Claude Code recorded
//! under `crates/reloop-import/tests/recorded/<version>/interrupt/` (scripts/record-claude-code,
//! `scenarios.py`):
//!
//! * `still_queued`: a stamped message runs, a second queues behind it, a plain interrupt stops
//!   the first (its receipt lists the second as still queued), the second runs, then a third sent
//!   while idle;
//! * `cancel_queued`: an interrupt asking `cancel_queued: true` while a stamped message waits.
//!
//! 2.1.332 prints a `command_lifecycle` line at each change (`queued`, `started`, `completed`,
//! `cancelled`) and its receipt lists what `cancel_queued` removed; 2.1.197 prints none of it and
//! runs a queued message whatever the interrupt asked. The lines and the answers match line for
//! line, and so do the requests; each session replays as it ran, lifecycle lines and control
//! answers apart (they are the process's, not the session's).

mod common;

use std::path::{Path, PathBuf};

use common::sdk_play::{lines, replays_as_live, Recording};
use common::Workspace;
use serde_json::Value;

const VERSIONS: [&str; 2] = ["2.1.332", "2.1.197"];

fn recording(version: &str, variant: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("crates/reloop-import/tests/recorded")
        .join(version)
        .join("interrupt")
        .join(variant)
}

/// Each line as the host tells it apart: its kind, a lifecycle line's message and state, an
/// interrupt's answer. The `initialize` answer (its command list is the product's) is left out.
fn shape(lines: &[Value]) -> Vec<String> {
    lines
        .iter()
        .filter(|l| l["response"]["request_id"] != "req_1_init")
        .map(|l| match l["type"].as_str().unwrap_or_default() {
            "command_lifecycle" => format!("command_lifecycle {} {}", l["command_uuid"], l["state"]),
            "control_response" => format!("control_response {}", l["response"]["response"]),
            "system" => format!("system/{}", l["subtype"].as_str().unwrap_or_default()),
            "result" => format!("result {}", l["subtype"]),
            other => other.to_string(),
        })
        .collect()
}

/// The last user message's texts of each request.
fn asked(requests: &[Value]) -> Vec<Vec<String>> {
    requests
        .iter()
        .map(|body| {
            let last = body["messages"].as_array().unwrap().iter().rev().find(|m| m["role"] == "user").unwrap();
            match &last["content"] {
                Value::String(text) => vec![text.clone()],
                blocks => {
                    blocks.as_array().unwrap().iter().filter_map(|b| b["text"].as_str().map(str::to_string)).collect()
                }
            }
        })
        .map(|texts| texts.into_iter().filter(|t| !t.starts_with("<system-reminder>")).collect())
        .collect()
}

fn plays_as_recorded(variant: &str) {
    for version in VERSIONS {
        let recording = Recording::load(recording(version, variant));
        let ws = Workspace::seed();
        let (live, server) = recording.play(&ws, version, recording.input());
        let recorded = lines(&recording.dir.join("stdout.jsonl"));
        assert_eq!(shape(&live), shape(&recorded), "{version} {variant}");
        // A lifecycle line has Claude Code's keys in its order, a uuid of its own and the
        // session's id; the init advertises what reloop keeps, in Claude Code's order.
        let keys = |l: &Value| l.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        let session = live.iter().find(|l| l["type"] == "result").unwrap()["session_id"].clone();
        for (ours, theirs) in live.iter().zip(&recorded).filter(|(l, _)| l["type"] == "command_lifecycle") {
            assert_eq!(keys(ours), keys(theirs), "{version} {variant}");
            assert_eq!(ours["session_id"], session, "{ours}");
            assert!(ours["uuid"].as_str().is_some_and(|u| u.len() == 36 && u != ours["command_uuid"]), "{ours}");
        }
        let capabilities = |lines: &[Value]| -> Vec<Value> {
            let init = lines.iter().find(|l| l["subtype"] == "init").unwrap();
            init["capabilities"].as_array().cloned().unwrap_or_default()
        };
        let (ours, theirs) = (capabilities(&live), capabilities(&recorded));
        let kept: Vec<&Value> = theirs.iter().filter(|c| ours.contains(c)).collect();
        assert_eq!(kept, ours.iter().collect::<Vec<_>>(), "{version}: a subset of Claude Code's, in its order");
        if version == "2.1.332" {
            assert!(
                ours.contains(&Value::from("msg_lifecycle_v1"))
                    && ours.contains(&Value::from("interrupt_cancel_queued_v1"))
            );
        }
        let recorded_requests: Vec<Value> =
            lines(&recording.dir.join("requests.jsonl")).into_iter().map(|r| r["body"].clone()).collect();
        let requests: Vec<Value> = server.requests().into_iter().map(|r| r.body).collect();
        assert_eq!(asked(&requests), asked(&recorded_requests), "{version} {variant}: what the model was asked");
        let session: Vec<Value> = live
            .into_iter()
            .filter(|l| !matches!(l["type"].as_str(), Some("control_response" | "command_lifecycle")))
            .collect();
        replays_as_live(&ws, &session, version);
    }
}

#[test]
fn a_stamped_message_is_queued_started_and_completed_or_cancelled_as_claude_code_tells_it() {
    plays_as_recorded("still_queued");
}

#[test]
fn an_interrupt_that_cancels_the_queue_removes_the_stamped_messages_and_lists_them() {
    plays_as_recorded("cancel_queued");
}
