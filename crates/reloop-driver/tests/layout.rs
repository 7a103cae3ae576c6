//! The driver's shape, checked: its modules form layers with no import cycle (so each can be
//! read knowing only the ones below it), and no file outgrows what a reader takes in at once.
//!
//! The one cycle the design has, the `Agent` tool running a child on the same run loop, goes
//! through a trait (`subagent::RunChild`) the loop hands down, not through an import.

use std::path::{Path, PathBuf};

use reloop_layout::{assert_acyclic, graph, long_files};

const MAX_LINES: usize = 800;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn no_file_in_the_driver_is_over_800_lines() {
    assert_eq!(long_files(&src(), MAX_LINES), vec![], "over {MAX_LINES} lines");
}

#[test]
fn the_driver_s_modules_have_no_import_cycle() {
    let graph = graph(&src());
    assert_acyclic(&graph, "reloop-driver");
    // The reader saw the graph it checks: the run loop is above the tools, which run the
    // subagents, which write the journal.
    assert!(graph["run"].contains("tools") && graph["run"].contains("subagent"), "{graph:?}");
    assert!(graph["tools"].contains("subagent"), "{graph:?}");
    assert!(graph["subagent"].contains("journal") && graph["subagent"].contains("outputs"), "{graph:?}");
}
