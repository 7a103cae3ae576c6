//! The inspector's shape, checked: its modules form layers with no import cycle (so each can be
//! read knowing only the ones below it), and no file outgrows what a reader takes in at once.

use reloop_layout::checked_crate;

#[test]
fn the_inspector_s_modules_have_no_import_cycle_and_no_file_is_over_800_lines() {
    let graph = checked_crate(env!("CARGO_MANIFEST_DIR"), "reloop-inspect");
    // The reader saw the graph it checks: `why` and `diff` read the timeline's facts, and the
    // two-thread replay drives the replayer.
    assert!(graph["explain"].contains("timeline") && graph["diff"].contains("timeline"), "{graph:?}");
    assert!(graph["replay_stream"].contains("replay"), "{graph:?}");
}
