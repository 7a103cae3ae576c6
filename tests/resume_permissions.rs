//! A resumed session is held to the permissions and hooks it ran with.

mod common;

use common::{json_lines, response, stderr, text, Workspace};
use serde_json::json;

#[test]
fn a_resumed_session_still_refuses_a_write_it_was_never_allowed() {
    let ws = Workspace::seed();
    let target = ws.cwd().join("notes.txt");
    let write =
        json!([{"type": "tool_use", "id": "toolu_w", "name": "Write", "input": {"file_path": target, "content": "x"}}]);
    let crashed = ws.run_responses(
        "take notes",
        vec![response("msg_1", write, "tool_use", 5), response("msg_2", text("Done."), "end_turn", 5)],
        &["--crash-after-step", "1"],
    );
    assert_ne!(crashed.status.code(), Some(0), "the run must have crashed");
    let resumed = ws.reloop(&["resume", "last", "--output-format", "stream-json"]);
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    let lines = json_lines(&resumed);
    let denials = &lines.last().unwrap()["permission_denials"];
    assert_eq!(denials[0]["tool_use_id"], "toolu_w", "{lines:?}");
    assert!(!target.exists(), "the write ran after a resume");
    assert!(ws.replays_identical());
}
