//! The crate's shape, checked: its modules form layers with no import cycle (so each can be read
//! knowing only the ones below it), and no file outgrows what a reader takes in at once.
//!
//! The layers: errors and timestamps at the bottom; the transcript's lines above them; the
//! conversation's items read from those lines; the events emitted from the items, and the
//! export, on top.

use std::path::{Path, PathBuf};

use reloop_layout::{assert_acyclic, graph, long_files};

const MAX_LINES: usize = 800;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn no_file_in_the_crate_is_over_800_lines() {
    assert_eq!(long_files(&src(), MAX_LINES), vec![], "over {MAX_LINES} lines");
}

#[test]
fn the_crate_s_modules_have_no_import_cycle() {
    let graph = graph(&src());
    assert_acyclic(&graph, "reloop-import");
    // The reader saw the graph it checks: lines become items, items become events.
    assert!(graph["items"].contains("transcript"), "{graph:?}");
    assert!(graph["emit"].contains("items"), "{graph:?}");
    assert!(graph["transcript"].contains("time"), "{graph:?}");
}
