//! The binary's shape, checked: the command modules in `src/cli/` form layers with no import
//! cycle (so each can be read knowing only the ones below it), and no file of `src/` outgrows what
//! a reader takes in at once.

use std::path::{Path, PathBuf};

use reloop_layout::{assert_acyclic, dir_graph, long_files};

const MAX_LINES: usize = 800;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn no_file_in_the_binary_is_over_800_lines() {
    assert_eq!(long_files(&src(), MAX_LINES), vec![], "over {MAX_LINES} lines");
}

#[test]
fn the_cli_s_modules_have_no_import_cycle() {
    let graph = dir_graph(&src().join("cli"), "mod.rs");
    assert_acyclic(&graph, "src/cli");
    // The reader saw the graph it checks: the commands sit on the helpers they share.
    assert!(graph["run"].contains("session"), "{graph:?}");
    assert!(graph["session"].contains("scripted"), "{graph:?}");
    assert!(graph["run"].contains("scripted"), "{graph:?}");
    assert!(graph["replay"].contains("what_if"), "{graph:?}");
    assert!(graph["what_if"].contains("reading"), "{graph:?}");
    assert!(graph["replay"].contains("reading"), "{graph:?}");
}
