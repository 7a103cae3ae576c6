//! The crate's shape, checked: its modules form layers with no import cycle (so each can be read
//! knowing only the ones below it), and no file outgrows what a reader takes in at once.

use reloop_layout::checked_crate;

#[test]
fn the_crate_s_modules_have_no_import_cycle_and_no_file_is_over_800_lines() {
    let graph = checked_crate(env!("CARGO_MANIFEST_DIR"), "reloop-serve");
    // The reader saw the graph it checks: the pages sit on the index and the page writer.
    assert!(graph["list"].contains("index") && graph["session"].contains("page"), "{graph:?}");
    assert!(!graph["index"].contains("session") && !graph["page"].contains("html"), "{graph:?}");
}
