//! The crate's shape, checked: no import cycle, no file over 800 lines. The runner sits on
//! top of the strategies, the invariants, the properties and the summary; the journal and
//! cassette writers know nothing of the runner.

use reloop_layout::checked_crate;

#[test]
fn the_crate_s_modules_have_no_import_cycle_and_no_file_is_over_800_lines() {
    let graph = checked_crate(env!("CARGO_MANIFEST_DIR"), "reloop-prop");
    assert!(graph["runner"].contains("strategy") && graph["runner"].contains("invariants"), "{graph:?}");
    assert!(!graph["record"].contains("runner") && !graph["cassette"].contains("runner"), "{graph:?}");
}
