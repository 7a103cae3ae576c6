//! The crate's shape, checked: its modules form layers with no import cycle (so each can be read
//! knowing only the ones below it), and no file outgrows what a reader takes in at once.
//!
//! The layers: a hook's input at the bottom; the hooks a settings file declares above it; the
//! settings reader and the runner on top, neither knowing the other.

use reloop_layout::checked_crate;

#[test]
fn the_crate_s_modules_have_no_import_cycle_and_no_file_is_over_800_lines() {
    let graph = checked_crate(env!("CARGO_MANIFEST_DIR"), "reloop-hooks");
    // The reader saw the graph it checks: the runner runs configured hooks on their input, and
    // the settings reader builds the configuration.
    assert!(graph["run"].contains("config") && graph["run"].contains("input"), "{graph:?}");
    assert!(graph["settings"].contains("config"), "{graph:?}");
    assert!(!graph["run"].contains("settings") && !graph["settings"].contains("run"), "{graph:?}");
}
