//! A Write's and an Edit's result texts under Claude Code's wording (flag 24): both recorded
//! versions end them with the note that the model's view of the file is current
//! (`tests/print/recorded/*/tool_results/success`), leave it off an Edit of a file the session
//! never read (2.1.332, `tool_results/errors`), and word a `replace_all` Edit apart (both
//! bundles' `mapToolResultToToolResultBlockParam`). Without the note, reloop's own texts.

mod common;

use common::Workspace;
use reloop_core::profile::WRITTEN_NOTE_CLAUDE_CODE;
use serde_json::json;

const NOTE: &str = " (file state is current in your context — no need to Read it back)";

fn claude_code(require_read: bool) -> Workspace {
    let mut ws = Workspace::new();
    ws.ctx.written_note = Some(WRITTEN_NOTE_CLAUDE_CODE);
    ws.ctx.require_read = require_read;
    ws
}

#[test]
fn the_note_is_claude_codes_text() {
    assert_eq!(WRITTEN_NOTE_CLAUDE_CODE, NOTE);
}

#[test]
fn writes_and_edits_end_with_the_note_as_recorded() {
    let ws = claude_code(true);
    let path = ws.path("notes.txt");
    let p = path.display();
    assert_eq!(
        ws.ok("Write", json!({"file_path": path, "content": "alpha\nbeta\ngamma\n"})),
        format!("File created successfully at: {p}{NOTE}")
    );
    assert_eq!(
        ws.ok("Edit", json!({"file_path": path, "old_string": "beta", "new_string": "BETA"})),
        format!("The file {p} has been updated successfully.{NOTE}")
    );
    assert_eq!(
        ws.ok("Write", json!({"file_path": path, "content": "one\ntwo\n"})),
        format!("The file {p} has been updated successfully.{NOTE}")
    );
    assert_eq!(
        ws.ok("Edit", json!({"file_path": path, "old_string": "o", "new_string": "0", "replace_all": true})),
        format!("The file {p} has been updated. All occurrences were successfully replaced.{NOTE}")
    );
    assert_eq!(ws.read_to_string("notes.txt"), "0ne\ntw0\n");
}

#[test]
fn an_edit_of_a_file_never_read_has_no_note() {
    let ws = claude_code(false);
    let path = ws.file("src/auth/logout.ts", "// TODO: clear the session\n");
    assert_eq!(
        ws.ok("Edit", json!({"file_path": path, "old_string": "TODO", "new_string": "DONE"})),
        format!("The file {} has been updated successfully.", path.display())
    );
}

#[test]
fn without_the_note_the_texts_are_reloops_own() {
    let ws = Workspace::new();
    let path = ws.path("notes.txt");
    let p = path.display();
    assert_eq!(
        ws.ok("Write", json!({"file_path": path, "content": "a a\n"})),
        format!("File created successfully at: {p}")
    );
    assert_eq!(
        ws.ok("Edit", json!({"file_path": path, "old_string": "a", "new_string": "b", "replace_all": true})),
        format!("The file {p} has been updated successfully.")
    );
}
