//! The crate's own shape, checked by itself: no file outgrows what a reader takes in at once,
//! and, should it grow modules, they form layers with no import cycle.

use std::path::{Path, PathBuf};

use reloop_layout::{assert_acyclic, graph, long_files, sources};

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
    // The reader saw the sources it checks: today the crate is its root alone, a graph of no
    // module.
    assert!(!sources(&src()).is_empty());
    assert_acyclic(&graph(&src()), "reloop-layout");
}
