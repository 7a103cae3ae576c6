//! The crate's shape, checked: its modules form layers with no import cycle (so each can be read
//! knowing only the ones below it), and no file outgrows what a reader takes in at once.
//!
//! The layers: errors and timestamps at the bottom; the transcript's lines above them; the
//! conversation's items read from those lines; the events emitted from the items, and the
//! export, on top.

use reloop_layout::checked_crate;

#[test]
fn the_crate_s_modules_have_no_import_cycle_and_no_file_is_over_800_lines() {
    let graph = checked_crate(env!("CARGO_MANIFEST_DIR"), "reloop-import");
    // The reader saw the graph it checks: lines become items, items become events.
    assert!(graph["items"].contains("transcript"), "{graph:?}");
    assert!(graph["emit"].contains("items"), "{graph:?}");
    assert!(graph["transcript"].contains("time"), "{graph:?}");
}
