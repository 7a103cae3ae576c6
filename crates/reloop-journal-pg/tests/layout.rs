//! The crate's shape, checked: its modules form layers with no import cycle (so each can be read
//! knowing only the ones below it), and no file outgrows what a reader takes in at once.

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
    assert_acyclic(&graph, "reloop-journal-pg");
    // The reader saw the graph it checks: the crate's modules are there, and some use others.
    assert!(graph.len() > 1 && graph.values().any(|uses| !uses.is_empty()), "{graph:?}");
}
