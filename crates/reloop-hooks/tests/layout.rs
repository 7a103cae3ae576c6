//! The crate's shape, checked: its modules form layers with no import cycle (so each can be read
//! knowing only the ones below it), and no file outgrows what a reader takes in at once.
//!
//! The layers: a hook's input at the bottom; the hooks a settings file declares above it; the
//! settings reader and the runner on top, neither knowing the other.

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
    assert_acyclic(&graph, "reloop-hooks");
    // The reader saw the graph it checks: the runner runs configured hooks on their input, and
    // the settings reader builds the configuration.
    assert!(graph["run"].contains("config") && graph["run"].contains("input"), "{graph:?}");
    assert!(graph["settings"].contains("config"), "{graph:?}");
    assert!(!graph["run"].contains("settings") && !graph["settings"].contains("run"), "{graph:?}");
}
