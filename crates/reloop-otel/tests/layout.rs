//! The exporter's shape, checked: its modules form layers with no import cycle, and no file
//! outgrows what a reader takes in at once.

use reloop_layout::checked_crate;

#[test]
fn the_exporter_s_modules_have_no_import_cycle_and_no_file_is_over_800_lines() {
    let graph = checked_crate(env!("CARGO_MANIFEST_DIR"), "reloop-otel");
    // The reader saw the graph it checks: the pure mapping knows nothing of the exporter.
    assert!(graph["map"].contains("span") && graph["map"].contains("ids"), "{graph:?}");
    assert!(!graph["map"].contains("otlp"), "{graph:?}");
}
