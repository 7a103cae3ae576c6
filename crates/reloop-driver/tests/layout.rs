//! The driver's shape, checked: its modules form layers with no import cycle (so each can be
//! read knowing only the ones below it), and no file outgrows what a reader takes in at once.
//!
//! The one cycle the design has, the `Agent` tool running a child on the same run loop, goes
//! through a trait (`subagent::RunChild`) the loop hands down, not through an import.

use reloop_layout::checked_crate;

#[test]
fn the_driver_s_modules_have_no_import_cycle_and_no_file_is_over_800_lines() {
    let graph = checked_crate(env!("CARGO_MANIFEST_DIR"), "reloop-driver");
    // The reader saw the graph it checks: the run loop is above the tools, which run the
    // subagents, which write the journal.
    assert!(graph["run"].contains("tools") && graph["run"].contains("subagent"), "{graph:?}");
    assert!(graph["tools"].contains("subagent"), "{graph:?}");
    assert!(graph["subagent"].contains("journal") && graph["subagent"].contains("outputs"), "{graph:?}");
}
