//! The crate's own shape, checked by itself: no file outgrows what a reader takes in at once,
//! and, should it grow modules, they form layers with no import cycle.

use std::path::Path;

use reloop_layout::{checked_crate, sources};

#[test]
fn the_crate_s_modules_have_no_import_cycle_and_no_file_is_over_800_lines() {
    // The reader saw the sources it checks: today the crate is its root alone, a graph of no
    // module.
    assert!(!sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src")).is_empty());
    assert!(checked_crate(env!("CARGO_MANIFEST_DIR"), "reloop-layout").is_empty());
}
